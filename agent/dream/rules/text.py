"""Text helpers for the offline rules: sentences, person, tidying, words and names.

Cards are written in the third person ("The user's sister is Maya.") so they make sense
alone; existing cards are read back in the first person so the same rules classify them.
"""

from __future__ import annotations

import re

from memfs.agent.dream.dates import MONTHS, WEEKDAYS
from memfs.agent.dream.rules.lexicon import FILLER_TAIL, NOT_NAMES, STOPWORDS, SYNONYMS


def sentences(text: str) -> list[str]:
    """Split a chat message into sentences (chat rarely punctuates, so be lenient)."""
    text = text.strip()
    if len(re.sub(r"[^A-Za-z]", "", text)) > 3 and text.upper() == text:
        text = text.title()
    parts = re.split(r"(?<=[.!?])\s+|\s*\n+\s*", text)
    return [p.strip() for p in parts if len(p.strip()) > 1]


def third_person(text: str) -> str:
    """Rewrite a first-person sentence about the user into the third person."""
    rules = [
        (r"\bI'm\b|\bI am\b", "the user is"), (r"\bI've\b", "the user has"),
        (r"\bI'll\b", "the user will"), (r"\bI'd\b", "the user would"),
        (r"\bI have\b", "the user has"), (r"\bI don't\b", "the user doesn't"),
        (r"\bI do\b", "the user does"), (r"\bI need\b", "the user needs"),
        ((r"\bI ((?:also |really |just |still |already |finally |usually )?)(go|see|want|start|work|"
          r"live|love|like|hate|plan|get|think|prefer|feel|miss|need|have)\b"), r"the user \1\2s"),
        (r"\bI\b", "the user"), (r"\bmy\b", "the user's"), (r"\bmine\b", "the user's"),
        (r"\bmyself\b", "themself"), (r"\bme\b", "the user"),
    ]
    for pattern, repl in rules:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    text = re.sub(r"\b(haves|gos|misss)\b", lambda m: {"haves": "has", "gos": "goes", "misss": "misses"}[m.group(1)], text)
    first = text.find("the user")
    if first != -1:
        head, tail = text[:first + 8], text[first + 8:]
        text = head + re.sub(r"\bthe user's\b", "their", tail)
    return text


def first_person(body: str, user_name: str | None = None) -> str:
    """Read a card body back in the first person, so the sentence rules can classify it.

    Cards written by hand or by a model often name the user ("Alex works at ..."): with
    ``user_name`` those read as "I" too.
    """
    if user_name:
        body = re.sub(rf"\b{re.escape(user_name)}'s\b", "the user's", body)
        body = re.sub(rf"\b{re.escape(user_name)}\b", "the user", body)
    rules = [(r"\bthe user's\b", "my"), (r"\btheir\b", "my"), (r"\bthe user is\b", "I am"),
             (r"\bthe user has\b", "I have"), (r"\bthe user was\b", "I was"),
             (r"\bthe user does\b", "I do"), (r"\bthe user (\w+?)s\b", r"I \1"),
             (r"\bthe user\b", "I")]
    for pattern, repl in rules:
        body = re.sub(pattern, repl, body, flags=re.IGNORECASE)
    return body


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
        head = word.split()[0]
        if head in NOT_NAMES or head.lower().removesuffix("s") in WEEKDAYS or head.lower() in MONTHS:
            continue
        found.append(word)
    return found


def norm_key(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9'-]+", text.lower()) if w not in ("the", "a", "an", "my")]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)
