"""The package's shape, read from its source: the layers of docs/architecture.md, no import
circle between files, no function taking more than a handful of parameters (a spec object
instead, as ``ExecSpec``).  The package is found where it is imported from, so the test reads
the source that runs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest_agent_skills

PACKAGE = Path(pytest_agent_skills.__file__).resolve().parent
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
#: The hard limit on a function's parameters (``self`` and ``cls`` not counted).
MAX_PARAMETERS = 8



def modules() -> dict[str, Path]:
    """Dotted name (relative to the package, ``""`` for itself) -> file."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Every import run when the module loads or any of its functions runs; not the ones under
    ``if TYPE_CHECKING:``, which only a type checker reads."""

    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test):
            for statement in node.orelse:
                self.visit(statement)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def _imports(path: Path) -> list[ast.Import | ast.ImportFrom]:
    visitor = _Imports()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


def _targets(statement: ast.Import | ast.ImportFrom, base: list[str], known: set[str]) -> list[str]:
    """The package's modules ``statement`` names (relative to the package)."""
    if isinstance(statement, ast.Import):
        names = [alias.name for alias in statement.names]
        return [_within(name) for name in names if name.split(".")[0] == "pytest_agent_skills"]
    if statement.level:
        parent = base[: len(base) - (statement.level - 1)]
        module = ".".join([*parent, *([statement.module] if statement.module else [])])
    elif (statement.module or "").split(".")[0] == "pytest_agent_skills":
        module = _within(statement.module or "")
    else:
        return []
    submodules = [f"{module}.{alias.name}".lstrip(".") for alias in statement.names]
    targets = [sub for sub in submodules if sub in known]
    if len(targets) < len(submodules):  # names the module itself defines
        targets.append(module)
    return targets


def _within(dotted: str) -> str:
    return dotted.removeprefix("pytest_agent_skills").lstrip(".")


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports.

    ``from . import x`` names module ``x``, not the package; a package's own submodules do not
    import it (it is loaded before them), unless they take a name it defines.
    """
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        here = name.split(".") if name else []
        base = here if path.name == "__init__.py" else here[:-1]
        for statement in _imports(path):
            for target in _targets(statement, base, set(known)):
                while target not in known:
                    target = target.rpartition(".")[0]
                if target != name:
                    graph[name].add(target)
    return graph


def import_circles(graph: dict[str, set[str]] | None = None) -> list[frozenset[str]]:
    """The strongly connected sets of more than one module (Tarjan), of the package's import
    graph or of ``graph``."""
    graph = import_graph() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                circles.append(frozenset(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circle_between_files() -> None:
    circles = [sorted(circle) for circle in import_circles()]
    assert circles == [], f"import circles between the package's files: {circles}"


def test_the_circle_check_finds_a_circle_and_only_it() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == [frozenset({"a", "b", "c"})]


def test_the_circle_check_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    assert "docpath" in graph["scenario"]  # from .docpath import ...
    assert "harness.expect" in graph["scenario"]  # inside a function
    assert "protocol.dynamic" in graph["protocol.session"]  # from . import dynamic
    assert "protocol" not in graph["protocol.session"]  # its own package is no arrow
    # under `if TYPE_CHECKING:` only: no arrow
    assert "repository" not in graph["harness.conversation"]


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    arguments = function.args
    names = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    return names + [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]


def test_no_function_takes_more_than_a_handful_of_parameters() -> None:
    crowded = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count = len(_parameters(node))
                if count > MAX_PARAMETERS:
                    crowded.append(f"{name or '__init__'}.{node.name} ({count})")
    assert crowded == [], (
        f"more than {MAX_PARAMETERS} parameters (give a spec object, as ExecSpec): {crowded}"
    )


def layers(table_name: str = "layers") -> list[tuple[str, set[str]]]:
    """A table of docs/architecture.md, from the ground up: (name, modules). ``layers`` names
    the package's top-level modules, ``evals-floors`` the subpackages of ``evals``."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index(f"<!-- {table_name}:begin") : text.index(f"<!-- {table_name}:end -->")]
    rows = [line.strip("|").split(" | ") for line in table.splitlines() if line.startswith("| ")]
    return [
        (layer.strip(), {name.strip(" `") for name in names.split(",")})
        for layer, names, _ in rows[1:]
        if not layer.strip().startswith("---")
    ]


def _area(module: str) -> str:
    return module.split(".")[0] if module else "__init__"


def test_every_module_stands_in_one_layer() -> None:
    named = [name for _, names in layers() for name in names]
    assert len(named) == len(set(named)), "a module named in two layers"
    areas = {_area(module) for module in modules()}
    assert sorted(areas - set(named)) == [], "place these in a layer of docs/architecture.md"
    assert sorted(set(named) - areas) == [], "docs/architecture.md names modules that do not exist"


