"""Reading cards out of git: the one place card files are read.

Cards are read from a commit (HEAD by default) through GitPython's object database, so the
prompt is built from what is committed — reproducible with ``git show`` — and a half-saved
hand edit never reaches the model.
"""

from __future__ import annotations

from pathlib import Path

import git

from memfs.cards import Card
from memfs.check import Problem
from memfs.errors import CardParseError


def load_cards(root: Path, rev: str = "HEAD") -> tuple[list[Card], list[Problem]]:
    """Every valid card at ``rev``, sorted by id, and the problems of the invalid ones."""
    repo = git.Repo(root)
    try:
        tree = repo.commit(rev).tree
        folder = tree / "cards"
    except (KeyError, ValueError, git.BadName):
        return [], []
    cards: list[Card] = []
    problems: list[Problem] = []
    try:
        for blob in folder.blobs:
            if not blob.name.endswith(".md"):
                continue
            path = f"cards/{blob.name}"
            try:
                card = Card.from_text(blob.data_stream.read().decode("utf-8"), path)
            except (CardParseError, UnicodeDecodeError) as exc:
                problems.append(Problem(path, str(exc)))
                continue
            cards.append(card)
    finally:
        repo.close()
    cards.sort(key=lambda c: c.id)
    return cards, problems
