"""One game read from its history alone (docs/standings.md): its result (finished or not, who
won and how, every seat's place) and what each player did in it (turns played, missed, away).

- the game's name and seats come from the `[setup]` of history/0000.toml; who holds a seat from
  its `seat_taken` events (the seat's own name until then);
- a player's turns are the resolutions that needed their seat's orders while they held it:
  missed when a `missed_turn` event says so, away when an `away` event does, played otherwise;
- a finished game's places are the winner or the winning team first, tied, then the seats
  never out of the game by their territories at the end (ties tied), then the seats out of the
  game, the last to fall first.

How the games of a root make the standings and the ratings is `standings`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pbem.core.events import (
    Away,
    Conquered,
    Dealt,
    Drafted,
    Dropped,
    Eliminated,
    MissedTurn,
    MissionCompleted,
    RoundsOver,
    SeatTaken,
    Won,
)
from pbem.core.state import NEUTRAL
from pbem.errors import GameFileError
from pbem.records import clock
from pbem.records.history import HistoryRecord, history_count, read_history
from pbem.records.root import fold

VICTORIES = ("conquest", "mission", "rounds", "team")
"""The kinds of victory: everyone else out of the game; a secret mission done (the
`mission_completed` event before `won`); the most territories when the last round was over
(`rounds_over` before `won`); a team's (a `won` whose `team` has more than one player, whatever
ended the game)."""

ENDS = ("won", "survived", "eliminated", "dropped")
"""How a seat ended a finished game (`Place.end`)."""


@dataclass(frozen=True)
class Place:
    """A seat's place in a finished game: `rank` 1 is the best, equal ranks are tied (the next
    rank after a tie skips as many as are tied: 1, 1, 3)."""

    rank: int
    seat: str
    player: str
    """Who held the seat at the end: the one the result counts for."""
    end: str
    """One of ENDS."""
    territories: int
    """The territories the seat held at the end."""
    turn: int | None = None
    """For a seat out of the game, the turn it fell in."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "seat": self.seat,
            "player": self.player,
            "end": self.end,
            "territories": self.territories,
            "turn": self.turn,
        }