def test_no_module_imports_one_of_a_higher_layer() -> None:
    level = {name: index for index, (_, names) in enumerate(layers()) for name in names}
    upward = sorted(
        f"{module or '__init__'} -> {target or '__init__'}"
        for module, targets in import_graph().items()
        for target in targets
        if level.get(_area(target), 0) > level.get(_area(module), 0)
    )
    assert upward == [], "imports of a higher layer (see docs/architecture.md)"


def test_below_the_front_layer_no_module_imports_pytest_as_it_loads() -> None:
    front = layers()[-1][1]
    loading = []
    for name, path in modules().items():
        if _area(name) in front:
            continue
        for statement in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(statement, (ast.Import, ast.ImportFrom)):
                names = (
                    [alias.name for alias in statement.names]
                    if isinstance(statement, ast.Import)
                    else [statement.module or ""]
                )
                if any(n.split(".")[0] in ("pytest", "_pytest") for n in names):
                    loading.append(name)
    assert loading == []


def _floor(module: str) -> str | None:
    """The floor (subpackage of ``evals``) ``module`` stands in, None outside ``evals``."""
    parts = module.split(".")
    return parts[1] if parts[0] == "evals" and len(parts) > 1 else None


def test_evals_is_subpackages_not_a_flat_list() -> None:
    known = modules()
    flat = sorted(
        name for name, path in known.items()
        if _floor(name) is not None and path.parent == PACKAGE / "evals"
    )
    assert flat == [], "a module directly in evals/: place it in a floor (docs/architecture.md)"
    named = [name for _, names in layers("evals-floors") for name in names]
    floors = {_floor(name) for name in known} - {None}
    assert sorted(floors - set(named)) == [], "name these in the floors of docs/architecture.md"
    assert sorted(set(named) - floors) == [], "docs/architecture.md names floors that do not exist"


def test_no_evals_module_imports_one_of_a_higher_floor() -> None:
    floors = layers("evals-floors")
    level = {name: index for index, (_, names) in enumerate(floors) for name in names}
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        for target in targets
        if (here := _floor(module)) is not None
        and (there := _floor(target)) is not None
        and level[there] > level[here]
    )
    assert upward == [], "imports of a higher floor of evals (see docs/architecture.md)"


def test_no_evals_module_repeats_a_name_of_the_package() -> None:
    """One name per concept: a module of evals is found by its name alone (not two
    ``conversation.py``, one in harness and one in evals)."""
    files = [path for path in PACKAGE.rglob("*.py") if path.name != "__init__.py"]
    evals = {path.stem for path in files if (PACKAGE / "evals") in path.parents}
    repeated = sorted(
        str(path.relative_to(PACKAGE))
        for path in files
        if path.stem in evals and sum(other.stem == path.stem for other in files) > 1
    )
    assert repeated == [], "evals modules whose names the package repeats"


#: The most lines a module may have: past it, it holds more than one concern.
MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    long = {}
    for path in PACKAGE.rglob("*.py"):
        count = len(path.read_text(encoding="utf-8").splitlines())
        name = path.relative_to(PACKAGE).as_posix()
        if count > MAX_LINES:
            long[name] = count
    assert long == {}, f"modules over {MAX_LINES} lines (split them by concern)"


#: The checkout this test file is in: its bench scripts and scripts.
CHECKOUT = Path(__file__).resolve().parents[2]


def imports_of_tests(source: str) -> list[str]:
    """The imports of ``tests`` (or a module under it) in a Python text, at any depth."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        found += [name for name in names if name == "tests" or name.startswith("tests.")]
    return found


def test_bench_and_scripts_never_import_the_tests() -> None:
    """The tests stand on bench/support (a helper both need lives there), never the reverse: a
    bench script or a script must run from a checkout or an sdist without the test suite."""
    files = sorted([*(CHECKOUT / "bench").rglob("*"), *(CHECKOUT / "scripts").rglob("*")])
    offenders = []
    for path in (each for each in files if each.is_file() and "__pycache__" not in each.parts):
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py":
            names = imports_of_tests(text)
        else:  # a shell script running python: -c "from tests..." or -m tests.x
            names = re.findall(r"(?:\bfrom|\bimport|-m)\s+(tests(?:\.[\w.]+)?)\b", text)
        offenders += [f"{path.relative_to(CHECKOUT)}: {name}" for name in names]
    assert len(files) > 20  # bench/ and scripts/ were found
    assert offenders == []


def test_the_tests_import_check_sees_imports_in_functions_and_not_lookalikes() -> None:
    source = (
        "import testsuite\nfrom .tests import x\nimport os.tests\n"
        "def f():\n    from tests.support.cli import cli\n    import tests\n"
    )
    assert imports_of_tests(source) == ["tests.support.cli", "tests"]
