"""Work over many items shared out to forked processes, their results sent back pickled.

Validating thousands of skills is pure Python over files: on a machine with more than one
processor, forked children each take a share of the skills (spread along them, so that large
and small skills even out) while the parent does its own.  A child reads and checks
its skills itself and sends them back: objects made before the fork are shared until written,
and every object a child only reads still has its reference count written, which copies the
page it lives on.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Generic, NoReturn, TypeVar, cast

from ..errors import AgentSkillsError

T = TypeVar("T")

#: Each process takes at least this many items (so fewer than twice as many are worked through
#: in one process).  A fork is not free: the parent and the child each copy every page of the
#: interpreter's memory they write to (reference counts are writes), and the results come back
#: pickled, to be read by the parent.  Below several dozen skills (small ones; fewer large ones)
#: what a child saves is smaller than that, and where no processor is idle the child only takes
#: time from the parent.
SHARE_AT_LEAST = 70
_ONE_PROCESS = "run with --jobs 1 to validate every skill in one process"


class WorkerFailed(AgentSkillsError):
    """A forked worker failed or ended without its results; the message says how, with the
    worker's traceback when it raised."""


def default_jobs() -> int:
    """``--jobs auto``: on Linux, one process per idle processor this one may run on (its
    affinity, less the share of the machine's processors busy now: see :func:`_busy_share`),
    1 at least; elsewhere 1, as where the system's own libraries may run threads that a fork
    does not carry (macOS: hence Python's ``spawn`` there), forking is not safe by default.

    A child on a busy processor only takes time from the parent: the work is the same, plus
    the fork's."""
    if not sys.platform.startswith("linux"):
        return 1
    try:
        processors = len(os.sched_getaffinity(0))
    except OSError:
        processors = os.cpu_count() or 1
    return max(1, round(processors * (1 - _busy_share())))


#: The kernel's load figures: the load averages, then runnable / all scheduling entities.
LOAD_FILE = "/proc/loadavg"


def _busy_share() -> float:
    """The share of the machine's processors busy (the busy ones over their number, 1 at
    most); 0 where the system does not say.

    Busy now, where the kernel says (:data:`LOAD_FILE`: the tasks runnable at this instant,
    this process one of them), rather than over the last minute: a run that follows other
    runs (a benchmark, a CI job's earlier steps) would count its predecessors, long ended.
    Elsewhere, the 1-minute load average."""
    try:
        with open(LOAD_FILE, "rb") as stream:
            runnable = stream.read().split()[3].split(b"/")[0]
        busy = float(int(runnable) - 1)
    except (OSError, IndexError, ValueError):
        try:
            busy = os.getloadavg()[0]
        except OSError:
            return 0.0
    return min(1.0, max(0.0, busy) / (os.cpu_count() or 1))


