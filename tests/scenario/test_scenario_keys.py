"""Every key of the scenario format (docs/scenarios.md), through pytest: for each, a scenario
where it holds (passes) and one where it does not (fails with a pinned message)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import pytest

from tests.support.harness import SKILLS
from tests.support.pytester_runs import run

HEAD = "skills: [skills]\nuser: What now?\n"
LOAD_NOTES = "    - {call: skill_load, args: {skill_name: notes}}\n"


@dataclass(frozen=True)
class Case:
    key: str
    ok: str
    bad: str
    lines: tuple[str, ...]
    #: "failed" for a failing expectation, "error" for a file rejected at collection.
    outcome: str = "failed"


def script(*turns: str, say: str = "Done.") -> str:
    return "model:\n  script:\n" + "".join(turns) + f"    - say: {say}\n"


CASES = [
    Case(
        "name",
        "name: notes listing\n" + HEAD + script(),
        "name: ''\n" + HEAD + script(),
        ("*bad.scenario.yaml:1: name: '' should be non-empty*",),
        "error",
    ),
    Case(
        "skills",
        HEAD + script("    - {call: skill_list}\n") + "expect: {results: [{call: skill_list,"
        " match: {contains: notes}}]}\n",
        "skills: [nowhere]\nuser: hi\n" + script(),
        (
            "scenario 'bad' (bad.scenario.yaml:1): RootNotFoundError: skill root '*nowhere'"
            " does not exist or is not a folder",
        ),
    ),
    Case(
        "runtime",
        "runtime: local\n" + HEAD + script(LOAD_NOTES),
        "runtime: vm\n" + HEAD + script(),
        ("*bad.scenario.yaml:1: runtime: 'vm' is not one of: local, sandbox, docker",),
        "error",
    ),
    Case(
        "inputs",
        "inputs: {a.txt: hello, b.bin: {base64: AAEC}}\n"
        + HEAD
        + script(LOAD_NOTES, "    - {call: skill_run, args: {skill: notes, command: 'true'}}\n")
        + "expect:\n  files:\n    - {path: work/inputs/a.txt, equals: hello}\n",
        "inputs: {b.bin: {base64: '***'}}\n" + HEAD + script(),
        ("*bad.scenario.yaml:1: inputs: the base64 content does not decode",),
        "error",
    ),
    Case(
        "env",
        "env: {REGION: eu}\n"
        + HEAD
        + script(
            LOAD_NOTES, "    - {call: skill_run, args: {skill: notes, command: 'echo $REGION'}}\n"
        )
        + 'expect: {results: [{call: skill_run, match: {stdout: "eu\\n"}}]}\n',
        "env: {REGION: us}\n"
        + HEAD
        + script(
            LOAD_NOTES, "    - {call: skill_run, args: {skill: notes, command: 'echo $REGION'}}\n"
        )
        + 'expect: {results: [{call: skill_run, match: {stdout: "eu\\n"}}]}\n',
        (
            '- expect.results[0].match (line 9): skill_run[0] result: stdout: expected "eu\\n",'
            ' found "us\\n"',
        ),
    ),
    Case(
        "tools",
        "tools: {ping: {description: p, parameters: {type: object}, returns: pong}}\n"
        + HEAD
        + script("    - {call: ping}\n")
        + "expect: {results: [{call: ping, match: pong}]}\n",
        "tools: {ping: {description: p, retruns: pong}}\n" + HEAD + script(),
        (
            "*bad.scenario.yaml:1: unknown key 'retruns' in tools.ping. Did you mean 'returns'?"
            " Known keys: description, parameters, returns.",
        ),
        "error",
    ),
    Case(
        "dynamic_tools",
        "dynamic_tools: true\ntools: {get_current_weather: {returns: {t: 1}},"
        " get_weather_forecast: {returns: {}}}\n"
        + HEAD
        + script(
            "    - {call: skill_load, args: {skill_name: weather-tools}}\n",
            "    - {call: get_current_weather}\n",
        )
        + "expect: {results: [{call: get_current_weather, is_error: false}]}\n",
        "dynamic_tools: true\ntools: {get_current_weather: {returns: {t: 1}}}\n"
        + HEAD
        + script("    - {call: get_current_weather}\n")
        + "expect: {results: [{call: get_current_weather, is_error: false}]}\n",
        (
            "- expect.results[0] (line 9): get_current_weather[0] result is an error:"
            " {*tool 'get_current_weather' is not available now: load (skill_load) a skill that"
            " declares it and select it.*",
        ),
    ),
    Case(
        "exec_tools",
        "exec_tools: true\n"
        + HEAD
        + script(
            "    - {call: skill_exec, args: {skill: notes, yield_time_ms: 60000,"
            " command: 'printf \"Name? \"; read n; echo hi $n'}}\n",
            "    - {call: skill_write_stdin, args: {chars: Ada, submit: true, yield_time_ms: 60000,"
            " session_id: 00000000-0000-4000-8000-000000000001}}\n",
        )
        + "expect: {results: [{call: skill_write_stdin, match: {status: exited,"
        ' output: "hi Ada\\n"}}]}\n',
        HEAD
        + script("    - {call: skill_exec, args: {skill: notes, command: 'true'}}\n")
        + "expect: {results: [{call: skill_exec, is_error: false}]}\n",
        (
            "- expect.results[0] (line 7): skill_exec[0] result is an error:"
            " {*unknown tool 'skill_exec'. Available tools: skill_load, skill_run, skill_list,*",
        ),
    ),
    Case(
        "user",
        HEAD + script(),
        "skills: [skills]\n" + script(),
        (
            "*bad.scenario.yaml:1: the scenario: 'user' is required (the user message that starts"
            " the conversation), or 'turns' for a conversation of several user messages",
        ),
        "error",
    ),
    Case(
        "model.script.call",
        HEAD + script(LOAD_NOTES),
        HEAD + "model:\n  script:\n    - {call: skill_list}\n",
        (
            "scenario 'bad' (bad.scenario.yaml:1): ScriptExhaustedError: script exhausted:"
            " the model"
            " was asked for turn 1 but the script has only 1 turn(s); the last one was: call"
            " skill_list({}) (bad.scenario.yaml:5). End the script with a final turn {say: ...} or"
            " add the missing turns.",
        ),
    ),
    Case(
        "model.script.args",
        HEAD + script(LOAD_NOTES),
        HEAD + "model:\n  script:\n    - {args: {skill_name: notes}}\n",
        (
            "*bad.scenario.yaml:5: model.script[0]: 'args' belongs to a 'call' (write call: <tool"
            " name> above it)",
        ),
        "error",
    ),
    Case(
        "model.script.calls",
        HEAD
        + script(
            "    - calls: [{call: skill_list}, {call: skill_list_docs, args: "
            "{skill_name: notes}}]\n"
        )
        + "expect: {calls: [{name: skill_list},"
        " {name: skill_list_docs, args: {skill_name: notes}}]}\n",
        HEAD + "model:\n  script:\n    - {call: skill_list, calls: [{call: skill_list}]}\n",
        (
            "*bad.scenario.yaml:5: model.script[0]: a script turn has either 'call' or 'calls',"
            " not both",
        ),
        "error",
    ),
    Case(
        "model.script.say",
        HEAD + script(say="All done.") + "expect: {final: All done.}\n",
        HEAD + "model:\n  script:\n    - {say: One.}\n    - {say: Two.}\n",
        (
            "scenario 'bad' (bad.scenario.yaml:1): UnusedTurnsError: unused turns: the conversation"
            " ended after turn 0 but the script has 1 more:",
            "  turn 1: say 'Two.' (bad.scenario.yaml:6)",
        ),
    ),
    Case(
        "model.cassette",
        HEAD + "model: {cassette: cassettes/ok.json}\nexpect: {final: Recorded answer.}\n",
        HEAD + "model: {cassette: cassettes/missing.json}\n",
        (
            "scenario 'bad' (bad.scenario.yaml:1): NoCassetteError: no cassette: *missing.json does"
            " not exist (record mode 'none' never records).*",
        ),
    ),
    Case(
        "model (exactly one of script | cassette)",
        HEAD + script(),
        HEAD + "model: {cassette: c.json, script: [{say: hi}]}\n",
        (
            "*bad.scenario.yaml:3: model: give exactly one of 'script' (scripted turns) or"
            " 'cassette' (a file)",
        ),
        "error",
    ),
    Case(
        "expect.calls.mode",
        HEAD
        + script(LOAD_NOTES, "    - {call: skill_list}\n")
        + "expect: {calls: {mode: in_order, args: ignore, items: [{name: skill_list}]}}\n",
        HEAD
        + script(LOAD_NOTES, "    - {call: skill_list}\n")
        + "expect: {calls: {mode: exact, args: ignore, items: [{name: skill_list}]}}\n",
        (
            "- expect.calls.items[0] (line 8): mode exact, args ignore: call #0 skill_load"
            ' {"skill_name": "notes"} does not match item 0 (skill_list):'
            " name 'skill_load' is not"
            " 'skill_list'",
        ),
    ),
    Case(
        "expect.calls.args",
        HEAD
        + script(LOAD_NOTES)
        + "expect: {calls: {args: superset, items: [{name: skill_load, args: {skill_name:"
        " notes, docs: []}}]}}\n",
        HEAD
        + script(LOAD_NOTES)
        + "expect: {calls: {args: exact, items: [{name: skill_load, args: {skill_name:"
        " notes, docs: []}}]}}\n",
        (
            "- expect.calls.items[0] (line 7): mode exact, args exact: call #0 skill_load"
            ' {"skill_name": "notes"} does not match item 0 (skill_load {"docs": [], "skill_name":'
            " \"notes\"}): argument 'docs': expected [], found (absent)",
        ),
    ),
    Case(
        "expect.calls.items",
        HEAD + script(LOAD_NOTES) + "expect:\n  calls:\n    items:\n"
        "      - {name: skill_load, args: {skill_name: {contains: note}}, args_mode: subset}\n",
        HEAD + script(LOAD_NOTES) + "expect:\n  calls:\n    items:\n"
        "      - {name: skill_load, agrs: {skill_name: notes}}\n",
        (
            "*bad.scenario.yaml:10: unknown key 'agrs' in expect.calls.items[0]. Did you mean"
            " 'args'? Known keys: args, args_mode, name.",
        ),
        "error",
    ),
    Case(
        "expect.results",
        HEAD + script(LOAD_NOTES, LOAD_NOTES) + "expect:\n  results:\n"
        "    - {call: skill_load, index: 1, match: {contains: \"'notes' loaded\"}}\n",
        HEAD + script(LOAD_NOTES) + "expect:\n  results:\n"
        "    - {call: skill_load, index: 1, match: {contains: loaded}}\n",
        ("- expect.results[0] (line 9): no call 1 of 'skill_load': it was called 1 time(s)",),
    ),
    Case(
        "expect.state",
        HEAD + script(LOAD_NOTES) + "expect: {state: {'temp:skill:loaded:notes': '1',"
        " 'temp:skill:docs:notes': '[]'}}\n",
        HEAD + script() + "expect: {state: {'temp:skill:loaded:notes': '1'}}\n",
        (
            "- expect.state.temp:skill:loaded:notes (line 6): state 'temp:skill:loaded:notes':"
            ' missing (expected "1")',
        ),
    ),
    Case(
        "expect.files",
        HEAD
        + script(
            LOAD_NOTES,
            "    - {call: skill_run, args: {skill: notes, command: 'echo 42 > out/n.txt'}}\n",
        )
        + "expect:\n  files:\n    - {path: out/n.txt, contains: '4', matches: '^\\d+$',"
        " exists: true}\n    - {path: out/none.txt, exists: false}\n",
        HEAD
        + script(
            LOAD_NOTES,
            "    - {call: skill_run, args: {skill: notes, command: 'echo 42 > out/n.txt'}}\n",
        )
        + "expect:\n  files:\n    - {path: out/n.txt, matches: '^\\d{3}$'}\n",
        (
            "- expect.files[0] (line 10): file out/n.txt: expected it to match /^\\d{3}$/,"
            ' found "42\\n"',
        ),
    ),
    Case(
        "expect.final",
        HEAD + script(say="Saved it.") + "expect: {final: {contains: Saved, matches: 'it\\.$'}}\n",
        HEAD + script(say="Saved it.") + "expect: {final: {equals: Saved.}}\n",
        ('- expect.final (line 6): final text: expected "Saved.", found "Saved it."',),
    ),
    Case(
        "expect.requests.system_contains",
        HEAD + script(LOAD_NOTES) + "expect: {requests: [{turn: 1, system_contains: ["
        "'[Loaded] notes', 'Available skills:']}]}\n",
        HEAD + script(LOAD_NOTES) + "expect: {requests: [{turn: 0, system_contains: "
        "'[Loaded] notes'}]}\n",
        (
            "- expect.requests[0].system_contains (line 7): turn 0: the system text does not"
            " contain '[Loaded] notes': (* chars) *",
        ),
    ),
    Case(
        "expect.requests.system_excludes",
        HEAD + script(LOAD_NOTES) + "expect: {requests: [{turn: 0, system_excludes: "
        "['[Loaded] notes']}]}\n",
        HEAD + script(LOAD_NOTES) + "expect: {requests: [{turn: 1, system_excludes: "
        "['[Loaded] notes']}]}\n",
        (
            "- expect.requests[0].system_excludes (line 7): turn 1: the system text contains"
            " '[Loaded] notes': *",
        ),
    ),
    Case(
        "expect.requests.tools_include",
        "dynamic_tools: true\ntools: {get_current_weather: {returns: 1},"
        " get_weather_forecast: {returns: 2}}\n"
        + HEAD
        + script("    - {call: skill_load, args: {skill_name: weather-tools}}\n")
        + "expect: {requests: [{turn: 1, tools_include: [get_current_weather]}]}\n",
        "dynamic_tools: true\ntools: {get_current_weather: {returns: 1},"
        " get_weather_forecast: {returns: 2}}\n"
        + HEAD
        + script()
        + "expect: {requests: [{turn: 0, tools_include: [get_current_weather]}]}\n",
        (
            "- expect.requests[0].tools_include (line 8): turn 0: the tools does not contain"
            " 'get_current_weather': [\"skill_load\", *]",
        ),
    ),
    Case(
        "expect.requests.tools_exclude",
        "dynamic_tools: true\ntools: {get_current_weather: {returns: 1},"
        " get_weather_forecast: {returns: 2}}\n"
        + HEAD
        + script()
        + "expect: {requests: [{turn: 0, tools_exclude: get_current_weather}]}\n",
        "tools: {get_current_weather: {returns: 1}}\n"
        + HEAD
        + script()
        + "expect: {requests: [{turn: 0, tools_exclude: get_current_weather}]}\n",
        (
            "- expect.requests[0].tools_exclude (line 7): turn 0: the tools contains"
            " 'get_current_weather': [*]",
        ),
    ),
    Case(
        "turns",
        "skills: [skills]\nturns:\n  - user: Load notes.\n  - user: Docs?\n"
        "model:\n  script:\n" + LOAD_NOTES + "    - say: Loaded.\n"
        "    - {call: skill_list_docs, args: {skill_name: notes}}\n    - say: Two.\n"
        "expect: {calls: [{name: skill_load}, {name: skill_list_docs}], final: Two.}\n",
        "skills: [skills]\nuser: Hi.\nturns:\n  - user: Docs?\n" + script(),
        (
            "*bad.scenario.yaml:3: the scenario: give either 'user' (one user message) or"
            " 'turns' (a conversation of several), not both",
        ),
        "error",
    ),
    Case(
        "turns.user",
        "skills: [skills]\nturns:\n  - {user: Load notes., script: [{say: Hi.}]}\n",
        "skills: [skills]\nturns:\n  - {usr: Load notes., script: [{say: Hi.}]}\n",
        (
            "*bad.scenario.yaml:3: unknown key 'usr' in turns[0]. Did you mean 'user'? Known"
            " keys: expect, script, user.",
        ),
        "error",
    ),
    Case(
        "turns.script",
        "skills: [skills]\nturns:\n  - user: Load.\n    script:\n  "
        + LOAD_NOTES
        + "      - say: Loaded.\n  - user: Again.\n    script: [{say: Still loaded? No.}]\n"
        "expect: {requests: [{turn: 2, system_excludes: '[Loaded] notes'}]}\n",
        "skills: [skills]\nturns:\n  - user: Load.\n    script:\n  "
        + LOAD_NOTES
        + "  - user: Again.\n    script: [{say: Fine.}]\n",
        (
            "scenario 'bad' (bad.scenario.yaml:1): ScriptExhaustedError: script exhausted:"
            " turns[0] asked the model for its turn 1 but its script has only 1 turn(s); the last"
            ' one was: call skill_load({"skill_name": "notes"}) (bad.scenario.yaml:5). End the'
            " turn's script with a final turn {say: ...} or add the missing turns.",
        ),
    ),
    Case(
        "turns.expect",
        "skills: [skills]\nturns:\n  - user: Load.\n    script: [{call: skill_load, args:"
        " {skill_name: notes}}, {say: Loaded.}]\n    expect: {final: Loaded., requests: [{turn:"
        " 1, system_contains: '[Loaded] notes'}]}\n  - user: Bye.\n    script: [{say: Bye.}]\n"
        "    expect: {calls: [], requests: [{turn: 0, system_excludes: '[Loaded] notes'}]}\n",
        "skills: [skills]\nturns:\n  - user: Load.\n    script: [{call: skill_load, args:"
        " {skill_name: notes}}, {say: Loaded.}]\n  - user: Bye.\n    script: [{say: Bye.}]\n"
        "    expect: {calls: [{name: skill_load}]}\n",
        (
            "- turns[1].expect.calls.items[0] (line 7): mode exact, args exact: item 0"
            " (skill_load) was never called; only 0 call(s) were made",
        ),
    ),
    Case(
        "turns (a script in every turn)",
        "skills: [skills]\nturns:\n  - {user: A., script: [{say: a}]}\n"
        "  - {user: B., script: [{say: b}]}\nmodel: {transport: sdk}\n",
        "skills: [skills]\nturns:\n  - {user: A., script: [{say: a}]}\n  - {user: B.}\n",
        (
            "*bad.scenario.yaml:4: turns[1]: 'script' is required, as the other turns have one"
            " (or give model.script / model.cassette for the whole conversation)",
        ),
        "error",
    ),
    Case(
        "model (a source when no turn has its own script)",
        "skills: [skills]\nturns: [{user: A.}, {user: B.}]\n"
        "model: {script: [{say: a}, {say: b}]}\nexpect: {final: b}\n",
        "skills: [skills]\nturns: [{user: A.}, {user: B.}]\nmodel: {transport: sdk}\n",
        (
            "*bad.scenario.yaml:3: model: give exactly one of 'script' (scripted turns) or"
            " 'cassette' (a file)",
        ),
        "error",
    ),
    Case(
        "model (not with scripts in the turns)",
        "skills: [skills]\nturns: [{user: A., script: [{say: a}]}]\nmodel: {name: gpt-x}\n",
        "skills: [skills]\nturns: [{user: A., script: [{say: a}]}]\nmodel: {script: [{say: a}]}\n",
        (
            "*bad.scenario.yaml:3: model.script: the turns have their own scripts; give the model"
            " turns either in each turn's 'script' or in model.script / model.cassette, not both",
        ),
        "error",
    ),
    Case(
        "load_mode",
        "load_mode: session\nskills: [skills]\nturns:\n  - user: Load.\n    script: [{call:"
        " skill_load, args: {skill_name: notes}}, {say: Loaded.}]\n  - user: Still?\n"
        "    script: [{say: Yes.}]\n    expect: {requests: [{turn: 0, system_contains:"
        " '[Loaded] notes'}], state: {'skill:loaded:notes': '1'}}\n",
        "load_mode: forever\n" + HEAD + script(),
        ("*bad.scenario.yaml:1: load_mode: 'forever' is not one of: turn, once, session",),
        "error",
    ),
    Case(
        "scenarios",
        HEAD + script() + "scenarios:\n  - {name: first}\n  - {name: second, user: Other?}\n",
        HEAD + script() + "scenarios:\n  - {name: twin}\n  - {name: twin}\n",
        ("*bad.scenario.yaml:8: two scenarios are named 'twin'; names must be unique",),
        "error",
    ),
    Case(
        "unknown top-level key",
        HEAD + script(),
        HEAD + script() + "expcet: {final: Done.}\n",
        (
            "*bad.scenario.yaml:6: unknown key 'expcet' in the scenario. Did you mean 'expect'?"
            " Known keys: *",
        ),
        "error",
    ),
]


@pytest.fixture
def recorded(suite: pytest.Pytester) -> pytest.Pytester:
    """The fixture skills and a recorded cassette, ``cassettes/ok.json``."""
    cassettes = suite.path / "cassettes"
    cassettes.mkdir()
    (cassettes / "ok.json").write_text(RECORDED_CASSETTE)
    return suite


@pytest.mark.parametrize("case", CASES, ids=[case.key for case in CASES])
def test_each_key_holds_and_fails_with_a_pinned_message(
    recorded: pytest.Pytester, case: Case
) -> None:
    (recorded.path / "ok.scenario.yaml").write_text(textwrap.dedent(case.ok))
    (recorded.path / "bad.scenario.yaml").write_text(textwrap.dedent(case.bad))
    result = run(recorded, "-k", "not SKILL", "--continue-on-collection-errors")
    passed = 2 if case.key == "scenarios" else 1
    if case.outcome == "error":
        result.assert_outcomes(passed=passed, errors=1)
    else:
        result.assert_outcomes(passed=passed, failed=1)
    # fnmatch reads "[...]" as a character class: pin the brackets literally.
    result.stdout.fnmatch_lines([line.replace("[", "[[]") for line in case.lines])


def _recorded_cassette() -> str:
    """A cassette with one final answer, recorded through the harness from a loopback upstream."""
    import tempfile
    from pathlib import Path

    from pytest_agent_skills.harness import run_conversation
    from pytest_agent_skills.repository import SkillRepository
    from tests.support.harness import record_options, scripted_upstream

    with tempfile.TemporaryDirectory() as directory:
        target = Path(directory) / "ok.json"
        with scripted_upstream([{"say": "Recorded answer."}]) as upstream:
            run_conversation(
                SkillRepository([SKILLS]),
                "What now?",
                cassette=target,
                settings=record_options(upstream),
            )
        return target.read_text()


RECORDED_CASSETTE = _recorded_cassette()
