"""The provider interface, as the agent layer names it (defined in ``memfs.llm``)."""

from memfs.llm import LLM, Completion, Message, Tool, ToolCall, Usage

__all__ = ["LLM", "Completion", "Message", "Tool", "ToolCall", "Usage"]
