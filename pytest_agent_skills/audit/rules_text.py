"""Rules on what the model reads: invisible text, instructions hidden in comments or posing
as the system, instructions to override or to hide, and descriptions that claim every
request."""

from __future__ import annotations

import re
from collections.abc import Iterator

from .context import Hit, Located, Region
from .severity import Severity

_INVISIBLE = re.compile(
    "[\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060-\u2064\ufeff]+")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]+")
_FLAG_BASE = "\U0001f3f4"  # a waving black flag: tags after it spell a subdivision flag
_ZWJ = "\u200d"
#: Scattered zero-width characters in one file from which they are reported (medium).
_SCATTERED = 16


def invisible_text(located: Located) -> Iterator[Hit]:
    text = located.text
    if text.isascii() or not _INVISIBLE.search(text):
        return
    yield from _tags(located)
    yield from _zero_width(located)
    yield from _bidi(located)


def _tags(located: Located) -> Iterator[Hit]:
    text = located.text
    for match in _TAGS.finditer(text):
        run = match.group()
        start = match.start()
        if _is_flag(text, start) and run.endswith("\U000e007f") and len(run) <= 7:
            continue  # a subdivision flag (England, Scotland, Wales)
        hidden = "".join(
            chr(ord(character) - 0xE0000) for character in run if ord(character) < 0xE007F
        )
        shown = "".join(character if character.isprintable() else "?" for character in hidden)
        yield Hit(
            "hidden-unicode-tags",
            "critical",
            start,
            match.end(),
            f"{len(run)} invisible Unicode Tag characters; they read: {shown[:160]!r}",
            evidence=located.evidence(start, match.end()),
        )


def _is_flag(text: str, start: int) -> bool:
    return start > 0 and text[start - 1] == _FLAG_BASE


def _zero_width(located: Located) -> Iterator[Hit]:
    text = located.text
    scattered = 0
    first = -1
    for match in _ZERO_WIDTH.finditer(text):
        run = match.group()
        start = match.start()
        if run == "\ufeff" and start == 0:
            continue  # a byte order mark
        if run == _ZWJ and _joins_emoji(text, start):
            continue
        if len(run) >= 3:
            region = located.region(start)
            yield Hit(
                "zero-width-run",
                "high" if region != "quote" else "medium",
                start,
                match.end(),
                f"{len(run)} zero-width characters in a row: hidden data or text",
            )
        else:
            scattered += len(run)
            first = start if first < 0 else first
    if scattered >= _SCATTERED:
        yield Hit(
            "zero-width-run",
            "medium",
            first,
            first + 1,
            f"{scattered} zero-width characters scattered through the file",
        )


def _joins_emoji(text: str, start: int) -> bool:
    before = text[start - 1] if start else ""
    after = text[start + 1] if start + 1 < len(text) else ""
    return _pictographic(before) and _pictographic(after)


def _pictographic(character: str) -> bool:
    return bool(character) and (
        ord(character) >= 0x1F000
        or 0x2600 <= ord(character) <= 0x27BF
        or character in "\ufe0f\u2640\u2642\u2695\u2696\u2708\u2764"
        or 0x1F3FB <= ord(character) <= 0x1F3FF
    )


def _bidi(located: Located) -> Iterator[Hit]:
    for match in _BIDI.finditer(located.text):
        region = located.region(match.start())
        severity: Severity = "high" if region in ("code", "comment") else "low"
        yield Hit.at(
            match,
            "bidi-control",
            severity,
            "bidirectional control characters: the text displays in another order than it is"
            " read" + (" (in code: Trojan Source)" if severity == "high" else ""),
        )


# --- instructions to the model -------------------------------------------------------------------

