"""Score a dream extractor against the labelled windows in ``data/extraction_set.json``.

Extraction is evaluated on its own (the seed articles' lesson: evaluate each layer
separately), with precision as well as recall, because an extractor that writes every
possible card wins recall and loses everything else — each extra card is a distractor at
retrieval time.

Matching: a produced card (write, supersede or merge op) matches a reference card when the
types are compatible, every reference keyword appears in its body or entities
(case-insensitive, at the start of a word so a stem matches its forms; ``a|b`` means either) and, when the reference gives ``expires`` or
``valid_from``, the dates are equal. Cards are paired one-to-one by maximum bipartite
matching. Supersede and merge targets and retired plans (expire or close: both say "no
longer live") are scored as sets; ``supersede_matched`` also asks that the card which replaced an
expected target matches a reference card (``supersede`` alone counts a wrong sentence that
happened to replace the right card).

False cards are counted on their own, next to precision and recall: a produced card that
matches one of the window's ``forbidden`` entries (every keyword, the type when given, and
none of its ``unless`` words) asserts something about the user that the sentence did not
(a sister who works at a children's hospital made into "the user has a child"). An extra
card costs precision; a false card is worse, because it is retrieved and believed.

Run ``python -m memfs.agent.dream.extraction_eval`` for the offline extractor's table and one JSON line.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from memfs.agent.dream.ops import (
    CardOp,
    CloseOp,
    ExpireOp,
    Extraction,
    MergeOp,
    SupersedeOp,
    WriteOp,
)

from memfs.cards import Card
from memfs.errors import BadInputError, CardParseError

DATA_PATH = Path(__file__).parent / "data" / "extraction_set.json"
COMPATIBLE = {frozenset({"fact", "relationship"}), frozenset({"fact", "event"}),
              frozenset({"preference", "boundary"}), frozenset({"fact", "preference"})}

Extractor = Callable[[Sequence[Any], Sequence[Card], str, dt.datetime], Extraction]


@dataclass(frozen=True)
class EvalMessage:
    session: str
    turn: int
    role: str
    content: str
    ts: dt.datetime


@dataclass(frozen=True)
class EvalWindow:
    id: str
    split: str
    now: dt.datetime
    summary: str
    messages: tuple[EvalMessage, ...]
    cards: tuple[Card, ...]
    expected: dict[str, Any]


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Counts) -> None:
        self.tp, self.fp, self.fn = self.tp + other.tp, self.fp + other.fp, self.fn + other.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class WindowScore:
    id: str
    split: str
    cards: Counts
    targets: dict[str, Counts]
    unmatched_produced: list[str] = field(default_factory=list)
    missed_reference: list[str] = field(default_factory=list)
    false_cards: list[str] = field(default_factory=list)


@dataclass
class Report:
    windows: list[WindowScore]

    def cards(self, split: str | None = None) -> Counts:
        total = Counts()
        for w in self.windows:
            if split is None or w.split == split:
                total.add(w.cards)
        return total

    def false_cards(self, split: str | None = None) -> int:
        return sum(len(w.false_cards) for w in self.windows if split is None or w.split == split)

    def targets(self, kind: str, split: str | None = None) -> Counts:
        total = Counts()
        for w in self.windows:
            if split is None or w.split == split:
                total.add(w.targets[kind])
        return total

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for split in (None, *sorted({w.split for w in self.windows})):
            c = self.cards(split)
            out[split or "all"] = {
                "precision": round(c.precision, 3), "recall": round(c.recall, 3), "f1": round(c.f1, 3),
                "produced": c.tp + c.fp, "reference": c.tp + c.fn,
                "false_cards": (false := self.false_cards(split)),
                "false_rate": round(false / (c.tp + c.fp), 3) if c.tp + c.fp else 0.0,
                **{f"{k}_accuracy": round(_jaccard(self.targets(k, split)), 3) for k in TARGET_KINDS},
            }
        return out


TARGET_KINDS = ("supersede", "retire", "merge", "supersede_matched")


def _jaccard(c: Counts) -> float:
    return c.tp / (c.tp + c.fp + c.fn) if c.tp + c.fp + c.fn else 1.0


# -- loading --------------------------------------------------------------------------------------


def load_dataset(path: Path | str = DATA_PATH) -> list[EvalWindow]:
    """Read the labelled set; errors name the window and field.

    Parsed once per version of the file in a process: it grows by a split or two a stop (285
    windows, about 0.6 s a parse at stop 41), and the tests, ``devset.dev_windows`` and the fits
    ask for it dozens of times. Each call gets its own list of the shared, frozen windows."""
    st = Path(path).stat()
    return list(_parsed(str(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=4)
def _parsed(path: str, mtime_ns: int, size: int) -> tuple[EvalWindow, ...]:
    del mtime_ns, size  # the cache key: a rewritten file is read again
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    return tuple(_window(w, path) for w in raw["windows"])


def _ts(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(dt.UTC)


def _card(data: dict[str, Any], where: str) -> Card:
    """A card dict from the set, parsed exactly as a card file would be."""
    meta = {k: v for k, v in data.items() if k != "body"}
    text = "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n" + data["body"] + "\n"
    return Card.from_text(text, f"{where}:{data.get('id', '?')}")


def _window(w: dict[str, Any], path: str) -> EvalWindow:
    where = f"{path}#{w.get('id', '?')}"
    try:
        messages = tuple(EvalMessage(m["session"], m["turn"], m["role"], m["content"], _ts(m["ts"]))
                         for m in w["messages"])
        cards = tuple(_card(c, where) for c in w["existing_cards"])
        return EvalWindow(w["id"], w.get("split", "tune"), _ts(w["now"]), w.get("summary", ""),
                          messages, cards, w["expected"])
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, CardParseError):
            raise
        raise BadInputError(f"{where}: malformed window ({exc!r})") from None


# -- scoring ----------------------------------------------------------------------------------------


def card_matches(op: CardOp, ref: dict[str, Any]) -> bool:
    """Does a produced card satisfy one reference card?"""
    types = set(ref.get("types") or [ref["type"]])
    if op.type not in types and not any(frozenset({op.type, t}) in COMPATIBLE for t in types):
        return False
    if not says_all(ref["keywords"], _text(op)):
        return False
    for name in ("expires", "valid_from"):
        want = ref.get(name)
        got = getattr(op, name)
        if want and (got is None or got.isoformat() != want):
            return False
    return True


def is_false(op: CardOp, forbidden: dict[str, Any]) -> bool:
    """Does a produced card make the false assertion a ``forbidden`` entry describes?"""
    types = forbidden.get("types")
    if types and op.type not in types:
        return False
    text = _text(op)
    return says_all(forbidden["keywords"], text) and not any(has_word(w, text) for w in forbidden.get("unless", []))


def _text(op: CardOp) -> str:
    return (op.body + " " + " ".join(op.entities)).lower()


def says_all(keywords: Sequence[str], text: str) -> bool:
    """Every keyword is in the text; ``a|b`` means either. Reference and forbidden cards are
    judged by this one rule, so a change to matching moves recall and false cards together."""
    return all(any(has_word(alt, text) for alt in kw.split("|")) for kw in keywords)


def has_word(keyword: str, text: str) -> bool:
    """A keyword matches at the start of a word, so a stem still matches its forms ("allerg"
    in "allergic") but "row" no longer matches inside "tomorrow" (a false card counted for a
    card about a trip tomorrow, stop 27)."""
    return re.search(r"(?<![a-z0-9])" + re.escape(keyword.lower()), text) is not None


def _match(produced: list[CardOp], refs: list[dict[str, Any]]) -> dict[int, int]:
    """Maximum bipartite matching reference -> produced (Kuhn's algorithm; sets are tiny)."""
    owner: dict[int, int] = {}

    def augment(r: int, seen: set[int]) -> bool:
        for p, op in enumerate(produced):
            if p not in seen and card_matches(op, refs[r]):
                seen.add(p)
                if p not in owner or augment(owner[p], seen):
                    owner[p] = r
                    return True
        return False

    for r in range(len(refs)):
        augment(r, set())
    return owner


def _set_counts(got: set[Any], want: set[Any]) -> Counts:
    return Counts(tp=len(got & want), fp=len(got - want), fn=len(want - got))


def _supersede_matched(produced: Sequence[CardOp], owner: dict[int, int], want: set[str]) -> Counts:
    """Supersedes scored by what a user sees: right only when the expected card is replaced by a
    card that matches a reference card. ``supersede`` scores the replaced card alone, so a
    sentence that says nothing of the slot ("Tried the neighbour's homemade raki exactly once
    ...") counted as a right supersede of "The user lives in Tirana" (stop 32); here it is a
    wrong one."""
    olds = {op.old_id for op in produced if isinstance(op, SupersedeOp)}
    right = {op.old_id for p, op in enumerate(produced) if isinstance(op, SupersedeOp) and p in owner} & want
    return Counts(tp=len(right), fp=len(olds - want) + len((olds & want) - right), fn=len(want - olds))


def score_window(extraction: Extraction, window: EvalWindow) -> WindowScore:
    produced: list[CardOp] = [op for op in extraction.ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))]
    refs: list[dict[str, Any]] = window.expected["cards"]
    owner = _match(produced, refs)
    exp = window.expected
    targets = {
        "supersede": _set_counts({op.old_id for op in extraction.ops if isinstance(op, SupersedeOp)},
                                 set(exp.get("supersede", []))),
        "retire": _set_counts({op.id for op in extraction.ops if isinstance(op, (ExpireOp, CloseOp))},
                              set(exp.get("retire", []))),
        "merge": _set_counts({frozenset(op.ids) for op in extraction.ops if isinstance(op, MergeOp)},
                             {frozenset(m) for m in exp.get("merge", [])}),
    }
    targets["supersede_matched"] = _supersede_matched(produced, owner, set(exp.get("supersede", [])))
    matched_refs = set(owner.values())
    return WindowScore(
        id=window.id, split=window.split,
        cards=Counts(tp=len(owner), fp=len(produced) - len(owner), fn=len(refs) - len(owner)),
        targets=targets,
        unmatched_produced=[f"{op.type}: {op.body}" for p, op in enumerate(produced) if p not in owner],
        missed_reference=[f"{r['type']}: {r['keywords']}" + (f" expires {r['expires']}" if r.get("expires") else "")
                          for i, r in enumerate(refs) if i not in matched_refs],
        false_cards=[f"{op.type}: {op.body}" for op in produced
                     if any(is_false(op, f) for f in exp.get("forbidden", []))],
    )


