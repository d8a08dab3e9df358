"""The planted-facts scenario: 1,000 messages of small talk with personal facts hidden in it.

This is the test from the companion-memory article ("simulate 1,000 messages over 20
sessions; plant facts at message 50, 200, 500 and 900; open a new session and ask"), plus
one twist the article does not have: some facts are later *updated*, so a memory that
surfaces the superseded version scores ``stale`` instead of passing by luck.

Everything is generated from ``random.Random(seed)`` and a small-talk bank in
``data/smalltalk.json``, so a run is reproducible and a failure can be replayed. The
planted messages themselves are fixed text at fixed indices: a different seed changes
only the small talk around them. Small talk never mentions a planted fact's keywords
(``FACT_WORDS``), otherwise a memory system could "recall" a fact it never stored.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from memfs.errors import BadInputError

Outcome = Literal["recalled", "stale", "missed"]
START = dt.datetime(2026, 9, 1, 9, 0, tzinfo=dt.UTC)


@dataclass(frozen=True)
class Probe:
    """One question asked in the final session, with the keywords that prove recall.

    ``expected``: every keyword must appear for "recalled"; ``outdated``: any of them means
    the superseded value reached the context. A keyword ``a|b`` accepts either form.
    """

    id: str
    question: str
    expected: list[str]
    outdated: list[str]
    planted_at: int
    updated_at: int | None
    card_type: str = "fact"


@dataclass(frozen=True)
class Planted:
    """A fixed user message placed at a global message index: a plant or an update."""

    index: int
    kind: Literal["plant", "update"]
    facts: tuple[str, ...]
    content: str
    reply: str


@dataclass(frozen=True)
class ProbeScore:
    """How a context fared on one probe. ``also_stale``: the outdated value showed up too."""

    outcome: Outcome
    also_stale: bool
    matched: tuple[str, ...]
    matched_outdated: tuple[str, ...]


# -- the facts ------------------------------------------------------------------------------

PLANTED: tuple[Planted, ...] = (
    Planted(50, "plant", ("allergy", "dog"),
            "Oh by the way, I'm allergic to peanuts, found out the hard way as a kid. "
            "Unrelated, but my dog Biscuit has been sulking all morning because I skipped his walk.",
            "Noted on the peanuts, that must have been scary as a kid. And poor Biscuit, "
            "maybe a longer walk later will earn forgiveness?"),
    Planted(200, "plant", ("sister", "job"),
            "My sister Priya is staying with me this week, which is lovely but I'm shattered. "
            "I work at a bakery, so I'm up at 4am for the early shift no matter what.",
            "Having Priya around sounds lovely, even if 4am bakery starts make it tiring. "
            "Try to sneak in a nap when you can."),
    Planted(500, "plant", ("city", "band"),
            "Six years living in Leeds and I still get lost in the city centre. Fleetwood Mac "
            "is my favourite band ever, so at least getting lost has a good soundtrack.",
            "Getting lost in Leeds with Fleetwood Mac playing sounds almost like a plan. "
            "Which album is your go-to?"),
    Planted(620, "update", ("job",),
            "Big news: I've changed jobs! I'm a nurse now, I just finished my first week on "
            "the children's ward and no more 4am starts.",
            "Congratulations! A nurse on the children's ward, that's a big change. How did "
            "the first week feel?"),
    Planted(760, "update", ("city",),
            "We finally moved to Bristol last weekend! The new flat is still full of boxes.",
            "Welcome to Bristol! Unpacking can wait, have you found a good local café yet?"),
    Planted(900, "plant", ("dentist", "horror"),
            "I've got a dentist appointment on {thursday} at 9 and I'm dreading it. Also, "
            "please don't ever suggest horror films to me, they give me nightmares for weeks.",
            "Got it: no horror films, ever. And good luck at the dentist on {thursday}, it's "
            "usually quicker than the dread."),
    Planted(950, "update", ("dentist",),
            "The dentist rang, my appointment got moved to {friday}. More time to dread it, great.",
            "{friday} it is then. Maybe plan something nice for afterwards?"),
)

PROBES: tuple[Probe, ...] = (
    Probe("allergy", "Can you suggest a snack for my movie night?", ["peanut"], [], 50, None, "fact"),
    Probe("dog", "I want to get my dog a birthday treat. Do you remember his name?",
          ["Biscuit"], [], 50, None, "relationship"),
    Probe("sister", "I'm writing a card for my sister. What's her name again?",
          ["Priya"], [], 200, None, "relationship"),
    Probe("job", "What do I do for work these days?", ["nurse"], ["bakery"], 200, 620, "fact"),
    Probe("city", "Can you recommend a nice walk near where I live?",
          ["Bristol"], ["Leeds"], 500, 760, "fact"),
    Probe("band", "Any idea what music I'd want for a long drive?",
          ["Fleetwood"], [], 500, None, "preference"),
    Probe("dentist", "When is my dentist appointment?", ["Friday|{fri_iso}|{fri_dm}"],
          ["Thursday|{thu_iso}|{thu_dm}"], 900, 950, "plan"),
    Probe("horror", "Pick a film for me to watch tonight?", ["horror"], [], 900, None, "boundary"),
)

FACT_WORDS: tuple[str, ...] = tuple(sorted(
    {w for p in PROBES for k in (*p.expected, *p.outdated) for w in k.split("|") if "{" not in w}
    | {"allergic", "allergy", "sister", "dog", "dentist", "nightmare", "Monday", "Tuesday",
       "Wednesday", "Saturday", "Sunday"}
))
"""Words small talk must never contain: every probe keyword (each alternative of a
``a|b`` keyword) plus the facts' giveaway words; no weekday at all, so dates stay unambiguous."""


