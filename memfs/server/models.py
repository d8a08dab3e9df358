"""Request bodies of the HTTP API, validated before any pair is touched.

Strict (``"5"`` is not a number, ``1`` is not text) and closed (an unknown field is an
error, so a typo such as ``"qeury"`` is named rather than ignored).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_K = 100
MAX_MESSAGES = 1000


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PinIn(Body):
    text: str = Field(min_length=1, description="The pin, one line of text.")


class MessageIn(Body):
    role: Literal["user", "assistant"]
    content: str
    ts: str | None = Field(None, description="ISO-8601; now when omitted.")
    session: str | None = None


class MessagesIn(Body):
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    session: str | None = Field(None, description="Session id; the open session when omitted.")


class ContextIn(Body):
    message: str = Field(min_length=1, description="The user's new message.")


class SearchIn(Body):
    query: str = Field(min_length=1)
    k: int = Field(5, ge=1, le=MAX_K)
    include_stale: bool = False
    explain: bool = False


class RevertIn(Body):
    rev: str = Field(min_length=1, description="A commit (a dream merge: the whole dream).")
