"""Which model to talk to: a plain dict of provider factories and one way to choose.

The choice, first match wins:

1. the ``provider`` argument (``--provider`` on the CLI);
2. ``MEMFS_LLM_PROVIDER`` = ``anthropic`` | ``openai`` | ``offline``;
3. ``ANTHROPIC_API_KEY`` is set → ``anthropic``;
4. ``MEMFS_OPENAI_BASE_URL`` (or ``OPENAI_BASE_URL``) is set → ``openai``;
5. ``offline``.

An explicit choice whose configuration is missing is an error (``NeedsKeyError``) rather
than a silent fall back to offline: someone who asked for Claude should not get rules.
The model comes from the ``model`` argument or ``MEMFS_LLM_MODEL``.

Plugins (if they ever exist) add an entry to ``PROVIDERS``; see ``register_provider``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from memfs.agent.llm.anthropic_provider import DEFAULT_MODEL
from memfs.agent.llm.base import LLM

from memfs.errors import BadInputError, NeedsKeyError

ProviderFactory = Callable[[str | None, Mapping[str, str]], LLM]
"""``factory(model_or_None, env) -> LLM``; raises ``NeedsKeyError`` when unconfigured."""

BASE_URL_VARS = ("MEMFS_OPENAI_BASE_URL", "OPENAI_BASE_URL")
API_KEY_VARS = ("MEMFS_OPENAI_API_KEY", "OPENAI_API_KEY")


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((env[name] for name in names if env.get(name)), None)


def _anthropic(model: str | None, env: Mapping[str, str]) -> LLM:
    from memfs.agent.llm.anthropic_provider import AnthropicLLM

    return AnthropicLLM(model or DEFAULT_MODEL, api_key=env.get("ANTHROPIC_API_KEY"), env=env)


def _openai(model: str | None, env: Mapping[str, str]) -> LLM:
    from memfs.agent.llm.openai_compat import OpenAICompatLLM

    base_url = _first(env, BASE_URL_VARS)
    if not base_url:
        raise NeedsKeyError(
            "set MEMFS_OPENAI_BASE_URL to your server's OpenAI-compatible endpoint, "
            "e.g. http://localhost:11434/v1 for Ollama"
        )
    if not model:
        raise NeedsKeyError(
            "set MEMFS_LLM_MODEL to the model your OpenAI-compatible server serves, e.g. llama3.1"
        )
    return OpenAICompatLLM(base_url, model, api_key=_first(env, API_KEY_VARS))


def _offline(model: str | None, env: Mapping[str, str]) -> LLM:
    from memfs.agent.llm.offline import OfflineLLM

    return OfflineLLM()


PROVIDERS: dict[str, ProviderFactory] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "offline": _offline,
}


def register_provider(name: str, factory: ProviderFactory) -> None:
    """Add (or replace) a provider under ``name``."""
    PROVIDERS[name] = factory


def choose_provider(provider: str | None = None, env: Mapping[str, str] = os.environ) -> str:
    """The provider name ``get_llm`` would use, by the order in the module docstring."""
    chosen = provider or env.get("MEMFS_LLM_PROVIDER", "").strip().lower() or None
    if chosen is not None:
        if chosen not in PROVIDERS:
            source = "provider" if provider else "MEMFS_LLM_PROVIDER"
            known = ", ".join(sorted(PROVIDERS))
            raise BadInputError(f"{source}: unknown LLM provider {chosen!r} (known: {known})")
        return chosen
    if env.get("ANTHROPIC_API_KEY"):
        return "anthropic"
    if _first(env, BASE_URL_VARS):
        return "openai"
    return "offline"


def get_llm(
    provider: str | None = None, model: str | None = None, env: Mapping[str, str] = os.environ
) -> LLM:
    """Build the configured ``LLM``. Raises ``NeedsKeyError`` / ``BadInputError`` if misconfigured."""
    name = choose_provider(provider, env)
    return PROVIDERS[name](model or env.get("MEMFS_LLM_MODEL") or None, env)


def describe_configuration(env: Mapping[str, str] = os.environ) -> str:
    """A few lines for humans: what is in use and how to switch to a real model."""
    try:
        current = choose_provider(None, env)
    except BadInputError as exc:
        current = f"none ({exc})"
    return _HELP.format(current=current, default=DEFAULT_MODEL)


_HELP = """\
LLM provider: {current}
To use Claude: export ANTHROPIC_API_KEY=... (model: MEMFS_LLM_MODEL, default {default}).
To use a local OpenAI-compatible server (Ollama, llama.cpp, vLLM):
  export MEMFS_OPENAI_BASE_URL=http://localhost:11434/v1 MEMFS_LLM_MODEL=llama3.1
  (and MEMFS_OPENAI_API_KEY if the server needs a key).
To choose explicitly: MEMFS_LLM_PROVIDER=anthropic|openai|offline."""
