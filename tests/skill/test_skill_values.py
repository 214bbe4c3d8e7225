"""The values a validation run makes: compared and shown by their fields, frozen where they
are frozen, their first-use attributes kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_agent_skills.errors import ConfigurationError
from pytest_agent_skills.findings import Finding, Severity
from pytest_agent_skills.listings import FolderListings
from pytest_agent_skills.rules import ValidationOptions
from pytest_agent_skills.rules._options import PROFILES
from pytest_agent_skills.skill import Skill
from pytest_agent_skills.skill_reference import ReferenceReading
from tests.support.skill_files import write_skill

TOOLS_BODY = "Tools:\n- search\n"


def test_two_loads_of_a_skill_are_equal_and_another_skill_is_not(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "one", body=TOOLS_BODY)
    other = write_skill(tmp_path, "two", body=TOOLS_BODY)
    first, again = Skill.load(folder), Skill.load(folder, FolderListings())
    assert first == again  # the listings are not compared
    assert first.parsed == again.parsed
    assert first != Skill.load(other)
    assert first != first.parsed  # another type is never equal


def test_a_skill_changes_and_so_is_no_dict_key(tmp_path: Path) -> None:
    skill = Skill.load(write_skill(tmp_path, "one"))
    with pytest.raises(TypeError, match="unhashable"):
        hash(skill)
    skill.extra_problems = (Finding("x", Severity.ERROR, "m", skill.skill_file),)
    assert skill.problems[-1].rule == "x"


def test_a_skill_is_shown_by_its_folder_parse_and_problems(tmp_path: Path) -> None:
    skill = Skill.load(write_skill(tmp_path, "one"))
    shown = repr(skill)
    assert shown.startswith(f"Skill(directory={skill.directory!r}, parsed=ParsedSkillFile(")
    assert shown.endswith(", extra_problems=())")
    assert "listings" not in shown


def test_a_parsed_file_is_frozen_and_keeps_what_it_reads_on_first_use(tmp_path: Path) -> None:
    parsed = Skill.load(write_skill(tmp_path, "one", body=TOOLS_BODY)).parsed
    with pytest.raises(AttributeError, match="cannot assign to field 'body'"):
        parsed.body = "changed"  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete field 'body'"):
        del parsed.body
    section = parsed.tools_section
    assert section is not None and section.names == ["search"]
    assert parsed.tools_section is section  # read once


def test_a_reference_reading_is_a_frozen_value() -> None:
    reading = ReferenceReading({"name": "x"}, "Body.")
    assert reading == ReferenceReading({"name": "x"}, "Body.")
    assert reading != ReferenceReading({"name": "y"}, "Body.")
    assert repr(reading) == "ReferenceReading(values={'name': 'x'}, body='Body.')"
    with pytest.raises(AttributeError, match="cannot assign to field 'body'"):
        reading.body = ""  # type: ignore[misc]
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(reading)  # as the frozen dataclass it was: its fields hold a dict


def test_validation_options_check_their_severities_as_they_are_made() -> None:
    with pytest.raises(ConfigurationError, match="severities: unknown rule id 'no-such-rule'"):
        ValidationOptions(severities={"no-such-rule": "off"})
    with pytest.raises(ConfigurationError, match="invalid level 'loud' for body-too-long"):
        ValidationOptions(severities={"body-too-long": "loud"})
    options = ValidationOptions(profile=PROFILES["trpc"], severities={"body-too-long": "off"})
    assert options == ValidationOptions.build(profile="trpc", severities=["body-too-long=off"])
    assert options != ValidationOptions()
    assert options.severity_of("body-too-long") is None
    with pytest.raises(AttributeError, match="cannot assign to field 'allow_unknown_fields'"):
        options.allow_unknown_fields = True  # type: ignore[misc]


def test_a_finding_is_a_value_and_changes_by_a_copy() -> None:
    finding = Finding("name-charset", Severity.ERROR, "bad", Path("s/SKILL.md"), 2)
    warning = finding._replace(severity=Severity.WARNING)
    assert (finding.is_error, warning.is_error) == (True, False)
    assert warning.format() == "s/SKILL.md:2: warning [name-charset] bad"
    assert {finding, warning, finding._replace(severity=Severity.ERROR)} == {finding, warning}
