"""A chat session with the character: the turn loop behind ``memfs chat``.

Each line the user types is appended to history first, then the context is built from
committed memory, then the reply is streamed (or, with a tool-capable provider, produced
after the character's own memory edits) and appended too.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memfs.agent.tools import reply_with_tools

from memfs.store import MemoryPair
from memfs.turn import add_messages, compact_now, current_session, end_session

TOOL_PROVIDERS = ("anthropic", "openai")


class ChatSession:
    def __init__(self, pair: MemoryPair, session: str | None = None) -> None:
        self.pair = pair
        self.llm = pair.store.llm
        self.session = session or current_session(pair, dt.datetime.now(dt.UTC))

    @property
    def offline(self) -> bool:
        return self.llm.name == "offline"

    def handle(self, line: str, console: Any) -> bool:
        """Handle one input line; False means the session is over."""
        text = line.strip()
        if not text:
            return True
        if text in ("/quit", "/exit"):
            return False
        if text.startswith("/pin "):
            self.pair.pin(text[5:])
            console.print("[dim]pinned[/dim]")
        elif text == "/context":
            ctx = self.pair.context("(what would you see now?)")
            console.print(ctx.system_text, markup=False)
            console.print(f"[dim]tokens: {ctx.tokens}[/dim]")
        elif text == "/compact":
            event = compact_now(self.pair)
            console.print(f"[dim]{'compacted: ' + event.id if event else 'nothing to compact'}[/dim]")
        elif text.startswith("/"):
            console.print("[dim]commands: /pin TEXT, /context, /compact, /quit[/dim]")
        else:
            self.say(text, console)
        return True

    def say(self, text: str, console: Any) -> str:
        add_messages(self.pair, [{"role": "user", "content": text}], session=self.session)
        ctx = self.pair.context(text)
        console.print(f"[bold]{self.pair.character}>[/bold] ", end="")
        if self.llm.name in TOOL_PROVIDERS:
            reply, edits = reply_with_tools(self.llm, self.pair, ctx.system, ctx.messages,
                                            self.session)
            console.print(reply, markup=False)
            for edit in edits:
                console.print(f"[dim]memory: {edit}[/dim]")
        else:
            parts = []
            for chunk in self.llm.stream(ctx.system, ctx.messages):
                parts.append(chunk)
                console.print(chunk, end="", markup=False)
            console.print()
            reply = "".join(parts)
        add_messages(self.pair, [{"role": "assistant", "content": reply}], session=self.session)
        return reply

    def close(self) -> None:
        end_session(self.pair)
