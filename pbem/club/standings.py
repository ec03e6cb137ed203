"""Standings and ratings across the games of a root, from their histories alone.

Every number here is worked out from `history/NNNN.toml` of each game (docs/history.md), never
from game.toml, so that anyone with the histories can check it (docs/standings.md):

- each game's name and seats come from the `[setup]` of history/0000.toml; who holds a seat from
  its `seat_taken` events (the seat's own name until then);
- a player's turns are the resolutions that needed their seat's orders while they held it:
  missed when a `missed_turn` event says so, away when an `away` event does (a vacation the
  autopilot played: not missed), played otherwise;
- a game is finished when its history holds `won`; its result goes to whoever holds each seat
  at the end, and its ranking (`Place`) is the winner or the winning team first, tied, then
  the seats never out of the game by their territories at the end (ties tied), then the seats
  out of the game, the last to fall first (`eliminated`, or `dropped` after missed turns);
- the ratings are openskill's Plackett-Luce with its default parameters, every finished game
  rated once, in the order of its last history file's `time`, then its name (`game_order`).

A game whose history cannot be read, or does not hold together, is skipped with the reason;
the others count all the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

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
from pbem.errors import GameFileError, PbemError
from pbem.records import clock
from pbem.records.history import HistoryRecord, history_count, read_history
from pbem.records.root import find_games, fold

VICTORIES = ("conquest", "mission", "rounds", "team")
"""The kinds of victory: everyone else out of the game; a secret mission done (the
`mission_completed` event before `won`); the most territories when the last round was over
(`rounds_over` before `won`); a team's (a `won` whose `team` has more than one player, whatever
ended the game)."""

Z = 3.0
"""The ordinal shown as a player's rating is mu - Z * sigma: a rating they are very likely to
have at least."""

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


@dataclass(frozen=True)
class SkippedGame:
    """A game left out, and why (a damaged or unreadable history)."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class PlayerStanding:
    """A player over every game of the root that could be read."""

    name: str
    games: int
    """Games in which they held a seat at any time, finished or not."""
    finished: int
    """Finished games in which they held a seat at the end: the games rated for them."""
    won: int
    wins_by: Mapping[str, int]
    """Their wins by kind of victory, every kind of VICTORIES given (0 when none)."""
    turns_played: int
    turns_missed: int
    turns_away: int
    """Turns the autopilot played while they were away on a vacation (not missed)."""
    mu: float
    sigma: float
    rank: int | None = None
    """Their place in the table by rating (ties share it); None when no game is rated yet."""

    @property
    def ordinal(self) -> float:
        """The rating shown: mu - 3 sigma."""
        return self.mu - Z * self.sigma

    @property
    def reliability(self) -> float | None:
        """Turns played out of turns played and missed, in percent (one decimal); None
        without any."""
        counted = self.turns_played + self.turns_missed
        return round(100 * self.turns_played / counted, 1) if counted else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "name": self.name,
            "ordinal": round(self.ordinal, 1),
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "games": self.games,
            "finished": self.finished,
            "won": self.won,
            "wins_by": {kind: self.wins_by.get(kind, 0) for kind in VICTORIES},
            "turns_played": self.turns_played,
            "turns_missed": self.turns_missed,
            "turns_away": self.turns_away,
            "reliability": self.reliability,
        }


@dataclass(frozen=True)
class Standings:
    """The standings of a root: its players best first (rated players by rating, then the
    others by name), its games in the order they are rated in, the games skipped."""

    root: Path
    players: tuple[PlayerStanding, ...]
    games: tuple[GameResult, ...]
    skipped: tuple[SkippedGame, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "model": model_parameters(),
            "players": [p.to_dict() for p in self.players],
            "games": [g.to_dict() for g in self.games],
            "skipped": [s.to_dict() for s in self.skipped],
        }


def model() -> PlackettLuce:
    """The rating model: openskill's Plackett-Luce with its default parameters."""
    return PlackettLuce()


def model_parameters() -> dict[str, Any]:
    """What the ratings were worked out with, for anyone who works them out again."""
    m = model()
    try:
        version: str | None = metadata.version("openskill")
    except metadata.PackageNotFoundError:  # (run from a copy of the sources)
        version = None
    return {
        "name": "PlackettLuce",
        "openskill": version,
        "mu": m.mu,
        "sigma": m.sigma,
        "beta": m.beta,
        "kappa": m.kappa,
        "tau": m.tau,
        "limit_sigma": m.limit_sigma,
        "balance": m.balance,
        "ordinal": f"mu - {Z:g} * sigma",
        "order": "finished games, by the time of their last history file, then their name",
    }


# --- one game ------------------------------------------------------------------------------


@dataclass
class _Turns:
    played: int = 0
    missed: int = 0
    away: int = 0


@dataclass(frozen=True)
class _Read:
    """A game read from its history: its result, and what each player did in it."""

    result: GameResult
    ended: datetime | None
    held: tuple[str, ...]
    """Everyone who held a seat, in the order they came."""
    turns: Mapping[str, _Turns] = field(default_factory=dict)

    def order(self) -> tuple[bool, datetime, str, str, str]:
        """The key games are rated in (`game_order`)."""
        when = self.ended or datetime(1970, 1, 1, tzinfo=timezone.utc)
        name = self.result.name
        return (self.ended is not None, when, fold(name), name, self.result.path)


