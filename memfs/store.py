"""The Python API's storage half: ``MemoryStore`` (a home folder of pairs), ``MemoryPair``.

Collaborators are injected (``embedder=``, ``llm=``, ``services=``) with lazy defaults, so
that an app or a test decides what runs, and so that pin/log/check never import torch.
Search, the turn and context assembly live in their own storage modules; the pair object
only routes to them. What comes from above (the retrieval planner, dreaming, the LLM) is
the ``Services`` bundle (``memfs/services.py``): this class has no default for it, its
subclass at the composition root (``memfs.app.MemoryStore``, exported as
``memfs.MemoryStore``) wires the agent layer's.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memfs import pins as pinfile
from memfs import revisions
from memfs.atomic import atomic_write
from memfs.cards import Card, utcnow
from memfs.cardstore import load_cards
from memfs.check import Problem, check_tree
from memfs.config import Config
from memfs.errors import BadInputError, ConflictError, MemfsError
from memfs.gitio import USER, run_git
from memfs.ids import check_id
from memfs.repo import PairRepo

if TYPE_CHECKING:
    from memfs.context import Context
    from memfs.embed import Embedder
    from memfs.embed_memo import RecentEmbedder
    from memfs.history import Message
    from memfs.llm import LLM
    from memfs.search import SearchHit
    from memfs.services import Services
    from memfs.turn import TurnReport


class MemoryStore:
    """A home folder holding one git repository per (user, character) pair."""

    def __init__(self, home: str | Path = "~/.memfs", *, embedder: Embedder | None = None,
                 llm: LLM | None = None, config: Config | None = None,
                 clock: Callable[[], dt.datetime] | None = None,
                 services: Services | None = None) -> None:
        self.home = Path(home).expanduser()
        self.config = (config or Config()).with_(home=self.home)
        self._embedder = embedder
        self._recent: RecentEmbedder | None = None
        """``_embedder`` behind an in-memory cache of recent texts (``memfs.embed_memo``)."""
        self._llm = llm
        self._services = services
        self.clock = clock or utcnow
        """What "now" is for dreaming (expiry) and ranking (recency); replayed or simulated
        conversations inject their own."""

    @property
    def embedder(self) -> Embedder:
        """The embedding model, loaded on first use (this is what imports torch)."""
        if self._recent is None:
            from memfs.embed_memo import RecentEmbedder

            if self._embedder is None:
                from memfs.embed import default_embedder

                self._embedder = default_embedder(self.config.embed_model)
            self._recent = RecentEmbedder(self._embedder)
        return self._recent

    @property
    def services(self) -> Services:
        """The planner, dreamer, dream queue and LLM factory from the layer above."""
        if self._services is None:
            self._services = self._default_services()
        return self._services

    def _default_services(self) -> Services:
        raise MemfsError("this MemoryStore has no agent services: use memfs.MemoryStore "
                         "(which wires them) or pass services=")

    @property
    def injected_llm(self) -> LLM | None:
        """The LLM given to the constructor, if any (it is used as given, even offline)."""
        return self._llm

    @property
    def llm(self) -> LLM:
        """The chat model: the injected one, else the configured provider's."""
        if self._llm is None:
            self._llm = self.services.make_llm(self.config)
        return self._llm

    def pair(self, user: str, character: str, *, create: bool = True,
             user_name: str | None = None, character_name: str | None = None) -> MemoryPair:
        """The pair's handle; creates the repository unless ``create=False`` (with the
        display names, if given, in its persona)."""
        pair = MemoryPair(self, check_id(user, "user id"), check_id(character, "character id"))
        if create:
            pair.init(user_name=user_name, character_name=character_name)
        return pair

    def pairs(self) -> list[tuple[str, str]]:
        """Every (user, character) pair under the home folder."""
        found = []
        for git_dir in sorted(self.home.glob("*/*/.git")):
            found.append((git_dir.parent.parent.name, git_dir.parent.name))
        return found


