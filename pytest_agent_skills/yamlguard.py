"""YAML from files we do not control: the fast loader, one guard against alias bombs, and a
reading that keeps the line of each key and the repeated keys (:func:`read_with_lines`).

An alias (``*name``) repeats the value its anchor (``&name``) names without writing it
again, so a few lines can describe billions of values (``a: &a [x, x, x]``,
``b: &b [*a, *a, *a]``, ... nine levels deep).  PyYAML shares the repeated objects, but
everything that walks the data afterwards (a schema validator, ``str()``, a copy) pays
for every repetition.  :func:`check_aliases` measures, on the composed nodes and in time
linear in the size of the file, how many values the aliases add once expanded, and
refuses a document past :data:`MAX_ALIAS_EXPANSION`.  The ``SKILL.md`` front matter
and ``*.scenario.yaml`` files both go through it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

#: The C loader when PyYAML has it (its scanner and parser are compiled), else the
#: pure-Python one; both safe.
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The most values the aliases of one document may add once expanded: a hundred thousand
#: (reusing a 50-value mapping in 2,000 places) is far beyond any real file, and still
#: little enough to walk that a hostile file cannot stall validation.
MAX_ALIAS_EXPANSION = 100_000


class AliasExpansionError(yaml.MarkedYAMLError):
    """A document whose aliases expand too far (or, where refused, refer to themselves).

    A :class:`yaml.MarkedYAMLError`, so code that reports YAML errors at their line
    reports this one too; ``problem`` says what was found, ``problem_mark`` where.
    """


def check_aliases(
    root: yaml.Node, *, limit: int = MAX_ALIAS_EXPANSION, allow_recursive: bool = True
) -> None:
    """Raise :class:`AliasExpansionError` when the aliases under ``root`` add more than
    ``limit`` values once expanded, or (unless ``allow_recursive``) when one refers to a
    value that contains it.

    Each node is visited once (iteratively: a deeply nested document is no
    ``RecursionError``); a node met again is an alias, and adds its expanded size.
    """
    sizes: dict[int, int] = {}
    open_nodes = {id(root)}
    stack: list[tuple[yaml.Node, Iterator[yaml.Node], list[int]]] = [
        (root, _children(root), [1])
    ]
    added = 0
    while stack:
        node, children, size = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            open_nodes.discard(id(node))
            sizes[id(node)] = size[0]
            if stack:
                stack[-1][2][0] += size[0]
            continue
        known = sizes.get(id(child))
        if known is not None:
            added += known
            size[0] += known
            if added > limit:
                raise AliasExpansionError(
                    problem=f"its aliases (*name) expand to more than {limit} values (an"
                    " alias bomb?)",
                    problem_mark=node.start_mark,
                )
        elif id(child) in open_nodes:
            if not allow_recursive:
                raise AliasExpansionError(
                    problem="an alias (*name) refers to a value that contains it (a recursive"
                    " structure)",
                    problem_mark=node.start_mark,
                )
            size[0] += 1
        else:
            open_nodes.add(id(child))
            stack.append((child, _children(child), [1]))


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value
    elif isinstance(node, yaml.SequenceNode):
        yield from node.value


def load(text: str) -> Any:
    """The data of the YAML document ``text`` (None when empty), its aliases checked."""
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_aliases(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_with_lines(text: str) -> tuple[Any, dict[str, int], list[tuple[str, int]]]:
    """The data of the YAML document ``text`` (None when empty), the 0-based line of each
    top-level key, and each repeated key of any mapping with its 0-based line, by line; its
    aliases checked.  Raises PyYAML's errors (and :class:`AliasExpansionError`)."""
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        if node is not None and "*" in text:  # an alias is written '*name': none, no bomb
            check_aliases(node)
        data, duplicates = _construct(loader, node, text) if node is not None else (None, [])
    finally:
        loader.dispose()
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _value in node.value:
            key_lines.setdefault(str(key_node.value), key_node.start_mark.line)
    return data, key_lines, duplicates


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"


class _SlowPath(Exception):
    """A node the fast construction does not handle alone (an alias back into itself)."""


def _construct(loader: Any, node: yaml.Node, text: str) -> tuple[Any, list[tuple[str, int]]]:
    """The document's data and its repeated keys ``(key, 0-based line)``, by line.

    Front matter is mostly plain strings in string-keyed mappings: those are built
    directly while looking for repeated keys, in one pass; every other node goes through
    PyYAML's constructor, as a whole document would.  (PyYAML's constructor dispatches
    every node through several method calls, and the front matter of every skill is read on
    every run.)  Anything the fast
    pass cannot build alone falls back to the plain constructor for the whole document;
    tests/skill/test_parser_fuzz.py checks both give equal data.
    """
    duplicates: list[tuple[str, int]] = []
    try:
        data = _construct_node(loader, node, duplicates, set())
    except (_SlowPath, yaml.constructor.ConstructorError):
        # Recursive aliases need the constructor's two-step construction of the whole
        # document. Compose it again: PyYAML's constructor edits nodes (it deletes merge
        # keys) and leaves its state half-done when it raises.
        fresh = LOADER(text)
        try:
            node = fresh.get_single_node()
            duplicates = duplicate_keys(node)
            data = fresh.construct_document(node)
        finally:
            fresh.dispose()
    duplicates.sort(key=lambda item: item[1])
    return data, duplicates


def _construct_node(
    loader: Any, node: yaml.Node, duplicates: list[tuple[str, int]], open_nodes: set[int]
) -> Any:
    if type(node) is yaml.ScalarNode and node.tag == _STR_TAG:
        return node.value
    if type(node) is yaml.MappingNode and node.tag == _MAP_TAG and all(
        type(key) is yaml.ScalarNode and key.tag == _STR_TAG for key, _value in node.value
    ):
        if id(node) in open_nodes:
            raise _SlowPath
        open_nodes.add(id(node))
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.value in result:
                duplicates.append((key_node.value, key_node.start_mark.line))
            result[key_node.value] = _construct_node(loader, value_node, duplicates, open_nodes)
        open_nodes.discard(id(node))
        return result
    duplicates.extend(duplicate_keys(node))
    return loader.construct_object(node, deep=True)


def duplicate_keys(root: yaml.Node) -> list[tuple[str, int]]:
    """(key, 0-based line) of every repeated key in every mapping of the document, unordered
    (:func:`read_with_lines` sorts what it gathers)."""
    found: list[tuple[str, int]] = []
    stack = [root]
    seen_nodes: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[tuple[str, str]] = set()
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    identity = (key_node.tag, key_node.value)
                    if identity in keys:
                        found.append((key_node.value, key_node.start_mark.line))
                    keys.add(identity)
                stack.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return found
