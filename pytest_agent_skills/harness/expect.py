"""Assertions on a trajectory: the ``expect:`` block of a scenario, and Python helpers.

``check(trajectory, expect)`` returns every unmet expectation as a
:class:`Failure` (the key path into ``expect`` and what was wrong);
:func:`assert_trajectory` raises :class:`ExpectationError` with all of them
and the whole trajectory turn by turn.  The Python helpers
(:func:`expect_calls`, :func:`expect_results`, ...) take the same values as
the YAML keys and fail the same way.

Order modes for ``calls`` (the expectation's items against the calls made):
``exact`` same calls in the same order; ``in_order`` the items appear in
this order, other calls may come between; ``any_order`` the same calls in
any order; ``subset`` every item matches a distinct call, extra calls
allowed; ``superset`` every call matches a distinct item, items may go
uncalled.  Argument modes: ``exact`` equal arguments; ``ignore`` names only;
``subset`` the expected arguments are a subset of the actual ones;
``superset`` the actual arguments are a subset of the expected ones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from ..docpath import dotted
from ..scenario_schema import scenario_schema
from .errors import HarnessError
from .trajectory import CallRecord, Trajectory

OPERATORS = frozenset({"contains", "matches", "equals", "exists"})
_MISSING: Any = type("Missing", (), {"__repr__": lambda self: "(absent)"})()


class ExpectationError(HarnessError, AssertionError):
    """Unmet expectations, with the trajectory they were checked against."""

    def __init__(
        self,
        failures: list[Failure],
        trajectory: Trajectory,
        expect: Mapping[str, Any],
        where: Callable[[tuple[Any, ...]], str] | None = None,
        title: str = "",
        turns: Sequence[Mapping[str, Any] | None] = (),
    ) -> None:
        self.failures = failures
        self.trajectory = trajectory
        lines = [f"{title or 'trajectory'}: {len(failures)} expectation(s) not met"]
        for failure in failures:
            place = f" ({where(failure.doc_path)})" if where else ""
            lines.append(f"- {failure.key}{place}: {failure.message}")
        blocks = [("Expected:", expect)]
        blocks += [(f"Expected of turns[{i}]:", check) for i, check in enumerate(turns) if check]
        for heading, block in blocks:
            lines.append(heading)
            dumped = yaml.safe_dump(dict(block), sort_keys=False, allow_unicode=True, width=100)
            lines.extend("  " + line for line in dumped.rstrip().splitlines())
        lines.append(trajectory.format())
        super().__init__("\n".join(lines))


@dataclass(frozen=True)
class Failure:
    #: The path inside the ``expect`` block checked.
    path: tuple[Any, ...]
    message: str
    #: Where that ``expect`` block is: the scenario's, or ``("turns", i, "expect")``.
    root: tuple[Any, ...] = ("expect",)

    @property
    def doc_path(self) -> tuple[Any, ...]:
        """The path in the scenario document (``turns[1].expect.calls``)."""
        return (*self.root, *self.path)

    @property
    def key(self) -> str:
        return dotted(self.doc_path)


@cache
def _expect_validator() -> Any:
    from jsonschema import Draft202012Validator

    schema = scenario_schema()
    return Draft202012Validator({"$ref": "#/$defs/expect", "$defs": schema["$defs"]})


def validate_expect(expect: Mapping[str, Any], root: tuple[Any, ...] = ("expect",)) -> None:
    """Check a Python-given ``expect`` mapping against the scenario schema."""
    from jsonschema.exceptions import best_match

    error = best_match(_expect_validator().iter_errors(dict(expect)))
    if error is not None:
        where = dotted((*root, *error.absolute_path))
        raise HarnessError(f"{where}: {error.message}")
    for doc_path, problem in invalid_patterns(expect):
        raise HarnessError(f"{dotted((*root, *doc_path))}: {problem}")


def invalid_patterns(
    node: Any, doc_path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], str]]:
    """``(key path, problem)`` of each ``matches`` in the ``expect`` block ``node`` (at
    ``doc_path`` in it) that is no regular expression.

    Checked when the expectations are read (a scenario file at collection), so a bad
    pattern is an error at its line, not a crash after the conversation ran.
    """
    if isinstance(node, Mapping):
        in_files = len(doc_path) >= 2 and doc_path[-2] == "files"  # items: path + an operator
        operator = {k: v for k, v in node.items() if k != "path"} if in_files else node
        pattern = operator.get("matches")
        if is_operator(operator) and isinstance(pattern, str):
            try:
                re.compile(pattern)
            except re.error as error:
                yield (
                    (*doc_path, "matches"),
                    f"{pattern!r} is not a valid regular expression ({error}); fix it (Python"
                    " re syntax), or use 'contains' for plain text",
                )
        for key, value in node.items():
            yield from invalid_patterns(value, (*doc_path, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from invalid_patterns(item, (*doc_path, index))


def check(trajectory: Trajectory, expect: Mapping[str, Any]) -> list[Failure]:
    failures: list[Failure] = []
    for key, checker in _CHECKERS.items():
        if key in expect:
            failures.extend(checker(trajectory, expect[key]))
    return failures


def assert_trajectory(
    trajectory: Trajectory,
    expect: Mapping[str, Any],
    *,
    turns: Sequence[Mapping[str, Any] | None] = (),
    where: Callable[[tuple[Any, ...]], str] | None = None,
    title: str = "",
) -> None:
    """Raise :class:`ExpectationError` listing every unmet expectation: of ``expect`` on the
    whole conversation, and of ``turns[i]`` on the part answering user message ``i``
    (:meth:`Trajectory.for_user_turn`).  ``where(doc_path)`` adds a location to each line."""
    validate_expect(expect)
    for index, turn_expect in enumerate(turns):
        if turn_expect is not None:
            validate_expect(turn_expect, ("turns", index, "expect"))
    if len(turns) > max(len(trajectory.user_turns), 1):
        raise HarnessError(
            f"{len(turns)} user turn expectation(s) for a conversation of"
            f" {len(trajectory.users)} user message(s)"
        )
    failures: list[Failure] = []
    for index, turn_expect in enumerate(turns):
        if turn_expect:
            part = trajectory.for_user_turn(index) if trajectory.user_turns else trajectory
            root = ("turns", index, "expect")
            failures += [
                Failure(failure.path, failure.message, root) for failure in check(part, turn_expect)
            ]
    failures += check(trajectory, expect)
    if failures:
        raise ExpectationError(failures, trajectory, expect, where, title, turns)


# --- value matching ------------------------------------------------------------------------


def is_operator(expected: Any) -> bool:
    return isinstance(expected, dict) and bool(expected) and set(expected) <= OPERATORS


def mismatch(expected: Any, actual: Any) -> str | None:
    """None when ``actual`` satisfies ``expected``, else why not.

    A mapping made only of operator keys (contains, matches, equals, exists)
    is an operator; another mapping matches a mapping holding at least those
    keys (recursively); anything else is compared for equality.
    """
    if is_operator(expected):
        if "exists" in expected and expected["exists"] != (actual is not _MISSING):
            return (
                "expected it to exist"
                if expected["exists"]
                else f"expected no value, found {_show(actual)}"
            )
        if actual is _MISSING:
            return "missing" if set(expected) - {"exists"} else None
        if "equals" in expected and not _equal(expected["equals"], actual):
            return f"expected {_show(expected['equals'])}, found {_show(actual)}"
        if "contains" in expected and not _contains(actual, expected["contains"]):
            return f"expected it to contain {expected['contains']!r}, found {_show(actual)}"
        if "matches" in expected and not re.search(str(expected["matches"]), _text(actual)):
            return f"expected it to match /{expected['matches']}/, found {_show(actual)}"
        return None
    if actual is _MISSING:
        return f"missing (expected {_show(expected)})"
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key, value in expected.items():
            problem = mismatch(value, actual.get(key, _MISSING))
            if problem:
                return f"{key}: {problem}"
        return None
    if not _equal(expected, actual):
        return f"expected {_show(expected)}, found {_show(actual)}"
    return None


def _equal(expected: Any, actual: Any) -> bool:
    # 1 == True in Python; not in a tool result.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


def _contains(actual: Any, needle: str) -> bool:
    if isinstance(actual, list) and needle in actual:
        return True
    return needle in _text(actual)


def _text(value: Any) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


def _show(value: Any, limit: int = 200) -> str:
    if value is _MISSING:
        return "(absent)"
    text = (
        json.dumps(value, ensure_ascii=False, sort_keys=True)
        if not isinstance(value, bytes)
        else repr(value)
    )
    return text if len(text) <= limit else text[:limit] + "..."


# --- calls -----------------------------------------------------------------------------------


def args_mismatch(
    expected: Mapping[str, Any] | None, actual: Mapping[str, Any] | None, mode: str
) -> str | None:
    if mode == "ignore" or expected is None:
        return None
    if actual is None:
        return "the call's arguments were not a JSON object"
    extra = [key for key in actual if key not in expected]
    if mode == "superset" and extra:
        return f"unexpected argument(s) {', '.join(map(repr, extra))}"
    keys = expected.keys() if mode != "superset" else actual.keys()
    for key in keys:
        want, value = expected[key], actual.get(key, _MISSING)
        if mode == "exact" and not is_operator(want):
            problem = (
                None if _equal(want, value) else f"expected {_show(want)}, found {_show(value)}"
            )
        else:
            problem = mismatch(want, value)
        if problem:
            return f"argument {key!r}: {problem}"
    if mode == "exact" and extra:
        return f"unexpected argument(s) {', '.join(map(repr, extra))}"
    return None


def _item_problem(item: Mapping[str, Any], call: CallRecord, default_mode: str) -> str | None:
    if item["name"] != call.name:
        return f"name {call.name!r} is not {item['name']!r}"
    return args_mismatch(item.get("args"), call.arguments, item.get("args_mode", default_mode))


def _describe_item(item: Mapping[str, Any]) -> str:
    args = item.get("args")
    name: str = item["name"]
    return name + (f" {_show(args)}" if args is not None else "")


def _describe_call(index: int, call: CallRecord) -> str:
    return f"#{index} {call.name} {call.raw_arguments}"


def _bipartite(rows: int, cols: int, ok: Callable[[int, int], bool]) -> dict[int, int]:
    """Maximum matching row -> col (Kuhn's augmenting paths; sizes are small)."""
    owner: dict[int, int] = {}

    def augment(row: int, seen: set[int]) -> bool:
        for col in range(cols):
            if col not in seen and ok(row, col):
                seen.add(col)
                if col not in owner or augment(owner[col], seen):
                    owner[col] = row
                    return True
        return False

    for row in range(rows):
        augment(row, set())
    return {row: col for col, row in owner.items()}


def check_calls(trajectory: Trajectory, spec: Any) -> list[Failure]:
    if isinstance(spec, list):
        spec = {"items": spec}
    items: list[Mapping[str, Any]] = spec["items"]
    mode = spec.get("mode", "exact")
    default_args = spec.get("args", "exact")
    calls = trajectory.calls
    head = f"mode {mode}, args {default_args}: "

    def ok(i: int, c: int) -> bool:
        return _item_problem(items[i], calls[c], default_args) is None

    def fail(path: tuple[Any, ...], message: str) -> list[Failure]:
        return [Failure(("calls", *path), head + message)]

    if mode == "exact":
        for index, item in enumerate(items):
            if index >= len(calls):
                return fail(
                    ("items", index),
                    f"item {index} ({_describe_item(item)}) was never called;"
                    f" only {len(calls)} call(s) were made",
                )
            problem = _item_problem(item, calls[index], default_args)
            if problem:
                return fail(
                    ("items", index),
                    f"call {_describe_call(index, calls[index])} does not match"
                    f" item {index} ({_describe_item(item)}): {problem}",
                )
        if len(calls) > len(items):
            extra = "; ".join(_describe_call(i, calls[i]) for i in range(len(items), len(calls)))
            return fail((), f"{len(calls) - len(items)} call(s) more than expected: {extra}")
        return []
    if mode == "in_order":
        position = 0
        for index, item in enumerate(items):
            found = next((c for c in range(position, len(calls)) if ok(index, c)), None)
            if found is None:
                candidates = [
                    c for c in range(position, len(calls)) if calls[c].name == item["name"]
                ]
                why = ""
                if candidates:
                    why = "; closest: " + "; ".join(
                        f"{_describe_call(c, calls[c])}"
                        f" ({_item_problem(item, calls[c], default_args)})"
                        for c in candidates[:3]
                    )
                return fail(
                    ("items", index),
                    f"item {index} ({_describe_item(item)}) has no matching"
                    f" call at or after call #{position}{why}",
                )
            position = found + 1
        return []
    matching = _bipartite(len(items), len(calls), ok)
    failures: list[Failure] = []
    if mode in ("any_order", "subset"):
        for index, item in enumerate(items):
            if index not in matching:
                failures += fail(
                    ("items", index),
                    f"item {index} ({_describe_item(item)}) matches no"
                    " call (or only calls already matched by other items)",
                )
    if mode in ("any_order", "superset"):
        matched_calls = set(matching.values())
        unmatched = [c for c in range(len(calls)) if c not in matched_calls]
        if unmatched:
            failures += fail(
                (),
                "call(s) not in the expected items: "
                + "; ".join(_describe_call(c, calls[c]) for c in unmatched),
            )
    return failures


# --- results, state, files, final, requests --------------------------------------------------


def check_results(trajectory: Trajectory, specs: Sequence[Mapping[str, Any]]) -> list[Failure]:
    failures = []
    for position, spec in enumerate(specs):
        index = spec.get("index", 0)
        calls = trajectory.calls_named(spec["call"])
        path = ("results", position)
        if index >= len(calls):
            failures.append(
                Failure(
                    path, f"no call {index} of {spec['call']!r}: it was called {len(calls)} time(s)"
                )
            )
            continue
        call = calls[index]
        if "is_error" in spec and spec["is_error"] != call.is_error:
            state = "an error" if call.is_error else "not an error"
            failures.append(
                Failure(path, f"{spec['call']}[{index}] result is {state}: {_show(call.result)}")
            )
        if "match" in spec:
            problem = mismatch(spec["match"], call.result)
            if problem:
                failures.append(
                    Failure((*path, "match"), f"{spec['call']}[{index}] result: {problem}")
                )
    return failures


def check_state(trajectory: Trajectory, spec: Mapping[str, Any]) -> list[Failure]:
    failures = []
    for key, expected in spec.items():
        problem = mismatch(expected, trajectory.state.get(key, _MISSING))
        if problem:
            failures.append(Failure(("state", key), f"state {key!r}: {problem}"))
    return failures


def check_files(trajectory: Trajectory, specs: Sequence[Mapping[str, Any]]) -> list[Failure]:
    failures = []
    for position, spec in enumerate(specs):
        relative = spec["path"].lstrip("/")
        content = trajectory.text(relative)
        operator = {key: value for key, value in spec.items() if key != "path"} or {"exists": True}
        problem = mismatch(operator, _MISSING if content is None else content)
        if problem:
            present = ", ".join(sorted(trajectory.files)) or "(none)"
            hint = f" (files present: {present})" if content is None else ""
            failures.append(Failure(("files", position), f"file {relative}: {problem}{hint}"))
    return failures


def check_final(trajectory: Trajectory, spec: Any) -> list[Failure]:
    actual = _MISSING if trajectory.final is None else trajectory.final
    problem = mismatch(spec, actual)
    return [Failure(("final",), f"final text: {problem}")] if problem else []


def check_requests(trajectory: Trajectory, specs: Sequence[Mapping[str, Any]]) -> list[Failure]:
    failures = []
    for position, spec in enumerate(specs):
        turn = spec["turn"]
        path = ("requests", position)
        if turn >= len(trajectory.requests):
            failures.append(
                Failure(path, f"turn {turn}: only {len(trajectory.requests)} request(s) were sent")
            )
            continue
        request = trajectory.requests[turn]
        for key, present, haystack, what in (
            ("system_contains", True, request.system, "the system text"),
            ("system_excludes", False, request.system, "the system text"),
            ("tools_include", True, list(request.tools), "the tools"),
            ("tools_exclude", False, list(request.tools), "the tools"),
        ):
            for needle in _as_list(spec.get(key)):
                if (needle in haystack) != present:
                    verb = "does not contain" if present else "contains"
                    shown = (
                        _show(haystack, 400)
                        if isinstance(haystack, list)
                        else _excerpt(haystack, needle)
                    )
                    failures.append(
                        Failure((*path, key), f"turn {turn}: {what} {verb} {needle!r}: {shown}")
                    )
    return failures


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _excerpt(text: str, needle: str) -> str:
    at = text.find(needle)
    if at < 0:
        return f"({len(text)} chars) {_show(text, 300)}"
    return f"...{text[max(0, at - 60) : at + len(needle) + 60]!r}..."


_CHECKERS: dict[str, Callable[[Trajectory, Any], list[Failure]]] = {
    "calls": check_calls,
    "results": check_results,
    "state": check_state,
    "files": check_files,
    "final": check_final,
    "requests": check_requests,
}


# --- Python helpers ----------------------------------------------------------------------------


def expect_calls(
    trajectory: Trajectory,
    items: Sequence[Mapping[str, Any] | str],
    *,
    mode: str = "exact",
    args: str = "exact",
) -> None:
    """Assert the tool-call trajectory; an item may be a bare tool name."""
    normalised = [{"name": item} if isinstance(item, str) else dict(item) for item in items]
    assert_trajectory(trajectory, {"calls": {"mode": mode, "args": args, "items": normalised}})


def _checks(kind: str, checks: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The checks given one by one, or as a single list (the YAML form)."""
    if len(checks) == 1 and isinstance(checks[0], (list, tuple)):
        checks = tuple(checks[0])
    for check in checks:
        if not isinstance(check, Mapping):
            raise TypeError(f"expect_{kind}: each check must be a mapping, got {check!r}")
    return [dict(check) for check in checks]


def expect_results(trajectory: Trajectory, *checks: Mapping[str, Any]) -> None:
    assert_trajectory(trajectory, {"results": _checks("results", checks)})


def expect_state(trajectory: Trajectory, expected: Mapping[str, Any]) -> None:
    assert_trajectory(trajectory, {"state": dict(expected)})


def expect_files(trajectory: Trajectory, *checks: Mapping[str, Any]) -> None:
    assert_trajectory(trajectory, {"files": _checks("files", checks)})


def expect_final(trajectory: Trajectory, expected: Any) -> None:
    assert_trajectory(trajectory, {"final": expected})


def expect_requests(trajectory: Trajectory, *checks: Mapping[str, Any]) -> None:
    assert_trajectory(trajectory, {"requests": _checks("requests", checks)})
