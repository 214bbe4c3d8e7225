"""Where the commands of an eval run: the runtime every eval feature opens before its runs.

In a scenario the commands come from a script the user wrote; in an eval the *model* chooses
them (or a cassette in the repository says it did), so they run isolated by default: in the
sandbox when bubblewrap works, else in Docker when its engine and image are there. Both have
no network and see no host folder but the workspace. With neither, an eval refuses to run
rather than fall back to the host: the local runtime runs the model's commands on this
machine, and only when asked for by name.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ...errors import AgentSkillsError
from ...workspace.errors import RuntimeUnavailableError

if TYPE_CHECKING:
    from ...workspace import Runtime
    from .eval_options import EvalOptions

#: The runtimes tried, in order, when none is asked for.
ISOLATED_RUNTIMES = ("sandbox", "docker")
#: What the report and the command say of a run on the local runtime.
HOST_WARNING = (
    "the model's commands ran on this machine (runtime local), not isolated: they could read,"
    " change and delete anything this user can"
)
OPT_OUT = (
    "--runtime local (pytest: --skills-eval-runtime=local; ini skills_eval_runtime;"
    " env SKILLS_EVAL_RUNTIME)"
)


class EvalRuntimeError(AgentSkillsError):
    """No runtime can run the eval's commands as asked."""


def choose_runtime(asked: str | None, create: Callable[[str], Runtime]) -> Runtime:
    """The runtime ``asked`` for by name, else the first of :data:`ISOLATED_RUNTIMES` that
    ``create`` makes; :class:`EvalRuntimeError` naming why each one is missing."""
    if asked:
        try:
            return create(asked)
        except RuntimeUnavailableError as error:
            raise EvalRuntimeError(
                f"the eval runtime {asked!r} is not available: {error}"
            ) from None
    missing = []
    for name in ISOLATED_RUNTIMES:
        try:
            return create(name)
        except RuntimeUnavailableError as error:
            missing.append(f"- {name}: {error}")
    raise EvalRuntimeError(
        "no isolated runtime for the commands the model chooses: neither the sandbox"
        " (bubblewrap) nor docker is available here:\n"
        + "\n".join(missing)
        + "\nInstall bubblewrap, or start Docker and build its image ('agent-skills"
        " docker-image'); or run the model's commands on this machine, unisolated, with "
        + OPT_OUT
    )


@contextlib.contextmanager
def eval_runtime(options: EvalOptions) -> Iterator[Runtime]:
    """The runtime of an eval's runs: the one the run settings hold (not closed here), else
    the one :func:`choose_runtime` opens for ``options.runtime``, closed at the end."""
    given = options.settings.runtime
    if given is not None:
        yield given
        return
    runtime = choose_runtime(options.runtime, options.workspaces.create)
    try:
        yield runtime
    finally:
        runtime.close()
