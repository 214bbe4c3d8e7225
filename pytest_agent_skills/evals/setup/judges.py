"""Judge and agent apart: whether a grader is the agent's own model, or of its family by name.

A judge tends to favour answers of its own model family (its wording, its habits), so a
verdict graded by the agent's own model, or by a sibling, says less.  The family is read from
the model's name, by the known naming prefixes below (a provider's prefix such as
``openai/`` or ``meta-llama/`` dropped first); two names of no known family are the same
only when they are the same name.
"""

from __future__ import annotations

import re

#: Known model families and the prefixes their models are named with.
FAMILIES: dict[str, tuple[str, ...]] = {
    "OpenAI GPT": ("gpt", "chatgpt", "o1", "o3", "o4", "davinci", "text-davinci"),
    "Anthropic Claude": ("claude",),
    "Google Gemini": ("gemini", "gemma", "palm", "bison"),
    "Meta Llama": ("llama", "codellama", "meta-llama"),
    "Alibaba Qwen": ("qwen", "qwq"),
    "Mistral": ("mistral", "mixtral", "codestral", "ministral", "magistral", "pixtral"),
    "DeepSeek": ("deepseek",),
    "Microsoft Phi": ("phi",),
    "Hugging Face SmolLM": ("smollm",),
    "xAI Grok": ("grok",),
    "Cohere Command": ("command",),
}


def _bare(model: str) -> str:
    """The model's name lower-cased, without a provider's path (``openai/gpt-4o`` -> ``gpt-4o``)."""
    return model.strip().lower().rsplit("/", 1)[-1]


def family(model: str) -> str | None:
    """The family ``model`` is named in, or None when its name is of no known family."""
    name = _bare(model)
    for known, prefixes in FAMILIES.items():
        for prefix in prefixes:
            if re.match(rf"{re.escape(prefix)}(?![a-z])", name):
                return known
    return None


def same_grader(agent: str, grader: str) -> str:
    """What ties the grader to the agent ("" when nothing does): the same model, or the same
    family by name."""
    if not agent or not grader:
        return ""
    if _bare(agent) == _bare(grader):
        return f"the grader {grader!r} is the agent's own model"
    kin = family(agent)
    if kin is not None and kin == family(grader):
        return f"the grader {grader!r} is of the same family as the agent {agent!r} ({kin})"
    return ""
