"""Text helpers shared by the reports: plurals, lists, dice, and wrapping to a mail's width."""

from __future__ import annotations

import functools
import re
import textwrap
from collections.abc import Iterable, Sequence

from pbem.languages.i18n import display_width

WIDTH = 78
"""The widest line of a text report: fits an 80-column mail reader with room for quoting."""


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 territory', '2 territories': `many` is the plural when it is not `word` + s."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


def listing(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def dice_faces(values: Iterable[int]) -> str:
    return " ".join(map(str, values))


def wrap(text: str, indent: str = "", more: str | None = None, width: int = WIDTH) -> list[str]:
    """`text` as lines of at most `width`, the first indented by `indent`, the rest by `more`
    (default: `indent`); words longer than a line are split only if they must be."""
    return list(_wrapped(text, indent, indent if more is None else more, width))


@functools.lru_cache(maxsize=4096, typed=True)
def _wrapped(text: str, indent: str, rest: str, width: int) -> tuple[str, ...]:
    """`wrap`, worked out once for each paragraph (every player's report tells most of the
    same events)."""
    if display_width(text) != len(text):  # combining marks or wide characters: by columns
        return tuple(_wrap_columns(text, indent, rest, width) or [indent.rstrip()])
    return tuple(
        textwrap.wrap(
            text,
            width=width,
            initial_indent=indent,
            subsequent_indent=rest,
            break_on_hyphens=False,
        )
        or [indent.rstrip()]
    )


def _wrap_columns(text: str, indent: str, more: str, width: int) -> list[str]:
    """`wrap` by display width (Gujarati's vowel signs take no column, CJK two), keeping the
    runs of spaces between words inside a line (a table's columns stay aligned)."""
    lines: list[str] = []
    line = indent
    fresh = True
    for space, word in re.findall(r"(\s*)(\S+)", text):
        candidate = line + word if fresh else line + (space or " ") + word
        if not fresh and display_width(candidate) > width:
            lines.append(line)
            line = more + word
        else:
            line = candidate
        fresh = False
    if line.strip():
        lines.append(line)
    return lines


_QUOTED = re.compile(r"^\s*(\d+ )?\| ")
"""A line quoted as it was written: a line of an order file ("  12 | ...") or of a player's
message ("  | ..."): never wrapped."""


def wrapped_message(text: str, width: int = WIDTH) -> str:
    """A mail's text with every line wider than `width` columns wrapped between words, each
    keeping its indent (a list item's further lines under its text), but for the lines quoted
    as they were written, commands and lines without a space to break at."""
    out: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if (
            display_width(line) <= width
            or _QUOTED.match(line)
            or body.startswith(("python3 ", "pbem "))
            or " " not in body
        ):
            out.append(line)
            continue
        indent = line[: len(line) - len(body)]
        more = indent + ("  " if body.startswith("- ") else "")
        out.extend(wrap(body, indent, more, width))
    return "\n".join(out)
