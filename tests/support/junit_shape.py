"""The shape of JUnit XML under the junit-10 schema (the one pytest checks its default
``junit_family=xunit2`` output against), written out as a table: for each element, its
required and allowed attributes and the child elements it may hold.  ``problems`` lists every
place where a document leaves that shape; an empty list means it conforms."""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.etree import ElementTree


@dataclass(frozen=True)
class Shape:
    required: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    children: frozenset[str] = frozenset()


def _shape(required: str = "", optional: str = "", children: str = "") -> Shape:
    return Shape(*(frozenset(names.split()) for names in (required, optional, children)))


_OUTCOME = _shape(optional="type message")
_TEXT = _shape()
SHAPES = {
    "testsuites": _shape(optional="name time tests failures errors", children="testsuite"),
    "testsuite": _shape(
        required="name tests failures errors",
        optional="group time skipped timestamp hostname id package file log url version",
        children="testsuite properties testcase system-out system-err",
    ),
    "properties": _shape(children="property"),
    "property": _shape(required="name value"),
    # No <properties> inside a test case: that is xunit1 (legacy) only.
    "testcase": _shape(
        required="name",
        optional="time classname group",
        children="skipped error failure system-out system-err",
    ),
    "skipped": _OUTCOME,
    "error": _OUTCOME,
    "failure": _OUTCOME,
    "system-out": _TEXT,
    "system-err": _TEXT,
}
#: The schema's SUREFIRE_TIME pattern, for the time attribute of suites.
SUREFIRE_TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")


def problems(xml: str | bytes) -> list[str]:
    root = ElementTree.fromstring(xml)
    found: list[str] = []
    if root.tag not in ("testsuites", "testsuite"):
        found.append(f"root element <{root.tag}>")

    def visit(element: ElementTree.Element, where: str) -> None:
        here = f"{where}/{element.tag}"
        shape = SHAPES.get(element.tag)
        if shape is None:
            found.append(f"{here}: unknown element")
            return
        attributes = set(element.attrib)
        for missing in sorted(shape.required - attributes):
            found.append(f"{here}: missing attribute {missing!r}")
        for extra in sorted(attributes - shape.required - shape.optional):
            found.append(f"{here}: attribute {extra!r} is not allowed")
        time = element.attrib.get("time") if element.tag in ("testsuite", "testsuites") else None
        if time is not None and not SUREFIRE_TIME.fullmatch(time):
            found.append(f"{here}: time {time!r} is not a SUREFIRE_TIME")
        for child in element:
            if child.tag not in shape.children:
                found.append(f"{here}: <{child.tag}> is not allowed here")
            else:
                visit(child, here)

    visit(root, "")
    return found
