"""Tournaments: rounds of games in a games root, each game made by `pbem new`'s library
function, the whole kept in ROOT/tournaments/NAME.toml (docs/tournaments.md).

- `create_tournament` checks everything, records the tournament with the tables of its first
  round (of every round, in a round-robin), then makes the first round's games;
- `advance_tournaments` (after `pbem run` has resolved the root's games) records the result of
  every game that is over, and makes the next round once every game of a round is over, or the
  games of a round an earlier run left unmade;
- `tournament_table` is what `pbem tournament show` prints and the club's pages render;
- who sits where comes from `pbem.club.schedule` (pure functions).

A round's tables are written into the tournament's file before any of its games is made, so a
run that stops half way leaves a round that the next advance completes, never a round that is
forgotten. Every write of the file is atomic; one lock (ROOT/tournaments/.lock) keeps two runs
from making the same games.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import tomli

from pbem.club import schedule
from pbem.core.state import Options, Phase
from pbem.errors import LockedError, PbemError
from pbem.records import clock
from pbem.records.disk import GAME_FILE, atomic_write, locked
from pbem.terminal import quoted

FORMAT = 1
"""The version of the tournament file; a newer one is refused with a request to upgrade."""
FOLDER = "tournaments"
BOARDS = "boards"
"""ROOT/tournaments/boards/NAME.toml: the copy of a club's own board the games are made on."""
SYSTEMS = ("round-robin", "swiss")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,47}$")
"""A tournament's name: its games are named NAME-rK-tJ, which must be game names too."""
MAX_PLAYERS = 100
MAX_ROUNDS = 99
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


def parse_entrants(items: Iterable[str]) -> list[Entrant]:
    """`ann=ann@example.org:it`, `ben`, ... as `pbem new --players` reads each player (with
    its checks), none twice; raises PbemError."""
    from pbem.game.processor import parse_player
    from pbem.records.root import fold

    out: list[Entrant] = []
    for item in items:
        if not item.strip():
            raise PbemError("an empty player name in the list: write names separated by commas")
        name, email, language = parse_player(item)
        if any(fold(e.name) == fold(name) for e in out):
            raise PbemError(
                f"player '{name}' is listed twice (names that differ only in case or in the "
                "width of their letters are one name)"
            )
        if email and any(e.email.lower() == email.lower() for e in out):
            raise PbemError(f"{email} is given for two players: each needs an address of their own")
        out.append(Entrant(name, email, language))
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
def _lock(root: Path) -> Iterator[None]:
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


# Creating ---------------------------------------------------------------------------------


def create_tournament(
    root: Path,
    name: str,
    players: Sequence[Entrant],
    system: str,
    table_size: int,
    now: datetime,
    rounds: int | None = None,
    game: GameSettings | None = None,
) -> Tournament:
    """Check everything, record the tournament (the tables of round 1, and of every round of a
    round-robin) in ROOT/tournaments/NAME.toml, then make round 1's games.

    Refused, changing nothing: a tournament of that name already there, too few or too many
    players, a game name the root already has, options its tables cannot be played with. When
    the first game cannot be made nothing is left; when a later one cannot, the error says so
    and `advance_tournaments` makes the rest."""
    settings = game or GameSettings()
    _check_request(root, name, players, system, table_size, rounds, settings)
    names = [e.name for e in players]
    if system == "round-robin":
        planned, _ = schedule.seated(schedule.round_robin(names, table_size))
        count = len(planned)
    else:
        count = rounds or schedule.swiss_rounds(len(names), table_size)
        planned, _ = schedule.seated([schedule.first_swiss_round(names, table_size)])
    tournament = Tournament(
        name,
        system,
        table_size,
        count,
        tuple(players),
        settings,
        tuple(
            Round(k, tuple(Table(game_name(name, k, j), tuple(t)) for j, t in enumerate(one, 1)))
            for k, one in enumerate(planned, 1)
        ),
        clock.iso(now),
    )
    _check_unused(root, tournament, count, len(planned[0]))  # refused before any folder is made
    with _lock(root):
        _check_unused(root, tournament, count, len(planned[0]))  # and by a run at the same time
        board_copy = None
        if isinstance(settings.board, Path):
            board_copy = folder(root) / BOARDS / f"{name}.toml"
            atomic_write(board_copy, settings.board.read_bytes())
            tournament = replace(tournament, game=replace(settings, board=board_copy))
        write_tournament(root, tournament)
        _made, _found, problems, tournament = _make_round(root, tournament, 1, now, stop=True)
        if problems and not any(t.made for t in tournament.rounds[0].tables):
            for path in (tournament_path(root, name), board_copy):
                if path is not None:
                    with contextlib.suppress(OSError):
                        path.unlink()
            raise PbemError(f"{problems[0]}; the tournament was not created")
        write_tournament(root, tournament)
    if problems:
        raise PbemError(
            f"tournament {name}: round 1 is not complete: {'; '.join(problems)}. The games "
            f"made are kept; after the fix, 'pbem tournament advance {root}' (or the next "
            f"'pbem run {root}') makes the rest"
        )
    return tournament


