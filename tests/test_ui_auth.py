"""Keys in the browser: ``memfs serve`` (a real subprocess: uvicorn, the API and the
inspector as shipped) with keys for two users, driven by Debian's chromium.

A key is typed once on the login page and kept in an HttpOnly cookie; it opens only its
own user's pairs, exactly as the Bearer key does on the API.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memfs.app import MemoryStore
from memfs.keys import KeyStore
from tests._serve import free_port
from tests._ui import chromium


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("ui-auth")
    store = MemoryStore(home)
    store.pair("alice", "mira").pin("Alice is allergic to peanuts")
    store.pair("bob", "luna").pin("Bob's secret pin")
    return home


@pytest.fixture(scope="module")
def keys(home: Path) -> dict[str, str]:
    store = KeyStore(home)
    return {user: store.add(user)[1] for user in ("alice", "bob")}


@pytest.fixture(scope="module")
def server(home: Path, keys: dict[str, str]) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "MEMFS_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-c", "from memfs.cli import entry; entry()",
                             "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"{url}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"memfs serve did not start: {proc.stderr.read()!r}"
                                   if proc.stderr else "memfs serve did not start")
            time.sleep(0.1)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as b:
        yield b


def login(browser: Any, server: str, key: str, target: str = "/ui/") -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server}{target}")
    page.fill("#key", key)
    page.click("button:has-text('Open')")
    return page


def test_no_key_means_the_login_page_and_a_wrong_key_is_refused(browser: Any,
                                                               server: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server}/ui/alice/mira/pins")
    assert page.url.startswith(f"{server}/ui/login?next=")
    page.fill("#key", "mfs_nope_nope")
    page.click("button:has-text('Open')")
    assert "unknown or removed API key" in page.inner_text(".error")
    assert "peanuts" not in page.content()
    context.close()


def test_a_key_opens_its_own_users_pairs_only(browser: Any, server: str,
                                             keys: dict[str, str], home: Path) -> None:
    page = login(browser, server, keys["alice"], "/ui/alice/mira/pins")
    assert page.url == f"{server}/ui/alice/mira/pins"
    assert "Alice is allergic to peanuts" in page.inner_text("ol.pins")
    [cookie] = [c for c in page.context.cookies() if c["name"] == "memfs_key"]
    assert cookie["httpOnly"] and cookie["path"] == "/ui" and cookie["sameSite"] == "Lax"
    page.goto(f"{server}/ui/")
    assert page.locator("ul.pairs li").all_inner_texts() == ["alice & mira"]

    for path in ("/ui/bob/luna", "/ui/bob/luna/pins", "/ui/bob/luna/cards",
                 "/ui/bob/luna/commits/HEAD", "/ui/bob/luna/revert/HEAD"):
        response = page.goto(f"{server}{path}")
        assert response.status == 403, path
        assert "user 'bob'" in page.inner_text(".error")
        assert "secret" not in page.content()
    # a form post with this browser's valid token still cannot reach bob's pins
    page.goto(f"{server}/ui/alice/mira/pins")
    token = page.get_attribute("form.add input[name=csrf]", "value")
    answer = page.request.post(f"{server}/ui/bob/luna/pins",
                               form={"text": "from alice", "csrf": token or ""})
    assert answer.status == 403
    assert MemoryStore(home).pair("bob", "luna").pins() == ["Bob's secret pin"]
    page.context.close()


def test_user_bs_key_cannot_open_user_as_pages(browser: Any, server: str,
                                               keys: dict[str, str]) -> None:
    page = login(browser, server, keys["bob"])
    assert page.locator("ul.pairs li").all_inner_texts() == ["bob & luna"]
    response = page.goto(f"{server}/ui/alice/mira")
    assert response.status == 403 and "peanuts" not in page.content()
    assert page.goto(f"{server}/ui/alice/mira/ask?q=peanuts").status == 403
    page.context.close()


def test_logging_out_or_removing_the_key_locks_the_browser_out(browser: Any, server: str,
                                                              home: Path) -> None:
    record, key = KeyStore(home).add("alice")
    page = login(browser, server, key, "/ui/alice/mira")
    assert page.url == f"{server}/ui/alice/mira"
    KeyStore(home).remove(record.id)
    page.goto(f"{server}/ui/alice/mira/pins")
    assert page.url.startswith(f"{server}/ui/login")

    page = login(browser, server, KeyStore(home).add("alice")[1], "/ui/alice/mira")
    page.click("text=Log out")
    assert page.url == f"{server}/ui/login"
    page.goto(f"{server}/ui/alice/mira")
    assert page.url.startswith(f"{server}/ui/login")
    page.context.close()


def test_the_bearer_key_works_on_pages_and_the_api_keeps_json_errors(
        server: str, keys: dict[str, str]) -> None:
    auth = {"Authorization": f"Bearer {keys['alice']}"}
    assert httpx2.get(f"{server}/ui/alice/mira/pins", headers=auth).status_code == 200
    assert httpx2.get(f"{server}/ui/bob/luna/pins", headers=auth).status_code == 403
    api = httpx2.get(f"{server}/v1/pairs/bob/luna/pins", headers=auth)
    assert api.status_code == 403 and api.json()["error"]
    assert httpx2.get(f"{server}/v1/pairs").status_code == 401
