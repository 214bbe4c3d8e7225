"""A skill session: drive the protocol without a model.

:class:`SkillSession` holds the session state, answers tool calls the way
the reference framework does (validate, run, merge the state delta) and
assembles the request a model would receive next.  Nothing a model can send
makes :meth:`SkillSession.call` raise: unknown tools, arguments that are not
JSON, schema violations and unknown names all come back as error results.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import jsonschema

from ..docpath import dotted, kind_of
from ..errors import AgentSkillsError
from ..repository import SkillRepository
from . import dynamic, prompt
from .coercion import LEFT_OUT, NO_LENIENCY, Coercion, Leniency, coerce_arguments
from .outcome import (
    INVALID_ARGUMENTS,
    TOOL_EXECUTION_ERROR,
    UNKNOWN_TOOL,
    ToolCallError,
    ToolOutcome,
    error_result,
)
from .pool import PoolTool, ToolPool, require_json
from .prompt import AssembledRequest, MissingTool
from .session_options import SessionOptionFields, SessionOptions
from .state import SessionState, StateKeys, check_load_mode
from .tools import BASE_TOOLS, DYNAMIC_TOOLS, SKILL_RUN, SkillTool, ToolContext

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from typing_extensions import Unpack

    from ..workspace import Runtime, Workspace


class SessionConfigError(AgentSkillsError, ValueError):
    """A :class:`SkillSession` option with a value it does not know."""


class MissingToolError(AgentSkillsError):
    """A loaded skill selected tools that the tool pool does not hold."""

    def __init__(self, missing: list[MissingTool]) -> None:
        self.missing = missing
        lines = "\n".join(f"- {item.message()}" for item in missing)
        super().__init__(
            f"{len(missing)} tool(s) selected by loaded skills are not in the tool pool:\n{lines}\n"
            "(pass allow_missing_tools=True to SkillSession to report them in"
            " AssembledRequest.missing_tools instead)"
        )


class SkillSession:
    """The state of one conversation with the skill tools, and the requests it produces."""

    def __init__(
        self,
        repository: SkillRepository,
        options: SessionOptions | None = None,
        *,
        runtime: Runtime | None = None,
        tool_pool: ToolPool | None = None,
        inputs: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
        **fields: Unpack[SessionOptionFields],
    ) -> None:
        """A session over ``repository``: ``options`` (or its fields as keywords) say how it
        behaves, ``runtime`` runs its commands (None: a local one, made at the first command and
        closed with the session), ``tool_pool`` holds the other tools skills may select,
        ``inputs`` are staged in the workspace and ``env`` set for every command."""
        self.options = replace(options or SessionOptions(), **fields)
        try:
            self.load_mode = check_load_mode(self.options.load_mode)
        except ValueError as error:
            raise SessionConfigError(str(error)) from None
        self.repository = repository
        #: Convert lax argument values (``"5"`` for an integer) as the reference's pydantic
        #: does, reporting each in ``ToolOutcome.coercions`` (see :mod:`.coercion`).
        self.lax_arguments = self.options.lax_arguments
        self.tool_pool = tool_pool if tool_pool is not None else ToolPool()
        self.dynamic_tools = self.options.dynamic_tools
        self.only_active_skills = self.options.only_active_skills
        self.session_id = self.options.session_id
        self.instruction = self.options.instruction
        self.allow_missing_tools = self.options.allow_missing_tools
        self.exec_tools = self.options.exec_tools
        self.history: list[ToolOutcome] = []
        self._inputs = _checked_inputs(inputs or {})
        self._runtime = runtime
        self._owns_runtime = runtime is None
        self._workspace: Workspace | None = None
        self._state = SessionState(keys=StateKeys(self.load_mode))
        #: User messages seen by build_request (a new one starts a user turn).
        self._user_messages = 0
        self._overview_made: tuple[tuple[object, ...], str] | None = None
        self._context = ToolContext(
            repository,
            self._state,
            self._ensure_workspace,
            lambda: self._workspace,
            dict(env or {}),
        )
        skill_tools = list(BASE_TOOLS + (DYNAMIC_TOOLS if self.dynamic_tools else ()))
        if self.exec_tools:  # after skill_run, where 1.2.0 puts skill_exec
            from .exec_tools import EXEC_TOOLS

            after_run = skill_tools.index(SKILL_RUN) + 1
            skill_tools[after_run:after_run] = EXEC_TOOLS
        self._skill_tools: dict[str, SkillTool] = {tool.name: tool for tool in skill_tools}

    # --- state ----------------------------------------------------------------------------------

    @property
    def state(self) -> dict[str, str]:
        """The session state merged with the pending delta (a copy)."""
        return self._state.merged()

    def loaded_skills(self) -> list[str]:
        return self._state.loaded_skills()

    @property
    def keys(self) -> StateKeys:
        """The state key names of this session's load mode."""
        return self._state.keys

    def begin_turn(self) -> None:
        """Start a new turn: no skill counts as touched for ``only_active_skills``.

        :meth:`build_request` calls it when the last message is a user message.
        """
        self._state.begin_turn()

    def begin_user_turn(self) -> dict[str, None]:
        """A new user message: ``temp:`` keys end (the reference never persists them from
        one invocation to the next), in turn mode so do the loaded skills and selections;
        then :meth:`begin_turn`.  Returns what was removed (key -> None).

        :meth:`build_request` calls it when the conversation holds a user message more than
        at the previous request, from the second user message on (calls made before the
        first request are set-up, not an earlier turn).
        """
        removed = self._state.end_user_turn()
        self._state.begin_turn()
        return removed

    # --- tools ----------------------------------------------------------------------------------

    def _offered(
        self, loaded: list[str] | None = None
    ) -> tuple[list[SkillTool | PoolTool], list[MissingTool]]:
        """The tools the model may call now, and the selected tools the pool lacks;
        ``loaded``: the loaded skills, when the caller has them."""
        if self.dynamic_tools:
            exposure = dynamic.expose(
                self.repository,
                self._state,
                self.tool_pool,
                only_active_skills=self.only_active_skills,
                loaded=loaded,
            )
        else:
            exposure = dynamic.Exposure(list(self.tool_pool), [])
        return [*self._skill_tools.values(), *exposure.tools], exposure.missing

    def _exposed(
        self, loaded: list[str] | None = None
    ) -> tuple[list[SkillTool | PoolTool], list[MissingTool]]:
        """:meth:`_offered`, refusing missing pool tools unless ``allow_missing_tools``."""
        offered, missing = self._offered(loaded)
        if missing and not self.allow_missing_tools:
            raise MissingToolError(missing)
        return offered, missing

    def tool_definitions(self) -> list[dict[str, Any]]:
        """The OpenAI ``tools`` entries the model is offered right now."""
        return [tool.definition() for tool in self._exposed()[0]]

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolOutcome:
        """Answer one tool call; model mistakes become error results, never exceptions."""
        outcome = self._call(name, arguments)
        self.history.append(outcome)
        return outcome

    def _call(self, name: str, raw_arguments: Mapping[str, Any] | str | None) -> ToolOutcome:
        arguments: dict[str, Any] | None = None
        parse_error: ToolCallError | None = None
        try:
            arguments = _parse_arguments(name, raw_arguments)
        except ToolCallError as error:
            parse_error = error
        # A skill tool is always offered (unless a pool tool takes its name); anything else
        # is looked up among the tools offered now.  Missing pool tools are a configuration
        # problem reported when the request is built, not a reason to refuse this call.
        tool: SkillTool | PoolTool | None = (
            None if name in self.tool_pool else self._skill_tools.get(name)
        )
        if tool is None:
            exposed = {tool.name: tool for tool in self._offered()[0]}
            tool = exposed.get(name)
            if tool is None:
                message = self._unknown_tool(name, exposed)
                return ToolOutcome(name, arguments, error_result(UNKNOWN_TOOL, message), True)
        if parse_error is not None:
            return ToolOutcome(name, None, parse_error.result(), True)
        assert arguments is not None  # parsed, since there was no parse error
        given = arguments
        coercions: tuple[Coercion, ...] = ()
        leniency = tool.leniency if isinstance(tool, SkillTool) else NO_LENIENCY
        if self.lax_arguments:
            arguments, coercions = coerce_arguments(tool.parameters, arguments, leniency=leniency)
        # A pool tool is handed a value of the wrong JSON type as the reference hands it
        # over (its function tools check nothing but missing arguments); the rest is refused.
        tolerated = ("type",) if isinstance(tool, PoolTool) and self.lax_arguments else ()
        try:
            unchecked = _validate(name, tool.validator, arguments, tolerated)
        except ToolCallError as error:
            return ToolOutcome(name, given, error.result(), True, coercions=coercions)
        if isinstance(tool, PoolTool):
            return self._call_pool_tool(tool, given, arguments, (coercions, unchecked))
        try:
            result = tool.handler(self._context, arguments)
        except ToolCallError as error:
            return ToolOutcome(name, given, error.result(), True, coercions=coercions)
        else:
            result = _with_floor_warnings(result, coercions, leniency)
            return ToolOutcome(name, given, result, False, self._state.commit(), coercions)
        finally:
            self._state.pending.clear()  # a failed call leaves no trace
            if self._workspace is not None:
                self._workspace.write_pending_metadata()

    def _call_pool_tool(
        self,
        tool: PoolTool,
        given: dict[str, Any],
        arguments: dict[str, Any],
        checks: tuple[tuple[Coercion, ...], tuple[str, ...]],
    ) -> ToolOutcome:
        """``tool`` called; ``checks``: the conversions made and the schema violations let
        through (both reported in the outcome)."""
        coercions, unchecked = checks
        try:
            result = tool(**arguments)
        except Exception as error:  # a tool's own failure is reported to the model, as 1.2.0 does
            message = f"tool {tool.name!r} raised {type(error).__name__}: {error}"
            return ToolOutcome(
                tool.name,
                given,
                error_result(TOOL_EXECUTION_ERROR, message),
                True,
                coercions=coercions,
                unchecked=unchecked,
            )
        require_json(tool.name, result)
        return ToolOutcome(tool.name, given, result, coercions=coercions, unchecked=unchecked)

    def _unknown_tool(self, name: str, exposed: Mapping[str, Any]) -> str:
        available = ", ".join(exposed)
        if name in self.tool_pool:
            return (
                f"tool {name!r} is not available now: load (skill_load) a skill that declares it"
                f" and select it. Available tools: {available}"
            )
        return f"unknown tool {name!r}. Available tools: {available}"

    # --- requests -------------------------------------------------------------------------------

    def build_request(self, messages: list[dict[str, Any]]) -> AssembledRequest:
        """The request a model would receive next, given the conversation so far.

        A leading system message in ``messages`` is kept as the instruction and
        the skills text is appended to it.  When the last message is a user
        message a new turn begins (see :meth:`begin_turn`); a user message beyond
        those of the previous request also ends the previous user turn (see
        :meth:`begin_user_turn`).  In once mode the skills shown are unloaded after
        this request; :attr:`AssembledRequest.state_delta` lists every key removed.
        """
        cleared: dict[str, None] = {}
        users = sum(1 for message in messages if message.get("role") == "user")
        if users > self._user_messages:
            if self._user_messages:
                cleared.update(self.begin_user_turn())
            self._user_messages = users
        if messages and messages[-1].get("role") == "user":
            self.begin_turn()
        rest = list(messages)
        instruction = self.instruction
        if rest and rest[0].get("role") == "system":
            given = str(rest.pop(0).get("content") or "")
            instruction = "\n\n".join(part for part in (instruction, given) if part)
        loaded = self._state.loaded_skills()
        system = prompt.system_text(
            instruction, self._overview(), prompt.loaded_text(self.repository, self._state, loaded)
        )
        tools, missing = self._exposed(loaded)
        if self.load_mode == "once" and loaded:
            cleared.update(self._state.offload(loaded))
        return AssembledRequest(
            system=system,
            messages=[{"role": "system", "content": system}, *rest],
            tools=[tool.definition() for tool in tools],
            loaded_skills=loaded,
            missing_tools=missing,
            state_delta=cleared,
        )

    def _overview(self) -> str:
        """The overview of the repository, made once for as long as the repository and the
        tool options it names stay the same (a repository's skills never change)."""
        key = (self.repository, self.dynamic_tools, self.exec_tools)
        if self._overview_made is None or self._overview_made[0] != key:
            text = (
                prompt.overview_text(
                    self.repository, dynamic_tools=self.dynamic_tools, exec_tools=self.exec_tools
                )
                if len(self.repository)
                else ""
            )
            self._overview_made = (key, text)
        return self._overview_made[1]

    # --- workspace ------------------------------------------------------------------------------

    @property
    def workspace(self) -> Workspace | None:
        return self._workspace

    def _ensure_workspace(self) -> Workspace:
        if self._workspace is None:
            if self._runtime is None:
                from ..workspace import create_runtime

                self._runtime = create_runtime("local")
            # Its metadata.json is written by the call that needs the workspace (staging the
            # skill), or at the latest when that call ends (see _call), not twice in a row.
            self._workspace = self._runtime.create_workspace(self.session_id, defer_metadata=True)
            if self._inputs:
                self._workspace.put_inputs(self._inputs)
        return self._workspace

    def close(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None
        if self._owns_runtime and self._runtime is not None:
            self._runtime.close()
            self._runtime = None

    def __enter__(self) -> SkillSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _checked_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """``inputs`` with names the workspace takes, refused now rather than at the first
    ``skill_run``, where the error would only reach the model."""
    if not inputs:
        return {}
    from ..workspace.errors import WorkspaceError
    from ..workspace.requests import input_name

    try:
        return {input_name(name): content for name, content in inputs.items()}
    except WorkspaceError as error:
        raise SessionConfigError(f"inputs: {error}") from None


def _parse_arguments(name: str, raw: Mapping[str, Any] | str | None) -> dict[str, Any]:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as error:
            raise ToolCallError(
                INVALID_ARGUMENTS,
                f"the arguments of tool {name!r} are not valid JSON ({error}); send a JSON object.",
            ) from None
        except (ValueError, RecursionError):
            # What json.loads raises beyond JSONDecodeError: nesting past the recursion
            # limit, or an integer longer than sys.get_int_max_str_digits().
            raise ToolCallError(
                INVALID_ARGUMENTS,
                f"the arguments of tool {name!r} are nested too deeply or hold a number too long"
                " to read; send a JSON object of plain values.",
            ) from None
    if not isinstance(raw, Mapping):
        raise ToolCallError(
            INVALID_ARGUMENTS,
            f"the arguments of tool {name!r} must be a JSON object, found {kind_of(raw)}.",
        )
    return dict(raw)


def _validate(
    name: str, validator: Validator, arguments: dict[str, Any], tolerated: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """Refuse ``arguments`` that ``validator`` finds invalid; violations of the ``tolerated``
    keywords (``"type"``) are not refused but returned, each as ``path: message``."""
    if validator.is_valid(arguments):
        return ()
    errors = sorted(
        validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path]
    )
    refused = [error for error in errors if error.validator not in tolerated]
    if refused:
        problems = "; ".join(f"{_where(error)}{error.message}" for error in refused)
        raise ToolCallError(INVALID_ARGUMENTS, f"invalid arguments for tool {name!r}: {problems}.")
    return tuple(f"{_where(error)}{error.message}" for error in errors)


def _with_floor_warnings(result: Any, coercions: tuple[Coercion, ...], leniency: Leniency) -> Any:
    """A ``skill_run`` / ``skill_exec`` result told, in its ``warnings``, that a timeout below
    0 was taken as 0 (the default), as the reference takes it."""
    notes = [
        f"{coercion.path[0]} {json.dumps(coercion.original)} is below {coercion.value}:"
        f" taken as {coercion.value}, the default timeout"
        for coercion in coercions
        if len(coercion.path) == 1
        and coercion.path[0] in leniency.floored
        and coercion.value is not LEFT_OUT
    ]
    if not notes or not isinstance(result, dict):
        return result
    return {**result, "warnings": [*notes, *result.get("warnings", ())]}


def _where(error: jsonschema.ValidationError) -> str:
    path = dotted(tuple(error.absolute_path))
    return f"{path}: " if path else ""
