"""The game state: plain, serialisable, immutable data, and the queries every part asks of it."""

from __future__ import annotations

import enum
import hashlib
import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from pbem.core.board import Board

NEUTRAL = "neutral"
PLAYER_NAME_LENGTH = 32
PLAYER_NAME_RULE = (
    f"up to {PLAYER_NAME_LENGTH} letters (any alphabet), digits, '-' or '_', starting with a "
    "letter, and not 'neutral'"
)
_NAME_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Nd"})
"""Letters of any alphabet (with their combining marks) and decimal digits."""
_DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))}
)
"""Names that some systems refuse as file names."""


def valid_player_name(name: str) -> bool:
    """Whether a name keeps to the naming rule, so that files named after it stay in the
    game directory (reports/NNNN/<name>.txt, orders/<name>.toml): letters of any alphabet,
    digits, '-' and '_' only (no separator, no dot), starting with a letter, in NFC (the one
    spelling of an accented letter that every system keeps), at most PLAYER_NAME_LENGTH long,
    and neither 'neutral' nor a device name in any case. Names differing only in case are
    one name (see `same_name`): a file system may not tell them apart."""
    return (
        0 < len(name) <= PLAYER_NAME_LENGTH
        and unicodedata.normalize("NFC", name) == name
        and unicodedata.category(name[0]) in _NAME_CATEGORIES - {"Mn", "Mc", "Nd"}
        and all(c in "-_" or unicodedata.category(c) in _NAME_CATEGORIES for c in name)
        and name.casefold() != NEUTRAL
        and name.upper() not in _DEVICE_NAMES
    )


def player_name(text: str) -> str:
    """A name as typed, in the one spelling `valid_player_name` accepts (NFC)."""
    return unicodedata.normalize("NFC", text.strip())


def same_name(a: str, b: str) -> bool:
    """Whether two player names are one name (they differ at most in case)."""
    return a.casefold() == b.casefold()


"""The owner name of the neutral armies (of a two-player game, or left by a dropped player);
no player may take it."""

DEFAULT_DROP_AFTER = 3
"""Missed turns in a row after which a player leaves the game, unless the game says otherwise."""


class Phase(str, enum.Enum):
    DRAFT = "draft"
    SETUP = "setup"
    PLAY = "play"
    OVER = "over"


class SetupMode(str, enum.Enum):
    DEAL = "deal"
    RANDOM = "random"
    DRAFT = "draft"


class TwoPlayer(str, enum.Enum):
    NEUTRAL = "neutral"
    CLASSIC = "classic"


class FortifyMode(str, enum.Enum):
    """Where a turn's fortification may move armies: to an adjacent territory of the player's,
    through any chain of the player's territories, to any territory of the player's
    (`unlimited`), or nowhere (`none`: no fortification)."""

    ADJACENT = "adjacent"
    CONNECTED = "connected"
    UNLIMITED = "unlimited"
    NONE = "none"


class CardRule(str, enum.Enum):
    """The cards: sets worth more each time one is traded in the game (4, 6, 8, 10, 12, 15,
    then 5 more each: `escalating`, the classic rule); each set worth what it shows, however
    many were traded before (`flat`: three infantry 4, three cavalry 6, three artillery 8, one
    of each 10, a wild card standing for whatever makes its set worth most); or a game without
    cards (`none`: no card is drawn, none is traded)."""

    ESCALATING = "escalating"
    FLAT = "flat"
    NONE = "none"


class FogLevel(str, enum.Enum):
    """Fog of war (docs/fog.md): none; `light`, every owner shown, armies only where the
    player sees; `heavy`, owners hidden too where the player does not see."""

    NONE = "none"
    LIGHT = "light"
    HEAVY = "heavy"


class TradedCards(str, enum.Enum):
    """Where traded cards go: set aside face up on a discard pile until the draw pile runs out
    (the rule texts), or straight back into the deck (every game made before pbem recorded it)."""

    ASIDE = "aside"
    DECK = "deck"


