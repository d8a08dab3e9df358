"""The offline rules' vocabulary: word lists and the regexes shared by several rules.

English only, and deliberately closed lists: a rule fires on a word it knows, so a missing
word costs recall, never precision.
"""

from __future__ import annotations

import re

SPECIES = ("dog|puppy|cat|kitten|corgi|beagle|labrador|lab|poodle|retriever|terrier|husky|pug|"
           "dachshund|collie|shepherd|spaniel|parrot|bird|rabbit|bunny|hamster|guinea pig|turtle|"
           "tortoise|snake|lizard|gecko|horse|ferret|goldfish|fish")
JOBS = ("nurse|teacher|engineer|developer|programmer|designer|accountant|lawyer|doctor|chef|cook|"
        "barista|student|writer|artist|musician|manager|consultant|analyst|scientist|researcher|"
        "pharmacist|therapist|electrician|plumber|mechanic|firefighter|paramedic|cashier|waiter|"
        "waitress|bartender|librarian|architect|photographer|journalist|editor|dentist|vet|"
        "veterinarian|professor|tutor|freelancer|intern|receptionist|farmer|pilot|nanny|recruiter|"
        "social worker|police officer|carer|caregiver|midwife|surgeon|paralegal|clerk|baker")
WORKPLACES = ("bakery|café|cafe|coffee shop|garden centre|garden center|bookshop|bookstore|book shop|library|school|"
              "nursery|daycare|hospital|clinic|surgery|pharmacy|chemist|supermarket|shop|store|pub|bar|restaurant|"
              "hotel|bank|call centre|call center|care home|nursing home|factory|warehouse|office|firm|agency|"
              "startup|start-up|charity|museum|gallery|theatre|theater|cinema|gym|salon|garage|practice|"
              "university|college|council|airport|farm|studio|brewery|hospice|newspaper|radio station|zoo|"
              "vets|vet's|dentist's|hairdresser's|butcher's|deli|bistro|diner|kitchen|lab|laboratory|"
              "distillery|vineyard|plant nursery|leisure centre|sports centre|post office|petrol station")
"""Common-noun places people work at ("I work at a bakery"): the job is where, not a title."""
PARTNER_RELS = ("wife|husband|partner|girlfriend|boyfriend|fiancée|fiancee|fiancé|fiance|spouse")
FAMILY_RELS = ("best friend|friend|buddy|bestie|roommate|flatmate|housemate|colleague|coworker|co-worker|"
               "boss|manager|mentor|ex|stepson|stepdaughter|godson|goddaughter|"
               "grandson|granddaughter|half-brother|half-sister|sister|brother|mom|mum|mother|dad|father|son|daughter|grandma|grandmother|"
               "grandpa|grandfather|aunt|uncle|cousin|niece|nephew|mother-in-law|father-in-law|"
               "sister-in-law|brother-in-law|stepmom|stepdad|stepmother|stepfather|twin|"
               "grandad|granddad|granny|gramps|gran|nanna|nana|nan|nonna")
KIN_ADJECTIVES = "little|younger|older|big|baby|elder|eldest|oldest|youngest|middle|twin|kid|new|late"
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
    "ashes", "memorial", "reunion", "movers", "move", "recheck", "follow-up", "scan", "results", "class", "holiday", "vacation", "finish", "submit", "renew",
    "passport", "visa", "court", "hearing", "semester", "masters", "master's", "degree",
    "scheduled", "promised", "date", "driving", "flying", "fly",
}
PLAN_NOUNS = PLAN_WORDS | {
    "dinner", "lunch", "brunch", "breakfast", "drinks", "coffee", "call", "session", "lesson", "haircut",
    "massage", "physio", "gig", "show", "match", "game", "viewing", "delivery", "service", "mot", "shift",
    "party", "date", "birthday", "visit", "meetup", "get-together", "sleepover", "playdate", "surgery",
}
"""What a plan is *about* ("the dinner", "my appointment"): shared by a reschedule and the plan it moves."""
EMOTIONS = re.compile(
    r"\b(heartbroken|devastated|terrified|scared|petrified|ecstatic|over the moon|thrilled|"
    r"so excited|so proud|proud of(?! me\b)|humiliated|embarrassed|ashamed|furious|cried|crying|in tears|"
    r"panic attack|grief|grieving|lonely|depressed|hopeless|i feel empty|overwhelmed|"
    r"burned out|burnt out|feeling (?:awful|terrible|guilty)|feel (?:so )?(?:awful|terrible|guilty)|so happy|hardest thing|means a lot|miss (?:him|her|them) so much)\b",
    re.IGNORECASE)
FILLER_TAIL = re.compile(
    r"(?:\s+(?:remember|btw|too|though|lol|haha|honestly|now|anymore|actually|either|also|"
    r"lately|these days|obviously|really|anyway|ever|by the way))+\s*$", re.IGNORECASE)
