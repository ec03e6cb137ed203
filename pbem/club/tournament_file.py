"""A tournament as data and as its file: its entrants, the settings its games are made with, its
rounds of tables with each game's commitments and result; ROOT/tournaments/NAME.toml read and
checked (`read_tournament`), written whole and atomically (`write_tournament`), and the lock
that keeps two runs from making the same games (docs/tournaments.md).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli

from pbem.club import schedule
from pbem.core.state import Options
from pbem.errors import LockedError, PbemError
from pbem.records import clock
from pbem.records.disk import atomic_write, locked
from pbem.terminal import quoted

FORMAT = 1
"""The version of the tournament file; a newer one is refused with a request to upgrade."""
FOLDER = "tournaments"
BOARDS = "boards"
"""ROOT/tournaments/boards/NAME.toml: the copy of a club's own board the games are made on."""
SYSTEMS = ("round-robin", "swiss")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$")
"""A tournament's name: its games are named NAME-rK-tJ, which must be game names too."""
TOURNAMENT_FILE_LIMIT = 4 << 20


@dataclass(frozen=True)
class Entrant:
    """A player of the tournament: the name they play under, their address, their language."""

    name: str
    email: str = ""
    language: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "email": self.email}
        if self.language is not None:
            out["language"] = self.language
        return out


@dataclass(frozen=True)
class GameSettings:
    """What every game of the tournament is made with: `pbem new`'s options (no teams: a
    tournament's players play for themselves), its deadlines, its board (a name of pbem's, or
    the path of a board file) and the players' language."""

    options: Options = field(default_factory=Options)
    schedule: clock.Schedule | None = None
    board: str | Path = "classic"
    language: str | None = None

    def to_dict(self, name: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if isinstance(self.board, Path):
            out["board_file"] = f"{BOARDS}/{name}.toml"
        else:
            out["board"] = self.board
        if self.language is not None:
            out["language"] = self.language
        out["options"] = self.options.to_dict()
        if self.schedule is not None:
            out["deadlines"] = self.schedule.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], folder: Path) -> GameSettings:
        board: str | Path = str(data.get("board", "classic"))
        if "board_file" in data:
            board = folder / str(data["board_file"])
        deadlines = data.get("deadlines")
        return cls(
            Options.from_dict(_table(data.get("options", {}), "game.options")),
            clock.Schedule.from_dict(deadlines) if isinstance(deadlines, dict) else None,
            board,
            _optional_str(data.get("language"), "game.language"),
        )


@dataclass(frozen=True)
class GameResult:
    """How a finished game ended: who won (a team wins together) and who left it, in the order
    they left (eliminated, or dropped after missed turns); the others survived to the end."""

    winners: tuple[str, ...]
    out: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "out": list(self.out)}

    def points(self, players: Sequence[str]) -> dict[str, int]:
        """A win is 1 point (each winner of a team that wins), anything else 0."""
        return {p: 1 if p in self.winners else 0 for p in players}

    def outlasted(self, players: Sequence[str]) -> dict[str, int]:
        """The tie-break: how many of the game's players finished below each: a winner all
        the others, a survivor those who left the game, one who left those who left before."""
        out = {p: len(self.out) for p in players}
        out.update({p: len(players) - len(self.winners) for p in self.winners})
        out.update({p: i for i, p in enumerate(self.out)})
        return out


@dataclass(frozen=True)
class Table:
    """One game of a round: its name (and folder under the root), its players in seat order
    (round the table), its commitments once made, its result once over."""

    game: str
    players: tuple[str, ...]
    commitment: str | None = None
    hidden_commitment: str | None = None
    result: GameResult | None = None

    @property
    def made(self) -> bool:
        return self.commitment is not None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"game": self.game, "players": list(self.players)}
        if self.commitment is not None:
            out["commitment"] = self.commitment
        if self.hidden_commitment is not None:
            out["hidden_commitment"] = self.hidden_commitment
        if self.result is not None:
            out["result"] = self.result.to_dict()
        return out


