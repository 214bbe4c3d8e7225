"""The pytest side of the harness: the skill_agent fixture, scenario files found under
skill roots and in a skill's own evals/ folder, the settings, and the terminal summary."""

from __future__ import annotations

import shutil
import textwrap

import openai  # noqa: F401  (imported once here, not again by every pytester run)
import pytest

from tests.support.harness import SKILLS, scripted_upstream
from tests.support.pytester_runs import run_scenarios
from tests.support.services import missing_service


def test_skill_agent_runs_a_script_and_checks_an_expectation(suite) -> None:
    suite.makepyfile(
        test_agent="""
        from pytest_agent_skills.harness import expect_calls

        def test_notes(skill_agent):
            trajectory = skill_agent.run(
                "Load the notes.",
                skills="skills",
                script=[{"call": "skill_load", "args": {"skill_name": "notes"}}, {"say": "ok"}],
                expect={"final": "ok", "state": {"temp:skill:loaded:notes": "1"}},
            )
            expect_calls(trajectory, ["skill_load"])
            assert trajectory.requests[0].body["messages"][-1]["content"] == "Load the notes."

        def test_callable(skill_agent):
            def model(request, turn):
                return {"say": f"{len(request['tools'])} tools"}

            assert skill_agent.run("Hi.", skills=["skills"], script=model).final == "5 tools"

        def test_failing(skill_agent):
            skill_agent.run("Hi.", skills="skills", script=[{"say": "no"}], expect={"final": "yes"})
        """
    )
    result = run_scenarios(suite)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "ExpectationError: trajectory: 1 expectation(s) not met",
            '*- expect.final: final text: expected "yes", found "no"',
            "*Trajectory: 1 model turn(s), 0 tool call(s)",
            "scenarios run: 3",
        ]
    )


def test_skill_agent_gives_the_conversation_it_runs_for_variants(suite) -> None:
    suite.makepyfile(
        test_agent="""
        import dataclasses

        from pytest_agent_skills import Conversation, SkillAgent

        def test_variants(skill_agent: SkillAgent):
            conversation = skill_agent.conversation(
                "Load the notes.",
                skills="skills",
                script=[{"call": "skill_load", "args": {"skill_name": "notes"}}, {"say": "ok"}],
            )
            assert isinstance(conversation, Conversation)
            assert skill_agent.run_conversation(conversation).final == "ok"
            other = dataclasses.replace(conversation, expect={"final": "not ok"})
            skill_agent.run_conversation(dataclasses.replace(other, load_mode="session"))
        """
    )
    result = run_scenarios(suite)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*- expect.final: final text: expected "not ok", found "ok"',
            "scenarios run: 2",
        ]
    )


def test_skill_agent_replays_a_cassette_next_to_the_test(suite) -> None:
    suite.makepyfile(
        test_tape="""
        def test_tape(skill_agent):
            trajectory = skill_agent.run("Hi.", skills="skills", cassette="tapes/hi.json")
            assert trajectory.final == "Recorded."
        """
    )
    with scripted_upstream([{"say": "Recorded."}]) as upstream:
        first = run_scenarios(
            suite, "--skills-record=once", f"--skills-upstream-url={upstream.base_url}"
        )
        assert upstream.requests == 1
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["cassettes: 1 recorded (1 interactions), 0 replayed*"])
    assert (suite.path / "tapes" / "hi.json").is_file()
    again = run_scenarios(suite)
    again.assert_outcomes(passed=1)
    again.stdout.fnmatch_lines(
        [
            "scenarios run: 1",
            "cassettes: 0 recorded (0 interactions), 1 replayed (1 interactions),"
            " 0 unused interaction(s)",
        ]
    )


def test_a_cassette_miss_fails_the_test_with_the_diff_and_no_client_traceback(suite) -> None:
    suite.makepyfile(
        test_questions="""
        def test_hi(skill_agent):
            skill_agent.run("Hi.", skills="skills", cassette="tapes/hi.json")

        def test_other_question(skill_agent):
            skill_agent.run("Something else?", skills="skills", cassette="tapes/hi.json")
        """
    )
    with scripted_upstream([{"say": "Recorded."}]) as upstream:
        recorded = run_scenarios(
            suite,
            "-k",
            "test_hi",
            "--skills-record=once",
            f"--skills-upstream-url={upstream.base_url}",
        )
    recorded.assert_outcomes(passed=1, deselected=1)
    result = run_scenarios(suite, "-k", "test_other_question", "--skills-transport=sdk")
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "CassetteMissError: no match in cassette */tapes/hi.json for request #0*",
            "Closest recorded request: interaction #0 (similarity *",
            '*-*"content": "Hi."*',
            '*+*"content": "Something else?"*',
            "Re-record with --skills-record=new (or all)*",
        ]
    )
    assert "_base_client.py" not in result.stdout.str()
    assert "During handling of the above exception" not in result.stdout.str()


