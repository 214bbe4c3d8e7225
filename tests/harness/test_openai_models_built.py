"""The ``openai`` client builds its answer models lazily, and pydantic's lazy build is not
thread-safe: eval runs that read their first answers at once failed now and then with
"BaseModel cannot be instantiated directly". Making a client builds them first, once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# In a fresh process (the models are built once per process): 16 threads make their clients,
# wait for each other and read their first answer at the same moment, with the interpreter
# switching threads as often as it can.
RACE = """
import json, sys, threading
from pytest_agent_skills.harness import LoopbackServer, Reply
from pytest_agent_skills.harness.models import OpenAIClientModel
from pytest_agent_skills.harness.turns import ModelTurn, ToolCall, completion_body

class Backend:
    def respond(self, body, headers):
        call = ToolCall("c1", "skill_load", json.dumps({"skill_name": "x"}))
        return Reply(completion_body(ModelTurn(tool_calls=(call,)), "m", "chatcmpl-1"))

sys.setswitchinterval(1e-6)
failures = []
with LoopbackServer(Backend()) as server:
    barrier = threading.Barrier(16)
    def one():
        model = OpenAIClientModel.connect(server.base_url, model="m")
        barrier.wait()
        try:
            model.complete({"messages": [{"role": "user", "content": "hi"}]})
        except Exception as error:
            failures.append(f"{type(error).__name__}: {error}")
    threads = [threading.Thread(target=one) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
print(json.dumps(failures))
"""

BUILT = """
import typing, pydantic
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pytest_agent_skills.harness.models import OpenAIClientModel

def models(annotation):
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        yield annotation
    for argument in typing.get_args(annotation):
        yield from models(argument)

def reachable():
    seen, todo = set(), [ChatCompletion, ChatCompletionChunk]
    while todo:
        model = todo.pop()
        if model not in seen:
            seen.add(model)
            todo += [m for field in model.model_fields.values() for m in models(field.annotation)]
    return seen

before = sum(not model.__pydantic_complete__ for model in reachable())
OpenAIClientModel.connect("http://127.0.0.1:9/v1", model="m")
after = sorted(model.__name__ for model in reachable() if not model.__pydantic_complete__)
print(before, len(reachable()), after)
"""


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_making_a_client_leaves_no_answer_model_to_build_later() -> None:
    before, reachable, after = _python(BUILT).split(" ", 2)
    # The premise, as openai ships today: its models are built at first use.
    print(f"{before} of {reachable} answer models unbuilt before the first client")
    assert int(reachable) > 10
    assert after == "[]"


def test_threads_reading_their_first_answers_at_once_all_read_them() -> None:
    # Before the models were built first, 7 of 10 such processes had 1 to 5 threads fail.
    outputs = [_python(RACE) for _ in range(5)]
    assert [output for output in outputs if "BaseModel cannot be instantiated" in output] == []
