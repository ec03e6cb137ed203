"""JSON text indented by two spaces, as `json.dumps(value, indent=2, ensure_ascii=False)`
writes it, byte for byte, in a fraction of the time.

The standard library's C encoder does not indent, and its indenting encoder is Python
generators all the way down: for the view files of a resolution (one per player, a few
thousand values each) that was a tenth of writing the reports. Strings are escaped by the
standard library's own C function; anything this does not know (a key that is not a string, a
float that is not finite, a type JSON has no word for) is left to `json.dumps` itself. A
`OneLine` table is written on a line of its own, as `json.dumps` writes it without indenting.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring
from typing import Any


class OneLine(dict[str, Any]):
    """A table written on one line (`json.dumps` without indenting), where a list holds many
    small ones: each roll of a resolution's dice check in a view file, so that a resolution of
    thousands of rolls writes a line each, not eleven."""


class _Unusual(Exception):
    """A value `_write` leaves to `json.dumps`."""


def indented_json(value: Any) -> str:
    """`value` as `json.dumps(value, indent=2, ensure_ascii=False)` writes it, but for each
    `OneLine` table inside it, which is written on one line."""
    out: list[str] = []
    try:
        _write(value, "\n", out)
    except (_Unusual, RecursionError):  # (a value inside itself: json.dumps says so)
        return _standard(value)
    return "".join(out)


def json_list_pieces(items: Iterable[Any]) -> Iterator[str]:
    """The text of `json.dumps(list(items), indent=2)` in pieces, an item at a time, so that a
    long list is written as it is made and never held whole (`pbem dice --json`). Joined, the
    pieces are that text byte for byte; nothing is given before the first item is (so an
    error raised while making it leaves nothing written)."""
    started = False
    for item in items:
        text = json.dumps(item, indent=2).replace("\n", "\n  ")
        yield ("[\n  " if not started else ",\n  ") + text
        started = True
    yield "\n]" if started else "[]"


def _standard(value: Any) -> str:
    """The standard library's way, for what `_write` does not know."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def _write(value: Any, newline: str, out: list[str]) -> None:
    """Append `value`'s text to `out`; `newline` starts a line at the value's own depth."""
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise _Unusual
        out.append(float.__repr__(value))
    elif kind is OneLine:
        out.append(json.dumps(value, ensure_ascii=False))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        first = True
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual
            out.append(("{" if first else ",") + inner + encode_basestring(key) + ": ")
            first = False
            _write(item, inner, out)
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        for i, item in enumerate(value):
            out.append(("[" if i == 0 else ",") + inner)
            _write(item, inner, out)
        out.append(newline + "]")
    else:
        raise _Unusual
