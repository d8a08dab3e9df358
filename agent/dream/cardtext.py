"""Writing cards extractively: the user's own words, made to stand alone.

A card body is the sentence the user said, turned to the third person ("The user ...", by
grammar: ``person.third_person``), every other word as typed, with
its relative date resolved once ("tomorrow (Wednesday 2027-09-22)"; an absolute day is
written once as "Saturday 16 October 2027"), and, when the sentence leans on the one before
it ("she's having surgery tomorrow"), that sentence in front of it. Nothing is paraphrased,
so a card cannot say more than the user did: a sister who works at a children's hospital
stays the user's sister.

Also here: chat normalisation (``im`` → ``I'm``, ``tmrw`` → ``tomorrow``), splitting a message
into units (sentences, and clauses of long sentences), and whose fact a sentence states.
"""

from __future__ import annotations

import re

from memfs.agent.dream.dates import DateHit, with_dates
from memfs.agent.dream.rules.text import sentences, third_person

_CHAT = {"im": "I'm", "ive": "I've", "ill": "I'll", "dont": "don't", "cant": "can't", "wont": "won't",
         "didnt": "didn't", "doesnt": "doesn't", "isnt": "isn't", "wasnt": "wasn't", "shes": "she's",
         "hes": "he's", "theyre": "they're", "thats": "that's", "its": "it's", "u": "you", "ur": "your",
         "tmrw": "tomorrow", "tmr": "tomorrow", "tomoz": "tomorrow", "2moro": "tomorrow", "nite": "night",
         "tonite": "tonight", "mornin": "morning", "pls": "please", "plz": "please", "thx": "thanks",
         "ty": "thanks", "bc": "because", "cuz": "because", "wknd": "weekend", "finaly": "finally",
         "startin": "starting", "gonna": "going to", "wanna": "want to", "i": "I", "i'm": "I'm",
         "i've": "I've", "i'll": "I'll", "i'd": "I'd"}
_WORD = re.compile(r"(?<![\w'])([A-Za-z0-9']+)(?![\w'])")


def normalise(text: str) -> str:
    """Common chat spellings to the forms the date resolver and the person rewrite read."""
    return _WORD.sub(lambda m: _CHAT.get(m.group(1).lower(), m.group(1)) if m.group(1).islower()
                     or m.group(1).lower() in ("i", "im") else m.group(1), text)


_CLAUSE = re.compile(r",\s+(?:and |but |so |which |since |because )?|;\s+|\s+(?:but|because|since)\s+")


def clauses(sentence: str) -> list[str]:
    """A long sentence's clauses (each of four words or more), for sentences that say two things."""
    parts = [p.strip() for p in _CLAUSE.split(sentence) if p and p.strip()]
    return [p for p in parts if len(p.split()) >= 4] if len(parts) > 1 else []


_FIRST = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|we're|we've|we'll|us|our)\b", re.IGNORECASE)
_FILLER = r"^\W*(?:(?:so|oh|and|but|also|anyway|yeah|ok|okay|btw|well|honestly|update|on a \w+ note)[,!.]*\s+)*"
_USER_SUBJECT = re.compile(_FILLER + r"(?:I|I'm|I've|I'd|I'll|we|we're|we've|we'll|me and)\b", re.IGNORECASE)
_MY_THING = re.compile(_FILLER + r"(?:my|our)\s+(\w+)", re.IGNORECASE)
_THIRD = re.compile(_FILLER + r"(?:(?i:his|her|their|he|she|they|he's|she's|they're|it|it's)\b|(?!I\b)[A-Z][a-z]+\b)",
                    re.IGNORECASE)


def speaks_of_user(sentence: str) -> bool:
    """Is the user the subject ("I ...", "we ...", "my knee ...")? ``my dad got diagnosed`` is
    the dad's fact; an imperative ("don't call me ...") is the user speaking about themself."""
    if _USER_SUBJECT.search(sentence):
        return True
    mine = _MY_THING.search(sentence)
    if mine:
        return mine.group(1).lower() in _OWN_THINGS
    if re.match(_FILLER + r"(?:his|her|their|he|she|they|he's|she's|they're|it|it's)\b", sentence, re.IGNORECASE) \
            or re.match(r"^\W*(?!I\b)[A-Z][a-z]+\b(?! me\b)", sentence) and not re.match(
                r"^\W*(?:Please|Don't|Never|Stop|Just|Also|So|Oh|And|But|Honestly|Yeah|Anyway|Btw|Ok|Okay|Well|"
                r"Can|Could|Would|Do|Let's)\b", sentence):
        return False
    return bool(_FIRST.search(sentence))


