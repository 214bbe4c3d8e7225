"""Issue 11's patterns from real skill repositories: each false positive is gone, each true
positive stays, on realistic SKILL.md files, with exact lines."""

from __future__ import annotations

from pathlib import Path

import pytest
from _skill_files import write_skill

from pytest_agent_skills.rules import ValidationOptions, validate
from pytest_agent_skills.skill import Skill


def skill(
    root: Path, name: str, description: str, body: str, files: dict[str, str] | None = None
) -> Path:
    """``root/name``: a SKILL.md with that name, description and body, and ``files``."""
    front = f"name: {name}\ndescription: {description}\n"
    return write_skill(root, name, front=front, body=body, files=files)


def findings(directory: Path, options: ValidationOptions | None = None) -> list[tuple[str, int]]:
    found = validate(Skill.load(directory), options or ValidationOptions())
    return [(finding.rule, finding.line or 0) for finding in found]


def messages(directory: Path) -> list[str]:
    return [finding.message for finding in validate(Skill.load(directory))]


# A skill that teaches writing skills (as Anthropic's skill-creator does): its Markdown
# examples show another skill's links and commands; its own commands are real.
SKILL_WRITER = """\
# Skill writer

Start from [the template](assets/template.md), then check the new skill:

```bash
python scripts/check_skill.py path/to/new-skill
```

A finished SKILL.md looks like this:

````markdown
---
name: pdf-forms
description: Fills PDF forms. Use when the user has a PDF form.
---
See [the field guide](references/fields.md) for field names.

```bash
python scripts/fill_form.py input.pdf
```
````

Keep the body short; move details into files it links:

~~~md
Read [FORMS.md](FORMS.md) before filling anything.
~~~

Before publishing, lint it:

```
python scripts/lint_skill.py --strict
```

```python
subprocess.run(["python", "scripts/package_skill.py", "out/"], check=True)
```
"""


def test_markdown_examples_are_not_references_but_commands_are(tmp_path: Path) -> None:
    directory = skill(
        tmp_path,
        "skill-writer",
        "Writes Agent Skills. Use when asked for a skill.",
        SKILL_WRITER,
        {"assets/template.md": "# Template\n", "scripts/check_skill.py": ""},
    )
    # Line 5 is the body's first line: the examples (lines 15-25, 29-31) give nothing; the
    # untagged and python blocks name scripts the skill lacks.
    assert findings(directory) == [("reference-missing", 36), ("reference-missing", 40)]
    assert messages(directory)[0].startswith(
        "the body refers to 'scripts/lint_skill.py', which does not exist in the skill folder."
    )


COMMENTED = """\
# Release notes

<!-- TODO: bring back [the old guide](docs/old-guide.md) when it is rewritten -->
<!--
Previous layout, kept for reference:
- references/legacy.md
- scripts/legacy.py
-->

Link a doc with `[text](docs/page.md)`: paths are relative to SKILL.md.
Then run `python scripts/notes.py` and `python scripts/missing.py`.
"""


def test_html_comments_and_link_syntax_in_inline_code_are_not_references(
    tmp_path: Path,
) -> None:
    directory = skill(
        tmp_path,
        "release-notes",
        "Writes release notes. Use for a release.",
        COMMENTED,
        {"scripts/notes.py": "", "docs/index.md": "# Docs\n"},
    )
    assert findings(directory) == [("reference-missing", 15)]
    assert "'scripts/missing.py'" in messages(directory)[0]


def test_a_doc_linking_back_to_its_skill_is_one_level_deep(tmp_path: Path) -> None:
    files = {
        "references/api.md": (
            "# API\n\n[Back to the skill](../SKILL.md) - [top](api.md#api) - [errors](errors.md)\n"
        ),
        "references/errors.md": "# Errors\n\nSee [the API](api.md).\n",
        "references/guide.md": "# Guide\n\nDetails in [deep](deep/notes.md).\n",
        "references/deep/notes.md": "notes\n",
    }
    body = (
        "# Service client\n\n"
        "- [API reference](references/api.md)\n"
        "- [Errors](references/errors.md)\n"
        "- [Guide](references/guide.md)\n"
    )
    directory = skill(tmp_path, "service-client", "Calls the API. Use for the API.", body, files)
    # api.md -> ../SKILL.md and -> itself are fine, errors.md <-> api.md are both linked from
    # SKILL.md; guide.md -> deep/notes.md is a second level.
    assert findings(directory) == [("reference-nested", 9)]
    assert messages(directory) == [
        "'references/guide.md' refers on to 'references/deep/notes.md', which SKILL.md does not"
        " link; keep references one level deep: link it from SKILL.md too."
    ]


# Composio-style catalogue skill: 'tools:' appears in fenced YAML and in pseudo-code.
TOOLKIT = """\
# GitHub automation

Configure the agent:

```yaml
name: github-agent
tools:
  - name: GITHUB_CREATE_ISSUE
    description: Create an issue in a repository
```

```
agent = Agent(
    tools: [search, fetch]
)
```
"""


@pytest.mark.parametrize("profile", ["spec", "claude-code"])
def test_fenced_tools_lines_give_nothing_outside_the_trpc_profile(
    tmp_path: Path, profile: str
) -> None:
    directory = skill(
        tmp_path, "github-automation", "Automates GitHub. Use for issues and repos.", TOOLKIT
    )
    assert findings(directory, ValidationOptions.build(profile=profile)) == []


def test_the_trpc_profile_reads_tools_lines_as_that_runtime_does(tmp_path: Path) -> None:
    """The tRPC runtime ignores fences: under its profile the same skill has findings."""
    directory = skill(
        tmp_path, "github-automation", "Automates GitHub. Use for issues and repos.", TOOLKIT
    )
    assert findings(directory, ValidationOptions.build(profile="trpc")) == [
        ("tools-not-identifier", 12)
    ]


def test_reference_style_links_are_checked_at_their_definition(tmp_path: Path) -> None:
    body = (
        "# Glossary\n\n"
        "Read the [glossary][1] and the [setup notes][setup] first[^src].\n\n"
        "[1]: docs/gone.md\n"
        "[setup]: docs/setup.md 'Setup'\n"
        "[^src]: From docs/history.md, 2024.\n"
    )
    directory = skill(
        tmp_path,
        "glossary",
        "Explains terms. Use for terms.",
        body,
        {"docs/setup.md": "setup\n", "docs/history.md": "history\n"},
    )
    assert findings(directory) == [("reference-missing", 9)]
    assert messages(directory) == [
        "the body refers to 'docs/gone.md', which does not exist in the skill folder. Add the"
        " file, or fix the path (paths are relative to the folder holding SKILL.md)."
    ]


def test_lines_stay_exact_around_code_spans_and_wrapped_links(tmp_path: Path) -> None:
    body = (
        "# Lines\n"  # 5
        "A ``code span that\n"
        "runs on`` two lines, then [one](docs/one.md)\n"  # 7
        "and a [wrapped\n"
        "link](docs/two.md), then `[shown](docs/three.md)`.\n"  # 9
        "\n"
        "    [indented code](docs/four.md)\n"
        "\n"
        "> quoted [five](docs/five.md)\n"  # 13
    )
    directory = skill(tmp_path, "lines", "Keeps lines. Use for lines.", body)
    assert findings(directory) == [
        ("reference-missing", 7),
        ("reference-missing", 9),
        ("reference-missing", 13),
    ]
