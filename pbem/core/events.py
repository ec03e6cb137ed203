"""Events: the one record of what happened in a resolution.

Reports render them, the history stores them, the audit replays and compares them. Each event
is a frozen dataclass whose `kind` names it in files; `to_dict`/`event_from_dict` round-trip.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        """The event as plain data: its kind, then its fields (None left out, tuples as lists)."""
        out: dict[str, Any] = {"type": self.kind}
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if value is None:
                continue
            out[name] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class RolledForFirst(Event):
    """A die rolled to decide who plays first (ties roll again)."""

    kind: ClassVar[str] = "rolled_for_first"
    player: str
    die: int


@dataclass(frozen=True)
class SeatsDecided(Event):
    """The order of play: the winner of the first roll, then round the table."""

    kind: ClassVar[str] = "seats_decided"
    order: tuple[str, ...]


@dataclass(frozen=True)
class Dealt(Event):
    """Territories dealt to a player (or the neutral) at setup, one army each."""

    kind: ClassVar[str] = "dealt"
    player: str
    territories: tuple[str, ...]


@dataclass(frozen=True)
class Reinforced(Event):
    """A player's turn began: the armies they get before any card trade."""

    kind: ClassVar[str] = "reinforced"
    player: str
    turn: int
    territories: int
    from_territories: int
    continents: tuple[str, ...]
    from_continents: int


@dataclass(frozen=True)
class Traded(Event):
    """A set of cards traded in for armies (`forced` after an elimination, or with `unwritten`
    when the player held 5 or more cards and their orders traded none: pbem chose the set;
    None in events written before it existed, and left out of the history then)."""

    kind: ClassVar[str] = "traded"
    player: str
    cards: tuple[str, ...]
    value: int
    set_number: int
    forced: bool = False
    unwritten: bool | None = None


@dataclass(frozen=True)
class Placed(Event):
    """Armies placed on a territory; `why` is orders, card (+2), setup, random or elimination."""

    kind: ClassVar[str] = "placed"
    player: str
    territory: str
    armies: int
    why: str = "orders"


@dataclass(frozen=True)
class DiceKeyed(Event):
    """The orders a resolution's dice come from (games whose dice follow the orders): the
    players whose order files it resolved, in seat order, with the SHA-256 of each as pbem
    writes it back, and `again` (hex) when the resolution was played again after an undo with
    other orders than the first time (docs/dice.md). The first event of such a resolution."""

    kind: ClassVar[str] = "dice_keyed"
    players: tuple[str, ...]
    digests: tuple[str, ...]
    again: str | None = None

    @property
    def orders(self) -> bytes:
        """D, the digest of the orders (pbem.core.dice.orders_digest of the files')."""
        from pbem.core.dice import orders_digest

        return orders_digest([bytes.fromhex(d) for d in self.digests])


@dataclass(frozen=True)
class Rolled(Event):
    """One roll of a battle: both sides' dice as rolled, unsorted, and the losses."""

    kind: ClassVar[str] = "rolled"
    player: str
    source: str
    target: str
    defender_name: str
    attacker: tuple[int, ...]
    defender: tuple[int, ...]
    attacker_losses: int
    defender_losses: int


def rolled(
    player: str,
    source: str,
    target: str,
    defender_name: str,
    attacker: tuple[int, ...],
    defender: tuple[int, ...],
    attacker_losses: int,
    defender_losses: int,
) -> Rolled:
    """Rolled(...) built the quick way, for the battle loop that makes thousands of them: one
    dict update instead of a frozen dataclass's guarded assignment per field. The event is the
    same in every way (equal, same hash, still frozen)."""
    event = Rolled.__new__(Rolled)
    event.__dict__.update(
        player=player,
        source=source,
        target=target,
        defender_name=defender_name,
        attacker=attacker,
        defender=defender,
        attacker_losses=attacker_losses,
        defender_losses=defender_losses,
    )
    return event


@dataclass(frozen=True)
class Conquered(Event):
    """A territory taken, and the armies moved into it."""

    kind: ClassVar[str] = "conquered"
    player: str
    source: str
    target: str
    loser: str
    moved: int
    note: str | None = None
    battle: int | None = None
    """In a fog game, the battle's number on its pair in the turn (its label, docs/fog.md)."""


@dataclass(frozen=True)
class AttackStopped(Event):
    """An attack that ended without taking its target, and why."""

    kind: ClassVar[str] = "attack_stopped"
    player: str
    source: str
    target: str
    reason: str
    battle: int | None = None
    """In a fog game, the battle's number on its pair in the turn (its label, docs/fog.md)."""


@dataclass(frozen=True)
class Eliminated(Event):
    """A player lost their last territory; the victor takes their cards."""

    kind: ClassVar[str] = "eliminated"
    player: str
    by: str
    cards_taken: int


@dataclass(frozen=True)
class DrewCard(Event):
    """The card drawn at the end of a turn with a conquest (secret to all but its owner)."""

    kind: ClassVar[str] = "drew_card"
    player: str
    card: str