_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_TOOL_COMMENTS = re.compile(
    r"\s*(?:agent-skills:|markdownlint|prettier|toc\b|/?toc\b|lint|eslint|vale|cspell|spell"
    r"|textlint|end\b|begin\b|start\b|-|#)",
    re.IGNORECASE,
)
_MODEL = r"(?:AI|assistant|agent|model|LLM|Claude|GPT|Codex|Gemini|Copilot|language\s+model)"
#: A comment speaking to the model: "Note to the AI:", "Assistant, ...", "Claude must",
#: "if you are an AI", "you must now ignore".
_ADDRESSES_MODEL = re.compile(
    r"\b(?:note|instructions?|message|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?"
    + _MODEL
    + r"s?\b"
    r"|^\s*(?:dear\s+|hey\s+)?" + _MODEL + r"s?\s*[:,]"
    r"|\b(?:the\s+)?"
    + _MODEL
    + r"s?\s+(?:must|should|shall|will|needs?\s+to|is\s+to|has\s+to)\s+(?!be\b)"
    r"|\bif\s+you\s+are\s+(?:an?\s+)?"
    + _MODEL
    + r"|\bwhen\s+you\s+(?:read|see|process|load|follow)\s+this\b"
    r"|\byou\s+(?:must|should|will|shall)\s+(?:now\s+|also\s+|always\s+|first\s+)*"
    r"(?:ignore|run|execute|send|read|upload|never|include|add|append|tell|not\s+tell)\b",
    re.IGNORECASE | re.MULTILINE,
)
_HARMFUL = re.compile(
    r"\b(?:ignore|disregard|override|secret(?:ly)?|silent(?:ly)?|hidden|without (?:telling"
    r"|asking|informing)|do not (?:tell|mention|inform|reveal|show)|curl|wget|bash|sh -c|exec"
    r"|eval|password|token|credential|api[_ ]?key|ssh|\.aws|upload|exfiltrat\w*|send\b)",
    re.IGNORECASE,
)

_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|every\s+)*"
    r"(?:previous|prior|above|earlier|preceding|other|system|original|safety)\s+"
    r"(?:instructions?|rules|directions|prompts?|guidelines|messages?)"
    r"|\bdo\s+not\s+(?:tell|inform|notify|alert|mention\s+(?:this|it)\s+to|reveal\s+(?:this|it)\s+to|show\s+(?:this|it)\s+to)\s+the\s+user"
    r"|\bwithout\s+(?:telling|informing|notifying|asking)\s+the\s+user"
    r"|\b(?:silently|secretly|quietly|covertly)\s+(?:run|execute|send|upload|install|copy|read|post|exfiltrate|forward|add|append|write)"
    r"|\bhide\s+(?:this|these|it|them)\s+from\s+the\s+user"
    r"|\bthe\s+user\s+(?:has\s+)?already\s+(?:approved|authori[sz]ed|consented|agreed)"
    r"|\byou\s+are\s+now\s+(?:in\s+)?(?:DAN|developer\s+mode|jailbroken|unrestricted|unfiltered)",
    re.IGNORECASE,
)

_SYSTEM_BLOCK = re.compile(
    r"<\s*/?\s*(?:system|system[-_ ]prompt|system[-_ ]message|admin|developer[-_ ]message)\s*>"
    r"|<\|im_start\|>\s*system|<\|system\|>|<<\s*SYS\s*>>|\[/?(?:SYSTEM|INST)\]"
    r"|^#{1,6}\s*(?:SYSTEM|ADMIN(?:ISTRATOR)?|DEVELOPER|PRIORITY)\s+(?:OVERRIDE|MESSAGE|PROMPT|INSTRUCTIONS?|NOTICE|UPDATE)\b"
    r"|\b(?:SYSTEM|ADMIN)\s+OVERRIDE\b|\bPRIORITY\s*:\s*(?:HIGHEST|OVERRIDE|CRITICAL)\b"
    r"|<\s*IMPORTANT\s*>",
    re.MULTILINE,
)
_QUOTED: tuple[Region, ...] = ("quote", "code")


