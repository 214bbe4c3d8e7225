"""The checks that lean on a dependency's details, on the oldest and the newest release of each.

``scripts/test.sh`` runs the whole suite against what is installed beside it; these sessions run
again, in a virtualenv of their own, what depends on the details of two dependencies, once per
end of the range pyproject.toml allows:

- pytest: ``mypy --strict`` (pytest's annotations change between releases) and the tests marked
  ``pytest_facing`` (plugin, collection and scenario items, everything that runs pytest inside
  pytest through ``pytester``);
- markdown-it-py: the tests marked ``markdown_facing`` (the body scan and the checks of
  references), because the body scan reads inline positions through markdown-it-py's inline
  parser state, which its public API does not expose (a token's ``map`` is a block's lines).

Each end runs on a Python of its own (``PYTHONS``: the oldest end on the oldest Python
pyproject.toml allows, the newest on the newest tested), which nox must find on the PATH
(``scripts/test.sh`` shows it each Python pyenv has). Run both with ``python3 -m nox``, one with
``python3 -m nox -s "range_ends(oldest)"``; arguments after ``--`` go to pytest.
"""

from __future__ import annotations

import nox

#: The dependencies whose details the package leans on, each with its lower bound in
#: pyproject.toml's dependencies (the oldest end runs that release) and its upper bound (the
#: newest end runs pip's newest release under it).
LOWER_BOUNDS = {"pytest": "8.4", "markdown-it-py": "3.0"}
UPPER_BOUNDS = {"pytest": "", "markdown-it-py": "<5"}
ENDS = ("oldest", "newest")
#: The Python each end runs on: the oldest pyproject.toml's requires-python allows, and the
#: newest this project is tested on (its classifiers list the versions from one to the other).
PYTHONS = {"oldest": "3.10", "newest": "3.13"}
#: Prints the installed version of each distribution named in its arguments.
SHOW_VERSIONS = "import importlib.metadata as m, sys; print(*map(m.version, sys.argv[1:]))"

nox.options.sessions = ["range_ends"]
nox.options.error_on_missing_interpreters = True


@nox.session
@nox.parametrize(("python", "end"), [(PYTHONS[end], end) for end in ENDS], ids=list(ENDS))
def range_ends(session: nox.Session, end: str) -> None:
    if end == "oldest":
        pins = [f"{name}=={lower}.*" for name, lower in LOWER_BOUNDS.items()]
    else:
        pins = [f"{name}{upper}" for name, upper in UPPER_BOUNDS.items()]
    # Editable, so that the code checked is this checkout's.
    session.install("-e", ".[test]", *pins)
    names = list(LOWER_BOUNDS)
    shown = session.run("python", "-c", SHOW_VERSIONS, *names, silent=True)
    if shown is None:  # nox --install-only
        return
    versions = dict(zip(names, str(shown).split(), strict=True))
    session.log(f"{end} end of the range: {versions}")
    if end == "oldest":
        for name, lower in LOWER_BOUNDS.items():
            if not versions[name].startswith(f"{lower}."):
                session.error(f"the {end} end runs {name} {versions[name]}, not {lower}.*")
    session.run("python", "-m", "mypy", "--strict", "pytest_agent_skills")
    # The real model server is built into the system's python only, and says nothing of
    # either dependency.
    selected = "(pytest_facing or markdown_facing) and not realmodel"
    session.run(
        "python", "-m", "pytest", "-m", selected, "-p", "no:cacheprovider", *session.posargs
    )
