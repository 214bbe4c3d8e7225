"""Patterns from real skill repositories: each false positive is gone, each true
positive stays, on realistic SKILL.md files, with exact lines."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from pytest_agent_skills import bodyparse
from pytest_agent_skills.rules import ValidationOptions, validate, validate_paths
from pytest_agent_skills.skill import Skill
from tests.support.corpus import CORPUS
from tests.support.skill_files import write_skill


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


def test_a_placeholder_script_name_is_no_reference(tmp_path: Path) -> None:
    """K-Dense's pymatgen skill: 'All scripts include detailed help: `python
    scripts/script_name.py --help`' names any script, not a file called script_name.py."""
    body = (
        "## Scripts\n\n"
        "- `python scripts/phase_diagram.py Li-Fe-O`\n"
        "- `python scripts/structure_converter.py in.cif out.vasp`\n\n"
        "All scripts include detailed help: `python scripts/script_name.py --help`\n"
        "Write yours as `scripts/your_script.py`; keep data in `assets/file_name.csv`.\n"
    )
    directory = skill(
        tmp_path,
        "materials",
        "Analyses crystal structures. Use for materials science.",
        body,
        {"scripts/phase_diagram.py": ""},
    )
    assert findings(directory) == [("reference-missing", 8)]  # structure_converter.py


def missing_targets(directory: Path) -> list[tuple[str, int]]:
    """(target, line) of each reference-missing finding."""
    return [
        (re.search(r"refers to '([^']+)'", finding.message).group(1), finding.line or 0)
        for finding in validate(Skill.load(directory))
        if finding.rule == "reference-missing"
    ]


def test_folder_names_with_dots_are_part_of_the_path(tmp_path: Path) -> None:
    """Versioned folders and .NET package names (UiPath.DataService.Activities) as folder
    names, in links and in inline paths: the path is the whole one, found or missing."""
    body = (
        "Read [the 1.2.3 notes](references/v1.2.3/o.md) and\n"
        "`references/activity-docs/UiPath.DataService.Activities/overview.md`; the one-dot\n"
        "folder too: `references/v1.2/o.md`.\n\n"
        "The 2.0 notes are gone: [notes](references/v2.0.1/o.md), and so is\n"
        "`references/activity-docs/UiPath.Mail.Activities/overview.md`.\n"
    )
    directory = skill(
        tmp_path,
        "uipath-docs",
        "Answers UiPath activity questions. Use for UiPath.",
        body,
        {
            "references/v1.2.3/o.md": "# 1.2.3\n",
            "references/v1.2/o.md": "# 1.2\n",
            "references/activity-docs/UiPath.DataService.Activities/overview.md": "# DS\n",
        },
    )
    assert missing_targets(directory) == [
        ("references/v2.0.1/o.md", 9),
        ("references/activity-docs/UiPath.Mail.Activities/overview.md", 10),
    ]


# A guide to writing skills, as skill-writing skills are: it names files a skill might have
# or create; its own tools and docs are real references.
SKILL_AUTHOR = """# Skill author

Skills keep code in `scripts/`, docs in `references/` and templates in `assets/`.

## Scripts

- **When to add one**: the same code gets rewritten for every request
- **Example**: `scripts/resize_image.py` for image resizing
- **Examples**: `references/pricing.md` for price tables, `references/contracts.md` for terms

Example: for a `sheet-report` skill that answers "what were sales last week?", the plan shows:

1. Each request re-reads the table layout
2. A `references/tables.md` file describing the tables would save that work

Open the matching guide (e.g., `references/guides/charts.md`) and copy its template.
For example, a deploy skill could keep `assets/deploy-template.yaml`.

Examples:
- `references/faq.md`
- `assets/logo.svg`

Run the examples:
- `python scripts/demo.py`

Save the chart as `assets/chart.png`, then check the skill:

```bash
python scripts/check_skill.py path/to/skill -o assets/report.json
python scripts/check_skill.py --help > assets/help.txt
python scripts/lint_skill.py --output assets/lint.json
```

Every script prints its usage: `python scripts/script_name.py --help`.

## Check your skill

Read [the layout rules](reference/layout.md) first, then `references/checklist.md`.
"""


def test_example_paths_in_a_skill_writing_guide_are_not_references(tmp_path: Path) -> None:
    directory = skill(
        tmp_path,
        "skill-author",
        "Helps write Agent Skills. Use when asked to create a skill.",
        SKILL_AUTHOR,
        {"scripts/check_skill.py": "", "references/layout.md": "# Layout\n"},
    )
    # The examples, the file to create, the outputs and the placeholder give nothing; the
    # script the examples list names, the tool the commands run, a link to 'reference/'
    # (the folder is 'references/') and a doc named plainly stay errors.
    assert missing_targets(directory) == [
        ("scripts/demo.py", 28),
        ("scripts/lint_skill.py", 35),
        ("reference/layout.md", 42),
        ("references/checklist.md", 42),
    ]