class StopAt(str, enum.Enum):
    """What an attack's `stop_at` means: a promise, the attacker rolls fewer dice when needed
    so that no roll takes the attacking territory below it (the rule of games made from format
    4 on); or a threshold, the attack stops once the territory is down to it, though the last
    roll may take it lower (every game made before pbem recorded the rule)."""

    PROMISE = "promise"
    THRESHOLD = "threshold"


class DiceRule(str, enum.Enum):
    """Where a resolution's dice come from: its key and the orders it resolves, so that a
    turn played again after an undo rolls the same dice for the same orders and unforeseeable
    ones for other orders (the rule of games made from format 6 on, docs/dice.md); or its key
    alone (every game made before pbem recorded the rule)."""

    ORDERS = "orders"
    KEY = "key"


class AutopilotRule(str, enum.Enum):
    """Where the autopilot puts the armies of a player's setup turn (pbem.core.autopilot): over
    every territory of theirs that borders another owner's, fewest first (the rule of games
    made from format 7 on); or, as before, all next to the largest enemy stack, which in a
    dealt setup (every stack of one army) is the first enemy territory in board order."""

    BORDERS = "borders"
    FRONT = "front"


@dataclass(frozen=True)
class Options:
    """The rules options a game is created with; they never change afterwards.

    `drop_after`: a player who misses this many turns in a row leaves the game (0: never).
    `missions`: Secret Mission Risk (each player wins by their own secret mission)."""

    setup: SetupMode = SetupMode.DEAL
    two_player: TwoPlayer = TwoPlayer.NEUTRAL
    fortify: FortifyMode = FortifyMode.ADJACENT
    traded_cards: TradedCards = TradedCards.ASIDE
    drop_after: int = DEFAULT_DROP_AFTER
    missions: bool = False
    stop_at: StopAt = StopAt.PROMISE
    dice: DiceRule = DiceRule.ORDERS
    autopilot: AutopilotRule = AutopilotRule.BORDERS
    cards: CardRule = CardRule.ESCALATING
    territory_bonus: bool = True
    """Whether a traded card that shows a territory the trader holds puts 2 armies there."""
    fortifies: int = 1
    """How many fortifications a player may make in a turn."""
    rounds: int = 0
    """After how many rounds of play the game ends (0: it goes on until it is won): then the
    player with the most territories wins, then the most armies, then the earliest to play."""
    teams: tuple[tuple[str, ...], ...] = ()
    """The teams of a team game, each its players in the order they were named (none: every
    player for themselves). Team-mates never attack each other and win together."""
    team_fortify: bool = False
    """In a team game, whether a player may fortify into a team-mate's territory."""
    team_cards: bool = False
    """In a team game, whether each player sees their team-mates' cards."""
    fog: FogLevel = FogLevel.NONE
    """Fog of war: what each player sees of the others (docs/fog.md)."""

    def to_dict(self) -> dict[str, Any]:
        """Every option, spelt out (what a new game records); `drop_after` only when not the
        default, `missions` only when set, `dice` only when it is `orders`, `autopilot` only
        when it is `borders`, and the variants (cards, territory bonus, fortifications a turn,
        rounds) only when not classic Risk's, so that games written before they existed keep
        their digests."""
        out: dict[str, Any] = {
            "setup": self.setup.value,
            "two_player": self.two_player.value,
            "fortify": self.fortify.value,
            "traded_cards": self.traded_cards.value,
            "stop_at": self.stop_at.value,
        }
        if self.drop_after != DEFAULT_DROP_AFTER:
            out["drop_after"] = self.drop_after
        if self.missions:
            out["missions"] = True
        if self.dice_by_orders:
            out["dice"] = self.dice.value
        if self.autopilot is AutopilotRule.BORDERS:
            out["autopilot"] = self.autopilot.value
        if self.cards is not CardRule.ESCALATING:
            out["cards"] = self.cards.value
        if not self.territory_bonus:
            out["territory_bonus"] = False
        if self.fortifies != 1:
            out["fortifies"] = self.fortifies
        if self.rounds:
            out["rounds"] = self.rounds
        if self.teams:
            out["teams"] = [list(team) for team in self.teams]
            if self.team_fortify:
                out["team_fortify"] = True
            if self.team_cards:
                out["team_cards_visible"] = True
        if self.fogged:
            out["fog"] = self.fog.value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Options:
        """Options from `to_dict` output; a missing key takes its default, except the traded
        cards, stop_at, dice and autopilot rules: data that does not record them comes from
        before they were recorded, when traded cards went back into the deck, stop_at was a
        threshold, the dice came from the key alone and the autopilot placed a setup next to
        the largest enemy stack."""
        default = cls()
        return cls(
            setup=SetupMode(data.get("setup", default.setup.value)),
            two_player=TwoPlayer(data.get("two_player", default.two_player.value)),
            fortify=FortifyMode(data.get("fortify", default.fortify.value)),
            traded_cards=TradedCards(data.get("traded_cards", TradedCards.DECK.value)),
            drop_after=int(data.get("drop_after", default.drop_after)),
            missions=_flag(data.get("missions", False), "missions"),
            stop_at=StopAt(data.get("stop_at", StopAt.THRESHOLD.value)),
            dice=DiceRule(data.get("dice", DiceRule.KEY.value)),
            autopilot=AutopilotRule(data.get("autopilot", AutopilotRule.FRONT.value)),
            cards=CardRule(data.get("cards", CardRule.ESCALATING.value)),
            territory_bonus=_flag(data.get("territory_bonus", True), "territory_bonus"),
            fortifies=_count(data.get("fortifies", 1), "fortifies", least=1),
            rounds=_count(data.get("rounds", 0), "rounds"),
            teams=_teams(data.get("teams", [])),
            team_fortify=_flag(data.get("team_fortify", False), "team_fortify"),
            team_cards=_flag(data.get("team_cards_visible", False), "team_cards_visible"),
            fog=FogLevel(data.get("fog", FogLevel.NONE.value)),
        )

    @property
    def fogged(self) -> bool:
        """Whether the game is played under fog of war."""
        return self.fog is not FogLevel.NONE

    @property
    def sets_aside(self) -> bool:
        """Whether traded cards go to the discard pile rather than back into the deck."""
        return self.traded_cards is TradedCards.ASIDE

    @property
    def with_cards(self) -> bool:
        """Whether the game plays with cards (drawn for a conquest, traded for armies)."""
        return self.cards is not CardRule.NONE

    @property
    def stop_at_promised(self) -> bool:
        """Whether `stop_at` is a promise (fewer dice) rather than a threshold."""
        return self.stop_at is StopAt.PROMISE

    @property
    def dice_by_orders(self) -> bool:
        """Whether the dice come from the key and the orders rather than the key alone."""
        return self.dice is DiceRule.ORDERS


