"""Recording from an upstream is bounded: a total timeout on the clock and a cap on the answer's
size, both settings (command line > environment > configuration file), each failure a typed
error naming the upstream, the limit and the setting that raises it.  Upstreams are loopback
servers the tests start; the conversation goes through the real ``openai`` client."""

from __future__ import annotations

import json
import os
import socket
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (imported once here, not again by every pytester run)
import pytest

from pytest_agent_skills.harness import (
    ModelError,
    RunOutcome,
    RunSettings,
    Upstream,
    run_conversation,
)
from pytest_agent_skills.harness.cassette import (
    ANSWER_MARGIN,
    UpstreamTimeoutError,
    UpstreamTooLargeError,
)
from pytest_agent_skills.harness.runner import ServedModel
from pytest_agent_skills.harness.server import ScriptedBackend
from pytest_agent_skills.httpbounds import Deadline
from pytest_agent_skills.repository import SkillRepository
from tests.support.harness import SKILLS, record_options, scripted_upstream
from tests.support.pytester_runs import SCENARIOS_ONLY, run_scenarios
from tests.support.sources import dripping, endless, raw_server

pytestmark = pytest.mark.usefixtures("loopback_only")

MIB = 1024 * 1024
TIMEOUT_FIX = (
    "raise the total timeout with --skills-upstream-timeout (ini skills_upstream_timeout, env"
    " SKILLS_UPSTREAM_TIMEOUT) if the model is just slow"
)
SIZE_FIX = (
    "raise the limit with --skills-upstream-max-bytes (ini skills_upstream_max_bytes, env"
    " SKILLS_UPSTREAM_MAX_BYTES) if such answers are expected"
)


def record(cassette: Path, upstream: Upstream, transport: str = "sdk") -> RunOutcome:
    return run_conversation(
        SkillRepository([SKILLS]),
        "Hi.",
        cassette=cassette,
        settings=RunSettings(record_mode="once", upstream=upstream),
        transport=transport,
    )


@pytest.fixture(scope="module")
def block() -> bytes:
    """A MiB of an answer's bytes, made before any memory is measured."""
    return b" " * MIB


JSON_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


@pytest.mark.parametrize(
    "head",
    [JSON_HEAD + b"Content-Length: 5000\r\n\r\n{", b"HTTP/1.1 200 OK\r\nX-Slow: "],
    ids=["body", "headers"],
)
def test_an_upstream_dripping_bytes_fails_at_the_total_timeout(tmp_path: Path, head: bytes):
    """A byte every 0.2 s never trips the 120 s read timeout; the 1 s total must still hold."""
    cassette = tmp_path / "drip.json"
    with raw_server(dripping(head, every=0.2, count=300)) as base:
        started = time.monotonic()
        with pytest.raises(UpstreamTimeoutError) as caught:
            record(cassette, Upstream(base, total_timeout=1.0))
        waited = time.monotonic() - started
    assert str(caught.value) == (
        f"recording {cassette}: upstream {base}/chat/completions took longer than 1 s in total"
        f" to answer; {TIMEOUT_FIX}"
    )
    assert waited < 15, f"cut off after {waited:.1f} s, not at the 1 s total timeout"
    assert not cassette.exists()


def test_a_silent_upstream_fails_at_the_total_timeout_not_the_connect_timeout(tmp_path: Path):
    """Nothing sent at all: the wait is cut by the total timeout, and said so."""
    cassette = tmp_path / "silent.json"
    with (
        raw_server(dripping(b"", every=3.0, count=1)) as base,
        pytest.raises(UpstreamTimeoutError) as caught,
    ):
        record(cassette, Upstream(base, timeout=0.2, total_timeout=1.0))
    assert str(caught.value) == (
        f"recording {cassette}: upstream {base}/chat/completions took longer than 1 s in total"
        f" to answer; {TIMEOUT_FIX}"
    )
    assert not cassette.exists()


def test_the_timeout_error_masks_the_upstreams_query_secrets(tmp_path: Path):
    cassette = tmp_path / "drip.json"
    with raw_server(dripping(b"HTTP/1.1 200 OK\r\nX-Slow: ", every=0.2, count=300)) as base:
        upstream = Upstream(f"{base}?api-key=q-secret-77", total_timeout=0.5)
        with pytest.raises(UpstreamTimeoutError) as caught:
            record(cassette, upstream)
    assert f"upstream {base}/chat/completions?api-key=*** took longer than 0.5 s" in str(
        caught.value
    )
    assert "q-secret-77" not in str(caught.value)


