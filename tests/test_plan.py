"""The retrieval decision: offline rules, the plan's JSON contract, and the LLM path."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from memfs.agent.llm.base import Completion, Message, Tool, ToolCall
from memfs.agent.plan import (
    PLAN_TOOL,
    RetrievalPlan,
    decide,
    extract_entities,
    plan_offline,
    plan_with_llm,
    search_query,
)

from memfs.errors import BadInputError, LLMError

UNRELATED = ["Work was long today.", "Sounds tiring! Did you get a break?"]


# ------------------------------------------------------------------ offline rules


@pytest.mark.parametrize("message", ["hey!", "Good morning :)", "thanks so much",
                                     "ok bye, talk later"])
def test_greetings_and_thanks_need_no_retrieval(message: str) -> None:
    plan = plan_offline(message, UNRELATED)
    assert not plan.need_retrieval
    assert plan.reason == "small talk"


@pytest.mark.parametrize("message", [
    "What's the boiling point of water in Fahrenheit?",
    "Translate 'see you soon' into Spanish.",
    "Can you help me write a limerick about cats?",
])
def test_general_knowledge_and_tasks_need_no_retrieval(message: str) -> None:
    assert not plan_offline(message, UNRELATED).need_retrieval


def test_remember_the_vet_story_triggers_a_search_for_the_vet() -> None:
    plan = plan_offline("remember the vet story?", UNRELATED)
    assert plan.need_retrieval
    assert "vet" in plan.search_query
    assert "remember" not in plan.search_query.lower() and "?" not in plan.search_query
    assert 0.5 < plan.confidence <= 1
    assert set(plan.memory_types) <= {"fact", "preference", "plan", "event", "relationship",
                                      "boundary"}


MENTIONED_NOT_ANSWERED = [
    # (message, where the topic is mentioned without the answer, where the answer is)
    ("Do you remember where I work?", "They talked about work.",
     "The user works at a bakery in Leeds."),
    ("when is my dentist appointment?", "The user keeps putting off the dentist appointment.",
     "The user's dentist appointment is on Tuesday at 4."),
    ("what's my sister's name again", "The user mentioned their sister.",
     "The user's sister is called Hana."),
    ("why did I quit piano?", "The user quit piano as a kid.",
     "The user quit piano as a kid because the teacher was strict."),
    ("how many kids does my cousin Maya have?", "Maya is the user's cousin; they talked about her kids.",
     "Maya, the user's cousin, has three kids."),
]


@pytest.mark.parametrize(("message", "mentioned", "answered"), MENTIONED_NOT_ANSWERED)
def test_a_summary_that_only_mentions_the_topic_does_not_answer(
        message: str, mentioned: str, answered: str) -> None:
    """Stop 41's case: "They talked about work." kept "where do I work?" from memory. A
    question is answered in context only where context holds an answer of its kind."""
    assert plan_offline(message, UNRELATED, summary=mentioned).need_retrieval
    plan = plan_offline(message, UNRELATED, summary=answered)
    assert not plan.need_retrieval
    assert plan.reason == "answered in summary"


def test_question_answered_in_the_window_is_skipped() -> None:
    message = "wait, when is Ana's recital again?"
    assert plan_offline(message, UNRELATED).need_retrieval
    window = [*UNRELATED, "Ana's piano recital is next Saturday at 6!", "How exciting!"]
    plan = plan_offline(message, window)
    assert not plan.need_retrieval
    assert plan.reason == "answered in window"


def test_question_answered_in_the_summary_is_skipped() -> None:
    message = "Do you think I'll pass my driving test?"
    summary = ("The user failed their first driving test in May and retakes the driving test "
               "on Friday.")
    assert plan_offline(message, UNRELATED).need_retrieval
    plan = plan_offline(message, UNRELATED, summary=summary)
    assert not plan.need_retrieval
    assert plan.reason == "answered in summary"


def test_question_answered_in_the_pins_is_skipped() -> None:
    message = "what's my cousin's name again?"
    assert plan_offline(message, UNRELATED).need_retrieval
    plan = plan_offline(message, UNRELATED, pins="- My cousin is called Teo\n- Vegan")
    assert not plan.need_retrieval
    assert plan.reason == "answered in pins"


def test_suggestion_where_diet_matters_searches_unless_the_constraint_is_in_context() -> None:
    plan = plan_offline("Any dinner ideas for tonight?", UNRELATED)
    assert plan.need_retrieval
    assert "preference" in plan.memory_types
    window = ["Ravi is coming over.", "Ravi is vegetarian and hates mushrooms."]
    assert plan_offline("What should I cook for Ravi?", UNRELATED).need_retrieval
    assert not plan_offline("What should I cook for Ravi?", window).need_retrieval


def test_a_name_already_in_the_window_does_not_trigger_a_search_by_itself() -> None:
    assert plan_offline("Kofi just called me back!", UNRELATED).need_retrieval
    window = ["I'm waiting for Kofi to call about the flat.", "Fingers crossed!"]
    assert not plan_offline("Kofi just called me back!", window).need_retrieval


def test_how_to_questions_and_quoted_text_are_not_about_the_user() -> None:
    assert not plan_offline("How do I get wax out of a tablecloth?", UNRELATED).need_retrieval
    assert not plan_offline("Make this polite: 'I told you my rent is late again'",
                            UNRELATED).need_retrieval
    assert plan_offline("How do I tell my sister I'm moving?", UNRELATED).need_retrieval


@pytest.mark.parametrize("message", [
    "Oh no, Grandpa is back in the hospital.",
    "What was that podcast you told me about?",
    "Mum's visiting Sunday, what should we bake?",
])
def test_indirect_references_to_the_users_life_trigger_a_search(message: str) -> None:
    assert plan_offline(message, UNRELATED).need_retrieval


@pytest.mark.parametrize("message, scope", [
    ("Is Jun still working at the hospital?", "most_recent"),
    ("Where do I live now, do you remember?", "most_recent"),
    ("What did I used to do on Sundays, remember?", "past"),
    ("Back when I lived in Osaka, what was my favourite cafe?", "past"),
    ("How did my exam go last year?", "past"),
    ("Do you remember my favourite colour?", "any"),
])
def test_time_scope(message: str, scope: str) -> None:
    plan = plan_offline(message, UNRELATED)
    assert plan.need_retrieval
    assert plan.time_scope == scope


def test_entities_are_names_and_the_user() -> None:
    plan = plan_offline("So Tom texted me, and then Priya's mum called on Friday.", UNRELATED)
    assert plan.entities == ("user", "Tom", "Priya")


@pytest.mark.parametrize("text, names", [
    ("What did Lin say?", ["Lin"]),
    ("Ugh. So. Anyway, Biscuit's ear is better.", ["Biscuit"]),
    ("Remember when I met Dana in March?", ["Dana"]),
    ("I think OK is fine.", []),
])
def test_extract_entities_skips_sentence_initial_function_words(
    text: str, names: list[str]
) -> None:
    assert extract_entities(text) == names


def test_search_query_drops_filler_and_keeps_entities() -> None:
    query = search_query("Hey, do you remember what Lin said about my promotion?")
    assert "Lin" in query and "promotion" in query
    for filler in ("Hey", "remember", "?"):
        assert filler not in query
    assert "the user's promotion" in query


# ------------------------------------------------------------------ the plan as JSON


GOOD: dict[str, Any] = {
    "need_retrieval": True, "memory_types": ["relationship", "event"], "entities": ["user", "Lin"],
    "time_scope": "most_recent", "search_query": "the user's most recent argument with Lin",
    "confidence": 0.93, "reason": "asks about a past argument",
}


def test_plan_json_round_trip() -> None:
    plan = RetrievalPlan.from_dict(GOOD)
    assert plan.memory_types == ("relationship", "event")
    assert RetrievalPlan.from_json(plan.to_json()) == plan
    assert json.loads(plan.to_json())["entities"] == ["user", "Lin"]


@pytest.mark.parametrize("change, field", [
    ({"need_retrieval": "yes"}, "need_retrieval"),
    ({"memory_types": "fact"}, "memory_types"),
    ({"memory_types": ["relationship_event"]}, "memory_types"),
    ({"entities": ["user", 3]}, "entities"),
    ({"time_scope": "yesterday"}, "time_scope"),
    ({"confidence": 1.5}, "confidence"),
    ({"confidence": True}, "confidence"),
    ({"search_query": "  "}, "search_query"),
    ({"search_query": None}, "search_query"),
])
def test_bad_fields_are_refused_with_the_field_named(change: dict[str, Any], field: str) -> None:
    bad = {**GOOD, **change}
    with pytest.raises(BadInputError, match=field):
        RetrievalPlan.from_dict(bad)
    with pytest.raises(LLMError, match=field):
        RetrievalPlan.from_dict(bad, error=LLMError)


def test_missing_field_and_bad_json_are_refused() -> None:
    with pytest.raises(BadInputError, match="time_scope: missing"):
        RetrievalPlan.from_dict({k: v for k, v in GOOD.items() if k != "time_scope"})
    with pytest.raises(BadInputError, match="not valid JSON"):
        RetrievalPlan.from_json("{need_retrieval: true")
    with pytest.raises(BadInputError, match="expected an object"):
        RetrievalPlan.from_json("[1, 2]")


# ------------------------------------------------------------------ the LLM path


class ScriptedPlanner:
    """An ``LLM`` that answers each call with the next scripted tool input (or raises it)."""

    name = "scripted"

    def __init__(self, *replies: dict[str, Any] | Exception) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []

    def complete(self, system: Sequence[str], messages: Sequence[Message], *,
                 tools: Sequence[Tool] = (), tool_choice: str | None = None,
                 max_tokens: int = 1024) -> Completion:
        self.calls.append({"system": list(system), "messages": list(messages),
                           "tools": list(tools), "tool_choice": tool_choice})
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return Completion(text="", tool_calls=[ToolCall("call-1", PLAN_TOOL.name, reply)],
                          stop_reason="tool_use")

    def stream(self, system: Sequence[str], messages: Sequence[Message]) -> Iterator[str]:
        raise AssertionError("the planner never streams")


def test_plan_with_llm_parses_the_forced_tool_call_and_shows_the_context() -> None:
    llm = ScriptedPlanner(GOOD)
    plan = plan_with_llm(llm, "Did Lin and I ever make up?", ["hi", "hello!"],
                         summary="The user works in Leeds.", pins="- Allergic to peanuts")
    assert plan == RetrievalPlan.from_dict(GOOD)
    call = llm.calls[0]
    assert [t.name for t in call["tools"]] == [PLAN_TOOL.name]
    prompt = call["messages"][-1]["content"]
    for part in ("Did Lin and I ever make up?", "The user works in Leeds.",
                 "Allergic to peanuts", "hello!"):
        assert part in prompt
    assert "retrieval_plan" in call["system"][0]


def test_plan_with_llm_falls_back_to_rules_when_the_provider_fails() -> None:
    plan = plan_with_llm(ScriptedPlanner(LLMError("503 overloaded")), "remember the vet story?", [])
    assert plan.need_retrieval and "vet" in plan.search_query
    assert plan.reason.startswith("llm failed") and "503 overloaded" in plan.reason


def test_plan_with_llm_falls_back_when_the_answer_stays_invalid() -> None:
    bad = {**GOOD, "time_scope": "yesterday"}
    llm = ScriptedPlanner(bad, bad)
    plan = plan_with_llm(llm, "hello!", [])
    assert not plan.need_retrieval
    assert "time_scope" in plan.reason and plan.reason.endswith("small talk")


def test_plan_with_llm_refuses_a_search_without_a_query() -> None:
    plan = plan_with_llm(ScriptedPlanner({**GOOD, "search_query": ""}), "hello!", [])
    assert not plan.need_retrieval
    assert "search_query" in plan.reason


def test_plan_with_llm_accepts_a_repaired_answer() -> None:
    llm = ScriptedPlanner({**GOOD, "confidence": "high"}, GOOD)
    assert plan_with_llm(llm, "Did Lin and I ever make up?", []) == RetrievalPlan.from_dict(GOOD)
    assert len(llm.calls) == 2


def test_decide_uses_rules_without_a_real_model() -> None:
    offline = ScriptedPlanner()
    offline.name = "offline"
    assert decide(None, "hi!", []) == plan_offline("hi!", [])
    assert decide(offline, "remember the vet story?", []).need_retrieval
    assert offline.calls == []
    model = ScriptedPlanner(GOOD)
    assert decide(model, "hi!", []) == RetrievalPlan.from_dict(GOOD)
    assert len(model.calls) == 1


def test_a_constraint_answers_a_suggestion_only_in_its_own_domain() -> None:
    """'Hates horror films' in the summary says nothing about which snack is safe."""
    from memfs.agent.plan import plan_offline

    question = "Can you suggest a snack for my movie night?"
    assert plan_offline(question, [], "The user hates horror films.", "").need_retrieval
    both = plan_offline(question, [], "The user hates horror films. The user is allergic to peanuts.", "")
    assert not both.need_retrieval and both.reason == "answered in summary"
    assert not plan_offline("Any snack ideas?", [], "", "- Allergic to peanuts").need_retrieval


def test_a_question_naming_something_memory_knows_is_a_cue() -> None:
    from memfs.agent.plan import plan_offline

    assert not plan_offline("When is the Harbor deadline?", [], "", "").need_retrieval
    plan = plan_offline("When is the Harbor deadline?", [], "", "", memory_names={"harbor"})
    assert plan.need_retrieval and "Harbor" in plan.search_query
    assert not plan_offline("Who was Napoleon?", [], "", "", memory_names={"harbor"}).need_retrieval