def _teams(value: object) -> tuple[tuple[str, ...], ...]:
    """The teams as recorded: lists of names, at least two teams, no name twice."""
    if not isinstance(value, list) or not all(
        isinstance(team, list) and team and all(isinstance(n, str) for n in team) for team in value
    ):
        raise ValueError(f"'teams' must be lists of player names, not {value!r}")
    teams = tuple(tuple(team) for team in value)
    names = [n for team in teams for n in team]
    if teams and (len(teams) < 2 or len(set(names)) != len(names)):
        raise ValueError(f"'teams' must be two or more teams, no player in two: {value!r}")
    return teams


def _count(value: object, key: str, least: int = 0) -> int:
    """A whole number of at least `least`; anything else is bad data."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"'{key}' must be a whole number of at least {least}, not {value!r}")
    return value


def _flag(value: object, key: str) -> bool:
    """A true/false option; anything else is bad data."""
    if not isinstance(value, bool):
        raise ValueError(f"'{key}' must be true or false, not {value!r}")
    return value


@dataclass(frozen=True)
class Player:
    """A seat at the table: its hand, whether it still plays, armies left to place in setup,
    the turns it missed in a row (played by autopilot) and whether it was dropped for that;
    in a game with missions, the secret mission card dealt (`mission`, see missions.py) and
    whether a "destroy" mission fell back to 24 territories (`mission_fallback`)."""

    name: str
    seat: int
    alive: bool = True
    hand: tuple[str, ...] = ()
    to_place: int = 0
    missed: int = 0
    dropped: bool = False
    mission: str | None = None
    mission_fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The seat as data; `missed`, `dropped` and the mission only when set (old digests
        stay)."""
        out: dict[str, Any] = {
            "name": self.name,
            "seat": self.seat,
            "alive": self.alive,
            "hand": list(self.hand),
            "to_place": self.to_place,
        }
        if self.missed:
            out["missed"] = self.missed
        if self.dropped:
            out["dropped"] = True
        if self.mission is not None:
            out["mission"] = self.mission
        if self.mission_fallback:
            out["mission_fallback"] = True
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Player:
        return cls(
            name=str(data["name"]),
            seat=int(data["seat"]),
            alive=bool(data["alive"]),
            hand=tuple(data["hand"]),
            to_place=int(data["to_place"]),
            missed=int(data.get("missed", 0)),
            dropped=bool(data.get("dropped", False)),
            mission=str(data["mission"]) if data.get("mission") is not None else None,
            mission_fallback=bool(data.get("mission_fallback", False)),
        )


