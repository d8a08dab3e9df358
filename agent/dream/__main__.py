"""``python -m memfs.agent.dream``: the dream subprocess (started by ``runner.spawn_dream``).

Thin on purpose: parse arguments, open the pair, call the runner, print one line per
dream (stdout goes to ``.memfs/dream.log``). Tests drive ``runner`` directly.
"""

from __future__ import annotations

import argparse
import sys

from memfs.agent.dream.runner import DreamResult, dream_once, run_pending
from memfs.agent.services import wired_store

from memfs.compaction import pending_events
from memfs.config import load_config
from memfs.errors import MemfsError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memfs.agent.dream",
                                     description="Dream a pair's pending compaction windows.")
    parser.add_argument("--home", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--character", required=True)
    parser.add_argument("--event", help="only this event id (default: every pending one)")
    args = parser.parse_args(argv)
    try:
        config = load_config(home=args.home)
        pair = wired_store(config.home, config=config).pair(args.user, args.character,
                                                              create=False)
        if args.event:
            events = [e for e in pending_events(pair.root) if e.id == args.event]
            if not events:
                print(f"dream: event {args.event} is not pending")
                return 0
            results = [dream_once(pair, events[0])]
        else:
            run = run_pending(pair)
            if run.busy:
                print("dream: another dream is running for this pair")
                return 0
            results = run.results
    except MemfsError as exc:
        print(f"dream: error: {exc}", file=sys.stderr)
        return 1
    for result in results:
        print(_line(result))
    return 1 if any(r.status == "failed" for r in results) else 0


def _line(result: DreamResult) -> str:
    if result.status == "merged":
        return f"dream: {result.event} merged as {result.merge}"
    if result.status == "failed":
        return f"dream: {result.event} failed, window pending: {result.error}"
    return f"dream: {result.event} {result.status}"


if __name__ == "__main__":
    raise SystemExit(main())
