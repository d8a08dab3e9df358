"""Card bodies read as English: the user's sentence in the third person (issue 13, point 3).

The sentences here are new (in no data set): each case is one rule of the convention in the
README ("How card bodies are written"), so a failure names the rule that broke.
"""

from __future__ import annotations

import pytest
from memfs.agent.dream.cardtext import write_body
from memfs.agent.dream.extract_offline import OfflineExtractor
from memfs.agent.dream.person import first_person, third_person
from memfs.agent.dream.runner import run_pending

from memfs.embed import Embedder
from memfs.gitio import run_git
from memfs.store import MemoryPair
from tests._fakes_dream import NOW, chat


@pytest.mark.parametrize("said,body", [
    # the first mention is "the user", every later one they / them / their / theirs / themself
    ("i think my boss likes me", "the user thinks their boss likes them"),
    ("that flat was mine before i moved", "that flat was the user's before they moved"),
    ("me and my cousin run a stall", "the user and their cousin run a stall"),
    ("i built the shed myself", "the user built the shed themself"),
    ("my own bike got nicked", "the user's own bike got nicked"),
    # a present verb after "the user" takes -s / -es / -ies or its irregular form; after "they" not
    ("i bake bread on fridays", "the user bakes bread on fridays"),
    ("i brush the horses at dawn", "the user brushes the horses at dawn"),
    ("i teach maths", "the user teaches maths"),
    ("i mix the paint", "the user mixes the paint"),
    ("i study at night", "the user studies at night"),
    ("i play darts", "the user plays darts"),
    ("i go swimming when i can", "the user goes swimming when they can"),
    ("i do the school run", "the user does the school run"),
    ("i have two cats", "the user has two cats"),
    ("i am a welder", "the user is a welder"),
    ("i bring lunch from home", "the user brings lunch from home"),
    ("i discuss it with nobody", "the user discusses it with nobody"),
    ("i dont own a car", "the user doesnt own a car"),
    ("i don’t own a car", "the user doesn’t own a car"),
    ("i haven't decided", "the user hasn't decided"),
    ("when i sleep i dream of trains", "when the user sleeps they dream of trains"),
    # adverbs between subject and verb stay where they are
    ("i literally never sleep", "the user literally never sleeps"),
    ("i lowkey adore opera", "the user lowkey adores opera"),
    ("i kind of regret it", "the user kind of regrets it"),
    ("i no longer eat pork", "the user no longer eats pork"),
    # past tenses, participles and modals do not change; a same-form verb is past unless habitual
    ("i sold my van", "the user sold their van"),
    ("i tried yoga once", "the user tried yoga once"),
    ("i used to row", "the user used to row"),
    ("i can juggle", "the user can juggle"),
    ("i quit my band", "the user quit their band"),
    ("i always put sugar in", "the user always puts sugar in"),
    ("i need glasses", "the user needs glasses"),
    # first-person contractions expand
    ("im a twin", "the user is a twin"),
    ("i'm not a fan and i'm done", "the user is not a fan and they are done"),
    ("i've moved twice and ive hated it", "the user has moved twice and they have hated it"),
    ("i'll cope", "the user will cope"),
    ("i'd rather walk", "the user would rather walk"),
    ("i'd never flown before", "the user had never flown before"),
    ("am i the problem", "is the user the problem"),
    # a second verb of the same subject agrees; a second object does not
    ("i get up and walk the dog", "the user gets up and walks the dog"),
    ("i cook and clean", "the user cooks and cleans"),
    ("i like tea and toast", "the user likes tea and toast"),
    ("i want to cook and clean less", "the user wants to cook and clean less"),
    ("sam and i share a flat", "sam and the user share a flat"),
    # every other word stays as typed
    ("ok so u know i hate gonna-be plans 🙃", "ok so u know the user hates gonna-be plans 🙃"),
    ("we love our street and i r happy", "we love our street and the user r happy"),
    ("i'm gonna quit", "the user is gonna quit"),
    ("oh my god i passed", "oh my god the user passed"),
    ("the coal mine is where i work", "the coal mine is where the user works"),
])
def test_the_users_sentence_in_the_third_person(said: str, body: str) -> None:
    assert third_person(said) == body


def test_a_body_keeps_the_users_words_and_reads_as_a_sentence() -> None:
    assert write_body("honestly i hate mornings lol", None) == "Honestly the user hates mornings lol."
    assert write_body("i passed!!", None) == "The user passed!!"
    assert write_body("she's 3 and i adore her 🥹", None) == "She's 3 and the user adores her 🥹"
    assert write_body("she taught me to knit", None, "my gran is 90") == \
        "The user's gran is 90. She taught the user to knit."


@pytest.mark.parametrize("body,said", [
    ("The user literally never sleeps.", "I literally never sleep."),
    ("The user watches their weight.", "I watch my weight."),
    ("The user carries an EpiPen.", "I carry an EpiPen."),
    ("The user is a twin and doesn't drive.", "I am a twin and doesn't drive."),
    ("His boss shouted at the user.", "His boss shouted at me."),
    ("The user built it themself.", "I built it myself."),
])
def test_a_body_reads_back_in_the_first_person_for_the_rules(body: str, said: str) -> None:
    assert first_person(body) == said


def test_a_card_written_by_a_dream_reads_as_english(pair: MemoryPair, real_embedder: Embedder) -> None:
    chat(pair, ["I teach chemistry at a secondary school in Leeds and I coach the netball team.",
                "That sounds like a full week!",
                "My sister Ruth watches my dog when I travel for work.",
                "That's kind of her."])

    [result] = run_pending(pair, extractor=OfflineExtractor(real_embedder), now=NOW).results

    assert result.status == "merged", result
    teach = "The user teaches chemistry at a secondary school in Leeds and they coach the netball team."
    [card] = [c for c in pair.cards() if "chemistry" in c.body]
    assert card.body == teach
    assert teach in run_git(pair.root, "show", f"HEAD:cards/{card.id}.md")  # what git log readers see
