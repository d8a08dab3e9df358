"""Does a probe set's phrasing occur anywhere else? Every 4-word window of the chosen fields,
searched (case- and punctuation-insensitive) in this checkout, ``../shared`` and LongMemEval.

    python bench/phrase_overlap.py agent/evals/data/constraint_probes.jsonl constraint,request
    python bench/phrase_overlap.py agent/evals/data/profile_blind4.json said,reply,gist,lines,repeated,replies,signoff

A JSON-lines file is read line by line; a JSON document (the profile sets) is searched for
the fields in every object nested in it, every string inside a field's value included.

A blind set must not share its phrasing with the code or data it is measured against; the
only windows expected elsewhere are generic ones ("what should I order").
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


def corpus(skip: Path) -> dict[str, str]:
    texts: dict[str, str] = {}
    for base in (ROOT, SHARED):
        for path in base.rglob("*"):
            if {".venv", ".git", "build", "dist"} & set(path.parts) or not path.is_file():
                continue
            if path.resolve() == skip.resolve() or path.suffix == ".gz":
                continue
            try:
                texts[str(path.relative_to(base.parent))] = path.read_text("utf-8").lower()
            except (UnicodeDecodeError, OSError):
                continue
    lme = SHARED / "data" / "longmemeval_s_60.json.gz"
    if lme.exists():
        with gzip.open(lme, "rt", encoding="utf-8") as handle:
            texts["longmemeval_s_60"] = handle.read().lower()
    return texts


def records(path: Path) -> list[dict[str, Any]]:
    """Every object of a JSON-lines probe file, or every object nested anywhere in one JSON
    document (the profile sets: facts, bank topics and their templates)."""
    raw = path.read_text("utf-8")
    try:
        document = json.loads(raw)
    except json.JSONDecodeError:
        return [json.loads(line) for line in raw.splitlines() if line.strip()]
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    return found


def strings(value: Any) -> list[str]:
    """Every string in a field's value, however nested (a profile topic's ``lines`` hold
    objects whose ``user`` and ``replies`` are the text)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in strings(item)] if isinstance(value, list) else []


WORD = re.compile(r"[a-z']+")


def windows(text: str) -> list[tuple[str, str, str, str]]:
    """Every run of four words in ``text`` (words: letters and apostrophes, so anything else,
    digits included, separates them: a little stricter than matching the phrase as a regex)."""
    words = WORD.findall(text.lower())
    return list(zip(words, words[1:], words[2:], words[3:]))


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        raise SystemExit(0 if len(sys.argv) == 2 else 2)
    probe_file, fields = Path(sys.argv[1]), sys.argv[2].split(",")
    # the set's windows first (a few thousand), then one pass over each text of the corpus:
    # searching the corpus once per window took the better part of an hour with LongMemEval in it
    wanted: dict[tuple[str, str, str, str], list[tuple[str, str]]] = {}
    for n, probe in enumerate(records(probe_file)):
        for name in fields:
            for said in strings(probe.get(name)):
                for window in windows(said):
                    wanted.setdefault(window, []).append((str(probe.get("id", f"#{n}")), name))
    where: dict[tuple[str, str, str, str], list[str]] = {}
    for key, text in corpus(probe_file).items():
        for window in set(windows(text)) & wanted.keys():
            where.setdefault(window, []).append(key)
    hits = 0
    for window, places in wanted.items():
        if window in where:
            for probe_id, name in places:
                hits += 1
                print(probe_id, name, " ".join(window), "->", ", ".join(where[window][:3]))
    print(f"4-word windows found elsewhere: {hits}")


if __name__ == "__main__":
    main()
