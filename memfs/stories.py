"""Cards as a person reads them: a supersede chain as a story, a card's source messages.

"The meeting is on Thursday" (stale) → "moved to Friday" (active) is one story told in
two cards; the inspector shows it in that order rather than as two unrelated files. A
chain is followed both ways, through ``supersedes`` and ``superseded_by`` (a hand edit
may have set only one), and a merge makes a step of several cards. Each card also points
into ``history/`` (``source: {session, turns}``), so the messages it came from can be
shown next to it: memory a person can check against what was actually said.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memfs.cards import Card
from memfs.history import Message, read_session, session_path

if TYPE_CHECKING:
    from memfs.store import MemoryPair


def story(cards: Sequence[Card], card_id: str) -> list[list[Card]]:
    """The supersede chain through ``card_id``, oldest step first (one card per step,
    several where a merge joined duplicates); ``[[card]]`` for a card with no history."""
    by_id = {c.id: c for c in cards}
    if card_id not in by_id:
        return []
    replaced_by: dict[str, set[str]] = {}
    for card in cards:
        for old in card.supersedes:
            replaced_by.setdefault(old, set()).add(card.id)
        if card.superseded_by:
            replaced_by.setdefault(card.id, set()).add(card.superseded_by)
    replaces: dict[str, set[str]] = {}
    for old, news in replaced_by.items():
        for new in news:
            replaces.setdefault(new, set()).add(old)
    seen = {card_id}
    steps = [[by_id[card_id]]]
    for links, prepend in ((replaces, True), (replaced_by, False)):
        step = [card_id]
        while True:
            step = sorted({n for c in step for n in links.get(c, ()) if n in by_id} - seen)
            if not step:
                break
            seen.update(step)
            cards_step = [by_id[n] for n in step]
            if prepend:
                steps.insert(0, cards_step)
            else:
                steps.append(cards_step)
    return steps


def source_messages(pair: MemoryPair, card: Card) -> list[Message]:
    """The messages ``card`` was made from (its ``source`` turns), oldest first; empty when
    it names none or its session file is gone."""
    if card.source is None:
        return []
    path = session_path(pair.root, card.source.session)
    if not path.exists():
        return []
    turns = set(card.source.turns)
    return [m for m in read_session(path) if not turns or m.turn in turns]