class MemoryPair:
    """One user–character pair: its pins, cards, history, search and context."""

    def __init__(self, store: MemoryStore, user: str, character: str) -> None:
        self.store = store
        self.user = user
        self.character = character
        self.root = store.home / user / character
        self._repo: PairRepo | None = None

    def __repr__(self) -> str:
        return f"MemoryPair({self.user!r}, {self.character!r}, root={str(self.root)!r})"

    @property
    def config(self) -> Config:
        return self.store.config

    def now(self) -> dt.datetime:
        return self.store.clock()

    @property
    def repo(self) -> PairRepo:
        if self._repo is None:
            self._repo = PairRepo.open(self.root)
        return self._repo

    def init(self, *, user_name: str | None = None, character_name: str | None = None) -> bool:
        """Create the repository if needed; True when something was created. Display
        names only shape a new pair's persona (edit ``system/persona.md`` later)."""
        self._repo, created = PairRepo.create(self.root, self.user, self.character,
                                              user_name=user_name, character_name=character_name)
        return created

    # -- pins ---------------------------------------------------------------------------------

    def pins(self, rev: str = "HEAD") -> list[str]:
        """The pins at ``rev``: committed HEAD by default, which is what the model sees."""
        return pinfile.parse_pins(self.repo.read_head("system/pins.md", rev) or "").texts()

    def uncommitted(self, *paths: str) -> list[str]:
        """Files under ``paths`` whose working copy differs from HEAD (hand edits not yet
        committed, valid or not), new files included."""
        out = run_git(self.root, "status", "--porcelain", "-z", "--untracked-files=all",
                      "--", *paths)
        found = []
        for entry in out.split("\0"):
            if len(entry) > 3 and not entry[3:].rsplit("/", 1)[-1].startswith("."):
                found.append(entry[3:])
        return sorted(found)

    def _pins_text(self) -> str:
        """The pins file as saved; an invalid hand edit is refused, not built upon."""
        text = self.repo.read_worktree("system/pins.md") or ""
        problems = pinfile.parse_pins(text).problems
        if problems:
            raise BadInputError(f"system/pins.md: {problems[0]} (an uncommitted hand edit: "
                                "fix it, or `git checkout system/pins.md` to drop it)")
        return text

    def pin(self, text: str) -> str | None:
        """Pin ``text``: it is in front of the model on every turn from now on."""
        with self.repo.lock():
            new = pinfile.add_pin(self._pins_text(), text)
            return self.repo.commit({"system/pins.md": new}, "pin", f"add {_quote(text)}", USER)

    def unpin(self, number: int) -> str:
        """Remove pin ``number`` (1-based); returns the removed pin's text."""
        with self.repo.lock():
            new, removed = pinfile.remove_pin(self._pins_text(), number)
            self.repo.commit({"system/pins.md": new}, "pin", f"remove {_quote(removed)}", USER)
            return removed

    def commit_pins_file(self) -> str | None:
        """After a hand edit of pins.md: validate, then commit (or raise, file kept)."""
        with self.repo.lock():
            text = self.repo.read_worktree("system/pins.md") or ""
            problems = pinfile.parse_pins(text).problems
            if problems:
                raise BadInputError(f"system/pins.md: {problems[0]} (file kept as saved)")
            return self.repo.commit({"system/pins.md": text}, "pin", "edit pins", USER)

    def edit_pins(self, text: str, expected: str | None = None) -> str | None:
        """Replace the whole pins file (an editor in a page), then commit it as
        ``commit_pins_file`` does. Invalid text is refused before anything is written;
        with ``expected`` (the text the editor started from), a file that changed since
        (a hand edit, another page) is refused rather than overwritten."""
        problems = pinfile.parse_pins(text).problems
        if problems:
            raise BadInputError(f"system/pins.md: {'; '.join(problems)} (nothing was saved)")
        with self.repo.lock():
            current = self.repo.read_worktree("system/pins.md") or ""
            if expected is not None and current.replace("\r\n", "\n") != \
                    expected.replace("\r\n", "\n"):
                raise ConflictError("system/pins.md changed since the editor opened it; "
                                    "nothing was saved (reload to see the current pins)")
            atomic_write(self.root / "system" / "pins.md", text)
            return self.commit_pins_file()

    # -- cards --------------------------------------------------------------------------------

    def cards(self, status: str | None = None, rev: str = "HEAD") -> list[Card]:
        cards, _ = load_cards(self.root, rev)
        return [c for c in cards if status is None or c.status == status]

    def card(self, card_id: str) -> Card:
        check_id(card_id, "card id")
        for card in self.cards():
            if card.id == card_id:
                return card
        raise BadInputError(f"card {card_id!r}: no such card in {self.user}/{self.character}")

    def mark_wrong(self, card_id: str) -> str:
        """The user says this card is wrong: ``status: deleted`` in a commit by ``user``
        (search never returns it again; git keeps every version, so it can be reverted)."""
        with self.repo.lock():
            card = self.card(card_id)
            if card.status == "deleted":
                raise BadInputError(f"card {card_id!r}: already marked wrong")
            if self.uncommitted(card.path):
                raise ConflictError(f"{card.path} has uncommitted changes: commit or drop "
                                    "them first; nothing was changed")
            new = card.evolve(status="deleted", updated=self.now().replace(microsecond=0))
            sha = self.repo.commit({card.path: new.to_text()}, "card",
                                   f"mark {card_id} wrong", USER)
            return sha or self.repo.head()

    def summary(self, rev: str = "HEAD") -> str:
        return self.repo.read_head("summary.md", rev) or ""

    # -- history of memory ------------------------------------------------------------------------

    def log(self, n: int | None = None, author: str | None = None) -> list[revisions.LogEntry]:
        return revisions.log(self.repo, n, author=author)

    def diff(self, rev: str | None = None) -> str:
        return revisions.diff(self.repo, rev)

    def show(self, rev: str) -> str:
        return revisions.show(self.repo, rev)

    def revert(self, rev: str) -> str:
        sha = revisions.revert(self.repo, rev)
        return sha

    def check(self) -> list[Problem]:
        return check_tree(self.repo.root)

    # -- search, the turn, dreaming (their own modules) ---------------------------------------------

    def search(self, query: str, k: int = 5, *, include_stale: bool = False,
               time_scope: str = "any", **options: Any) -> list[SearchHit]:
        from memfs.search import search

        if options.get("now") is None:
            options["now"] = self.now()
        return search(self, query, k=k, include_stale=include_stale, time_scope=time_scope,
                      **options)

    def add_messages(self, messages: Iterable[Mapping[str, Any]],
                     session: str | None = None, *,
                     report: TurnReport | None = None) -> list[Message]:
        """Append messages to history (durably, first); may fire a compaction event.
        ``report``, when given, is filled in with the compactions and the dream's fate."""
        from memfs.turn import TurnOptions, add_messages

        return add_messages(self, messages, session=session,
                            options=TurnOptions(report=report))

    def context(self, message: str, *, now: dt.datetime | None = None) -> Context:
        """What the model sees for ``message``: ready for ``messages.create(system=, messages=)``."""
        from memfs.context import build_context

        return build_context(self, message, now=now)

    def dream(self, *, wait: float = 60.0) -> list[str]:
        """Run dreaming now over pending windows; returns the merge commits made.

        If another process is dreaming this pair, waits for it (up to ``wait`` seconds)
        and returns what it merged, then dreams whatever is still pending."""
        return self.store.services.dreamer.dream(self, wait=wait)


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f"'{flat[:60]}...'" if len(flat) > 60 else f"'{flat}'"