@dataclass(frozen=True)
class GameResult:
    """A game as its history tells it."""

    name: str
    path: str
    """The game's folder, relative to the root ("." when the root is the game)."""
    time: str | None
    """The `time` of its last history file, as recorded (None when not recorded)."""
    resolutions: int
    turn: int
    """The turn its last history file resolved."""
    seats: tuple[str, ...]
    finished: bool
    victory: str | None = None
    """For a finished game, one of VICTORIES."""
    winners: tuple[str, ...] = ()
    """For a finished game, the players who won (the holders of the winning seats)."""
    places: tuple[Place, ...] = ()
    """For a finished game, every seat's place, best first."""
    teams: tuple[tuple[str, ...], ...] = ()
    """In a team game, its teams (seats); such a game is rated team against team."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "time": self.time,
            "resolutions": self.resolutions,
            "turn": self.turn,
            "seats": list(self.seats),
            "finished": self.finished,
            "victory": self.victory,
            "winners": list(self.winners),
            "places": [p.to_dict() for p in self.places],
            **({"teams": [list(t) for t in self.teams]} if self.teams else {}),
        }


@dataclass
class Turns:
    played: int = 0
    missed: int = 0
    away: int = 0


@dataclass(frozen=True)
class GameRead:
    """A game read from its history: its result, and what each player did in it."""

    result: GameResult
    ended: datetime | None
    held: tuple[str, ...]
    """Everyone who held a seat, in the order they came."""
    turns: Mapping[str, Turns] = field(default_factory=dict)

    def order(self) -> tuple[bool, datetime, str, str, str]:
        """The key games are rated in (`game_order`)."""
        when = self.ended or datetime(1970, 1, 1, tzinfo=timezone.utc)
        name = self.result.name
        return (self.ended is not None, when, fold(name), name, self.result.path)


def game_order(game: GameRead) -> tuple[bool, datetime, str, str, str]:
    """Games are rated by the time their last history file records (the resolution that
    ended a finished game), compared as instants whatever their offsets; games whose last
    history file has no time (made before pbem recorded it, or by a program that gave none)
    come first; then by name (letters in any case alike, then as written), then by folder."""
    return game.order()


def _seat_of(name: object, seats: Sequence[str], where: str) -> str:
    if not isinstance(name, str) or name not in seats:
        raise GameFileError(f"{where} names '{name}', who has no seat in the game")
    return name


def read_game_history(directory: Path, path: str) -> GameRead:
    """A game's result and its players' turns from its history; GameFileError when the history
    cannot be read or does not hold together."""
    count = history_count(directory)
    if count == 0:
        raise GameFileError("it has no history: history/0000.toml is missing")
    records: list[HistoryRecord] = [read_history(directory, r) for r in range(count)]
    setup = records[0].setup
    if not isinstance(setup, Mapping):
        raise GameFileError("history/0000.toml has no [setup]")
    name, listed = setup.get("game"), setup.get("players")
    if not isinstance(name, str) or not name:
        raise GameFileError("history/0000.toml gives the game no name")
    if (
        not isinstance(listed, list)
        or len(listed) < 2
        or not all(isinstance(p, str) and p and p != NEUTRAL for p in listed)
        or len({fold(p) for p in listed}) != len(listed)
    ):
        raise GameFileError("history/0000.toml does not list the game's players")
    seats: tuple[str, ...] = tuple(listed)
    holder = {s: s for s in seats}
    held: dict[str, str] = {fold(s): s for s in seats}
    turns: dict[str, Turns] = {}
    owner: dict[str, str] = {}
    fallen: dict[str, tuple[str, int]] = {}  # seat: (how, turn), in the order they fell
    won: Won | None = None
    ended_by = "conquest"
    last = len(records) - 1
    for r, record in enumerate(records):
        where = f"history/{r:04d}.toml"
        for e in record.events:
            if isinstance(e, SeatTaken):
                seat = _seat_of(e.player, seats, where)
                if not isinstance(e.holder, str) or not e.holder:
                    raise GameFileError(f"{where} hands the seat {seat} to nobody")
                holder[seat] = e.holder
                held.setdefault(fold(e.holder), e.holder)
                for territory in e.returned or ():
                    owner[territory] = seat
                fallen.pop(seat, None)  # (a dropped seat back in the game)
        if r > 0:
            missed = {
                _seat_of(e.player, seats, where) for e in record.events if isinstance(e, MissedTurn)
            }
            away = {_seat_of(e.player, seats, where) for e in record.events if isinstance(e, Away)}
            for seat in dict.fromkeys([*record.players, *sorted(missed), *sorted(away)]):
                tally = turns.setdefault(fold(holder[_seat_of(seat, seats, where)]), Turns())
                if seat in missed:
                    tally.missed += 1
                elif seat in away:
                    tally.away += 1
                else:
                    tally.played += 1
        for e in record.events:
            if isinstance(e, Dealt):
                for territory in e.territories:
                    owner[territory] = e.player
            elif isinstance(e, Drafted):
                owner[e.territory] = e.player
            elif isinstance(e, Conquered):
                owner[e.target] = e.player
            elif isinstance(e, Dropped):
                seat = _seat_of(e.player, seats, where)
                for territory, who in owner.items():
                    if who == seat:
                        owner[territory] = NEUTRAL
                fallen.pop(seat, None)
                fallen[seat] = ("dropped", record.turn)
            elif isinstance(e, Eliminated):
                seat = _seat_of(e.player, seats, where)
                fallen.pop(seat, None)
                fallen[seat] = ("eliminated", record.turn)
            elif isinstance(e, MissionCompleted):
                ended_by = "mission"
            elif isinstance(e, RoundsOver):
                ended_by = "rounds"
            elif isinstance(e, Won) and won is None:
                won = e
                for seat in (e.player, *(e.team or ())):
                    _seat_of(seat, seats, where)
        if won is not None:
            last = r  # (anything after the end is not the game's)
            break
    time = records[last].time
    ended = None
    if time is not None:
        ended = clock.parse_instant(time, f"the time of history/{last:04d}.toml")
    result = GameResult(
        name=name,
        path=path,
        time=time,
        resolutions=count,
        turn=records[last].turn,
        seats=seats,
        finished=won is not None,
    )
    if won is not None:
        team = won.team or (won.player,)
        result = replace(
            result,
            victory="team" if len(team) > 1 else ended_by,
            winners=tuple(holder[s] for s in team),
            places=_places(seats, team, fallen, owner, holder),
            teams=_teams_of(setup, seats, where),
        )
    return GameRead(result, ended, tuple(held.values()), turns)


def _teams_of(
    setup: Mapping[str, Any], seats: Sequence[str], where: str
) -> tuple[tuple[str, ...], ...]:
    """The teams of a team game as its [setup] gives them (seats), or () without teams."""
    teams = setup.get("teams", [])
    if not isinstance(teams, list) or not all(isinstance(t, list) for t in teams):
        raise GameFileError("history/0000.toml gives its teams in a shape pbem never writes")
    return tuple(tuple(_seat_of(str(s), seats, where) for s in team) for team in teams)


def _places(
    seats: Sequence[str],
    team: Sequence[str],
    fallen: Mapping[str, tuple[str, int]],
    owner: Mapping[str, str],
    holder: Mapping[str, str],
) -> tuple[Place, ...]:
    """The ranking of a finished game: the winners tied first (in seat order), then the seats
    still in the game by their territories (ties tied), then the seats out of the game, the
    last to fall first."""
    held = dict.fromkeys(seats, 0)
    for who in owner.values():
        if who in held:
            held[who] += 1
    groups: list[list[tuple[str, str, int | None]]] = [
        [(s, "won", None) for s in seats if s in team]
    ]
    survivors = [s for s in seats if s not in team and s not in fallen]
    for count in sorted({held[s] for s in survivors}, reverse=True):
        groups.append([(s, "survived", None) for s in survivors if held[s] == count])
    for seat, (how, turn) in reversed(list(fallen.items())):
        if seat not in team:
            groups.append([(seat, how, turn)])
    places: list[Place] = []
    rank = 1
    for group in groups:
        places += [Place(rank, s, holder[s], end, held[s], turn) for s, end, turn in group]
        rank += len(group)
    return tuple(places)