@dataclass(frozen=True)
class Round:
    """A round's tables; `made`: when the last of its games was made (None until then)."""

    number: int
    tables: tuple[Table, ...]
    made: str | None = None

    @property
    def over(self) -> bool:
        return self.made is not None and all(t.result is not None for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"number": self.number}
        if self.made is not None:
            out["made"] = self.made
        out["table"] = [t.to_dict() for t in self.tables]
        return out

    def listed(self, tables: Iterable[Table] | None = None) -> str:
        """`spring-r1-t1 (ann, ben, cy, dee), ...`"""
        chosen = self.tables if tables is None else tables
        return ", ".join(f"{t.game} ({', '.join(t.players)})" for t in chosen)


@dataclass(frozen=True)
class Tournament:
    """A tournament as its file holds it."""

    name: str
    system: str
    table_size: int
    round_count: int
    """How many rounds it has: a round-robin's schedule, a Swiss tournament's --rounds."""
    players: tuple[Entrant, ...]
    game: GameSettings
    rounds: tuple[Round, ...]
    created: str
    over: str | None = None
    """When the tournament was found over (its last round's last game over)."""

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.players]

    def entrant(self, name: str) -> Entrant:
        return next(e for e in self.players if e.name == name)

    def seats(self) -> dict[str, list[int]]:
        """How often each player sits (or is to sit) first, second, ... in the rounds so far
        planned."""
        counts: dict[str, list[int]] = {p: [] for p in self.names}
        for one in self.rounds:
            schedule.add_seats(counts, [t.players for t in one.tables])
        width = max((len(t.players) for r in self.rounds for t in r.tables), default=0)
        return {p: c + [0] * (width - len(c)) for p, c in counts.items()}

    def results(self) -> list[tuple[Table, GameResult]]:
        return [(t, t.result) for r in self.rounds for t in r.tables if t.result is not None]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": FORMAT,
            "name": self.name,
            "system": self.system,
            "table_size": self.table_size,
            "rounds": self.round_count,
            "created": self.created,
        }
        if self.over is not None:
            out["over"] = self.over
        out["game"] = self.game.to_dict(self.name)
        out["player"] = [e.to_dict() for e in self.players]
        out["seats"] = self.seats()
        out["round"] = [r.to_dict() for r in self.rounds]
        return out

    def with_round(self, one: Round) -> Tournament:
        rounds = [r for r in self.rounds if r.number != one.number] + [one]
        return replace(self, rounds=tuple(sorted(rounds, key=lambda r: r.number)))


def game_name(tournament: str, round_number: int, table: int) -> str:
    """The name (and folder) of a tournament's game: spring-r2-t1."""
    return f"{tournament}-r{round_number}-t{table}"


# The file --------------------------------------------------------------------------------


def folder(root: Path) -> Path:
    return root / FOLDER


def tournament_path(root: Path, name: str) -> Path:
    return folder(root) / f"{name}.toml"


def list_tournaments(root: Path) -> list[str]:
    """The names of the root's tournaments, sorted."""
    try:
        found = sorted(p.stem for p in folder(root).glob("*.toml") if p.is_file())
    except OSError:
        return []
    return [name for name in found if NAME.match(name)]


def read_tournament(root: Path, name: str) -> Tournament:
    """A tournament from its file, checked; PbemError naming the file and what is wrong."""
    path = tournament_path(root, name)
    if not NAME.match(name) or not path.is_file():
        known = list_tournaments(root)
        listed = f": {', '.join(known)}" if known else ": none"
        raise PbemError(
            f"there is no tournament '{quoted(name)}' in {root} (its tournaments{listed})"
        )
    from pbem.files import FileProblem, read_bounded

    try:
        data = tomli.loads(read_bounded(path, TOURNAMENT_FILE_LIMIT).decode("utf-8"))
    except (FileProblem, UnicodeDecodeError, tomli.TOMLDecodeError, RecursionError) as err:
        raise PbemError(f"{path} cannot be read: {err}") from None
    try:
        return _from_dict(data, folder(root))
    except (KeyError, TypeError, ValueError) as err:
        what = f"'{err.args[0]}' is missing" if isinstance(err, KeyError) else str(err)
        raise PbemError(f"{path} is damaged: {what}; restore it from a backup") from None


