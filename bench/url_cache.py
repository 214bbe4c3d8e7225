"""Benchmark: first fetch of a URL skill root vs. using it from the cache.

Serves a zip of a few MB from a loopback server started here, then times

* the bare download of that archive with httpx (the floor of any first fetch),
* a first fetch through ``resolve_root`` (download, unpack, cache) into an
  empty cache, several times with a fresh cache each time,
* ``resolve_root`` of the same URL once cached (no request must reach the server),

and prints the medians and the ratio cached / first (goal: under 5 %).

Run: ``python bench/url_cache.py [--size-mb 4] [--rounds 7]``
"""

from __future__ import annotations

import argparse
import io
import random
import statistics
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pytest_agent_skills.sources import SourceOptions, resolve_root


def build_archive(size_mb: float) -> bytes:
    """Skills with text docs and incompressible data files, about ``size_mb`` zipped."""
    rng = random.Random(7)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        skill = 0
        while buffer.tell() < size_mb * 1024 * 1024:
            name = f"skill-{skill:03}"
            archive.writestr(
                f"repo/{name}/SKILL.md", f"---\nname: {name}\ndescription: d\n---\nRun.\n"
            )
            archive.writestr(f"repo/{name}/docs/guide.md", "Some guidance. " * 2000)
            archive.writestr(f"repo/{name}/data/blob.bin", rng.randbytes(256 * 1024))
            skill += 1
    return buffer.getvalue()


def serve(body: bytes) -> tuple[ThreadingHTTPServer, list[str]]:
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, requests


def median_seconds(action: Callable[[], object], rounds: int) -> float:
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    import httpx

    body = build_archive(args.size_mb)
    server, requests = serve(body)
    url = f"http://127.0.0.1:{server.server_address[1]}/skills.zip"
    with tempfile.TemporaryDirectory(prefix="url-cache-bench-") as scratch:
        base = Path(scratch)
        caches = iter(range(10**6))

        def first_fetch() -> Path:
            return resolve_root(url, options=SourceOptions(cache_dir=base / f"c{next(caches)}"))

        with httpx.Client() as client:
            download = median_seconds(lambda: client.get(url).content, args.rounds)
        first = median_seconds(first_fetch, args.rounds)
        warm = SourceOptions(cache_dir=base / "warm")
        resolve_root(url, options=warm)
        before = len(requests)
        cached = median_seconds(lambda: resolve_root(url, options=warm), args.rounds * 100)
        cached_requests = len(requests) - before
    server.shutdown()

    print(f"archive: {len(body) / 1024 / 1024:.1f} MiB zip from a loopback server")
    print(f"bare download (httpx, floor): {download * 1000:9.2f} ms")
    print(f"first fetch (download+unpack): {first * 1000:9.2f} ms")
    print(f"cached use:                    {cached * 1000:9.3f} ms ({cached_requests} requests)")
    print(f"ratio cached / first fetch:    {cached / first:9.4%}  (goal < 5%)")
    print(f"ratio first fetch / download:  {first / download:9.2f}x")


if __name__ == "__main__":
    main()