def test_an_upstream_that_refuses_the_connection_is_no_timeout(tmp_path: Path):
    """A connection error within the limits stays what it is, not a limit hit."""
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{probe.getsockname()[1]}"
    cassette = tmp_path / "refused.json"
    with pytest.raises(ModelError) as caught:
        record(cassette, Upstream(base, total_timeout=5.0))
    assert type(caught.value) is ModelError
    assert str(caught.value).startswith(
        f"recording {cassette}: upstream {base}/chat/completions could not be reached: "
    )
    assert not cassette.exists()


@pytest.fixture
def peak_memory() -> Iterator[Callable[[], int]]:
    """The most memory Python held since the test started tracing, in bytes."""
    tracemalloc.start()
    try:
        yield lambda: tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


CAP = 4 * MIB


@pytest.mark.parametrize(
    ("length", "detail"),
    [
        (
            b"Connection: close\r\n",
            f"the body is over the response limit of {CAP} bytes (cut off while streaming)",
        ),
        (
            f"Content-Length: {256 * MIB}\r\n".encode(),
            f"the server announces {256 * MIB} bytes (Content-Length), over the response limit"
            f" of {CAP} bytes",
        ),
    ],
    ids=["no-length", "content-length"],
)
def test_an_answer_over_the_cap_fails_holding_no_more_than_the_cap(
    tmp_path: Path, block: bytes, peak_memory: Callable[[], int], length: bytes, detail: str
):
    """256 MiB offered, with no length or announcing it: refused at once, or cut off at 4 MiB."""
    cassette = tmp_path / "big.json"
    sent: list[int] = []
    with raw_server(endless(JSON_HEAD + length + b"\r\n", block, sent)) as base:
        with pytest.raises(UpstreamTooLargeError) as caught:
            record(cassette, Upstream(base, max_response_bytes=CAP))
        peak = peak_memory()
    assert str(caught.value) == (
        f"recording {cassette}: upstream {base}/chat/completions answered too much: {detail};"
        f" {SIZE_FIX}"
    )
    assert peak < 2 * CAP, f"held {peak / MIB:.1f} MiB for a {CAP // MIB} MiB cap"
    assert sent[0] < 256 * MIB, "the upstream was read to its end"
    assert not cassette.exists()


class SlowBackend(ScriptedBackend):
    """An upstream that thinks before it answers, sending nothing meanwhile."""

    def respond(self, body: dict, headers: dict[str, str]) -> Any:
        time.sleep(1.5)
        return super().respond(body, headers)


def test_an_answer_slower_than_the_connect_timeout_is_waited_for_within_the_total(
    tmp_path: Path,
) -> None:
    """A reasoning model may say nothing for minutes before it answers: only the total timeout
    bounds the wait (a 120 s read timeout used to cut such answers, as 'could not be reached')."""
    cassette = tmp_path / "slow.json"
    with scripted_upstream([{"say": "Thought it over."}], SlowBackend) as upstream:
        slow = Upstream(upstream.base_url, "sk-test", timeout=0.5, total_timeout=30.0)
        outcome = record(cassette, slow)
    assert outcome.trajectory.final == "Thought it over."
    assert cassette.exists()


@pytest.mark.parametrize("transport", ["sdk", "sdk-stream"])
def test_a_normal_recording_keeps_the_cassettes_shape(tmp_path: Path, transport: str):
    cassette = tmp_path / "hi.json"
    with scripted_upstream([{"say": "Hello."}]) as upstream:
        options = record_options(upstream)
        outcome = run_conversation(
            SkillRepository([SKILLS]),
            "Hi.",
            cassette=cassette,
            settings=options,
            transport=transport,
        )
    assert outcome.trajectory.final == "Hello."
    data = json.loads(cassette.read_text())
    assert list(data) == ["$schema", "format", "version", "interactions"]
    assert data["$schema"] == "pytest-agent-skills:schemas/cassette.schema.json"
    (interaction,) = data["interactions"]
    request, response = interaction["request"], interaction["response"]
    assert list(request) == ["method", "url", "headers", "body"]
    assert request["method"] == "POST"
    assert request["url"] == f"{upstream.base_url}/chat/completions"
    assert request["headers"] == {
        "Content-Type": "application/json",
        "Authorization": "<redacted>",
    }
    assert request["body"]["messages"][-1] == {"role": "user", "content": "Hi."}
    assert list(response) == ["status", "headers", "streamed", "body"]
    streamed = transport == "sdk-stream"
    content_type = "text/event-stream" if streamed else "application/json"
    assert (response["status"], response["headers"], response["streamed"]) == (
        200,
        {"content-type": content_type},
        streamed,
    )
    assert response["body"]["choices"][0]["message"]["content"] == "Hello."


