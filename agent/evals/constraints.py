"""Eval: a suggestion request brings the constraint that rules it out into the context.

The failure this measures (issue 12): weeks of ordinary chat, a user who said once, without
the obvious word, that they cannot have something ("three years without a single drink"),
then a request for a suggestion that the constraint rules out ("which cocktail?"). Memory
exists to put that sentence in front of the model.

The pair: ``n_messages`` of small talk over 20 sessions (the planted eval's bank), with
lines the user types again and again (the issue's distractor: one repeated sentence once
filled every slot), and each probe's constraint said once, at spread-out places. Each
request is then asked in a new session, as "memory only" (the window is empty, so the
constraint can only come from retrieval): a probe passes when the constraint's message is
among the context's retrieved hits. The plain search's rank of it is reported as well,
to show what the constraint search adds.

Probe sets: ``data/constraint_probes.jsonl`` (the blind test set, written and committed
before the code it measures) and ``data/constraint_dev.jsonl`` (what that code was tuned on);
``data/constraint_probes2.jsonl`` (split ``blind2``: 30 probes, six per domain, with no content
word shared between constraint and request) was written on 2026-12-01 before the next round of
constraint code, to be measured once at its end and never tuned on.
``data/constraint_probes3.jsonl`` (split ``blind3``: 30 probes, six per domain, each constraint
said without the obvious word and sharing no content word with its request) was written on
2026-12-01 before the following round of constraint code, to be measured once at its end and
never tuned on.
``data/constraint_probes4.jsonl`` (split ``blind4``: 30 probes, six per domain, each constraint
said indirectly, as a symptom, a habit or another person's circumstance, sharing no content word
with its request; some requests only imply a suggestion, "what should we do on saturday?") was
written on 2026-12-01 before the next round of constraint code, to be measured once at its end
and never tuned on.
``data/constraint_probes5.jsonl`` (split ``blind5``: 30 probes, six per domain, each constraint
said indirectly, as a symptom, a habit, a past event or a circumstance of someone who binds the
user, in chat with lowercase and typos, sharing no content word with its request and avoiding
the domain model's and salience's own words; some requests only imply a suggestion) was written
on 2026-12-02 for issue 12's next round, to be measured once at its end and never tuned on.
``data/constraint_probes6.jsonl`` (split ``blind6``: 30 probes, six per domain, half of them
with the user's own limit said plainly but without the obvious keyword, half said indirectly in
chat with lowercase and typos, as a symptom, a habit, a past event, a doctor's rule or the
circumstance of someone who binds the user; each sharing no content word with its request and
avoiding the domain model's and salience's own words; some requests only imply a suggestion)
was written on 2026-12-02 for issue 12's next round, to be measured once at its end and never
tuned on.
``data/constraint_probes7.jsonl`` (split ``blind7``: 30 probes, six per domain, half of them
with the user's own limit said plainly but without the obvious keyword, half said indirectly in
chat with lowercase and typos, as a symptom, a habit, a past event, a doctor's or pharmacist's
rule or the circumstance of someone who binds the user; each sharing no content word with its
request and avoiding the domain model's and salience's own words; every request asks for a
suggestion, a choice or an approval, many only by implication) was written on 2026-12-02 for
issue 12's next round, to be measured once at its end and never tuned on.
``data/constraint_probes8.jsonl`` (split ``blind8``: 30 probes, six per domain, half of them
with the user's own limit or the gift recipient's said plainly but without the obvious keyword,
half said indirectly in chat with lowercase and typos, as a symptom, a habit or vow, a past
event, a clinician's rule, a money or time limit or the circumstance of someone who binds the
user; each sharing no content word with its request and avoiding the domain model's, salience's
and the planner's own words; every request asks for a suggestion, a choice or an approval, many
only by implication) was written on 2026-12-02 for issue 12's next round, to be measured once
at its end and never tuned on.
``data/constraint_probes9.jsonl`` (split ``blind9``: 30 probes, six per domain, half plain and
half indirect as in ``blind8``; new in it: constraints said over two sentences of one message,
limits of someone the user decides for (a child, a grandparent in their care, a guest), and
requests that name neither their domain nor an option) was written on
2026-12-02 for issue 12's next round, before the dream-time limit cards it measures, to be
measured once and never tuned on.
``data/constraint_probes10.jsonl`` (split ``blind10``: 25 probes, five per domain, half plain and
half indirect as in ``blind9`` (a symptom, a vow, a clinician's rule, a money or time limit, a
past event, a limit of someone the user decides for, or one said over two sentences); at least
half of the requests ask only by implication, many naming neither their domain nor an option)
was written on 2026-12-02 for issue 12's next round, before the code it measures, to be
measured once and never tuned on.
``data/constraint_dev2.jsonl`` (split ``dev2``: 40 probes, eight per domain) and
``data/constraint_probes11.jsonl`` (split ``blind11``: 30 probes, never tuned on) carry
``before``: 2-4 turns of the live conversation the request comes in ("my niece turns 9 on
saturday" ... "so what do i put in the hamper?"), user first, ending with the assistant, and
``kind`` ("plain" or "indirect", how the constraint is said). Both modes ask the request with
``before`` as the window (the messages of a new session, just before the request), so the
constraint still comes only from memory, but the planner sees what the request is about.
``data/constraint_probes18.jsonl`` (split ``blind18``: 40 probes, eight per domain, 20 plain and
20 indirect, each with a live window) is the first set with its own small talk,
``data/constraint_bank18.json`` (``splits.CONSTRAINT_BANKS``, ``bank_of``), so that its history
is not the planted eval's template bank; every other split keeps that bank.
``data/constraint_probes19.jsonl`` (split ``blind19``: 40 probes, eight per domain, 20 plain and
20 indirect, each with a live window of 2 or 4 turns, 22 requests naming no domain) has its own
small talk as well, ``data/constraint_bank19.json``, with decoy topics (other people's limits,
the user's past tastes, lines that only sound like requests); written at stop 33 before the code
it measures, to be measured once and never tuned on. ``data/constraint_probes20.jsonl`` (split
``blind20``, the same shape, 40 probes with windows of 2 or 4 turns) and its bank
``data/constraint_bank20.json`` (35 new topics, 9 of them decoys) were written after blind19 was
spent, to be measured once and never tuned on; ``data/constraint_probes21.jsonl`` (split
``blind21``, the same shape) and ``data/constraint_bank21.json`` (35 new topics, 9 of them
decoys) after blind20 was spent, likewise; ``data/constraint_probes22.jsonl`` (split ``blind22``,
the same shape) and ``data/constraint_bank22.json`` (35 new topics, 9 of them decoys) at stop 35,
likewise; ``data/constraint_probes23.jsonl`` (split ``blind23``, the same shape) and
``data/constraint_bank23.json`` (35 new topics, 9 of them decoys) at stop 35 too, likewise;
``data/constraint_probes24.jsonl`` (split ``blind24``, the same shape, half its constraints
short) and ``data/constraint_bank24.json`` (35 new topics, 9 of them decoys, many long lines that
are not limits, so that length does not give a constraint away) at stop 35, likewise;
``data/constraint_probes25.jsonl`` (split ``blind25``, the same shape as blind24, half its
constraints short) and ``data/constraint_bank25.json`` (35 new topics, 9 of them decoys, most user
lines long) at stop 36, likewise; ``data/constraint_probes26.jsonl`` (split ``blind26``, the same
shape) and ``data/constraint_bank26.json`` (35 new topics, 9 of them decoys, most user lines long
questions and requests to the assistant, with assistant-style replies) at stop 36, likewise;
``data/constraint_probes27.jsonl`` (split ``blind27``, the same shape as blind25) and
``data/constraint_bank27.json`` (35 new topics, 9 of them decoys, chat between friends as blind25's,
most user lines long) at stop 38, likewise; ``data/constraint_probes28.jsonl`` (split ``blind28``,
the same shape, half the limits said inside a question or request to the assistant) and
``data/constraint_bank28.json`` (35 new topics, 9 of them decoys, mixed chat: about half questions
and requests to the assistant, about half chat between friends) at stop 38, likewise.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs.agent.evals.planted_data import _bank, _SmallTalk
from memfs.agent.evals.report import Timings, eval_home, load_embedder, machine, verdict
from memfs.agent.evals.splits import CONSTRAINT_BANKS, CONSTRAINT_FILES
from rich.table import Table

from memfs.errors import BadInputError

if TYPE_CHECKING:
    from memfs.embed import Embedder
    from memfs.history import Message
    from memfs.store import MemoryPair

FILES = CONSTRAINT_FILES
START = dt.datetime(2026, 9, 1, 9, 0, tzinfo=dt.timezone.utc)
THRESHOLD = 0.6
"""The eval fails below this share of probes passing (first measurement: BENCHMARKS.md)."""
REPEATED = ("lol I'm so hungry, what's for dinner", "ugh I need a drink after today",
            "so bored, what should I do this weekend", "haha I really need a holiday",
            "I still haven't bought anything for anyone lol")
"""Small talk the user types over and over, near the requests' topics on purpose."""
REPLIES = ("Thanks for telling me.", "Good to know!", "I'll keep that in mind.",
           "Got it, noted.", "That's useful to know.")