def _check_request(
    root: Path,
    name: str,
    players: Sequence[Entrant],
    system: str,
    table_size: int,
    rounds: int | None,
    settings: GameSettings,
) -> None:
    """What can be refused before anything is planned or written."""
    from pbem.core import missions

    if (root / GAME_FILE).is_file():
        raise PbemError(f"{root} is a game, not a folder of games: give the folder it is in")
    if not root.is_dir():
        raise PbemError(f"{root} is not a folder of games: it does not exist or is a file")
    if not NAME.match(name):
        raise PbemError(
            f"'{quoted(name)}' cannot be a tournament name: use up to 48 letters, digits, '.', "
            "'-' or '_', beginning with a letter or a digit"
        )
    if system not in SYSTEMS:
        raise PbemError(f"the format is one of {', '.join(SYSTEMS)}, not '{quoted(system)}'")
    if not schedule.MIN_TABLE <= table_size <= schedule.MAX_TABLE:
        raise PbemError(
            f"--table-size must be {schedule.MIN_TABLE} to {schedule.MAX_TABLE} (a game of "
            f"Risk takes 2 to 6 players), not {table_size}"
        )
    if len(players) <= table_size:
        raise PbemError(
            f"too few players: {len(players)} given, and a tournament at tables of {table_size} "
            f"needs at least {table_size + 1} (two tables); for a single game use 'pbem new'"
        )
    if len(players) > MAX_PLAYERS:
        raise PbemError(f"too many players: {len(players)}; a tournament takes up to {MAX_PLAYERS}")
    if system == "round-robin" and rounds is not None:
        raise PbemError(
            "--rounds is for a Swiss tournament: a round-robin plays as many rounds as it takes "
            "for every player to meet every other"
        )
    if rounds is not None and not 1 <= rounds <= MAX_ROUNDS:
        raise PbemError(f"--rounds must be 1 to {MAX_ROUNDS}, not {rounds}")
    if settings.options.teams:
        raise PbemError("a tournament's games have no teams: every player plays for themselves")
    smallest = schedule.table_sizes(len(players), table_size)[-1]
    if settings.options.missions and smallest < missions.MIN_PLAYERS:
        raise PbemError(
            f"Secret Mission Risk is played by {missions.MIN_PLAYERS} to {missions.MAX_PLAYERS} "
            f"players, and {len(players)} players at tables of {table_size} make a table of "
            f"{smallest}: change the table size or the players, or leave out --missions"
        )
    if isinstance(settings.board, Path):
        from pbem.records.store import read_board

        read_board(settings.board)


