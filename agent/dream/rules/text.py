"""Text helpers for the offline rules: sentences, person, tidying, words and names.

Cards are written in the third person ("The user's sister is Maya.") so they make sense
alone; existing cards are read back in the first person so the same rules classify them
(both in ``memfs.agent.dream.person``, re-exported here for the rules).
"""

from __future__ import annotations

import re

from memfs.agent.dream.dates import MONTHS, WEEKDAYS
from memfs.agent.dream.person import first_person, third_person
from memfs.agent.dream.rules.lexicon import FILLER_TAIL, NOT_NAMES, STOPWORDS, SYNONYMS

__all__ = ["content_words", "first_person", "names_in", "norm_key", "sentences", "third_person", "tidy"]


def sentences(text: str) -> list[str]:
    """Split a chat message into sentences (chat rarely punctuates, so be lenient)."""
    text = text.strip()
    if len(re.sub(r"[^A-Za-z]", "", text)) > 3 and text.upper() == text:
        text = text.title()
    parts = re.split(r"(?<=[.!?])\s+|\s*\n+\s*", text)
    return [p.strip() for p in parts if len(p.strip()) > 1]


def tidy(text: str) -> str:
    """Strip chat filler from a clause and make it a sentence."""
    text = re.sub(r"^(?:(?:so|also|oh|and|but|ugh|btw|yeah|well|anyway|ok|okay|big news|sadly|obviously|actually yes|"
                  r"actually|honestly|bad news|good news|on a brighter note|anyway),?\s+|"
                  r"(?:quick update|small update|update|hiya|hi|hey|evening|morning|right|hmm|ooh|welp|guess what)"
                  r"[,:!]+\s+)+",
                  "", text.strip(), flags=re.IGNORECASE)
    text = FILLER_TAIL.sub("", text.rstrip(" .!?,")).rstrip(" .!?,")
    text = re.sub(r"\s+", " ", text)
    return (text[:1].upper() + text[1:] + ".") if text else ""


def content_words(text: str) -> frozenset[str]:
    words = re.findall(r"[a-z][a-z'-]+", text.lower())
    return frozenset(SYNONYMS.get(w, w) for w in words
                     if w not in STOPWORDS and len(w) > 2 and w not in WEEKDAYS and w not in MONTHS)


def names_in(text: str) -> list[str]:
    """Capitalised words that are probably names (not the sentence's first word)."""
    found = []
    for match in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2})", text):
        word = match.group(1)
        head, _, rest = word.partition(" ")
        if head in NOT_NAMES and rest:
            word, head = rest, rest.split()[0]  # "Tell Maya": Maya
        if head in NOT_NAMES or head.lower().removesuffix("s") in WEEKDAYS or head.lower() in MONTHS:
            continue
        found.append(word)
    return found


def norm_key(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9'-]+", text.lower()) if w not in ("the", "a", "an", "my")]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)
