"""The learned limit model out of fold: leave one own-bank constraint split out (stop 35, c-limit).

For each split of ``--splits`` (spent, each with its own small-talk bank), the limit model is fit
without that split's probes and bank (``memfs.agent.requests.fit_limit``), and the constraint
eval (``run_constraints``, memory only) is run on it for each setting of the constraint search,
in the same process; ``off`` (no learned candidates, no learned term) is main's search. Run:

    python bench/constraint_limit_oof.py --splits blind18,blind19,blind20,blind21,blind22 \
        --settings off,pool40+0.5,domain0.5,domain1,domain2 --messages 1600,200
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

SETTINGS = {
    "off": {"learned_pool": 0, "learned": 0.0, "learned_domain": 0.0},
    "pool40": {"learned_pool": 40, "learned": 0.0, "learned_domain": 0.0},
    "pool40+0.5": {"learned_pool": 40, "learned": 0.5, "learned_domain": 0.0},
    "pool40+1": {"learned_pool": 40, "learned": 1.0, "learned_domain": 0.0},
    "pool20+0.5": {"learned_pool": 20, "learned": 0.5, "learned_domain": 0.0},
    "domain0.5": {"learned_pool": 40, "learned": 0.5, "learned_domain": 0.5},
    "domain1": {"learned_pool": 40, "learned": 0.5, "learned_domain": 1.0},
    "domain2": {"learned_pool": 40, "learned": 0.5, "learned_domain": 2.0},
    "A": {"ask_pool": 0, "ask_mix": 0.0},
    "mixA": {"ask_pool": 40, "ask_mix": 0.0},
    "mixM": {"ask_pool": 40, "ask_mix": 0.5},
}
"""``pool40+0.5`` is c-limit; ``domain0.5`` is c-limit2 as shipped. The last three keep every
other weight as shipped: ``A`` is stop 37's search (the first learned model alone), ``mixA`` and
``mixM`` stop 38's c-mix (the second model's best 40 as candidates too; the score reads the
first model's probability, or the mean of both). The ``off`` ... ``domain2`` settings predate
the second model and now run with its pool (``ask_pool`` 40)."""


def lme_bank(sessions: list[list[tuple[str, str]]]) -> dict[str, object]:
    """A small-talk bank (the schema of ``data/smalltalk.json``) whose topics are real sessions
    with an assistant: each session a topic, its user messages the lines, the assistant's answer
    (cut to 300 characters) the reply. Braces are escaped: the bank's lines are format strings."""
    def esc(text: str) -> str:
        return text.replace("{", "{{").replace("}", "}}")

    topics = [{"name": f"lme-{n}", "lines": [{"user": esc(u), "replies": [esc(a[:300])]} for u, a in pairs]}
              for n, pairs in enumerate(sessions)]
    return {"slots": {}, "greetings": ["hi"], "prefixes": [""],
            "signoff": [{"user": "thanks, that's all for now", "replies": ["You're welcome!"]}], "topics": topics}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--splits", default="blind18,blind19,blind20")
    ap.add_argument("--messages", default="1600,200")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--c", type=float, default=None)
    ap.add_argument("--ask-weight", type=float, default=None, help="the LongMemEval rows' sample weight")
    ap.add_argument("--history", default="bank", choices=("bank", "lme"),
                    help="the chat the limits are planted in: each split's own bank, or LongMemEval's "
                         "odd dev half (real chat with an assistant, never read by the fit)")
    args = ap.parse_args()
    from memfs.agent.evals.constraints import run_constraints
    from memfs.agent.requests import fit_limit

    import memfs.constraints as mc
    import memfs.salience as ms
    from memfs.embed import default_embedder

    embedder = default_embedder()
    base = mc.ConstraintWeights
    table: dict[str, dict[str, dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        import memfs.agent.evals.constraints as ce

        own_bank = ce.bank_of
        chat = lme_bank(fit_limit.assistant_chat(1)) if args.history == "lme" else None
        for split in args.splits.split(","):
            path = Path(tmp) / f"limit-{split}.npz"
            model, counts = fit_limit.fit(embedder, [split], args.c or fit_limit.C,
                                          ask_weight=args.ask_weight or fit_limit.ASK_WEIGHT)
            model.save(path)
            ms.LIMIT_MODEL_PATH = path
            print(f"{split}: both models fit without it on {counts}", flush=True)
            for name in args.settings.split(","):
                setting = SETTINGS[name]
                mc.ConstraintWeights = lambda setting=setting, **kw: base(**{**setting, **kw})  # type: ignore[misc]
                for n in map(int, args.messages.split(",")):
                    if chat is not None:  # only the eval's history: the fit reads the splits' own banks
                        ce.bank_of = lambda split, chat=chat: chat  # type: ignore[assignment]
                    try:
                        report = run_constraints(split, n, embedder=embedder)
                    finally:
                        ce.bank_of = own_bank  # type: ignore[assignment]
                    got = sorted(r.probe.id for r in report.rows if r.in_context)
                    table.setdefault(name, {}).setdefault(str(n), {})[split] = len(got)
                    print(json.dumps({"split": split, "setting": name, "messages": n, "in_context": len(got),
                                      "ids": got}), flush=True)
            mc.ConstraintWeights = base  # type: ignore[misc]
    for name, by_n in table.items():
        print(name, {n: (sum(v.values()), v) for n, v in by_n.items()})


if __name__ == "__main__":
    main()