KINDS = ("plain", "indirect")
"""How a probe's constraint is said (``kind``, optional): plainly, or indirectly."""


@dataclass(frozen=True)
class Probe:
    id: str
    domain: str
    constraint: str
    request: str
    before: tuple[tuple[str, str], ...] = ()
    """(role, content) of the live conversation the request comes in (2-4 turns, user
    first, ending with the assistant); empty: the request opens a new session."""
    kind: str = ""


@dataclass
class ProbeRow:
    probe: Probe
    message_id: str
    in_context: bool
    search_rank: int | None
    """1-based rank of the constraint in a plain search for the request (top 50), or None."""
    domains: tuple[str, ...]
    need_retrieval: bool
    routes: tuple[str, ...] = ()
    """In the dreamed mode (``constraint_dream``): how the constraint reached the context
    (``summary``, ``card``, ``message``)."""


@dataclass
class ConstraintReport:
    split: str
    n_messages: int
    together: int = 5
    rows: list[ProbeRow] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    threshold: float = THRESHOLD
    dreamed: Any = None
    """``constraint_dream.DreamStats`` when the history was dreamed (``--dream``), else None."""

    @property
    def rate(self) -> float:
        return sum(r.in_context for r in self.rows) / len(self.rows) if self.rows else 0.0

    @property
    def passed(self) -> bool:
        return self.rate >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        per_domain: dict[str, list[int]] = {}
        for r in self.rows:
            per_domain.setdefault(r.probe.domain, [0, 0])[0] += r.in_context
            per_domain[r.probe.domain][1] += 1
        return {"eval": "constraints", "split": self.split, "messages": self.n_messages,
                "together": self.together, "mode": "memory only" if self.dreamed is None else "dreamed",
                **({} if self.dreamed is None else {
                    "dreams": self.dreamed.to_dict(),
                    "routes": {k: sum(k in r.routes for r in self.rows)
                               for k in ("summary", "card", "message")}}),
                "passed": self.passed, "rate": round(self.rate, 3), "threshold": self.threshold,
                "in_context": sum(r.in_context for r in self.rows), "probes": len(self.rows),
                "plain_search_top6": sum(1 for r in self.rows
                                         if r.search_rank is not None and r.search_rank <= 6),
                "per_domain": {d: f"{a}/{b}" for d, (a, b) in per_domain.items()},
                **({"per_kind": self.per_kind()} if self.per_kind() else {}),
                "rows": [{"id": r.probe.id, "domain": r.probe.domain,
                          **({"kind": r.probe.kind} if r.probe.kind else {}),
                          "in_context": r.in_context, "search_rank": r.search_rank,
                          "domains": list(r.domains), "need_retrieval": r.need_retrieval,
                          **({"routes": list(r.routes)} if self.dreamed is not None else {})}
                         for r in self.rows],
                "timings": self.timings.to_dict(), "machine": machine()}

    def per_kind(self) -> dict[str, str]:
        """Passes by probe kind ("plain", "indirect"), when the probes name one."""
        counts: dict[str, list[int]] = {}
        for r in self.rows:
            if r.probe.kind:
                counts.setdefault(r.probe.kind, [0, 0])[0] += r.in_context
                counts[r.probe.kind][1] += 1
        return {k: f"{a}/{b}" for k, (a, b) in sorted(counts.items())}

    def table(self) -> Table:
        mode = "" if self.dreamed is None else ", dreamed"
        table = Table(title=f"constraint probes ({self.split}{mode}, {self.n_messages} messages, "
                            f"{self.together} constraints per pair): "
                            f"{sum(r.in_context for r in self.rows)}/{len(self.rows)} in context "
                            f"— {verdict(self.passed)}")
        second = "plain search rank" if self.dreamed is None else "routes"
        for name in ("probe", "domain", "in context", second, "plan domains"):
            table.add_column(name)
        for r in self.rows:
            how = str(r.search_rank or "-") if self.dreamed is None else ", ".join(r.routes) or "-"
            table.add_row(r.probe.id, r.probe.domain, "yes" if r.in_context else "[red]no[/]",
                          how, ", ".join(r.domains) or "-")
        table.caption = self.timings.line() if self.dreamed is None else \
            f"{self.dreamed.line()}\n{self.timings.line()}"
        if kinds := self.per_kind():
            table.caption = "by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.items()) + \
                "\n" + table.caption
        return table


