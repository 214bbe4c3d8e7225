"""A new description put into SKILL.md: the value replaced where the YAML parser says it is,
every other byte kept (CRLF line endings, comments, the fields around, the body)."""

from __future__ import annotations

import pytest

from pytest_agent_skills.evals.triggers.description_edit import (
    DescriptionEditError,
    replace_description,
)

NEW = "Computes CSV statistics. Use when asked for a mean, a median or a spread."


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "---\r\nname: csv\r\ndescription: Old one. # why it says so\r\nlicense: MIT\r\n"
            "---\r\nBody\r\n",
            f"---\r\nname: csv\r\ndescription: {NEW} # why it says so\r\nlicense: MIT\r\n"
            "---\r\nBody\r\n",
            id="crlf-and-an-inline-comment",
        ),
        pytest.param(
            "---\n# the skill\nname: csv\ndescription: >\n  Folded old\n  text.\n\n# more\n"
            "metadata:\n  owner: me\n---\nBody: with a colon\n",
            f"---\n# the skill\nname: csv\ndescription: {NEW}\n\n# more\n"
            "metadata:\n  owner: me\n---\nBody: with a colon\n",
            id="folded-between-comments",
        ),
        pytest.param(
            "---\r\nname: csv\r\ndescription: |\r\n  Literal\r\n  old.\r\nallowed-tools: Bash\r\n"
            "---\r\n",
            f"---\r\nname: csv\r\ndescription: {NEW}\r\nallowed-tools: Bash\r\n---\r\n",
            id="literal-crlf",
        ),
        pytest.param(
            "---\nname: csv\ndescription: 'Single: quoted'   # kept\nz: 1\n---\n",
            f"---\nname: csv\ndescription: {NEW}   # kept\nz: 1\n---\n",
            id="single-quoted",
        ),
        pytest.param(
            '---\nname: csv\ndescription: "Double\n  over lines"\n---\nx\n',
            f"---\nname: csv\ndescription: {NEW}\n---\nx\n",
            id="double-quoted-over-lines",
        ),
    ],
)
def test_only_the_value_changes(before: str, after: str) -> None:
    assert replace_description(before, NEW) == after


def test_a_value_yaml_would_misread_is_double_quoted() -> None:
    text = "---\nname: csv\ndescription: old\n---\n"
    tricky = 'Use for: a # b, "quotes" and - dashes'
    assert replace_description(text, tricky) == (
        '---\nname: csv\ndescription: "Use for: a # b, \\"quotes\\" and - dashes"\n---\n'
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: csv\n", "SKILL.md does not start with a --- front matter fence"),
        ("---\nname: csv\n", "the front matter of SKILL.md has no closing --- fence"),
        ("---\nname: csv\n---\n", "SKILL.md has no description: field (or more than one)"),
        ("---\nname: csv\ndescription: [a, b]\n---\n", "SKILL.md has no description: field"),
    ],
)
def test_what_cannot_be_replaced_in_place_is_refused(text: str, message: str) -> None:
    with pytest.raises(DescriptionEditError, match=message.replace("(", r"\(").replace(")", r"\)")):
        replace_description(text, NEW)
