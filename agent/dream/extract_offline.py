"""The offline dream extractor: deterministic rules, no model.

Used when no LLM is configured, by the demo and by tests. It is honest about being weaker
than a model: it only recognises the patterns below, in English. What it does recognise,
it handles the way the model is told to (see templates/dream_prompt.md):

- only what the *user* said becomes a card (plus promises the assistant made to the user);
  hypotheticals ("if I had a cat..."), questions and small talk ("I had pasta") never do;
- each card is written in the third person so it makes sense alone weeks later;
- plans carry absolute dates computed from the message timestamp, and unfinished plans
  become cards (they are what a summary rewrite silently drops);
- a new value for a single-valued "slot" (job, home, partner, birthday, a plan's date)
  supersedes the active card holding the old one, instead of competing with it;
- an existing card is recognised by running the same sentence rules over its body read
  back in the first person, so cards written by a model or by hand match too.

Precision matters as much as recall: every extra card is a distractor at retrieval time.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from agent.dream.ops import (
    CloseOp,
    ExpireOp,
    Extraction,
    MergeOp,
    MessageLike,
    Op,
    SupersedeOp,
    WriteOp,
    op_targets,
)
from memfs.cards import Card

SUMMARY_MAX_CHARS = 1200
SINGLE_VALUED = {"name", "job", "home", "partner", "birthday", "diet", "sober", "children"}

# -- lexicons ------------------------------------------------------------------------------

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december"]
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "seven": 7, "eight": 8, "nine": 9, "ten": 10}
SPECIES = ("dog|puppy|cat|kitten|corgi|beagle|labrador|lab|poodle|retriever|terrier|husky|pug|"
           "dachshund|collie|shepherd|spaniel|parrot|bird|rabbit|bunny|hamster|guinea pig|turtle|"
           "tortoise|snake|lizard|gecko|horse|ferret|goldfish|fish")
JOBS = ("nurse|teacher|engineer|developer|programmer|designer|accountant|lawyer|doctor|chef|cook|"
        "barista|student|writer|artist|musician|manager|consultant|analyst|scientist|researcher|"
        "pharmacist|therapist|electrician|plumber|mechanic|firefighter|paramedic|cashier|waiter|"
        "waitress|bartender|librarian|architect|photographer|journalist|editor|dentist|vet|"
        "veterinarian|professor|tutor|freelancer|intern|receptionist|farmer|pilot|nanny|recruiter|"
        "social worker|police officer|carer|caregiver|midwife|surgeon|paralegal|clerk|baker")
PARTNER_RELS = ("wife|husband|partner|girlfriend|boyfriend|fiancée|fiancee|fiancé|fiance|spouse")
FAMILY_RELS = ("best friend|friend|buddy|bestie|roommate|sister|brother|mom|mum|mother|dad|father|son|daughter|grandma|grandmother|"
               "grandpa|grandfather|aunt|uncle|cousin|niece|nephew|mother-in-law|father-in-law|"
               "sister-in-law|brother-in-law|stepmom|stepdad|stepmother|stepfather|twin")
CONDITIONS = ("type 1 diabetes|type 2 diabetes|diabetes|asthma|adhd|autism|depression|anxiety|"
              "migraines|epilepsy|cancer|celiac disease|celiac|crohn's|ibs|arthritis|insomnia|ptsd|"
              "ocd|bipolar disorder|bipolar|high blood pressure|a heart condition|long covid|"
              "endometriosis|pcos|chronic pain|fibromyalgia|lupus|multiple sclerosis|dyslexia")
DIETS = "vegetarian|vegan|pescatarian|lactose intolerant|gluten-free|gluten free|halal|kosher"
PLAN_WORDS = {
    "appointment", "interview", "meeting", "exam", "exams", "test", "trip", "flight", "visit",
    "visiting", "wedding", "party", "concert", "surgery", "operation", "doctor", "dentist",
    "therapist", "therapy", "nutritionist", "vet", "checkup", "check-up", "canal", "deadline",
    "due", "presentation", "funeral", "ceremony", "graduation", "exhibit", "exhibition",
    "tickets", "booked", "conference", "race", "marathon", "recital", "audition", "moving",
    "ashes", "memorial", "reunion", "holiday", "vacation", "finish", "submit", "renew",
    "passport", "visa", "court", "hearing", "semester", "masters", "master's", "degree",
    "scheduled", "promised", "date", "driving", "flying", "fly",
}
EMOTIONS = re.compile(
    r"\b(heartbroken|devastated|terrified|scared|petrified|ecstatic|over the moon|thrilled|"
    r"so excited|so proud|proud of|humiliated|embarrassed|ashamed|furious|cried|crying|in tears|"
    r"panic attack|grief|grieving|lonely|depressed|hopeless|i feel empty|overwhelmed|"
    r"burned out|burnt out|so happy|hardest thing|means a lot|miss (?:him|her|them) so much)\b",
    re.IGNORECASE)
FILLER_TAIL = re.compile(
    r"(?:\s+(?:remember|btw|too|though|lol|haha|honestly|now|anymore|actually|either|also|"
    r"lately|these days|obviously|really|anyway|ever))+\s*$", re.IGNORECASE)
STOPWORDS = frozenset("""
a an the and or but so to of in on at for with from by about as is are was were be been am i me my
we our you your he she it they them his her its their this that these those it's i'm i've i'll i'd
just really got get going go gonna will would can could should have has had do does did not no yes
oh ugh also btw lol haha still now then there here what when where which who how all any some more
most very too up out over into than user user's assistant week weekend day today tomorrow tonight
next last morning evening night pm
""".split())  # noqa: SIM905
SYNONYMS = {"grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather",
            "mom": "mother", "mum": "mother", "dad": "father", "exams": "exam", "tickets": "ticket"}
PAST = re.compile(r"\b(was|were|did|went|broke|hurt|passed|yesterday|last night|last week|ago|"
                  r"used to|got back|came back)\b", re.IGNORECASE)
HYPOTHETICAL = re.compile(r"\b(if i (?:had|were|was|could|did|won|lived|didn't|got)|i'd|i would|would you|"
                          r"imagine|what if|hypothetically|pretend|in a story|someday|one day)\b", re.IGNORECASE)
NAME = r"(?-i:[A-Z][a-zA-Z'-]+)"
NAMES = NAME + r"(?: (?-i:(?:&|[A-Z][a-zA-Z'-]+)))*"
NOT_NAMES = {"I", "I'm", "I've", "I'll", "I'd", "Oh", "Ok", "Okay", "Yes", "No", "Yeah", "Hey",
             "Hi", "Ugh", "Also", "And", "But", "So", "The", "A", "An", "My", "We", "It", "Thanks",
             "Sure", "Guess", "Maybe", "Actually", "Anyway", "Big", "Nah", "Lol", "Omg", "Well",
             "Sadly", "Random", "Just"}


# -- small data ----------------------------------------------------------------------------


@dataclass
class Candidate:
    """One thing a user sentence said, before it is checked against existing cards."""

    slot: tuple[str, str]
    type: str
    body: str
    msg: MessageLike
    entities: tuple[str, ...] = ("user",)
    salience: float = 0.6
    valid_from: dt.date | None = None
    expires: dt.date | None = None
    value: str = ""
    """What the slot holds (a city, a role, like/dislike): same slot + other value = update."""
    ends: bool = False
    target: str | None = None
    """An existing card this candidate replaces, when a rule found it directly."""
    words: frozenset[str] = frozenset()
    turns: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.turns.add(self.msg.turn)


@dataclass(frozen=True)
class DateHit:
    start: dt.date
    end: dt.date
    phrase: str
    past: bool


@dataclass
class Context:
    """What rules may look at besides the sentence: the message and the cards."""

    msg: MessageLike
    active: Sequence[Card]
    recent_people: list[str]
    prior_text: str = ""


# -- text helpers ------------------------------------------------------------------------------


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


def first_person(body: str) -> str:
    """Read a card body back in the first person, so the sentence rules can classify it."""
    rules = [(r"\bthe user's\b", "my"), (r"\btheir\b", "my"), (r"\bthe user is\b", "I am"),
             (r"\bthe user has\b", "I have"), (r"\bthe user was\b", "I was"),
             (r"\bthe user does\b", "I do"), (r"\bthe user (\w+?)s\b", r"I \1"),
             (r"\bthe user\b", "I")]
    for pattern, repl in rules:
        body = re.sub(pattern, repl, body, flags=re.IGNORECASE)
    return body


def tidy(text: str) -> str:
    """Strip chat filler from a clause and make it a sentence."""
    text = re.sub(r"^(?:(?:so|also|oh|and|ugh|btw|yeah|well|anyway|ok|okay|big news|sadly),?\s+)+",
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
        if head in NOT_NAMES or head.lower() in WEEKDAYS or head.lower() in MONTHS:
            continue
        found.append(word)
    return found


def norm_key(text: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9'-]+", text.lower()) if w not in ("the", "a", "an", "my")]
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


def iso_label(hit: DateHit) -> str:
    if hit.start == hit.end:
        return f"{calendar.day_name[hit.start.weekday()]} {hit.start.isoformat()}"
    return f"{hit.start.isoformat()} to {hit.end.isoformat()}"


def with_dates(text: str, hit: DateHit | None) -> str:
    """Keep the user's words but pin the relative date: "tomorrow (Thursday 2026-11-05)"."""
    if hit is None or hit.phrase not in text:
        return text
    return text.replace(hit.phrase, f"{hit.phrase} ({iso_label(hit)})", 1)


