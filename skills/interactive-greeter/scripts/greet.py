"""Ask for a name and a colour on stdin, greet, and save the greeting under $OUTPUT_DIR."""

import os
import sys
from pathlib import Path

COLOURS = {"1": "red", "2": "green", "3": "blue"}


def ask(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        print("\nno input: answer the questions on stdin", file=sys.stderr)
        sys.exit(3)


def main() -> int:
    name = ask("Name? ")
    for number, colour in COLOURS.items():
        print(f"{number}. {colour}")
    choice = ask("Enter the number of your colour: ")
    if choice not in COLOURS:
        print(f"no colour number {choice!r}; choose 1, 2 or 3", file=sys.stderr)
        return 2
    greeting = f"Hello, {name}! You like {COLOURS[choice]}."
    print(greeting)
    out = Path(os.environ.get("OUTPUT_DIR", "out"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "greeting.txt").write_text(greeting + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
