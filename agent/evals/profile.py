"""``memfs eval profile``: after weeks of small talk, does the summary's profile hold the user?

The summary's ``## Profile`` is in every turn's context, so it is for *standing* facts (name,
pronouns, work, home, family, partner, pets, health and diet, boundaries, what the user cares
about), and the story for what happened (issue 13, point 1). Over 1,600 messages of small talk
the dreams turn one-off chat into profile lines ("The user finally tried cooking a Thai green
curry.") until the summary is at its budget and only condensing holds it there. This eval replays such a history the way
the product sees it (``constraint_dream.replay_history``: ``add_messages``, each compaction
dreamed with the offline extractor at the scenario's clock, the window flushed and dreamed at
the end) with a set of standing facts each said once, and reads the summary after *every* dream
(each dream's merge commit), since the budget and the facts must hold at every point:

- summary size: the largest over all dreams, and at the end, against ``SUMMARY_MAX_CHARS``;
- standing facts in the final profile, matched by provenance (a profile line written from a
  card whose ``source`` is the fact's message, as ``constraint_dream.line_from`` decides), and
  facts *lost*: in the profile after one dream, gone after a later one;
- small-talk lines: profile lines from no standing fact (listed);
- active cards by type, and the cards written from small-talk messages (listed).

Set files (``data/profile_<split>.json``, schema fixed): ``about``, ``split``, ``bank`` (an
object in the schema of ``data/smalltalk.json``, or the name of such a file next to it),
``repeated`` (user lines typed again and again), ``replies`` (generic assistant replies) and
``standing`` (``id``, ``slot``, ``said``, ``reply``, ``gist``). ``dev`` was written with the
code (a profile admission tuned on it was measured on ``blind`` and reverted, BENCHMARKS.md); ``blind`` is written by a session that writes no product code and is
measured once by the lead, never tuned on; ``blind2`` likewise (a second blind set, small talk in
chat register, its bank inline). The facts are spread over pairs so that no pair
holds two facts of one slot (a user has one name).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.evals.report import Timings, eval_home, load_embedder, machine, verdict
from memfs.agent.evals.splits import PROFILE_FILES
from rich.table import Table

from memfs.errors import BadInputError

if TYPE_CHECKING:
    from memfs.embed import Embedder
    from memfs.store import MemoryPair

FILES = PROFILE_FILES
SLOTS = ("name", "pronouns", "work", "home", "family", "partner", "pet", "health", "diet", "boundary", "cares")
PER_PAIR = 8
"""Standing facts per pair, at most (a pair never holds two of one slot)."""
_BANK_KEYS = ("slots", "greetings", "prefixes", "signoff", "topics")


@dataclass(frozen=True)
class Standing:
    id: str
    slot: str
    said: str
    reply: str
    gist: str


@dataclass(frozen=True)
class ProfileSet:
    about: str
    split: str
    bank: dict[str, Any]
    repeated: tuple[str, ...]
    replies: tuple[str, ...]
    standing: tuple[Standing, ...]


def load_set(split: str) -> ProfileSet:
    """The set file of ``split``, checked against the schema (a clear error, not a traceback)."""
    if split not in FILES:
        raise BadInputError(f"split: must be one of {', '.join(FILES)} (got {split!r})")
    folder = resources.files("memfs.agent.evals")
    path = folder.joinpath(FILES[split])
    if not path.is_file():
        raise BadInputError(f"split {split}: {FILES[split]} is not there yet")
    return parse_set(json.loads(path.read_text("utf-8")), split)


def parse_set(data: dict[str, Any], split: str) -> ProfileSet:
    """A set document (the schema in the module docstring) as a ``ProfileSet``."""
    def need(ok: bool, what: str) -> None:
        if not ok:
            raise BadInputError(f"profile set {split}: {what}")

    need(isinstance(data, dict), "not a JSON object")
    bank = data.get("bank")
    if isinstance(bank, str):
        need(re.fullmatch(r"[\w.-]+\.json", bank) is not None, f"bank: not a file name ({bank!r})")
        bank_file = resources.files("memfs.agent.evals").joinpath(f"data/{bank}")
        need(bank_file.is_file(), f"bank: no file data/{bank}")
        bank = json.loads(bank_file.read_text("utf-8"))
    need(isinstance(bank, dict) and all(k in bank for k in _BANK_KEYS),
         f"bank: needs {', '.join(_BANK_KEYS)}")
    lines = {k: data.get(k) for k in ("repeated", "replies")}
    for key, value in lines.items():
        need(isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value),
             f"{key}: a non-empty list of strings")
    rows = data.get("standing")
    need(isinstance(rows, list) and bool(rows), "standing: a non-empty list")
    rows = rows if isinstance(rows, list) else []
    standing = []
    for row in rows:
        need(isinstance(row, dict) and all(isinstance(row.get(k), str) for k in
                                           ("id", "slot", "said", "reply", "gist")),
             f"standing: each needs id, slot, said, reply, gist (got {row!r:.80})")
        need(row["slot"] in SLOTS, f"standing {row['id']}: slot must be one of {', '.join(SLOTS)}")
        standing.append(Standing(row["id"], row["slot"], row["said"], row["reply"], row["gist"]))
    need(len({s.id for s in standing}) == len(standing), "standing: ids must be unique")
    return ProfileSet(str(data.get("about", "")), split, bank if isinstance(bank, dict) else {},
                      tuple(lines["repeated"] or ()),
                      tuple(lines["replies"] or ()), tuple(standing))


def groups_of(standing: tuple[Standing, ...], size: int = PER_PAIR) -> list[list[Standing]]:
    """The facts spread over pairs, no two of one slot in a pair, about ``size`` a pair."""
    by_slot: dict[str, list[Standing]] = {}
    for fact in standing:
        by_slot.setdefault(fact.slot, []).append(fact)
    n = max(max(map(len, by_slot.values())), math.ceil(len(standing) / size))
    groups: list[list[Standing]] = [[] for _ in range(n)]
    cursor = 0
    for facts in by_slot.values():
        for j, fact in enumerate(facts):
            groups[(cursor + j) % n].append(fact)
        cursor += len(facts)
    return [g for g in groups if g]


def chat_of(data: ProfileSet, group: list[Standing], n_messages: int,
            seed: int | None = None) -> list[tuple[str, list[dict[str, Any]]]]:
    """The history the eval replays for one pair: ``n_messages`` of the set's chat with each of
    ``group``'s facts said once. ``seed``: another sample of the same chat (the fits that read a
    set's chat, ``requests.fit`` and ``fit_learned.bank_rows``, draw their own); by default the
    eval's."""
    from memfs.agent.evals.constraints import history_with

    said = [(f.said, f.reply) for f in group]
    more: dict[str, Any] = {} if seed is None else {"seed": seed}
    return history_with(said, n_messages, bank=data.bank, repeated=data.repeated, replies=data.replies, **more)