@dataclass(frozen=True)
class Holding:
    """Who holds a territory and with how many armies."""

    owner: str
    armies: int


@dataclass(frozen=True)
class GameState:
    """Everything the rules need to go on with a game; secrets and keys live elsewhere.

    `territories` is in board order and is never mutated: a resolution builds a new one.
    `deck` is the draw pile, in board order (wild cards last); `discards` the traded cards set
    aside face up (rule `aside`), in the order traded, for everyone to see.
    `resolution` is the number of the next resolution (setup was resolution 0); `turn` is the
    pending turn (0 is the setup turn of a dealt game, and the draft turn and then the setup
    turn of a drafted game; play turns count from 1). In the draft phase every territory is
    unclaimed: held by the neutral with 0 armies.
    """

    game: str
    board: Board = field(repr=False)
    options: Options
    players: tuple[Player, ...]
    territories: Mapping[str, Holding]
    deck: tuple[str, ...]
    discards: tuple[str, ...] = ()
    phase: Phase = Phase.PLAY
    turn: int = 1
    resolution: int = 1
    current: int = 0
    sets_traded: int = 0
    winner: str | None = None
    round: int = 0
    """In a game with a round limit (`Options.rounds`), the round of play under way (from 1;
    0 before play begins); 0 in every other game."""
    first_seat: int = 0
    """In a game with a round limit, the seat that played first: each round begins with it
    (or, once it is out, with the next seat still in the game)."""

    def player(self, name: str) -> Player:
        for p in self.players:
            if p.name == name:
                return p
        raise KeyError(name)

    def has_player(self, name: str) -> bool:
        return any(p.name == name for p in self.players)

    def team(self, name: str) -> tuple[str, ...]:
        """The team `name` plays in, its players in the order they were named (just `name` in
        a game without teams)."""
        return team_of(self.options.teams, name)

    @property
    def won_by(self) -> str | None:
        """Who won, as a name to show: the winner, or in a team game their team ("alice +
        carol"); None while the game goes on."""
        if self.winner is None:
            return None
        return team_name(self.team(self.winner))

    def mates(self, name: str) -> tuple[str, ...]:
        """`name`'s team-mates (none in a game without teams)."""
        return tuple(n for n in self.team(name) if n != name)

    @property
    def current_player(self) -> Player:
        return self.players[self.current]

    def awaiting(self) -> tuple[str, ...]:
        """The players whose orders the pending turn needs."""
        if self.phase in (Phase.DRAFT, Phase.SETUP):
            return tuple(p.name for p in self.players if p.alive)
        if self.phase is Phase.PLAY:
            return (self.current_player.name,)
        return ()

    def owner(self, territory: str) -> str:
        return self.territories[territory].owner

    def armies(self, territory: str) -> int:
        return self.territories[territory].armies

    def owned(self, owner: str) -> tuple[str, ...]:
        """The territories `owner` holds, in board order."""
        return tuple([t for t, h in self.territories.items() if h.owner == owner])

    def total_armies(self, owner: str) -> int:
        return sum(h.armies for h in self.territories.values() if h.owner == owner)

    def continents_held(self, owner: str) -> tuple[str, ...]:
        """The continents every territory of which `owner` holds, in board order."""
        return self.board.continents_within(self.owned(owner))

    def has_neutral(self) -> bool:
        """Whether the neutral holds armies (in the draft phase it holds only unclaimed land)."""
        if self.phase is Phase.DRAFT:
            return False
        return any(h.owner == NEUTRAL for h in self.territories.values())