def _check_unused(root: Path, tournament: Tournament, rounds: int, tables: int) -> None:
    """Refuse a tournament whose name is taken, or any of whose games' names a game of the
    root already has (or whose folders hold something)."""
    from pbem.records.root import find_games, fold, root_of
    from pbem.records.root import game_name as name_of_game

    name = tournament.name
    for other in list_tournaments(root):
        if fold(other) == fold(name):
            done = sum(1 for r in tournament_rounds_made(root, other))
            raise PbemError(
                f"tournament '{other}' already exists: {tournament_path(root, other)} "
                f"({done} round{'s' if done != 1 else ''} made); nothing was changed. "
                f"'pbem tournament show {root} {other}' shows it; choose another name for a "
                "new one"
            )
    games_root = root_of(root / "x")
    found = find_games(games_root) if games_root.is_dir() else []
    taken = {fold(name_of_game(g)): g for g in found}
    for k in range(1, rounds + 1):
        for j in range(1, tables + 1):
            wanted = game_name(name, k, j)
            if fold(wanted) in taken:
                raise PbemError(
                    f"{taken[fold(wanted)]} already holds a game called '{wanted}', a name this "
                    f"tournament's games would take: choose another tournament name"
                )
            path = root / wanted
            if path.exists() and (not path.is_dir() or any(path.iterdir())):
                raise PbemError(
                    f"{path} is already there, and this tournament's game '{wanted}' would be "
                    "made in it: move it away, or choose another tournament name"
                )


def tournament_rounds_made(root: Path, name: str) -> list[int]:
    """The rounds of a tournament whose games are all made (none when it cannot be read)."""
    try:
        return [r.number for r in read_tournament(root, name).rounds if r.made is not None]
    except PbemError:
        return []


def _make_round(
    root: Path, tournament: Tournament, number: int, now: datetime, stop: bool = False
) -> tuple[list[Table], bool, list[str], Tournament]:
    """Make every game of round `number` not made yet (one an interrupted run made is taken
    as it is, its commitments read), or with `stop` up to the first that cannot be made; the
    tables made now, whether a game an interrupted run made was found, what could not be
    made, and the tournament after."""
    one = next(r for r in tournament.rounds if r.number == number)
    tables: list[Table] = []
    made: list[Table] = []
    found = False
    problems: list[str] = []
    for table in one.tables:
        if table.made:
            tables.append(table)
            continue
        try:
            done, new = _make_game(root, tournament, table, now)
        except PbemError as err:
            problems.append(f"{table.game}: {err}")
            tables.append(table)
            if stop:
                tables += one.tables[len(tables) :]
                break
            continue
        tables.append(done)
        if new:
            made.append(done)
        found |= not new
    complete = all(t.made for t in tables)
    after = replace(one, tables=tuple(tables), made=clock.iso(now) if complete else None)
    return made, found, problems, tournament.with_round(after)


def _make_game(
    root: Path, tournament: Tournament, table: Table, now: datetime
) -> tuple[Table, bool]:
    """Make a table's game with `pbem new`'s library function (a fresh random seed), or take
    the one an interrupted run made; the table with the game's commitments, and whether it was
    made now."""
    from pbem.core import dice
    from pbem.game import processor
    from pbem.records.opening import read_game

    directory = root / table.game
    made_now = False
    if not (directory / GAME_FILE).is_file():
        settings = tournament.game
        entrants = [tournament.entrant(p) for p in table.players]
        existed = directory.exists()
        try:
            processor.new_game(
                directory,
                [(e.name, e.email) for e in entrants],
                settings.options,
                None,
                table.game,
                board=settings.board,
                schedule=settings.schedule,
                now=now,
                language=settings.language,
                languages={e.name: e.language for e in entrants if e.language is not None},
            )
        except BaseException:
            if not existed:
                with contextlib.suppress(OSError):
                    directory.rmdir()  # only if the failed game left it empty
            raise
        made_now = True
    game = read_game(directory)
    seats = [p.name for p in game.state.players]
    if game.name != table.game or not _round_the_table(seats, list(table.players)):
        raise PbemError(
            f"{directory} holds a game that is not this table's (game '{game.name}', players "
            f"{', '.join(seats)}): move it away, and the next advance makes the table's game"
        )
    hidden = dice.hidden_commitment(game.seed).hex()
    return replace(table, commitment=game.commitment, hidden_commitment=hidden), made_now


