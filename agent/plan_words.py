"""The offline planner's word lists: general English patterns for memory cues, time
scope, memory types, suggestion domains and what a search query leaves out.

Not phrases copied from the eval probes (``agent/evals/data/decision_probes.jsonl``): the
rules that use them are ``memfs.agent.plan_rules``.
"""

from __future__ import annotations

import re


def wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


def rx(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(alternatives) + r")\b", re.IGNORECASE)


MEMORY_CUE = rx(
    r"remember", r"recall", r"remind me", r"forgot what", r"last time",
    r"(?:did|have) i (?:ever )?(?:tell|told|mention(?:ed)?|say|said)",
    r"i (?:told|mentioned to) you", r"i said", r"what did i say",
    r"you (?:recommended|suggested|said|mentioned)", r"you (?:told|promised) me",
    r"(?:did|have) we", r"we (?:decided|planned|agreed|talked|said|made)",
)
RECUR_CUE = rx(r"(?<!say that )(?<!try )(?<!come )again", r"still", r"anymore",
                 r"like (?:it|he|she|they|i|we) did", r"as usual")
PAST_REF = rx(r"used to", r"back when", r"back then", r"as a kid", r"when i was",
                r"last (?:week|month|year|summer|spring|fall|autumn|winter|night)", r"ago")
SUGGEST = rx(r"suggest\w*", r"recommend\w*", r"ideas?",
               r"what should (?:i|we) (?:make|cook|eat|get|buy|bake|order|wear)")
ADVICE = re.compile(
    r"\b(?:what|which|where)\b(?:\s+[\w'-]+){0,3}?\s+(?:should|could|shall|can|would)\s+(?:i|we)\b"
    r"|\b(?:can|could|would|will) you (?:put together|come up with|plan|pick|choose|think of)\b"
    r"|\bany (?:good )?(?:ideas|suggestions|recommendations|tips)\b", re.IGNORECASE)
"""Asking for advice in general form ("which X should I …", "could you put together …");
a suggestion only when the request also touches a domain (by meaning: see
``memfs.constraints.classify_request``; by words when no model is loaded)."""
CHOICE = re.compile(
    # either-or: "A or B?", "torn between A and B", "A versus B"
    r"\b[\w'-]+\s+or\s+(?!so\b|something\b|anything\b|two\b|whatever\b)[\w'-]+[^.!?]*\?"
    r"|\btorn between\b|\b(?:vs\.?|versus)\b"
    # an option put up for approval: "book it?", "worth it?", "good idea?", "… maybe?"
    r"|\b(?:book|buy|get|order|try|do|go for|grab)\s+(?:it|them|that|one)\s*\?"
    r"|\bworth\s+(?:it|\w+ing)\b[^.!]*\?"
    r"|\b(?:good|bad|safe|smart)\s+(?:idea|shout|call|choice|pick|bet|move|plan)\b[^.!]*\?"
    r"|\b(?:maybe|perhaps)\s*\?|\byay or nay\b"
    r"|^\W*(?:should|shall)\s+(?:i|we)\b[^.!]*\?"
    # deliberating aloud: "thinking of …", "leaning towards …", "stumped", "stuck on …"
    r"|\b(?:thinking|leaning)\s+(?:of|about|towards?|a|an|some)\b|\bstumped\b"
    r"|\bstuck (?:on|for)\b|\bdrawing a blank\b"
    # asking for the best one, or for the assistant to pick
    r"|\b(?:what'?s|whats|what is|which is)\s+(?:a\s+|the\s+)?(?:good|best|nicest|top)\b"
    r"(?!\s+(?:way|time|age|number|amount)\b)"
    r"|\bbest\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:for|to)\b|\bwhich one\b"
    r"|\b(?:pick|choose|decide on|sort out)\s+(?:me|my|us|our|a|an|the|something|somewhere)\b"
    r"|\bhelp (?:me|us) (?:pick|choose|decide)\b"
    # a thing asked for politely, without a verb: "… please"
    r"|[\w'-]+\s+please\s*[.!]?\s*$|\bplease\s*[,:]?\s*\w",
    re.IGNORECASE)
