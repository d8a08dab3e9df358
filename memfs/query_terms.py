"""The words of a question that say what it is about, for BM25.

A question to a companion is wrapped in conversational framing: "can you suggest some…",
"I was wondering if you could remind me…", "in our previous conversation you
mentioned…". Those words are common in chat but not stop words, so BM25 matches them:
"Can you suggest some activities for the evening?" then ranks first the message that
asked for a suggestion about something else. The framing says *what kind* of answer is
wanted (the retrieval plan and the speaker signal read it); only the rest says what the
answer is about.
"""

from __future__ import annotations

import re

from memfs.ranking import STOPWORDS, stem, tokenize

FRAMING = frozenset(stem(w) for w in (
    "suggest", "suggestion", "suggested", "recommend", "recommendation", "recommended",
    "idea", "ideas", "tip", "tips", "advice", "remind", "wondering", "wonder", "thinking",
    "think", "previous", "conversation", "chat", "discussion", "mentioned", "mention",
    "told", "tell", "said", "know", "remember", "recall", "help", "please", "thanks",
    "maybe", "something", "anything", "lately", "recently", "earlier", "again", "really",
    "bit",
))
"""Framing of a request or a recall question (general English, stemmed like the index)."""
_WORDS = re.compile(r"[A-Za-z][\w'-]*")


def query_terms(text: str, drop_framing: bool = True) -> list[str]:
    """The BM25 terms of ``text``; without its framing words when ``drop_framing`` (unless
    that would leave nothing: "any tips?" still matches tips)."""
    terms = tokenize(text)
    if not drop_framing:
        return terms
    kept = [t for t in terms if t not in FRAMING]
    return kept or terms


def topic_text(text: str) -> str:
    """The words of ``text`` that say what it is about, in their order, framing and stop
    words out: "Can you suggest some activities that I can do in the evening?" →
    "activities evening". "" when nothing is left."""
    return " ".join(w for w in _WORDS.findall(text)
                    if w.lower() not in STOPWORDS and stem(w.lower()) not in FRAMING)