def _round_the_table(seats: Sequence[str], given: Sequence[str]) -> bool:
    """Whether a game's seats are the order given, begun with another player (the game's dice
    choose who plays first; play goes round the table as given)."""
    if len(seats) != len(given) or not seats:
        return False
    start = list(given).index(seats[0]) if seats[0] in given else -1
    return start >= 0 and list(given[start:]) + list(given[:start]) == list(seats)


# Results and advancing ------------------------------------------------------------------


def game_result(directory: Path) -> GameResult | None:
    """A finished game's result from its history (None while it goes on): the winner, or the
    winning team, of the `won` event; who left the game, in the order of their `eliminated`
    or `dropped` events (a seat given back to a substitute is in the game again)."""
    from pbem.core.events import Dropped, Eliminated, Won
    from pbem.records.history import history_count, read_history
    from pbem.records.opening import read_game

    state = read_game(directory).state
    if state.phase is not Phase.OVER:
        return None
    winners: tuple[str, ...] = ()
    left: dict[str, int] = {}  # each player's last exit, numbered in the history's order
    exits = 0
    for r in range(history_count(directory)):
        for event in read_history(directory, r).events:
            if isinstance(event, Won):
                winners = event.team or (event.player,)
            elif isinstance(event, (Eliminated, Dropped)):
                exits += 1
                left[event.player] = exits
    if not winners and state.winner is not None:
        winners = state.team(state.winner)
    gone = [p for p in state.players if (not p.alive or p.dropped) and p.name not in winners]
    out = sorted(gone, key=lambda p: (left.get(p.name, 0), p.seat))
    return GameResult(tuple(winners), tuple(p.name for p in out))


def _record_results(root: Path, tournament: Tournament) -> Tournament:
    """The tournament with the result of every made game that is over and not yet recorded."""
    for one in tournament.rounds:
        changed = False
        tables = []
        for table in one.tables:
            if table.made and table.result is None:
                try:
                    result = game_result(root / table.game)
                except PbemError:
                    result = None  # a damaged game: `pbem run` says so; the round waits
                if result is not None:
                    table, changed = replace(table, result=result), True
            tables.append(table)
        if changed:
            tournament = tournament.with_round(replace(one, tables=tuple(tables)))
    return tournament


def advance_tournaments(root: Path, now: datetime) -> list[str]:
    """Move every tournament of the root on: record the games that are over, make a round an
    earlier run left incomplete, make the next round when every game of the last is over, and
    say when a tournament is over. One line for the moderator for each of those (none when
    nothing of the kind happened); a tournament that cannot be read is named with why, and the
    others go on."""
    names = list_tournaments(root)
    if not names:
        return []
    out: list[str] = []
    try:
        with _lock(root):
            for name in names:
                try:
                    out += _advance(root, name, now)
                except (PbemError, OSError) as err:
                    out.append(f"tournament {name}: {err}")
    except LockedError as err:
        return [f"tournaments: {err}"]
    return out