def load_probes(split: str) -> list[Probe]:
    if split not in FILES:
        raise BadInputError(f"split: must be one of {', '.join(FILES)} (got {split!r})")
    text = resources.files("memfs.agent.evals").joinpath(FILES[split]).read_text("utf-8")
    return [probe_from(d) for d in map(json.loads, text.splitlines()) if d]


def probe_from(d: dict[str, Any]) -> Probe:
    """One probe line, its optional ``before`` and ``kind`` checked (BadInputError naming
    the field and the probe)."""
    pid = d.get("id", "?")
    kind = d.get("kind", "")
    if kind and kind not in KINDS:
        raise BadInputError(f"probe {pid}: kind: must be one of {', '.join(KINDS)} (got {kind!r})")
    return Probe(d["id"], d["domain"], d["constraint"], d["request"],
                 _before(d.get("before", []), pid), kind)


def _before(turns: Any, pid: str) -> tuple[tuple[str, str], ...]:
    """``before`` as (role, content) pairs: 2-4 turns alternating, user first, ending with
    the assistant (the request is the user's next turn)."""
    if turns == []:
        return ()
    ok = isinstance(turns, list) and 2 <= len(turns) <= 4 and all(
        isinstance(t, dict) and set(t) == {"role", "content"}
        and t["role"] == ("user", "assistant")[n % 2]
        and isinstance(t["content"], str) and t["content"].strip()
        for n, t in enumerate(turns)) and len(turns) % 2 == 0
    if not ok:
        raise BadInputError(f"probe {pid}: before: must be 2-4 turns {{\"role\", \"content\"}}, "
                            "alternating user first, ending with the assistant")
    return tuple((t["role"], t["content"]) for t in turns)