def test_the_record_mode_is_validated(suite) -> None:
    result = run_scenarios(suite, "--skills-record=sometimes")
    result.stderr.fnmatch_lines(
        [
            "ERROR: command line: invalid choice 'sometimes' for --skills-record"
            " (choose from none, once, new, all)"
        ]
    )


def test_the_record_mode_has_an_ini_twin(suite) -> None:
    suite.makeini("[pytest]\nskills_record = all\nskills_transport = sdk-stream\n")
    result = run_scenarios(suite, "--co")
    result.stdout.fnmatch_lines(["agent-skills: *skills_record=all*skills_transport=sdk-stream*"])


def test_scenarios_in_a_skill_root_and_a_skills_evals_folder_are_collected(
    pytester: pytest.Pytester,
) -> None:
    root = pytester.path / ".agents" / "skills"
    shutil.copytree(SKILLS, root)
    evals = root / "notes" / "evals"
    evals.mkdir()
    (evals / "load.scenario.yaml").write_text(
        "user: Load notes.\nmodel:\n  script:\n    - {call: skill_load, args: {skill_name: notes}}"
        "\n    - say: ok\nexpect: {state: {'temp:skill:loaded:notes': '1'}}\n"
    )
    (root / "weather-tools" / "tests").mkdir()
    (root / "weather-tools" / "tests" / "list.scenario.yaml").write_text(
        "user: List.\nmodel: {script: [{call: skill_list}, {say: ok}]}\n"
        "expect: {results: [{call: skill_list, match: {contains: notes}}]}\n"
    )
    result = run_scenarios(pytester, "--skills-root", str(root), "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*notes/evals/load.scenario.yaml::load PASSED*",
            "*weather-tools/tests/list.scenario.yaml::list PASSED*",
        ]
    )


def test_symlink_loops_under_a_skill_root_end_the_walk(pytester: pytest.Pytester) -> None:
    root = pytester.path / ".agents" / "skills"
    shutil.copytree(SKILLS, root)
    (root / "notes" / "evals").mkdir()
    (root / "notes" / "evals" / "load.scenario.yaml").write_text(
        "user: Load.\nmodel: {script: [{say: ok}]}\n"
    )
    # Two links back up the tree: a walk without a loop guard visits 2^depth paths.
    (root / "notes" / "evals" / "up").symlink_to(root, target_is_directory=True)
    (root / "weather-tools" / "back").symlink_to(root, target_is_directory=True)
    result = run_scenarios(pytester, "--skills-root", str(root), "--collect-only", "-q")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*notes/evals/load.scenario.yaml::load", "1 test collected*"])


def test_a_scenario_inside_a_skill_uses_that_skill_by_default(pytester: pytest.Pytester) -> None:
    shutil.copytree(SKILLS / "notes", pytester.path / "notes")
    (pytester.path / "notes" / "evals").mkdir()
    (pytester.path / "notes" / "evals" / "own.scenario.yaml").write_text(
        "user: List.\nmodel: {script: [{call: skill_list}, {say: ok}]}\n"
        "expect: {results: [{call: skill_list, match: [notes]}]}\n"
    )
    (pytester.path / "lost.scenario.yaml").write_text("user: hi\nmodel: {script: [{say: x}]}\n")
    result = run_scenarios(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "scenario 'lost' (lost.scenario.yaml:1): ScenarioError: *: no skill roots: give"
            " 'skills:' in the scenario (paths relative to the file), or configure --skills-root /"
            " the skills_roots ini option"
        ]
    )