"""The speech act of asking the assistant to choose between options or to approve one,
whatever the domain: an either-or question, an option put up for approval, deliberating
aloud, asking for the best one or for a pick, a thing asked for with "please". Grammar of
the act, no domain words (issue 12, seventh round): which domain the option belongs to is
decided by meaning (``memfs.constraints.classify_request``, wording "choice")."""
OPTION_CLAUSE = re.compile(r"(?:^|[,:;–-])\s*([^,:;–?-]+)\?\s*$")
"""The last clause of a question: "…, a pot of tea?" offers ``a pot of tea``."""
FINITE = re.compile(
    r"\b(?:i|you|u|we|they|he|she|it|there|is|are|was|were|am|do|does|did|can|could|should|"
    r"would|will|shall|may|might|must|have|has|had|what|whats|what's|how|why|when|who|where|"
    r"which|any|ok|okay|right|really|yeah|yes|no|true|eh|huh|innit|sure)\b"
    r"|n't\b|'(?:s|re|ve|ll|d|m)\b", re.IGNORECASE)
"""A subject, an auxiliary, a question word or a tag ("…, right?"): a clause that has one
is a question of its own, not an option offered for approval."""
REGEX_DOMAINS = {"food": ("food",), "gifts": ("gift",), "outings": ("activity", "place")}
"""The suggestion domains of ``DOMAINS`` word lists, when no embedder can classify."""
PREF_DOMAIN = rx(
    r"snacks?", r"food", r"dinner", r"lunch", r"breakfast", r"brunch", r"meals?", r"cook\w*",
    r"eat", r"recipes?", r"restaurants?", r"bake", r"dessert", r"drinks?", r"gifts?", r"presents?",
    r"birthday", r"anniversary", r"trip", r"date night", r"weekend", r"make", r"get",
)
# A liking ("loves", "favourite", "prefers") was one of these until the live-window round.
LIMIT_WORDS = (r"allerg\w*", r"vegetarian", r"vegan", r"gluten", r"lactose", r"intoleran\w*",
               r"(?:does|do|can)n[o']?t eat", r"hates?")
LIMIT = rx(*LIMIT_WORDS)
"""A limit said in so many words: what a suggestion must respect, and what, in the context
already, spares it a search of memory. A liking ("loves her garden") does not: the limit
said weeks ago is still to be found."""
KIN_WORDS = (r"sister", r"brother", r"mom", r"mum", r"dad", r"mother", r"father",
              r"grand(?:ma|pa|mother|father|mum|dad)", r"aunt", r"uncle", r"cousin")
KIN = rx(*KIN_WORDS)
"""A relative named without "my" ("Grandpa is in hospital") is still the user's relative."""
HOW_TO = re.compile(r"\s*(?:how (?:do|can|should|would) (?:i|you|we)|what(?:'s| is) the best way)"
                     r"\b(?!.*\b(?:my|our)\b)", re.IGNORECASE)
"""How-to questions ("how do I boil an egg?") are general even though they say "I"."""
FIRST_PERSON = rx(r"i", r"i'm", r"i've", r"i'd", r"i'll", r"my", r"mine", r"we", r"our", r"we're")
FIRST_PERSON_ANY = rx(r"i", r"i'm", r"i've", r"i'd", r"i'll", r"my", r"mine", r"me", r"we",
                        r"our")
QUESTION_START = rx(r"what", r"what's", r"when", r"where", r"who", r"which", r"why", r"how",
                      r"how's", r"is", r"are", r"was", r"were", r"did", r"do", r"does", r"have",
                      r"has", r"should", r"can", r"could", r"would", r"will", r"any")
SMALL_TALK = re.compile(
    r"^(?:h+i+|hey+|hello+|yo|hiya|good (?:morning|afternoon|evening|night)|gm|morning|"
    r"(?:ok(?:ay)?[ ,]*)?(?:good ?night|bye|see you|talk (?:to you )?(?:later|tomorrow|soon))|"
    r"thanks?(?: you)?|thx|ty|lol|haha\w*|lmao|how are you(?: doing)?(?: today)?|what'?s up|sup)\b",
    re.IGNORECASE)
SCOPE_PAST_STRONG = rx(r"used to", r"back when", r"back then", r"as a kid", r"when i was")
SCOPE_RECENT = rx(r"now", r"currently", r"current", r"still", r"latest", r"these days", r"lately",
                    r"anymore", r"moved", r"new", r"at the moment", r"recently", r"this week")
SCOPE_PAST = rx(r"before", r"last (?:week|month|year|summer|spring|fall|autumn|winter|time)",
                  r"ago", r"in the past", r"like (?:it|he|she|they|i|we) did")