FIT_SEED = 11
"""The fits that read a set's chat draw pair ``n``'s with seed ``FIT_SEED + n``: their own
sample, not the eval's."""


def fit_chats(data: ProfileSet, n_messages: int) -> list[tuple[list[Standing], list[tuple[str, list[dict[str, Any]]]]]]:
    """Each pair of ``data`` (``groups_of``) with its chat as the fits read it (``requests.fit``,
    ``requests.fit_limit``, ``fit_learned.bank_rows``): ``n_messages``, seed ``FIT_SEED`` + the
    pair's index."""
    return [(group, chat_of(data, group, n_messages, seed=FIT_SEED + n))
            for n, group in enumerate(groups_of(data.standing))]


@dataclass
class DreamPoint:
    """The summary after one dream."""

    chars: int
    profile: list[str]
    standing: set[str]
    """The ids of the standing facts with a profile line at this point."""


@dataclass
class PairResult:
    facts: list[Standing]
    said: dict[str, str]
    points: list[DreamPoint] = field(default_factory=list)
    cards: dict[str, int] = field(default_factory=dict)
    small_talk_cards: list[tuple[str, str]] = field(default_factory=list)
    """(type, body) of every active card written from a message that states no standing fact."""
    fact_lines: set[str] = field(default_factory=set)
    """Every profile line, at any dream, written from a standing fact."""
    flagged: list[tuple[str, str]] = field(default_factory=list)
    """(body, words) of every active card a dream flagged as possibly changed; no fact of a profile
    set changes, so each is flagged wrongly."""

    @property
    def final(self) -> DreamPoint:
        return self.points[-1] if self.points else DreamPoint(0, [], set())

    def lost(self) -> list[tuple[str, int]]:
        """(fact id, dream number) of each fact in the profile at one dream and gone at a later one."""
        out: list[tuple[str, int]] = []
        seen: set[str] = set()
        for n, point in enumerate(self.points):
            out += [(fid, n + 1) for fid in sorted(seen - point.standing) if fid not in {f for f, _ in out}]
            seen |= point.standing
        return out

    def small_talk_lines(self) -> list[str]:
        return [line for line in self.final.profile if line not in self.fact_lines]