@dataclass(frozen=True)
class Reshuffled(Event):
    """The draw pile was empty when `player` was to draw: the discard pile (`cards` traded
    cards, public) became the new draw pile, from which the hidden stream draws as ever."""

    kind: ClassVar[str] = "reshuffled"
    player: str
    cards: int


@dataclass(frozen=True)
class DrewNoCard(Event):
    """A card was earned but none could be drawn, and why (every card is in a hand)."""

    kind: ClassVar[str] = "drew_no_card"
    player: str
    reason: str


@dataclass(frozen=True)
class Fortified(Event):
    """The one move of armies at the end of a turn."""

    kind: ClassVar[str] = "fortified"
    player: str
    source: str
    target: str
    armies: int
    note: str | None = None


@dataclass(frozen=True)
class Skipped(Event):
    """An accepted order that became impossible during resolution, and why."""

    kind: ClassVar[str] = "skipped"
    player: str
    order: str
    reason: str


@dataclass(frozen=True)
class MissedTurn(Event):
    """No valid orders from a player by the deadline: the autopilot plays their turn
    (`missed`: their turns missed in a row, this one included)."""

    kind: ClassVar[str] = "missed_turn"
    player: str
    turn: int
    missed: int


@dataclass(frozen=True)
class Away(Event):
    """A player away on a vacation they declared (`until`: its last day) in a game whose
    autopilot plays for players away: the autopilot played their turn, and it does not count
    as missed (their count of turns missed in a row stays as it was)."""

    kind: ClassVar[str] = "away"
    player: str
    turn: int
    until: str


@dataclass(frozen=True)
class SeatTaken(Event):
    """`holder` took over the seat `player` from `previous` (its holder until then) before
    this resolution, on the moderator's word: the seat keeps its armies, cards and mission,
    and its turns missed in a row start again from none. First in its resolution.

    A seat that was dropped after missed turns comes back with `returned`: the territories it
    held when it was dropped that are still neutral, with the armies on them now (its cards
    went back to the pile when it left, and it starts without any)."""

    kind: ClassVar[str] = "seat_taken"
    player: str
    holder: str
    previous: str
    turn: int
    returned: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Dropped(Event):
    """A player who missed `missed` turns in a row leaves the game: their armies stay as
    neutral armies, their cards go back to the pile."""

    kind: ClassVar[str] = "dropped"
    player: str
    missed: int
    territories: int
    armies: int
    cards: int


@dataclass(frozen=True)
class RoundsOver(Event):
    """The last round of a game with a round limit is over: `player`, with the most
    territories (then the most armies, then the earliest to play), wins (Won follows)."""

    kind: ClassVar[str] = "rounds_over"
    rounds: int
    player: str
    territories: int
    armies: int
    team: tuple[str, ...] | None = None
    """In a team game, `player`'s team, whose territories and armies these are together."""


@dataclass(frozen=True)
class Won(Event):
    """The game is over: one player is left standing, or one did their mission; in a team
    game `team` won together (one team left in the game, or `player`, of it, did their
    mission)."""

    kind: ClassVar[str] = "won"
    player: str
    team: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Drafted(Event):
    """A territory taken in the draft, one army on it: in `round`, from the player's ranked
    list (`by` "list") or by the fill-in rule (`by` "rest": the list said so, ran out, or the
    autopilot sent none)."""

    kind: ClassVar[str] = "drafted"
    player: str
    territory: str
    round: int
    by: str = "list"


@dataclass(frozen=True)
class MissionDealt(Event):
    """A secret mission card dealt at setup (secret to all but its holder until the end)."""

    kind: ClassVar[str] = "mission_dealt"
    player: str
    mission: str


@dataclass(frozen=True)
class MissionFellBack(Event):
    """`player`'s "destroy" mission became "occupy 24 territories": its target left the game
    by another's hand or was dropped (secret to all but its holder until the end)."""

    kind: ClassVar[str] = "mission_fell_back"
    player: str
    target: str
    reason: str


@dataclass(frozen=True)
class MissionCompleted(Event):
    """A player did their secret mission (`mission`: the one they played for, `card`: the
    card dealt); the game ends at once, and everyone learns it."""

    kind: ClassVar[str] = "mission_completed"
    player: str
    mission: str
    card: str


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RoundsOver,
        RolledForFirst,
        SeatsDecided,
        Dealt,
        Reinforced,
        Traded,
        Placed,
        DiceKeyed,
        Rolled,
        Conquered,
        AttackStopped,
        Eliminated,
        DrewCard,
        Reshuffled,
        DrewNoCard,
        Fortified,
        Skipped,
        MissedTurn,
        Away,
        SeatTaken,
        Dropped,
        Won,
        Drafted,
        MissionDealt,
        MissionFellBack,
        MissionCompleted,
    )
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from `Event.to_dict` output (lists become tuples again)."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    values = {}
    for name in _field_names(cls):
        if name in data:
            value = data[name]
            values[name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


_FIELD_NAMES: dict[str, tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    """The names of an event class's fields, in order (looked up once per class)."""
    names = _FIELD_NAMES.get(cls.__qualname__)
    if names is None:
        names = _FIELD_NAMES[cls.__qualname__] = tuple(f.name for f in fields(cls))
    return names