def test_a_lead_in_makes_only_its_own_sentence_an_example(tmp_path: Path) -> None:
    body = (
        "Charts are drawn from templates (e.g. `assets/bar.json`). Load `assets/line.json`.\n"
        "To add a new chart, see `references/charts.md`.\n"
        "Generate the report with `scripts/report.py`.\n\n"
        "```bash\n# Save results to a file\npython scripts/fetch.py --all\n```\n"
    )
    directory = skill(tmp_path, "charts", "Draws charts. Use for charts.", body)
    assert missing_targets(directory) == [
        ("assets/line.json", 5),
        ("references/charts.md", 6),
        ("scripts/report.py", 7),
        ("scripts/fetch.py", 11),
    ]


#: Every finding on the public corpus but the size guidance (body-too-long, body-tokens) and
#: the references to its stripped code files, reviewed one by one: each is true upstream.
CORPUS_FINDINGS = {
    ("anthropics-skills/skills/claude-api", "name-reserved-word"),
    ("anthropics-skills/skills/claude-api", "description-length"),  # 1068 characters
    ("anthropics-skills/template", "name-directory"),  # name: template-skill
    ("k-dense-scientific-skills/scientific-skills/adaptyv", "field-unknown"),  # author:
    ("k-dense-scientific-skills/scientific-skills/database-lookup", "description-length"),
    ("k-dense-scientific-skills/scientific-skills/markdown-mermaid-writing", "metadata-type"),
    ("k-dense-scientific-skills/scientific-skills/rowan", "metadata-type"),  # a YAML list
}
#: Files SKILL.md names that its skill upstream does not have: a script of another skill
#: (scientific-schematics' generate_schematic.py), a 'reference/' typo for 'references/',
#: docs research-grants lists but does not ship.
SCHEMATIC = "scripts/generate_schematic.py"
CORPUS_MISSING = {
    **{
        f"k-dense-scientific-skills/scientific-skills/{skill}": {SCHEMATIC}
        for skill in [
            "citation-management",
            "clinical-decision-support",
            "clinical-reports",
            "hypothesis-generation",
            "latex-posters",
            "literature-review",
            "markitdown",
            "peer-review",
            "pptx-posters",
            "research-lookup",
            "scholar-evaluation",
            "scientific-critical-thinking",
            "scientific-slides",
            "treatment-plans",
            "venue-templates",
        ]
    },
    "k-dense-scientific-skills/scientific-skills/neuropixels-analysis": {
        f"reference/{name}.md"
        for name in [
            "AI_CURATION",
            "ANALYSIS",
            "AUTOMATED_CURATION",
            "MOTION_CORRECTION",
            "PREPROCESSING",
            "QUALITY_METRICS",
            "SPIKE_SORTING",
            "api_reference",
            "plotting_guide",
            "standard_workflow",
        ]
    },
    "k-dense-scientific-skills/scientific-skills/research-grants": {
        SCHEMATIC,
        "assets/timeline_gantt_template.md",
        *(
            f"references/{name}.md"
            for name in [
                "budget_preparation",
                "funding_mechanisms",
                "research_methods",
                "resubmission_strategies",
                "review_criteria",
                "team_building",
                "timeline_planning",
            ]
        ),
        "scripts/budget_calculator.py",
        "scripts/compliance_checker.py",
        "scripts/deadline_tracker.py",
    },
    "k-dense-scientific-skills/scientific-skills/scientific-schematics": {
        "references/diagram_types.md"
    },
    "k-dense-scientific-skills/scientific-skills/scientific-writing": {
        SCHEMATIC,
        "scripts/generate_image.py",
    },
}


def stripped_files() -> set[str]:
    """The corpus files left out of the copy (code), from each repository's MANIFEST.tsv."""
    stripped = set()
    for manifest in CORPUS.glob("*/MANIFEST.tsv"):
        with manifest.open(encoding="utf-8") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row["status"].startswith("skipped"):
                    stripped.add(f"{manifest.parent.name}/{row['file']}")
    return stripped


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"public skills corpus not found at {CORPUS}")
def test_every_finding_on_the_public_corpus_is_a_reviewed_true_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parses = []
    parse = bodyparse.parse_text
    monkeypatch.setattr(
        bodyparse, "parse_text", lambda *args: parses.append(args[0][:40]) or parse(*args)
    )
    reports = validate_paths([CORPUS])
    assert len(reports) >= 100
    stripped = stripped_files()
    others, missing = set(), {}
    for report in reports:
        skill = report.skill.directory.relative_to(CORPUS).as_posix()
        for finding in report.findings:
            if finding.rule == "reference-missing":
                target = re.search(r"refers to '([^']+)'", finding.message).group(1)
                if f"{skill}/{target}" not in stripped:
                    missing.setdefault(skill, set()).add(target)
            elif finding.rule not in ("body-too-long", "body-tokens"):
                others.add((skill, finding.rule))
    assert others == CORPUS_FINDINGS
    assert missing == CORPUS_MISSING
    # The string scan tells alone on every one of them: the parser never runs.
    assert parses == []
