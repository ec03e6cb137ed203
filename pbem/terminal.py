"""Text a player or a stranger wrote, made safe to print on a terminal or in a text report.

A territory name, a file name or a game name in an order file can hold control characters: an
escape sequence that recolours or clears the moderator's terminal, a carriage return that
overwrites a line, a right-to-left override that makes `alice.toml` read as something else.
`printable` writes each of them as a visible escape (`\\x1b`, `\\u202e`), so what is shown is
what was written. Every way out of pbem (the command line, the text and HTML reports) uses it.
"""

from __future__ import annotations

import functools
import re

_UNSAFE = (
    "\x00-\x1f\x7f-\x9f"  # C0 controls, DEL, C1 controls
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks and overrides
    "\u2028\u2029"  # line and paragraph separators
    "\ud800-\udfff"  # lone surrogates (bytes that were not UTF-8, kept by surrogateescape)
)
_UNSAFE_BUT_LINES = _UNSAFE.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f")
"""The same, keeping newline and tab: for text pbem itself laid out in lines."""


@functools.cache
def _unsafe(lines: bool) -> re.Pattern[str]:
    """The pattern of the characters to escape, compiled when first needed (a class this wide
    takes a millisecond to compile, and a command often needs only one of the two)."""
    return re.compile(f"[{_UNSAFE_BUT_LINES if lines else _UNSAFE}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """`text` with every control character written as a visible escape.

    With `lines`, newlines and tabs stay (for pbem's own multi-line output, whose pieces from
    players were escaped whole where they were put in)."""
    return _unsafe(lines).sub(_escape, text)


def quoted(text: str, limit: int = 60) -> str:
    """A player's string for a message: escaped, and cut to `limit` characters if longer."""
    safe = printable(text)
    return safe if len(safe) <= limit else safe[: limit - 1] + "…"