# -- the scenario ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PlantedScenario:
    """Sessions of messages, the planted messages, and the probes to ask afterwards."""

    sessions: list[list[dict[str, str]]]
    planted: tuple[Planted, ...]
    probes: tuple[Probe, ...]
    probe_session: str
    probe_start: dt.datetime

    def messages(self) -> list[dict[str, str]]:
        """All messages in order; ``messages()[i]`` is global index ``i``."""
        return [m for session in self.sessions for m in session]

    def to_jsonl_sessions(self) -> list[tuple[str, str]]:
        """``(session_id, jsonl_text)`` per session, in the shape ``memfs ingest`` reads."""
        return [(s[0]["session"], _jsonl(s)) for s in self.sessions]

    def to_jsonl(self) -> str:
        """The whole transcript as one JSONL document (each line carries its session)."""
        return _jsonl(self.messages())

    def probe_message(self, probe: Probe) -> dict[str, str]:
        """The probe as a user message of the final, new session (two minutes apart)."""
        i = self.probes.index(probe)
        ts = self.probe_start + dt.timedelta(minutes=2 * i)
        return {"role": "user", "content": probe.question, "ts": _iso(ts),
                "session": self.probe_session}


def generate_planted(seed: int = 7, n_messages: int = 1000, n_sessions: int = 20,
                     start: dt.datetime = START) -> PlantedScenario:
    """Build the scenario. Same seed, same scenario. Plants never depend on the seed: their
    indices and text are fixed, and the dentist's dates follow from ``start`` alone."""
    if n_messages % 2 or n_sessions < 1 or n_messages < 2 * n_sessions:
        raise BadInputError("n_messages must be even and allow one exchange per session")
    if max(p.index for p in PLANTED) >= n_messages:
        raise BadInputError(f"n_messages={n_messages} is too small for the plant at "
                            f"{max(p.index for p in PLANTED)}")
    rng = random.Random(seed)
    lengths = _session_lengths(rng, n_messages, n_sessions)
    days = _session_starts(rng, start, n_sessions)
    probe_start = (days[-1] + dt.timedelta(days=1)).replace(hour=19, minute=0, second=0)
    dates = _plan_dates(probe_start.date())
    planted = tuple(replace(p, content=p.content.format(**dates), reply=p.reply.format(**dates))
                    for p in PLANTED)
    probes = tuple(replace(p, expected=[k.format(**dates) for k in p.expected],
                           outdated=[k.format(**dates) for k in p.outdated]) for p in PROBES)
    talk = _SmallTalk(rng, _bank())
    plants = {p.index: p for p in planted}
    sessions: list[list[dict[str, str]]] = []
    index = 0
    for length, begin in zip(lengths, days):
        sid = f"s-{begin:%Y%m%d}-01"
        sessions.append(_session(rng, talk, plants, index, length, begin, sid))
        index += length
    return PlantedScenario(sessions, planted, probes, f"s-{probe_start:%Y%m%d}-01", probe_start)