def processes_for(count: int, jobs: int) -> int:
    """How many processes share out ``count`` items when ``jobs`` are asked for: at most one per
    :data:`SHARE_AT_LEAST` items; 1 (this process alone) where ``fork`` is missing or another
    thread runs (a child forked beside a running thread could find a lock that thread held
    taken forever)."""
    processes = min(jobs, count // SHARE_AT_LEAST)
    if processes < 2 or not hasattr(os, "fork") or threading.active_count() > 1:
        return 1
    return processes


class Split(Generic[T]):
    """Items ``0 .. count - 1`` in ``jobs`` interleaved shares, the first (:attr:`own`, this
    process's) ``own_weight`` times the size of the others (this process may have more to do
    besides), each other one ``work(share)`` in a child forked at once.  ``work`` returns
    one picklable result per index, in order.  :meth:`gather` collects the children's results,
    :meth:`abandon` only waits for them: one of the two is called whatever happens to this
    process's own share, so that no child is left behind."""

    def __init__(
        self,
        count: int,
        work: Callable[[Sequence[int]], list[T]],
        jobs: int,
        own_weight: float = 1.0,
    ) -> None:
        import pickle  # noqa: F401 - loaded once, before the forks: every child has it

        shares = _shares(count, [own_weight] + [1.0] * (jobs - 1))
        self.own: Sequence[int] = shares[0]
        self._children: list[tuple[Sequence[int], int, int]] = []
        for share in shares[1:]:
            try:
                pid, results = _fork(work, share)
            except OSError as error:  # e.g. the limit of processes reached
                self.abandon()
                raise WorkerFailed(
                    f"cannot start a validation worker process ({error.strerror or error});"
                    f" {_ONE_PROCESS}"
                ) from None
            self._children.append((share, pid, results))

    def gather(self) -> list[tuple[Sequence[int], list[T]]]:
        """Each child's share and results; :class:`WorkerFailed` when one failed (raised once
        every child was waited for)."""
        gathered = self._wait()
        for _share, outcome in gathered:
            if isinstance(outcome, WorkerFailed):
                raise outcome
        return cast("list[tuple[Sequence[int], list[T]]]", gathered)

    def abandon(self) -> None:
        """Wait for every child and drop what it sends (this process's own share failed)."""
        self._wait()

    def _wait(self) -> list[tuple[Sequence[int], list[object] | WorkerFailed]]:
        children, self._children = self._children, []
        return [(share, _gather(pid, results)) for share, pid, results in children]


def _shares(count: int, weights: Sequence[float]) -> list[list[int]]:
    """The items ``0 .. count - 1`` in shares in proportion to ``weights``, each share taking
    slots spread along the items (sizes vary along a repository: large and small skills even
    out): a pattern of ten slots per share, each slot to the share furthest behind its weight,
    repeated over the items."""
    period = 10 * len(weights)
    slots: list[list[int]] = [[] for _weight in weights]
    for slot in range(period):
        behind = min(range(len(weights)), key=lambda share: len(slots[share]) / weights[share])
        slots[behind].append(slot)
    shares: list[list[int]] = []
    for taken in slots:
        share: list[int] = []
        for slot in taken:
            share.extend(range(slot, count, period))
        shares.append(share)
    return shares


def _fork(work: Callable[[Sequence[int]], list[T]], share: Sequence[int]) -> tuple[int, int]:
    """The pid of a child forked to run ``work(share)`` and the file it writes its results to."""
    results = _results_file()
    try:
        pid = os.fork()
    except OSError:
        os.close(results)
        raise
    if pid == 0:
        _run_child(work, share, results)
    return pid, results


def _results_file() -> int:
    """A file of its own for a child's results: the child writes them whole and ends without
    waiting for this process to read them (a pipe holds 64 KiB: the rest would wait until this
    process ends its own share, then cross a pipe's worth at a time).  In memory where the
    system makes such files, else an unnamed temporary file."""
    if hasattr(os, "memfd_create"):
        return os.memfd_create("agent-skills-results", os.MFD_CLOEXEC)
    import tempfile

    descriptor, path = tempfile.mkstemp(prefix="agent-skills-results-")
    os.unlink(path)
    return descriptor


def _run_child(
    work: Callable[[Sequence[int]], list[T]], share: Sequence[int], out: int
) -> NoReturn:
    import pickle  # (where it is used: a run that forks nothing loads none of this)

    status = 0
    try:
        payload = pickle.dumps((True, work(share)), pickle.HIGHEST_PROTOCOL)
    except BaseException:  # everything goes back to the parent, as text (Ctrl-C included)
        import traceback

        payload = pickle.dumps((False, traceback.format_exc()), pickle.HIGHEST_PROTOCOL)
        status = 1
    try:
        with open(out, "wb") as stream:
            stream.write(payload)
    finally:
        # Nothing of the parent's runs here: no exit handler, no flush of its buffered output.
        os._exit(status)


def _gather(pid: int, results: int) -> list[object] | WorkerFailed:
    import pickle

    _pid, status = os.waitpid(pid, 0)
    with open(results, "rb") as stream:
        stream.seek(0)  # (the child's writing moved the offset the two share)
        data = stream.read()
    try:
        ok, value = pickle.loads(data)
    except (EOFError, pickle.UnpicklingError):  # nothing, or a part: it ended while writing
        return WorkerFailed(
            f"a validation worker process (pid {pid}) {_how_it_ended(status)} before sending"
            f" its results; {_ONE_PROCESS}"
        )
    if not ok:
        return WorkerFailed(f"a validation worker process (pid {pid}) failed:\n{value}")
    assert isinstance(value, list)
    return value


def _how_it_ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was ended by signal {os.WTERMSIG(status)}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"
