"""Which probe and set files each eval split reads.

Kept apart from the evals themselves so that the CLI can offer the splits as ``--split``
choices without importing an eval (and its report and table code) at startup: a new split
is registered once, here.
"""

from __future__ import annotations

CONSTRAINT_FILES = {
    "test": "data/constraint_probes.jsonl", "dev": "data/constraint_dev.jsonl",
    "blind2": "data/constraint_probes2.jsonl", "blind3": "data/constraint_probes3.jsonl",
    "blind4": "data/constraint_probes4.jsonl", "blind5": "data/constraint_probes5.jsonl",
    "blind6": "data/constraint_probes6.jsonl", "blind7": "data/constraint_probes7.jsonl",
    "blind8": "data/constraint_probes8.jsonl", "blind9": "data/constraint_probes9.jsonl",
    "blind10": "data/constraint_probes10.jsonl", "blind11": "data/constraint_probes11.jsonl",
    "blind12": "data/constraint_probes12.jsonl", "blind13": "data/constraint_probes13.jsonl",
    "blind14": "data/constraint_probes14.jsonl",
    "blind15": "data/constraint_probes15.jsonl",
    "blind16": "data/constraint_probes16.jsonl",
    "blind17": "data/constraint_probes17.jsonl",
    "blind18": "data/constraint_probes18.jsonl",
    "blind19": "data/constraint_probes19.jsonl",
    "blind20": "data/constraint_probes20.jsonl",
    "blind21": "data/constraint_probes21.jsonl",
    "blind22": "data/constraint_probes22.jsonl",
    "blind23": "data/constraint_probes23.jsonl",
    "blind24": "data/constraint_probes24.jsonl",
    "blind25": "data/constraint_probes25.jsonl",
    "blind26": "data/constraint_probes26.jsonl",
    "blind27": "data/constraint_probes27.jsonl",
    "blind28": "data/constraint_probes28.jsonl",
    "dev2": "data/constraint_dev2.jsonl", "dev3": "data/constraint_dev3.jsonl",
}
"""``memfs eval constraints --split``: test is the first blind set, blind2-28 the later ones
(each measured once; blind28, written at stop 38, not yet), dev/dev2/dev3
the tuning sets."""

CONSTRAINT_BANKS = {"blind18": "data/constraint_bank18.json",
                    "blind19": "data/constraint_bank19.json",
                    "blind20": "data/constraint_bank20.json",
                    "blind21": "data/constraint_bank21.json",
                    "blind22": "data/constraint_bank22.json",
                    "blind23": "data/constraint_bank23.json",
                    "blind24": "data/constraint_bank24.json",
                    "blind25": "data/constraint_bank25.json",
                    "blind26": "data/constraint_bank26.json",
                    "blind27": "data/constraint_bank27.json",
                    "blind28": "data/constraint_bank28.json"}
"""Constraint splits whose small talk comes from their own bank (the schema of
``data/smalltalk.json``) instead of the planted eval's; every other split keeps that bank."""

PROFILE_FILES = {
    "dev": "data/profile_dev.json", "dev2": "data/profile_dev2.json",
    "blind": "data/profile_blind.json", "blind2": "data/profile_blind2.json",
    "blind3": "data/profile_blind3.json", "blind4": "data/profile_blind4.json",
    "blind5": "data/profile_blind5.json", "blind6": "data/profile_blind6.json",
    "blind7": "data/profile_blind7.json", "blind8": "data/profile_blind8.json",
    "blind9": "data/profile_blind9.json", "blind10": "data/profile_blind10.json",
    "blind11": "data/profile_blind11.json", "blind12": "data/profile_blind12.json",
    "blind13": "data/profile_blind13.json", "blind14": "data/profile_blind14.json",
    "blind15": "data/profile_blind15.json", "blind16": "data/profile_blind16.json",
    "blind17": "data/profile_blind17.json",
}
"""``memfs eval profile --split``: dev and dev2 for tuning, blind to blind12 measured once
(blind5 written and measured once at stop 31; blind6 written and measured once at stop 32;
blind7 written at stop 32 and measured once at stop 33; blind8 written and measured once at
stop 33); blind9 written and measured once at stop 33; blind10 written at stop 33 and
measured once at stop 34; blind11 and blind12 written and measured once at stop 34; blind13
written at stop 35 and measured once at stop 37 (200 messages); blind14 written at stop 35 and
measured once at stop 37; blind15 written at stop 36 and measured once at stop 37; blind16
written at stop 37 and measured once at stop 41; blind17 written at stop 41 and not yet measured;
none is tuned on."""

DECISION_FILES = {"all": "data/decision_probes.jsonl", "blind1": "data/decision_blind1.jsonl",
                  "blind2": "data/decision_blind2.jsonl",
                  "blind3": "data/decision_blind3.jsonl",
                  "blind4": "data/decision_blind4.jsonl",
                  "blind5": "data/decision_blind5.jsonl",
                  "blind6": "data/decision_blind6.jsonl"}
"""``memfs eval decision --split``: "all" is the 60 dev and held-out probes the rules were
written with. blind1 to blind6 were written at stop 42 by helpers who read neither the planner
nor BENCHMARKS, each probe with a ``kind`` ("mentioned": context names the topic but not the
answer; "answered": context holds it; "need"; "general"); blind1 to blind5 were measured once at
stop 42 (blind1 to blind3 then fitted on by ``memfs.agent.needs.fit``); blind6 is unmeasured."""