def live_window(probe: Probe, now: dt.datetime) -> list[Message]:
    """``probe.before`` as the messages of a new session, a minute apart, just before ``now``."""
    from memfs.history import Message

    start = now - dt.timedelta(minutes=len(probe.before) + 1)
    sid = f"s-{start:%Y%m%d}-live"
    return [Message(sid, n, role, content, start + dt.timedelta(minutes=n))
            for n, (role, content) in enumerate(probe.before)]


def bank_of(split: str) -> dict[str, Any] | None:
    """The small-talk bank of ``split`` (``CONSTRAINT_BANKS``), or None: the planted eval's."""
    if split not in CONSTRAINT_BANKS:
        return None
    text = resources.files("memfs.agent.evals").joinpath(CONSTRAINT_BANKS[split]).read_text("utf-8")
    bank: dict[str, Any] = json.loads(text)
    return bank


def build_history(probes: list[Probe], n_messages: int, seed: int = 5, sessions: int = 20, *,
                  bank: dict[str, Any] | None = None) -> list[tuple[str, list[dict[str, Any]]]]:
    """(session id, messages) of small talk with repeated lines and each constraint once;
    the small talk from ``bank`` (None: the planted eval's)."""
    if n_messages < 4 * len(probes) or n_messages % 2:
        raise BadInputError(f"messages: need an even number >= {4 * len(probes)}")
    said = [(p.constraint, REPLIES[n % len(REPLIES)]) for n, p in enumerate(probes)]
    return history_with(said, n_messages, seed=seed, sessions=sessions, bank=bank)


def fit_history(split: str) -> list[tuple[str, list[dict[str, Any]]]]:
    """The small talk of ``split`` as the fits read it (``requests.fit``, ``requests.fit_limit``):
    its first five probes among 800 messages of its bank (``bank_of``), seed 11."""
    return build_history(load_probes(split)[:5], 800, seed=11, bank=bank_of(split))