@dataclass
class ProfileReport:
    split: str
    n_messages: int
    budget: int
    pairs: list[PairResult] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)

    @property
    def chars_max(self) -> int:
        return max((p.chars for r in self.pairs for p in r.points), default=0)

    @property
    def chars_end(self) -> int:
        return max((r.final.chars for r in self.pairs), default=0)

    @property
    def passed(self) -> bool:
        """The budget held after every dream, and no standing fact left the profile."""
        return self.chars_max <= self.budget and not any(r.lost() for r in self.pairs)

    def to_dict(self) -> dict[str, Any]:
        facts = [f for r in self.pairs for f in r.facts]
        present = sorted(fid for r in self.pairs for fid in r.final.standing)
        lost = [{"id": fid, "dream": n} for r in self.pairs for fid, n in r.lost()]
        talk = [line for r in self.pairs for line in r.small_talk_lines()]
        cards: dict[str, int] = {}
        talk_cards: dict[str, int] = {}
        for r in self.pairs:
            for kind, n in r.cards.items():
                cards[kind] = cards.get(kind, 0) + n
            for kind, _ in r.small_talk_cards:
                talk_cards[kind] = talk_cards.get(kind, 0) + 1
        by_slot: dict[str, list[int]] = {}
        for f in facts:
            by_slot.setdefault(f.slot, [0, 0])[1] += 1
            by_slot[f.slot][0] += f.id in present
        return {"eval": "profile", "split": self.split, "messages": self.n_messages,
                "pairs": len(self.pairs), "dreams": sum(len(r.points) for r in self.pairs),
                "passed": self.passed, "budget": self.budget,
                "summary_chars_max": self.chars_max, "summary_chars_end": self.chars_end,
                "summary_chars_by_dream": [[p.chars for p in r.points] for r in self.pairs],
                "standing": len(facts), "standing_in_profile": len(present),
                "standing_missing": sorted({f.id for f in facts} - set(present)),
                "standing_lost": lost, "per_slot": {s: f"{a}/{b}" for s, (a, b) in by_slot.items()},
                "profile_lines": sum(len(r.final.profile) for r in self.pairs),
                "small_talk_lines": len(talk), "small_talk_line_texts": talk,
                "cards": dict(sorted(cards.items())), "cards_total": sum(cards.values()),
                "small_talk_cards": dict(sorted(talk_cards.items())),
                "small_talk_cards_total": sum(talk_cards.values()),
                "small_talk_card_texts": [[k, b] for r in self.pairs for k, b in r.small_talk_cards],
                "flagged": sum(len(r.flagged) for r in self.pairs),
                "flagged_texts": [[b, w] for r in self.pairs for b, w in r.flagged],
                "timings": self.timings.to_dict(), "machine": machine()}

    def table(self) -> Table:
        d = self.to_dict()
        table = Table(title=f"profile ({self.split}, {self.n_messages} messages, {d['pairs']} pairs, "
                            f"{d['dreams']} dreams): {d['standing_in_profile']}/{d['standing']} standing "
                            f"facts in the profile, {d['small_talk_lines']} small-talk lines — "
                            f"{verdict(self.passed)}")
        table.add_column("measure")
        table.add_column("value")
        table.add_row("summary chars (max over dreams / end)",
                      f"{d['summary_chars_max']} / {d['summary_chars_end']} (budget {self.budget})")
        table.add_row("standing facts lost after they entered", str(len(d["standing_lost"])))
        table.add_row("standing facts missing", ", ".join(d["standing_missing"]) or "-")
        table.add_row("profile lines", str(d["profile_lines"]))
        table.add_row("cards by type", f"{d['cards_total']} {d['cards']}")
        table.add_row("cards from small talk", f"{d['small_talk_cards_total']} {d['small_talk_cards']}")
        table.add_row("cards flagged as possibly changed (none changed)", str(d["flagged"]))
        for body, words in d["flagged_texts"]:
            table.add_row("[dim]flagged[/dim]", f"{body} <- {words}")
        for line in d["small_talk_line_texts"]:
            table.add_row("[dim]small-talk line[/dim]", line)
        table.caption = self.timings.line()
        return table


