"""The user's sentence in the third person, by English grammar rather than by a verb list.

A card body is the user's own words made to stand alone, so "i know what city i live in"
must read "the user knows what city they live in" (README, "How card bodies are written"):

- the first mention of the user is "the user" / "the user's"; every later one in the same
  text is they / them / their / theirs; "myself" is "themself";
- the verb after the subject agrees: after "the user" a present-tense verb takes the third
  person singular (s / es / ies, and the irregular is / has / does), after "they" it stays
  plural; past tenses and modals stay as they are. What follows the subject is its verb,
  perhaps behind adverbs ("the user literally never sleeps"), and a verb joined to it by
  "and" / "or" / "but" agrees too ("wakes up and goes to work") when what follows that verb
  reads as its object or particle;
- first-person contractions expand (i'm, i've, i'll, i'd: "would" or "had" by what follows);
- every other word stays as typed: typos, slang, emoji, "u", "we", "our".

The word lists here are closed classes of English (auxiliaries, modals, irregular pasts,
adverbs of degree and frequency, determiners), not phrases of any data set. ``first_person``
reads a body back the other way, so the sentence rules can classify an existing card.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")

MODALS = _words(
    "can could will would shall should may might must ought can't cant cannot couldn't couldnt won't wont "
    "wouldn't wouldnt shouldn't shouldnt mightn't mustn't mustnt needn't shan't gonna wanna gotta better "
    "did didn't didnt was wasn't wasnt were weren't werent had hadn't hadnt ain't aint used")
"""Forms that never change with the subject (modals, past auxiliaries, chat futures)."""

_IRREGULAR = {"am": "is", "have": "has", "haven't": "hasn't", "havent": "hasnt", "do": "does",
              "don't": "doesn't", "dont": "doesnt", "be": "be", "are": "is", "aren't": "isn't", "arent": "isnt"}
_PLURAL = {"am": "are", "was": "were", "wasn't": "weren't", "wasnt": "werent"}

PAST = _words("""
arose awoke was were bore became began bent bit bled blew broke bred brought built burnt burned
bought caught chose clung came crept dealt dug dove drew dreamt drank drove ate fell fed felt fought
found fled flung flew forbade forgot forgave froze got gave went ground grew hung heard hid held kept
knelt knew laid led leant leapt learnt left lent lay lit lost made meant met paid pled proved rode
rang rose ran said saw sought sold sent shook shone shot showed shrank sang sank sat slew slept slid
slung smelt sped spelt spent spilt spun spat spoilt sprang stood stole stuck stung stank strode
struck strove swore swept swam swung took taught tore told thought threw understood woke wore wove
wept won wound wrote withdrew overslept overcame undertook undid redid mistook misunderstood spoke bound
""")
"""Irregular past tenses of English (the regular ones end in -ed)."""

PARTICIPLES = _words("""
been done gone seen eaten given taken written driven ridden spoken broken chosen forgotten gotten
known grown thrown drawn flown shown fallen forgiven frozen hidden beaten bitten risen stolen sworn
torn worn woken shaken mistaken begun drunk rung sung sunk swum
""") | PAST
"""Past participles ("i'd never seen" is "had"): the irregular ones, and every irregular past."""

SAME_FORM = _words("cut put hit let set shut quit hurt cost read bet burst cast spread split fit rid bid "
                      "upset wet beat")
"""Verbs whose past is their base form: present only with a sign of habit ("always", "every")."""

_ING_VERBS = _words("bring sing ring sting swing cling fling sling spring string wring ping zing")
"""Base forms in -ing (every other word in -ing after a subject is a participle)."""
_ED_PRESENT = _words("shed wed embed shred bed")
"""Base forms in -ed (those in -eed, "need", "feed", are never read as pasts)."""

ADVERBS = _words("""
also just really still already always never often sometimes usually rarely seldom ever even only
actually literally basically honestly seriously genuinely totally kinda sorta lowkey highkey lowk
def defo deffo prob probs legit deadass low-key high-key rly rlly srsly totes tots barely hardly almost nearly mostly
mainly normally generally constantly finally simply truly now then once too either somehow proper
absolutely definitely probably certainly apparently obviously clearly occasionally
""")
"""Adverbs that stand between a subject and its verb; any other word in -ly is one too."""

_TWO_WORD_ADVERBS = frozenset({("kind", "of"), ("sort", "of"), ("no", "longer"), ("low", "key"),
                               ("high", "key"), ("pretty", "much"), ("at", "least")})
_LY_VERBS = _words("fly reply apply rely supply comply imply multiply bully rally tally ally belly")
_HABIT = _words("always never usually often sometimes rarely seldom normally generally constantly still "
                   "every each daily weekly nightly nowadays")

CATENATIVE = _words("want need have like love hate try plan hope prefer start begin decide learn forget "
                       "remember mean refuse intend tend get")
"""Verbs that take a to-infinitive: "wants to cook and clean" keeps "clean" bare."""

_COORDINATORS = frozenset({"and", "or", "but", "then", "&", "n"})
_OBJECT_CUES = _words("""
the a an my your his her their our its this that these those some any every all it them him me us you
up out off back down away over around home to
""")
"""What may follow a verb joined by "and": a determiner, an object pronoun, a particle."""
_PREPOSITIONS = _words("for at in on with into from by about through across near")
_PARTICLES = _words("up out off back down away over around in on home early late")
_CLAUSE_BREAK = _words("that because cos bc since when while if so though although unless until till "
                          "before after where which who whenever")
_SUBJECTS = _words("i i'm im i've ive i'll i'd he she it they we you he's she's it's they're we're "
                      "there this that")
_NOT_VERBS = _words("""
a an the my your his her their our its this that these those and or but so to of in on at for with
from by as not no i me we you he she it they him them us
""")


@dataclass
class _Text:
    """The sentence as alternating gaps and words, rewritten in place."""

    gaps: list[str]
    words: list[str]

    @classmethod
    def of(cls, text: str) -> _Text:
        gaps, words, last = [], [], 0
        for match in _WORD.finditer(text):
            gaps.append(text[last:match.start()])
            words.append(match.group(0))
            last = match.end()
        gaps.append(text[last:])
        return cls(gaps, words)

    def __str__(self) -> str:
        return "".join(g + w for g, w in zip(self.gaps, self.words, strict=False)) + self.gaps[-1]

    def low(self, i: int) -> str:
        return self.words[i].lower().replace("’", "'") if 0 <= i < len(self.words) else ""

    def joined(self, i: int) -> bool:
        """Is word ``i`` joined to word ``i - 1`` by spaces only (no comma, no full stop)?"""
        return 0 < i < len(self.words) and not self.gaps[i].strip()


def _case_like(word: str, new: str) -> str:
    if len(word) > 1 and word.isupper():
        return new.upper()
    return new[:1].upper() + new[1:] if word[:1].isupper() else new


def third_singular(verb: str) -> str:
    """``verb`` (a present-tense base form) in the third person singular: s / es / ies."""
    low = verb.lower().replace("’", "'")
    if low in _IRREGULAR:
        new = _IRREGULAR[low].replace("'", "’") if "’" in verb else _IRREGULAR[low]
    elif re.search(r"(?:s|sh|ch|x|z|o)$", low):
        new = low + "es"
    elif re.search(r"[^aeiou]y$", low):
        new = low[:-1] + "ies"
    else:
        new = low + "s"
    return _case_like(verb, new)


def is_past(word: str) -> bool:
    """Is ``word`` a past tense (irregular, or regular in -ed)?"""
    low = word.lower()
    if low in PAST:
        return True
    return low.endswith("ed") and len(low) > 3 and low not in _ED_PRESENT and not low.endswith("eed")


def _adverb_at(text: _Text, i: int) -> int:
    """How many words from ``i`` are an adverb (0, 1 or 2)."""
    low = text.low(i)
    if not low or not text.joined(i):
        return 0
    if (low, text.low(i + 1)) in _TWO_WORD_ADVERBS and text.joined(i + 1):
        return 2
    if low in ADVERBS or (low.endswith("ly") and len(low) > 3 and low not in _LY_VERBS):
        return 1
    return 0


def _verb_after(text: _Text, i: int) -> tuple[int, bool]:
    """The index of the verb after the subject at word ``i`` (past its adverbs; -1 when a
    comma or the end comes first), and whether an adverb of habit stood before it."""
    j, habit = i + 1, False
    while (step := _adverb_at(text, j)) > 0:
        habit = habit or text.low(j) in _HABIT
        j += step
    return (j if text.joined(j) else -1), habit


def _habitual(text: _Text, j: int) -> bool:
    return any(text.low(k) in _HABIT for k in range(j + 1, len(text.words)))


def _agree(text: _Text, i: int, singular: bool) -> None:
    """Make the verb after the subject at word ``i`` agree with "the user" (``singular``) or
    "they"; then the verbs joined to it by "and"."""
    j, habit = _verb_after(text, i)
    if j < 0:
        return
    low = text.low(j)
    if not singular:
        if low in _PLURAL:
            text.words[j] = _case_like(text.words[j], _PLURAL[low])
        return
    if low in MODALS or low in _NOT_VERBS or low in _SUBJECTS or is_past(low) or low in PARTICIPLES \
            or (low.endswith("ing") and low not in _ING_VERBS):
        return
    if low in SAME_FORM and not (habit or _habitual(text, j)):
        return
    if not re.fullmatch(r"[a-z]{2,}|[a-z]+n't|[a-z]+nt", low) or re.search(r"[^su]s$", low):
        return  # "has", "does", "goes": already agrees (but "miss", "focus" take -es)
    text.words[j] = third_singular(text.words[j])
    if low not in _IRREGULAR:
        _agree_joined(text, j)


def _agree_joined(text: _Text, j: int) -> None:
    """A second verb of the same subject: "cooks and cleans", "wakes up and goes to work".
    Straight after the verb (or its particle) the word after "and" is a verb; after an object
    it is one only when a determiner, pronoun or particle follows it ("makes tea and reads
    the news", but "likes cats and dogs"), or a preposition when the first verb's phrase
    ended in one too ("wakes up at 6 and goes for a run", but "drinks tea and coffee with")."""
    if text.low(j) in CATENATIVE and text.low(j + 1) == "to":
        return
    k, direct, phrase = j + 1, True, False
    while k < len(text.words):
        low = text.low(k)
        if not text.joined(k) or low in _CLAUSE_BREAK or low in _SUBJECTS:
            return
        if low in _COORDINATORS:
            m = k + 1
            while (step := _adverb_at(text, m)) > 0:
                m += step
            after = text.low(m + 1) if text.joined(m + 1) else ""
            cues = _OBJECT_CUES | _PREPOSITIONS if phrase else _OBJECT_CUES
            if _bare_verb(text, m) and (direct or after in cues):
                text.words[m] = third_singular(text.words[m])
            return
        direct = direct and (low in _PARTICLES or _adverb_at(text, k) > 0)
        phrase = phrase or low in _PARTICLES or low in _PREPOSITIONS
        k += 1


def _bare_verb(text: _Text, m: int) -> bool:
    """Could word ``m`` be a verb's base form (not a function word, past, -ing, plural, name)?"""
    verb = text.low(m)
    return text.joined(m) and re.fullmatch(r"[a-z]+", verb) is not None and verb not in _NOT_VERBS \
        and verb not in MODALS and verb not in _OBJECT_CUES and not is_past(verb) and verb not in PARTICIPLES \
        and not (verb.endswith("ing") and verb not in _ING_VERBS) and not (verb.endswith("s") and not verb.endswith("ss")) \
        and not text.words[m][:1].isupper()


def _compound_subject(text: _Text, i: int) -> bool:
    """Is the "I" at word ``i`` the end of "Sam and I" / "my sister and I" (a plural subject):
    one to three words from the clause's start, none a verb, adverb or discourse word ("ok and
    I ...")?"""
    if text.low(i - 1) not in ("and", "&") or not text.joined(i - 1):
        return False
    start = i - 2
    while start > 0 and text.joined(start):
        start -= 1
    return 1 <= i - 1 - start <= 3 and not any(_verbal(text, k) for k in range(start, i - 1))


def _verbal(text: _Text, k: int) -> bool:
    """Is word ``k`` no part of a noun phrase: a verb, an adverb, a discourse word, "she's"?"""
    low = text.low(k)
    head, _, tail = low.partition("'")
    return low in _DISCOURSE or low in MODALS or low in _IRREGULAR or is_past(low) or _adverb_at(text, k) > 0 \
        or (tail in ("s", "re", "m", "ve", "ll", "d") and head in _SUBJECTS)


_DISCOURSE = _words("ok okay yeah yes no nah so well oh lol haha anyway and but or then now is are")
_INVERTED = {"am": ("is", "are"), "do": ("does", "do"), "have": ("has", "have"), "don't": ("doesn't", "don't"),
             "dont": ("doesnt", "dont"), "haven't": ("hasn't", "haven't")}


_EXCLAIM = _words("god gosh goodness lord days word")
"""Nouns after which "my" is an exclamation ("oh my god"), not the user's."""
_DETERMINERS = _words("the a an this that")


def _noun_mine(text: _Text, i: int) -> bool:
    """Is "mine" at word ``i`` the noun ("the uranium mine"), not "the user's"?"""
    return any(text.low(k) in _DETERMINERS and all(text.joined(n) for n in range(k + 1, i + 1))
               for k in (i - 1, i - 2))


def third_person(text: str) -> str:
    """Rewrite a first-person sentence about the user into the third person (module docstring)."""
    t = _Text.of(text)
    mentioned = False
    i = 0
    while i < len(t.words):
        low = t.low(i)
        first = not mentioned
        if low in ("user", "user's") and t.low(i - 1) == "the":
            mentioned = True
        elif low == "i" and not (t.gaps[i + 1] == "." and t.low(i + 1) == "e"):
            mentioned = True
            t.words[i] = "the user" if first else "they"
            if t.low(i - 1) in _INVERTED and t.joined(i):
                t.words[i - 1] = _case_like(t.words[i - 1], _INVERTED[t.low(i - 1)][0 if first else 1])
            elif not _compound_subject(t, i):
                _agree(t, i, first)
        elif low in ("i'm", "im"):
            mentioned = True
            t.words[i] = "the user is" if first else "they are"
        elif low in ("i've", "ive"):
            mentioned = True
            t.words[i] = "the user has" if first else "they have"
        elif low == "i'll":
            mentioned = True
            t.words[i] = "the user will" if first else "they will"
        elif low == "i'd":
            mentioned = True
            j, _ = _verb_after(t, i)
            had = j >= 0 and (t.low(j) in PARTICIPLES or t.low(j) == "better" or is_past(t.low(j)))
            t.words[i] = ("the user " if first else "they ") + ("had" if had else "would")
        elif low == "me":
            mentioned = True
            t.words[i] = "the user" if first else "them"
        elif low == "my" and not (t.low(i + 1) in _EXCLAIM and t.joined(i + 1)):
            mentioned = True
            t.words[i] = "the user's" if first else "their"
        elif low == "mine" and not _noun_mine(t, i):
            mentioned = True
            t.words[i] = "the user's" if first else "theirs"
        elif low == "myself":
            mentioned = True
            t.words[i] = "themself"
        i += 1
    return str(t)


_BASE = {"is": "am", "has": "have", "hasn't": "haven't", "hasnt": "havent", "does": "do", "doesn't": "don't",
         "doesnt": "dont", "isn't": "am not", "isnt": "am not", "was": "was"}


def base_form(verb: str) -> str:
    """The first-person form of a third-person singular verb ("watches" → "watch")."""
    low = verb.lower()
    if low in _BASE:
        return _BASE[low]
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if re.search(r"(?:ss|sh|ch|x|z|o)es$", low):
        return verb[:-2]
    if low.endswith("s") and not low.endswith("ss") and len(low) > 2:
        return verb[:-1]
    return verb


def first_person(body: str, user_name: str | None = None) -> str:
    """Read a card body back in the first person, so the sentence rules can classify it.

    Cards written by hand or by a model often name the user ("Alex works at ..."): with
    ``user_name`` those read as "I" too. "their" and "themself" are the user's (the card
    rewrite writes them); "they" and "them" stay, since a user types them of other people.
    """
    if user_name:
        body = re.sub(rf"\b{re.escape(user_name)}'s\b", "the user's", body)
        body = re.sub(rf"\b{re.escape(user_name)}\b", "the user", body)
    body = re.sub(r"\btheir\b", "my", body, flags=re.IGNORECASE)
    body = re.sub(r"\bthemself\b", "myself", body, flags=re.IGNORECASE)
    body = re.sub(r"\btheirs\b", "mine", body, flags=re.IGNORECASE)
    body = re.sub(r"\bthe user's\b", "my", body, flags=re.IGNORECASE)
    t = _Text.of(body)
    for i in range(len(t.words) - 1):
        if t.low(i) != "the" or t.low(i + 1) != "user" or not t.joined(i + 1):
            continue
        j, _ = _verb_after(t, i + 1)
        verb = t.low(j) if j >= 0 else ""
        subject = i == 0 or not t.joined(i) or verb in _BASE or verb in MODALS or is_past(verb) \
            or (verb.endswith("s") and verb not in _NOT_VERBS)
        t.words[i], t.gaps[i + 1], t.words[i + 1] = "", "", "I" if subject else "me"
        if subject and j >= 0:
            t.words[j] = base_form(t.words[j])
    return str(t)
