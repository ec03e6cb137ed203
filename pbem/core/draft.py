"""The draft setup: territories chosen round by round from ranked lists.

Every player sends a ranked list of territories (best first); the neutral of a two-player game
sends none. The territories are dealt round by round in seat order (the neutral last): each
picker takes the highest-ranked territory of their list that is still free. When the list says
"rest" there, or is used up, or the player sent none (the autopilot's list is just "rest"), the
fill-in rule picks for them:

    the free territory in the continent where the picker already holds the most territories;
    among equals, the first free one in board order.

So a player with nothing yet takes the first free territory in board order, and one who has
started a continent goes on filling it. Pure: the picks are a function of the lists alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pbem.core.board import Board
from pbem.core.orders import REST

LIST = "list"
FILL_IN = "rest"


@dataclass(frozen=True)
class Pick:
    """One territory taken in the draft: by whom, in which round, and how chosen."""

    player: str
    territory: str
    round: int
    by: str


def fill_in(board: Board, owner: Mapping[str, str | None], player: str) -> str:
    """The fill-in rule's pick for `player` (see the module): a free territory must be left."""
    held: dict[str, int] = {}
    for t, o in owner.items():
        if o == player:
            continent = board.territories[t].continent
            held[continent] = held.get(continent, 0) + 1
    free = [t for t in board.names if owner[t] is None]
    # max() keeps the first of equals: board order breaks ties.
    return max(free, key=lambda t: held.get(board.territories[t].continent, 0))


def run(board: Board, pickers: Sequence[str], lists: Mapping[str, Sequence[str]]) -> list[Pick]:
    """Every pick of the draft, in order. `pickers` in seat order; a picker without a list
    (the neutral) picks by the fill-in rule throughout."""
    owner: dict[str, str | None] = dict.fromkeys(board.names)
    cursor = dict.fromkeys(pickers, 0)
    picks: list[Pick] = []
    left = len(board.names)
    round_number = 0
    while left:
        round_number += 1
        for player in pickers:
            if not left:
                break
            ranked = lists.get(player, ())
            i = cursor[player]
            while i < len(ranked) and ranked[i] != REST and owner[ranked[i]] is not None:
                i += 1
            cursor[player] = i
            if i < len(ranked) and ranked[i] != REST:
                territory, by = ranked[i], LIST
            else:
                territory, by = fill_in(board, owner, player), FILL_IN
            owner[territory] = player
            left -= 1
            picks.append(Pick(player, territory, round_number, by))
    return picks
