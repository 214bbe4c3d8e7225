"""Cassettes: record a model's answers once, replay them offline.

A cassette is a readable JSON file of interactions (request body, response
body).  The :class:`CassetteBackend` sits behind the loopback server: in
replay it answers each request with the recorded response whose canonical
request body matches; in record it forwards the request to an upstream
OpenAI-compatible ``base_url`` and keeps the exchange.  Secrets are redacted
when the file is written, never later (see :mod:`pytest_agent_skills.redaction`).

Record modes (as pytest-recording / VCR.py): ``none`` replays only (a missing
file is an error), ``once`` records when the file does not exist and replays
otherwise, ``new`` replays what matches and records the rest, ``all``
records everything again.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import httpbounds
from ..errors import ConfigurationError
from ..files import MIB, FileReadError, read_limited, write_atomic
from ..httpbounds import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_TOTAL_TIMEOUT,
    BodyTooLargeError,
    Deadline,
    InvalidContentLengthError,
)
from ..redaction import Redactor as Redactor  # a public name of the harness
from ..redaction import mask_url, url_secrets, userinfo
from .errors import (
    CassetteFormatError,
    CassetteMissError,
    CassetteTooLargeError,
    HarnessError,
    ModelError,
    NoCassetteError,
    UnusedInteractionsError,
)
from .server import Reply
from .turns import body_from_chunks, completion_problem

RECORD_MODES = ("none", "once", "new", "all")
#: The largest cassette file read.
MAX_CASSETTE_BYTES = 64 * MIB
#: Why JSON that nests past Python's recursion limit (``[[[[...``, a few bytes a level) is refused.
TOO_DEEP = "its arrays or objects nest too deeply to read"
CASSETTE_FORMAT = "pytest-agent-skills cassette"
#: Keys dropped anywhere in a request body before matching: ids, times, transport flags.
DEFAULT_IGNORED_FIELDS = frozenset(
    {
        "id",
        "tool_call_id",
        "created",
        "duration_ms",
        "stream",
        "stream_options",
        "system_fingerprint",
    }
)
#: Workspace folder and run folder names carry a time stamp.
DEFAULT_VOLATILE_PATTERNS = (r"ws_[A-Za-z0-9_.-]+", r"run_[0-9][A-Za-z0-9_.-]*")
#: How much longer than a recording's total timeout the loopback client waits, in seconds.
ANSWER_MARGIN = 30.0
_KEPT_RESPONSE_HEADERS = frozenset(
    {"content-type", "openai-model", "openai-organization", "set-cookie"}
)


class UpstreamTimeoutError(ModelError):
    """Recording: the upstream's answer took longer than its total timeout."""


class UpstreamTooLargeError(ModelError):
    """Recording: the upstream's answer is over the size limit (announced or read)."""


class UpstreamRejectedError(ModelError):
    """Recording: the upstream answered an error status: ``status`` and its ``answer``
    (redacted), for a caller that can change its request and ask again."""

    def __init__(self, message: str, status: int, answer: str) -> None:
        super().__init__(message)
        self.status = status
        self.answer = answer


@dataclass
class Interaction:
    request: dict[str, Any]
    response: dict[str, Any]
    used: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"request": self.request, "response": self.response}


