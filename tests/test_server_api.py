"""The HTTP API in-process (FastAPI's TestClient over ASGI): documents, keys, bad input.

What a user of ``memfs serve`` relies on: the body of each endpoint is the document
``memfs ... --json`` prints for the same pair; a key reaches only its user's pairs; a
mistake is a 4xx naming the field, never a 500, a traceback or a changed file.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memfs import gitio
from memfs.compaction import pending_events
from memfs.history import iter_messages
from memfs.index import open_index_count
from memfs.runtime.host import Host
from memfs.server.app import create_app
from tests._serve import bearer, make_host
from tests.conftest import card_text

P = "/v1/pairs/alex/mira"


@pytest.fixture
def host(isolated_env: Path, fresh_indexes: None) -> Host:
    return make_host(isolated_env)


@pytest.fixture
def keys(host: Host) -> dict[str, str]:
    return {"alex": host.keys.add("alex")[1], "sam": host.keys.add("sam")[1],
            "admin": host.keys.add(None)[1]}


@pytest.fixture
def client(host: Host, keys: dict[str, str]) -> Any:
    with TestClient(create_app(host), headers=bearer(keys["alex"])) as client:
        assert client.put(P).status_code == 201
        yield client


def _seed(client: TestClient, host: Host) -> str:
    """A pin, a committed card, two messages; returns the card commit."""
    client.post(P + "/pins", json={"text": "Allergic to peanuts"}).raise_for_status()
    pair = host.store.pair("alex", "mira", create=False)
    sha = pair.repo.commit({"cards/c-1a2b3c.md": card_text("c-1a2b3c", "Alex runs on Sundays.")},
                           "card", "add c-1a2b3c", gitio.USER)
    client.post(P + "/messages", json={"messages": [
        {"role": "user", "content": "I went running in the park"},
        {"role": "assistant", "content": "Lovely!"}]}).raise_for_status()
    assert sha
    return sha


def test_each_response_is_the_document_the_cli_prints(client: TestClient, host: Host,
                                                      run_cli: Any) -> None:
    sha = _seed(client, host)
    (host.store.home / "alex" / "mira" / "system" / "notes.md").write_text("hand edit\n")
    pairs = [("/pins", ["pin", "ls"]), ("/cards", ["card", "ls"]),
             ("/cards/c-1a2b3c", ["card", "show", "c-1a2b3c"]), ("/log?n=5", ["log", "-n", "5"]),
             ("/diff", ["diff"]), (f"/diff?rev={sha}", ["diff", sha]),
             (f"/commits/{sha}", ["show", sha])]
    for path, argv in pairs:
        cli = run_cli("--home", str(host.store.home), "-u", "alex", "-c", "mira", *argv, "--json")
        assert cli.code == 0, cli.err
        assert client.get(P + path).json() == cli.json(), path
    cli = run_cli("--home", str(host.store.home), "-u", "alex", "-c", "mira", "check", "--json")
    assert client.post(P + "/check").json() == cli.json()


def test_the_verbs_change_memory_as_the_cli_would(client: TestClient, host: Host) -> None:
    _seed(client, host)
    ctx = client.post(P + "/context", json={"message": "Any snack ideas?"}).json()
    assert "Allergic to peanuts" in ctx["system"] and ctx["messages"][-1]["content"] == \
        "Any snack ideas?"
    hits = client.post(P + "/search", json={"query": "running park", "k": 3}).json()
    assert hits["query"] == "running park"
    assert any("running in the park" in h["text"] for h in hits["hits"])
    removed = client.delete(P + "/pins/1").json()
    assert (removed["removed"], removed["pins"]) == ("Allergic to peanuts", [])
    undone = client.post(P + "/revert", json={"rev": removed["commit"]}).json()
    assert undone["reverted"] == removed["commit"]
    assert client.get(P + "/pins").json()["pins"] == [{"n": 1, "text": "Allergic to peanuts"}]
    assert client.put(P).status_code == 200  # init again: nothing new
    assert client.post(P + "/dream").json() == {"busy": False, "dreams": []}


def test_keys_reach_only_their_users_pairs(host: Host, keys: dict[str, str]) -> None:
    app = create_app(host)
    with TestClient(app) as anonymous:
        assert TestClient(app, headers=bearer(keys["alex"])).put(P).status_code == 201
        assert TestClient(app, headers=bearer(keys["sam"])).put("/v1/pairs/sam/mira").status_code == 201
        none = anonymous.get(P + "/pins")
        assert none.status_code == 401 and none.json()["field"] == "authorization"
        assert none.headers["www-authenticate"] == "Bearer"
        assert anonymous.get(P + "/pins", headers=bearer("mfs_0000_nope")).status_code == 401
        other = anonymous.get(P + "/pins", headers=bearer(keys["sam"]))
        assert other.status_code == 403 and other.json()["field"] == "user"
        assert anonymous.get("/v1/pairs", headers=bearer(keys["sam"])).json() == {
            "pairs": [{"user": "sam", "character": "mira", "path": "sam/mira"}]}
        assert len(anonymous.get("/v1/pairs", headers=bearer(keys["admin"])).json()["pairs"]) == 2
        alex_id = keys["alex"].split("_")[1]
        host.keys.remove(alex_id)  # `memfs key rm` while the server runs
        assert anonymous.get(P + "/pins", headers=bearer(keys["alex"])).status_code == 401


def test_openapi_documents_every_endpoint_of_the_design(host: Host) -> None:
    client = TestClient(create_app(host))
    spec = client.get("/openapi.json").json()
    routes = {(method.upper(), path.removeprefix("/v1/pairs/{user}/{character}") or "/")
              for path, item in spec["paths"].items() for method in item}
    assert routes >= {("GET", "/v1/health"), ("GET", "/v1/pairs"), ("PUT", "/"),
                      ("GET", "/pins"), ("POST", "/pins"), ("DELETE", "/pins/{n}"),
                      ("GET", "/cards"), ("GET", "/cards/{card_id}"), ("POST", "/messages"),
                      ("POST", "/context"), ("POST", "/search"), ("GET", "/log"),
                      ("GET", "/commits/{rev}"), ("GET", "/diff"), ("POST", "/revert"),
                      ("POST", "/dream"), ("POST", "/check")}
    assert "bearer" in str(spec["components"]["securitySchemes"]).lower()
    assert client.get("/docs").status_code == 200


def test_loopback_without_any_key_is_open_and_stops_being_open_at_the_first_key(
        isolated_env: Path) -> None:
    host = make_host(isolated_env, allow_open=True)
    with TestClient(create_app(host)) as client:
        assert client.put(P).status_code == 201
        host.keys.add("sam")
        assert client.get(P + "/pins").status_code == 401


BAD: list[tuple[str, str, Any, int, str]] = [
    # method, path under /v1, body (bytes = raw), status, field
    ("POST", "/pairs/alex/mira/pins", b"{not json", 400, "body"),
    ("POST", "/pairs/alex/mira/pins", b'{"text": "a",}', 400, "body"),
    ("POST", "/pairs/alex/mira/pins", b"", 422, "body"),
    ("POST", "/pairs/alex/mira/pins", [1, 2], 422, "body"),
    ("POST", "/pairs/alex/mira/pins", {}, 422, "text"),
    ("POST", "/pairs/alex/mira/pins", {"text": ""}, 422, "text"),
    ("POST", "/pairs/alex/mira/pins", {"text": 5}, 422, "text"),
    ("POST", "/pairs/alex/mira/pins", {"text": "a", "colour": "red"}, 422, "colour"),
    ("POST", "/pairs/alex/mira/pins", {"text": "   "}, 400, "text"),
    ("DELETE", "/pairs/alex/mira/pins/0", None, 422, "n"),
    ("DELETE", "/pairs/alex/mira/pins/x", None, 422, "n"),
    ("DELETE", "/pairs/alex/mira/pins/7", None, 404, "n"),
    ("POST", "/pairs/alex/mira/messages", {"messages": []}, 422, "messages"),
    ("POST", "/pairs/alex/mira/messages", {"messages": "hi"}, 422, "messages"),
    ("POST", "/pairs/alex/mira/messages", {"messages": [{"role": "bot", "content": "x"}]}, 422,
     "messages[0].role"),
    ("POST", "/pairs/alex/mira/messages", {"messages": [{"role": "user"}]}, 422,
     "messages[0].content"),
    ("POST", "/pairs/alex/mira/messages", {"messages": [{"role": "user", "content": 3}]}, 422,
     "messages[0].content"),
    ("POST", "/pairs/alex/mira/messages",
     {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b", "ts": "soon"}]},
     400, "messages[1].ts"),
    ("POST", "/pairs/alex/mira/messages",
     {"messages": [{"role": "user", "content": "a", "session": "../x"}]}, 400,
     "messages[0].session"),
    ("POST", "/pairs/alex/mira/messages",
     {"messages": [{"role": "user", "content": "a"}], "session": "../../etc"}, 400, "session"),
    ("POST", "/pairs/alex/mira/messages", {"message": [{"role": "user", "content": "a"}]}, 422,
     "messages"),
    ("POST", "/pairs/alex/mira/context", {}, 422, "message"),
    ("POST", "/pairs/alex/mira/context", {"message": ""}, 422, "message"),
    ("POST", "/pairs/alex/mira/context", {"message": "   "}, 400, "message"),
    ("POST", "/pairs/alex/mira/context", {"message": ["a"]}, 422, "message"),
    ("POST", "/pairs/alex/mira/search", {"query": ""}, 422, "query"),
    ("POST", "/pairs/alex/mira/search", {"query": "   "}, 400, "query"),
    ("POST", "/pairs/alex/mira/search", {"query": "x", "k": 0}, 422, "k"),
    ("POST", "/pairs/alex/mira/search", {"query": "x", "k": 101}, 422, "k"),
    ("POST", "/pairs/alex/mira/search", {"query": "x", "k": "5"}, 422, "k"),
    ("POST", "/pairs/alex/mira/search", {"query": "x", "k": 2.5}, 422, "k"),
    ("POST", "/pairs/alex/mira/search", {"query": "x", "include_stale": "yes"}, 422,
     "include_stale"),
    ("POST", "/pairs/alex/mira/search", {"qeury": "x"}, 422, "query"),
    ("GET", "/pairs/alex/mira/log?n=0", None, 422, "n"),
    ("GET", "/pairs/alex/mira/log?n=many", None, 422, "n"),
    ("GET", "/pairs/alex/mira/commits/deadbeef", None, 404, "rev"),
    ("GET", "/pairs/alex/mira/commits/--output=x", None, 400, "rev"),
    ("GET", "/pairs/alex/mira/diff?rev=nope", None, 404, "rev"),
    ("POST", "/pairs/alex/mira/revert", {"rev": "nope"}, 404, "rev"),
    ("POST", "/pairs/alex/mira/revert", {}, 422, "rev"),
    ("GET", "/pairs/alex/mira/cards?status=alive", None, 422, "status"),
    ("GET", "/pairs/alex/mira/cards/c-999999", None, 404, "id"),
    ("GET", "/pairs/alex/mira/cards/..%2F..%2Fsystem%2Fpins", None, 400, "id"),
    ("GET", "/pairs/..%2Fx/mira/pins", None, 400, "user"),
    ("GET", "/pairs/alex/..%2F..%2Fsam/pins", None, 400, "character"),
    ("PUT", "/pairs/.git/mira", None, 400, "user"),
    ("PUT", "/pairs/alex/%00", None, 400, "character"),
    ("GET", "/pairs/alex/nobody/pins", None, 404, "character"),
    ("GET", "/pairs/alex/mira/nothing-here", None, 404, "path"),
    ("PATCH", "/pairs/alex/mira/pins", {"text": "x"}, 405, "method"),
    ("POST", "/pairs/alex/mira/pins", {"text": "x" * 1_100_000}, 413, "body"),
]


def test_bad_input_is_one_clear_4xx_naming_the_field(client: TestClient, host: Host,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    _seed(client, host)
    root = host.store.home / "alex" / "mira"
    head, history = host.store.pair("alex", "mira").repo.head(), _history_bytes(root)
    assert len(BAD) >= 40
    caplog.set_level(logging.INFO)
    for method, path, body, status, field in BAD:
        kwargs: dict[str, Any] = {"content": body} if isinstance(body, bytes) else \
            {} if body is None else {"json": body}
        if isinstance(body, bytes):
            kwargs["headers"] = {"content-type": "application/json"}
        response = client.request(method, "/v1" + path, **kwargs)
        doc = response.json()
        assert (response.status_code, doc.get("field")) == (status, field), (method, path, doc)
        assert set(doc) == {"error", "field"} and "\n" not in doc["error"] and doc["error"]
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert host.store.pair("alex", "mira").repo.head() == head
    assert _history_bytes(root) == history


def _history_bytes(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / "history").glob("*.jsonl")}


def test_concurrent_requests_on_one_pair_lose_no_message(client: TestClient, host: Host) -> None:
    app = client.app
    errors: list[str] = []

    def talk(worker: int) -> None:
        with TestClient(app, headers=dict(client.headers)) as own:
            for turn in range(8):
                response = own.post(P + "/messages", json={"messages": [
                    {"role": "user", "content": f"w{worker} t{turn}"}]})
                if response.status_code != 200:
                    errors.append(response.text)

    threads = [threading.Thread(target=talk, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    texts = sorted(m.content for m in iter_messages(host.store.home / "alex" / "mira"))
    assert texts == sorted(f"w{w} t{t}" for w in range(4) for t in range(8))


def test_warm_indexes_are_bounded_and_an_evicted_pair_reloads_its_snapshot(
        isolated_env: Path, fresh_indexes: None) -> None:
    host = make_host(isolated_env, max_pairs=2)
    key = host.keys.add(None)[1]
    embedder = host.store.embedder.inner  # type: ignore[attr-defined]  # behind RecentEmbedder
    with TestClient(create_app(host), headers=bearer(key)) as client:
        for name in ("a", "b", "c"):
            client.put(f"/v1/pairs/u/{name}").raise_for_status()
            client.post(f"/v1/pairs/u/{name}/messages", json={"messages": [
                {"role": "user", "content": f"pair {name} talks about sailing"}]}).raise_for_status()
            assert client.post(f"/v1/pairs/u/{name}/search", json={"query": "sailing"}).json()["hits"]
        assert open_index_count() == 2
        before = embedder.embedded  # type: ignore[attr-defined]
        hits = client.post("/v1/pairs/u/a/search", json={"query": "sailing"}).json()["hits"]
        assert hits[0]["text"] == "pair a talks about sailing"
        # nothing embedded again: the rows come from the snapshot, and the query is a text
        # this process embedded moments ago (``memfs.embed_memo``)
        assert embedder.embedded == before
        assert client.get("/v1/health").json()["pairs_loaded"] == 2


def test_a_compaction_dreams_on_the_pool_and_the_dream_is_merged(isolated_env: Path) -> None:
    host = make_host(isolated_env, window_budget=30)
    key = host.keys.add("alex")[1]
    with TestClient(create_app(host), headers=bearer(key)) as client:
        client.put(P).raise_for_status()
        client.post(P + "/messages", json={"messages": [  # two exchanges: one compaction
            {"role": "user", "content": f"My sister Lin lives in Leeds and works as a nurse {n}"}
            if n % 2 == 0 else {"role": "assistant", "content": "That sounds demanding."}
            for n in range(4)]}).raise_for_status()
        assert host.store.services.queue.drain(60)  # type: ignore[attr-defined]
        stats = client.get("/v1/health").json()["queue"]
    pair = host.store.pair("alex", "mira")
    assert (stats["submitted"], stats["runs"], stats["merges"], stats["errors"]) == (1, 1, 1, 0)
    assert [e.subject for e in pair.log() if e.is_dream]
    assert pending_events(pair.root) == []


def test_messages_over_the_budget_say_what_they_set_off_like_ingest_json(
        isolated_env: Path, run_cli: Any, tmp_path: Path) -> None:
    """A backend learns from the POST /messages body that the batch compacted the window
    (and what became of the dream), as `memfs ingest --json` tells a script."""
    host = make_host(isolated_env, allow_open=True, window_budget=60, dream_trigger="off")
    messages = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": f"message number {i} with a handful of words in it"}
                for i in range(12)]
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps(m) + "\n" for m in messages))
    with TestClient(create_app(host)) as client:
        assert client.put("/v1/pairs/alex/kai").status_code == 201
        http = client.post("/v1/pairs/alex/kai/messages", json={"messages": messages}).json()
    (isolated_env / "config.toml").write_text('window_budget = 60\ndream_trigger = "off"\n')
    assert run_cli("--home", str(isolated_env), "-u", "sam", "-c", "kai", "init").code == 0
    cli = run_cli("--home", str(isolated_env), "-u", "sam", "-c", "kai", "ingest",
                  str(transcript), "--json")
    assert cli.code == 0, cli.err
    for doc in (http, cli.json()):
        assert len(doc["added"]) == 12 and len(doc["sessions"]) == 1
        assert doc["compactions"] and all("over its budget of 60" in c["reason"]
                                          for c in doc["compactions"])
        assert doc["dream"].startswith("not started: dream_trigger is off")
    assert [c["evicted"] for c in http["compactions"]] == \
        [c["evicted"] for c in cli.json()["compactions"]]
    assert sum(len(pending_events(isolated_env / u / "kai")) for u in ("alex", "sam")) == \
        2 * len(http["compactions"])