TYPE_WORDS: dict[str, re.Pattern[str]] = {
    "fact": rx(r"name", r"job", r"work\w*", r"live[sd]?", r"allerg\w*", r"birthday", r"how long",
                r"where", r"age", r"pets?", r"diet"),
    "preference": rx(r"favou?rite", r"likes", r"liked", r"loves?", r"hates?", r"prefers?",
                      r"recommend\w*",
                      r"suggest\w*", r"ideas?", r"snacks?", r"food", r"restaurants?", r"gifts?",
                      r"cook\w*", r"dinner", r"band", r"music", r"books?", r"diet"),
    "plan": rx(r"plans?", r"planned", r"planning", r"trip", r"meeting", r"appointment",
                r"still on", r"tomorrow", r"next week", r"weekend", r"decided?", r"schedule\w*",
                r"moving", r"move"),
    "event": rx(r"remember", r"story", r"happened", r"went", r"go", r"interview", r"party",
                 r"last time", r"surgery", r"vet", r"told you", r"did", r"argument", r"fight"),
    "relationship": rx(*KIN_WORDS, r"friend", r"boyfriend", r"girlfriend", r"partner",
                        r"wife", r"husband", r"boss", r"manager", r"cowork\w*", r"colleague",
                        r"argu\w*", r"fight", r"dat(?:e|ing)", r"texted", r"family", r"niece",
                        r"nephew", r"landlord", r"roommate", r"ex"),
    "boundary": rx(r"don't call me", r"never call me", r"boundar\w*", r"uncomfortable",
                    r"don't (?:bring up|mention|talk about)"),
}
FILLER = re.compile(
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|wait|ugh|um+|hmm+|oh|well|btw|honestly|anyway|also|"
    r"quick question)\b[\s,.!]*)+", re.IGNORECASE)
META = rx(r"do you (?:still )?(?:remember|recall|know)", r"remember", r"recall", r"remind me",
            r"can you", r"could you", r"would you", r"please", r"lol", r"again", r"tbh",
            r"(?:did|have) i (?:ever )?(?:tell|told|mention(?:ed)?) you(?: about)?")