@pytest.mark.parametrize("transport", ["sdk", "sdk-stream"])
def test_the_transport_setting_sends_scripts_through_the_openai_client(suite, transport) -> None:
    (suite.path / "t.scenario.yaml").write_text(
        textwrap.dedent(
            """\
            skills: [skills]
            user: hi
            model:
              script:
                - {call: skill_list}
            """
        )
    )
    result = run_scenarios(suite, f"--skills-transport={transport}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["scenario 't' (t.scenario.yaml:1): ScriptExhaustedError: *"])


PID1 = """\
skills: [skills]
{runtime}user: Where am I?
model:
  script:
    - {{call: skill_load, args: {{skill_name: notes}}}}
    - {{call: skill_run, args: {{skill: notes, command: "tr '\\\\0' ' ' < /proc/1/cmdline"}}}}
    - {{say: here}}
expect:
  results: [{{call: skill_run, match: {{stdout: {{matches: "{pattern}"}}}}}}]
"""


def _require_runtime(kind: str) -> None:
    from pytest_agent_skills.workspace import RuntimeUnavailableError, create_runtime

    try:
        create_runtime(kind).close()
    except RuntimeUnavailableError as error:
        missing_service(f"runtime {kind!r} unavailable: {error}")


@pytest.mark.sandbox
def test_the_skills_runtime_setting_chooses_the_runtime(suite) -> None:
    _require_runtime("sandbox")
    # The sandbox's bwrap shows the host's /usr read-only; the local runtime's (its isolation
    # step) binds the whole file system.
    (suite.path / "where.scenario.yaml").write_text(
        PID1.format(runtime="", pattern="^\\\\S*bwrap --ro-bind /usr /usr ")
    )
    run_scenarios(suite, "--skills-runtime=sandbox").assert_outcomes(passed=1)
    run_scenarios(suite).assert_outcomes(failed=1)


@pytest.mark.docker
def test_a_scenario_chooses_its_runtime(suite) -> None:
    _require_runtime("docker")
    (suite.path / "where.scenario.yaml").write_text(
        PID1.format(runtime="runtime: docker\n", pattern="^bash -c trap")
    )
    run_scenarios(suite, "--skills-runtime=sandbox").assert_outcomes(passed=1)


# --- conversations of several user messages through the fixture, and the load-mode setting ----

MULTI_TURN_TESTS = """
LOAD = {"call": "skill_load", "args": {"skill_name": "notes"}}
LIST_DOCS = {"call": "skill_list_docs", "args": {"skill_name": "notes"}}
LOADED = "[Loaded] notes"


def turns(second_expect):
    return [
        {
            "user": "Load the notes.",
            "script": [LOAD, {"say": "Loaded."}],
            "expect": {"calls": [{"name": "skill_load"}], "final": "Loaded."},
        },
        {
            "user": "Which docs?",
            "script": [LIST_DOCS, {"say": "Two docs."}],
            "expect": second_expect,
        },
    ]


def test_turn_mode(skill_agent):
    trajectory = skill_agent.run(
        skills="skills",
        turns=turns({"requests": [{"turn": 0, "system_excludes": LOADED}]}),
        expect={
            "calls": [{"name": "skill_load"}, {"name": "skill_list_docs"}],
            "final": "Two docs.",
        },
    )
    assert trajectory.users == ["Load the notes.", "Which docs?"]
    assert trajectory.load_mode == "turn"
    assert trajectory.state == {}


def test_session_mode(skill_agent):
    trajectory = skill_agent.run(
        skills="skills",
        load_mode="session",
        turns=turns(
            {
                "requests": [{"turn": 0, "system_contains": LOADED}],
                "state": {"skill:loaded:notes": "1"},
            }
        ),
    )
    assert trajectory.load_mode == "session"


def test_a_turn_expectation_fails_the_test(skill_agent):
    skill_agent.run(skills="skills", turns=turns({"calls": [{"name": "skill_load"}]}))
"""


def test_skill_agent_runs_a_conversation_of_several_user_messages(suite) -> None:
    suite.makepyfile(test_turns=MULTI_TURN_TESTS)
    result = run_scenarios(suite)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "ExpectationError: trajectory: 1 expectation(s) not met",
            "- turns[1].expect.calls.items[0]: mode exact, args exact: call #0 skill_list_docs"
            ' {"skill_name": "notes"} does not match item 0 (skill_load): name'
            " 'skill_list_docs' is not 'skill_load'",
        ]
    )


LOAD_MODE_SCENARIO = """\
skills: [skills]
turns:
  - user: Load the notes.
    script: [{call: skill_load, args: {skill_name: notes}}, {say: Loaded.}]
  - user: Still loaded?
    script: [{say: Yes.}]
    expect:
      requests: [{turn: 0, system_contains: "[Loaded] notes"}]
      state: {"skill:loaded:notes": "1"}
"""