@dataclass
class Cassette:
    path: Path
    interactions: list[Interaction] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Cassette:
        try:
            data = json.loads(read_limited(path, limit=MAX_CASSETTE_BYTES, what="cassette"))
        except FileReadError as error:
            raise CassetteFormatError(str(error)) from None
        except FileNotFoundError:
            raise NoCassetteError(
                f"no cassette: {path} does not exist (record mode 'none' never records)."
                " Record it against a real endpoint with --skills-record=once and"
                " --skills-upstream-url URL."
            ) from None
        except (OSError, ValueError) as error:
            raise CassetteFormatError(f"{path}: not a readable JSON cassette: {error}") from None
        except RecursionError:
            raise CassetteFormatError(f"{path}: not a readable JSON cassette: {TOO_DEEP}") from None
        if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
            raise CassetteFormatError(
                f"{path}: not a cassette (expected an object with 'interactions': [...])"
            )
        interactions = []
        for index, entry in enumerate(data["interactions"]):
            if (
                not isinstance(entry, dict)
                or not isinstance(entry.get("request"), dict)
                or not isinstance(entry.get("response"), dict)
            ):
                raise CassetteFormatError(
                    f"{path}: interaction #{index} needs 'request' and 'response' objects"
                )
            problem = _response_problem(entry["response"])
            if problem is not None:
                raise CassetteFormatError(
                    f"{path}: interaction #{index}: {problem}; fix the file or record it again"
                    " with --skills-record=all"
                )
            interactions.append(Interaction(entry["request"], entry["response"]))
        return cls(path, interactions)

    def save(self, redactor: Redactor) -> None:
        from ..typed_documents import schema_uri  # pydantic: loaded when recording only

        document = {
            "$schema": schema_uri("cassette"),  # .cassette_document's model
            "format": CASSETTE_FORMAT,
            "version": 1,
            "interactions": [redactor.redact(item.to_json()) for item in self.interactions],
        }
        content = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        if len(content) > MAX_CASSETTE_BYTES:
            # Written, it could not be replayed: Cassette.load refuses it at the same size.
            raise CassetteTooLargeError(
                f"{self.path}: the recording is {len(content)} bytes, over the limit of"
                f" {MAX_CASSETTE_BYTES} bytes ({MAX_CASSETTE_BYTES // MIB} MiB) of a cassette,"
                " the largest one read back; it is not written. Make the conversation smaller"
                " (fewer or shorter tool results and answers, output files without inline"
                " content)."
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, content)


