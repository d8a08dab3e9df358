"""``memfs eval isolation``: a probe for one pair never surfaces another pair's text.

"A memory from the wrong person is worse than no memory", so the tolerance is zero. The
pairs are built to tempt a leak: the same character names under different users, users
whose ids are prefixes of each other (``alex`` and ``alex-2``), the same user with two
characters told contradicting things, and every pair holding the same *kinds* of fact in
the same words — only the values differ. Each value (a pet's name, a city, an allergen in
a pin, a café) belongs to exactly one pair, so finding it anywhere else is a leak.

Everything goes through the real pipeline under one home: pins through ``pin``, cards as
files committed to the pair's repository, conversation through ``add_messages`` with a
window small enough that it compacts and dreams. Then, for each pair and each of its
facts, both the context and a wide direct search (stale cards included) are scanned for
every other pair's values. Own recall is reported too: zero leaks from a memory that
finds nothing at all would prove nothing, so it has a floor of its own.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.evals.planted import dream_at
from memfs.agent.evals.planted_data import mentions
from memfs.agent.evals.report import (
    Timings,
    context_text,
    eval_home,
    load_embedder,
    machine,
    verdict,
)
from memfs.agent.services import wired_store
from rich.table import Table

from memfs.cards import Card, Source
from memfs.config import Config
from memfs.errors import BadInputError
from memfs.gitio import USER as USER_ACTOR
from memfs.store import MemoryPair, MemoryStore

if TYPE_CHECKING:
    from memfs.embed import Embedder

USERS = ("alex", "alex-2", "sam", "kai", "noor", "jo", "lee", "ren")
CHARACTERS = ("mira", "atlas")
PETS = ("Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Pickle", "Noodle", "Clementine",
        "Bramble", "Tofu", "Marmalade", "Sprocket", "Dumpling", "Fennel", "Quincy", "Zephyr")
CITIES = ("Lisbon", "Oslo", "Bristol", "Leeds", "Porto", "Tallinn", "Ghent", "Bergen",
          "Utrecht", "Galway", "Krakow", "Lyon", "Bologna", "Aarhus", "Seville", "Dundee")
ALLERGENS = ("peanuts", "shellfish", "penicillin", "kiwi", "sesame", "latex", "mustard",
             "celery", "lupin", "soy", "walnuts", "strawberries", "mango", "buckwheat",
             "hazelnuts", "sulphites")
CAFES = ("Ondine", "Copperleaf", "Brambleby", "Wrenfield", "Larkspur", "Hollowmere",
         "Tidewell", "Saltmarsh", "Foxglove", "Ravensworth", "Thistledown", "Kestrel",
         "Marigold", "Ashcombe", "Pennyroyal", "Whitlow")
MIN_OWN_RECALL = 0.75
"""Share of probes whose own value reached the context or the wide search (measured 1.0)."""
START = dt.datetime(2026, 9, 1, 9, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class PairFacts:
    user: str
    character: str
    pet: str
    city: str
    allergen: str
    cafe: str

    @property
    def name(self) -> str:
        return f"{self.user}/{self.character}"

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.pet, self.city, self.allergen, self.cafe)

    def probes(self) -> list[tuple[str, str]]:
        """(question, the value that answers it) — the same questions for every pair."""
        return [("What's my dog called again?", self.pet),
                ("Can you recommend a nice walk near where I live?", self.city),
                ("Any snack ideas for tonight?", self.allergen),
                ("Which café did I say was my favourite?", self.cafe)]


@dataclass
class Leak:
    pair: str
    question: str
    found: str
    owner: str
    where: str

    def to_dict(self) -> dict[str, str]:
        return {"pair": self.pair, "question": self.question, "found": self.found,
                "owner": self.owner, "where": self.where}


@dataclass
class IsolationReport:
    pairs: list[PairFacts]
    probes: int
    own_found: int
    leaks: list[Leak]
    pipeline: dict[str, int]
    timings: Timings
    per_pair: dict[str, tuple[int, int]] = field(default_factory=dict)
    own_in_context: int = 0
    """Probes whose own value reached the context itself (not only the wide search)."""

    @property
    def own_recall(self) -> float:
        return self.own_found / self.probes if self.probes else 0.0

    @property
    def passed(self) -> bool:
        return self.probes > 0 and not self.leaks and self.own_recall >= MIN_OWN_RECALL

    def to_dict(self) -> dict[str, Any]:
        return {"eval": "isolation", "pairs": len(self.pairs), "probes": self.probes,
                "leaks": len(self.leaks), "own_recall": round(self.own_recall, 4),
                "own_in_context": self.own_in_context,
                "thresholds": {"leaks": 0, "min_own_recall": MIN_OWN_RECALL},
                "passed": self.passed, "pipeline": self.pipeline,
                "timings": self.timings.to_dict(), "machine": machine(),
                "leak_details": [leak.to_dict() for leak in self.leaks],
                "per_pair": {k: {"own_found": a, "probes": b} for k, (a, b) in self.per_pair.items()}}

    def table(self) -> Table:
        table = Table(title=f"Isolation ({len(self.pairs)} pairs under one home)")
        for column in ("pair", "own values found", "leaks in"):
            table.add_column(column)
        for facts in self.pairs:
            found, total = self.per_pair[facts.name]
            leaks = [f"{x.found} ({x.owner}, {x.where})" for x in self.leaks if x.pair == facts.name]
            table.add_row(facts.name, f"{found}/{total}",
                          "[red]" + "; ".join(leaks) + "[/]" if leaks else "[green]none[/]")
        p = self.pipeline
        table.caption = "\n".join([
            f"{self.probes} probes (context + search of {p['search_k']} incl. stale), "
            f"{len(self.leaks)} leaks (must be 0), own recall {self.own_recall:.0%} (needs >= "
            f"{MIN_OWN_RECALL:.0%}; in the context itself {self.own_in_context}/{self.probes}): "
            f"{verdict(self.passed)}",
            f"pipeline: {p['cards']} cards, {p['messages']} messages, {p['compactions']} "
            f"compactions, {p['dreams']} dreams", f"time: {self.timings.line()}"])
        return table


def make_pairs(n_pairs: int = 12) -> list[PairFacts]:
    """``n_pairs`` pairs: every user talks to both characters (same names everywhere)."""
    most = len(USERS) * len(CHARACTERS)
    if not 2 <= n_pairs <= most:
        raise BadInputError(f"--pairs: must be between 2 and {most}, got {n_pairs}")
    names = [(u, c) for u in USERS for c in CHARACTERS][:n_pairs]
    return [PairFacts(u, c, PETS[i], CITIES[i], ALLERGENS[i], CAFES[i])
            for i, (u, c) in enumerate(names)]


def run_isolation(n_pairs: int = 12, *, home: Path | None = None,
                  embedder: Embedder | None = None, config: Config | None = None,
                  search_k: int = 10) -> IsolationReport:
    """Build every pair under one home, then probe each pair for its own facts."""
    facts = make_pairs(n_pairs)
    timings = Timings()
    model = load_embedder(embedder, timings)
    config = (config or Config()).with_(window_budget=120)
    with eval_home(home) as folder:
        store = wired_store(folder, embedder=model, config=config)
        with timings.phase("build pairs"):
            pairs = {f.name: build_pair(store, f) for f in facts}
        report = IsolationReport(facts, 0, 0, [], _stats(pairs, search_k), timings)
        with timings.phase("probes"):
            for f in facts:
                _probe_pair(report, pairs[f.name], f, facts, search_k)
    return report


def build_pair(store: MemoryStore, facts: PairFacts) -> MemoryPair:
    """Pin, two cards committed as files, a conversation that compacts and dreams."""
    from memfs.turn import TurnOptions, add_messages, end_session

    pair = store.pair(facts.user, facts.character)
    pair.pin(f"Allergic to {facts.allergen}: never suggest food with {facts.allergen}.")
    cards = [_card(facts, "pet", "relationship", f"The user has a dog named {facts.pet}."),
             _card(facts, "city", "fact", f"The user lives in {facts.city}.")]
    pair.repo.commit({c.path: c.to_text() for c in cards}, "card",
                     f"write {len(cards)} cards", USER_ACTOR)
    messages = list(_conversation(facts))
    add_messages(pair, messages, options=TurnOptions(dream="none"))
    end_session(pair)
    dream_at(pair, START + dt.timedelta(hours=2))
    return pair


def _card(facts: PairFacts, key: str, kind: str, body: str) -> Card:
    return Card(id=f"c-{key}-{facts.user}-{facts.character}"[:64], type=kind, body=body,
                entities=("user",), created=START, salience=0.8,
                source=Source("s-20260901-01", (0,)))


def _conversation(facts: PairFacts) -> Iterator[dict[str, str]]:
    """The same small talk for everyone, around one pair-specific message."""
    lines = [("Morning! Long day ahead.", "Morning! Want to talk it through?"),
             (f"My favourite café is {facts.cafe}, I go there every Saturday for a flat white.",
              f"{facts.cafe} sounds lovely, a Saturday ritual is a good thing."),
             ("Work was busy but fine, honestly.", "Busy but fine is a decent day."),
             ("I watched a documentary about octopuses last night.",
              "Octopuses are wonderfully strange. What stuck with you?"),
             ("How they solve puzzles, mostly.", "That never stops being impressive."),
             ("Anyway, I should get going.", "Have a good one, talk soon.")]
    ts = START
    for user, reply in lines:
        for role, content in (("user", user), ("assistant", reply)):
            yield {"role": role, "content": content, "ts": ts.strftime("%Y-%m-%dT%H:%M:%SZ")}
            ts += dt.timedelta(minutes=2)


def _probe_pair(report: IsolationReport, pair: MemoryPair, facts: PairFacts,
                everyone: list[PairFacts], k: int) -> None:
    others = [(f.name, m) for f in everyone if f.name != facts.name for m in f.markers]
    found = 0
    for question, own in facts.probes():
        ctx = pair.context(question, now=START + dt.timedelta(days=1))
        hits = pair.search(question, k=k, include_stale=True, now=START + dt.timedelta(days=1))
        seen = {"context": context_text(ctx, question),
                **{f"search {h.kind} {h.id}": f"{h.path}\n{h.text}" for h in hits}}
        found += any(mentions(text, own) for text in seen.values())
        report.own_in_context += mentions(seen["context"], own)
        report.leaks += [Leak(facts.name, question, marker, owner, where)
                         for where, text in seen.items() for owner, marker in others
                         if mentions(text, marker)]
    report.probes += len(facts.probes())
    report.own_found += found
    report.per_pair[facts.name] = (found, len(facts.probes()))


def _stats(pairs: dict[str, MemoryPair], search_k: int) -> dict[str, int]:
    from memfs.compaction import pending_events
    from memfs.history import iter_messages

    dreams = sum(e.is_dream for p in pairs.values() for e in p.log())
    pending = sum(len(pending_events(p.root)) for p in pairs.values())
    return {"cards": sum(len(p.cards()) for p in pairs.values()),
            "messages": sum(1 for p in pairs.values() for _ in iter_messages(p.root)),
            "compactions": dreams + pending, "dreams": dreams, "search_k": search_k}