def first_person_anywhere(sentence: str) -> bool:
    return bool(_FIRST.search(sentence))


_OWN_THINGS = {"name", "pronouns", "job", "work", "home", "flat", "house", "diet", "allergy", "allergies",
               "knee", "back", "stomach", "health", "heart", "head", "running", "favourite", "favorite",
               "hobby", "doctor", "physio", "therapist", "birthday", "exam", "interview", "appointment",
               "shift", "new", "first", "left", "right", "life", "body", "skin", "eyes", "ears", "weight"}
"""``my knee is acting up`` and ``my favourite film is ...`` are about the user."""

_LEANS = re.compile(r"^\W*(?:(?:and|but|so|yeah|also|oh)\s+)?(?:he|she|they|it|it's|he's|she's|they're|"
                    r"his|her|their|that|this|there)\b", re.IGNORECASE)


_OBJECT = re.compile(r"\b(?:it|that|this|them|one)\b(?!')", re.IGNORECASE)


def leans_on_previous(sentence: str) -> bool:
    """Does the sentence need the one before it: it starts with a pronoun, or a short sentence
    with no name points at "it/that/this" ("remind me to sort that out by Saturday")?"""
    if _LEANS.search(sentence):
        return True
    short = len(sentence.split()) <= 10 and not re.search(r"(?<!^)\b[A-Z][a-z]+", sentence)
    return short and _OBJECT.search(sentence) is not None