def test_the_upstream_gets_the_request_as_httpx_sends_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The request body goes out encoded once, to a URL parsed once: the bytes and headers
    httpx's ``json=`` sends."""
    import httpx

    cassette = tmp_path / "hi.json"
    received: list[tuple[dict[str, str], bytes]] = []
    with scripted_upstream([{"say": "Hello."}]) as upstream:
        answer = upstream.answer

        def keep(method: str, target: str, headers: dict[str, str], data: bytes) -> Any:
            received.append((headers, data))
            return answer(method, target, headers, data)

        monkeypatch.setattr(upstream, "answer", keep)  # this server only
        record(cassette, Upstream(upstream.base_url + "?q=é", "sk-test"))
    body = json.loads(cassette.read_text())["interactions"][0]["request"]["body"]
    client = httpx.Client(headers={"Content-Type": "application/json"})
    url = f"{upstream.base_url}/chat/completions?q=é"
    expected = client.build_request("POST", url, json=body)
    ((headers, data),) = received
    assert data == expected.read()
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Length"] == str(len(data))
    assert headers["Host"] == expected.headers["Host"]


def test_the_loopback_client_waits_past_the_recordings_total_timeout(tmp_path: Path):
    """The ``openai`` client waits on the loopback server, which waits on the upstream: it must
    not give up first (its default is 60 s), or a slow model fails with no limit named."""
    from pytest_agent_skills.harness.cassette import CassetteBackend

    upstream = Upstream("http://127.0.0.1:9/v1", total_timeout=900.0)
    recording = CassetteBackend(tmp_path / "new.json", mode="once", upstream=upstream)
    served = ServedModel(recording, model_name="m", stream=False)
    try:
        assert served.client.client.timeout == 900.0 + ANSWER_MARGIN
    finally:
        served.close()


class _Stream:
    """What httpcore's trace hands a deadline when a connection is made: its socket."""

    def __init__(self, connection: socket.socket) -> None:
        self.connection = connection

    def get_extra_info(self, name: str) -> socket.socket | None:
        return self.connection if name == "socket" else None


def _connect(deadline: Deadline) -> tuple[socket.socket, socket.socket]:
    """A connected pair whose first end ``deadline`` guards, as httpcore reports one made."""
    ours, theirs = socket.socketpair()
    deadline.trace("connection.connect_tcp.complete", {"return_value": _Stream(ours)})
    ours.settimeout(60)  # a deadline that never comes fails the test, not hangs it
    return ours, theirs


def test_a_deadline_shorter_than_the_ones_kept_cuts_its_exchange_in_its_time():
    """One watchdog keeps the deadlines of every exchange: a short one, entered while a long
    one waits, still cuts its own connection (and only it)."""
    with Deadline(600) as long:
        slow, slow_peer = _connect(long)
        with Deadline(0.3) as short:
            cut, _peer = _connect(short)
            assert cut.recv(1) == b""  # shut down at its deadline, not the long one's
        assert short.expired
        slow_peer.sendall(b"x")
        assert slow.recv(1) == b"x"
    assert not long.expired


def test_an_exchange_that_ended_in_time_is_never_cut():
    with Deadline(0.05) as ended:
        kept, kept_peer = _connect(ended)
    with Deadline(0.3) as later:  # its time comes after the ended one's
        cut, _peer = _connect(later)
        assert cut.recv(1) == b""
    assert not ended.expired
    kept_peer.sendall(b"x")
    assert kept.recv(1) == b"x"