def history_with(said: list[tuple[str, str]], n_messages: int, *, seed: int = 5, sessions: int = 20,
                 bank: dict[str, Any] | None = None, repeated: Sequence[str] = REPEATED,
                 replies: Sequence[str] = REPLIES) -> list[tuple[str, list[dict[str, Any]]]]:
    """(session id, messages): ``n_messages`` of the bank's small talk over ``sessions``
    sessions, every seventh exchange one of the ``repeated`` lines (with one of ``replies``),
    and each (user line, reply) of ``said`` once, at spread-out places."""
    rng = random.Random(seed)
    talk = _SmallTalk(rng, bank if bank is not None else _bank())
    pairs_per = n_messages // 2 // sessions or 1
    exchanges = [p for _ in range(sessions) for p in talk.session(pairs_per)]
    for i in range(0, len(exchanges), 7):  # the lines typed again and again
        exchanges[i] = (rng.choice(list(repeated)), rng.choice(list(replies)))
    step = len(exchanges) // (len(said) + 1)
    for n, line in enumerate(said):
        exchanges[step * (n + 1) - rng.randrange(step // 2 + 1)] = line
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for s in range(sessions):
        when = START + dt.timedelta(days=2 * s, hours=rng.randint(0, 9))
        sid = f"s-{when:%Y%m%d}-01"
        msgs = []
        for user, reply in exchanges[s * pairs_per:(s + 1) * pairs_per]:
            for role, content in (("user", user), ("assistant", reply)):
                msgs.append({"role": role, "content": content, "ts": when})
                when += dt.timedelta(minutes=2)
        out.append((sid, msgs))
    return out


def groups_of(probes: list[Probe], size: int) -> list[list[Probe]]:
    """Pairs of ``size`` probes: the n-th probe of each domain together, so one pair holds
    one constraint per domain (a user with a few constraints, as in the issue); ``size``
    >= the number of probes puts them all in one pair (a harder test: a food request then
    competes with every other food constraint for the same few slots)."""
    if size >= len(probes):
        return [probes]
    by_domain: dict[str, list[Probe]] = {}
    for p in probes:
        by_domain.setdefault(p.domain, []).append(p)
    rounds = [[ps[i] for ps in by_domain.values() if i < len(ps)]
              for i in range(max(map(len, by_domain.values())))]
    return [r[i:i + size] for r in rounds for i in range(0, len(r), size)]


def run_constraints(split: str = "test", n_messages: int = 1600, *, together: int = 5,
                    home: Path | None = None, embedder: Embedder | None = None) -> ConstraintReport:
    """Build the pairs, ask every request, report which constraints reached the context."""
    from memfs.agent.services import wired_store

    probes = load_probes(split)
    bank = bank_of(split)
    report = ConstraintReport(split, n_messages, together=together)
    embedder = load_embedder(embedder, report.timings)
    with eval_home(home) as folder:
        store = wired_store(folder, embedder=embedder)
        first: MemoryPair | None = None
        for n, group in enumerate(groups_of(probes, together)):
            pair = store.pair("eval", f"group-{n + 1}")
            with report.timings.phase("history"):
                said = write_history(pair, group, n_messages, bank=bank)
            with report.timings.phase("index"):
                if first is not None:  # the same small talk: reuse its vectors
                    shutil.copytree(vector_folder(first), vector_folder(pair),
                                    dirs_exist_ok=True)
                pair.search("warm up", k=1)
            first = first or pair
            with report.timings.phase("probes"):
                report.rows += [_probe_row(pair, p, said[p.id]) for p in group]
    return report


def vector_folder(pair: MemoryPair) -> Path:
    from memfs.pair_index import index_folder

    return index_folder(pair.root, pair.store.embedder.name) / "vectors"


def write_history(pair: MemoryPair, probes: list[Probe], n_messages: int, *,
                  bank: dict[str, Any] | None = None) -> dict[str, str]:
    """Append the scenario to ``pair``'s history; the message id of each constraint."""
    from memfs import history

    said: dict[str, str] = {}
    for sid, msgs in build_history(probes, n_messages, bank=bank):
        for turn, m in enumerate(msgs):
            history.append(pair.root, sid, m["role"], m["content"], m["ts"])
            said.update({p.id: f"{sid}:{turn}" for p in probes if m["content"] == p.constraint})
    return said


def _probe_row(pair: MemoryPair, probe: Probe, message_id: str) -> ProbeRow:
    from memfs.context import build_context

    now = START + dt.timedelta(days=60)
    ctx = build_context(pair, probe.request, now=now, window=live_window(probe, now))
    plain = [h.id for h in pair.search(probe.request, k=50, now=now)]
    rank = plain.index(message_id) + 1 if message_id in plain else None
    return ProbeRow(probe, message_id, message_id in {h.id for h in ctx.hits}, rank,
                    tuple(getattr(ctx.plan, "constraint_domains", ())), ctx.plan.need_retrieval)