def _plan_dates(probe_day: dt.date) -> dict[str, str]:
    """The dentist's Thursday and Friday: the first Thursday at least 3 days after the probes,
    so the plan is still in the future when it is asked about. Keywords leave out "Thu"/"Fri":
    a context that labels messages with short weekdays would match them by accident."""
    thu = probe_day + dt.timedelta(days=3 + (3 - (probe_day + dt.timedelta(days=3)).weekday()) % 7)
    fri = thu + dt.timedelta(days=1)
    return {"thursday": f"Thursday {thu.day} {thu:%B}", "friday": f"Friday {fri.day} {fri:%B}",
            "thu_iso": thu.isoformat(), "fri_iso": fri.isoformat(),
            "thu_dm": f"{thu.day} {thu:%b}|{thu.day} {thu:%B}",
            "fri_dm": f"{fri.day} {fri:%b}|{fri.day} {fri:%B}"}


def _session(rng: random.Random, talk: _SmallTalk, plants: dict[int, Planted], first: int,
             length: int, begin: dt.datetime, sid: str) -> list[dict[str, str]]:
    """One session: greeting, topic runs, sign-off; plants replace the exchange at their index."""
    pairs = talk.session(length // 2)
    out: list[dict[str, str]] = []
    ts = begin
    for k, (user, reply) in enumerate(pairs):
        plant = plants.get(first + 2 * k)
        if plant is not None:
            user, reply = plant.content, plant.reply
        for role, content in (("user", user), ("assistant", reply)):
            out.append({"role": role, "content": content, "ts": _iso(ts), "session": sid})
            ts += dt.timedelta(seconds=rng.randint(60, 180))
    return out


def _session_lengths(rng: random.Random, n_messages: int, n_sessions: int) -> list[int]:
    """Even lengths that sum to ``n_messages``, varied by moving exchanges between sessions."""
    pairs = [n_messages // 2 // n_sessions] * n_sessions
    for i in range(n_messages // 2 - sum(pairs)):
        pairs[i % n_sessions] += 1
    for _ in range(n_sessions * 3):
        a, b = rng.randrange(n_sessions), rng.randrange(n_sessions)
        if a != b and pairs[a] > max(3, pairs[a] * 2 // 3):
            step = rng.randint(1, 3)
            if pairs[a] - step >= 3:
                pairs[a] -= step
                pairs[b] += step
    return [2 * p for p in pairs]


def _session_starts(rng: random.Random, start: dt.datetime, n: int) -> list[dt.datetime]:
    """One session every other day (the calendar never depends on the seed, so the plants'
    dates do not either); the time of day, morning to evening, does."""
    day = start.replace(hour=0, minute=0, second=0, microsecond=0)
    return [start] + [day + dt.timedelta(days=2 * i, hours=rng.randint(7, 20),
                                         minutes=rng.randrange(60)) for i in range(1, n)]


# -- small talk -----------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _bank() -> dict[str, Any]:
    text = resources.files("memfs.agent.evals").joinpath("data/smalltalk.json").read_text("utf-8")
    bank: dict[str, Any] = json.loads(text)
    return bank


class _SmallTalk:
    """Draws topical exchanges: runs of 1–3 on one topic, never the same topic twice running."""

    def __init__(self, rng: random.Random, bank: dict[str, Any]) -> None:
        self.rng = rng
        self.bank = bank
        self.recent: dict[str, list[str]] = {"user": [], "assistant": [], "template": []}
        self.topic = ""

    def session(self, n_pairs: int) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        while len(pairs) < n_pairs - 1:
            pairs.extend(self._run(min(self.rng.randint(1, 3), n_pairs - 1 - len(pairs))))
        pairs.append(self._pair(self.bank["signoff"], prefix=False))
        greeting = self.rng.choice(self.bank["greetings"])
        if n_pairs > 1:
            user, reply = pairs[0]
            pairs[0] = (f"{greeting} {user}", reply)
        return pairs

    def _run(self, n: int) -> list[tuple[str, str]]:
        topics = [t for t in self.bank["topics"] if t["name"] != self.topic]
        topic = self.rng.choice(topics)
        self.topic = topic["name"]
        return [self._pair(topic["lines"]) for _ in range(n)]

    def _pair(self, lines: list[dict[str, Any]], prefix: bool = True) -> tuple[str, str]:
        """A user line and one of its replies, both filled from the same slot values."""
        fresh = [ln for ln in lines if ln["user"] not in self.recent["template"][-3:]] or lines
        for _ in range(50):
            line = self.rng.choice(fresh)
            values = self._values()
            template: str = line["user"]
            user = self._prefixed(template, values) if prefix else template.format(**values)
            reply: str = self.rng.choice(line["replies"]).format(**values)
            if user not in self.recent["user"] and reply not in self.recent["assistant"]:
                break
        self._remember("template", line["user"])
        self._remember("user", user)
        self._remember("assistant", reply)
        return user, reply

    def _values(self) -> dict[str, str]:
        values = {name: self.rng.choice(opts) for name, opts in self.bank["slots"].items()}
        others = [o for o in self.bank["slots"].get("outing", ()) if o != values.get("outing")]
        if others:  # a second, different outing ("{outing} or {outing2}"); a bank may have none
            values["outing2"] = self.rng.choice(others)
        return values

    def _prefixed(self, template: str, values: dict[str, str]) -> str:
        text = template.format(**values)
        pre: str = self.rng.choice(self.bank["prefixes"])
        first = template.split(" ", 1)[0]
        if not pre or template.startswith("{") or re.fullmatch(r"I('\w+)?", first):
            return text
        return pre + text[0].lower() + text[1:]

    def _remember(self, role: str, text: str) -> None:
        recent = self.recent[role]
        recent.append(text)
        del recent[:-12]


# -- scoring --------------------------------------------------------------------------------


def mentions(text: str, keyword: str) -> bool:
    """Word-ish, case-insensitive match: ``peanut`` matches "Peanuts" but not "peanutty".

    ``a|b`` matches either alternative, so a plan can be recalled as "Friday" or as the
    date a dream resolved it to ("2026-10-16")."""
    for alternative in keyword.split("|"):
        words = r"\s+".join(re.escape(w) for w in alternative.split())
        pattern = rf"(?<![A-Za-z0-9]){words}(?:s|es|'s|\u2019s)?(?![A-Za-z0-9])"
        if words and re.search(pattern, text, re.IGNORECASE):
            return True
    return False


def judge_probe(context_text: str, probe: Probe) -> ProbeScore:
    """Score a context: recalled if every current keyword is there, stale if only the old value."""
    matched = tuple(k for k in probe.expected if mentions(context_text, k))
    old = tuple(k for k in probe.outdated if mentions(context_text, k))
    if probe.expected and len(matched) == len(probe.expected):
        return ProbeScore("recalled", bool(old), matched, old)
    return ProbeScore("stale" if old else "missed", bool(old), matched, old)


def score_probe(context_text: str, probe: Probe) -> Outcome:
    """The outcome alone; use ``judge_probe`` for the ``also_stale`` flag and matches."""
    return judge_probe(context_text, probe).outcome


# -- helpers --------------------------------------------------------------------------------


def _iso(ts: dt.datetime) -> str:
    return ts.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _jsonl(messages: list[dict[str, str]]) -> str:
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)
