"""The Docker isolation of a detonation run, where bubblewrap cannot make a sandbox.

One container per run, removed after it: network ``none`` (only ``lo``), the host's system
folders read-only as in the sandbox (so the supervisor finds the same tools: strace,
iptables, setpriv, python3), size-bounded tmpfs for the fake HOME, the workspace and the
scratch folders, the skill folder read-only.  The supervisor holds ``NET_ADMIN`` and
``NET_BIND_SERVICE`` in the container and drops every capability for the command.  The
orders go in through a read-only file of a private folder; the report comes back on the
container's stdout.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..workspace.names import DEFAULT_DOCKER_IMAGE
from ..workspace.sandbox import SECRET_FILES, SECRET_FOLDERS, bound_system_folders
from .honeytokens import HOME
from .isolation import (
    CONTROL,
    REPORT_CAP,
    SCRATCH,
    TMPFS_BYTES,
    TRACE_FOLDER,
    WORKSPACE,
    DetonationUnavailableError,
    Isolation,
    system_tools,
)

LABEL = "pytest-agent-skills.audit"


class DockerIsolation(Isolation):
    name = "docker"

    def __init__(self, image: str | None = None) -> None:
        try:
            import docker

            self.client = docker.from_env(timeout=120)
            self.client.ping()
        except Exception as error:
            raise DetonationUnavailableError(
                f"cannot reach the Docker engine ({error.__class__.__name__}: {error})"
            ) from None
        self.image = image or DEFAULT_DOCKER_IMAGE
        try:
            self.client.images.get(self.image)
        except Exception as error:
            raise DetonationUnavailableError(
                f"Docker image {self.image!r} is not available ({error.__class__.__name__});"
                " build it offline with 'sudo agent-skills docker-image'"
            ) from None
        self.tools = system_tools()
        self.make_control()

    def mounts(self, skill: Path, skill_inside: str) -> list[Any]:
        """The run's mounts: the system folders (secrets covered), the control folder, the
        skill, and the size-bounded tmpfs folders."""
        from docker.types import Mount

        def bind(source: str, target: str) -> Any:
            return Mount(target, source, type="bind", read_only=True)

        mounts = [bind(folder, folder) for folder in bound_system_folders()]
        for pattern in SECRET_FILES:
            mounts += [bind("/dev/null", str(path)) for path in Path("/").glob(pattern[1:])]
        mounts += [
            bind(str(self.control / "resolv.conf"), "/etc/resolv.conf"),
            bind(str(self.control), CONTROL),
            bind(str(skill), skill_inside),
        ]
        for folder in (*SCRATCH, HOME, WORKSPACE, TRACE_FOLDER):
            mounts.append(Mount(folder, None, type="tmpfs", tmpfs_size=TMPFS_BYTES))
        mounts += [Mount(folder, None, type="tmpfs", tmpfs_size=4096) for folder in SECRET_FOLDERS]
        return mounts

    def run(self, orders: dict[str, Any], skill: Path, timeout: float) -> dict[str, Any]:
        from docker.errors import DockerException

        run_folder = Path(tempfile.mkdtemp(prefix="orders-", dir=self.control))
        (run_folder / "orders.json").write_text(json.dumps(orders), encoding="utf-8")
        container = None
        try:
            container = self.client.containers.create(
                self.image,
                [
                    "bash", "-c", 'exec "$0" -I -S "$1" < "$2"', self.tools["python"],
                    f"{CONTROL}/inside.py", f"{CONTROL}/{run_folder.name}/orders.json",
                ],
                network_mode="none",
                cap_add=["NET_ADMIN", "NET_BIND_SERVICE"],
                mounts=self.mounts(skill, str(orders["skill"])),
                labels={LABEL: "detonation"},
                working_dir="/",
                pids_limit=512,
            )  # fmt: skip
            container.start()
            try:
                container.wait(timeout=timeout)
            except Exception:
                return {"setup_errors": [f"the run's container did not end within {timeout:.0f}s"]}
            output: bytes = container.logs(stdout=True, stderr=False)
            if len(output) > REPORT_CAP:
                return {"setup_errors": ["the run's report is larger than its bound"]}
            try:
                report = json.loads(output)
            except ValueError:
                detail = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
                return {"setup_errors": [f"the run's supervisor failed: {detail[-600:]}"]}
            return report if isinstance(report, dict) else {"setup_errors": ["no report"]}
        except DockerException as error:
            return {"setup_errors": [f"the run's container failed: {error}"]}
        finally:
            if container is not None:
                container.remove(force=True)
            shutil.rmtree(run_folder, ignore_errors=True)

    def close(self) -> None:
        super().close()
        self.client.close()