def _advance(root: Path, name: str, now: datetime) -> list[str]:
    tournament = read_tournament(root, name)
    before = tournament
    tournament = _record_results(root, tournament)
    out: list[str] = []
    pending = _next_round(tournament)
    if pending is None and _plans_more(tournament):
        tournament = tournament.with_round(_next_swiss_round(tournament))
        write_tournament(root, tournament)  # the tables, before any of their games
        pending = tournament.rounds[-1]
    if pending is not None:
        begun = any(t.made for t in pending.tables)
        made, found, problems, tournament = _make_round(root, tournament, pending.number, now)
        write_tournament(root, tournament)
        if made or (found and not problems):
            what = "completed (interrupted earlier)" if begun or found else "created"
            listed = pending.listed(made) if made else "its games were all there"
            out.append(f"tournament {name}: round {pending.number} {what}: {listed}")
        if problems:
            out.append(
                f"tournament {name}: round {pending.number} is not complete: "
                f"{'; '.join(problems)} (the next run tries again)"
            )
        return out
    if tournament.over is None and _finished(tournament):
        tournament = replace(tournament, over=clock.iso(now))
        top = standings(tournament)
        leaders = [s["player"] for s in top if s["rank"] == 1]
        out.append(
            f"tournament {name} is over: {' and '.join(leaders)} "
            f"{'wins' if len(leaders) == 1 else 'share first place'} with "
            f"{_points(top[0]['points'])}"
        )
    if tournament != before:
        write_tournament(root, tournament)
    return out


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def _next_round(tournament: Tournament) -> Round | None:
    """The round whose games are to be made now: the first not wholly made, when it is round 1
    or every game of the round before it is over."""
    previous: Round | None = None
    for one in tournament.rounds:
        if one.made is None:
            return one if previous is None or previous.over else None
        previous = one
    return None


def _plans_more(tournament: Tournament) -> bool:
    """Whether a Swiss tournament is to pair its next round now."""
    return (
        tournament.system == "swiss"
        and len(tournament.rounds) < tournament.round_count
        and all(r.over for r in tournament.rounds)
    )


def _finished(tournament: Tournament) -> bool:
    return len(tournament.rounds) >= tournament.round_count and all(
        r.over for r in tournament.rounds
    )


def _next_swiss_round(tournament: Tournament) -> Round:
    """The next Swiss round, from the standings and the pairs that met so far; seats balanced
    with those taken so far."""
    order = [s["player"] for s in standings(tournament)]
    points = {s["player"]: s["points"] for s in standings(tournament)}
    met = schedule.pairs_met([[t.players for t in r.tables] for r in tournament.rounds])
    tables = schedule.swiss_round(order, tournament.table_size, met, points)
    seated, _ = schedule.seated([tables], tournament.seats())
    number = len(tournament.rounds) + 1
    return Round(
        number,
        tuple(
            Table(game_name(tournament.name, number, j), tuple(t))
            for j, t in enumerate(seated[0], 1)
        ),
    )


def standings(tournament: Tournament) -> list[dict[str, Any]]:
    """Every player, best first: points (a win is 1), then the tie-break (the players of
    their games who finished below them, summed), then the order given; `rank` shared by
    players equal on both."""
    rows: dict[str, dict[str, Any]] = {
        p: {"player": p, "points": 0, "tiebreak": 0, "games": 0, "wins": 0}
        for p in tournament.names
    }
    for table, result in tournament.results():
        points = result.points(table.players)
        below = result.outlasted(table.players)
        for p in table.players:
            rows[p]["points"] += points[p]
            rows[p]["wins"] += points[p]
            rows[p]["tiebreak"] += below[p]
            rows[p]["games"] += 1
    seed = {p: i for i, p in enumerate(tournament.names)}
    ordered = sorted(rows.values(), key=lambda r: (-r["points"], -r["tiebreak"], seed[r["player"]]))
    for row in ordered:
        row["rank"] = 1 + sum(
            1
            for other in ordered
            if (other["points"], other["tiebreak"]) > (row["points"], row["tiebreak"])
        )
    return ordered


# Reading for the moderator and the pages -------------------------------------------------