def game_order(game: _Read) -> tuple[bool, datetime, str, str, str]:
    """Games are rated by the time their last history file records (the resolution that
    ended a finished game), compared as instants whatever their offsets; games whose last
    history file has no time (made before pbem recorded it, or by a program that gave none)
    come first; then by name (letters in any case alike, then as written), then by folder."""
    return game.order()


def _seat_of(name: object, seats: Sequence[str], where: str) -> str:
    if not isinstance(name, str) or name not in seats:
        raise GameFileError(f"{where} names '{name}', who has no seat in the game")
    return name


def read_game_history(directory: Path, path: str) -> _Read:
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
    turns: dict[str, _Turns] = {}
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
                tally = turns.setdefault(fold(holder[_seat_of(seat, seats, where)]), _Turns())
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
    return _Read(result, ended, tuple(held.values()), turns)


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


# --- the root ----------------------------------------------------------------------------------


def _relative(directory: Path, root: Path) -> str:
    try:
        return directory.relative_to(root).as_posix() or "."
    except ValueError:
        return str(directory)


def _reason(err: BaseException, directory: Path) -> str:
    """An error as a sentence about the game, its files named within its folder."""
    text = str(err) or type(err).__name__
    return text.replace(f"{directory}{os.sep}", "")


def read_root(root: Path) -> tuple[list[_Read], list[SkippedGame]]:
    """Every game of `root` that can be read, in the order they are rated in, and the games
    skipped, with the reason."""
    games: list[_Read] = []
    skipped: list[SkippedGame] = []
    for directory in find_games(root, records=True):
        path = _relative(directory, root)
        try:
            games.append(read_game_history(directory, path))
        except (PbemError, OSError, ValueError, TypeError, KeyError, AttributeError) as err:
            skipped.append(SkippedGame(path, _reason(err, directory)))
    games.sort(key=game_order)
    return games, skipped


def ranking(places: Iterable[Place]) -> list[tuple[str, int]]:
    """The ranking a finished game is rated by: each player (as names are compared) once, at
    their best place, and their rank."""
    seen: dict[str, int] = {}
    for place in places:
        seen.setdefault(fold(place.player), place.rank)
    return list(seen.items())


def rate(
    results: Iterable[GameResult], m: PlackettLuce | None = None
) -> dict[str, PlackettLuceRating]:
    """The ratings after the finished games of `results`, rated one after the other in the
    order given, by player (as names are compared, `fold`)."""
    m = m or model()
    ratings: dict[str, PlackettLuceRating] = {}
    for result in results:
        if not result.finished:
            continue
        sides = sides_of(result)
        if len(sides) < 2:
            continue
        teams = [
            [ratings[key] if key in ratings else m.rating(name=key) for key in keys]
            for keys, _ in sides
        ]
        rated = m.rate(teams, ranks=[float(rank) for _, rank in sides])
        for (keys, _), news in zip(sides, rated, strict=True):
            for key, new in zip(keys, news, strict=True):
                ratings[key] = new
    return ratings


def sides_of(result: GameResult) -> list[tuple[tuple[str, ...], int]]:
    """The sides a finished game is rated by, with their ranks: each player alone (`ranking`),
    or in a team game each team, at the best place of its players (a team game is won and lost
    by teams: the order its losers fell in within their team is not rated)."""
    ranked = ranking(result.places)
    if not result.teams:
        return [((key,), rank) for key, rank in ranked]
    rank_of = dict(ranked)
    holder = {p.seat: fold(p.player) for p in result.places}
    sides = []
    for team in result.teams:
        keys = tuple(dict.fromkeys(holder[s] for s in team if holder.get(s) in rank_of))
        if keys:
            sides.append((keys, min(rank_of[k] for k in keys)))
    return sorted(sides, key=lambda side: side[1])


@dataclass
class _Tally:
    name: str
    games: int = 0
    finished: int = 0
    won: int = 0
    wins_by: dict[str, int] = field(default_factory=dict)
    turns: _Turns = field(default_factory=_Turns)


def standings(root: Path) -> Standings:
    """The standings of the games of `root` (a folder of games, or one game), from their
    histories alone."""
    games, skipped = read_root(root)
    m = model()
    tallies: dict[str, _Tally] = {}
    for game in games:
        for name in game.held:
            tally = tallies.setdefault(fold(name), _Tally(name))
            tally.name = name  # (as the latest game spells it)
            tally.games += 1
        for key, turns in game.turns.items():
            counted = tallies.setdefault(key, _Tally(key)).turns
            counted.played += turns.played
            counted.missed += turns.missed
            counted.away += turns.away
        result = game.result
        if result.finished:
            winners = {fold(w) for w in result.winners}
            for key, _ in ranking(result.places):
                tally = tallies[key]
                tally.finished += 1
                if key in winners:
                    tally.won += 1
                    kind = result.victory or "conquest"
                    tally.wins_by[kind] = tally.wins_by.get(kind, 0) + 1
    ratings = rate((g.result for g in games), m)
    players: list[PlayerStanding] = []
    for key, t in tallies.items():
        rating = ratings[key] if key in ratings else m.rating(name=key)
        players.append(
            PlayerStanding(
                name=t.name,
                games=t.games,
                finished=t.finished,
                won=t.won,
                wins_by={kind: t.wins_by.get(kind, 0) for kind in VICTORIES},
                turns_played=t.turns.played,
                turns_missed=t.turns.missed,
                turns_away=t.turns.away,
                mu=float(rating.mu),
                sigma=float(rating.sigma),
            )
        )
    return Standings(
        root=root,
        players=_ranked(players),
        games=tuple(g.result for g in games),
        skipped=tuple(skipped),
    )


