"""Fog of war, what each player is told of a resolution (docs/fog.md): the events as told to
them, and the battles with the numbers that make their labels. Apart from `pbem.core.fog` so
that what checks orders loads no events.

Pure: no files, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

from pbem.core.events import (
    AttackStopped,
    Conquered,
    Dealt,
    Drafted,
    DrewCard,
    DrewNoCard,
    Dropped,
    Eliminated,
    Event,
    Fortified,
    Placed,
    Reinforced,
    Reshuffled,
    Rolled,
    SeatTaken,
    Skipped,
    Traded,
)
from pbem.core.fog import Roll, label, sight_of
from pbem.core.state import FogLevel, GameState

# --- what a player is told of a resolution -------------------------------------------------------


@dataclass(frozen=True)
class TurnPlayed(Event):
    """Under heavy fog, the start of another side's turn, told as whose it is in place of
    their reinforcements; `seen`: whether anything of the turn is told after it (never
    recorded: what `told` gives for the story)."""

    kind: ClassVar[str] = "turn_played"
    player: str
    turn: int
    seen: bool = True


@dataclass(frozen=True)
class LeftGame(Event):
    """Under fog, another side's player out of the game, told without what fog hides: by
    whose hand (`by`, who played the turn, which everyone knows) but not the cards taken in
    heavy fog; after missed turns (`by` None) without the armies left (never recorded)."""

    kind: ClassVar[str] = "left_game"
    player: str
    by: str | None = None


@dataclass(frozen=True)
class MovedSeen(Event):
    """Under fog, another side's fortification of which the reader sees one end: armies moved
    into it (`into`) or out of it, and how many (never recorded)."""

    kind: ClassVar[str] = "moved_seen"
    player: str
    territory: str
    armies: int
    into: bool


@dataclass(frozen=True)
class CardsHidden(Event):
    """Under heavy fog, one's own draw from a reshuffled pile (`reshuffled`) or no draw at all,
    told without the pile sizes that would count the others' hands (never recorded)."""

    kind: ClassVar[str] = "cards_hidden"
    player: str
    reshuffled: bool


_PAIRED = (Rolled, Conquered, AttackStopped)
_COUNTED = (Reinforced, Traded, DrewCard, DrewNoCard, Reshuffled)
"""Events that follow from what light fog shows (owners, card counts): told to all there."""


def owners_before(state: GameState, events: Sequence[Event]) -> dict[str, str]:
    """Who held each territory before `events` (the state after them), as far as conquests
    tell: each conquest's target goes back to its loser."""
    owner = {t: h.owner for t, h in state.territories.items()}
    for e in reversed(events):
        if isinstance(e, Conquered):
            owner[e.target] = e.loser
    return owner


def seen_during(state: GameState, events: Sequence[Event], player: str) -> frozenset[str]:
    """The territories `player` saw during the resolution of `events` (`state`, after it): at
    its start or at its end."""
    team = state.team(player)
    board = state.board
    seen: set[str] = set()
    for owner in (owners_before(state, events), {t: h.owner for t, h in state.territories.items()}):
        held = [t for t, o in owner.items() if o in team]
        seen.update(held)
        for t in held:
            seen.update(board.neighbours(t))
    return frozenset(seen)


def told(state: GameState, events: Sequence[Event], player: str | None) -> tuple[Event, ...]:
    """The events of a resolution as `player` is told them under fog (docs/fog.md), `state`
    the state after it: all of them without fog, for the moderator and once the game is over.
    Another side's battles on a pair either of whose territories was seen, placements and
    fortifications on seen territories; in light fog also their reinforcements, trades and
    draws; a player out of the game always, by whose hand only when the conquest was told;
    a turn of which nothing is told as whose it was."""
    if sight_of(state, player) is None or player is None:
        return tuple(events)
    team = state.team(player)
    light = state.options.fog is FogLevel.LIGHT
    seen = seen_during(state, events, player)
    pairs = {(e.source, e.target) for e in events if isinstance(e, _PAIRED)}
    shown = {p for p in pairs if p[0] in seen or p[1] in seen}
    out: list[Event] = []
    for e in events:
        who = getattr(e, "player", None)
        if isinstance(e, Reinforced) and who not in team and not light:
            out.append(TurnPlayed(e.player, e.turn))
            continue
        if isinstance(e, Eliminated):  # (whose turn it is is known: by whose hand too)
            mine = e.by in team or e.player in team
            out.append(e if light or mine else LeftGame(e.player, e.by))
            continue
        if isinstance(e, Dropped) and who not in team:
            out.append(LeftGame(e.player))
            continue
        if (
            isinstance(e, Fortified)
            and who not in team
            and not (e.source in seen and e.target in seen)
        ):
            if e.source in seen or e.target in seen:  # (one end seen: what changed there)
                into = e.target in seen
                out.append(MovedSeen(e.player, e.target if into else e.source, e.armies, into))
            continue
        if not light and isinstance(e, (Reshuffled, DrewNoCard)):  # (sizes count the hands)
            if who in team:
                out.append(CardsHidden(e.player, isinstance(e, Reshuffled)))
            continue
        if not light and isinstance(e, SeatTaken) and e.returned and who not in team:
            out.append(replace(e, returned=None))  # (the land it got back counts its holdings)
            continue
        if who in team or not _hidden(e, seen, shown, light):
            out.append(e)
    if (
        out
        and isinstance(out[-1], TurnPlayed)
        or (len(out) == 2 and isinstance(out[0], TurnPlayed) and isinstance(out[1], LeftGame))
    ):
        out = [replace(e, seen=False) if isinstance(e, TurnPlayed) else e for e in out]
    return tuple(out)


def _hidden(e: Event, seen: frozenset[str], shown: set[tuple[str, str]], light: bool) -> bool:
    """Whether fog hides another side's event `e` (docs/fog.md)."""
    if isinstance(e, _PAIRED):
        return (e.source, e.target) not in shown
    if isinstance(e, Placed):
        return e.territory not in seen
    if isinstance(e, Drafted):
        return not light and e.territory not in seen
    if isinstance(e, Dealt):
        return not light
    if isinstance(e, _COUNTED):
        return not light
    return isinstance(e, Skipped)  # (a skipped order is its player's alone)


# --- the battles of a resolution, for their dice check ----------------------------------------


@dataclass(frozen=True)
class Battle:
    """A battle of a fog game's resolution as its events record it: its pair, its number on
    the pair in the turn, and its rolls (the attacker's dice, the defender's)."""

    source: str
    target: str
    number: int
    rolls: tuple[Roll, ...]

    @property
    def label(self) -> str:
        return label(self.source, self.target, self.number)


def battles(events: Sequence[Event]) -> list[Battle]:
    """The battles of a fog game's resolution (its end events carry their numbers)."""
    out: list[Battle] = []
    rolls: list[Roll] = []
    for e in events:
        if isinstance(e, Rolled):
            rolls.append((e.attacker, e.defender))
        elif isinstance(e, (AttackStopped, Conquered)) and e.battle is not None:
            out.append(Battle(e.source, e.target, e.battle, tuple(rolls)))
            rolls = []
    return out
