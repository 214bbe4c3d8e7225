"""Graders on a loopback port, for the tests of grader-check and of quoted evidence: each one
answers the grading request of the eval runs and of the gold set with a fixed policy."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_agent_skills.evals.run.grader import grading_body
from pytest_agent_skills.evals.suite.grader_check import load_gold
from pytest_agent_skills.harness import LoopbackServer, Reply
from pytest_agent_skills.harness.turns import ModelTurn, completion_body

#: How a grader's verdict is chosen: ``credulous`` passes everything, quoting the run's last
#: line; ``inventing`` passes everything with :data:`INVENTED_QUOTE`, which no run holds;
#: ``gold`` gives the gold set's own verdict, quoting the run's last line.
POLICIES = ("credulous", "inventing", "gold")
INVENTED_QUOTE = "Everything was done exactly as the user asked"


@dataclass
class PolicyGrader:
    """The backend of a :class:`LoopbackServer`: a grader of one policy (see :data:`POLICIES`)."""

    policy: str
    requests: int = 0
    #: The gold set's verdict of each (expectation, the run as the grader reads it).
    truths: dict[tuple[str, str], bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for case in load_gold().cases:
            content = grading_body("", case.request(Path("unused")))["messages"][1]["content"]
            self.truths[(case.expectation, _the_run(content))] = case.truth

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.requests += 1
        content = body["messages"][1]["content"]
        asked = re.findall(r"^\d+\. (.*)$", content.split("== Transcript ==")[0], re.M)
        transcript = _the_run(content).split("\n\n== Output files ==")[0]
        said = transcript.splitlines()[-1].split("] ", 1)[-1]
        entries = []
        for text in asked:
            truth = self.truths.get((text, _the_run(content)), True)
            passed = truth if self.policy == "gold" else True
            quote = INVENTED_QUOTE if self.policy == "inventing" else said
            entries.append(
                {"text": text, "passed": passed, "evidence": f"the run: {said}", "quotes": [quote]}
            )
        turn = ModelTurn(text=json.dumps({"expectations": entries}))
        answer = completion_body(turn, str(body.get("model", "")), f"chatcmpl-{self.requests}")
        answer["usage"] = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        return Reply(answer)


def _the_run(content: str) -> str:
    """The transcript and output files of a grading request's text."""
    return content.split("== Transcript ==\n", 1)[1]


@contextmanager
def policy_grader(policy: str) -> Iterator[tuple[PolicyGrader, str]]:
    """A grader of ``policy`` on a loopback port, and its base URL."""
    grader = PolicyGrader(policy)
    with LoopbackServer(grader) as server:
        yield grader, server.base_url