def tournament_table(root: Path, name: str) -> dict[str, Any]:
    """Everything about a tournament, as JSON-able data (docs/tournaments.md): its rounds and
    tables, each game's state (read from the game), the results, the standings. Changes
    nothing; a result not yet recorded is read from the game's history."""
    tournament = _record_results(root, read_tournament(root, name))
    rounds = []
    current = 0
    for one in tournament.rounds:
        if one.made is not None or any(t.made for t in one.tables):
            current = one.number
        tables = [_table_view(root, one, j, t) for j, t in enumerate(one.tables, 1)]
        state = (
            "over"
            if one.over
            else "playing"
            if one.made is not None
            else "incomplete"
            if any(t.made for t in one.tables)
            else "waiting"
        )
        rounds.append({"number": one.number, "state": state, "made": one.made, "tables": tables})
    top = standings(tournament)
    return {
        "name": tournament.name,
        "system": tournament.system,
        "table_size": tournament.table_size,
        "round_count": tournament.round_count,
        "current_round": current,
        "state": "over" if _finished(tournament) else "playing",
        "created": tournament.created,
        "over": tournament.over,
        "players": tournament.names,
        "rounds": rounds,
        "standings": top,
        "points": {row["player"]: row["points"] for row in top},
        "seats": tournament.seats(),
    }


def _table_view(root: Path, one: Round, number: int, table: Table) -> dict[str, Any]:
    out: dict[str, Any] = {
        "table": number,
        "game": table.game,
        "players": list(table.players),
        "state": "planned",
        "turn": None,
        "awaiting": [],
        "winners": [],
        "out": [],
        "points": {},
        "tiebreak": {},
        "commitment": table.commitment,
        "hidden_commitment": table.hidden_commitment,
    }
    if table.result is not None:
        out.update(
            state="over",
            winners=list(table.result.winners),
            out=list(table.result.out),
            points=table.result.points(table.players),
            tiebreak=table.result.outlasted(table.players),
        )
        return out
    if not table.made:
        return out
    directory = root / table.game
    if not (directory / GAME_FILE).is_file():
        out["state"] = "missing"
        return out
    from pbem.records.opening import read_game

    try:
        state = read_game(directory).state
    except PbemError:
        out["state"] = "damaged"
        return out
    out.update(state="playing", turn=state.turn, awaiting=list(state.awaiting()))
    return out


def table_lines(data: Mapping[str, Any]) -> list[str]:
    """`pbem tournament show`: the rounds, their games and results, then the standings."""
    system = "Swiss" if data["system"] == "swiss" else "round-robin"
    if data["state"] == "over":
        where = f"over (found so at {data['over']})" if data["over"] else "over"
    else:
        where = f"round {data['current_round']} under way"
    lines = [
        f"Tournament {data['name']}: {system}, {len(data['players'])} players at tables of "
        f"{data['table_size']}, {data['round_count']} rounds; {where}"
    ]
    for one in data["rounds"]:
        lines += ["", f"Round {one['number']}: {one['state']}"]
        for t in one["tables"]:
            lines.append(f"  {t['game']}: {', '.join(t['players'])}: {_game_line(t)}")
    lines += ["", "Standings:"]
    width = max(len(s["player"]) for s in data["standings"])
    for s in data["standings"]:
        lines.append(
            f"  {s['rank']:>3}. {s['player']:<{width}}  {_points(s['points'])}, tie-break "
            f"{s['tiebreak']}, {s['games']} game{'s' if s['games'] != 1 else ''}"
        )
    return lines


def _game_line(table: Mapping[str, Any]) -> str:
    state = str(table["state"])
    if state == "over":
        won = " + ".join(table["winners"]) or "nobody"
        out = f"; out: {', '.join(table['out'])}" if table["out"] else ""
        return f"over, {won} won{out}"
    if state == "playing":
        return f"turn {table['turn']}, awaiting {', '.join(table['awaiting']) or 'nobody'}"
    return {
        "planned": "not made yet",
        "missing": "its folder has no game",
        "damaged": "damaged (pbem status says why)",
    }.get(state, state)
