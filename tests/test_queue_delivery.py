"""One delivery of a dream job, without the broker: what makes a repeat harmless, and what
a job from a hostile or confused queue cannot do."""

from __future__ import annotations

from pathlib import Path

import pytest
from memfs.agent.dream.worktree import already_merged
from memfs.agent.jobs.delivery import deliver

from memfs.app import MemoryStore
from memfs.compaction import pending_events
from memfs.config import Config, load_config
from memfs.errors import BadInputError, InvalidIdError, NotARepoError
from tests.test_queue import conversation


def test_a_job_dreams_once_and_its_repeats_do_nothing(isolated_env: Path) -> None:
    store = MemoryStore(isolated_env, config=Config(window_budget=60, dream_trigger="off",
                                                    offline_extractor="rules"))
    pair = store.pair("alex", "mira")
    pair.add_messages(conversation(5, "alex"))
    (event,) = pending_events(pair.root)
    first = deliver(store, "alex", "mira", event.id)
    assert first.status == "merged" and first.merge == already_merged(pair.root, event.id)
    head = pair.repo.head()
    again = deliver(store, "alex", "mira", event.id)
    assert (again.status, again.merge) == ("already-dreamed", first.merge)
    assert deliver(store, "alex", "mira", "e-20990101T000000-abcdef").status == "not-pending"
    assert pair.repo.head() == head


@pytest.mark.parametrize("user, character", [("../alex", "mira"), ("alex", "mira/../../x")])
def test_a_job_naming_a_path_is_refused_before_any_file_is_touched(
        isolated_env: Path, user: str, character: str) -> None:
    store = MemoryStore(isolated_env)
    with pytest.raises(InvalidIdError):
        deliver(store, user, character, "e-1")
    assert not isolated_env.exists()


def test_a_job_for_a_pair_this_home_does_not_have_is_an_error(isolated_env: Path) -> None:
    with pytest.raises(NotARepoError):
        deliver(MemoryStore(isolated_env), "nobody", "mira", "e-1")
    assert not (isolated_env / "nobody").exists()


def test_a_rules_only_worker_never_loads_the_embedding_model(isolated_env: Path) -> None:
    from memfs.agent.dream.runner import make_extractor
    from memfs.agent.llm.registry import get_llm

    store = MemoryStore(isolated_env, config=Config(offline_extractor="rules"))
    extractor = make_extractor(get_llm("offline", None), store.pair("alex", "mira"))
    assert extractor.embedder is None  # type: ignore[attr-defined]
    assert store._embedder is None
    with pytest.raises(BadInputError, match="offline_extractor: must be one of embedding, rules"):
        load_config({"MEMFS_OFFLINE_EXTRACTOR": "model"}, str(isolated_env))
