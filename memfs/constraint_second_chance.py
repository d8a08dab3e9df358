"""A second chance for a request the classifier leaves without a domain (issue 12, stop 30).

"dunno, you choose and ill go with it" or "which dishes do i tick?" ask for a suggestion,
but alone they are far from every domain's requests (cosine 0.25-0.45), and within a few
hundredths of what is not a request: ``classify_request``'s bars (``CLASSIFY_THRESHOLD``,
``REQUEST_MARGIN``) leave the plan empty, so no constraint is searched. Lowering those bars
names the request's nearest domain, which is the right one only about half the time (stop
29: 37 of 67 empty plans on the spent splits at 1,600 messages).

What the request is about is better read from the occasion, the request with the live
window's last turns (``memfs.constraints.occasion``: "my niece turns 9 on saturday" ... "so
what do i put in the hamper?"); 42 of those 67 (and 18 of the 27 whose limit the right
domain's search finds). So for a question, an option offered or a reply to the assistant
(not a statement: news worded as a wish, "i had a salad for lunch", is as close to a
request as these are) that is at least a little nearer to a request than to anything that
is not one (``SECOND_MARGIN``, and ``SECOND_FLOOR``), the domains are the *occasion's*
nearest. The pair's own stored limits as the request's neighbours were tried and named the
right domain less often than the request itself (24 of 67), so they take no part.
"""

from __future__ import annotations

from collections.abc import Sequence

from memfs.constraints import (
    CLASSIFY_MARGIN,
    DOMAINS,
    _nearest_first,
    _not_request,
    _request_closeness,
    occasion,
)
from memfs.embed import Embedder

SECOND_WORDINGS = ("implicit", "choice", "reply")
"""Wordings given a second chance: a question, an option offered for approval, a reply to
the assistant's question. A statement is not: on the small-talk bank with a window, news
reads as near a request as an unclassified request does (stop 30)."""
SECOND_FLOOR = 0.33
"""The request's best cosine to a domain's requests must be at least this: a question of
fact or about the user's life ("how do i reset my router?") is further from all of them.
The lowest bar (with ``SECOND_MARGIN``) at which none of 240 non-requests was named a
domain (``request_dev.jsonl``'s 42, the 60 decision probes with the classifier wired, and
138 lines of the eval's small talk read after their window); 0.28 named 3 of them and 21
of the spent splits' 67 empty plans at 1,600 messages, 0.33 none and 17 (stop 30)."""
SECOND_MARGIN = 0.05
"""…and exceed its best cosine to ``NOT_REQUESTS`` by this much (``REQUEST_MARGIN`` asks
0.12 of a request the first chance names alone); 0.03 named two questions about the
user's life ("what's my sister's name again?")."""


def second_chance(embedder: Embedder, text: str, wording: str,
                  window: Sequence[str]) -> tuple[str, ...]:
    """The domains of a request ``classify_in_window`` named none for (may be empty):
    the nearest domains (within ``CLASSIFY_MARGIN``, nearest first) of ``text`` read with
    the last turns of ``window`` (oldest first), when ``text`` is worded as one of
    ``SECOND_WORDINGS`` and plainly enough a request (``SECOND_FLOOR``, ``SECOND_MARGIN``).
    The occasion was embedded by ``classify_in_window`` in the same turn (the model's memo
    returns it); ``text``'s closeness is recomputed from its memoised vector."""
    if wording not in SECOND_WORDINGS:
        return ()
    best, qvec = _request_closeness(embedder, text, "implicit")
    top = max(best.values())
    if top < SECOND_FLOOR or top - _not_request(embedder, qvec) < SECOND_MARGIN:
        return ()
    around = occasion(window, text)
    near = best if around == text else _request_closeness(embedder, around, "implicit")[0]
    high = max(near.values())
    return _nearest_first(near, [d for d in DOMAINS if near[d] >= high - CLASSIFY_MARGIN])