def score_extraction(extractor: Extractor, dataset: Sequence[EvalWindow]) -> Report:
    """Run ``extractor`` on every window and score it against the references."""
    return Report([score_window(extractor(w.messages, w.cards, w.summary, w.now), w) for w in dataset])


# -- entry point --------------------------------------------------------------------------------------


def format_table(report: Report) -> str:
    rows = [f"{'window':32} {'split':10} {'P':>5} {'R':>5} {'prod':>4} {'ref':>4} {'false':>5} {'sup':>7} {'ret':>7} {'mrg':>7} "
            f"{'sup+card':>8}"]
    for w in report.windows:
        c = w.cards
        t = {k: f"{w.targets[k].tp}/{w.targets[k].tp + w.targets[k].fn}+{w.targets[k].fp}" for k in TARGET_KINDS}
        rows.append(f"{w.id:32} {w.split:10} {c.precision:5.2f} {c.recall:5.2f} {c.tp + c.fp:4d} "
                    f"{c.tp + c.fn:4d} {len(w.false_cards):5d} {t['supersede']:>7} {t['retire']:>7} {t['merge']:>7} "
                    f"{t['supersede_matched']:>8}")
    for split, numbers in report.as_json().items():
        rows.append(f"{split:>10}: precision {numbers['precision']:.3f}  recall {numbers['recall']:.3f}  "
                    f"f1 {numbers['f1']:.3f}  false {numbers['false_cards']} ({numbers['false_rate']:.1%})  supersede {numbers['supersede_accuracy']:.2f}  "
                    f"retire {numbers['retire_accuracy']:.2f}  merge {numbers['merge_accuracy']:.2f}  "
                    f"supersede by a right card {numbers['supersede_matched_accuracy']:.2f}")
    return "\n".join(rows)