# -- dates ---------------------------------------------------------------------------------

_WD = "|".join(WEEKDAYS)
_MON = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
       r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
DATE_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")),
    ("dayafter", re.compile(r"\bthe day after tomorrow\b", re.IGNORECASE)),
    ("rel", re.compile(r"\b(tomorrow|tonight|today|this (?:morning|afternoon|evening)|yesterday|"
                       r"last night)\b", re.IGNORECASE)),
    ("wd_nth", re.compile(rf"\b(?:on )?(?:{_WD}),? the (\d{{1,2}})(?:st|nd|rd|th)\b", re.IGNORECASE)),
    ("month_day", re.compile(rf"\b({_MON})\.? (\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)", re.IGNORECASE)),
    ("day_month", re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MON})\b", re.IGNORECASE)),
    ("nth", re.compile(r"\b(?:on |by |for |until )?the (\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)),
    ("weekday", re.compile(rf"\b(?:(this|next|last|on) )?({_WD})\b", re.IGNORECASE)),
    ("span", re.compile(r"\b(this|next|last) (week|weekend|month|year)\b", re.IGNORECASE)),
    ("in_n", re.compile(r"\bin (a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+) "
                        r"(day|week|month)s?\b", re.IGNORECASE)),
    ("month", re.compile(rf"\b(?:in|by|until|this|next) ({_MON})\b(?! \d)",
                         re.IGNORECASE)),
]


def find_date(text: str, today: dt.date) -> DateHit | None:
    """The first date expression in ``text``, resolved against ``today`` (the message date)."""
    best: tuple[int, DateHit] | None = None
    for kind, pattern in DATE_PATTERNS:
        for match in pattern.finditer(text):
            hit = _resolve(kind, match, today)
            if hit is not None and (best is None or match.start() < best[0]):
                best = (match.start(), hit)
            if hit is not None:
                break
    return best[1] if best else None


def _month_index(word: str) -> int:
    word = word.lower()[:3]
    return [m[:3] for m in MONTHS].index(word) + 1


def _future_day(today: dt.date, month: int, day: int) -> dt.date | None:
    for year in (today.year, today.year + 1):
        try:
            candidate = dt.date(year, month, day)
        except ValueError:
            return None
        if candidate >= today:
            return candidate
    return None


def _resolve(kind: str, m: re.Match[str], today: dt.date) -> DateHit | None:
    phrase = m.group(0)
    if kind == "iso":
        try:
            day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
        return DateHit(day, day, phrase, day < today)
    if kind == "dayafter":
        day = today + dt.timedelta(days=2)
        return DateHit(day, day, phrase, False)
    if kind == "rel":
        return _relative_word(m.group(1).lower(), phrase, today)
    if kind in ("wd_nth", "nth"):
        return _nth_of_month(int(m.group(1)), phrase, today)
    if kind in ("month_day", "day_month"):
        month_word, day_text = (m.group(1), m.group(2)) if kind == "month_day" else (m.group(2), m.group(1))
        found = _future_day(today, _month_index(month_word), int(day_text))
        return DateHit(found, found, phrase, False) if found else None
    if kind == "weekday":
        return _weekday(m.group(1), m.group(2), phrase, today)
    if kind == "span":
        return _span(m.group(1).lower(), m.group(2).lower(), phrase, today)
    if kind == "in_n":
        return _in_n(m.group(1).lower(), m.group(2).lower(), phrase, today)
    return _month_only(m.group(1), phrase, today)


def _relative_word(word: str, phrase: str, today: dt.date) -> DateHit:
    if word in ("yesterday", "last night"):
        day = today - dt.timedelta(days=1)
        return DateHit(day, day, phrase, True)
    day = today + dt.timedelta(days=1) if word == "tomorrow" else today
    return DateHit(day, day, phrase, False)


def _nth_of_month(n: int, phrase: str, today: dt.date) -> DateHit | None:
    month, year = today.month, today.year
    if n < today.day:
        month, year = (1, year + 1) if month == 12 else (month + 1, year)
    try:
        day = dt.date(year, month, n)
    except ValueError:
        return None
    return DateHit(day, day, phrase, False)


def _weekday(which: str | None, name: str, phrase: str, today: dt.date) -> DateHit:
    target = WEEKDAYS.index(name.lower())
    which = (which or "").lower()
    if which == "last":
        back = (today.weekday() - target) % 7 or 7
        day = today - dt.timedelta(days=back)
        return DateHit(day, day, phrase, True)
    if which == "next":
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
        day = monday + dt.timedelta(days=target)
        return DateHit(day, day, phrase, False)
    ahead = (target - today.weekday()) % 7 or 7
    day = today + dt.timedelta(days=ahead)
    return DateHit(day, day, phrase, False)


def _span(which: str, unit: str, phrase: str, today: dt.date) -> DateHit:
    shift = {"this": 0, "next": 1, "last": -1}[which]
    if unit in ("week", "weekend"):
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(weeks=shift)
        start = monday + dt.timedelta(days=5) if unit == "weekend" else monday
        return DateHit(max(start, today) if shift == 0 else start, monday + dt.timedelta(days=6),
                       phrase, shift < 0)
    if unit == "month":
        month = today.month + shift
        year = today.year + (month - 1) // 12
        month = (month - 1) % 12 + 1
        last = calendar.monthrange(year, month)[1]
        return DateHit(dt.date(year, month, 1), dt.date(year, month, last), phrase, shift < 0)
    year = today.year + shift
    return DateHit(dt.date(year, 1, 1), dt.date(year, 12, 31), phrase, shift < 0)


def _in_n(count: str, unit: str, phrase: str, today: dt.date) -> DateHit:
    n = NUMBERS.get(count, None) or int(count)
    days = {"day": n, "week": 7 * n, "month": 30 * n}[unit]
    day = today + dt.timedelta(days=days)
    return DateHit(day, day, phrase, False)


def _month_only(word: str, phrase: str, today: dt.date) -> DateHit | None:
    if word.lower() == "may" and not phrase.lower().startswith(("in", "by", "until", "next", "this")):
        return None
    month = _month_index(word)
    year = today.year if month >= today.month else today.year + 1
    last = calendar.monthrange(year, month)[1]
    return DateHit(dt.date(year, month, 1), dt.date(year, month, last), phrase, False)


# -- sentence rules: personal facts ------------------------------------------------------------

_END = r"(?=\s+(?:so|and|but|because|since|which|now|remember)\b|[,.!?;]|$)"
_Q = re.IGNORECASE


def _cand(ctx: Context, slot: tuple[str, str], type_: str, body: str, **kw: object) -> Candidate:
    return Candidate(slot=slot, type=type_, body=body, msg=ctx.msg, **kw)  # type: ignore[arg-type]


def _is_name(word: str | None) -> bool:
    return bool(word) and word not in NOT_NAMES and word.lower() not in WEEKDAYS  # type: ignore[union-attr]


def _a(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def rule_name(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"\b(?:my name is|my name's|call me|i go by)\s+({NAME})", s, _Q)
    negated = re.search(r"\b(?:don't|do not|never|stop|hate|dislike)\b[^.!?]*\bcall", s, _Q)
    if m and _is_name(m.group(1)) and not (negated and "call" in m.group(0).lower()):
        yield _cand(ctx, ("name", ""), "fact", f"The user's name is {m.group(1)}.",
                    value=m.group(1).lower(), salience=0.7)


def rule_pet(s: str, ctx: Context) -> Iterator[Candidate]:
    patterns = [
        rf"\bmy (?:old |little |new |sweet )?({SPECIES})(?:'s name is| is named| is called| named| called|,)? ({NAME})",
        (rf"\b(?:I|we) (?:have|had|adopted|got|just got|just adopted) (?:a|an|another) (?:\w+ )?({SPECIES})\b"
         rf"[^.!?]*?(?:named|called|(?:her|his|its) name is) ({NAME})"),
    ]
    for pattern in patterns:
        m = re.search(pattern, s, _Q)
        if m and _is_name(m.group(2)):
            species, name = m.group(1).lower(), m.group(2)
            yield _cand(ctx, ("pet", name.lower()), "fact", f"The user has {_a(species)} named {name}.",
                        entities=("user", name), value="alive", salience=0.7)
            return


def rule_death(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"(?:\bmy (?:old |little )?(?P<rel>{SPECIES}|{FAMILY_RELS}|{PARTNER_RELS}|friend),? )?"
                  rf"(?P<name>{NAME} )?(?:has )?(?:died|passed away|passed on)\b", s, _Q)
    if not m or not (m.group("rel") or _is_name((m.group("name") or "").strip())):
        return
    name = (m.group("name") or "").strip()
    hit = find_date(s, ctx.msg.ts.date())
    when = hit.start if hit and hit.past else ctx.msg.ts.date()
    rel = m.group("rel") or _relation_of(name, ctx.active)
    who = " ".join(x for x in (f"The user's {rel}" if rel else "", name) if x) or "Someone close to the user"
    slot = ("pet", name.lower()) if name and _has_slot(ctx.active, ("pet", name.lower())) else ("death", (name or rel or "someone").lower())
    yield _cand(ctx, slot, "event", f"{who} died on {when.isoformat()}.", value="died",
                entities=("user", name) if name else ("user",), salience=0.95, valid_from=when)


def rule_job(s: str, ctx: Context) -> Iterator[Candidate]:
    today = ctx.msg.ts.date()
    start = re.search(rf"\bI (?:start|'m starting|am starting|begin|'ll start|will start) (?:a new job |work )?"
                      rf"as (?:a|an) ([a-z][a-z -]*?)(?: at ({NAMES}))?(?=\s+(?:on|in|next|from|this)\b|[,.!?]|$)", s, _Q)
    plain = re.search(rf"\bI (?:work|am working|'m working) as (?:a|an) ([a-z][a-z -]*?)(?: at ([^,.!?]+?))?{_END}", s, _Q) \
        or re.search(rf"\bI(?:'m| am) (?:a|an) ((?:[a-z-]+ ){{0,2}}?(?:{JOBS}))\b(?: at ({NAMES}))?", s, _Q)
    m = start or plain
    if m is None:
        return
    role, org = m.group(1).strip(), (m.group(2) or "").strip()
    body = f"The user works as {_a(role)}" + (f" at {org}" if org else "")
    hit = find_date(s[m.end():], today) if start else None
    if hit and not hit.past:
        body += f" (starting {iso_label(hit)})"
    yield _cand(ctx, ("job", ""), "fact", body + ".", value=norm_key(role), salience=0.7,
                entities=("user", org) if org[:1].isupper() else ("user",),
                valid_from=hit.start if hit and not hit.past else None)


def rule_quit(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI (?:just |finally |officially )?(?:(?:quit|left) (?:my job|my position|work\b|the company)|"
                  r"resigned|handed in my notice|gave my notice|put in my notice|got fired|was fired|"
                  r"got laid off|was laid off|lost my job)", s, _Q)
    if m:
        body = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
        yield _cand(ctx, ("job", ""), "event", body, value="quit", ends=True, salience=0.75,
                    valid_from=ctx.msg.ts.date())


def rule_home(s: str, ctx: Context) -> Iterator[Candidate]:
    moved = re.search(rf"\bI (?:just |finally |recently )?(?:moved|relocated) to ({NAMES})", s, _Q)
    live = re.search(rf"\bI (?:live|'m living|am living|now live) in ({NAMES})", s, _Q)
    m = moved or live
    if m is None or not _is_name(m.group(1).split()[0]) or m.group(1).lower() in MONTHS:
        return
    place = m.group(1)
    body = f"The user lives in {place}"
    if moved:
        body += f" (moved there by {ctx.msg.ts.date().isoformat()})"
    yield _cand(ctx, ("home", ""), "fact", body + ".", value=place.lower(), entities=("user", place),
                salience=0.7)


def rule_birthday(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(rf"\bmy birthday(?: is|'s)(?: on)? ((?:{_MON}) \d{{1,2}}|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MON}))",
                  s, _Q)
    if m:
        day = re.sub(r"(\d)(st|nd|rd|th)", r"\1", m.group(1)).title()
        yield _cand(ctx, ("birthday", ""), "fact", f"The user's birthday is {day}.", value=day.lower(),
                    salience=0.8)


def rule_health(s: str, ctx: Context) -> Iterator[Candidate]:
    for a in re.finditer(r"\ballergic to ([a-z][a-z -]*?)" + _END + r"|\b(?:a|an|my) ([a-z]+) allergy\b", s, _Q):
        item = FILLER_TAIL.sub("", (a.group(1) or a.group(2) or "").strip())
        if item and item.lower() not in {"serious", "severe", "bad", "mild", "terrible", "real", "huge", "food"}:
            yield _cand(ctx, ("allergy", norm_key(item)), "fact", f"The user is allergic to {item}.",
                        value="yes", salience=0.9)
    m = re.search(rf"\b(?:diagnosed with|I have|I've got|I suffer from|I live with|I struggle with) ({CONDITIONS})\b", s, _Q)
    if m:
        when = f" (diagnosed by {ctx.msg.ts.date().isoformat()})" if "diagnos" in s.lower() else ""
        yield _cand(ctx, ("health", norm_key(m.group(1))), "fact", f"The user has {m.group(1).lower()}{when}.",
                    value="yes", salience=0.9)
    m = re.search(r"\bI(?:'m| am) (celiac|coeliac|diabetic|asthmatic|epileptic|autistic|dyslexic|deaf|"
                  r"hard of hearing|colorblind|colourblind|bipolar|pregnant|anemic|anaemic)\b", s, _Q)
    if m:
        yield _cand(ctx, ("health", norm_key(m.group(1))), "fact", f"The user is {m.group(1).lower()}.",
                    value="yes", salience=0.9)
    m = re.search(rf"\bI(?:'m| am) (?:a )?({DIETS})\b", s, _Q)
    if m:
        yield _cand(ctx, ("diet", ""), "fact", f"The user is {m.group(1).lower()}.", value=m.group(1).lower(),
                    salience=0.7)
    m = re.search(r"\b(?:I've been|I have been|I am|I'm) sober(?: for ([\w ]+?))?(?=[,.!?]|$| now)", s, _Q)
    if m:
        span = f"has been sober for {m.group(1)} as of {ctx.msg.ts.date().isoformat()}" if m.group(1) else "is sober"
        yield _cand(ctx, ("sober", ""), "fact", f"The user {span}.", value="sober", salience=0.85)


def rule_injury(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI (?:hurt|injured|broke|sprained|tore|twisted|pulled|fractured) my ([a-z]+)", s, _Q)
    if m:
        body = tidy(third_person(s))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
        yield _cand(ctx, ("injury", m.group(1).lower()), "event", body, value="hurt", salience=0.7,
                    valid_from=ctx.msg.ts.date())


def rule_hobby(s: str, ctx: Context) -> Iterator[Candidate]:
    """Passions and habits: "I'm obsessed with X", "I go bouldering three times a week"."""
    m = re.search(r"\bI(?:'m| am) (?:(?:really|totally|kind of|so) )?(obsessed with|into|passionate about|"
                  r"addicted to|hooked on) ([a-z][a-z' -]*?)" + _END, s, _Q)
    if m and (obj := _object(m.group(2))):
        yield _cand(ctx, ("pref", norm_key(obj)), "preference", f"The user is {m.group(1).lower()} {obj}.",
                    value="like", salience=0.55)
        return
    m = re.search(r"\bI (?:go|do|play|practice|practise) ([a-z]+(?:ing)?(?: [a-z]+)?) (?:every (?:day|week|morning|"
                  r"weekend|night)|most (?:days|mornings|weekends)|(?:once|twice|three times|four times|\w+ times) a "
                  r"(?:week|month|day))", s, _Q)
    if m and (obj := _object(m.group(1))):
        yield _cand(ctx, ("pref", norm_key(obj)), "preference", tidy(third_person(m.group(0))),
                    value="like", salience=0.55)


def rule_fear(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI(?:'m| am) (?:(?:really|actually|so|super|deeply) )?(terrified|scared|afraid|frightened|"
                  r"phobic) of ([a-z][a-z' -]*?)" + _END, s, _Q)
    if m and (obj := _object(m.group(2))):
        yield _cand(ctx, ("fear", norm_key(obj)), "fact", f"The user is {m.group(1).lower()} of {obj}.",
                    value="yes", salience=0.75)


def rule_milestone(s: str, ctx: Context) -> Iterator[Candidate]:
    """Accomplishments and family emergencies: events the user will expect remembered."""
    done = re.search(r"(?:^|\bI (?:just |finally )?)(passed|aced|graduated|got into|got promoted|got the job|won)\b"
                     r"(?! away)", s, _Q)
    family = re.search(rf"\bmy ({FAMILY_RELS}|{PARTNER_RELS})\b[^.!?]*?\b(in the hospital|had a stroke|"
                       rf"had a heart attack|had an accident|was in an accident|has cancer|was diagnosed|"
                       rf"had surgery|is sick|fell)\b", s, _Q)
    m = done or family
    if m is None:
        return
    told = ctx.msg.content if family else s
    text = tidy(third_person(told))[:-1] + f" (said on {ctx.msg.ts.date().isoformat()})."
    key = (m.group(1) + ":" + m.group(2)) if family else m.group(1)
    yield _cand(ctx, ("event", norm_key(key)), "event", text, value="yes", salience=0.85 if family else 0.75,
                valid_from=ctx.msg.ts.date(), entities=("user", *names_in(" " + s)))


def rule_habit_change(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bI (?:just |recently |finally )?(switched to|gave up|quit|stopped|cut out|started) "
                  r"([a-z][a-z' -]*?)(?=\s+(?:last|this|a|two|three|and|but|so|because)\b|[,.!?;]|$)", s, _Q)
    if m and (obj := _object(m.group(2))) and not re.match(r"(?:my job|work|my position|the company)", obj, _Q):
        yield _cand(ctx, ("habit", norm_key(obj)), "preference",
                    f"The user {m.group(1).lower()} {obj} (as of {ctx.msg.ts.date().isoformat()}).",
                    value=m.group(1).lower(), salience=0.55)


# -- sentence rules: people -----------------------------------------------------------------------


def rule_family(s: str, ctx: Context) -> Iterator[Candidate]:
    for f in re.finditer(rf"\bmy ({FAMILY_RELS}|{PARTNER_RELS})(?:'s name is| is called| is named| named| called|,| is)? ({NAME})\b", s, _Q):
        rel, name = f.group(1).lower(), f.group(2)
        if not _is_name(name):
            continue
        partner = re.fullmatch(PARTNER_RELS, rel) is not None
        slot = ("partner", "") if partner else ("family", f"{rel}:{name.lower()}")
        yield _cand(ctx, slot, "relationship", f"The user's {rel} is {name}.", value=name.lower(),
                    entities=("user", name), salience=0.75)
    m = re.search(rf"\bI(?:'m| am) (?:dating|seeing|married to|engaged to|in a relationship with) ({NAME})", s, _Q)
    if m and _is_name(m.group(1)):
        state = "engaged:" if "engaged" in m.group(0).lower() else ""
        verb = m.group(0).split(" ", 1)[1].replace("'m ", "").replace("am ", "")
        yield _cand(ctx, ("partner", ""), "relationship", f"The user is {verb}.", value=state + m.group(1).lower(),
                    entities=("user", m.group(1)), salience=0.75)
    yield from _children(s, ctx)


def _children(s: str, ctx: Context) -> Iterator[Candidate]:
    if not re.search(r"\b(?:kids|children)\b", s, _Q) or HYPOTHETICAL.search(s):
        return
    names = [n for n in names_in(s) if _is_name(n)]
    if names:
        listed = " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]
        yield _cand(ctx, ("children", ""), "relationship", f"The user has {len(names)} children: {listed}.",
                    value=",".join(sorted(n.lower() for n in names)), entities=("user", *names), salience=0.8)


def rule_partner_change(s: str, ctx: Context) -> Iterator[Candidate]:
    partner = _partner_name(ctx.active)
    engaged = re.search(rf"\b(?:({NAME}) proposed|we got engaged|I got engaged|we're engaged)\b", s, _Q)
    broke = re.search(rf"\b(?:we|({NAME}) and I|I and ({NAME})) (?:broke up|split up|separated|got divorced)|"
                      rf"\bI (?:broke up with|dumped) ({NAME})|({NAME}) (?:broke up with|dumped) me", s, _Q)
    date = ctx.msg.ts.date().isoformat()
    if engaged:
        name = engaged.group(1) if _is_name(engaged.group(1)) else partner
        body = f"The user is engaged to {name} (since {date})." if name else f"The user got engaged (said on {date})."
        yield _cand(ctx, ("partner", ""), "relationship", body, value=f"engaged:{(name or '').lower()}",
                    entities=("user", name) if name else ("user",), salience=0.95)
    elif broke:
        name = next((g for g in broke.groups() if _is_name(g)), None) or partner
        body = f"The user and {name} broke up (said on {date})." if name else f"The user went through a breakup (said on {date})."
        yield _cand(ctx, ("partner", ""), "relationship", body, value=f"broke up:{(name or '').lower()}",
                    entities=("user", name) if name else ("user",), salience=0.9)


# -- sentence rules: preferences and boundaries -------------------------------------------------

_PRONOUNS = {"it", "that", "this", "you", "him", "her", "them", "when", "how", "the", "those", "these",
             "your", "his", "its", "our", "their", "what", "doing", "being", "watching", "u", "ya"}
_VERB3 = {"love": "loves", "adore": "adores", "enjoy": "enjoys", "like": "likes", "hate": "hates",
          "dislike": "dislikes", "detest": "detests", "can't stand": "can't stand",
          "cannot stand": "can't stand", "don't like": "doesn't like", "do not like": "doesn't like",
          "don't really like": "doesn't really like", "prefer": "prefers"}


def _object(text: str) -> str | None:
    obj = FILLER_TAIL.sub("", text.strip(" .,!?"))
    words = obj.split()
    if not words or words[0].lower() in _PRONOUNS or len(words) > 6:
        return None
    return obj


def rule_preference(s: str, ctx: Context) -> Iterator[Candidate]:
    stop = r"(?=,|\.|!|\?|;| but | because | so | and I | though| especially|$)"
    found: list[tuple[str, str, str]] = []
    pattern = (r"\bI (?:really |absolutely |just |also |totally |kind of )?"
               r"(love|adore|enjoy|like|hate|dislike|detest|can't stand|cannot stand|don't like|"
               r"do not like|don't really like|prefer)s?\b (?!to\b)(.+?)" + stop)
    for m in re.finditer(pattern, s, _Q):
        polarity = "like" if m.group(1).lower() in ("love", "adore", "enjoy", "like", "prefer") else "dislike"
        found.append((_VERB3[m.group(1).lower()], m.group(2), polarity))
    for m in re.finditer(r"\bI(?:'m| am) (not )?(?:a )?(?:huge |big |massive |real )?fan of (.+?)" + stop, s, _Q):
        found.append(("is not a fan of" if m.group(1) else "is a big fan of", m.group(2),
                      "dislike" if m.group(1) else "like"))
    items = [(verb, obj, pol) for verb, raw, pol in found if (obj := _object(raw))]
    if not items:
        return
    body = "; ".join(f"{'The user' if i == 0 else 'the user'} {v} {o}" for i, (v, o, _) in enumerate(items))
    extra = re.search(r"\bespecially ([^,.!?]+)", s, _Q)
    body += f", especially {FILLER_TAIL.sub('', extra.group(1))}." if extra else "."
    key = norm_key(re.sub(r"\s+(?:over|to|more than)\s+.*$", "", items[0][1]))
    yield _cand(ctx, ("pref", key), "preference", body, value=items[0][2], salience=0.5,
                entities=("user", *names_in(" " + body)))


def rule_favorite(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\bmy favou?rite ([a-z]+(?: [a-z]+)?) (?:is|are) (.+?)(?=[,.!?;]|$)", s, _Q)
    obj = _object(m.group(2)) if m else None
    if m and obj:
        yield _cand(ctx, ("favorite", m.group(1).lower()), "preference",
                    f"The user's favorite {m.group(1).lower()} is {obj}.", value=norm_key(obj),
                    entities=("user", *names_in(" " + obj)), salience=0.5)


def rule_boundary(s: str, ctx: Context) -> Iterator[Candidate]:
    m = re.search(r"\b(?:stop|don't|do not|never|quit) (?:call|calling) me ['\"]?([a-z]+)|"
                  r"\bnot want to be called ['\"]?([a-z]+)", s, _Q)
    if m:
        word = (m.group(1) or m.group(2)).lower()
        yield _cand(ctx, ("boundary", "call:" + word), "boundary",
                    f"The user does not want to be called '{word}'.", value="no", salience=0.9)
    m = re.search(r"\b(?:don't|do not|never|stop|please no) (?:use|using|send|sending) (?:any )?([a-z -]+?)"
                  r"(?: with me| to me)?(?=[,.!?;]|$| they| it| because)", s, _Q) \
        or re.search(r"\bnot want the assistant to use ([a-z -]+?)(?=[,.!?;]|$)", s, _Q)
    if m and m.group(1).split()[0].lower() not in {"it", "that", "this", "the", "my"}:
        thing = m.group(1).strip()
        yield _cand(ctx, ("boundary", norm_key(thing)), "boundary",
                    f"The user does not want the assistant to use {thing}.", value="no", salience=0.85)
    m = re.search(r"\b(?:don't|do not|never|stop) (?:bring up|bringing up|mention|mentioning|talk about|"
                  r"ask about|ask me about)\s+(.+?)(?=[.!?]|$)|\bnot want (.+?) brought up", s, _Q)
    if m:
        topic = re.sub(r",?\s*(?:ever|again|please)\s*$", "", (m.group(1) or m.group(2)).strip(" ,"), flags=_Q)
        if topic and topic.split()[0].lower() not in {"it", "that", "this"}:
            yield _cand(ctx, ("boundary", norm_key(topic)), "boundary",
                        f"The user does not want {third_person(topic)} brought up.", value="no",
                        entities=("user", *names_in(" " + topic)), salience=0.9)


# -- plans, promises, closes ------------------------------------------------------------------

_RESCHEDULE = re.compile(r"\b(?:moved|pushed|postponed|rescheduled|delayed|bumped|shifted|switched|"
                         r"changed)\b(?: back| up| forward)?(?: to| until| till| for)?\b|\bis now on\b", re.IGNORECASE)
_CLOSE = re.compile(r"\b(cancel+ed|called off|bail(?:ed)? on|had to cancel|is off|not going|won't be going|can't go|can't make it|"
                    r"out of|pulled out of|skipped|done with|finished|passed|did|went to|handed in|"
                    r"submitted|got back from|aced|nailed)\b", re.IGNORECASE)
_COMMIT = re.compile(r"\b(need to|have to|has to|promised|deadline|due|booked|scheduled)\b", re.IGNORECASE)


def _we(s: str, ctx: Context) -> str:
    who = f"the user and {ctx.recent_people[-1]}" if ctx.recent_people else "the user and others"
    s = re.sub(r"\bwe're\b|\bwe are\b", f"{who} are", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe've\b", f"{who} have", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe'll\b", f"{who} will", s, flags=re.IGNORECASE)
    s = re.sub(r"\bwe\b", who, s, flags=re.IGNORECASE)
    return re.sub(r"\bour\b", "their", s, flags=re.IGNORECASE)


def _plan(ctx: Context, body: str, hit: DateHit, words: frozenset[str], people: Sequence[str],
          target: str | None = None) -> Candidate:
    return _cand(ctx, ("plan", hit.end.isoformat()), "plan", body, value=hit.end.isoformat(),
                 valid_from=ctx.msg.ts.date(), expires=hit.end, words=words, target=target,
                 entities=("user", *dict.fromkeys(people)), salience=0.65)


def rule_plan(s: str, ctx: Context) -> Iterator[Candidate]:
    """A future, dated, non-trivial plan: a plan word, a named person/place, or a commitment."""
    today = ctx.msg.ts.date()
    remind = re.search(r"\bremind me (?:to |about |that )?(.+?)(?=[.!?]|$)", s, _Q)
    hit = find_date(s, today)
    if hit is None or hit.past or hit.end <= today or (PAST.search(s) and not remind):
        return
    if s.rstrip().endswith("?") and not remind:
        return
    words, people = content_words(s), names_in(s)
    if _RESCHEDULE.search(s) and (old := _best_plan(words | content_words(ctx.prior_text), ctx.active)):
        body = f"{tidy(with_dates(third_person(s), hit))} Previously: {old.body}"
        yield _plan(ctx, body, hit, words | content_words(old.body), [*old.entities[1:], *people], old.id)
        return
    if not (words & PLAN_WORDS or people or _COMMIT.search(s) or remind):
        return
    if remind:
        body = tidy("The user asked to be reminded to " + with_dates(third_person(remind.group(1)), hit))
    else:
        body = tidy(with_dates(third_person(_we(s, ctx)), hit))
    yield _plan(ctx, body, hit, words, [*people, *(ctx.recent_people[-1:] if re.search(r"\bwe\b", s, _Q) else [])])


def rule_promise(s: str, ctx: Context) -> Iterator[Candidate]:
    """The assistant's own promise to the user, with a date, is a plan the user will expect kept."""
    m = re.search(r"\bI'll (remind you|ask you|check in with you|check in|follow up with you|follow up)\b(.*)", s, _Q)
    hit = find_date(s, ctx.msg.ts.date()) if m else None
    if m is None or hit is None or hit.past or hit.end <= ctx.msg.ts.date():
        return
    rest = with_dates(m.group(1) + m.group(2), hit)
    rest = re.sub(r"\byour\b", "the user's", re.sub(r"\byou\b", "the user", rest, flags=_Q), flags=_Q)
    yield _plan(ctx, tidy("The assistant promised to " + rest), hit, content_words(m.group(2)), names_in(s))


def _best_plan(words: frozenset[str], active: Sequence[Card]) -> Card | None:
    best, score = None, 0
    for card in active:
        if card.type != "plan" and card.expires is None:
            continue
        overlap = len(words & content_words(card.body + " " + " ".join(card.entities[1:])))
        if overlap > score:
            best, score = card, overlap
    return best


def find_closes(s: str, ctx: Context) -> Iterator[CloseOp]:
    m = _CLOSE.search(s)
    if m is None or re.search(r"\bnot (?:cancel|done|finished|passed)", s, _Q) or s.rstrip().endswith("?"):
        return
    card = _best_plan(content_words(s), ctx.active)
    if card is not None:
        cancelled = re.search(r"cancel|called off|bail|is off|not going|won't|can't|out of|pulled", m.group(1), _Q)
        yield CloseOp(id=card.id, reason=("cancelled" if cancelled else "done") + f": {s.strip()[:120]}")


FACT_RULES = (rule_name, rule_pet, rule_death, rule_job, rule_quit, rule_home, rule_birthday,
              rule_health, rule_injury, rule_family, rule_partner_change, rule_preference,
              rule_favorite, rule_boundary, rule_hobby, rule_fear, rule_milestone, rule_habit_change)
QUESTION_SAFE = (rule_boundary,)


def sentence_candidates(s: str, ctx: Context) -> list[Candidate]:
    """Every candidate one user sentence yields (facts first; a plan only if no fact used its date)."""
    if HYPOTHETICAL.search(s) and not re.search(r"\bremind me\b", s, _Q):
        return []
    question = s.rstrip().endswith("?")
    out = [c for rule in (QUESTION_SAFE if question else FACT_RULES) for c in rule(s, ctx)]
    if not any(c.slot[0] in ("birthday", "job", "death", "injury") for c in out):
        out.extend(rule_plan(s, ctx))
    return out


# -- existing cards: what slot does a card hold? ----------------------------------------------


@dataclass(frozen=True)
class _CardMessage:
    session: str
    turn: int
    role: str
    content: str
    ts: dt.datetime


_SLOT_CACHE: dict[tuple[str, str], list[tuple[tuple[str, str], str]]] = {}


def card_slots(card: Card) -> list[tuple[tuple[str, str], str]]:
    """``(slot, value)`` pairs a card's body asserts, found by reading it back in the first
    person through the same rules that read the user's messages."""
    key = (card.id, card.body)
    if key not in _SLOT_CACHE:
        ctx = Context(msg=_CardMessage("card", 0, "user", card.body, card.created), active=(),
                      recent_people=[])
        found = [c for s in sentences(first_person(card.body)) for rule in FACT_RULES for c in rule(s, ctx)]
        _SLOT_CACHE[key] = [(c.slot, c.value) for c in found]
    return _SLOT_CACHE[key]


def _has_slot(active: Sequence[Card], slot: tuple[str, str]) -> bool:
    return any(s == slot for card in active for s, _ in card_slots(card))


def _relation_of(name: str, active: Sequence[Card]) -> str | None:
    for card in active:
        for slot, _ in card_slots(card):
            if slot == ("pet", name.lower()):
                m = re.search(rf"\b({SPECIES})\b", card.body, _Q)
                return m.group(1).lower() if m else "pet"
            if slot[0] == "family" and slot[1].endswith(":" + name.lower()):
                return slot[1].split(":")[0]
    return None


def _partner_name(active: Sequence[Card]) -> str | None:
    for card in active:
        for slot, value in card_slots(card):
            if slot == ("partner", "") and value:
                return value.split(":")[-1].title()
    return None


# -- the window ----------------------------------------------------------------------------------


def _walk(window: Sequence[MessageLike], active: Sequence[Card]) -> tuple[list[Candidate], list[CloseOp]]:
    cands: list[Candidate] = []
    closes: list[CloseOp] = []
    partner = _partner_name(active)
    people: list[str] = [partner] if partner else []
    prev: list[tuple[MessageLike, list[Candidate]]] = []
    for msg in window:
        if msg.role != "user":
            ctx = Context(msg, active, people)
            cands += [c for s in sentences(msg.content) for c in rule_promise(s, ctx)]
            continue
        ctx = Context(msg, active, people, prior_text=" ".join(m.content for m, _ in prev[-2:]))
        found: list[Candidate] = []
        for s in sentences(msg.content):
            got = sentence_candidates(s, ctx)
            found += got
            people.extend(n for c in got if c.type == "relationship" for n in c.entities[1:])
            if not any(c.target for c in got):
                closes += find_closes(s, ctx)
        found += _emotion(msg, found, prev)
        prev.append((msg, found))
        cands += found
    return cands, closes


def _emotion(msg: MessageLike, found: list[Candidate],
             prev: list[tuple[MessageLike, list[Candidate]]]) -> list[Candidate]:
    """Strong feelings raise the salience of what they are about; alone, they are an event."""
    hits = [s for s in sentences(msg.content)
            if EMOTIONS.search(s) and not HYPOTHETICAL.search(s) and not s.rstrip().endswith("?")]
    if not hits:
        return []
    near = found + [c for m, cs in prev[-2:] if m.session == msg.session for c in cs]
    near = [c for c in near if c.type != "preference"]
    for c in near:
        c.salience = max(c.salience, 0.9)
    if near:
        return []
    context = ""
    if prev and prev[-1][0].session == msg.session and not prev[-1][1]:
        context = prev[-1][0].content.rstrip(" .!?") + ". "
    text = tidy(third_person(context + " ".join(hits)))
    return [Candidate(slot=("event", f"{msg.session}:{msg.turn}"), type="event",
                      body=f"On {msg.ts.date().isoformat()}: {text}", msg=msg, salience=0.9,
                      valid_from=msg.ts.date(), entities=("user", *names_in(" " + text)),
                      turns={m.turn for m, _ in prev[-1:] if context})]


def _same_thing(a: Candidate, b: Candidate) -> bool:
    if a.slot != b.slot:
        return False
    return a.slot[0] != "plan" or bool(a.words & b.words) or (a.target is not None and a.target == b.target)


def _dedupe(cands: list[Candidate]) -> list[Candidate]:
    """One candidate per thing: repeats merge, a later value wins, and an ending ("I quit")
    followed by a new value ("I start at X") is kept as its own event."""
    out: list[Candidate] = []
    for c in cands:
        same = next((o for o in out if _same_thing(o, c)), None)
        if same is None:
            out.append(c)
        elif same.ends and not c.ends:
            same.slot = ("event", f"ended:{same.slot[0]}")
            out.append(c)
        elif same.value == c.value or c.slot[0] == "plan":
            same.turns |= c.turns
            same.salience = max(same.salience, c.salience)
        else:
            c.turns |= same.turns
            out[out.index(same)] = c
    return out


def _same_value(a: str, b: str) -> bool:
    na, nb = norm_key(a), norm_key(b)
    return na == nb or na.startswith(nb + " ") or nb.startswith(na + " ")


def _plan_dup(c: Candidate, card: Card) -> bool:
    return card.expires == c.expires and bool(c.words & content_words(card.body))


def _draft(c: Candidate, old: Card | None = None) -> dict[str, object]:
    body = c.body
    if old is not None and (c.ends or c.value == "died") and "Previously:" not in body:
        body = f"{body} Previously: {old.body}"
    entities = ("user", *c.entities[1:], *(old.entities[1:] if old is not None and c.ends else ()))
    return {"type": c.type, "body": body, "entities": tuple(dict.fromkeys(entities)),
            "salience": round(c.salience, 2), "valid_from": c.valid_from, "expires": c.expires,
            "turns": tuple(sorted(c.turns)), "session": c.msg.session}


def _resolve_one(c: Candidate, active: Sequence[Card], used: set[str]) -> Op | None:
    by_id = {card.id: card for card in active}
    if c.target is not None:
        return None if c.target in used else SupersedeOp(old_id=c.target, **_draft(c, by_id[c.target]))  # type: ignore[arg-type]
    if c.slot[0] == "plan":
        return None if any(_plan_dup(c, card) for card in active) else WriteOp(**_draft(c))  # type: ignore[arg-type]
    holders = [(card, value) for card in active for slot, value in card_slots(card) if slot == c.slot]
    if any(_same_value(value, c.value) for _, value in holders):
        return None
    old = next((card for card, _ in holders if card.id not in used), None)
    if old is not None:
        return SupersedeOp(old_id=old.id, **_draft(c, old))  # type: ignore[arg-type]
    return WriteOp(**_draft(c))  # type: ignore[arg-type]


def _merges(active: Sequence[Card], used: set[str]) -> Iterator[MergeOp]:
    """Two active cards asserting the same slot and value become one."""
    groups: dict[tuple[tuple[str, str], str], list[Card]] = {}
    for card in active:
        slots = card_slots(card)
        if card.id not in used and card.type != "plan" and slots:
            groups.setdefault((slots[0][0], norm_key(slots[0][1])), []).append(card)
    for same in groups.values():
        if len(same) < 2:
            continue
        keep = max(same, key=lambda c: (c.salience, len(c.body)))
        entities = tuple(dict.fromkeys(e for c in same for e in c.entities))
        yield MergeOp(ids=tuple(c.id for c in same), type=keep.type, body=keep.body, entities=entities,
                      salience=max(c.salience for c in same), valid_from=keep.valid_from, expires=keep.expires)


def extract_offline(window: Sequence[MessageLike], cards: Sequence[Card], summary: str,
                    now: dt.datetime) -> Extraction:
    """Decide, by rules, what of ``window`` survives: a new summary and card ops.

    ``cards`` are the pair's cards (only ``active`` ones are considered); ``now`` is when the
    dream runs (plans whose ``expires`` is before its date are expired).
    """
    today = now.date()
    active = [c for c in cards if c.status == "active"]
    cands, closes = _walk(window, active)
    ops: list[Op] = []
    used: set[str] = set()
    pending: list[CloseOp | Candidate] = [*closes, *_dedupe(cands)]
    for candidate in pending:
        op = candidate if isinstance(candidate, CloseOp) else _resolve_one(candidate, active, used)
        if op is not None and not set(op_targets(op)) & used:
            ops.append(op)
            used |= set(op_targets(op))
    for merge in _merges(active, used):
        ops.append(merge)
        used |= set(merge.ids)
    ops += [ExpireOp(id=c.id) for c in active if c.id not in used and c.expires and c.expires < today]
    return Extraction(summary=rewrite_summary(summary, window, ops, active, today), ops=ops)


# -- summary -------------------------------------------------------------------------------------


def rewrite_summary(previous: str, window: Sequence[MessageLike], ops: Sequence[Op],
                    active: Sequence[Card], today: dt.date, limit: int = SUMMARY_MAX_CHARS) -> str:
    """Previous summary + a few extractive lines for this window, then every open plan.

    Oldest lines go first when over ``limit``; open plans are never dropped (they are what a
    summary rewrite must not lose), so the result exceeds ``limit`` only if they alone do.
    """
    history = _history_lines(previous)
    bodies = [op.body for op in ops if isinstance(op, (WriteOp, SupersedeOp, MergeOp))]
    if window:
        day = window[0].ts.date().isoformat()
        if bodies:
            history += [f"- {day}: {_clip(b)}" for b in bodies[:4]]
        elif (said := next((m.content for m in window if m.role == "user"), "")):
            history.append(f"- {day}: small talk (\"{_clip(said, 80)}\")")
    plans = _open_plans(ops, active, today)
    tail = ["Open plans:", *plans] if plans else []
    while history and len("\n".join(history + tail)) > limit:
        history.pop(0)
    return "\n".join(history + tail)


def _clip(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def _history_lines(previous: str) -> list[str]:
    lines, in_plans = [], False
    for line in previous.splitlines():
        if line.strip() == "Open plans:":
            in_plans = True
            continue
        if in_plans and line.startswith("- "):
            continue
        in_plans = False
        if line.strip():
            lines.append(line.rstrip())
    return lines


def _open_plans(ops: Sequence[Op], active: Sequence[Card], today: dt.date) -> list[str]:
    gone = {t for op in ops for t in op_targets(op)}
    plans = [(c.body, c.expires) for c in active
             if c.id not in gone and c.type == "plan" and (c.expires is None or c.expires >= today)]
    plans += [(op.body, op.expires) for op in ops
              if isinstance(op, (WriteOp, SupersedeOp)) and op.type == "plan"
              and (op.expires is None or op.expires >= today)]
    return [f"- {_clip(body)}" + (f" (until {exp.isoformat()})" if exp else "") for body, exp in plans]
