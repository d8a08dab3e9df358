"""Turning a dream's decisions (ops) into card files and commits, in the dream's worktree.

Each op is one commit by ``memfs-dream``, so ``git log`` on the dream branch reads as the
list of what was decided and each step can be inspected on its own. Nothing is deleted:
a superseded or merged card turns ``stale`` with ``superseded_by`` pointing at its
replacement (which lists it in ``supersedes``), an expired or closed plan turns
``expired``. Every new card carries provenance (session and turns of ``history/``).

This is the second gate after ``memfs.agent.dream.ops.parse_ops``: an op whose target card is
unknown or no longer active, or whose text mentions ``system/``, is dropped with a note,
and ``PairRepo.commit`` refuses any path outside ``cards/`` and ``summary.md`` for the
dream actor, so no op can ever reach ``system/``.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from memfs.agent.dream.ops import (
    CardDraft,
    CloseOp,
    ExpireOp,
    Extraction,
    FlagOp,
    MergeOp,
    MessageLike,
    Op,
    SupersedeOp,
    WriteOp,
    op_targets,
)

from memfs.cards import Card, PossibleChange, Source
from memfs.compaction import CompactionEvent
from memfs.gitio import DREAM
from memfs.repo import PairRepo

SUMMARY = "summary.md"


class _Drop(Exception):
    """One op cannot be applied; carries the note. Never leaves this module."""


def due_expiries(extraction: Extraction, cards: list[Card], today: dt.date) -> Extraction:
    """Add an ``expire`` op for every active card whose ``expires`` date has passed.

    The extractor may not say so (the offline rules only see the window), but a plan for
    last Tuesday is not a plan any more, whatever the window talked about.
    """
    targeted = {t for op in extraction.ops for t in op_targets(op)}
    extra: list[Op] = [ExpireOp(id=c.id) for c in cards
                       if c.status == "active" and c.expires is not None and c.expires < today
                       and c.id not in targeted]
    return Extraction(extraction.summary, [*extraction.ops, *extra]) if extra else extraction


def apply_ops(repo: PairRepo, worktree_path: Path, extraction: Extraction,
              cards_by_id: Mapping[str, Card], now: dt.datetime, event: CompactionEvent,
              notes: list[str] | None = None, window: Sequence[MessageLike] = ()) -> list[str]:
    """Commit each op (and the summary rewrite) in the worktree; returns the commit shas.

    ``cards_by_id`` holds every card at the dream's base commit, any status. Dropped ops
    are described in ``notes`` (when given). A new card's ``created`` is when its fact was
    said: the time of the last ``window`` message it cites (the dream's clock only when it
    cites none).
    """
    said = {(m.session, m.turn): _second(m.ts) for m in window}
    applier = _Applier(repo, worktree_path, dict(cards_by_id), _second(now), event, said)
    shas: list[str] = []
    for index, op in enumerate(extraction.ops):
        try:
            sha = applier.apply(op)
        except _Drop as exc:
            if notes is not None:
                notes.append(f"dropped {type(op).__name__} #{index}: {exc}")
            continue
        if sha:
            shas.append(sha)
    sha = applier.rewrite_summary(extraction.summary)
    if sha:
        shas.append(sha)
    return shas


def _second(now: dt.datetime) -> dt.datetime:
    if now.tzinfo is None:
        now = now.replace(tzinfo=dt.UTC)
    return now.astimezone(dt.UTC).replace(microsecond=0)


class _Applier:
    """The state of one dream's application: the cards as they stand after each op."""

    def __init__(self, repo: PairRepo, work: Path, cards: dict[str, Card], now: dt.datetime,
                 event: CompactionEvent, said: Mapping[tuple[str, int], dt.datetime] | None = None) -> None:
        self.said = dict(said or {})
        self.repo = repo
        self.work = work
        self.cards = cards
        self.now = now
        self.event = event

    def apply(self, op: Op) -> str | None:
        if isinstance(op, WriteOp):
            return self._write(op)
        if isinstance(op, SupersedeOp):
            return self._replace(op, (op.old_id,), f"supersede {op.old_id} -> {{new}}")
        if isinstance(op, MergeOp):
            return self._replace(op, op.ids, f"merge {', '.join(op.ids)} -> {{new}}")
        if isinstance(op, ExpireOp):
            return self._expire(op.id, f"expire {op.id}", "")
        if isinstance(op, CloseOp):
            return self._expire(op.id, f"close {op.id}", op.reason)
        if isinstance(op, FlagOp):
            return self._flag(op)
        raise _Drop(f"unknown op {op!r}")

    # -- the ops -----------------------------------------------------------------------

    def _write(self, op: WriteOp) -> str | None:
        card = self._new_card(op, ())
        return self._commit({card.path: card}, f"write {card.id} {_excerpt(card.body)}",
                            card.source)

    def _replace(self, op: CardDraft, old_ids: tuple[str, ...], subject: str) -> str | None:
        olds = [self._active(i) for i in old_ids]
        card = self._new_card(op, tuple(old_ids))
        changes = {card.path: card}
        for old in olds:
            changes[old.path] = old.evolve(status="stale", superseded_by=card.id,
                                           updated=self.now)
        return self._commit(changes, subject.format(new=card.id), card.source)

    def _expire(self, card_id: str, subject: str, reason: str) -> str | None:
        card = self._active(card_id).evolve(status="expired", updated=self.now)
        body = f"Reason: {reason}" if reason else ""
        return self._commit({card.path: card}, subject, card.source, body)

    def _flag(self, op: FlagOp) -> str | None:
        source = Source(op.session, (op.turn,))
        change = PossibleChange(said=_second(op.said), words=" ".join(op.words.split()), source=source)
        card = self._active(op.id).evolve(possible_change=change, updated=self.now)
        return self._commit({card.path: card}, f"flag {op.id}: may have changed {_excerpt(change.words)}", source)

    # -- helpers -----------------------------------------------------------------------

    def _active(self, card_id: str) -> Card:
        card = self.cards.get(card_id)
        if card is None:
            raise _Drop(f"unknown card id {card_id!r}")
        if card.status != "active":
            raise _Drop(f"card {card_id} is {card.status}, not active")
        return card

    def _new_card(self, draft: CardDraft, supersedes: tuple[str, ...]) -> Card:
        if "system/" in draft.body.lower():
            raise _Drop("body mentions system/, which dreaming never touches")
        source = self._source(draft)
        times = [self.said[(source.session, t)] for t in source.turns if (source.session, t) in self.said]
        return Card(
            id=self._new_id(), type=draft.type, body=draft.body, status="active",
            entities=draft.entities, created=max(times, default=self.now), updated=self.now,
            valid_from=draft.valid_from, expires=draft.expires, supersedes=supersedes,
            salience=draft.salience, source=source,
        )

    def _new_id(self) -> str:
        while True:
            card_id = f"c-{secrets.token_hex(3)}"
            if card_id not in self.cards and not (self.work / "cards" / f"{card_id}.md").exists():
                return card_id

    def _source(self, draft: CardDraft) -> Source:
        """Provenance: the op's session (or the window's span holding its turns)."""
        spans = self.event.spans
        if draft.session is not None:
            mine = [s for s in spans if s.session == draft.session]
            if not mine:
                raise _Drop(f"session {draft.session!r} is not in this window")
        else:
            mine = [s for s in spans if all(s.first <= t <= s.last for t in draft.turns)]
            mine = mine or spans[-1:]
        if not mine:
            raise _Drop("the window has no messages to cite")
        turns = tuple(t for t in draft.turns if any(s.first <= t <= s.last for s in mine))
        return Source(mine[0].session, turns)

    def _commit(self, changes: dict[str, Card], subject: str, source: Source | None,
                body: str = "") -> str | None:
        texts: dict[str, str | None] = {path: card.to_text() for path, card in changes.items()}
        sha = self.repo.commit(texts, "card", subject, DREAM,
                               session=source.session if source else None, body=body,
                               cwd=self.work)
        for card in changes.values():
            self.cards[card.id] = card
        return sha

    def rewrite_summary(self, summary: str) -> str | None:
        text = summary.strip()
        current = (self.work / SUMMARY).read_text(encoding="utf-8") \
            if (self.work / SUMMARY).exists() else ""
        if not text or text == current.strip():
            return None
        session = self.event.spans[-1].session if self.event.spans else None
        return self.repo.commit({SUMMARY: text + "\n"}, "summary", "rewrite", DREAM,
                                session=session, cwd=self.work)


def _excerpt(body: str, width: int = 60) -> str:
    flat = " ".join(body.split())
    return f"'{flat[:width]}...'" if len(flat) > width else f"'{flat}'"