STOPWORDS = frozenset("""
a an the and or but so to of in on at for with from by about as is are was were be been am i me my
we our you your he she it they them his her its their this that these those it's i'm i've i'll i'd
just really got get going go gonna will would can could should have has had do does did not no yes
oh ugh also btw lol haha still now then there here what when where which who how all any some more
most very too up out over into than user user's assistant week weekend day today tomorrow tonight
next last morning evening night pm
""".split())  # noqa: SIM905
SYNONYMS = {"grandma": "grandmother", "granny": "grandmother", "grandpa": "grandfather",
            "mom": "mother", "mum": "mother", "dad": "father", "exams": "exam", "tickets": "ticket",
            "nan": "grandmother", "nana": "grandmother", "nanna": "grandmother", "gran": "grandmother",
            "grandad": "grandfather", "granddad": "grandfather", "gramps": "grandfather"}
PAST = re.compile(r"\b(was|were|did|went|broke|hurt|passed|yesterday|last night|last week|ago|"
                  r"used to|got back|came back)\b", re.IGNORECASE)
HYPOTHETICAL = re.compile(r"\b(if i (?:had|were|was|could|did|won|lived|didn't|got)|i'd|i would|would you|"
                          r"imagine|what if|hypothetically|pretend|in a story|someday|one day)\b", re.IGNORECASE)
HEDGE = re.compile(r"\b(?:maybe|perhaps|possibly|might|could|thinking (?:about|of)(?! (?:the|my|our|his|her|their)\b)|toying with|considering|"
                   r"not sure (?:if|whether|about)|wondering (?:if|whether|about)|we'?ll see|if the weather)\b|"
                   r"\ball I want\b|\bI wish\b|\bwould be (?:nice|lovely|great)\b", re.IGNORECASE)
"""Speculation ("maybe we could go to the coast on Sunday", "I might try pottery"): not a plan."""
HEALTH_EVENTS = (
    r"had (?:a|another) (?:bad |nasty |small |minor |big |bit of a )?(?:fall|stroke|mini-stroke|heart attack|seizure|"
    r"accident|car accident|crash|breakdown|operation)|fell|collapsed|passed out|fainted|"
    r"(?:was|got|is|'s|has been|been|went) (?:rushed |taken |admitted |airlifted |sent |back )?(?:in|into|to) "
    r"(?:the )?(?:hospital|a&e|icu|intensive care)|in (?:the )?(?:hospital|a&e|icu|intensive care)|"
    r"broke (?:her|his|their) \w+|(?:fractured|sprained|dislocated) (?:her|his|their) \w+|"
    r"(?:was|has been|got|just got|'s been) diagnosed with [\w' -]+|"
    r"has (?:cancer|dementia|covid|pneumonia|sepsis|appendicitis|a tumou?r|alzheimer's|parkinson's|shingles)|"
    r"with (?:appendicitis|pneumonia|covid|sepsis|a broken \w+|a heart attack|a stroke|an infection|"
    r"a chest infection|kidney stones|concussion|a concussion)|"
    r"(?:is having|had|needs|needed) (?:emergency )?(?:surgery|an operation|a bypass|chemo)|"
    r"(?:is|'s|has been|'s been) (?:really |very |so |quite )?(?:sick|ill|unwell|poorly)")
"""What happened when a relative's health is news: a fall, a stroke, hospital, a fracture, a diagnosis."""
NAME = r"(?-i:[A-Z][a-zA-Z'-]+)"
NAMES = NAME + r"(?: (?-i:(?:&|and(?= [A-Z])|[A-Z][a-zA-Z'-]+)))*"
"""A proper name of several words, "Harrow & Finch" and "Marks and Spencer" included."""
NOT_NAMES = {"I", "I'm", "I've", "I'll", "I'd", "Oh", "Ok", "Okay", "Yes", "No", "Yeah", "Hey",
             "Hi", "Ugh", "Also", "And", "But", "So", "The", "A", "An", "My", "We", "It", "Thanks",
             "Sure", "Guess", "Maybe", "Actually", "Anyway", "Big", "Nah", "Lol", "Omg", "Well",
             "Sadly", "Random", "Just", "She", "He", "They", "You", "Her", "His", "Their", "Our", "Your",
             "This", "That", "There", "Then", "What", "When", "Why", "How", "Who", "Where", "Not",
             # a request to the assistant opens on its verb ("Remind me to book ...")
             "Remind", "Tell", "Ask", "Let", "Help", "Please", "Pick", "Choose", "Give", "Make"}
INTERJECTIONS = {"Wow", "Yay", "Congrats", "Congratulations", "Omg", "Lol", "Haha", "Great", "Cool", "Nice",
                 "Ugh", "Damn", "Honestly", "Seriously", "Exactly", "Morning", "Evening", "Night", "Thanks",
                 "Sorry", "Please", "Same", "True", "Never", "Nope", "Yep", "Totally", "Anyway", "Finally"}
END = r"(?=\s+(?:so|and|but|because|since|which|now|remember)\b|[,.!?;]|$)"
"""Where a clause's object ends: a conjunction, punctuation, or the end."""
