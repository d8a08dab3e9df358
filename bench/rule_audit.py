"""Each phrase rule's contribution to the shipped offline extractor, measured by leaving it out.

``python bench/rule_audit.py`` runs the embedding extractor once per dev window (every split
but the blind ones, ``extraction_eval.BLIND``), then, for each rule of
``rules.registry.FACT_RULES`` and the plan / promise / emotion families, the rules without it,
merged with the same embedding ops (``extract_offline.combine``), and prints what the rule
adds: true cards, extra cards and false cards, on the splits the rules were written from
("tuned": tune .. blind6) and on the ones they never saw before their first measurement
("untuned": blind7, misleading). A rule that adds extras or false cards on untuned text and
no true card is a candidate for ``registry.SUBJECT_GATED`` (or for removal).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from memfs.agent.dream import extraction_eval as ev
from memfs.agent.dream import window as window_mod
from memfs.agent.dream.extract_offline import combine, extract_offline
from memfs.agent.dream.extract_semantic import SemanticExtractor
from memfs.agent.dream.ops import Extraction
from memfs.agent.dream.rules import registry

UNTUNED = frozenset({"blind7", "misleading"})


@contextmanager
def without(name: str) -> Iterator[None]:
    """The rules with one rule (or family) left out of writing."""
    saved = registry.WRITE_RULES, registry.rule_plan, window_mod.rule_promise, window_mod._emotion
    try:
        if name == "plan":
            registry.rule_plan = lambda s, ctx: iter(())  # type: ignore[assignment]
        elif name == "promise":
            window_mod.rule_promise = lambda s, ctx: iter(())  # type: ignore[assignment]
        elif name == "emotion":
            window_mod._emotion = lambda *a: []  # type: ignore[assignment]
        elif name:
            registry.WRITE_RULES = tuple(r for r in registry.WRITE_RULES if r.__name__ != name)
        yield
    finally:
        registry.WRITE_RULES, registry.rule_plan, window_mod.rule_promise, window_mod._emotion = saved


def tally(report: ev.Report) -> dict[str, tuple[int, int, int]]:
    out = {}
    for group, pick in (("tuned", lambda s: s not in UNTUNED), ("untuned", lambda s: s in UNTUNED)):
        ws = [w for w in report.windows if pick(w.split)]
        out[group] = (sum(w.cards.tp for w in ws), sum(w.cards.fp for w in ws), sum(len(w.false_cards) for w in ws))
    return out


def audit(semantic_of: Callable[[ev.EvalWindow], Extraction], windows: list[ev.EvalWindow],
          rules: list[str]) -> list[dict[str, Any]]:
    def run() -> dict[str, tuple[int, int, int]]:
        def extractor(msgs: Any, cards: Any, summary: str, now: Any) -> Extraction:
            w = next(x for x in windows if x.messages == tuple(msgs))
            return combine(extract_offline(msgs, cards, summary, now, strict=True), semantic_of(w), msgs, cards, summary, now)
        return tally(ev.score_extraction(extractor, windows))

    base = run()
    rows = [{"rule": "(all rules)", **{g: dict(zip(("tp", "fp", "false"), v, strict=True)) for g, v in base.items()}}]
    for name in rules:
        with without(name):
            got = run()
        # what the rule ADDS = base - without
        rows.append({"rule": name, **{g: {"tp": base[g][0] - got[g][0], "fp": base[g][1] - got[g][1],
                                          "false": base[g][2] - got[g][2]} for g in base}})
    return rows


def main() -> int:
    from memfs.embed import SentenceTransformerEmbedder

    windows = ev.select(ev.load_dataset(), None)
    semantic = SemanticExtractor(SentenceTransformerEmbedder())
    cache = {w.id: semantic(w.messages, w.cards, w.summary, w.now) for w in windows}
    names = [r.__name__ for r in registry.FACT_RULES] + ["plan", "promise", "emotion"]
    for row in audit(lambda w: cache[w.id], windows, names):
        print(json.dumps(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
