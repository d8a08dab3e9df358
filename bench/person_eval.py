"""How well card bodies read: the user's sentence in the third person, scored by exact match.

    python bench/person_eval.py [--set dev|blind] [-v]

Each line of ``agent/dream/data/person_<set>.jsonl`` is ``{"said", "expected", "kind"}``: a
user's sentence and the card body it should become under the person convention (README,
"How card bodies are written"). The body is ``cardtext.write_body(said, None)``, the function
every extractor writes with, and nothing else is imported, so the same harness measures any
checkout's code: ``PYTHONPATH=<other checkout>/.. python bench/person_eval.py`` (the data
always comes from the checkout this file is in).

A line matches when the body equals ``expected`` after ignoring the first character's case,
surrounding whitespace and one final full stop: the person rewrite is measured, not the
tidying around it.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "agent" / "dream" / "data"


def comparable(text: str) -> str:
    """``text`` with the differences the eval forgives removed."""
    text = text.strip()
    text = text.removesuffix(".").rstrip()
    return text[:1].lower() + text[1:]


def load(name: str) -> list[dict[str, str]]:
    path = DATA / f"person_{name}.jsonl"
    if not path.exists():
        raise SystemExit(f"person_eval: no data set {path}")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("dev", "blind"), default="dev")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every miss")
    args = parser.parse_args(argv)
    from memfs.agent.dream.cardtext import write_body

    rows = load(args.set)
    total: collections.Counter[str] = collections.Counter()
    hits: collections.Counter[str] = collections.Counter()
    for row in rows:
        body = write_body(row["said"], None)
        kind = row.get("kind", "-")
        total[kind] += 1
        if comparable(body) == comparable(row["expected"]):
            hits[kind] += 1
        elif args.verbose:
            print(f"MISS {row.get('id', '?')} [{kind}]\n  said: {row['said']}\n  want: {row['expected']}\n"
                  f"  got:  {body}")
    for kind in sorted(total):
        print(f"{kind:12} {hits[kind]:3}/{total[kind]:<3}")
    matched, count = sum(hits.values()), sum(total.values())
    print(f"exact match ({args.set}): {matched}/{count} = {matched / count:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
