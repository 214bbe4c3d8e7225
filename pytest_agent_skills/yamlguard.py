"""YAML from files we do not control: the fast loader, and one guard against alias bombs.

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

#: The C loader when PyYAML has it (much faster), else the pure-Python one; both safe.
LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: The most values the aliases of one document may add once expanded: a hundred thousand
#: (reusing a 50-value mapping in 2,000 places) is far beyond any real file, and still
#: costs well under a second to walk.
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