NOT_NAMES = wordset("""
a an the and but or so if then than that this these those there here it its it's is are was were
be been am do does did have has had can could would should will shall may might must i i'm i've
i'd i'll me my mine we our you your you're he she they them his her their what what's when where
who which why how how's whats any anyway also just only maybe yes yeah yep no nope not ok okay
oh ah ugh um hmm hey hi hello hiya yo well wait so btw lol haha omg wow please thanks thank sorry
good great nice cool sure right honestly actually really finally remember remind tell write
explain help give make let can't don't didn't isn't wasn't won't should've today tonight tomorrow
yesterday morning evening night monday tuesday wednesday thursday friday saturday sunday january
february march april may june july august september october november december spring summer fall
autumn winter after before since until while because also every some all both each back
only even still now then maybe anyway apparently guess plus speaking quick random side funny
weird love miss feeling just let's lets in on at for with about from to of by as like
""")
STOP = NOT_NAMES | wordset("""
to of in on at for with about from into over by as up out off again still now new then ever
think know say said says tell told go going went get got getting want wanted like feel seem
seems enough thing things stuff something anything really very much many lot more most one
time way day days just even back kind sort bit little quite pretty u ur im ive dont
remember recall recommend recommended suggest suggested idea ideas name names believe wonder
imagine hope doing going usually too
""")
QUOTED = re.compile(r"(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"|“[^”\n]+”")
"""Quoted text is material to work on ("make 'we gotta fix this' formal"), not about the user."""
WORD = re.compile(r"[A-Za-z][A-Za-z'’]*|\d+")

ABOUT_STATE = rx(r"doing", r"feeling", r"going", r"up to", r"holding up")

DOMAINS = {
    "food": rx(r"snacks?", r"food", r"dinner", r"lunch", r"breakfast", r"brunch", r"meals?",
                r"cook\w*", r"eat\w*", r"recipes?", r"restaurants?", r"bak\w+", r"desserts?",
                r"drinks?", r"allerg\w*", r"vegan", r"vegetarian", r"gluten", r"lactose",
                r"intoleran\w*", r"peanuts?", r"nuts?", r"dairy", r"spicy", r"sweets?"),
    "gifts": rx(r"gifts?", r"presents?", r"birthday", r"anniversary"),
    "outings": rx(r"trips?", r"weekend", r"date night", r"walks?", r"holidays?", r"travel\w*",
                   r"hikes?", r"outings?"),
    "media": rx(r"films?", r"movies?", r"music", r"songs?", r"bands?", r"books?", r"shows?",
                 r"series", r"playlists?", r"podcasts?", r"games?"),
}
"""A constraint answers a suggestion only in its own domain: "hates horror films" says
nothing about which snack is safe for movie night."""

THIRD_PERSON = [(rx(r"i'm", r"i am"), "the user is"), (rx(r"i've"), "the user has"),
                 (rx(r"my"), "the user's"), (rx(r"i", r"me"), "the user")]

WHEN_QUESTION = re.compile(
    r"^\W*(?:(?:so|and|ok|okay|wait|hey|um|remind me|quick one)\W+){0,2}"
    r"(?:when|what time|what day|what date|which day)(?:'s|\s+(?:is|are|was|were|does|do|will))\b",
    re.IGNORECASE)
"""A question for the time of something already planned ("when is my meeting with Lin?",
"what time does the match start?"): a fact to find, never a request for a suggestion, so
no preference domain is read into it from the window (``plan_rules._wording``). A question
about when to do something ("when should we go?") is advice and is not matched."""

ASKS_FOR: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("time", rx(r"(?<!back )when", r"what (?:time|day|date|year|month)", r"which (?:day|date|year|month)",
                r"how long ago")),
    ("number", rx(r"how (?:many|much|long|old|often|far|big)")),
    ("name", re.compile(r"\b(?:what|which|whats|what's)\b[^?.!]*\b(?:named?|called)\b|\bcalled what\b",
                        re.IGNORECASE)),
    ("place", rx(r"where", r"what (?:city|town|country|street|place|address|neighbou?rhood)",
                 r"which (?:city|town|country|street|place|neighbou?rhood)")),
    ("reason", rx(r"why", r"how come", r"what for")),
    ("thing", rx(r"what", r"what's", r"whats", r"which", r"who", r"whom", r"whose", r"how")),
)
"""What a question asks for, most specific first: the kind of answer a unit of context must
hold (besides the question's own words) before the question counts as answered there."""
TIME_WORDS = rx(
    r"\d+", r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?", r"jan(?:uary)?", r"feb(?:ruary)?",
    r"mar(?:ch)?", r"apr(?:il)?", r"may", r"june?", r"july?", r"aug(?:ust)?", r"sept?(?:ember)?",
    r"oct(?:ober)?", r"nov(?:ember)?", r"dec(?:ember)?", r"today", r"tonight", r"tomorrow",
    r"yesterday", r"morning", r"afternoon", r"evening", r"noon", r"midnight", r"weekend",
    r"week", r"month", r"year", r"ago", r"next", r"last", r"soon", r"spring", r"summer",
    r"autumn", r"fall", r"winter", r"christmas", r"easter", r"am", r"pm", r"o'clock")
NUMBER_WORDS = rx(
    r"\d+", r"one", r"two", r"three", r"four", r"five", r"six", r"seven", r"eight", r"nine",
    r"ten", r"eleven", r"twelve", r"\w+teen", r"twenty", r"thirty", r"forty", r"fifty",
    r"hundred", r"thousand", r"dozen", r"couple", r"few", r"several", r"half", r"once",
    r"twice", r"daily", r"weekly", r"monthly", r"every", r"since")
REASON_WORDS = rx(r"because", r"'?cause", r"cos", r"coz", r"since", r"due to", r"thanks to",
                  r"after", r"reason", r"so that", r"that's why", r"which is why")
NAMED = re.compile(r"\b(?:named|called|name is|name's|goes by)\s+(\w+)", re.IGNORECASE)
LOCATIVE = re.compile(r"\b(?:at|in|near|from|to|into|outside|by)\s+(?:the\s+|a\s+|an\s+|"
                      r"my\s+|our\s+|his\s+|her\s+|their\s+)?([A-Za-z][\w'’-]*)", re.IGNORECASE)
TOPIC_ONLY = wordset("""
user talk talked talking chat chatted chatting mention mentioned mentioning discuss discussed
discussing conversation topic topics ask asked asking bring brought up come came say said tell
told share shared speak spoke they them their theirs he she his her him
""")
"""Words that only say a topic came up ("They talked about work."): a unit holding the
question's words and these says nothing the question does not already know."""