def test_a_forked_child_keeps_its_deadlines_with_a_watchdog_of_its_own():
    """A child forked once the watchdog runs has no copy of its thread (and its lock may be
    held): the child starts its own, so a deadline there still cuts its exchange."""
    with Deadline(0.05):
        pass  # the parent's watchdog thread is running now
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        verdict = b"n"
        try:
            with Deadline(0.2) as short:
                cut, _peer = _connect(short)
                verdict = b"y" if cut.recv(1) == b"" and short.expired else b"n"
        finally:
            os.write(writer, verdict)
            os._exit(0)
    os.close(writer)
    try:
        assert os.read(reader, 1) == b"y"
    finally:
        os.close(reader)
        os.waitpid(child, 0)


# --- through pytest ----------------------------------------------------------------------------


SCENARIO = """\
name: hello
skills: [skills]
user: Hi.
model:
  cassette: cassettes/hello.json
  transport: sdk
"""


FAILED_SCENARIO = "scenario 'hello' (hello.scenario.yaml:1): "


@pytest.fixture
def hello(suite: pytest.Pytester) -> pytest.Pytester:
    """The fixture skills and the scenario ``hello``."""
    (suite.path / "hello.scenario.yaml").write_text(SCENARIO)
    return suite


def test_pytest_shows_the_total_timeout_as_a_clean_failure_of_the_scenario(
    hello: pytest.Pytester,
):
    with raw_server(dripping(b"HTTP/1.1 200 OK\r\nX-Slow: ", every=0.2, count=300)) as base:
        result = run_scenarios(
            hello,
            "--skills-record=once",
            f"--skills-upstream-url={base}",
            "--skills-upstream-timeout=1",
        )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"{FAILED_SCENARIO}UpstreamTimeoutError: recording */cassettes/hello.json: upstream"
            f" {base}/chat/completions took longer than 1 s in total to answer; {TIMEOUT_FIX}",
        ]
    )
    assert "Traceback" not in result.stdout.str()
    assert not (hello.path / "cassettes").exists()


def announcing(size: int) -> Callable[[socket.socket], None]:
    def handle(connection: socket.socket) -> None:
        connection.sendall(JSON_HEAD + f"Content-Length: {size}\r\n\r\n".encode())

    return handle


@pytest.mark.parametrize(
    ("flag", "env", "limit"),
    [(True, True, 300), (False, True, 200), (False, False, 100)],
    ids=["command-line", "environment", "config-file"],
)
def test_the_size_limit_comes_from_the_command_line_then_the_environment_then_the_file(
    hello: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: bool, env: bool, limit: int
):
    hello.makeini("[pytest]\nskills_upstream_max_bytes = 100\n")
    if env:
        monkeypatch.setenv("SKILLS_UPSTREAM_MAX_BYTES", "200")
    with raw_server(announcing(5000)) as base:
        args = ["--skills-record=once", f"--skills-upstream-url={base}"]
        result = run_scenarios(hello, *args, *(["--skills-upstream-max-bytes=300"] * flag))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"{FAILED_SCENARIO}UpstreamTooLargeError: recording */cassettes/hello.json: upstream"
            f" {base}/chat/completions answered too much: the server announces 5000 bytes"
            f" (Content-Length), over the response limit of {limit} bytes; {SIZE_FIX}",
        ]
    )


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (
            "command-line",
            "ERROR: command line: --skills-upstream-timeout must be a positive number of seconds,"
            " at most 3600, got 7200.0",
        ),
        (
            "environment",
            "ERROR: environment variable SKILLS_UPSTREAM_TIMEOUT: --skills-upstream-timeout must be"
            " a positive number of seconds, at most 3600, got 0.0",
        ),
        (
            "config-file",
            "ERROR: */tox.ini: skills_upstream_max_bytes: --skills-upstream-max-bytes must be a"
            " positive number of bytes, got -1",
        ),
    ],
)
def test_a_bad_limit_is_a_usage_error_naming_where_it_was_set(
    hello: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str, expected: str
):
    args = [*SCENARIOS_ONLY, "--skills-upstream-url=http://127.0.0.1:9/v1"]
    if where == "command-line":
        args.append("--skills-upstream-timeout=7200")
    elif where == "environment":
        monkeypatch.setenv("SKILLS_UPSTREAM_TIMEOUT", "0")
    else:
        hello.makeini("[pytest]\nskills_upstream_max_bytes = -1\n")
    result = hello.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])
