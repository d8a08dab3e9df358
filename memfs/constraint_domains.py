"""The domain model of suggestion requests: what a request in each domain sounds like,
what each domain is about, and what a limit sounds like *in* each domain.

A limit stated once in passing ("the braces mean nothing sticky until summer") shares
almost nothing with the request it rules out ("snacks for the cinema?"), and a generic
limit detector cannot tell it from the user's other limits (a food limit is no answer to a
concert). So each domain carries prototype limits by cause (allergy or reaction, a medical
order, medication, the body's abilities and senses, fear, belief, money, time, dependents,
documents), written in general terms — none of them is a probe's sentence. A statement is
in the domain's constraints when it is close to one of them. Embedded once per model
through the pair's vector cache, as ``memfs.salience``'s prototypes are.
"""

from __future__ import annotations

DOMAINS = ("food", "drink", "activity", "gift", "place")

REQUESTS: dict[str, tuple[str, ...]] = {
    "food": ("What should I cook for dinner?", "Can you suggest a recipe?",
             "Recommend somewhere to eat.", "Any snack ideas?", "What should I bake?",
             "What should I order to eat tonight?"),
    "drink": ("What should I drink?", "Recommend a cocktail.", "Suggest a drink to order.",
              "What should I have to drink at the party?"),
    "activity": ("What should we do this weekend?", "Suggest something fun to do.",
                 "Any ideas for an outing or an activity?", "What should I do tonight?"),
    "gift": ("What gift should I buy for her?", "Present ideas for his birthday?",
             "What should I give them?"),
    "place": ("Where should I go on holiday?", "Recommend a place to stay.",
              "Suggest somewhere to visit.", "Where should we go out?"),
}
"""What a request for a suggestion in each domain sounds like (to classify a request)."""

CASUAL: dict[str, tuple[str, ...]] = {
    "food": ("No idea what to cook this week, thoughts?", "What's good to eat tonight?",
             "I need something to make for dinner, help.", "What's worth ordering off the menu?"),
    "drink": ("What's good to drink right now?", "I need a drink to perk me up.",
              "What should I get at the bar?", "Which drink is the one to go for?"),
    "activity": ("We've got a free day and nothing planned, thoughts?",
                 "I'm bored, what could we do?", "Would that be a fun thing to do?",
                 "Stuck for plans this weekend."),
    "gift": ("I'm stuck on what to get her for her birthday.", "No idea what present to buy him.",
             "What would they like as a present?", "Any thoughts on a gift?"),
    "place": ("Where's a good place to go for a break?", "Anywhere nice to stay you'd point me to?",
              "Help me pick somewhere to go.", "Where's good for a night out?"),
}
"""The same requests as people type them: a suggestion only implied ("thoughts?", "I'm
stuck on…", "what's good…"), in general terms for each domain."""

OPTIONS: dict[str, tuple[str, ...]] = {
    "food": ("A dish to eat.", "A meal, a recipe or something to cook.", "A snack or a dessert.",
             "Something on the menu to eat."),
    "drink": ("A drink.", "A glass of something to drink.", "A hot drink or a cold one.",
              "A beer, a glass of wine or a cocktail.", "A round of drinks at the bar.",
              "A coffee, a tea or a hot chocolate."),
    "activity": ("A hobby or a sport to take up.", "A class or a club to join.",
                 "An outing, a tour or an experience.", "A ride, a game or something fun to do."),
    "gift": ("A present for someone.", "A birthday present.", "Something to give them.",
             "A gift for their home."),
    "place": ("A place to visit.", "A holiday destination, a city or a country.",
              "A hotel or somewhere to stay.", "A restaurant or a venue to go to.",
              "A day out somewhere.", "Somewhere to go for a treat or a break."),
}
"""What the thing asked about *is* in each domain, as a noun phrase: for a request to choose
or approve ("…, a pot of tea?"), whose words are the option, not a request's."""

NOT_REQUESTS: tuple[str, ...] = (
    "We had a lovely dinner out last night.", "I cooked a big meal for everyone yesterday.",
    "What did we eat at that restaurant?", "What was the drink you recommended?",
    "Which place did you suggest last time?", "I bought her a present last week.",
    "The trip was great, we loved the hotel.", "Where did we go on holiday last year?",
    "I went for a run this morning.", "How do I boil an egg?", "What's the capital of France?",
    "I've been drinking a lot of tea lately.", "Thanks, that was a great idea.",
    "How are you today?", "Can you help me write an email?",
)
"""What is not a request for a suggestion though it touches the domains: news, questions
about the past or about what the assistant said, questions of fact, small talk."""

TOPICS: dict[str, tuple[str, ...]] = {
    "food": ("Food and eating.", "Meals, snacks and cooking.", "What I eat."),
    "drink": ("Drinks.", "What I drink.", "Having something to drink."),
    "activity": ("Things to do for fun.", "Going out and doing activities.",
                 "Sports, outings and hobbies."),
    "gift": ("Presents for someone.", "What they would like to receive.",
             "Buying a gift."),
    "place": ("Places to go and stay.", "Travelling somewhere.", "Where we go."),
}
"""What each domain is about, as a topic (a constraint must be about the domain)."""

