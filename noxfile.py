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

Run both with ``python3 -m nox``, one with ``python3 -m nox -s "range_ends(oldest)"``;
arguments after ``--`` go to pytest.
"""

from __future__ import annotations

import nox

#: The lower bounds in pyproject.toml's dependencies, and pip's newest releases under the upper
#: bounds. Each end names the version prefix ``--version`` must show.
RANGE_ENDS = {
    "oldest": {"pytest": "8.4.", "markdown-it-py": "3.0."},
    "newest": {"pytest": "", "markdown-it-py": ""},
}
UPPER_BOUNDS = {"pytest": "", "markdown-it-py": "<5"}

nox.options.sessions = ["range_ends"]
nox.options.error_on_missing_interpreters = True


@nox.session
@nox.parametrize("end", list(RANGE_ENDS), ids=list(RANGE_ENDS))
def range_ends(session: nox.Session, end: str) -> None:
    wanted = RANGE_ENDS[end]
    pins = [
        f"{name}=={prefix}*" if prefix else f"{name}{UPPER_BOUNDS[name]}"
        for name, prefix in wanted.items()
    ]
    # Editable, so that the code checked is this checkout's.
    session.install("-e", ".[test]", *pins)
    shown = session.run(
        "python",
        "-c",
        "import importlib.metadata as m; print(m.version('pytest'), m.version('markdown-it-py'))",
        silent=True,
    )
    if shown is None:  # nox --install-only
        return
    versions = dict(zip(wanted, str(shown).split(), strict=True))
    session.log(f"{end} end of the range: {versions}")
    for name, prefix in wanted.items():
        if not versions[name].startswith(prefix):
            session.error(f"the {end} end runs {name} {versions[name]}, not {prefix}*")
    session.run("python", "-m", "mypy", "--strict", "pytest_agent_skills")
    # The real model server is built into the system's python only, and says nothing of
    # either dependency.
    selected = "(pytest_facing or markdown_facing) and not realmodel"
    session.run(
        "python", "-m", "pytest", "-m", selected, "-p", "no:cacheprovider", *session.posargs
    )
