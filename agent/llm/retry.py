"""The retry policy shared by the HTTP providers.

Both SDKs we could lean on retry by themselves, but then the policy is theirs: hidden,
untestable and different per provider. We switch theirs off and retry here instead, so a
529 from Anthropic and a 503 from a local vLLM server are treated the same way, and tests
inject ``sleep`` to observe the backoff without waiting for it.

Only failures that a later attempt can fix are retried: overload (529), rate limits (429),
other 5xx and timeouts. A provider signals those by raising ``TransientLLMError``; every
other ``LLMError`` (bad request, bad key, nonsense in the body) fails at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from memfs.errors import LLMError

T = TypeVar("T")
Sleep = Callable[[float], None]


class TransientLLMError(LLMError):
    """A failure worth retrying; ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def is_retryable_status(status: int) -> bool:
    """429 (rate limit), 529 (overloaded) and every other 5xx."""
    return status == 429 or 500 <= status <= 599


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Read ``retry-after-ms`` or ``retry-after`` (seconds); HTTP dates are ignored."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw) * scale
        except ValueError:
            continue
        if value >= 0:
            return value
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` calls at most; waits ``base_delay * 2**n`` (capped) between them.

    A server's ``retry-after`` hint wins over a shorter backoff, but never over ``max_delay``:
    a chat turn should fail visibly rather than hang for minutes.
    """

    attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0

    def delay(self, retry_index: int, retry_after: float | None = None) -> float:
        backoff = min(self.max_delay, self.base_delay * (1 << retry_index))
        if retry_after is None:
            return backoff
        return min(self.max_delay, max(backoff, retry_after))


def call_with_retries(
    attempt: Callable[[], T], *, policy: RetryPolicy, sleep: Sleep = time.sleep, what: str
) -> T:
    """Run ``attempt`` until it succeeds, raises a permanent error, or attempts run out.

    ``what`` names the call in the final error ("Anthropic messages", ...).
    """
    attempts = max(1, policy.attempts)
    for index in range(attempts):
        try:
            return attempt()
        except TransientLLMError as exc:
            if index == attempts - 1:
                raise LLMError(f"{what} failed after {attempts} attempts: {exc}") from exc
            sleep(policy.delay(index, exc.retry_after))
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
