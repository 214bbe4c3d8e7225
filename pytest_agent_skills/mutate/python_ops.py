"""The script operators on a Python script, read with :mod:`ast`: each change is spliced into
the file's own text at the node's position, so the rest of the file stays as written."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from .mutant import Candidate

#: Arithmetic operators and what each becomes.
ARITHMETIC = {
    ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*", ast.FloorDiv: "/",
    ast.Mod: "*", ast.Pow: "*",
}
_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**",
}
#: Comparison operators and what each becomes (a boundary moved, or the test turned round).
COMPARISON = {
    ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
    ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="),
}
#: Calls swapped for their opposite.
SWAPPED_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any"}
#: Methods and functions whose call writes a file: left out by ``unwritten-output``.
WRITERS = frozenset({
    "write_text", "write_bytes", "write", "writelines", "dump", "writerow", "writerows",
    "copy", "copyfile", "copy2", "copytree", "savefig", "to_csv", "to_json", "save",
})
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)
_WRITE_MODES = frozenset("wax")


class _Source:
    """The text of a script and the character offset of a node's (line, byte column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, column: int) -> int:
        raw = self.lines[line - 1].encode("utf-8")[:column]
        return self.starts[line - 1] + len(raw.decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        end_line, end_column = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(end_line, end_column),
        )

    def replaced(self, start: int, end: int, new: str) -> str:
        return self.text[:start] + new + self.text[end:]

    def indent(self, line: int) -> str:
        text = self.lines[line - 1]
        return text[: len(text) - len(text.lstrip())]

    def alone_on_its_lines(self, node: ast.stmt) -> bool:
        """True when nothing but ``node`` (and a comment) stands on its lines."""
        start, end = self.span(node)
        first = self.starts[node.lineno - 1]
        last = self.starts[node.end_lineno or node.lineno]
        after = self.text[end:last].strip()
        return not self.text[first:start].strip() and (not after or after.startswith("#"))

    def statement_to_pass(self, node: ast.stmt) -> str:
        """The text with ``node``'s lines replaced by ``pass`` at its indentation."""
        first = self.starts[node.lineno - 1]
        last = self.starts[node.end_lineno or node.lineno]
        return self.text[:first] + self.indent(node.lineno) + "pass\n" + self.text[last:]


def python_candidates(file: str, text: str) -> Iterator[Candidate]:
    """Every change the script operators make to the Python script ``file``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return  # not Python this interpreter reads: nothing to mutate
    source = _Source(text)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        yield from _operators(file, source, node, docstrings)
    yield from _statements(file, source, tree, docstrings)
    yield from _early_exits(file, source, tree)


def _operators(
    file: str, source: _Source, node: ast.AST, docstrings: set[int]
) -> Iterator[Candidate]:
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in ARITHMETIC:
        left = node.left if isinstance(node, ast.BinOp) else node.target
        right = node.right if isinstance(node, ast.BinOp) else node.value
        symbol = _SYMBOLS[type(node.op)]
        gap_start, gap_end = source.span(left)[1], source.span(right)[0]
        at = source.text.find(symbol, gap_start, gap_end)
        if at >= 0:
            new = ARITHMETIC[type(node.op)]
            yield Candidate(
                "arithmetic", file, node.lineno, source.replaced(at, at + len(symbol), new)
            )
    elif isinstance(node, ast.Compare):
        before = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if type(op) in COMPARISON:
                symbol, new = COMPARISON[type(op)]
                at = source.text.find(symbol, source.span(before)[1], source.span(right)[0])
                if at >= 0:
                    yield Candidate(
                        "comparison", file, node.lineno,
                        source.replaced(at, at + len(symbol), new),
                    )
            before = right
    elif isinstance(node, ast.Constant) and id(node) not in docstrings:
        new_value = _changed_constant(node.value)
        if new_value is not None:
            start, end = source.span(node)
            yield Candidate("constant", file, node.lineno, source.replaced(start, end, new_value))
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in SWAPPED_CALLS
    ):
        start, end = source.span(node.func)
        yield Candidate(
            "swapped-call", file, node.lineno,
            source.replaced(start, end, SWAPPED_CALLS[node.func.id]),
        )


def _changed_constant(value: object) -> str | None:
    """A constant's replacement: a boolean turned round, a number one more (0 and 1 swap)."""
    if isinstance(value, bool):
        return str(not value)
    if isinstance(value, int):
        return "0" if value == 1 else str(value + 1)
    if isinstance(value, float):
        return repr(value + 1.0)
    return None  # texts, bytes, None: too many harmless changes (messages, names)


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the constants that are docstrings (never mutated)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
                found.add(id(body[0]))
    return found


def _statements(
    file: str, source: _Source, tree: ast.Module, docstrings: set[int]
) -> Iterator[Candidate]:
    """``unwritten-output`` (a statement that writes a file made ``pass``), then
    ``deleted-statement`` (any other simple statement made ``pass``)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or id(node) in docstrings:
            continue
        if _writes_a_file(node):
            yield Candidate("unwritten-output", file, node.lineno, source.statement_to_pass(node))
        elif isinstance(node, _SIMPLE) and source.alone_on_its_lines(node):
            yield Candidate("deleted-statement", file, node.lineno, source.statement_to_pass(node))


def _writes_a_file(node: ast.stmt) -> bool:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in WRITERS and not (isinstance(func, ast.Attribute) and _is_stream(func))
    if isinstance(node, ast.With):
        return any(_opens_for_writing(item.context_expr) for item in node.items)
    return False


def _is_stream(func: ast.Attribute) -> bool:
    """``sys.stdout.write(...)``: output, not a file."""
    target = func.value
    return isinstance(target, ast.Attribute) and target.attr in ("stdout", "stderr")


def _opens_for_writing(expr: ast.expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "open":
        return False
    modes = [arg for arg in expr.args[1:2]] + [k.value for k in expr.keywords if k.arg == "mode"]
    return any(
        isinstance(mode, ast.Constant) and isinstance(mode.value, str)
        and bool(_WRITE_MODES & set(mode.value))
        for mode in modes
    )


def _early_exits(file: str, source: _Source, tree: ast.Module) -> Iterator[Candidate]:
    """``early-exit``: ``raise SystemExit(0)`` before the first statement of each function
    of the module and before its first statement that does work at import."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = [each for each in node.body if not _is_docstring(each)]
            if body:
                yield _exit_before(file, source, body[0])
    for node in tree.body:
        if not isinstance(
            node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                   ast.ClassDef, ast.Assign, ast.AnnAssign)
        ) and not _is_docstring(node):
            yield _exit_before(file, source, node)
            break


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
        node.value.value, str
    )


def _exit_before(file: str, source: _Source, node: ast.stmt) -> Candidate:
    first = source.starts[node.lineno - 1]
    line = source.indent(node.lineno) + "raise SystemExit(0)  # mutant: early exit\n"
    text = source.text[:first] + line + source.text[first:]
    return Candidate("early-exit", file, node.lineno, text)
