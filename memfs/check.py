"""Validation of every file in a pair repository, shared by `memfs check` and the git hook.

One function per kind of file, each returning ``Problem``s rather than raising, so that
`memfs check` can list every problem at once and the hook can refuse a commit with the
same words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memfs.cards import Card
from memfs.errors import CardParseError
from memfs.history import line_problem
from memfs.pins import parse_pins


@dataclass(frozen=True)
class Problem:
    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


def validate_file(path: str, text: str | bytes) -> list[Problem]:
    """Problems with one file, judged by where it lives in the layout."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return [Problem(path, "is not UTF-8 text")]
    parts = PurePosixPath(path).parts
    if not parts or parts[-1] in (".gitkeep",) or parts[-1].startswith(".memfs-"):
        return []
    if parts[0] == "cards":
        return _card(path, text)
    if path == "system/pins.md":
        return [Problem(path, p) for p in parse_pins(text).problems]
    if parts[0] == "history":
        return _history(path, text)
    return []


def _card(path: str, text: str) -> list[Problem]:
    name = PurePosixPath(path)
    if len(name.parts) != 2 or name.suffix != ".md":
        return [Problem(path, "cards/ holds only <id>.md files, one card each")]
    try:
        card = Card.from_text(text, path)
    except CardParseError as exc:
        return [Problem(path, f"{exc.field}: {exc.reason}" if exc.field else exc.reason)]
    if card.id != name.stem:
        return [Problem(path, f"id: {card.id!r} does not match the file name {name.stem!r}")]
    return []


def _history(path: str, text: str) -> list[Problem]:
    if not path.endswith(".jsonl"):
        return [Problem(path, "history/ holds only <session>.jsonl files")]
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            problems.append(Problem(path, f"line {number}: not valid JSON"))
            continue
        if isinstance(record, dict) and not {"role", "content"} <= record.keys():
            problems.append(Problem(path, f"line {number}: a message needs 'role' and 'content'"))
        elif (reason := line_problem(record)) is not None:
            problems.append(Problem(path, f"line {number}: {reason}"))
    return problems


def check_tree(root: Path) -> list[Problem]:
    """Validate every file in the working tree of a pair, plus links between cards."""
    problems: list[Problem] = []
    cards: dict[str, Card] = {}
    for full in sorted(root.rglob("*")):
        rel = full.relative_to(root).as_posix()
        if rel.startswith((".git/", ".git", ".memfs")) or not full.is_file():
            continue
        found = validate_file(rel, full.read_bytes())
        problems += found
        if not found and rel.startswith("cards/") and rel.endswith(".md"):
            card = Card.from_text(full.read_text(encoding="utf-8"), rel)
            cards[card.id] = card
    return problems + _links(cards)


def _links(cards: dict[str, Card]) -> list[Problem]:
    problems = []
    for card in cards.values():
        for ref in [*card.supersedes, *([card.superseded_by] if card.superseded_by else [])]:
            if ref not in cards:
                problems.append(Problem(card.path, f"refers to card {ref!r}, which does not exist"))
    return problems
