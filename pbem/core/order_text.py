"""The text of an order file, read fast: pbem's own plain TOML in one pass, and the line of
each key.

`parse_orders` reads a file with `read_plain` when it is written in the plain TOML that
`Orders.to_toml` writes (and most players keep to); any other file goes to the TOML parser,
and `key_lines` finds the lines of its keys, so that every problem can name its line.
"""

from __future__ import annotations

import re
from typing import Any

# A table header ([name] or [[name]]) or a key (name =), whichever starts a line; the spaces it
# allows are any but the line's end. Read over the whole text at once (re.MULTILINE).
_LINE = re.compile(
    r"^[^\S\n]*(?:(\[\[?)[^\S\n]*([A-Za-z_]+)[^\S\n]*\]\]?|([A-Za-z_]+)[^\S\n]*=)", re.MULTILINE
)
# Line breaks other than "\n" that str.splitlines (the line count of an order file) knows.
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def key_lines(text: str) -> dict[str, int]:
    """Line numbers of keys: "turn", "place.0", "place.0.armies", "fortify.to", ...

    Lines count as `str.splitlines` counts them (a file with other breaks than "\n" is
    rewritten with "\n" first); only the lines that start with a header or a key are visited."""
    if _OTHER_BREAKS.search(text):
        text = "\n".join(text.splitlines())
    book = _LineBook()
    number, counted = 1, 0
    newlines = text.count
    for found in _LINE.finditer(text):
        start = found.start()
        number += newlines("\n", counted, start)
        counted = start
        book.note(number, *found.groups())
    return book.lines


class _LineBook:
    """The line numbers of an order file's keys and tables, noted line by line in order."""

    def __init__(self) -> None:
        self.lines: dict[str, int] = {}
        self.table = ""
        self.counts: dict[str, int] = {}

    def note(self, number: int, bracket: str | None, name: str | None, key: str | None) -> None:
        """Line `number` opens table `name` ("[" or "[[" in `bracket`) or sets `key`."""
        lines = self.lines
        if bracket is None:
            table = self.table
            lines.setdefault(f"{table}.{key}" if table else key, number)  # type: ignore[arg-type]
            return
        assert name is not None
        if bracket == "[[":
            index = self.counts.get(name, 0)
            self.counts[name] = index + 1
            self.table = f"{name}.{index}"
            lines.setdefault(name, number)  # the bare name: the first of its tables
        else:
            self.table = name
        lines.setdefault(self.table, number)


# The plain TOML that `Orders.to_toml` writes (and most players keep to), line by line: nothing,
# a comment, a table header, or a key set to a string without escapes, to a whole number or to
# a list of lists of such strings on one line (trade = [["Peru", "Iceland", "wild"]]). No
# control character (TOML allows none but tab) and no line break that str.splitlines knows.
# Each line gives (bracket, table name, closing bracket, key, string, digits, lists, anything
# else): the last is what a line not in plain TOML holds, empty in a plain line.
_NO_CONTROL = "\\x00-\\x08\\x0a-\\x1f\\x7f\\x85\\u2028\\u2029"
_LISTED = rf'"[^"\\\[\]{_NO_CONTROL}]*"'  # a string in a list: no brackets either
_LIST = rf"\[[ \t]*{_LISTED}(?:[ \t]*,[ \t]*{_LISTED})*[ \t]*\]"
_PLAIN_ROW = re.compile(
    rf"""^(?:
        [ \t]*
        (?:
            (\[\[?)[ \t]*([A-Za-z_]+)[ \t]*(\]\]?)
          | ([A-Za-z_]+)[ \t]*=[ \t]*
            (?:
                "([^"\\{_NO_CONTROL}]*)"
              | (-?(?:0|[1-9][0-9]{{0,17}}))
              | (\[[ \t]*{_LIST}(?:[ \t]*,[ \t]*{_LIST})*[ \t]*\])
            )
        )?
        [ \t]*(?:\#[^{_NO_CONTROL}]*)?$
      | (.+)
    )""",
    re.MULTILINE | re.VERBOSE,
)
_LIST_IN = re.compile(r"\[([^\[\]]*)\]")
_STRING_IN = re.compile(r'"([^"]*)"')


def read_plain(text: str) -> tuple[dict[str, Any], dict[str, int]] | None:
    """The data and key lines of an order file written in plain TOML (`_PLAIN_ROW`), in one
    pass: what `tomllib.loads` and `key_lines` give for it. None for any other file (those two
    read it then), so that a file with a mistake is never read here."""
    data: dict[str, Any] = {}
    arrays: set[str] = set()  # the names of the [[arrays of tables]]
    here = data
    book = _LineBook()
    lines = book.lines
    rows = _PLAIN_ROW.findall(text)  # one a line
    for number, (bracket, name, close, key, value, digits, lists, other) in enumerate(rows, 1):
        if key:
            if key in here:
                return None  # a key set twice
            if lists:
                here[key] = [_STRING_IN.findall(inner) for inner in _LIST_IN.findall(lists)]
            else:
                here[key] = int(digits) if digits else value
            table = book.table  # book.note(number, None, None, key), the usual line, inline
            lines.setdefault(f"{table}.{key}" if table else key, number)
        elif other or len(bracket) != len(close):
            return None  # not plain TOML, or a header's brackets do not match
        elif bracket == "[[":
            if name not in arrays:
                if name in data:
                    return None  # a key or [table] made an array of tables
                arrays.add(name)
                data[name] = []
            here = {}
            data[name].append(here)
            book.note(number, bracket, name, None)
        elif bracket:
            if name in data:
                return None  # a table defined twice, or a key made a table
            here = data[name] = {}
            book.note(number, bracket, name, None)
    return data, book.lines