DOMAIN_LIMITS: dict[str, tuple[str, ...]] = {
    "food": (
        "I'm allergic to some foods and react badly if I eat them.",
        "Certain ingredients upset my stomach for days.",
        "My doctor has put me on a strict diet and some foods are banned.",
        "I can't eat that because of a medical condition.",
        "Some foods interfere with the medication I take.",
        "My teeth make it hard to chew or bite some foods.",
        "I don't eat animal products for ethical reasons.",
        "My religion doesn't allow me to eat certain foods.",
        "I'm trying to lose weight so I avoid rich food.",
        "I hate the taste of it and can't eat it.",
    ),
    "drink": (
        "I don't drink alcohol any more.",
        "I'm sober and stay away from drinking.",
        "Caffeine keeps me up and makes my heart race.",
        "Some drinks interfere with the medication I take.",
        "My doctor limits how much I'm allowed to drink.",
        "Cold or acidic drinks hurt my teeth.",
        "I'm allergic to something in certain drinks.",
        "I have to avoid sugary drinks because of my health.",
        "Fizzy drinks upset my stomach.",
    ),
    "activity": (
        "My body can't manage strenuous exercise because of an injury.",
        "I have a health condition that limits what I can do physically.",
        "I can't do that because of my heart or my breathing.",
        "Loud noise and crowds overwhelm me.",
        "I'm terrified of it and panic when I try.",
        "I can't hear or see well enough to enjoy that.",
        "Heat, cold or sun make me unwell.",
        "My working hours mean I'm not free at those times.",
        "I can't afford expensive outings right now.",
        "I have to look after someone, so I can't go out for long.",
        "It makes me dizzy or sick.",
    ),
    "gift": (
        "She has a condition that means she can't use that kind of thing.",
        "He can't manage fiddly things with his hands any more.",
        "They don't use anything made from animals.",
        "She's allergic to it.",
        "He doesn't drink, so alcohol is no good for him.",
        "She's too young for that, it wouldn't be safe for her.",
        "He can't see certain colours or read small print.",
        "They don't have room for more stuff.",
        "Their religion doesn't allow it.",
        "She really dislikes that.",
    ),
    "place": (
        "I can't fly, it terrifies me.",
        "I can't manage stairs or walk far.",
        "I get ill at high altitude or at sea.",
        "Hot or cold climates make me unwell.",
        "I can't travel abroad right now because of my papers.",
        "I can't sleep anywhere noisy.",
        "Insect bites and the sun are a real problem for me.",
        "We have to take the dog or the kids with us.",
        "I can't drive, so it has to be reachable without a car.",
        "I can't afford an expensive trip at the moment.",
        "Crowded places make me panic.",
    ),
}
"""What a limit sounds like in each domain, one sentence per cause (the domain model)."""

LIMITS: tuple[str, ...] = (
    "I can't have that, it makes me ill.", "I'm allergic to it.",
    "My doctor told me to stay away from it.", "I gave it up for good.",
    "That's off limits for me now.", "It's against my beliefs, so I never do it.",
    "That frightens me, so I avoid it.", "It makes me anxious and I have to leave.",
    "My body can't cope with that any more.", "I'm not able to do that because of my condition.",
    "I can't afford much at the moment.", "I can't get there on my own.",
    "She can't stand it.", "He isn't allowed to have that.",
    "We always have to take them with us.",
)
"""What a constraint sounds like in any domain: a limit, whatever its cause (health,
belief, fear, money, access, dependents; for the user or the person a gift is for)."""
NEWS: tuple[str, ...] = (
    "We had a takeaway last night.", "I tried a new recipe today.",
    "My friend is moving away and I'm sad.", "I'm learning a new language.",
    "Work was stressful this week.", "I went to a concert at the weekend.",
    "I bought a new jacket.", "I'm so tired today.", "The weather has been awful.",
    # "can't" and complaints that are not limits
    "I can't wait for the weekend.", "I couldn't stop laughing.",
    "A colleague is really annoying me at work.",
)
"""Personal news that is not a limit: what salient small talk sounds like."""

CIRCUMSTANCES: tuple[str, ...] = (
    "I have a serious allergy and have to be careful.",
    "My child has a medical condition we have to plan around.",
    "Since the operation the doctor says I must be careful for months.",
    "The specialist told me to avoid it completely.",
    "I'm on medication that rules some things out.",
    "My parent can't get around like they used to.",
    "Religious rules decide a lot of what we do.",
    "Money is really tight for us at the moment.",
    "My partner has a health problem that limits what we can do.",
    "It triggers a bad reaction every time.",
    "I've been in recovery for a while and stay away from it.",
    "My health means I have to be careful now.",
)
"""A standing circumstance that binds the user, whatever the domain: theirs, or of someone
they look after, live with or buy for. With ``LIMITS`` and every domain's
``DOMAIN_LIMITS`` these are what the write-time limit score (``memfs.salience.
message_limit``) measures a row against."""
