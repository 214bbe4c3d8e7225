"""The supervisor of one detonation run, executed *inside* the isolated runtime.

Standard library only: it runs as ``python3 -I -S inside.py`` in the bubblewrap sandbox (or
the container), reads its orders (a JSON object) from stdin and writes its report (a JSON
object) to stdout.  It holds the only capabilities of the run (network administration in
the run's own network namespace, binding low ports, dropping capabilities) and uses them
before the command starts:

- the loopback sink: every route leads to ``lo`` and every TCP connection and UDP datagram,
  whatever its address and port, is redirected (``iptables -t nat ... REDIRECT``) to a
  listener of this process that records the original address, port and the bytes; a DNS
  server on 127.0.0.1:53 (the run's ``resolv.conf``) answers every name with a loopback
  address of its own, so a lookup and the connection after it are both seen;
- the fake HOME is seeded with the honeytokens, their access times set before their
  modification times, so that any read of one moves its atime (the kernel's ``relatime``);
- the command runs under ``setpriv`` (every capability dropped, ``no_new_privs``) and
  ``strace -f`` (file opens, writes, connections, programs run);
- when the command's shell ends, every process still alive in the run's PID namespace is
  listed as left running, then killed; the folders that were watched are compared with
  their state before the run, and files written anywhere are searched for the canaries.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

SO_ORIGINAL_DST = 80
IP_RECVORIGDSTADDR = 20
WRAPPER_MARK = "agent-skills-audit-wrapper"


def wrapper(status_fd: int) -> str:
    """The shell around the command: it runs the command in a shell of its own and writes its
    status to ``status_fd`` (closed for the command, so the command cannot fake it)."""
    return f': {WRAPPER_MARK}; bash -c "$1" {status_fd}>&-; echo $? >&{status_fd}'


class Sink:
    """Listeners that record every connection attempt and answer DNS for any name."""

    def __init__(self, tcp_port: int, payload_cap: int) -> None:
        self.tcp_port = tcp_port
        self.payload_cap = payload_cap
        self.lock = threading.Lock()
        self.connections: list[dict[str, object]] = []
        self.lookups: list[dict[str, object]] = []
        self.names: dict[str, str] = {}

    def start(self) -> None:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("127.0.0.1", self.tcp_port))
        tcp.listen(64)
        dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        dns.setsockopt(socket.SOL_IP, IP_RECVORIGDSTADDR, 1)
        dns.bind(("127.0.0.1", 53))
        for target, listener in ((self._accept, tcp), (self._datagrams, dns)):
            threading.Thread(target=target, args=(listener,), daemon=True).start()

    def address_of(self, name: str) -> str:
        """A loopback address of its own for each name looked up (so connections name it)."""
        with self.lock:
            if name not in self.names:
                index = len(self.names) + 1
                self.names[name] = f"127.53.{index // 250}.{index % 250 + 1}"
            return self.names[name]

    def name_of(self, address: str) -> str | None:
        with self.lock:
            for name, given in self.names.items():
                if given == address:
                    return name
        return None

    def _record_attempt(
        self, protocol: str, address: str, port: int, data: bytes
    ) -> dict[str, object]:
        """A connection attempt to ``address:port``, recorded with what it sent (``data``,
        kept up to the payload cap); the TCP side adds what comes after to the entry."""
        entry: dict[str, object] = {
            "protocol": protocol,
            "address": address,
            "port": port,
            "name": self.name_of(address),
            "size": len(data),
            "payload": base64.b64encode(data[: self.payload_cap]).decode("ascii"),
        }
        with self.lock:
            self.connections.append(entry)
        return entry

    def _accept(self, listener: socket.socket) -> None:
        while True:
            connection, _peer = listener.accept()
            threading.Thread(target=self._record, args=(connection,), daemon=True).start()

    def _record(self, connection: socket.socket) -> None:
        raw = connection.getsockopt(socket.SOL_IP, SO_ORIGINAL_DST, 16)
        port, packed = struct.unpack_from("!2xH4s", raw)
        entry = self._record_attempt("tcp", socket.inet_ntoa(packed), port, b"")
        data = b""
        connection.settimeout(1.0)
        answered = False
        try:
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                entry["size"] = int(str(entry["size"])) + len(chunk)
                if len(data) < self.payload_cap:
                    data += chunk[: self.payload_cap - len(data)]
                    entry["payload"] = base64.b64encode(data).decode("ascii")
                if not answered and _request_complete(data):
                    answered = True
                    connection.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                    )
        except OSError:
            pass
        finally:
            connection.close()

    def _datagrams(self, listener: socket.socket) -> None:
        while True:
            data, ancillary, _flags, peer = listener.recvmsg(65536, 256)
            address, port = "127.0.0.1", 53
            for level, kind, value in ancillary:
                if level == socket.SOL_IP and kind == IP_RECVORIGDSTADDR:
                    port, packed = struct.unpack_from("!2xH4s", value)
                    address = socket.inet_ntoa(packed)
            answer = self._dns_answer(data)
            if answer is None or port != 53:
                self._record_attempt("udp", address, port, data)
            if answer is not None:
                listener.sendto(answer, peer)

    def _dns_answer(self, query: bytes) -> bytes | None:
        """The answer to a DNS query: A records get a loopback address, others no record."""
        if len(query) < 12:
            return None
        ident, _flags, questions = struct.unpack_from("!HHH", query)
        if questions != 1:
            return None
        labels, position = [], 12
        while position < len(query) and query[position]:
            length = query[position]
            labels.append(query[position + 1 : position + 1 + length].decode("ascii", "replace"))
            position += 1 + length
        position += 1
        if position + 4 > len(query):
            return None
        record_type = struct.unpack_from("!H", query, position)[0]
        question = query[12 : position + 4]
        name = ".".join(labels).lower()
        with self.lock:
            self.lookups.append({"name": name, "type": record_type})
        header = struct.pack("!HHHHHH", ident, 0x8180, 1, 1 if record_type == 1 else 0, 0, 0)
        if record_type != 1:
            return header + question
        record = struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4)
        return header + question + record + socket.inet_aton(self.address_of(name))


def _request_complete(data: bytes) -> bool:
    """True once ``data`` holds a whole HTTP request (headers and the body they announce)."""
    head, found, body = data.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            try:
                return len(body) >= int(value.strip())
            except ValueError:
                return True
    return True


def route_everything_to_the_sink(orders: dict[str, object], port: int) -> list[str]:
    """Routes and NAT rules of the run's network namespace; the errors, if any."""
    ip, iptables = str(orders["ip"]), [str(part) for part in orders["iptables"]]  # type: ignore[attr-defined]
    nat = [*iptables, "-t", "nat", "-A", "OUTPUT", "-p"]
    steps = [
        [ip, "route", "add", "default", "dev", "lo"],
        [*nat, "tcp", "-j", "REDIRECT", "--to-ports", str(port)],
        [*nat, "udp", "-j", "REDIRECT", "--to-ports", "53"],
    ]
    errors = []
    for step in steps:
        done = subprocess.run(step, capture_output=True, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            errors.append(f"{' '.join(step)}: {done.stderr.decode('utf-8', 'replace').strip()}")
    return errors


def seed_home(home: str, files: dict[str, dict[str, object]]) -> dict[str, int]:
    """Write the honeytokens; each file's atime is set before its mtime (a read moves it)."""
    atimes = {}
    for relative, spec in files.items():
        path = os.path.join(home, relative)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(str(spec["content"]))
        os.chmod(path, int(str(spec["mode"])))
        stat = os.stat(path)
        earlier = stat.st_mtime_ns - 3_600_000_000_000
        os.utime(path, ns=(earlier, stat.st_mtime_ns))
        atimes[path] = earlier
    return atimes


def snapshot(roots: list[str], skip: str) -> dict[str, tuple[str, int, int]]:
    """Every entry under ``roots`` (not under ``skip``): kind, size, mtime."""
    seen: dict[str, tuple[str, int, int]] = {}
    for root in roots:
        for folder, dirnames, filenames in os.walk(root):
            dirnames[:] = [name for name in dirnames if os.path.join(folder, name) != skip]
            for name in dirnames + filenames:
                path = os.path.join(folder, name)
                try:
                    stat = os.lstat(path)
                except OSError:
                    continue
                kind = "folder" if name in dirnames and not os.path.islink(path) else "file"
                seen[path] = (kind, stat.st_size, stat.st_mtime_ns)
    return seen


def changes(
    before: dict[str, tuple[str, int, int]], after: dict[str, tuple[str, int, int]]
) -> list[dict[str, str]]:
    found = []
    for path in sorted(set(before) | set(after)):
        if (before.get(path) or after[path])[0] == "folder":
            continue  # a folder made or removed shows in the files it holds
        if path not in before:
            found.append({"path": path, "change": "created"})
        elif path not in after:
            found.append({"path": path, "change": "removed"})
        elif before[path] != after[path] and before[path][0] == "file":
            found.append({"path": path, "change": "modified"})
    return found


def files_with_canaries(
    paths: list[str], variants: dict[str, str], cap: int
) -> list[dict[str, str]]:
    """Files (among ``paths``) holding a canary, in any of its encodings."""
    found = []
    for path in paths:
        try:
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            with open(path, "rb") as handle:
                data = handle.read(cap).decode("latin-1")
        except OSError:
            continue
        joined = "".join(data.split())  # an encoder's line breaks ignored
        for variant, canary in variants.items():
            if variant in data or variant in joined:
                found.append({"path": path, "canary": canary})
                break
    return found


class Capture(threading.Thread):
    """Reads one output stream of the command, keeping at most ``cap`` bytes."""

    def __init__(self, stream: object, cap: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.cap = stream, cap
        self.data, self.size = b"", 0

    def run(self) -> None:
        while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
            self.size += len(chunk)
            if len(self.data) < self.cap:
                self.data += chunk[: self.cap - len(self.data)]


def other_processes(spared: set[int], tracer: int) -> list[dict[str, object]]:
    """The processes of this PID namespace but the spared ones and the wrapper shell."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in spared:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            state = stat.rsplit(b")", 1)[1].split()[0]
            # A process between fork and exec, or leaving, shows no arguments: its name then.
            command = command or stat.split(b"(", 1)[1].rsplit(b")", 1)[0].decode(
                "utf-8", "replace"
            )
        except OSError:
            continue
        if state == b"Z" or _is_wrapper(entry, tracer):
            continue
        found.append({"pid": int(entry), "command": command[:300]})
    return found


def _wait_for_the_wrapper(tracer: int, deadline: float) -> None:
    """Until the wrapper shell, which exits right after writing the status, is gone."""
    while time.monotonic() < deadline and any(
        _is_wrapper(entry, tracer) for entry in os.listdir("/proc") if entry.isdigit()
    ):
        time.sleep(0.005)


def _is_wrapper(pid: str, tracer: int) -> bool:
    """The wrapper: a child of strace with the mark (a command naming the mark is not)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            marked = WRAPPER_MARK.encode() in handle.read()
        with open(f"/proc/{pid}/stat", "rb") as handle:
            parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return False
    return marked and parent == tracer


def _left_running(spared: set[int], tracer: int, orders: dict[str, object]) -> list[object]:
    """The processes still running ``linger`` seconds after the command ended (watched
    meanwhile: what one does a moment later, connect or write, is seen too); one that ends
    in that time, as a process leaving does, is not left running."""
    deadline = time.monotonic() + float(str(orders["linger"]))
    while other_processes(spared, tracer) and time.monotonic() < deadline:
        time.sleep(0.05)
    return list(other_processes(spared, tracer))


def kill_all(spared: set[int]) -> None:
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in spared:
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)


def detonate(orders: dict[str, object]) -> dict[str, object]:
    home, workspace = str(orders["home"]), str(orders["workspace"])
    watched = [str(path) for path in orders["watched"]]  # type: ignore[attr-defined]
    report: dict[str, object] = {"setup_errors": []}
    sink = Sink(int(str(orders["sink_port"])), int(str(orders["payload_cap"])))
    sink.start()
    errors = route_everything_to_the_sink(orders, sink.tcp_port)
    if errors:
        report["setup_errors"] = errors
        return report
    atimes = seed_home(home, orders["home_files"])  # type: ignore[arg-type]
    skill_folder = str(orders["skill"])
    before = snapshot([*watched, workspace], skill_folder)
    status_read, status_write = os.pipe()
    argv = [
        str(orders["setpriv"]), "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all",
        "--no-new-privs", "--",
        str(orders["strace"]), "-f", "-qq", "-s", "512", "-o", str(orders["trace"]),
        "-e", "trace=" + str(orders["traced"]), "-e", "signal=none",
        "--", str(orders["bash"]), "-c", wrapper(status_write), WRAPPER_MARK,
        str(orders["command"]),
    ]  # fmt: skip
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        cwd=str(orders["cwd"]),
        env={str(key): str(value) for key, value in orders["env"].items()},  # type: ignore[attr-defined]
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(status_write,),
    )
    os.close(status_write)
    cap = int(str(orders["output_cap"]))
    captures = [Capture(process.stdout, cap), Capture(process.stderr, cap)]
    for capture in captures:
        capture.start()
    ready, _, _ = select.select([status_read], [], [], float(str(orders["timeout"])))
    status_text = os.read(status_read, 64).decode("ascii", "replace").strip() if ready else ""
    report["seconds"] = round(time.monotonic() - started, 3)
    report["timed_out"] = not ready
    report["exit_code"] = int(status_text) if status_text.lstrip("-").isdigit() else None
    if ready:
        _wait_for_the_wrapper(process.pid, time.monotonic() + 0.5)
    spared = {1, os.getpid(), process.pid}
    report["left_running"] = [] if not ready else _left_running(spared, process.pid, orders)
    kill_all(spared)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for capture in captures:
        capture.join(5)
    report["stdout"] = base64.b64encode(captures[0].data).decode("ascii")
    report["stderr"] = base64.b64encode(captures[1].data).decode("ascii")
    report["output_cut"] = any(capture.size > cap for capture in captures)
    after = snapshot([*watched, workspace], skill_folder)
    changed = changes(before, after)
    shown = [str(prefix) for prefix in orders["shown_files"]]  # type: ignore[attr-defined]
    for change in changed:  # what a start-up file now holds, for the reading
        if change["change"] != "removed" and change["path"] in shown:
            change["content"] = _head(change["path"], 4096)
    report["changes"] = changed
    report["honeytokens_read"] = [
        path for path, earlier in atimes.items() if _atime(path) not in (None, earlier)
    ]
    variants = {str(key): str(value) for key, value in orders["canary_variants"].items()}  # type: ignore[attr-defined]
    written = [
        path
        for path, (kind, _s, _m) in after.items()
        if kind == "file" and (path not in atimes or before.get(path) != after[path])
    ]
    report["canary_files"] = files_with_canaries(written, variants, cap)
    with sink.lock:
        report["connections"] = list(sink.connections)
        report["lookups"] = list(sink.lookups)
    try:
        with open(str(orders["trace"]), "rb") as handle:
            report["trace"] = handle.read(int(str(orders["trace_cap"]))).decode("utf-8", "replace")
    except OSError as error:
        report["trace"] = ""
        report["setup_errors"] = [f"no trace: {error}"]
    return report


def _head(path: str, cap: int) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(cap).decode("utf-8", "replace")
    except OSError:
        return ""


def _atime(path: str) -> int | None:
    try:
        return os.stat(path).st_atime_ns
    except OSError:
        return None


def main() -> None:
    orders = json.loads(sys.stdin.read())
    report = detonate(orders)
    sys.stdout.write(json.dumps(report))
    sys.stdout.flush()
    os._exit(0)  # the sink's threads block in accept/recv


if __name__ == "__main__":
    main()
