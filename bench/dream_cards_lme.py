"""Cards the offline dream writes from text nobody on this project wrote: LongMemEval's user turns.

    python bench/dream_cards_lme.py --turns 2000 --out /tmp/new.jsonl
    python bench/dream_cards_lme.py --diff /tmp/old.jsonl /tmp/new.jsonl

Every ``stride``-th distinct haystack session of ``shared/data/longmemeval_s_60.json.gz`` is
one dream window (user turns whole, the assistant's replies cut to their first 60 words, as a
companion's are), dreamed by the shipped offline extractor (``OfflineExtractor`` with the real
model) until ``--turns`` user turns are read. Each card op is written as one JSON line (session,
turns, type, body). Run it once with the old code on the import path (``/work/main``'s venv) and
once with the new, then ``--diff`` prints the cards per 1,000 user turns of each and every card
only the new code writes, so that they can be read. No number here is tuned on.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval_s_60.json.gz"
START = dt.datetime(2026, 10, 1, 19, 0, tzinfo=dt.UTC)


def windows(turns: int, stride: int, data: Path = DATA) -> list[list[Any]]:
    """Dream windows: one per chosen distinct session, messages as ``EvalMessage``."""
    from memfs.agent.dream.extraction_eval import EvalMessage

    with gzip.open(data, "rt", encoding="utf-8") as handle:
        questions: list[dict[str, Any]] = json.load(handle)
    seen: set[str] = set()
    out: list[list[Any]] = []
    users = 0
    n = 0
    for question in questions:
        for sid, session in zip(question["haystack_session_ids"], question["haystack_sessions"]):
            if sid in seen:
                continue
            seen.add(sid)
            n += 1
            if n % stride or users >= turns:
                continue
            day = START + dt.timedelta(days=len(out))
            name = f"s-{day:%Y%m%d}-01"
            msgs = []
            for turn, m in enumerate(session):
                text = m["content"] if m["role"] == "user" else " ".join(m["content"].split()[:60])
                msgs.append(EvalMessage(name, turn, m["role"], text, day + dt.timedelta(minutes=2 * turn)))
                users += m["role"] == "user"
            out.append(msgs)
    return out


def run(turns: int, stride: int, out: Path) -> None:
    from memfs.agent.dream.extract_offline import OfflineExtractor
    from memfs.agent.dream.ops import SupersedeOp, WriteOp

    from memfs.embed import default_embedder

    extractor = OfflineExtractor(default_embedder())
    users = 0
    with out.open("w", encoding="utf-8") as handle:
        for window in windows(turns, stride):
            users += sum(m.role == "user" for m in window)
            extraction = extractor(window, [], "", window[-1].ts + dt.timedelta(hours=1))
            for op in extraction.ops:
                if isinstance(op, (WriteOp, SupersedeOp)):
                    handle.write(json.dumps({"session": op.session, "turns": list(op.turns),
                                             "type": op.type, "body": op.body}) + "\n")
        handle.write(json.dumps({"user_turns": users, "windows": turns,
                                 "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}) + "\n")


def diff(old: Path, new: Path) -> None:
    def read(path: Path) -> tuple[int, list[dict[str, Any]]]:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return rows[-1]["user_turns"], rows[:-1]

    users, before = read(old)
    users_new, after = read(new)
    if users != users_new:
        sys.exit(f"the runs read different turns ({users} vs {users_new})")
    key = lambda r: (r["session"], tuple(r["turns"]), r["body"])  # noqa: E731
    known = {key(r) for r in before}
    fresh = [r for r in after if key(r) not in known]
    typed = {(r["session"], tuple(r["turns"])): r["type"] for r in before}
    print(json.dumps({"user_turns": users, "cards_old": len(before), "cards_new": len(after),
                      "per_1000_old": round(1000 * len(before) / users, 1),
                      "per_1000_new": round(1000 * len(after) / users, 1),
                      "only_new": len(fresh), "only_new_per_1000": round(1000 * len(fresh) / users, 1)}))
    for r in fresh:
        was = typed.get((r["session"], tuple(r["turns"])))
        print(f"{r['type']:<11} {'(was ' + was + ') ' if was else ''}{r['body'][:160]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--stride", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--diff", nargs=2, type=Path, metavar=("OLD", "NEW"))
    args = parser.parse_args()
    if args.diff:
        diff(*args.diff)
    elif args.out:
        run(args.turns, args.stride, args.out)
    else:
        parser.error("give --out or --diff")


if __name__ == "__main__":
    main()
