"""The body as CommonMark: what the string scan finds, when it can tell alone, and that it
gives the parser's answers wherever a rule relies on it (checked on generated Markdown)."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_agent_skills.bodyparse import Reference, is_markdown_info, link_target
from pytest_agent_skills.bodyscan import MarkdownText, one_per_line

FOLDERS = frozenset({"scripts", "references", "assets", "docs"})


def scanned(text: str, first_line: int = 1) -> list[tuple[int, str, str]]:
    references = one_per_line(MarkdownText(text, first_line).references(FOLDERS))
    return [(r.line, r.target, r.kind) for r in references]


def parsed(text: str, first_line: int = 1) -> list[tuple[int, str, str]]:
    """Every reference as the parser reads the whole text."""
    markdown = MarkdownText(text, first_line)
    candidates = markdown.references(FOLDERS)
    exact = one_per_line(markdown.exact_references(FOLDERS, candidates))
    return [(r.line, r.target, r.kind) for r in exact]


def test_links_definitions_and_bare_paths_with_their_lines() -> None:
    text = (
        "Read [the guide](docs/guide.md) and ![chart](assets/chart.png).\n"
        "Run `python scripts/run.py --in data/x.csv`.\n"
        "See the [API][api] and [https](https://example.org/x.md), [top](#top).\n"
        "\n"
        "[api]: references/api.md\n"
    )
    assert scanned(text, 10) == [
        (10, "docs/guide.md", "link"),
        (10, "assets/chart.png", "link"),
        (11, "scripts/run.py", "path"),
        (14, "references/api.md", "definition"),
    ]
    assert parsed(text, 10) == scanned(text, 10)


def test_markdown_examples_comments_and_link_syntax_in_code_refer_to_nothing() -> None:
    text = (
        "Show links as `[text](docs/page.md)`.\n"  # 1
        "<!-- [old](docs/old.md) -->\n"  # 2
        "\n"
        "````markdown\n"  # 4
        "See [x](references/x.md).\n"
        "```bash\n"
        "python scripts/example.py\n"  # 7
        "```\n"
        "````\n"
        "\n"
        "~~~md\n"  # 11
        "[FORMS](references/forms.md)\n"
        "~~~\n"
        "\n"
        "```bash\n"  # 15
        "python scripts/run.py  # [not a link](docs/no.md)\n"  # 16
        "```\n"
    )
    # The scan finds them all; the parser keeps only the command of the bash block.
    assert [target for _line, target, _kind in scanned(text)] == [
        "docs/page.md",
        "docs/old.md",
        "references/x.md",
        "scripts/example.py",
        "references/forms.md",
        "scripts/run.py",
        "docs/no.md",
    ]
    assert parsed(text) == [(16, "scripts/run.py", "path"), (16, "docs/no.md", "path")]


def test_a_reference_link_is_checked_at_its_definition_and_a_footnote_is_no_definition() -> None:
    text = "Read the [guide][1].\n\n[1]: docs/gone.md\n[^2]: Smith, docs/note.md (2020).\n"
    assert parsed(text) == [(3, "docs/gone.md", "definition"), (4, "docs/note.md", "path")]


def test_a_code_span_showing_link_syntax_hides_only_its_own_lines() -> None:
    text = (
        "Show `[x](docs/a.md)` syntax,\n"
        "then read docs/a.md.\n"  # the same path, outside the span
        "\n"
        "Show ``[y](docs/b.md) `\n"  # a span over two lines, holding a shorter run
        "more`` and docs/c.md,\n"
        "then docs/b.md.\n"
    )
    assert parsed(text) == [
        (2, "docs/a.md", "path"),
        (5, "docs/c.md", "path"),
        (6, "docs/b.md", "path"),
    ]


def test_a_path_after_a_hidden_span_on_its_last_line_is_a_reference() -> None:
    """A span hides what it shows, not the rest of its line (found by the full-parse test)."""
    text = (
        "Show `[x](docs/a.md)` then read docs/a.md.\n"
        "\n"
        "text ``` inline docs/b.md\nSee [guide](docs/g.md).\ntext ``` inline docs/b.md\n"
        "\n"
        "> Quoted `[q](docs/q.md)`\n> and docs/q.md.\n"
        "\n"
        "A <!-- docs/c.md --> comment, then docs/c.md.\n"
    )
    assert parsed(text) == [
        (1, "docs/a.md", "path"),
        (5, "docs/b.md", "path"),  # the link shown in the span is no link
        (8, "docs/q.md", "path"),
        (10, "docs/c.md", "path"),
    ]


def test_link_lines_follow_line_breaks_inside_paragraphs() -> None:
    text = (
        "First line\n"
        "a `code span\n"
        "over two lines` then [after](docs/after.md)\n"
        "[multi\n"
        "line text](docs/multi.md)\n"
        "text <!-- a\n"
        "comment --> and [last](docs/last.md)\n"
    )
    assert parsed(text, 20) == [
        (22, "docs/after.md", "link"),
        (24, "docs/multi.md", "link"),
        (26, "docs/last.md", "link"),
    ]


def verdicts(text: str) -> dict[tuple[str, str], bool | None]:
    markdown = MarkdownText(text)
    return {(r.target, r.kind): markdown.verdict(r) for r in markdown.references(FOLDERS)}


def test_the_scan_tells_alone_only_where_nothing_can_hide_a_reference() -> None:
    text = (
        "Plain [guide](docs/guide.md) and scripts/run.py.\n"
        "\n"
        "With `code` [a](docs/a.md).\n"
        "\n"
        "Run `python scripts/b.py`.\n"
        "\n"
        "- ```md\n"  # a fence in a list item: the pairing of fences needs the parser
        "  [c](docs/c.md) scripts/c.py\n"
        "  ```\n"
    )
    assert verdicts(text) == {
        ("docs/guide.md", "link"): True,
        ("docs/guide.md", "path"): True,  # 'docs' is a folder: the destination is a path too
        ("scripts/run.py", "path"): True,
        ("docs/a.md", "link"): None,  # a backtick in the paragraph: the link could be code
        ("docs/a.md", "path"): None,  # ... and so could its link syntax
        ("scripts/b.py", "path"): True,  # paths in code spans count; no link syntax there
        ("docs/c.md", "link"): None,
        ("docs/c.md", "path"): None,
        ("scripts/c.py", "path"): None,
    }


def test_fences_that_start_their_lines_are_followed_without_the_parser() -> None:
    text = (
        "````md\n"
        "```bash\n"
        "python scripts/example.py\n"  # the inner ``` does not close ````
        "```\n"
        "````\n"
        "\n"
        "```bash\n"
        "python scripts/run.py  # [y](docs/y.md)\n"  # a command; link syntax in code
        "```\n"
        "\n"
        "Then scripts/after.py and [guide](docs/guide.md).\n"
        "\n"
        "<!-- old: scripts/old.py -->\n"
    )
    assert verdicts(text) == {
        ("scripts/example.py", "path"): False,
        ("scripts/run.py", "path"): True,
        ("docs/y.md", "link"): False,
        ("docs/y.md", "path"): True,  # a bare path in a command
        ("scripts/after.py", "path"): True,
        ("docs/guide.md", "link"): True,
        ("docs/guide.md", "path"): True,
        ("scripts/old.py", "path"): None,  # comments are left to the parser
    }


def test_unusual_destinations_are_left_to_the_parser() -> None:
    text = "[a](<docs/my file.md>) [b](docs/x\\_y.md) [c](docs/f(1).md)\n"
    markdown = MarkdownText(text)
    assert [(r.target, r.certain) for r in markdown.references(FOLDERS)] == [
        ("docs/my", False),
        ("docs/x\\_y.md", False),
    ]  # 'docs/f(1).md' is no file path to either reader (parentheses)
    assert parsed(text) == [(1, "docs/my file.md", "link"), (1, "docs/x_y.md", "link")]


def test_base_dir_placeholder_is_the_skill_root() -> None:
    assert scanned("cat __BASE_DIR__/assets/t.txt\n") == [(1, "assets/t.txt", "path")]


def test_markdown_info_strings() -> None:
    assert [is_markdown_info(info) for info in ("md", " Markdown x", "{.md}", "mdx", "")] == [
        True,
        True,
        True,
        True,
        False,
    ]
    assert not is_markdown_info("bash")
    assert not is_markdown_info("yaml")


def test_directives_are_html_comments_and_not_code() -> None:
    text = (
        "<!-- agent-skills: ignore body-too-long, reference-missing -->\n"
        "```md\n"
        "<!-- agent-skills: ignore name-directory -->\n"
        "```\n"
        "Prose <!-- agent-skills: ignore-next-line reference-missing --> more\n"
        "<!--\n"
        "  agent-skills: ignore-next-line tools-empty\n"
        "-->\n"
    )
    directives = MarkdownText(text, 5).directives()
    assert [(d.line, d.action, d.rules, d.next_line) for d in directives] == [
        (5, "ignore", ("body-too-long", "reference-missing"), 6),
        (9, "ignore-next-line", ("reference-missing",), 10),
        (11, "ignore-next-line", ("tools-empty",), 13),
    ]


def test_a_clean_body_is_never_parsed() -> None:
    """The scan answers alone when nothing is missing; the parser is not even imported."""
    probe = (
        "import sys, pathlib, tempfile;"
        "from pytest_agent_skills.rules import validate;"
        "from pytest_agent_skills.skill import Skill;"
        "root = pathlib.Path(tempfile.mkdtemp()) / 'x'; (root / 'scripts').mkdir(parents=True);"
        "(root / 'scripts' / 'run.py').write_text('');"
        "(root / 'SKILL.md').write_text('---\\nname: x\\ndescription: D.\\n---\\n"
        "<!-- agent-skills: ignore body-empty -->\\n```bash\\npython scripts/run.py\\n```\\n');"
        "print(validate(Skill.load(root)), 'markdown_it' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] False"


#: Pieces of skill bodies that matter to CommonMark: code of every kind, comments, HTML,
#: escapes, lists, quotes, reference links, and plain references.
FRAGMENTS = (
    "See [guide](docs/guide.md) for details.",
    "Run `python scripts/run.py`.",
    "Show `[text](docs/page.md)` syntax.",
    "<!-- [old](docs/old.md) -->",
    "<!--\nscripts/hidden.py\n-->",
    "```bash\npython scripts/run.py\n```",
    "```markdown\n[x](references/x.md) scripts/ex.py\n```",
    "````md\n```bash\npython scripts/nested.py\n```\n````",
    "~~~md\n[FORMS](FORMS.md)\n~~~",
    "```\nscripts/untagged.py\n```",
    "    [indented](docs/code.md) scripts/indent.py",
    "> quoted [q](docs/q.md) scripts/q.py",
    "1. Step\n   ```bash\n   python scripts/step.py\n   ```",
    "- item [i](docs/i.md)\n\n    continuation [c](docs/c.md)",
    "[g][1]\n\n[1]: docs/gone.md",
    "[^1]: footnote docs/foot.md",
    "Escaped \\[x](docs/esc.md) and [y](docs/y\\_z.md)",
    "[sp](<docs/my file.md>)",
    "![img](assets/img.png)",
    "text <!-- inline scripts/inline.py --> more",
    "<div>\n[h](docs/html.md)\n</div>",
    "Paragraph\n```\nunclosed scripts/u.py",
    "`code\nspan` [after](docs/after.md)",
    "Show `[t](docs/t.md)`\nthen docs/t.md.",
    "[multi\nline](docs/multi.md)",
    "[amp](docs/a&amp;b.md)",
    "[paren](docs/x(1).md \"t\")",
    "https://github.com/org/repo/blob/main/scripts/x.py",
    "text ``` inline scripts/tick.py",
    "<pre>\n[p](docs/pre.md)\n\n</pre> [after](docs/after-pre.md)",
    "[label]:\n  docs/next-line.md\n  'title'",
    "Text\n[2]: docs/not-a-definition.md",
    "> ```md\n> [bq](docs/bq.md) scripts/bq.py\n> ```",
    "\t[tab](docs/tab.md)",
    "- a\n  - b\n    ```md\n    scripts/deep.py [d](docs/d.md)\n    ```",
    "<script>\nscripts/js.py [s](docs/s.md)\n\n</script>",
    "   ~~~\n   [t](docs/tilde.md)\n   ~~~~",
    "```md\nscripts/in.py\n    ```\nscripts/still-in.py\n```\nscripts/out.py",
    "- ```md\n  scripts/item.py\n```\nscripts/after-item.py",
    "> ```md\n> scripts/quote.py\n```\nscripts/after-quote.py",
    "<!-- a --> scripts/same-line.py\n<!-- b\n--> scripts/closing-line.py\nscripts/free.py",
    "<!DOCTYPE x>\n[dt](docs/dt.md)",
    "```md\nscripts/a.py\n```\n```\n[b](docs/b.md) scripts/b.py\n```",
    "~~~ markdown\n```\n[t](docs/t.md)\n~~~\nscripts/t.py",
    "``` a`b\nscripts/tick2.py\n```",
    "- item\n  ```\n  code\nplain\n```\n[after-list](docs/al.md)",
    "```md\n[in](docs/in.md) scripts/in2.py\n  ```\n[out](docs/out.md) scripts/out2.py",
    "```md\nscripts/open.py [o](docs/o.md)\n- ```\n",
    "",
)
SEPARATORS = ("\n", "\n\n", "\n  ", "\n> ", "\n- ", "\n    ")
BODIES = st.lists(
    st.tuples(st.sampled_from(FRAGMENTS), st.sampled_from(SEPARATORS)), min_size=1, max_size=8
).map(lambda parts: "".join(fragment + separator for fragment, separator in parts))


def _whole_parse(markdown: MarkdownText) -> set[tuple[int, str, str]]:
    """The parser's references (line, target, kind) with every block's inline content parsed."""
    last = markdown.first_line + markdown.text.count("\n")
    every_line = [Reference(line, "", "link") for line in range(markdown.first_line, last + 1)]
    exact = markdown.exact_references(FOLDERS, every_line)
    return {(r.line, r.target, "path" if r.kind == "path" else "link") for r in exact}


@settings(max_examples=1500, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(BODIES, st.integers(min_value=1, max_value=30))
def test_the_scan_gives_the_parsers_answer_wherever_it_tells(text: str, first: int) -> None:
    markdown = MarkdownText(text, first)
    candidates = markdown.references(FOLDERS)
    truth = _whole_parse(markdown)
    for candidate in candidates:
        kind = "path" if candidate.kind == "path" else "link"
        verdict = markdown.verdict(candidate)
        if verdict is not None:
            assert ((candidate.line, candidate.target, kind) in truth) == verdict, candidate
    uncertain_lines = {c.line for c in candidates if not c.certain}
    found = {(c.line, c.target) for c in candidates}
    for line, target, _kind in truth:
        assert (line, target) in found or line in uncertain_lines, (line, target)
    # Asking the parser about some candidates gives its answer on their lines, however
    # little of the text it reads.
    for candidate in candidates:
        answer = markdown.exact_references(FOLDERS, [candidate])
        kinds = {(r.line, r.target, "path" if r.kind == "path" else "link") for r in answer}
        assert {item for item in kinds if item[0] == candidate.line} == {
            item for item in truth if item[0] == candidate.line
        }, candidate


def test_reference_type_is_plain_data() -> None:
    assert Reference(3, "docs/a.md", "link").offset == -1



#: A bare path as the rules define it, for the independent reading below.
BARE_PATH = re.compile(r"(?<![\w./$~-])((?:[\w-]+/)+[\w.-]*\w\.[A-Za-z0-9]+)(?![\w/])")


def _full_parse(text: str, first: int) -> set[tuple[int, int, str, str]]:
    """(first line, end line, target, link|path) of each block's references, read from
    markdown-it's full parse of ``text`` (not from the module's partial, positioned one)."""
    from markdown_it import MarkdownIt

    def paths(source: str) -> list[str]:
        found = (match.group(1) for match in BARE_PATH.finditer(source))
        return [path for path in found if path.split("/", 1)[0] in FOLDERS]

    found: set[tuple[int, int, str, str]] = set()
    links: list[tuple[int, int, str]] = []
    defined: set[str] = set()
    for token in MarkdownIt("commonmark", {"inline_definitions": True}).parse(text):
        if token.map is None:
            continue
        lines = (token.map[0] + first, token.map[1] + first)
        sources: list[str] = []
        code = token.type == "code_block" or (
            token.type == "fence" and not is_markdown_info(token.info)
        )
        if code or (token.type == "html_block" and not token.content.lstrip().startswith("<!--")):
            sources.append(token.content)
        elif token.type == "definition" and not token.meta["label"].startswith("^"):
            sources.append(token.meta["url"])
            target = link_target(token.meta["url"])
            if target is not None:
                defined.add(target)
                found.add((*lines, target, "link"))
        elif token.type == "inline":
            for child in token.children or []:
                if child.type == "text" or (
                    child.type in ("code_inline", "html_inline")
                    and "](" not in child.content
                    and not child.content.startswith("<!--")
                ):
                    sources.append(child.content)
                elif child.type in ("link_open", "image"):
                    href = str(child.attrs["href" if child.type == "link_open" else "src"])
                    if href in token.content:  # written here, not a reference link's
                        sources.append(href)
                    target = link_target(href)
                    if target is not None:
                        links.append((*lines, target))
                    if child.type == "image":
                        sources.append(child.content)
        found.update((*lines, path, "path") for source in sources for path in paths(source))
    # A reference link is reported at its definition, which holds the path.
    found.update((*link, "link") for link in links if link[2] not in defined)
    return found


@settings(max_examples=600, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(BODIES, st.integers(min_value=1, max_value=30))
def test_the_parsers_answer_is_markdown_its_full_parse(text: str, first: int) -> None:
    """What the rules take as the parser's answer (a partial parse, positioned inline tokens,
    spans hidden by line) is, block by block, what a full parse of the text reads."""
    ours = _whole_parse(MarkdownText(text, first))
    full = _full_parse(text, first)
    for line, target, kind in ours:
        assert any(
            (start <= line < end and target == found and kind == found_kind)
            for start, end, found, found_kind in full
        ), (line, target, kind)
    for start, end, target, kind in full:
        assert any(
            start <= line < end and target == found and kind == found_kind
            for line, found, found_kind in ours
        ), (start, end, target, kind)