def make(name: str) -> Extractor:
    """``rules`` (the phrase rules alone), ``semantic`` (the prototype extractor alone),
    ``learned`` (the learned extractor alone) or ``offline`` (what dreaming uses offline: the
    learned extractor behind the strict rules)."""
    from memfs.agent.dream.extract_offline import OfflineExtractor, extract_offline

    if name == "rules":
        return extract_offline
    from memfs.embed import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    if name == "semantic":
        from memfs.agent.dream.extract_semantic import SemanticExtractor

        return SemanticExtractor(embedder)
    if name == "learned":
        from memfs.agent.dream.learned import LearnedExtractor

        return LearnedExtractor(embedder)
    if name == "offline":
        return OfflineExtractor(embedder)
    raise BadInputError(f"--extractor: one of rules, semantic, learned, offline (got {name!r})")


BLIND = frozenset({"blind8", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14", "blind15", "blind16", "blind17", "blind18", "blind19", "blind20", "blind21", "blind22", "blind23", "blind24", "blind25", "blind26", "blind27", "blind28", "blind29", "blind30", "blind31", "blind32", "blind33", "blind34", "blind35", "blind36", "blind37", "blind38", "blind39", "blind40", "blind41"})
"""Splits kept out of every run unless named: they are measured once, and never tuned on."""


def select(windows: Sequence[EvalWindow], splits: str | None) -> list[EvalWindow]:
    """``splits`` is a comma list; without one, every split except the ``BLIND`` ones."""
    wanted = set(splits.split(",")) if splits else None
    return [w for w in windows if (w.split in wanted if wanted else w.split not in BLIND)]


def _arg(args: Sequence[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def main(argv: Sequence[str] | None = None) -> int:
    """Print an offline extractor's scores: a table, then one JSON line.

    ``-v`` lists every extra, missed and false card; ``--extractor rules|semantic|learned|offline``
    (default ``offline``, the real model); ``--splits a,b`` picks splits (default: all but
    the blind ones in ``BLIND``, which are measured once and never tuned on)."""
    args = list(argv or [])
    name = args[args.index("--extractor") + 1] if "--extractor" in args else "offline"
    report = score_extraction(make(name), select(load_dataset(), _arg(args, "--splits")))
    print(format_table(report))
    if "-v" in args:
        for w in report.windows:
            for line in w.unmatched_produced:
                print(f"  {w.id} EXTRA  {line}")
            for line in w.missed_reference:
                print(f"  {w.id} MISSED {line}")
            for line in w.false_cards:
                print(f"  {w.id} FALSE  {line}")
    print(json.dumps({"extractor": name, **report.as_json()}))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
