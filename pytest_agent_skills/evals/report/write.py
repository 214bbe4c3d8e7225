"""``report.html`` of an eval output folder: the page a person reads after ``agent-skills eval``.

:func:`write_report` reads ``benchmark.json`` with its run folders and/or ``triggers.json``
(docs/evals.md), renders one self-contained page (style and script inline, no request
ever leaves it) and replaces ``report.html`` atomically, so a reader never sees half a page.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...files import write_atomic
from ..documents.document_io import DocumentError
from .folder import read_folder
from .page import render_page

__all__ = ["REPORT_NAME", "DocumentError", "write_report"]

REPORT_NAME = "report.html"


def write_report(out_dir: Path) -> Path:
    """Read the eval output folder, write ``out_dir / "report.html"`` atomically, return its path.

    Raises :class:`DocumentError` (naming the file, and the line for bad JSON) on a folder it
    cannot read; ``report.html`` is then left as it was.
    """
    out_dir = Path(out_dir)
    page = render_page(read_folder(out_dir))
    target = out_dir / REPORT_NAME
    try:
        write_atomic(target, page)
        os.chmod(target, 0o644)  # as any page a person reads, whatever the umask
    except OSError as error:
        raise DocumentError(
            target, None, f"cannot be written: {error.strerror or error}"
        ) from error
    return target
