"""Speech acts of a user sentence: is it said *to* the assistant rather than *about* the user?

A companion chat is full of requests and questions ("tell me something about cacti", "do you
think it's too early for the heater", "what even is a derailleur") that chat typing leaves
without a "?". They state nothing about the user, yet they read like facts or plans to an
embedding. English marks them by grammar, which this module reads:

- interrogative word order: an auxiliary before its subject ("do you ...", "is it ...",
  "can we ..."), or a question word followed by an auxiliary or a bare verb ("what is ...",
  "how do ...", "why does ...");
- the imperative mood: a sentence that opens on a bare verb with no subject ("tell me ...",
  "explain ...", "give me ..."), or on "you" with a modal of advice ("you should ...");
- a closing question tag or "?" anywhere.

Boundaries are imperatives too ("don't call me ...", "never mention ..."), and so is a name
("call me Sam"); those say how the user wants to be treated, so ``addressed`` leaves out
negative imperatives and imperatives about the user's name: callers that gate on it still see
them. None of this reads the wording of any evaluation sentence: the verbs below are the common
English verbs of requests, the auxiliaries are the closed class.
"""

from __future__ import annotations

import re

_FILLER = (r"^\W*(?:(?:so|oh|and|but|also|anyway|anyways|yeah|yes|ok|okay|btw|well|hey|hi|right|honestly|"
           r"random question|quick question|question|serious question|ok so|um|umm|hmm|lol|haha|please|pls|"
           r"just|actually|genuinely|seriously|real talk)[,!.:]*\s+)*")
_AUX = (r"(?:do|does|did|can|could|would|will|should|shall|is|are|was|were|am|may|might|"
        r"must|don't|doesn't|didn't|can't|couldn't|wouldn't|won't|shouldn't|isn't|aren't|wasn't|haven't)")
_PRONOUN = r"(?:you|u|i|we|it|there|he|she|they|anyone|anybody)"
_SUBJECT = (r"(?:you|u|i|we|it|there|he|she|they|this|that|these|those|my|your|our|his|her|their|the|a|an|"
            r"any|anyone|anybody|anything|someone|something|people|everyone)")
_INTERROGATIVE = re.compile(_FILLER + r"(?:" + _AUX + r"\s+" + _SUBJECT + r"|(?:have|has|haven't|hasn't)\s+"
                            + _PRONOUN + r")\b", re.IGNORECASE)
_WH = re.compile(_FILLER + r"(?:(?:what's|whats|how's|hows|who's|where's)\b|(?:what|how|why|where|who|whose)"
                 r"(?:\s+(?:\w+\s+){0,2}?" + _AUX + r"\b|\s+even\b|\s+about\b|\s+else\b|\s+if\b"
                 r"|\s+(?:kind|sort|type)\s+of\b|\s+on earth\b))",
                 re.IGNORECASE)
_TAG = re.compile(r"(?:,\s*|\s+)(?:do you think|you think|any ideas?|thoughts|you reckon)\W*$"
                  r"|\?", re.IGNORECASE)
_REQUEST_VERBS = ("tell|give|help|explain|suggest|recommend|write|make|find|show|list|describe|name|"
                  "pick|choose|imagine|say|teach|check|look|read|translate|summarise|summarize|"
                  "compare|rate|rank|sing|draw|invent|convince|walk|quiz|test|ask|answer|"
                  "picture|settle|decide|calculate|figure|fix|send|share|recap|rewrite|"
                  "keep|let|surprise|distract|cheer|hit|gimme|lemme|go|hold|wait|hang|consider|define|"
                  "brainstorm|draft|outline|proofread|correct|critique|roast|hype|motivate|pretend")
_IMPERATIVE = re.compile(_FILLER + r"(?:" + _REQUEST_VERBS + r")\b(?!\s+(?:me\s+)?by\b)(?!'s|s\b|ed\b|ing\b)",
                         re.IGNORECASE)
_ADVICE = re.compile(_FILLER + r"(?:you|u)\s+(?:should|could|can|must|have to|need to|gotta|ought to|might want)\b",
                     re.IGNORECASE)
_ABOUT_USER = re.compile(_FILLER + r"(?:call me|refer to me|my name|don't|do not|never|stop|no more|avoid|"
                         r"please don't|pls don't)\b", re.IGNORECASE)


def asks(sentence: str) -> bool:
    """Is the sentence a question (interrogative word order, a question word with its
    auxiliary, a closing tag, or a "?"), typed with or without the question mark?"""
    return bool(_INTERROGATIVE.search(sentence) or _WH.search(sentence) or _TAG.search(sentence))


def bids(sentence: str) -> bool:
    """Is the sentence an imperative or advice request to the assistant ("tell me ...",
    "you should ...")? Negative imperatives and the user's name ("don't ...", "call me ...")
    are how the user wants to be treated, not requests: False."""
    if _ABOUT_USER.search(sentence):
        return False
    return bool(_IMPERATIVE.search(sentence) or _ADVICE.search(sentence))


def addressed(sentence: str) -> bool:
    """Is the sentence said to the assistant, a question or a request, rather than a statement
    about the user?"""
    return asks(sentence) or bids(sentence)
