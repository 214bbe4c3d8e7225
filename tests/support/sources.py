"""Builders shared by the tests of URL skill roots: archives in memory, a raw loopback server.

``tests/conftest.py`` loads this module as a plugin, for its ``loopback_only`` fixture."""

from __future__ import annotations

import gzip
import io
import socket
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop proxy settings so that downloads from the test's own server stay on loopback; a
    module asks for it with ``pytestmark = pytest.mark.usefixtures("loopback_only")``."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def skill_md(name: str, description: str = "A test skill.") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n\nRun it.\n".encode()


def skills_tree(*names: str, prefix: str = "") -> dict[str, bytes]:
    """Archive entries for skills ``names`` under ``prefix``, each with one script."""
    entries: dict[str, bytes] = {}
    for name in names:
        entries[f"{prefix}{name}/SKILL.md"] = skill_md(name)
        entries[f"{prefix}{name}/scripts/run.sh"] = b"#!/bin/sh\necho ok\n"
    return entries


def zip_bytes(entries: dict[str, bytes], *, links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o100755 if name.endswith(".sh") else 0o100644) << 16
            archive.writestr(info, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)
    return buffer.getvalue()


@dataclass
class TarEntry:
    name: str
    data: bytes = b""
    type: bytes = tarfile.REGTYPE
    linkname: str = ""
    mode: int = 0o644


def tar_bytes(entries: dict[str, bytes] | Iterable[TarEntry], *, compressed: bool = False) -> bytes:
    members = (
        [
            TarEntry(name, data, mode=0o755 if name.endswith(".sh") else 0o644)
            for name, data in entries.items()
        ]
        if isinstance(entries, dict)
        else list(entries)
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as archive:
        for entry in members:
            info = tarfile.TarInfo(entry.name)
            info.type = entry.type
            info.linkname = entry.linkname
            info.mode = entry.mode
            info.size = len(entry.data) if entry.type == tarfile.REGTYPE else 0
            archive.addfile(info, io.BytesIO(entry.data) if info.size else None)
    # mtime=0: the same entries give the same bytes (test ids must not vary between runs)
    return gzip.compress(buffer.getvalue(), mtime=0) if compressed else buffer.getvalue()


def tree(root: Path) -> dict[str, bytes | str]:
    """Every file (content) and symlink (``'-> target'``) under ``root``, by relative path."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[relative] = f"-> {path.readlink()}"
        elif path.is_file():
            found[relative] = path.read_bytes()
    return found


@contextmanager
def raw_server(handle: Callable[[socket.socket], None]) -> Iterator[str]:
    """A loopback TCP server answering every connection with ``handle``; yields its base URL.

    For what a well-behaved HTTP server will not do: lie about
    ``Content-Length``, stall in the middle of a body.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            with connection:
                _read_request(connection)
                with suppress(OSError):
                    handle(connection)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def dripping(
    head: bytes, *, every: float = 0.5, count: int = 120
) -> Callable[[socket.socket], None]:
    """A :func:`raw_server` handler that sends ``head``, then one byte every ``every`` seconds,
    ``count`` times: no read ever waits long, the whole never ends."""

    def handle(connection: socket.socket) -> None:
        connection.sendall(head)
        for _ in range(count):
            time.sleep(every)
            connection.sendall(b"x")

    return handle


def endless(head: bytes, block: bytes, sent: list[int]) -> Callable[[socket.socket], None]:
    """A :func:`raw_server` handler that sends ``head``, then ``block`` 256 times unless cut
    off; the bytes of the blocks it could send are appended to ``sent``."""

    def handle(connection: socket.socket) -> None:
        connection.sendall(head)
        total = 0
        try:
            for _ in range(256):
                connection.sendall(block)
                total += len(block)
        finally:
            sent.append(total)

    return handle


def _read_request(connection: socket.socket) -> None:
    connection.settimeout(5)
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = connection.recv(4096)
        if not chunk:
            return
        received += chunk