def run_profile(split: str = "dev", n_messages: int = 1600, *, home: Path | None = None,
                embedder: Embedder | None = None) -> ProfileReport:
    """Replay each pair's history through compaction and dreams; read every dream's summary."""
    return run_set(load_set(split), n_messages, home=home, embedder=embedder)


def run_set(data: ProfileSet, n_messages: int, *, home: Path | None = None, embedder: Embedder | None = None,
            pairs: int | None = None) -> ProfileReport:
    """``run_profile`` on a loaded set; ``pairs``: only the first so many pairs (a quick run)."""
    from memfs.agent.dream.summary import SUMMARY_MAX_CHARS
    from memfs.agent.evals.constraint_dream import replay_history
    from memfs.agent.services import wired_store

    split = data.split
    groups = groups_of(data.standing)[:pairs]
    biggest = max(map(len, groups))
    if n_messages % 2 or n_messages < 4 * biggest:
        raise BadInputError(f"messages: need an even number >= {4 * biggest}")
    report = ProfileReport(split, n_messages, SUMMARY_MAX_CHARS)
    model = load_embedder(embedder, report.timings)
    with eval_home(home) as folder:
        store = wired_store(folder, embedder=model)
        for n, group in enumerate(groups):
            pair = store.pair("eval", f"profile-{n + 1}")
            history = chat_of(data, group, n_messages)
            with report.timings.phase("history+dreams"):
                said = replay_history(pair, history, {f.id: f.said for f in group})
            with report.timings.phase("read dreams"):
                report.pairs.append(read_pair(pair, group, said))
    return report


def read_pair(pair: MemoryPair, facts: list[Standing], said: dict[str, str]) -> PairResult:
    """Every dream's summary of ``pair`` (oldest first), and its cards at the end."""
    from memfs.agent.dream.summary import parse_summary
    from memfs.agent.evals.constraint_dream import cards_from, line_from

    result = PairResult(list(facts), said)
    text_of = {f.id: f.said for f in facts}
    for entry in reversed(pair.log(n=100_000)):
        if not entry.is_dream:
            continue
        text = pair.summary(entry.sha)
        profile = parse_summary(text).profile
        cards = pair.cards(rev=entry.sha)
        bodies = {fid: [c.body for c in cards_from(cards, mid)] for fid, mid in said.items()}
        hits = {(line, fid) for line in profile for fid in said if line_from(line, bodies[fid], text_of[fid])}
        result.points.append(DreamPoint(len(text), profile, {fid for _, fid in hits}))
        result.fact_lines |= {line for line, _ in hits}
    fact_messages = set(said.values())
    for card in pair.cards(status="active"):
        result.cards[card.type] = result.cards.get(card.type, 0) + 1
        if card.possible_change is not None:
            result.flagged.append((card.body, card.possible_change.words))
        if card.source is None:
            continue
        mine = {f"{card.source.session}:{t}" for t in card.source.turns}
        if not mine & fact_messages:
            result.small_talk_cards.append((card.type, card.body))
    return result

