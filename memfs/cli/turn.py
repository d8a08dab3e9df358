"""``memfs ingest``, ``memfs context`` and ``memfs chat``: the conversation side."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memfs import documents
from memfs.cli.common import State, cli, console, err_console, pass_state, print_json, warn
from memfs.errors import BadInputError
from memfs.history import json_object_line


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """A JSONL transcript. Shape errors are named by line here; ``add_messages`` then checks
    every message (ts, session) before it appends the first, so nothing is half-ingested."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, not a JSONL file") from None
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read ({exc.strerror})") from None
    messages = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        record = json_object_line(line, f"{path}: line {number}")
        for key in ("role", "content"):
            if key not in record:
                raise BadInputError(f"{path}: line {number}: {key}: is required")
        if record["role"] not in ("user", "assistant"):
            raise BadInputError(f"{path}: line {number}: role: must be 'user' or 'assistant'")
        if not isinstance(record["content"], str):
            raise BadInputError(f"{path}: line {number}: content: must be a string")
        record["_line"] = number
        messages.append(record)
    return messages

if TYPE_CHECKING:
    from memfs.turn import TurnReport


@cli.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--no-dream", is_flag=True, help="Record compaction events but do not dream now.")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def ingest(state: State, file: Path, no_dream: bool, as_json: bool) -> None:
    """Append a JSONL transcript ({"role","content","ts"?,"session"?}) as if chatted."""
    from memfs.turn import TurnOptions, TurnReport, add_messages, end_session

    pair = state.pair()
    messages = read_transcript(file)
    report = TurnReport()
    try:
        added = add_messages(pair, [{k: v for k, v in m.items() if k != "_line"} for m in messages],
                             options=TurnOptions(dream="none" if no_dream else "queue",
                                                 report=report))
    except BadInputError as exc:
        raise BadInputError(f"{file}: {_line_of(str(exc), messages)}") from None
    end_session(pair)
    if as_json:
        print_json(documents.messages(added, report))
        return
    sessions = sorted({m.session for m in added})
    console.print(f"ingested {len(added)} messages into {len(sessions)} session(s)")
    print_compactions(report)


def print_compactions(report: TurnReport) -> None:
    """What a batch of messages set off: each compaction, and the dream."""
    for event in report.events:
        console.print(f"compacted: {event.evicted} messages left the window ({event.reason}); "
                      f"event {event.id} pending")
    if report.events:
        console.print(f"dream: {report.dream}", markup=False)


@cli.command()
@pass_state
def compact(state: State) -> None:
    """Evict the window now (all but the newest exchange) and dream on it, like /compact."""
    from memfs.turn import TurnReport, compact_now, window_status

    pair = state.pair()
    report = TurnReport()
    if compact_now(pair, report=report) is None:
        count, tokens = window_status(pair)
        console.print(f"nothing to compact: the window holds {count} message(s), {tokens} "
                      "tokens (the newest exchange always stays)")
        return
    print_compactions(report)


def _line_of(error: str, messages: list[dict[str, Any]]) -> str:
    """'message 3: ts: ...' → 'line 5: ts: ...' (blank lines make them differ)."""
    head, sep, rest = error.partition(": ")
    if head.startswith("message ") and head[8:].isdigit() and sep:
        number = int(head[8:])
        if 1 <= number <= len(messages):
            return f"line {messages[number - 1]['_line']}: {rest}"
    return error


@cli.command()
@click.argument("message")
@click.option("--json", "as_json", is_flag=True)
@pass_state
def context(state: State, message: str, as_json: bool) -> None:
    """Print exactly what the model would see for MESSAGE, with tokens per layer."""
    ctx = state.pair().context(message)
    for warning in ctx.warnings:
        warn(warning)
    if as_json:
        print_json(documents.context(ctx))
        return
    t = ctx.tokens
    console.rule("[bold]system/ (always in context)", align="left")
    console.print(ctx.system[0], markup=False)
    if ctx.system[1]:
        console.rule("[bold]memory (summary and retrieved)", align="left")
        console.print(ctx.system[1], markup=False)
    console.rule("[bold]messages", align="left")
    for m in ctx.messages:
        console.print(f"[bold]{m['role']}:[/bold] ", end="")
        console.print(m["content"], markup=False)
    plan = ctx.plan
    console.print(f"\n[dim]plan: retrieval={'yes' if plan.need_retrieval else 'no'} "
                  f"({plan.reason}); query={plan.search_query!r}; scope={plan.time_scope}[/dim]")
    console.print(f"[dim]tokens: system {t['system']}, summary {t['summary']}, "
                  f"retrieved {t['retrieved']}, window {t['window']} "
                  f"(budget {state.config.context_budget})[/dim]")


@cli.command()
@click.option("--session", help="Continue this session id instead of starting a new one.")
@pass_state
def chat(state: State, session: str | None) -> None:
    """Talk to the character (/pin TEXT, /context, /compact, /quit)."""
    from memfs.agent.chat import ChatSession
    from memfs.agent.llm.registry import describe_configuration

    pair = state.pair()
    chat_session = ChatSession(pair, session=session)
    if chat_session.offline:
        err_console.print("[yellow]No language model is configured; replies are offline "
                          "placeholders.[/yellow]")
        err_console.print(describe_configuration(), markup=False)
    console.print(f"[dim]{pair.user} ↔ {pair.character}. /pin TEXT, /context, /compact, "
                  "/quit[/dim]")
    while True:
        try:
            line = click.prompt("you", prompt_suffix="> ", default="", show_default=False)
        except (EOFError, click.exceptions.Abort):
            break
        if not chat_session.handle(line, console):
            break
    chat_session.close()
    console.print("[dim]session closed; history committed[/dim]")