def _from_dict(data: Mapping[str, Any], where: Path) -> Tournament:
    version = data.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ValueError("it has no format number")
    if version > FORMAT:
        raise PbemError(
            f"the tournament file is in format {version}, newer than this pbem reads "
            f"({FORMAT}): upgrade pbem"
        )
    system = str(data["system"])
    if system not in SYSTEMS:
        raise ValueError(f"system '{system}' is none of {', '.join(SYSTEMS)}")
    players = tuple(
        Entrant(
            str(p["name"]),
            str(p.get("email", "")),
            _optional_str(p.get("language"), "language"),
        )
        for p in _tables(data["player"], "player")
    )
    names = {e.name for e in players}
    rounds = []
    for r in _tables(data.get("round", []), "round"):
        tables = []
        for t in _tables(r["table"], "round.table"):
            seated = tuple(str(p) for p in t["players"])
            if not set(seated) <= names:
                raise ValueError(f"table {t['game']} seats players the tournament does not have")
            result = None
            if "result" in t:
                res = _table(t["result"], "result")
                result = GameResult(
                    tuple(str(p) for p in res["winners"]), tuple(str(p) for p in res["out"])
                )
            tables.append(
                Table(
                    str(t["game"]),
                    seated,
                    _optional_str(t.get("commitment"), "commitment"),
                    _optional_str(t.get("hidden_commitment"), "hidden_commitment"),
                    result,
                )
            )
        rounds.append(Round(int(r["number"]), tuple(tables), _optional_str(r.get("made"), "made")))
    return Tournament(
        name=str(data["name"]),
        system=system,
        table_size=int(data["table_size"]),
        round_count=int(data["rounds"]),
        players=players,
        game=GameSettings.from_dict(_table(data.get("game", {}), "game"), where),
        rounds=tuple(rounds),
        created=str(data["created"]),
        over=_optional_str(data.get("over"), "over"),
    )


def _table(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{what} is not a table")
    return value


def _tables(value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise TypeError(f"{what} is not a list of tables")
    return [_table(v, what) for v in value]


def _optional_str(value: Any, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} is not text")
    return value


def write_tournament(root: Path, tournament: Tournament) -> None:
    atomic_write(tournament_path(root, tournament.name), tournament_text(tournament))


def tournament_text(tournament: Tournament) -> str:
    """The tournament file: its keys, `[game]`, one `[[player]]` each, `[seats]`, then each
    `[[round]]` with its `[[round.table]]`s, every value on one line."""
    data = tournament.to_dict()
    lines = [f"{k} = {_toml(v)}" for k, v in data.items() if not isinstance(v, (dict, list))]
    lines += ["", "[game]", *(f"{_key(k)} = {_toml(v)}" for k, v in data["game"].items())]
    for player in data["player"]:
        lines += ["", "[[player]]", *(f"{_key(k)} = {_toml(v)}" for k, v in player.items())]
    lines += ["", "[seats]", *(f"{_key(k)} = {_toml(v)}" for k, v in data["seats"].items())]
    for one in data["round"]:
        lines += ["", "[[round]]"]
        lines += [f"{_key(k)} = {_toml(v)}" for k, v in one.items() if k != "table"]
        for table in one["table"]:
            lines += ["", "[[round.table]]", *(f"{_key(k)} = {_toml(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    return key if BARE_KEY.match(key) else _toml(key)


def _toml(value: Any) -> str:
    """A value as TOML on one line (strings as JSON writes them: TOML's escapes are JSON's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"no TOML for {value!r}")


@contextlib.contextmanager
def lock(root: Path) -> Iterator[None]:
    """The lock of the root's tournaments: one run at a time makes their games."""
    where = folder(root)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        from pbem.files import disk_error

        raise disk_error(err, where, "create") from None
    try:
        with locked(where, creating=True):
            yield
    except LockedError:
        raise LockedError(
            f"another run is making the games of the tournaments of {root}; try again when it "
            "is done"
        ) from None