def model_instructions(located: Located) -> Iterator[Hit]:
    source = located.source
    if source.kind == "code":
        return  # a script's own strings are not read by the model as instructions
    text = located.text
    if source.kind == "markdown" and "<!--" in text:
        yield from _comments(located)
    if located.mentions(_OVERRIDE_WORDS):
        for match in _OVERRIDE.finditer(text):
            said = f"an instruction to the model to {match.group().lower()!r}"
            yield _unless_quoted(located, match, "instruction-override", said)
    if located.mentions(_SYSTEM_WORDS):
        for match in _SYSTEM_BLOCK.finditer(text):
            said = f"{match.group().strip()!r} poses as a system or priority message"
            yield _unless_quoted(located, match, "fake-system-block", said)


_OVERRIDE_WORDS = (
    "ignore",
    "disregard",
    "forget",
    "override",
    "do not",
    "without",
    "silently",
    "secretly",
    "quietly",
    "covertly",
    "hide",
    "already",
    "you are now",
)
_SYSTEM_WORDS = ("system", "<|", "<<", "[inst", "admin", "developer", "priority", "important")


def _unless_quoted(located: Located, match: re.Match[str], rule: str, said: str) -> Hit:
    """High where the model reads ``match`` as addressed to it; low where it is quoted (a code
    block, inline code, quotation marks, a data file)."""
    if located.region(match.start()) in _QUOTED or located.source.kind == "data":
        return Hit.at(match, rule, "low", said + " (quoted: shown, not addressed)")
    return Hit.at(match, rule, "high", said)


def _comments(located: Located) -> Iterator[Hit]:
    for match in _COMMENT.finditer(located.text):
        body = match.group(1)
        if len(body.strip()) < 12 or _TOOL_COMMENTS.match(body):
            continue
        if located.region(match.start()) in ("code", "quote"):
            continue  # a comment shown in a code block
        if not _ADDRESSES_MODEL.search(body):
            continue
        harmful = _HARMFUL.search(body)
        yield Hit.at(
            match,
            "hidden-comment-instructions",
            "high" if harmful else "medium",
            "an HTML comment speaks to the model (hidden from a reader of the rendered page)"
            + (f", asking to {harmful.group().lower()!r}" if harmful else ""),
        )


_CLAIMS_ALL = re.compile(
    r"\b(?:use|load|invoke|activate|apply|trigger|call|read|consult)\w*\b[^.\n]{0,40}?"
    r"\b(?:for|on|with|in|during)\s+(?:all|every|any|each)\s+(?:single\s+)?"
    r"(?:tasks?|requests?|quer(?:y|ies)|questions?|messages?|prompts?|conversations?|interactions?|turns?|sessions?)"
    r"(?!\s+(?:involving|that|which|related|requiring|about|where|with|using|on|in|for|of|when|like|to|from|regarding|concerning|mentioning|containing)\b)"
    r"|\balways\s+(?:be\s+)?(?:use|load|invoke|activate|run|apply|read|consult)\w*\b[^.\n]{0,40}?\b(?:first|before\s+(?:anything|any|all|every|responding))"
    r"|\bbefore\s+(?:any|all|every)\s+other\s+skills?\b"
    r"|\b(?:regardless\s+of|no\s+matter)\s+(?:the|what)\s+(?:task|request|topic|the\s+user\s+asks)"
    r"|\b(?:must|should)\s+(?:always\s+)?be\s+(?:loaded|used|invoked|activated)\s+(?:first|for\s+(?:all|every|any))",
    re.IGNORECASE,
)


def description_claims(located: Located, front_matter_end: int) -> Iterator[Hit]:
    """The front matter's claims on every request (``front_matter_end``: where it ends)."""
    for match in _CLAIMS_ALL.finditer(located.text, 0, front_matter_end):
        yield Hit.at(
            match,
            "description-claims-all",
            "high",
            f"the front matter claims every request ({match.group()!r}): the skill would be"
            " loaded into conversations it has nothing to do with",
        )
