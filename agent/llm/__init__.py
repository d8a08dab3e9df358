"""Language-model providers behind one small interface (``LLM`` in ``base.py``).

``get_llm()`` picks Anthropic, an OpenAI-compatible server or the offline rules from the
arguments and environment (see ``registry.py``). Importing this package loads no SDK: the
``anthropic`` and ``httpx2`` imports happen when a provider is constructed.
"""

from memfs.agent.llm.anthropic_provider import AnthropicLLM
from memfs.agent.llm.base import LLM, Completion, Message, Tool, ToolCall, Usage
from memfs.agent.llm.offline import OfflineLLM
from memfs.agent.llm.openai_compat import OpenAICompatLLM
from memfs.agent.llm.registry import describe_configuration, get_llm, register_provider
from memfs.agent.llm.structured import complete_json

__all__ = [
    "LLM",
    "AnthropicLLM",
    "Completion",
    "Message",
    "OfflineLLM",
    "OpenAICompatLLM",
    "Tool",
    "ToolCall",
    "Usage",
    "complete_json",
    "describe_configuration",
    "get_llm",
    "register_provider",
]