def team_name(team: tuple[str, ...]) -> str:
    """A team as players read it: its players joined by " + " (one player: their name)."""
    return " + ".join(team)


def team_of(teams: tuple[tuple[str, ...], ...], name: str) -> tuple[str, ...]:
    """The team of `teams` that `name` plays in (just `name` when in none)."""
    for team in teams:
        if name in team:
            return team
    return (name,)


def state_to_dict(state: GameState) -> dict[str, Any]:
    """The state as plain data (what the game file stores), in a stable order.

    A game that puts traded cards back into the deck gives exactly what pbem gave before the
    rule existed (no rule, no discard pile), so that the digests in its history still match;
    likewise a game whose stop_at is a threshold does not name that rule."""
    options = state.options.to_dict()
    if not state.options.sets_aside:
        del options["traded_cards"]
    if not state.options.stop_at_promised:
        del options["stop_at"]
    out: dict[str, Any] = {
        "game": state.game,
        "board": state.board.name,
        "phase": state.phase.value,
        "turn": state.turn,
        "resolution": state.resolution,
        "current": state.current,
        "sets_traded": state.sets_traded,
        "options": options,
        "deck": list(state.deck),
    }
    if state.options.sets_aside:
        out["discards"] = list(state.discards)
    out |= {
        "players": [p.to_dict() for p in state.players],
        "territories": {t: [h.owner, h.armies] for t, h in state.territories.items()},
    }
    if state.winner is not None:
        out["winner"] = state.winner
    if state.options.rounds:
        out |= {"round": state.round, "first_seat": state.first_seat}
    return out


def state_from_dict(data: Mapping[str, Any], board: Board) -> GameState:
    """Rebuild a state from `state_to_dict` output; raises KeyError/ValueError on bad data."""
    return GameState(
        game=str(data["game"]),
        board=board,
        options=Options.from_dict(data["options"]),
        players=tuple(Player.from_dict(p) for p in data["players"]),
        territories={
            t: Holding(str(data["territories"][t][0]), int(data["territories"][t][1]))
            for t in board.names
        },
        deck=tuple(data["deck"]),
        discards=tuple(data.get("discards", ())),
        phase=Phase(data["phase"]),
        turn=int(data["turn"]),
        resolution=int(data["resolution"]),
        current=int(data["current"]),
        sets_traded=int(data["sets_traded"]),
        winner=data.get("winner"),
        round=int(data.get("round", 0)),
        first_seat=int(data.get("first_seat", 0)),
    )


def state_digest(state: GameState) -> str:
    """A SHA-256 of the state's canonical JSON: equal states, equal digests."""
    text = json.dumps(state_to_dict(state), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


_Frozen = TypeVar("_Frozen", "GameState", "Player")
_FIELDS = {cls: frozenset(f.name for f in fields(cls)) for cls in (GameState, Player)}


def replaced(item: _Frozen, **changes: Any) -> _Frozen:
    """`dataclasses.replace(item, **changes)` for a GameState or a Player, the quick way: the
    fields are copied and `changes` set, without calling `__init__` again (neither class checks
    anything there). The result is the same in every way (equal, same fields in the same
    order, still frozen). For the engine, which makes new states and seats every resolution."""
    unknown = changes.keys() - _FIELDS[type(item)]
    if unknown:
        raise TypeError(f"{type(item).__name__} has no field {', '.join(sorted(unknown))}")
    new = object.__new__(type(item))
    values = new.__dict__
    values.update(item.__dict__)
    values.update(changes)
    return new
