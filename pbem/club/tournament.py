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

This module makes the games and moves the tournaments on. What a tournament is, and its file,
is `tournament_file`'s; its results and standings, as read for the moderator and the pages,
`tournament_results`'s: the names of theirs that are part of a tournament's face (reading one,
listing them, the results and the table shown) are named here too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from pbem.club import schedule
from pbem.club.tournament_file import (
    BOARDS,
    NAME,
    SYSTEMS,
    GameSettings,
    Round,
    Table,
    Tournament,
    folder,
    game_name,
    lock,
    write_tournament,
)
from pbem.club.tournament_file import Entrant as Entrant
from pbem.club.tournament_file import GameResult as GameResult
from pbem.club.tournament_file import list_tournaments as list_tournaments
from pbem.club.tournament_file import read_tournament as read_tournament
from pbem.club.tournament_file import tournament_path as tournament_path
from pbem.club.tournament_results import finished, points_text, record_results
from pbem.club.tournament_results import game_result as game_result
from pbem.club.tournament_results import standings as standings
from pbem.club.tournament_results import table_lines as table_lines
from pbem.club.tournament_results import tournament_table as tournament_table
from pbem.errors import LockedError, PbemError
from pbem.records import clock
from pbem.records.disk import GAME_FILE, atomic_write
from pbem.terminal import quoted

MAX_PLAYERS = 100
MAX_ROUNDS = 99


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
    with lock(root):
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
    from pbem.records import rootindex
    from pbem.records.root import fold, names_root
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
    games_root = names_root(root / "x")  # (the roots a tick may be run over: pbem new's rule)
    found = (
        rootindex.game_names(games_root, rootindex.survey(games_root), name_of_game, fold)
        if games_root.is_dir()
        else []
    )
    taken = {fold(n): g for n, g in found}
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


# Advancing -------------------------------------------------------------------------------


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
        with lock(root):
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
    tournament = record_results(root, tournament)
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
    if tournament.over is None and finished(tournament):
        tournament = replace(tournament, over=clock.iso(now))
        top = standings(tournament)
        leaders = [s["player"] for s in top if s["rank"] == 1]
        out.append(
            f"tournament {name} is over: {' and '.join(leaders)} "
            f"{'wins' if len(leaders) == 1 else 'share first place'} with "
            f"{points_text(top[0]['points'])}"
        )
    if tournament != before:
        write_tournament(root, tournament)
    return out


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
