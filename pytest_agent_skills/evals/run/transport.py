"""How the runs of an eval reach the model: cassettes behind the loopback server, one shared
kept-alive HTTP client to the upstream, and retries a real endpoint needs.

Every run has its own cassette (a :class:`RunCassette`): replayed offline by default, or
recorded from the upstream.  All runs that record share one :class:`UpstreamPool`: one httpx
client whose connections are kept alive between requests and runs, up to ``--jobs`` at
once.  An answer of HTTP 429 or 5xx (or a connection that failed) is asked again after a
backoff that honours ``Retry-After``, a bounded number of times; then the run fails with
the upstream's last answer.  An answer that will not change on retry (see
:func:`final_rejection`) is not asked again.  A stop (Ctrl-C) ends the waiting at once.
"""

from __future__ import annotations

import contextlib
import re
import threading
from pathlib import Path
from typing import Any

from ...harness.cassette import (
    CassetteBackend,
    Upstream,
    UpstreamTimeoutError,
    UpstreamTooLargeError,
)
from ...harness.errors import CassetteTooLargeError, HarnessError, ModelError
from ...harness.server import Reply
from ..setup.budget import TokenBudget
from ..setup.eval_options import RetryPolicy

#: Statuses that say "ask again later": rate limits and server trouble.
RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
#: Statuses that say "later" whatever their answer names: time-outs, conflicts, rate limits.
_LATER = frozenset({408, 409, 429})
#: Request fields an error answer may name without refusing the request itself: a model that
#: is loading or overloaded is named in answers worth asking again.
_FIELDS_NOT_NAMED = frozenset({"model"})


def final_rejection(status: int, answer: str, body: dict[str, Any]) -> bool:
    """Whether an error ``answer`` refuses the request ``body`` itself, so that asking again
    cannot help: a 4xx other than the "later" ones (408, 409, 429), or a server error whose
    answer names one of the request's own fields, quoted (a validation error: llama.cpp's
    server answers those with HTTP 500, ``('body', 'response_format', 'type')``)."""
    if status < 400 or status in _LATER:
        return False
    if status < 500:
        return True
    plain = answer.replace("\\", "")  # quotes escaped inside a JSON string count too
    return any(
        re.search(rf"""(['"`]){re.escape(name)}\1""", plain)
        for name in body
        if name not in _FIELDS_NOT_NAMED
    )


class StoppedError(HarnessError):
    """The eval was stopped (Ctrl-C) while this run waited or ran."""


class RunTokensError(HarnessError):
    """A run's requests used more tokens than its cap (``--max-run-tokens``): the run
    stops there, and is graded on what it did."""


class UpstreamPool:
    """One httpx client shared by every run that records, and the stop signal of the eval."""

    def __init__(self, upstream: Upstream | None, *, jobs: int, retry: RetryPolicy) -> None:
        self.upstream = upstream
        self.jobs = jobs
        self.retry = retry
        self.stop = threading.Event()
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self, headers: dict[str, str]) -> Any:
        with self._lock:
            if self._client is None:
                import httpx

                from ... import httpbounds

                assert self.upstream is not None
                self._client = httpbounds.client(
                    connect_timeout=min(self.upstream.timeout, self.upstream.total_timeout),
                    read_timeout=self.upstream.total_timeout,
                    headers=headers,
                    limits=httpx.Limits(
                        max_connections=self.jobs, max_keepalive_connections=self.jobs
                    ),
                )
            return self._client

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or raise :class:`StoppedError` as soon as the eval is stopped."""
        if self.stop.wait(seconds):
            raise StoppedError("stopped (interrupted) while waiting to ask the upstream again")

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


class RunCassette(CassetteBackend):
    """The cassette of one run (its conversation, or its grading): counts the tokens the
    endpoint reports, and records through the shared :class:`UpstreamPool` with retries."""

    def __init__(
        self,
        path: Path,
        pool: UpstreamPool,
        *,
        budget: TokenBudget | None = None,
        cap: int | None = None,
        **options: Any,
    ) -> None:
        super().__init__(path, upstream=pool.upstream, **options)
        self.pool = pool
        #: The eval's budget, every answer's tokens counted in it as they come.
        self.budget = budget
        #: The most tokens this cassette's requests may use before the next one is refused.
        self.cap = cap
        self.tokens = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        #: Why the recording of a failed run was not written ("": it was, or nothing was asked).
        self.not_written = ""

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        if self.pool.stop.is_set():
            raise StoppedError("stopped (interrupted) before this request was sent")
        if self.cap is not None and self.tokens > self.cap:
            raise RunTokensError(
                f"run token cap: the run's requests used {self.tokens} tokens, past its cap of"
                f" {self.cap} (--max-run-tokens, ini skills_eval_max_run_tokens); it stopped"
                " there and is graded on what it did"
            )
        reply = super().respond(body, headers)
        usage = reply.body.get("usage") if isinstance(reply.body, dict) else None
        if isinstance(usage, dict):
            total = _count(usage.get("total_tokens"))
            self.tokens += total
            self.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.completion_tokens += _count(usage.get("completion_tokens"))
            if self.budget is not None:
                self.budget.spend(total)
        return reply

    def save_partial(self) -> None:
        """Write what was recorded by a run that failed before its end; a recording over the
        cassette limit is not written, and :attr:`not_written` says so."""
        if self.recorded:
            try:
                self.cassette.save(self.redactor)
            except CassetteTooLargeError as error:
                self.not_written = str(error)

    def _upstream_client(
        self, upstream: Upstream, headers: dict[str, str]
    ) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext(self.pool.client(headers))

    def _post(
        self, upstream: Upstream, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, Any, str]:
        attempt = 1
        while True:
            response_headers: Any = None
            failure: ModelError | None = None
            try:
                status, response_headers, text = super()._post(upstream, body, headers)
            except (UpstreamTimeoutError, UpstreamTooLargeError):
                raise
            except ModelError as error:  # could not be reached: a connection that failed
                status, text, failure = 0, str(error), error
            else:
                if status not in RETRIED_STATUSES or final_rejection(status, text, body):
                    return status, response_headers, text
            delay = self.pool.retry.delay(attempt, response_headers)
            if delay is None:
                if failure is not None and attempt == 1:
                    raise failure
                what = f"answered HTTP {status}" if status else "failed"
                raise self._upstream_error(
                    upstream.endpoint,
                    f"{what} on each of {attempt} attempt(s); last answer: {text[:300]}",
                )
            self.pool.wait(delay)
            attempt += 1


def _count(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0