def test_the_load_mode_setting_reaches_scenarios(suite, monkeypatch) -> None:
    """The default is the reference's (turn): the skill is gone at the second user message;
    the setting (command line, then ini) keeps it for the session."""
    monkeypatch.delenv("SKILLS_LOAD_MODE", raising=False)
    (suite.path / "still.scenario.yaml").write_text(LOAD_MODE_SCENARIO)
    default = run_scenarios(suite)
    default.assert_outcomes(failed=1)
    default.stdout.fnmatch_lines(
        [
            "- turns[[]1[]].expect.requests[[]0[]].system_contains (line 8): turn 0: the system"
            " text does not contain '[[]Loaded[]] notes'*"
        ]
    )
    run_scenarios(suite, "--skills-load-mode=session").assert_outcomes(passed=1)
    suite.makeini("[pytest]\nskills_load_mode = session\n")
    run_scenarios(suite).assert_outcomes(passed=1)
    run_scenarios(suite, "--skills-load-mode=turn").assert_outcomes(failed=1)


def test_the_settings_choices_are_the_librarys_and_the_schemas() -> None:
    """The plugin spells the transports and load modes out, so that start-up imports neither
    the harness nor the protocol (jsonschema); they must stay the library's and the scenario
    schema's."""
    from pytest_agent_skills import settings
    from pytest_agent_skills.harness import TRANSPORTS
    from pytest_agent_skills.protocol import LOAD_MODES
    from pytest_agent_skills.scenario import scenario_schema

    registry = settings.load_all()
    properties = scenario_schema()["$defs"]
    assert registry["skills_transport"].choices == TRANSPORTS
    assert registry["skills_load_mode"].choices == LOAD_MODES
    assert tuple(properties["model"]["properties"]["transport"]["enum"]) == TRANSPORTS
    assert tuple(properties["scenario"]["properties"]["load_mode"]["enum"]) == LOAD_MODES


def test_request_parameters_go_into_every_request_and_a_changed_one_is_a_named_miss(
    suite,
) -> None:
    suite.makepyfile(
        test_tape="""
        def test_hi(skill_agent):
            trajectory = skill_agent.run("Hi.", skills="skills", cassette="tapes/hi.json")
            body = trajectory.requests[0].body
            assert (body["temperature"], body["seed"], body["top_k"]) == (0, 7, 40)
        """
    )
    with scripted_upstream(lambda request, turn: {"say": f"t={request['temperature']}"}) as up:
        first = run_scenarios(
            suite, "--skills-record=once", f"--skills-upstream-url={up.base_url}",
            "--skills-model-param", "temperature=0", "--skills-model-param=top_k=40",
            "--skills-model-param=seed=7",
        )  # fmt: skip
        first.assert_outcomes(passed=1)
    import json

    tape = json.loads((suite.path / "tapes" / "hi.json").read_text())
    assert tape["interactions"][0]["response"]["body"]["choices"][0]["message"]["content"] == "t=0"
    assert tape["interactions"][0]["request"]["body"]["seed"] == 7
    lines = "\n    ".join(("top_k=40", "seed=7", "temperature=0"))
    suite.makefile(".ini", pytest=f"[pytest]\nskills_model_params =\n    {lines}\n")
    again = run_scenarios(suite)
    again.assert_outcomes(passed=1)
    # The command line replaces the whole list of the file: seed and top_k are gone, a miss.
    changed = run_scenarios(suite, "--skills-model-param", "temperature=0.5")
    changed.assert_outcomes(failed=1)
    changed.stdout.fnmatch_lines(
        [
            "CassetteMissError: no match in cassette */tapes/hi.json for request #0*",
            "Request fields differ from the recording: seed (recorded 7, now unset);"
            " temperature (recorded 0, now 0.5); top_k (recorded 40, now unset)*",
        ]
    )


def test_a_request_parameter_of_the_harness_is_a_usage_error(suite) -> None:
    suite.makepyfile(test_nothing="def test_nothing(): pass")
    result = run_scenarios(suite, "--skills-model-param", "tools=[]")
    result.stderr.fnmatch_lines(
        ["ERROR: command line: --skills-model-param tools: the harness writes model, messages,*"]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