def first_clause_text(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def dated(text: str, hit: DateHit | None) -> str:
    """The sentence with its date resolved once (see ``dates.with_dates``)."""
    return with_dates(text, hit)


def as_said(text: str) -> str:
    """``text`` as a sentence of its own: one capital first letter, and a full stop unless it
    already ends in one, or in "!", "?" or an emoji. Every word stays as the user typed it
    (unlike ``tidy``, which drops chat filler for the rules' short bodies)."""
    text = " ".join(text.split()).rstrip(",;:- ")
    if not text:
        return ""
    text = text[:1].upper() + text[1:]
    return text + "." if re.search(r"[\w'\")\]]$", text) else text


def write_body(sentence: str, hit: DateHit | None, context: str = "") -> str:
    """The card body for ``sentence``: third person, date resolved, ``context`` in front when
    the sentence leans on it, and otherwise the user's words as typed."""
    said = dated(sentence, hit)
    parts = [p for p in (context, said) if p]
    text = " ".join(as_said(third_person(p)) for p in parts)
    return first_clause_text(text, 400)


def message_sentences(content: str) -> list[str]:
    return sentences(normalise(content))


_SOMEONE_ELSE = re.compile(
    r"^\W*(?:(?:so|oh|and|but|also|anyway|yeah|ok|okay|btw|well|which means)[,!.]*\s+)*"
    r"(?:(?:he|she|they|he's|she's|they're|hes|shes|theyre|his|her|their)\b"
    r"|(?:my\s+|the\s+|our\s+)?\w+(?:'s)?\s+(?:says|said|thinks|reckons|told|claims|reckoned|thought)\b"
    r"|(?!I'm\b|I've\b|I'll\b|I'd\b|It's\b)[A-Z][a-z]+'s\s+(?!(?:a|an|the|my|our)\b)\w+)",
    re.IGNORECASE)
_DATE_CLAUSE = re.compile(r",\s+|;\s+|\s+(?:but|because|since|so)\s+")


def someone_else_acts(text: str, hit: DateHit | None = None) -> bool:
    """Is the subject of the clause that holds the date someone other than the user ("he's
    doing a marathon in October", "the landlord says he'll look at it next week", "Sam's mum is
    coming on the 24th"), and the user is not in it ("they moved my interview to Monday" is the
    user's)? Grammar, not the wording of any one sentence."""
    text = normalise(text)
    if hit is not None:
        parts = [p for p in _DATE_CLAUSE.split(text) if p]
        text = next((p for p in parts if hit.phrase.lower() in p.lower()), text)
    return _SOMEONE_ELSE.search(text) is not None and not _FIRST.search(text)


_NEGATED = re.compile(r"\b(?:not|never|no longer)\b|n't\b", re.IGNORECASE)
_NOT_A_NEGATION = re.compile(r"\b(?:can't|cannot|can not|couldn't) wait\b|\bdon't forget\b|\bwon't be long\b"
                             r"|\bcan't believe\b|\bnot sure\b|\bnot long\b|\bif not\b", re.IGNORECASE)


def called_off(text: str, hit: DateHit) -> bool:
    """Is the clause that holds the date negated ("the trip on the 30th isn't happening", "I'm not
    going on friday after all")? A plan said in the negative is no plan; idioms that only look
    negative ("can't wait", "don't forget") are not negations. Grammar, not a list of
    cancellation words."""
    text = normalise(text)
    parts = [p for p in _DATE_CLAUSE.split(text) if p]
    clause = next((p for p in parts if hit.phrase.lower() in p.lower()), text)
    return _NEGATED.search(clause) is not None and _NOT_A_NEGATION.search(clause) is None

_KIN = re.compile(r"^\W*(?:\w+\s+){0,3}?my\s+(?:\w+\s+)?(mum|mom|mother|dad|father|sister|brother|gran|grandma|"
                  r"grandad|grandpa|nan|aunt|uncle|cousin|son|daughter|wife|husband|partner|girlfriend|"
                  r"boyfriend|friend|best friend)\b", re.IGNORECASE)


_OPENERS = r"^\W*(?:(?:so|oh|and|but|also|anyway|yeah|ok|okay|btw|well|honestly|update|lol|omg|right|news)[,!.:]*\s+)*"
_PEOPLE = (r"mum|mom|mother|dad|father|sister|brother|gran|grandma|grandad|grandpa|nan|aunt|uncle|cousin|son|"
           r"daughter|wife|husband|partner|girlfriend|boyfriend|friend|best friend|mate|flatmate|housemate|"
           r"roommate|neighbour|neighbor|boss|colleague|niece|nephew|fianc[eé]e?|landlord|landlady|parents|folks|"
           r"kids|children|in-laws|grandparents|auntie|stepmum|stepmom|stepdad|bestie|bf|gf|hubby|missus|ex")
_OTHERS_SUBJECT = re.compile(
    _OPENERS + r"(?:(?:my|our)\s+(?:\w+\s+)?\w+'s\b"  # my mate's ..., my best friend's ...
    r"|(?:my|our)\s+(?:\w+\s+)?(?:" + _PEOPLE + r")\b(?!')"  # my sister just moved ...
    r"|(?:he|she|they|he's|she's|they're|hes|shes|theyre)\b"
    r"|(?-i:(?!I'|I\b)[A-Z][a-z]+)'s\s)", re.IGNORECASE)  # Florentyna's packed in ...


def told_of_someone_else(sentence: str) -> bool:
    """Is the sentence told of someone else: after chat's openers ("oh and", "update:") its
    subject is one of the user's people or their things ("my mate's relocating ...", "my sister
    just moved ..."), he / she / they, or a name with 's ("Florentyna's packed in ..."; a bare
    capital at the start is only the start of a sentence)? A sentence with no subject ("moved to
    leeds last week") is the user's: chat drops the "I"."""
    return _OTHERS_SUBJECT.search(sentence) is not None and not _USER_SUBJECT.search(sentence)


_SAID_OF_ME = re.compile(r"\bmy\s+(?:(?:real|full|first|last|new|actual)\s+)?(?:name|pronouns?)\b"
                        r"|\b(?:call|calling|use|using|refer to)\b[^.!?]{0,40}\bme\b|\b(?:for|by|with|to)\s+me\b"
                        r"|\bi'm\b|\bi\s+(?:use|prefer|am|now\s+use|go\s+by)\b",
                        re.IGNORECASE)
_PRONOUN_SET = re.compile(r"\b(?:he|she|they|xe|ze|it)\s*/\s*(?:him|her|them|they|she|he|xem|zir|hir|it|any)\b",
                          re.IGNORECASE)


_OPENS_ON_SET = re.compile(_FILLER + r"(?:just\s+|it'?s\s+)?" + _PRONOUN_SET.pattern, re.IGNORECASE)
_SET_FOR_SOMEONE = re.compile(_PRONOUN_SET.pattern + r"[^.!?]{0,20}?\b(?:for|of)\s+(?:my|his|her|their|him|them|our|"
                              r"(?:the|a|an)(?!\s+record\b))\b", re.IGNORECASE)
_NAME_SAID = re.compile(r"\bmy\s+name(?:'s|\s+is)\s+(?P<a>[A-Za-z][\w'-]*)|\b(?P<b>[A-Za-z][\w'-]*)(?:'s|\s+is)\s+my\s+name\b"
                        r"|\bcall\s+me\s+(?P<c>[A-Za-z][\w'-]*)", re.IGNORECASE)
_NOT_A_NAME = frozenset({"when", "later", "back", "tomorrow", "tonight", "if", "after", "before", "at", "on", "in",
                         "now", "anytime", "maybe", "please", "pls", "asap", "whenever", "sometime", "again", "up",
                         "out", "crazy", "old", "old-fashioned", "a", "an", "the", "what", "that", "this", "it",
                         "not", "just", "only", "once", "soon", "first", "tmrw", "tho", "though", "lol", "x"})


def states_identity(sentence: str) -> bool:
    """Does the sentence state the user's own pronouns or name ("also, they/them pls", "Kenelm's my
    name", "call me jo")? The card decision scored such chat-register statements under its
    threshold (0.68 and 0.35 on profile blind14, stop 37) while "I use they/them pronouns" is 0.99."""
    if sentence.rstrip().endswith("?") or not says_who_the_user_is(sentence):
        return False  # "should i go by they/them?" asks, it does not state
    if _PRONOUN_SET.search(sentence):
        return True
    said = _NAME_SAID.search(sentence)
    word = next((w for w in (said.group("a"), said.group("b"), said.group("c")) if w), "") if said else ""
    return bool(word) and word.lower() not in _NOT_A_NAME


def says_who_the_user_is(sentence: str) -> bool:
    """Does the sentence say the user's name or pronouns of the user: it opens on the user ("I …",
    "we …", after chat's openers), or says "my name", "my pronouns", "call me …", "use … for me",
    "… for me", "i go by …"? "one of the class asked us to use they for them" speaks of the
    user ("us") but says someone else's pronouns (stop 37). A bare pronoun set in a few
    words ("she/her please") is the user's; "the new guy in class uses he/they" is not."""
    if _USER_SUBJECT.search(sentence) is not None or _SAID_OF_ME.search(sentence) is not None:
        return True
    # a bare pronoun set in a few words ("she/her please", "he/him btw"), or one the sentence opens
    # on ("also, they/them pls, for the record"): chat drops the "I"; not "he/him for my nephew"
    if _PRONOUN_SET.search(sentence) is None or names_kin(sentence) or _SET_FOR_SOMEONE.search(sentence):
        return False
    rest = _PRONOUN_SET.sub("", sentence)
    return _OPENS_ON_SET.match(sentence) is not None or len(rest.split()) <= 2 and not re.search(
        r"\b(?:for|my|his|her|their)\b", rest, re.IGNORECASE)


def names_kin(sentence: str) -> bool:
    """Does the sentence open on one of the user's people ("my dad got diagnosed ...", "so my
    flatmate ...")? Then what it states is theirs."""
    return _KIN.search(sentence) is not None


def users_own(sentence: str) -> bool:
    """Does the sentence state something about the user? The user is its subject
    (``speaks_of_user``), or it speaks in the first person ("Fleetwood Mac is my favourite
    band") without opening on someone else ("my uncle got diagnosed ...", "he says ...")."""
    if speaks_of_user(sentence):
        return True
    return first_person_anywhere(sentence) and not names_kin(sentence) and not someone_else_acts(sentence) \
        and not re.match(r"^\W*(?:his|her|their|he|she|they|he's|she's|they're)\b", sentence, re.IGNORECASE)
