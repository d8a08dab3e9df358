"""The running summary, rewritten after each dream, with a spine that nothing pushes out.

``summary.md`` has two parts:

- ``## Profile``: standing facts (name, pronouns, work, home, family, pets, health and
  diet, boundaries, what the user cares about), one per line. A dream adds a line for each
  new standing card and changes a line only when a card it came from is superseded or
  merged (the line whose text the old card's body starts with). A line the user wrote by
  hand is theirs: dreams never change or drop it. Over budget the profile is *condensed*
  (each line cut to its first clause, then shorter), never emptied.
- ``## Recent story``: dated one-liners, oldest first, then every open plan. Over budget
  the oldest lines go first (small-talk notes before anything else); open plans stay.

The issue this answers: the newest dated one-liners used to push the oldest lines out of a
size-limited summary, and those were the user's pronouns, job, pets and allergy.
``compose_summary`` is used by both extractors; the model only writes the story line.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memfs.agent.dream.ops import CardOp, MergeOp, MessageLike, Op, SupersedeOp, WriteOp, op_targets
from memfs.agent.dream.rules.text import content_words

from memfs.cards import Card

SUMMARY_MAX_CHARS = 1600
TRACEABLE_CHARS = 12  # a shorter stem starts too many bodies to say which card a line came from
PROFILE = "## Profile"
STORY = "## Recent story"
PROFILE_TYPES = frozenset({"fact", "relationship", "boundary", "preference"})
_SMALL_TALK = ": small talk (\""
_DATED = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*\b|"
                    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w* \d{1,2}\b|\bso far\b",
                    re.IGNORECASE)


@dataclass
class Summary:
    """The two parts of ``summary.md`` as lines (without the leading ``- ``)."""

    profile: list[str] = field(default_factory=list)
    story: list[str] = field(default_factory=list)

    def render(self, plans: Sequence[str] = ()) -> str:
        parts = [PROFILE, *(f"- {line}" for line in self.profile), "", STORY, *(f"- {line}" for line in self.story)]
        if plans:
            parts += ["Open plans:", *(f"- {p}" for p in plans)]
        return "\n".join(parts).strip()


def parse_summary(text: str) -> Summary:
    """Read ``summary.md``. A summary from before the spine (no headings) is split: a sentence
    with a date in it is story, every other sentence is a standing fact."""
    if PROFILE not in text and STORY not in text:
        return _legacy(text)
    out, part, in_plans = Summary(), None, False
    for raw in text.splitlines():
        line = raw.strip()
        if line in (PROFILE, STORY):
            part, in_plans = line, False
            continue
        if line == "Open plans:":
            in_plans = True
            continue
        if not line or in_plans and line.startswith("- "):
            continue
        item = line[2:].strip() if line.startswith("- ") else line
        (out.profile if part == PROFILE else out.story).append(item)
    return out


def _legacy(text: str) -> Summary:
    out, in_plans = Summary(), False
    prose: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        if line.startswith("- ") or not line or line == "Open plans:":
            out = _add_prose(out, " ".join(prose))
            prose = []
            in_plans = line == "Open plans:" or (in_plans and line.startswith("- "))
            if line.startswith("- ") and not in_plans:
                out.story.append(line[2:])
            continue
        prose.append(line)
    return out


def _add_prose(out: Summary, paragraph: str) -> Summary:
    for sentence in re.split(r"(?<=[.!?])\s+", paragraph.strip()):
        if sentence:
            (out.story if _DATED.search(sentence) else out.profile).append(sentence)
    return out


def compose_summary(previous: str, window: Sequence[MessageLike], ops: Sequence[Op], active: Sequence[Card],
                    today: dt.date, *, story: str | None = None, limit: int = SUMMARY_MAX_CHARS) -> str:
    """The summary after a dream: the profile updated by this dream's ops, the story with a
    line for this window (``story``, when a model wrote it), then the open plans."""
    summary = parse_summary(previous)
    summary.profile = _updated_profile(summary.profile, ops, active)
    summary.story = _without_replaced(summary.story, ops, active)
    summary.story += _story_lines(window, ops, story)
    plans = _open_plans(ops, active, today)
    _fit(summary, plans, limit)
    return summary.render(plans)


def rewrite_summary(previous: str, window: Sequence[MessageLike], ops: Sequence[Op],
                    active: Sequence[Card], today: dt.date, limit: int = SUMMARY_MAX_CHARS) -> str:
    """``compose_summary`` without a model's story line (the offline extractors)."""
    return compose_summary(previous, window, ops, active, today, limit=limit)


