"""The file names the plugin collects, in a module that imports nothing (pytest start-up reads
them before any skill or scenario needs parsing), and how a file name is shown."""

SKILL_FILE = "SKILL.md"
#: What the runtime replaces with the skill folder in a skill's texts: what follows it is a path
#: from the skill root.
BASE_DIR_PLACEHOLDER = "__BASE_DIR__"
SCENARIO_SUFFIX = ".scenario.yaml"


def printable(text: str) -> str:
    """``text`` writable as UTF-8 anywhere (a report, JSON, JUnit XML): the bytes of a file name
    that are not UTF-8 (which Python reads as lone surrogates) written as ``\\xNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(_escaped(character) for character in text)
    return text


def _escaped(character: str) -> str:
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return character
