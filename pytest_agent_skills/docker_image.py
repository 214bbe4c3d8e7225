"""The offline Docker test image of the ``docker`` runtime: ``agent-skills docker-image``.

Debian 12 minbase with ``python3``, made by ``debootstrap`` from the Debian mirror apt
already uses (no image registry), packed into a tarball kept in a cache folder and
``docker import``-ed with a recipe label.  Idempotent: an image carrying the current recipe
is left alone (well under a second), a cached tarball is imported without debootstrap,
and an image of the same name that this builder did not make (no recipe label, e.g. a
user's own image) is never replaced.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import AgentSkillsError
from .workspace import DEFAULT_DOCKER_IMAGE

#: python3-minimal alone has no json/csv modules; python3 adds the standard library (~20 MB).
PACKAGES = ("python3-minimal", "python3")
SUITE = "bookworm"
RECIPE = f"{SUITE}-minbase-{'-'.join(PACKAGES)}-v1"
RECIPE_LABEL = "pytest-agent-skills.recipe"
DEFAULT_CACHE_DIR = Path("/var/cache/pytest-agent-skills")
DEFAULT_MIRROR = "http://deb.debian.org/debian"
APT_SOURCES = (
    Path("/etc/apt/sources.list"),
    Path("/etc/apt/sources.list.d"),
)


class ImageBuildError(AgentSkillsError):
    """The test image could not be built; the message says why and what to do."""


@dataclass(frozen=True)
class ImageRequest:
    image: str = DEFAULT_DOCKER_IMAGE
    cache_dir: Path = DEFAULT_CACHE_DIR

    @property
    def tarball(self) -> Path:
        return self.cache_dir / f"{RECIPE}.tar"


def cache_dir_from_env(environ: dict[str, str] | None = None) -> Path:
    """``SKILLS_IMAGE_CACHE`` or ``/var/cache/pytest-agent-skills``."""
    environ = dict(os.environ) if environ is None else environ
    return Path(environ.get("SKILLS_IMAGE_CACHE") or DEFAULT_CACHE_DIR)


def ensure_image(request: ImageRequest, log: Callable[[str], None] = print) -> str:
    """Make ``request.image`` carry the current recipe; returns what was done."""
    from .workspace.docker_runtime import _connect

    client = _connect()
    current = _image(client, request.image)
    if current is not None:
        label = (current.labels or {}).get(RECIPE_LABEL)
        if label == RECIPE:
            return f"ready: {request.image} ({RECIPE})"
        if label is None:
            raise ImageBuildError(
                f"an image named {request.image!r} exists and was not built by agent-skills (no"
                f" {RECIPE_LABEL} label); it is left alone. Choose another name with --image, or"
                " remove that image yourself"
            )
    if not (request.tarball.is_file() and request.tarball.stat().st_size > 0):
        build_tarball(request, log)
    log(f"importing {request.tarball} as {request.image}")
    repository, _, tag = (
        request.image.rpartition(":") if _has_tag(request.image) else (request.image, "", "latest")
    )
    client.api.import_image_from_file(
        str(request.tarball),
        repository=repository,
        tag=tag,
        changes=['CMD ["/bin/bash"]', f"LABEL {RECIPE_LABEL}={RECIPE}"],
    )
    if current is not None:  # the outdated recipe, now untagged
        try:
            client.images.remove(current.id)
        except Exception as error:  # still used by a container: harmless, say so
            log(f"kept the previous image {current.id[:19]} ({error.__class__.__name__})")
    return f"built: {request.image} ({RECIPE})"


def _has_tag(image: str) -> bool:
    return ":" in image.rsplit("/", 1)[-1]


def build_tarball(request: ImageRequest, log: Callable[[str], None] = print) -> Path:
    """debootstrap the root file system and pack it into ``request.tarball``."""
    if os.geteuid() != 0:
        raise ImageBuildError(
            f"building the image needs root (debootstrap); run 'sudo agent-skills docker-image',"
            f" or put a tarball made as root at {request.tarball}"
        )
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise ImageBuildError(
            "debootstrap is not installed: 'apt-get install debootstrap' (Debian/Ubuntu), then"
            " run 'agent-skills docker-image' again"
        )
    request.cache_dir.mkdir(parents=True, exist_ok=True)
    mirror = debian_mirror(_apt_source_files())
    log_file = request.cache_dir / "debootstrap.log"
    rootfs = Path(tempfile.mkdtemp(prefix="rootfs.", dir=request.cache_dir))
    try:
        log(f"building {request.image} with debootstrap from {mirror} (one-time, a few minutes)")
        with open(log_file, "wb") as output:
            status = subprocess.run(
                [
                    debootstrap,
                    "--variant=minbase",
                    f"--include={','.join(PACKAGES)}",
                    SUITE,
                    str(rootfs),
                    mirror,
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                check=False,
            ).returncode
        if status != 0:
            tail = log_file.read_text(errors="replace").splitlines()[-20:]
            raise ImageBuildError(
                f"debootstrap failed (exit {status}; full log: {log_file}):\n" + "\n".join(tail)
            )
        for leftovers in (rootfs / "var/cache/apt/archives", rootfs / "var/lib/apt/lists"):
            for path in leftovers.glob("*"):
                if path.is_file() and (path.suffix == ".deb" or leftovers.name == "lists"):
                    path.unlink()
        partial = request.tarball.with_suffix(".tar.tmp")
        with tarfile.open(partial, "w") as archive:
            archive.add(rootfs, arcname=".")
        partial.replace(request.tarball)
    finally:
        shutil.rmtree(rootfs, ignore_errors=True)
    return request.tarball


_DEB_LINE = re.compile(r"^deb\s")
_URI = re.compile(r"^[a-z]+://")
_DEBIAN = re.compile(r"/debian(/|$)")


def debian_mirror(files: Iterable[Path]) -> str:
    """The Debian mirror as apt is configured (one-line ``deb URL suite ...`` or deb822
    ``URIs:``), so debootstrap works wherever apt works; security mirrors are skipped."""
    for file in files:
        try:
            text = file.read_text(errors="replace")
        except OSError:
            continue
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("#"):
                continue
            candidates: list[str] = []
            if _DEB_LINE.match(line):
                candidates = [word for word in line.split()[1:] if _URI.match(word)][:1]
            elif line.startswith("URIs:"):
                candidates = line.split()[1:2]
            for url in candidates:
                if _DEBIAN.search(url) and "security" not in url:
                    return url
    return DEFAULT_MIRROR


def _apt_source_files() -> list[Path]:
    files: list[Path] = []
    for place in APT_SOURCES:
        if place.is_dir():
            files += sorted(p for p in place.iterdir() if p.suffix in (".list", ".sources"))
        elif place.is_file():
            files.append(place)
    return files


def _image(client: Any, name: str) -> Any:
    import docker.errors

    try:
        return client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
