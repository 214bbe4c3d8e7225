"""A recursion limit lowered for a moment: a folder tree deeper than the limit then shows
code that would recurse through it, without making a tree 1000 folders deep (and holding
a descriptor for each)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def recursion_limit(headroom: int) -> Iterator[None]:
    """Python's recursion limit ``headroom`` frames above the caller's depth, meanwhile."""
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + headroom)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
