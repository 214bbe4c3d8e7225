"""How many tokens a text costs a model, estimated offline without a tokenizer's vocabulary.

The estimate splits the text as byte-level BPE tokenizers pre-split it (words with their
leading space, single digits, runs of punctuation, runs of white space) and prices each piece
by its length: a short word of letters is one token, a longer one a token per few letters,
punctuation a token per character or two, a character outside ASCII a token per UTF-8 byte
pair.  Its error against a real tokenizer is measured on the public skills corpus by
``bench/tokens.py``; it is an estimate, not any one model's count.
"""

from __future__ import annotations

import re

#: The pieces a byte-level BPE pre-tokenizer makes (as GPT-2's does): a word with its leading
#: space, a digit, a run of other symbols, a run of white space.
_PIECES = re.compile(
    r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d| ?[^\s\w]+|_+|\s+",
)
#: Letters a word may have and still be one token (longer words split into pieces).
WORD_LETTERS = 7
#: Letters per token in the part of a word beyond :data:`WORD_LETTERS`.
LETTERS_PER_TOKEN = 4.0
#: Characters per token in a run of symbols (``---``, ``**``, ``://``).
SYMBOLS_PER_TOKEN = 1.6
#: UTF-8 bytes per token of characters outside ASCII.
BYTES_PER_TOKEN = 2.0


def estimate_tokens(text: str) -> int:
    """The estimated number of tokens of ``text`` (0 for an empty text)."""
    total = 0.0
    for match in _PIECES.finditer(text):
        total += _piece_cost(match.group())
    return round(total)


def _piece_cost(piece: str) -> float:
    if not piece.isascii():
        letters = piece.lstrip(" ")
        return max(1.0, len(letters.encode("utf-8")) / BYTES_PER_TOKEN)
    first = piece[0]
    if first.isspace() and piece.isspace():
        return 1.0
    word = piece.lstrip(" ")
    if word[:1].isalpha():
        extra = max(0, len(word) - WORD_LETTERS)
        return 1.0 + extra / LETTERS_PER_TOKEN
    if word[:1].isdigit() or word[:1] == "'":
        return 1.0
    return max(1.0, len(word) / SYMBOLS_PER_TOKEN)
