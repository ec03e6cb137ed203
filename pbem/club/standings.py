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

Reading one game's history is `game_results`'s; the standings told as text, `standings_text`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce, PlackettLuceRating

from pbem.club.game_results import (
    VICTORIES,
    GameRead,
    GameResult,
    Place,
    Turns,
    game_order,
    read_game_history,
)
from pbem.errors import PbemError
from pbem.records.root import find_games, fold

Z = 3.0
"""The ordinal shown as a player's rating is mu - Z * sigma: a rating they are very likely to
have at least."""


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


def read_root(root: Path) -> tuple[list[GameRead], list[SkippedGame]]:
    """Every game of `root` that can be read, in the order they are rated in, and the games
    skipped, with the reason."""
    games: list[GameRead] = []
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
    turns: Turns = field(default_factory=Turns)


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