def _updated_profile(lines: list[str], ops: Sequence[Op], active: Sequence[Card]) -> list[str]:
    by_id = {c.id: c for c in active}
    out = list(lines)
    for op in ops:
        if not isinstance(op, (WriteOp, SupersedeOp, MergeOp)) or not _standing(op):
            continue
        new = clip(op.body)
        olds = [by_id[t] for t in op_targets(op) if t in by_id]
        at = next((i for i, line in enumerate(out) for old in olds if from_card(line, old.body)), None)
        out = [line for line in out if not any(from_card(line, old.body) for old in olds)]
        if new in out or any(same_fact(new, line) for line in out):
            continue
        out.insert(at if at is not None and at <= len(out) else len(out), new)
    return out


def _standing(op: CardOp) -> bool:
    """A profile line or a story line? A supersede or merge replaces its cards' lines in
    place; a new card is a profile line when its type is and its extractor did not say it
    was only chat (``CardDraft.standing``)."""
    return op.type in PROFILE_TYPES and (op.standing is not False or not isinstance(op, WriteOp))


def same_fact(new: str, line: str) -> bool:
    """Does profile ``line`` already say what ``new`` says? Most of the new line's content words
    (two at least) are in it: "The user is a graphic designer." repeats "Alex (they/them) is a
    graphic designer in London", a line in the summary's old prose format the cards were never
    matched against."""
    a, b = content_words(new), content_words(line)
    shared = len(a & b)
    return shared >= 2 and shared >= 0.75 * min(len(a), len(b))


def _without_replaced(lines: list[str], ops: Sequence[Op], active: Sequence[Card]) -> list[str]:
    """A story line that repeated a card this dream supersedes stops asserting it."""
    replaced = [c.body for c in active if c.id in {t for op in ops if isinstance(op, (SupersedeOp, MergeOp))
                                                   for t in op_targets(op)}]
    return [line for line in lines if not any(from_card(line.split(": ", 1)[-1], body) for body in replaced)]


def from_card(line: str, body: str) -> bool:
    """Was this profile line written from ``body`` (possibly condensed since)?"""
    stem = line.rstrip("…").strip()
    flat = " ".join(body.split())
    return len(stem) >= TRACEABLE_CHARS and flat.startswith(stem)


def _story_lines(window: Sequence[MessageLike], ops: Sequence[Op], story: str | None) -> list[str]:
    if not window:
        return []
    day = window[0].ts.date().isoformat()
    if story and story.strip():
        return [f"{day}: {clip(story, 300)}"]
    cards: list[CardOp] = [op for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))]
    told = [op.body for op in cards if not _standing(op)]
    if told:  # the line's day is said once: a rule card's "(said on <that day>)" is dropped
        return [f"{day}: {clip(b.replace(f' (said on {day})', ''))}" for b in told[:4]]
    if cards:
        return []  # standing facts only: the profile says them, the story does not repeat them
    said = next((m.content for m in window if m.role == "user"), "")
    return [f"{day}{_SMALL_TALK}{clip(said, 80)}\")"] if said else []


def _fit(summary: Summary, plans: Sequence[str], limit: int) -> None:
    """Shorten the story (small talk first, then oldest first), then condense the profile.

    The budget is the size of ``summary.md`` as written, final newline included (``apply``
    writes ``text + "\\n"``): counting without it wrote 1,601 characters at a 1,600 budget."""
    def size() -> int:
        return len(summary.render(plans)) + 1

    while summary.story and size() > limit:
        small = next((i for i, line in enumerate(summary.story) if _SMALL_TALK in line), 0)
        summary.story.pop(small)
    for width in (120, 80, 50):
        if size() <= limit:
            return
        summary.profile = [condense(line, width) for line in summary.profile]


def condense(line: str, width: int) -> str:
    """A profile line cut to its first clause, or to ``width`` characters; never to nothing.

    The first clause is kept only if it still says something (two content words) and
    ``from_card`` can still trace it to its card: "Oh, and have you heard of …" cut to "Oh"
    said nothing, and no supersede or hand edit could ever remove it again."""
    if len(line) <= width:
        return line
    first = re.split(r"(?<=[.;])\s+|,\s+(?=(?:and|but|which|who|so)\b)", line)[0].rstrip(" .;,")
    if len(first) < TRACEABLE_CHARS or len(content_words(first)) < 2:
        first = line
    return first if len(first) <= width else first[: width - 1].rstrip() + "…"


def clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _open_plans(ops: Sequence[Op], active: Sequence[Card], today: dt.date) -> list[str]:
    gone = {t for op in ops for t in op_targets(op)}
    plans = [(c.body, c.expires) for c in active
             if c.id not in gone and c.type == "plan" and (c.expires is None or c.expires >= today)]
    plans += [(op.body, op.expires) for op in ops
              if isinstance(op, (WriteOp, SupersedeOp)) and op.type == "plan"
              and (op.expires is None or op.expires >= today)]
    return [clip(body) + (f" (until {exp.isoformat()})" if exp else "") for body, exp in plans]