def _ranked(players: Sequence[PlayerStanding]) -> tuple[PlayerStanding, ...]:
    """Rated players by rating, best first (a tie in the rating shown shares its rank), then
    the players with no game rated, by name."""
    rated = sorted(
        (p for p in players if p.finished),
        key=lambda p: (-p.ordinal, fold(p.name), p.name),
    )
    out: list[PlayerStanding] = []
    for i, p in enumerate(rated):
        shown = round(p.ordinal, 1)
        rank = out[-1].rank if out and round(out[-1].ordinal, 1) == shown else i + 1
        out.append(replace(p, rank=rank))
    rest = sorted((p for p in players if not p.finished), key=lambda p: (fold(p.name), p.name))
    return (*out, *rest)


# --- told as text ------------------------------------------------------------------------------

HEADINGS = (
    "#",
    "PLAYER",
    "RATING",
    "MU",
    "SIGMA",
    "GAMES",
    "FINISHED",
    "WON",
    "PLAYED",
    "MISSED",
    "AWAY",
    "RELIABILITY",
    "WINS BY",
)
_LEFT = {"PLAYER", "WINS BY"}


def _columns(rows: Sequence[Sequence[str]], headings: Sequence[str]) -> list[str]:
    """Rows under their headings, numbers to the right, names to the left."""
    everything = [list(headings), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in everything) for i in range(len(headings))]
    return [
        "  ".join(
            cell.ljust(width) if heading in _LEFT else cell.rjust(width)
            for cell, width, heading in zip(row, widths, headings, strict=True)
        ).rstrip()
        for row in everything
    ]


def _cells(p: PlayerStanding) -> list[str]:
    rated = p.rank is not None
    reliability = p.reliability
    return [
        str(p.rank) if rated else "-",
        p.name,
        f"{p.ordinal:.1f}" if rated else "-",
        f"{p.mu:.2f}" if rated else "-",
        f"{p.sigma:.2f}" if rated else "-",
        str(p.games),
        str(p.finished),
        str(p.won),
        str(p.turns_played),
        str(p.turns_missed),
        str(p.turns_away),
        "-" if reliability is None else f"{reliability:.1f}%",
        ", ".join(f"{kind} {n}" for kind, n in p.wins_by.items() if n),
    ]


WON_BY = {
    "conquest": "by conquest",
    "mission": "by a mission",
    "rounds": "on territories after the last round",
    "team": "as a team",
    "": "",
}


def _place_words(place: Place) -> str:
    who = place.player if place.player == place.seat else f"{place.player} (seat {place.seat})"
    return f"{place.rank} {who}"


def standings_text(table: Standings) -> list[str]:
    """The standings as plain text: the table of players, the games in the order rated, the
    games under way and the games skipped with the reason."""
    finished = [g for g in table.games if g.finished]
    going = [g for g in table.games if not g.finished]
    out = [
        f"Standings of {table.root}: {_count(len(table.games), 'game')} read, "
        f"{len(finished)} finished and rated, {len(going)} under way"
        + (f", {len(table.skipped)} skipped." if table.skipped else ".")
    ]
    out += [""]
    if table.players:
        out += _columns([_cells(p) for p in table.players], HEADINGS)
        out += [
            "",
            f"RATING is mu - {Z:g} sigma of openskill's Plackett-Luce model (docs/standings.md);",
            "PLAYED, MISSED, AWAY: turns; AWAY: played by the autopilot on a vacation, not missed;",
            "RELIABILITY: turns played of turns played and missed.",
        ]
    else:
        out.append("No players: no game could be read.")
    if finished:
        out += ["", "Rated in this order (the time of each game's end, then its name):"]
        for i, g in enumerate(finished, 1):
            when = f"ended {g.time}" if g.time else "no time recorded"
            won = " + ".join(g.winners)
            places = ", ".join(_place_words(p) for p in g.places)
            out.append(f"  {i}. {g.name} ({when}): {won} won {WON_BY[g.victory or '']}; {places}")
    if going:
        out += ["", "Under way (not rated):"]
        out += [f"  {g.name}: after turn {g.turn}" for g in going]
    if table.skipped:
        out += ["", "Skipped (their history cannot be read):"]
        out += [f"  {s.path}: {s.reason}" for s in table.skipped]
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
