"""Re-record the eval cassettes of example_suite (example_suite/eval-cassettes/invoice-totals).

A real project records them against a real model:
``agent-skills eval .claude/skills/invoice-totals --record all --upstream-url https://.../v1``.
This repository must not reach a real model, so a stand-in plays the upstream on a loopback
port: an agent that uses the skill when it is offered and the question is about invoices,
and a grader that checks the final answer for the expected figure.  Everything else (the
runs, the cassettes, the redaction, the grading protocol) is what a user's recording goes
through.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_agent_skills.harness import LoopbackServer, Reply
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body

SUITE = Path(__file__).resolve().parent.parent / "example_suite"
SKILL = ".claude/skills/invoice-totals"


class StandIn:
    """The upstream: agent turns and grader answers, with token usage."""

    def __init__(self) -> None:
        self.count = 0

    def respond(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        self.count += 1
        if "response_format" in body:
            turn = self._grade(body["messages"][1]["content"])
        else:
            turn = self._act(body["messages"])
        answer = completion_body(turn, str(body.get("model", "")), f"chatcmpl-{self.count}")
        prompt_tokens = len(json.dumps(body["messages"])) // 4
        completion_tokens = len(json.dumps(answer["choices"][0]["message"])) // 4
        answer["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        return Reply(answer)

    def _act(self, messages: list[dict[str, Any]]) -> ModelTurn:
        system = " ".join(m["content"] or "" for m in messages if m["role"] == "system")
        user = next(m["content"] for m in messages if m["role"] == "user")
        results = [m["content"] for m in messages if m["role"] == "tool"]
        about_invoices = re.search(r"invoice|owe|order lines|grand total", user, re.I)
        if "invoice-totals:" not in system or not about_invoices:
            return ModelTurn(text="I cannot read your files; please paste the invoice lines.")
        if not results:
            arguments = json.dumps({"skill_name": "invoice-totals"})
            return ModelTurn(tool_calls=(ToolCall("call_1", "skill_load", arguments),))
        if len(results) == 1:
            arguments = json.dumps(
                {
                    "skill": "invoice-totals",
                    "command": "python3 scripts/totals.py",
                    "output_files": ["$OUTPUT_DIR/totals.json"],
                }
            )
            return ModelTurn(tool_calls=(ToolCall("call_2", "skill_run", arguments),))
        found = re.search(r"grand total ([0-9.]+)", results[-1] or "")
        grand = float(found.group(1)) if found else 0.0
        if "acme" in user:
            return ModelTurn(text="acme owes 30.00 in total (100 bolts and 10 rivets).")
        return ModelTurn(text=f"The grand total of the invoices is {grand:.2f}.")

    def _grade(self, content: str) -> ModelTurn:
        asked = re.findall(r"^\d+\. (.*)$", content.split("== Transcript ==")[0], re.M)
        final = re.search(r"^\[final answer\] (.*)$", content, re.M)
        said = final.group(1) if final else ""
        graded = []
        for text in asked:
            figure = re.search(r"[0-9]+\.[0-9]+", text)
            passed = bool(figure and figure.group(0) in said)
            graded.append(
                {
                    "text": text,
                    "passed": passed,
                    "evidence": f"final answer: {said or '(none)'}",
                    "quotes": [said] if said else [],
                }
            )
        return ModelTurn(text=json.dumps({"expectations": graded}))


def main() -> None:
    shutil.rmtree(SUITE / "eval-cassettes", ignore_errors=True)
    out = tempfile.mkdtemp(prefix="example-evals-")
    with LoopbackServer(StandIn()) as upstream:
        for extra in ([], ["--triggers"]):
            subprocess.run(
                [sys.executable, "-m", "pytest_agent_skills.cli", "eval", SKILL,
                 "--record", "all", "--upstream-url", upstream.base_url, "--out", out,
                 "-q", *extra],
                cwd=SUITE,
                env={**os.environ, "OPENAI_API_KEY": "sk-stand-in"},
                check=True,
            )  # fmt: skip
    shutil.rmtree(out)
    print(f"recorded {(SUITE / 'eval-cassettes').relative_to(SUITE.parent)}")


if __name__ == "__main__":
    main()
