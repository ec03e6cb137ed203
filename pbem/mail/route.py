"""Which game of a root a message is for: the `game =` of its orders, or else the `[game]` tag
in the subject of a reply to one of the game's messages."""

from __future__ import annotations

import re
from collections.abc import Collection

_GAME_LINE = re.compile(r"""^\s*game\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)')""", re.MULTILINE)
_TAG = re.compile(r"\[([A-Za-z0-9][A-Za-z0-9._-]{0,63})\]")


def named_game(orders: str | None) -> str | None:
    """The game an order file names (its first `game = "..."` line), whether or not the rest
    of it can be read."""
    if orders is None:
        return None
    found = _GAME_LINE.search(orders)
    return None if found is None else (found.group(1) or found.group(2) or "").strip()


def tagged_games(subject: str) -> list[str]:
    """The `[name]` tags of a subject, in order (`Re: [friday] turn 3: your move`)."""
    return _TAG.findall(subject)


def game_for(orders: str | None, subject: str, names: Collection[str]) -> str | None:
    """The game of `names` a message is for: the one its orders name, else the first one its
    subject is tagged with; None when it names none of them."""
    named = named_game(orders)
    if named in names:
        return named
    return next((tag for tag in tagged_games(subject) if tag in names), None)