@dataclass
class Matcher:
    """Canonical form of request bodies, for matching and for the miss diff."""

    ignored_fields: frozenset[str] = DEFAULT_IGNORED_FIELDS
    volatile_patterns: tuple[str, ...] = DEFAULT_VOLATILE_PATTERNS
    #: Exact strings (paths of this machine) replaced by a stable name; a callable is
    #: asked on every request (the workspace path is known only once it exists).
    substitutions: Mapping[str, str] | Callable[[], Mapping[str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._patterns = [re.compile(pattern) for pattern in self.volatile_patterns]

    def _current_substitutions(self) -> list[tuple[str, str]]:
        table = self.substitutions() if callable(self.substitutions) else self.substitutions
        return sorted(
            ((old, new) for old, new in table.items() if old), key=lambda item: -len(item[0])
        )

    def canonical(self, data: Any) -> Any:
        return self._canonical(data, self._current_substitutions())

    def _canonical(self, data: Any, substitutions: list[tuple[str, str]]) -> Any:
        if isinstance(data, dict):
            return {
                key: self._canonical_value(key, value, substitutions)
                for key, value in sorted(data.items())
                if key not in self.ignored_fields
            }
        if isinstance(data, list):
            return [self._canonical(item, substitutions) for item in data]
        if isinstance(data, str):
            for old, new in substitutions:
                data = data.replace(old, new)
            for index, pattern in enumerate(self._patterns):
                data = pattern.sub(f"<volatile{index}>", data)
        return data

    def _canonical_value(
        self, key: str | None, value: Any, substitutions: list[tuple[str, str]]
    ) -> Any:
        if key == "content" and value is None:
            # An assistant turn of tool calls goes back with content "" (it went back as
            # null before): cassettes recorded either way match.
            return ""
        # Tool results and call arguments are JSON inside a string: compare them parsed,
        # so that a volatile field inside (duration_ms) can be ignored too.
        if key in ("content", "arguments") and isinstance(value, str) and value[:1] in "{[":
            try:
                return {"json": self._canonical(json.loads(value), substitutions)}
            except ValueError:
                pass
        return self._canonical(value, substitutions)

    def text(self, body: dict[str, Any]) -> str:
        return json.dumps(self.canonical(body), indent=1, ensure_ascii=False)

    def same(self, live: Any, recorded: Any) -> bool:
        """``canonical(live) == canonical(recorded)``, without making the canonical form of
        the parts that are equal as they are: most of a request (its tools, the messages
        before the last ones) is, and making both whole for every request of a replay would
        copy the whole conversation at every turn."""
        return self._same(None, live, recorded, self._current_substitutions())

    def _same(
        self, key: str | None, live: Any, recorded: Any, substitutions: list[tuple[str, str]]
    ) -> bool:
        if live == recorded:  # then so are their canonical forms
            return True
        if isinstance(live, dict) and isinstance(recorded, dict):
            kept = live.keys() - self.ignored_fields
            return kept == recorded.keys() - self.ignored_fields and all(
                self._same(name, live[name], recorded[name], substitutions) for name in kept
            )
        if isinstance(live, list) and isinstance(recorded, list):
            return len(live) == len(recorded) and all(
                self._same(None, a, b, substitutions) for a, b in zip(live, recorded, strict=True)
            )
        same: bool = self._canonical_value(key, live, substitutions) == self._canonical_value(
            key, recorded, substitutions
        )
        return same


def _response_problem(response: dict[str, Any]) -> str | None:
    status = response.get("status", 200)
    if type(status) is not int:
        return f"the response status {status!r} is not an HTTP status number"
    if status != 200:  # an error answer is replayed as it is
        return None
    problem = completion_problem(response.get("body"))
    return None if problem is None else f"the response body is not a chat completion ({problem})"


@dataclass
class Upstream:
    """A real OpenAI-compatible endpoint to record from.

    The key goes in ``api_key`` (sent as ``Authorization: Bearer``), never in the URL:
    credentials in the URL (``https://user:password@host``) would go out as HTTP Basic
    auth instead, so they are refused.  Secret query values (``?api-key=...``) are sent,
    and masked wherever the URL is written or shown.  One answer may take at most
    ``total_timeout`` seconds and ``max_response_bytes`` bytes (the
    ``skills_upstream_timeout`` and ``skills_upstream_max_bytes`` settings).
    """

    base_url: str
    api_key: str = ""
    #: Connect timeout, in seconds. Reading has no shorter limit than ``total_timeout``: a
    #: model that thinks for minutes sends nothing until it answers.
    timeout: float = 120.0
    #: The whole exchange (request sent, answer read), on the clock, in seconds.
    total_timeout: float = DEFAULT_TOTAL_TIMEOUT
    #: The largest answer read, in bytes.
    max_response_bytes: int = DEFAULT_MAX_BODY_BYTES

    def __post_init__(self) -> None:
        if userinfo(self.base_url):
            raise ConfigurationError(
                f"the upstream URL {mask_url(self.base_url)} holds credentials (user:password@"
                " before the host), which would be sent as HTTP Basic auth instead of the API"
                " key. Remove them from the URL and put the key in the environment variable"
                " named by skills_upstream_key_env (default OPENAI_API_KEY)."
            )

    @property
    def endpoint(self) -> str:
        """The chat-completions URL: ``/chat/completions`` after the base path, before any query."""
        base, question, query = self.base_url.partition("?")
        return f"{base.rstrip('/')}/chat/completions{question}{query}"

    @property
    def secrets(self) -> list[str]:
        """Values to redact: the key and the secret query values of the URL."""
        return [value for value in (self.api_key, *url_secrets(self.base_url)) if value]


class CassetteBackend:
    """Answers the loopback server from a cassette, recording when the mode says so."""

    def __init__(
        self,
        path: Path,
        *,
        mode: str = "none",
        upstream: Upstream | None = None,
        matcher: Matcher | None = None,
        redactor: Redactor | None = None,
        allow_unused: bool = False,
    ) -> None:
        if mode not in RECORD_MODES:
            raise HarnessError(
                f"unknown record mode {mode!r} (choose from {', '.join(RECORD_MODES)})"
            )
        self.path = Path(path)
        self.mode = mode
        self.upstream = upstream
        self.matcher = matcher or Matcher()
        self.redactor = redactor or Redactor()
        self.allow_unused = allow_unused
        existed = self.path.exists()
        fresh = mode == "all" or (mode in ("once", "new") and not existed)
        self.cassette = Cassette(self.path) if fresh else Cassette.load(self.path)
        self.records_misses = mode in ("all", "new") or (mode == "once" and not existed)
        self.rerecord = mode == "all"
        self.recorded = 0
        self.replayed = 0
        self.requests = 0

    @property
    def answer_timeout(self) -> float | None:
        """How long the client of the loopback server waits for one answer (None: its
        default): past the recording's total timeout, so that its error is the one shown."""
        if self.upstream is None or not self.records_misses:
            return None
        return self.upstream.total_timeout + ANSWER_MARGIN

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        number = self.requests
        self.requests += 1
        if not self.rerecord:
            interaction = self._find(body)
            if interaction is not None:
                interaction.used = True
                self.replayed += 1
                return Reply(
                    interaction.response["body"], int(interaction.response.get("status", 200))
                )
        if not self.records_misses:
            raise CassetteMissError(self._miss_message(body, number))
        return self._record(body)

    def _find(self, body: dict[str, Any]) -> Interaction | None:
        # Recorded bodies are redacted: compare the live one redacted the same way.
        wanted = self.redactor.redact(body)
        for interaction in self.cassette.interactions:
            if not interaction.used and self.matcher.same(wanted, interaction.request.get("body")):
                return interaction
        return None

    def _miss_message(self, body: dict[str, Any], number: int) -> str:
        head = (
            f"no match in cassette {self.path} for request #{number} (record mode {self.mode!r});"
            f" {len(self.cassette.interactions)} interaction(s) recorded,"
            f" {sum(i.used for i in self.cassette.interactions)} already played."
        )
        if not self.cassette.interactions:
            return head + " The cassette is empty."
        wanted = self.matcher.text(self.redactor.redact(body))
        wanted_lines = wanted.splitlines()
        scored = []
        for index, interaction in enumerate(self.cassette.interactions):
            text = self.matcher.text(interaction.request.get("body") or {})
            # Line-based: a character-level comparison of long prompts takes seconds.
            matcher = difflib.SequenceMatcher(None, text.splitlines(), wanted_lines, autojunk=False)
            scored.append((matcher.ratio(), index, interaction, text))
        ratio, index, interaction, text = max(scored, key=lambda item: item[0])
        if text == wanted:
            detail = (
                f"Interaction #{index} matches it but was already played: the conversation asked"
                " the same question more often than when it was recorded."
            )
        else:
            diff = list(
                difflib.unified_diff(
                    text.splitlines(),
                    wanted.splitlines(),
                    f"recorded #{index}",
                    f"request #{number}",
                    lineterm="",
                    n=2,
                )
            )
            shown = diff[:80] + (
                [f"... ({len(diff) - 80} more diff lines)"] if len(diff) > 80 else []
            )
            detail = (
                f"Closest recorded request: interaction #{index}"
                f" (similarity {math.floor(ratio * 100)}%):\n" + "\n".join(shown)
            )
            changed = self._changed_params(interaction.request.get("body") or {}, body)
            if changed:
                detail = (
                    f"Request fields differ from the recording: {changed} (request parameters"
                    " are set with --skills-model-param, or the eval's --model-param and"
                    f" --grader-param).\n{detail}"
                )
        return (
            f"{head}\n{detail}\nRe-record with --skills-record=new (or all), or list a"
            " volatile field in model.match_ignore."
        )

    def _changed_params(self, recorded: dict[str, Any], body: dict[str, Any]) -> str:
        """The top-level fields besides the conversation (``temperature``, ``seed``, the
        model...) whose values differ between a recorded request and ``body``, described."""
        live = self.matcher.canonical(self.redactor.redact(body))
        then = self.matcher.canonical(recorded)
        if not isinstance(live, dict) or not isinstance(then, dict):
            return ""
        parts = []
        for name in sorted((live.keys() | then.keys()) - {"messages", "tools"}):
            if live.get(name, _ABSENT) != then.get(name, _ABSENT):
                parts.append(
                    f"{name} (recorded {_shown(then.get(name, _ABSENT))},"
                    f" now {_shown(live.get(name, _ABSENT))})"
                )
        return "; ".join(parts)

    def _record(self, body: dict[str, Any]) -> Reply:
        if self.upstream is None:
            raise HarnessError(
                f"cassette {self.path}: record mode {self.mode!r} needs an upstream endpoint to"
                " record from; set --skills-upstream-url (env SKILLS_UPSTREAM_URL) to an"
                " OpenAI-compatible base URL."
            )
        url = self.upstream.endpoint
        send_headers = {"Content-Type": "application/json"}
        if self.upstream.api_key:
            send_headers["Authorization"] = f"Bearer {self.upstream.api_key}"
        streamed = bool(body.get("stream"))
        status, response_headers, text = self._post(self.upstream, body, send_headers)
        if status != 200:
            message = self._upstream_error(url, f"answered HTTP {status}: {text[:500]}")
            raise UpstreamRejectedError(str(message), status, self.redactor.redact_text(text))
        try:
            answer = body_from_chunks(_sse_chunks(text)) if streamed else json.loads(text)
        except ValueError as error:
            raise self._upstream_error(
                url, f"answered a body that is not JSON ({error}): {text[:200]}"
            ) from None
        except RecursionError:
            raise self._upstream_error(
                url, f"answered JSON that cannot be read ({TOO_DEEP}): {text[:200]}"
            ) from None
        problem = completion_problem(answer)
        if problem is not None:
            raise self._upstream_error(
                url,
                f"answered something that is not a chat completion ({problem}): {text[:200]}",
            )
        kept_headers = {
            k: v for k, v in response_headers.items() if k.lower() in _KEPT_RESPONSE_HEADERS
        }
        self.cassette.interactions.append(
            Interaction(
                {"method": "POST", "url": mask_url(url), "headers": send_headers, "body": body},
                {"status": 200, "headers": kept_headers, "streamed": streamed, "body": answer},
                used=True,
            )
        )
        self.recorded += 1
        return Reply(answer)

    def _post(
        self, upstream: Upstream, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, Any, str]:
        """POST ``body`` to the upstream: its status, headers and text, read within the
        upstream's total timeout and size limit (see :mod:`pytest_agent_skills.httpbounds`)."""
        import httpx

        url = upstream.endpoint
        deadline = Deadline(upstream.total_timeout)
        try:
            with (
                deadline,
                self._upstream_client(upstream, headers) as client,
                client.stream(
                    "POST",
                    _parsed_url(url),
                    content=_json_body(body),
                    extensions={"trace": deadline.trace},
                ) as response,
            ):
                content = bytearray()
                for chunk in httpbounds.capped_chunks(response, upstream.max_response_bytes):
                    content += chunk
                text = content.decode(response.encoding or "utf-8", errors="replace")
                return response.status_code, response.headers, text
        except BodyTooLargeError as error:
            raise self._upstream_error(
                url,
                f"answered too much: {error.describe('response')}; raise the limit with"
                " --skills-upstream-max-bytes (ini skills_upstream_max_bytes, env"
                " SKILLS_UPSTREAM_MAX_BYTES) if such answers are expected",
                UpstreamTooLargeError,
            ) from None
        except InvalidContentLengthError as error:
            raise self._upstream_error(url, f"answered badly: {error}") from None
        except httpx.HTTPError as error:
            if deadline.expired:  # whatever the cut connection raised
                raise self._upstream_error(
                    url,
                    f"took longer than {upstream.total_timeout:g} s in total to answer; raise"
                    " the total timeout with --skills-upstream-timeout (ini"
                    " skills_upstream_timeout, env SKILLS_UPSTREAM_TIMEOUT) if the model is just"
                    " slow",
                    UpstreamTimeoutError,
                ) from None
            raise self._upstream_error(url, f"could not be reached: {error}") from None

    def _upstream_client(
        self, upstream: Upstream, headers: dict[str, str]
    ) -> contextlib.AbstractContextManager[Any]:
        """The httpx client of one exchange with the upstream, closed after it (a subclass
        may hand out one shared, kept-alive client instead)."""
        return httpbounds.client(
            # A connection is cut by the deadline only once made: connecting may not outlast it.
            connect_timeout=min(upstream.timeout, upstream.total_timeout),
            read_timeout=upstream.total_timeout,
            headers=headers,
        )

    def _upstream_error(
        self, url: str, what: str, kind: type[ModelError] = ModelError
    ) -> ModelError:
        """The error for an upstream that failed; what it said may echo the key: redacted."""
        message = f"recording {self.path}: upstream {url} {what}"
        return kind(self.redactor.redact_text(message))

    @property
    def unused(self) -> list[int]:
        return [index for index, item in enumerate(self.cassette.interactions) if not item.used]

    def finish(self) -> None:
        """Write what was recorded; fail on interactions the conversation never asked for."""
        if self.recorded:
            self.cassette.save(self.redactor)
        unused = self.unused
        # While recording, interactions left from an earlier conversation are expected.
        if unused and not self.allow_unused and not self.records_misses:
            raise UnusedInteractionsError(
                f"unused interactions in cassette {self.path}: #{', #'.join(map(str, unused))} were"
                f" never requested ({self.replayed} replayed). The conversation ended earlier than"
                " when it was recorded; re-record with --skills-record=all, or set"
                " model.allow_unused: true."
            )


_ABSENT = object()


def _shown(value: Any) -> str:
    """A request field's value in a message: its JSON, cut short; ``unset`` when absent."""
    if value is _ABSENT:
        return "unset"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _json_body(body: Any) -> bytes:
    """A request body as httpx's ``json=`` encodes it (the same bytes)."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@functools.lru_cache(maxsize=64)
def _parsed_url(url: str) -> Any:
    """``url`` parsed once: httpx parses a URL given as text on every request."""
    import httpx

    return httpx.URL(url)


def _sse_chunks(text: str) -> list[dict[str, Any]]:
    payloads = (line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
    return [json.loads(data) for data in payloads if data and data != "[DONE]"]
