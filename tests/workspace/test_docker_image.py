"""`agent-skills docker-image`: the offline test image of the docker runtime, built by the
package (scripts/setup-services.sh calls it). Built here under other names than the shared
`pytest-agent-skills/test:bookworm`, from the cached root file system tarball."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agent_skills.cli import main
from pytest_agent_skills.docker_image import (
    DEFAULT_MIRROR,
    RECIPE,
    RECIPE_LABEL,
    ImageBuildError,
    ImageRequest,
    cache_dir_from_env,
    debian_mirror,
    ensure_image,
)
from tests.support.services import missing_service
from tests.support.workspace import get_runtime

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("files", "mirror"),
    [
        (
            {"sources.list": "# deb http://old.example/debian bookworm main\n"
             "deb http://security.debian.org/debian-security bookworm-security main\n"
             "deb [arch=amd64] http://mirror.example/debian/ bookworm main\n"},
            "http://mirror.example/debian/",
        ),
        (
            {"debian.sources": "Types: deb\nURIs: http://deb.example/debian\nSuites: bookworm\n"},
            "http://deb.example/debian",
        ),
        ({"ubuntu.list": "deb http://archive.ubuntu.com/ubuntu jammy main\n"}, DEFAULT_MIRROR),
        ({}, DEFAULT_MIRROR),
    ],
    ids=["one-line", "deb822", "no-debian-mirror", "no-file"],
)
def test_the_mirror_is_the_one_apt_uses(
    tmp_path: Path, files: dict[str, str], mirror: str
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert debian_mirror(sorted(tmp_path.iterdir())) == mirror


def test_the_cache_folder_comes_from_the_environment() -> None:
    assert cache_dir_from_env({"SKILLS_IMAGE_CACHE": "/tmp/x"}) == Path("/tmp/x")
    assert cache_dir_from_env({}) == Path("/var/cache/pytest-agent-skills")


def test_setup_services_builds_the_image_with_the_package() -> None:
    script = (REPO_ROOT / "scripts" / "setup-services.sh").read_text()
    assert 'python3 -m pytest_agent_skills.cli docker-image --image "$IMAGE"' in script
    assert "debootstrap --variant" not in script  # one recipe, in the package
    assert 'IMAGE="pytest-agent-skills/test:bookworm"' in script  # never SKILLS_DOCKER_IMAGE


@pytest.fixture
def docker_client(tmp_path: Path):
    runtime = get_runtime("docker", tmp_path)  # skips (fails in CI) without a Docker engine
    return runtime.client


@pytest.fixture
def image_name(docker_client) -> Iterator[str]:
    """A name of our own for this test (others run the suite on the same engine)."""
    name = f"pytest-agent-skills/test:builder-check-{uuid.uuid4().hex[:12]}"
    yield name
    with contextlib.suppress(Exception):  # a failed test may not have made it
        docker_client.images.remove(name, force=True)


@pytest.mark.docker
def test_the_builder_imports_the_cached_tarball_once(
    docker_client, image_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    request = ImageRequest(image_name, cache_dir_from_env())
    if not request.tarball.is_file():
        message = f"no cached root file system at {request.tarball} (agent-skills docker-image)"
        missing_service(message)  # scripts/setup-services.sh makes it before the tests
    assert main(["docker-image", "--image", image_name]) == 0
    assert capsys.readouterr().out == f"built: {image_name} ({RECIPE})\n"
    image = docker_client.images.get(image_name)
    assert image.labels[RECIPE_LABEL] == RECIPE
    assert image.attrs["Config"]["Cmd"] == ["/bin/bash"]
    output = docker_client.containers.run(
        image_name, ["bash", "-c", "python3 -c 'import csv, json; print(6 * 7)'"],
        network_disabled=True, remove=True,
    )
    assert output == b"42\n"
    assert main(["docker-image", "--image", image_name]) == 0  # idempotent: nothing imported
    assert capsys.readouterr().out == f"ready: {image_name} ({RECIPE})\n"
    assert docker_client.images.get(image_name).id == image.id


@pytest.mark.docker
@pytest.mark.parametrize("named_by", ["--image", "SKILLS_DOCKER_IMAGE", "skills_docker_image"])
def test_an_image_the_builder_did_not_make_is_never_replaced(
    docker_client,
    image_name: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    named_by: str,
) -> None:
    """The image is the docker runtime's (skills_docker_image): named by the flag, the
    variable or the configuration file, the same refusal."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        data = b"a user's image\n"
        info = tarfile.TarInfo("README")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    repository, tag = image_name.rsplit(":", 1)
    docker_client.api.import_image_from_data(archive.getvalue(), repository=repository, tag=tag)
    before = docker_client.images.get(image_name).id
    with pytest.raises(ImageBuildError, match="was not built by agent-skills"):
        ensure_image(ImageRequest(image_name, tmp_path / "no-cache"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SKILLS_DOCKER_IMAGE", raising=False)
    words = ["docker-image", "--cache-dir", str(tmp_path)]
    if named_by == "--image":
        words += ["--image", image_name]
    elif named_by == "SKILLS_DOCKER_IMAGE":
        monkeypatch.setenv("SKILLS_DOCKER_IMAGE", image_name)
    else:
        (tmp_path / "pytest.ini").write_text(f"[pytest]\nskills_docker_image = {image_name}\n")
    assert main(words) == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"agent-skills docker-image: error: an image named {image_name!r} exists and was not"
        f" built by agent-skills (no {RECIPE_LABEL} label); it is left alone. Choose another name"
        " with --image, or remove that image yourself"
    )
    assert docker_client.images.get(image_name).id == before


def test_help_names_the_command_not_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_agent_skills.cli", "docker-image", "--help"],
        capture_output=True, text=True, check=True,
    )
    assert "build the offline Docker test image" in done.stdout
    assert "scripts/" not in done.stdout
