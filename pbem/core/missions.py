"""Secret Mission Risk: the mission deck, the deal, and each card's exact test.

A mission card is a short text id, stored in the player's seat (`Player.mission`):

- `continents:North America,Africa`: hold every territory of both continents;
- `continents:Europe,South America,+1`: both, and every territory of one more continent;
- `territories:24`: hold 24 territories;
- `territories:18,2`: hold 18 territories with at least 2 armies on each;
- `destroy:<player>`: eliminate that player yourself. When the target is the holder (or, in a
  team game, a team-mate of the holder's), or is eliminated by someone else, or leaves the game
  (dropped after missed turns), the mission becomes `territories:24`
  (`Player.mission_fallback` records the latter two).

In a team game each mission is still done by its holder alone, with their own territories; the
holder's team wins with them.

The deck is the published one (docs/rules.md, "Secret Mission Risk"): the 8 cards above without
a target, and one "destroy" card per seated player, in seat order. Pure: no files, no clock.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pbem.core.board import Board
from pbem.core.dice import Stream
from pbem.core.state import NEUTRAL, GameState, Player

MIN_PLAYERS = 3
MAX_PLAYERS = 6
FALLBACK = "territories:24"
"""What a "destroy" mission becomes when it cannot be done by its holder any more."""
PLUS_ONE = "+1"

FIXED_CARDS = (
    "continents:North America,Africa",
    "continents:North America,Australia",
    "continents:Asia,South America",
    "continents:Asia,Africa",
    "continents:Europe,South America,+1",
    "continents:Europe,Australia,+1",
    "territories:24",
    "territories:18,2",
)
"""The cards of the deck that name no player, in the order the deal counts them."""


@dataclass(frozen=True)
class Mission:
    """A mission card read: what it asks for."""

    card: str
    continents: tuple[str, ...] = ()
    plus_one: bool = False
    territories: int = 0
    armies_each: int = 1
    target: str | None = None

    @classmethod
    def parse(cls, card: str) -> Mission:
        """The card's test; ValueError for a card that is not in any deck."""
        kind, _, rest = card.partition(":")
        if kind == "continents" and rest:
            names = rest.split(",")
            plus_one = names[-1] == PLUS_ONE
            return cls(card, tuple(names[:-1] if plus_one else names), plus_one=plus_one)
        if kind == "territories" and rest:
            count, _, each = rest.partition(",")
            return cls(card, territories=int(count), armies_each=int(each or 1))
        if kind == "destroy" and rest:
            return cls(card, target=rest)
        raise ValueError(f"'{card}' is not a mission card")

    def describe(self) -> str:
        """The card as a player reads it."""
        if self.target is not None:
            return f"eliminate {self.target} from the game"
        if self.continents:
            named = " and ".join(self.continents)
            return f"conquer {named}" + (" and one more continent of your choice" * self.plus_one)
        if self.armies_each > 1:
            return (
                f"occupy {self.territories} territories with at least {self.armies_each} "
                "armies on each"
            )
        return f"occupy {self.territories} territories"


def deck(seats: Sequence[str]) -> tuple[str, ...]:
    """The mission deck for a game of these players: the fixed cards, then one "destroy" card
    per seated player, in seat order."""
    return FIXED_CARDS + tuple(f"destroy:{name}" for name in seats)


def deal(seats: Sequence[str], hidden: bytes) -> tuple[str, ...]:
    """One mission per seat, in seat order: each takes card number randbelow(cards left) of
    the deck (in `deck` order, a taken card leaving it) from the mission stream of the card
    key h (`Stream.missions`), as card draws do."""
    cards = list(deck(seats))
    stream = Stream.missions(hidden)
    return tuple(cards.pop(stream.randbelow(len(cards))) for _ in seats)


def current(player: Player, mates: Collection[str] = ()) -> Mission | None:
    """The mission `player` plays for now: the card dealt, or 24 territories for a "destroy"
    card aimed at themselves, at one of their team-mates (`mates`, in a team game) or fallen
    back (None in a game without missions)."""
    if player.mission is None:
        return None
    mission = Mission.parse(player.mission)
    if mission.target is not None and (
        mission.target == player.name or mission.target in mates or player.mission_fallback
    ):
        return Mission.parse(FALLBACK)
    return mission


def continent_count(board: Board, owner: Mapping[str, str], player: str, name: str) -> int:
    return sum(owner[t] == player for t in board.continents[name].territories)


def complete(
    mission: Mission,
    player: str,
    board: Board,
    owner: Mapping[str, str],
    armies: Mapping[str, int],
    alive: Mapping[str, bool],
) -> bool:
    """Whether `player` has done `mission` on this table (the exact tests of docs/rules.md)."""
    if mission.target is not None:
        return not alive.get(mission.target, True)
    if mission.continents:
        held = [
            c.name
            for c in board.continents.values()
            if all(owner[t] == player for t in c.territories)
        ]
        if not all(c in held for c in mission.continents):
            return False
        return not mission.plus_one or len(held) > len(mission.continents)
    count = sum(1 for t, o in owner.items() if o == player and armies[t] >= mission.armies_each)
    return count >= mission.territories


def completed(state: GameState, player: str) -> bool:
    """Whether `player`'s current mission is done in `state`."""
    mission = current(state.player(player), state.mates(player))
    if mission is None:
        return False
    owner = {t: h.owner for t, h in state.territories.items()}
    armies = {t: h.armies for t, h in state.territories.items()}
    alive = {p.name: p.alive for p in state.players}
    return complete(mission, player, state.board, owner, armies, alive)


def progress(state: GameState, player: str, holds: str = "you hold") -> str:
    """How far `player` is with their mission: "you hold 9/12 of Asia, 4/6 of Africa" (`holds`
    says who holds: "you hold", or "alice holds" for another reader)."""
    mission = current(state.player(player), state.mates(player))
    if mission is None:
        return ""
    board = state.board
    owner = {t: h.owner for t, h in state.territories.items()}
    if mission.target is not None:
        left = len(state.owned(mission.target))
        return f"{mission.target} holds {left} {'territory' if left == 1 else 'territories'}"
    if mission.continents:
        parts = [
            f"{continent_count(board, owner, player, c)}/{len(board.continents[c].territories)} "
            f"of {c}"
            for c in mission.continents
        ]
        text = f"{holds} " + ", ".join(parts)
        if mission.plus_one:
            others = [c for c in state.continents_held(player) if c not in mission.continents]
            text += "; one more continent: " + (", ".join(others) if others else "none held yet")
        return text
    mine = [t for t in state.owned(player) if state.armies(t) >= mission.armies_each]
    if mission.armies_each > 1:
        return (
            f"{holds} {len(mine)}/{mission.territories} territories with at least "
            f"{mission.armies_each} armies"
        )
    return f"{holds} {len(mine)}/{mission.territories} territories"


def falls_back(player: Player, gone: str, mates: Collection[str] = ()) -> bool:
    """Whether `player`'s "destroy" mission falls back now that `gone` left the game (by
    another's hand, or dropped): it aimed at `gone` and had not fallen back already (nor was
    played as 24 territories from the start, aimed at a team-mate of theirs)."""
    if player.mission is None or player.mission_fallback or player.name == gone:
        return False
    if gone in mates:
        return False
    return Mission.parse(player.mission).target == gone


def check_order(names: Sequence[str], first: str) -> list[str]:
    """The players in the order their missions are checked: `first` (who acts), then round
    the table in seat order; the neutral is never one."""
    if first not in names:
        return [n for n in names if n != NEUTRAL]
    i = list(names).index(first)
    return [n for n in (*names[i:], *names[:i]) if n != NEUTRAL]
