"""What a moderator does to a game: create it, check orders, resolve a turn, audit it.

This is the shell around the engine: it reads and writes the game directory (through `store`),
renders reports (through `report`) and never decides a rule itself.

Some of what the commands reach here lives in a module of its own, named here as part of this
front door: the audit, the checks, `readiness`, `outcome`, and `show` (`pbem show`, `pbem dice`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from pbem.core import dice, engine, missions, rules, teams
from pbem.core.board import load_board
from pbem.core.orders import Orders
from pbem.core.secrets import first_secret
from pbem.core.state import (
    GameState,
    Options,
    Phase,
    TwoPlayer,
    state_digest,
)
from pbem.errors import GameFileError, PbemError
from pbem.files import disk_error, refuse_links
from pbem.game import bots, deadlines, undo
from pbem.game.audit import AuditSummary as AuditSummary
from pbem.game.audit import audit_game as audit_game
from pbem.game.check import check_files as check_files
from pbem.game.check import check_submission as check_submission
from pbem.game.checking import Checked as Checked
from pbem.game.checking import Submission as Submission
from pbem.game.checking import check_with_view as check_with_view
from pbem.game.checking import forecast as forecast
from pbem.game.outcome import Outcome as Outcome
from pbem.game.outcome import played as played
from pbem.game.outcome import summary as summary
from pbem.game.players import EMAIL
from pbem.game.readiness import NotReady as NotReady
from pbem.game.readiness import Readiness as Readiness
from pbem.game.readiness import choose, why_not_ready
from pbem.game.readiness import readiness as readiness
from pbem.game.show import dice_entries as dice_entries
from pbem.game.show import dice_history as dice_history
from pbem.game.show import dice_lines as dice_lines
from pbem.game.show import show_table as show_table
from pbem.languages.i18n import check_language, language, moderator_language
from pbem.languages.numbering import Played
from pbem.languages.reasons import telling_of
from pbem.records import away, clock, deadline_changes, press, settings
from pbem.records import undone as undos
from pbem.records.disk import GAME_FILE, atomic_write, locked, write_files
from pbem.records.history import (
    HISTORY,
    REPORTS,
    HistoryRecord,
    OrderRecord,
    archive_orders,
    done_dir,
    drafted,
    game_files,
    history_count,
    history_path,
    make_orders_folder,
    new_report_dir,
    order_files,
    plain_file_name,
    played_in,
    read_history,
    recorded_order_files,
    write_history,
)
from pbem.records.opening import read_game
from pbem.records.replay import randomness, recorded_orders, replay_orders
from pbem.records.root import fold, refuse_duplicate
from pbem.records.seat_changes import taken
from pbem.records.store import (
    BOARD_FILE,
    PLAYER_NAME_RULE,
    Game,
    Registration,
    player_name,
    read_board,
    same_name,
    valid_player_name,
    write_game,
)
from pbem.terminal import quoted

GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


LANGUAGE_CODE = re.compile(r"^\s*[A-Za-z_-]{1,12}\s*$")
"""What may follow a player's last colon as their language (an address never looks like it)."""


def parse_player(item: str) -> tuple[str, str, str | None]:
    """`bob=bob@example.org:it` into its name, address ("" if none) and language (None if
    none), each checked; raises PbemError."""
    entry, colon, code = item.strip().rpartition(":")
    if not colon or not LANGUAGE_CODE.match(code):
        entry, colon, code = item.strip(), "", ""
    language = (
        check_language(code.strip(), f"the language of '{quoted(entry.strip())}'")
        if colon
        else None
    )
    name, _, email = entry.strip().partition("=")
    name = player_name(name)
    if not valid_player_name(name):
        raise PbemError(f"'{quoted(name)}' cannot be a player name: use {PLAYER_NAME_RULE}")
    email = email.strip()
    if email and not EMAIL.match(email):
        raise PbemError(f"'{email}' is not an email address (for {name}): write name=user@host")
    return name, email, language


def parse_player_list(text: Sequence[str]) -> list[tuple[str, str]]:
    """`alice,bob=bob@example.org` into (name, email) pairs; raises PbemError on a bad name.
    A language after a colon (`bob=bob@example.org:it`) is checked and left out: see
    `parse_player_languages`."""
    return [(name, email) for name, email, _lang in _parse_players(text)]


def parse_player_languages(text: Sequence[str]) -> dict[str, str]:
    """The languages given in a player list (`ann=ann@x.org:it,bob:nl`), by player."""
    return {name: lang for name, _email, lang in _parse_players(text) if lang is not None}


def _parse_players(text: Sequence[str]) -> list[tuple[str, str, str | None]]:
    out: list[tuple[str, str, str | None]] = []
    for item in text:
        name, email, language = parse_player(item)
        if any(same_name(n, name) or fold(n) == fold(name) for n, _e, _lang in out):
            raise PbemError(
                f"player '{name}' is listed twice (names that differ only in case or in the "
                "width of their letters are one name)"
            )
        if email and any(e.lower() == email.lower() for _, e, _lang in out):
            raise PbemError(f"{email} is given for two players: each needs an address of their own")
        out.append((name, email, language))
    if not rules.MIN_PLAYERS <= len(out) <= rules.MAX_PLAYERS:
        raise PbemError(f"Risk needs 2 to 6 players; {len(out)} given")
    return out


def new_game(
    directory: Path,
    players: Sequence[tuple[str, str]],
    options: Options,
    seed: bytes | None = None,
    name: str | None = None,
    board: str | Path = "classic",
    chain_length: int = dice.DEFAULT_CHAIN_LENGTH,
    schedule: clock.Schedule | None = None,
    now: datetime | None = None,
    language: str | None = None,
    languages: Mapping[str, str] | None = None,
    mail: settings.Table = (),
) -> Outcome:
    """Create a game directory: the setup resolution (0), the game file and first reports.
    `mail` is the game's own mail settings; the name must be unique in the games root.

    `language` is the players' language (None: English), `languages` a player's own by name.

    `now` is recorded as the time of the setup; a game with a `schedule` needs it. The
    directory's lock is taken before it is looked at, so of two runs at once only one creates;
    a directory that holds any game's files (game file, history, reports, orders) is refused,
    naming them."""
    if schedule is not None and now is None:
        raise PbemError("a game with deadlines needs the time it starts: give --now")
    if options.drop_after < 0:
        raise PbemError("--drop-after must be 0 (never) or a number of missed turns")
    if options.missions and not missions.MIN_PLAYERS <= len(players) <= missions.MAX_PLAYERS:
        raise PbemError(
            f"Secret Mission Risk is played by {missions.MIN_PLAYERS} to {missions.MAX_PLAYERS} "
            f"players, not {len(players)}: add players or leave out --missions"
        )
    if seed is None:
        import secrets  # (and random) only to create a game

        seed = secrets.token_bytes(32)
    if len(seed) != 32:
        raise PbemError("the seed must be 32 bytes (64 hex digits)")
    if (options.team_fortify or options.team_cards) and not options.teams:
        raise PbemError(
            "--team-fortify and --team-cards-visible are for team games: add --teams, or "
            "leave them out"
        )
    if options.teams:
        try:
            teams.check_teams(options.teams, [n for n, _ in players])
        except ValueError as err:
            raise PbemError(f"--teams: {err}") from None
        listed = dict(players)
        players = [(n, listed[n]) for n in teams.seating(options.teams)]
    names = [n for n, _ in players]
    game_name = name or directory.resolve().name
    if not GAME_NAME.match(game_name):
        raise PbemError(
            f"'{quoted(game_name)}' cannot be a game name: use letters, digits, '.', '-' or '_' "
            "(choose one with --name)"
        )
    refuse_duplicate(directory, game_name)
    the_board = read_board(board) if isinstance(board, Path) else load_board(board)
    if options.missions and the_board.name != "classic":
        raise PbemError(
            "Secret Mission Risk's cards name the classic board's continents: leave out "
            "--missions, or play on the classic board"
        )
    neutral = len(players) == 2 and options.two_player is TwoPlayer.NEUTRAL
    seats = len(players) + (1 if neutral else 0)
    if len(the_board.names) < 3 * seats:
        raise PbemError(
            f"the board '{the_board.name}' has {len(the_board.names)} territories: too few for "
            f"{len(players)} players (at least 3 territories each)"
        )
    if language is not None:
        check_language(language, "--language")
    own = dict(languages or {})
    registrations = tuple(
        Registration(n, email, first_secret(seed, n), own.get(n)) for n, email in players
    )
    key = dice.resolution_key(seed, 0, chain_length)
    state, events = engine.new_game(
        game_name, names, the_board, options, engine.Randomness(key, dice.hidden_key(seed))
    )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise disk_error(err, directory, "create") from None
    first = replace(schedule, tolerance=timedelta(0)) if schedule else None  # a whole turn
    deadline = clock.next_deadline(now, first) if first and now else None
    game = Game(
        directory,
        state,
        seed,
        registrations,
        chain_length,
        schedule,
        deadline,
        language=language,
        mail=mail,
    )
    with locked(directory, creating=True):
        found = game_files(directory)
        if found:
            raise PbemError(
                f"{directory} already holds a game ({', '.join(found)}): choose another "
                "directory, or move those away first"
            )
        refuse_links(directory)  # a template pack copied in may carry links
        from pbem.present import report  # Jinja2 and the reports: only when rendering

        reports = report.render_reports(game, 0, events, now=now)
        record = HistoryRecord(
            resolution=0,
            turn=0,
            players=tuple(names),
            key=key.hex(),
            orders=(),
            events=events,
            state_digest=state_digest(state),
            setup={
                "game": game_name,
                "board": the_board.name,
                "players": names,
                **options.to_dict(),
                **(schedule.to_dict() if schedule else {}),
            },
            time=clock.iso(now) if now else None,
        )
        try:
            make_orders_folder(directory)
            if the_board.text:  # a club's own board: the game keeps its copy
                atomic_write(directory / BOARD_FILE, the_board.text)
            write_history(directory, record)
            paths = write_files(new_report_dir(directory, Played.of(0, 0)), reports)
            write_game(game)
            from pbem.core.tallies import Tallies
            from pbem.records.tallies import write_tallies

            write_tallies(directory, Tallies([p.name for p in state.players]).after(0, 0, events))
        except BaseException:
            _undo_new(directory, list(reports))
            raise
    return Outcome(0, state, events, reports=paths)


def _undo_new(directory: Path, reports: Sequence[str]) -> None:
    """Remove what a `new` that failed part way wrote (there was no game before it), so that
    running it again after the fault is fixed creates the game."""
    from pbem.records.tallies import tallies_path

    written = [directory / GAME_FILE, history_path(directory, 0), directory / BOARD_FILE]
    written.append(tallies_path(directory))
    first = new_report_dir(directory, Played.of(0, 0))
    written += [first / name for name in reports]
    for path in written:
        with contextlib.suppress(OSError):
            path.unlink()
    for folder in (first, directory / REPORTS, directory / HISTORY):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if empty


OVERVIEW_ATTACKS = 6
OVERVIEW_ARMIES = 200
"""The largest plans the moderator's overview forecasts at resolve time (attacks, armies on the
territories they name): beyond them a long game's resolutions would slow down; `pbem check`
forecasts any plan."""


def _forecasts(state: GameState, orders: Sequence[Orders]) -> list[str]:
    """What each player's orders were forecast to do, for the moderator's overview (in the
    moderator's language)."""
    out = []
    lang = language(moderator_language(), state.board.name)
    for o in orders:
        named = {t for a in o.attack for t in (a.source, a.target)}
        if len(o.attack) > OVERVIEW_ATTACKS or sum(map(state.armies, named)) > OVERVIEW_ARMIES:
            too_large = lang._("a plan too large to forecast here (pbem check forecasts it)")
            out.append(f"{o.player}: {too_large}")
            continue
        with telling_of(o.player):  # ("alice does not hold Siberia", not "you do not ...")
            out += [f"{o.player}: {line}" for line in forecast(state, o, lang)]
    return out


def checked_history(game: Game) -> int:
    """How many history files the game has: its resolution, or one more when a resolution was
    interrupted after its history was written; GameFileError for a gap or a surplus."""
    r = game.state.resolution
    count = history_count(game.path)
    if count < r:
        raise GameFileError(
            f"history/{count:04d}.toml is missing, but game.toml is at resolution {r}: "
            "restore the history from a backup"
        )
    if count > r + 1:
        raise GameFileError(
            f"the history goes on to history/{count - 1:04d}.toml, beyond game.toml's "
            f"resolution {r}: restore game.toml from a backup"
        )
    return count


def resolve_game(
    directory: Path,
    paths: Sequence[Path] | None = None,
    now: datetime | None = None,
    force: bool = False,
) -> Outcome:
    """Resolve the pending turn, or complete one that an interrupted run left half written.

    At or after the deadline (`now`), a player with no valid orders gets the autopilot's;
    when that would be more than half the players, only with `force`."""
    with locked(directory):
        undos.check_not_interrupted(directory)
        game = read_game(directory)
        r = game.state.resolution
        if game.state.phase is Phase.OVER:
            raise PbemError(f"game '{game.name}' is over: {game.state.won_by} won")
        if checked_history(game) == r + 1:
            return _complete(game, read_history(directory, r))
        _never_backwards(directory, r, now)
        early = tuple(bots.answer(game)) if paths is None else ()  # a run stopped before they did
        used, rejected, missing = choose(game, paths)
        records = [OrderRecord(s.player or "", s.path.name, s.text) for s in used]
        if missing:
            deadline = deadline_changes.pending_deadline(directory, game, r)
            why = deadlines.missed_orders(game, missing, deadline, now)
            if why is None and not force:
                why = deadlines.outage_guard(game, missing, deadline)
            if why is not None:
                raise NotReady(
                    "\n".join(why_not_ready(game, rejected, missing, [why] if why else []))
                )
            records += deadlines.autopilot_records(game, missing, deadline)
        orders = recorded_orders(game.state, records)
        state, events = replay_orders(
            game.state, records, randomness(game, r), orders, taken(directory, r)
        )
        record = HistoryRecord(
            resolution=r,
            turn=game.state.turn,
            players=tuple(game.state.awaiting()),
            key=game.key(r).hex(),
            orders=tuple(records),
            events=events,
            state_digest=state_digest(state),
            time=clock.iso(now) if now else None,
        )
        new = _after(game, state, now)
        from pbem.records.tallies import tallies_before, write_tallies  # (the events: here)

        before = tallies_before(directory, [p.name for p in state.players], r)
        # Rendered before anything is written: a broken template stops the run here.
        from pbem.present import report  # Jinja2 and the reports: only when rendering

        reports = report.render_reports(
            new,
            r,
            events,
            rejected=[m for s in rejected for m in s.messages()],
            orders=orders,
            now=now,
            undone=undos.undone_told(directory, drafted(game)),
            forecasts=_forecasts(game.state, orders),
            away=away.upcoming(directory, game, now),
            press=press.of_resolution(press.press_records(directory), r),
            tallies=before,
        )
        write_history(directory, record)
        archive_orders(directory, r, [s.path for s in used])
        folder = new_report_dir(directory, played_in(game, r, record.turn))
        paths_written = write_files(folder, reports)
        write_tallies(directory, before.after(r, record.turn, events))  # (before: see _complete)
        write_game(new)
        undo.released(directory)  # resolved (by hand: `pbem run` leaves held games alone)
        answered = early + tuple(bots.answer(new))
        return Outcome(
            r, state, events, tuple(used), tuple(rejected), False, paths_written, answered
        )


def _never_backwards(directory: Path, resolution: int, now: datetime | None) -> None:
    """Refuse a time before the last resolution's: the history's times only go forward (the
    next deadline is counted from them), whatever `--now` or the clock says."""
    if now is None or resolution < 1:
        return
    last = deadline_changes.resolution_time(directory, resolution - 1)
    if last is not None and now < last:
        raise PbemError(
            f"the time given ({clock.iso(now)}) is before the last resolution's "
            f"({clock.iso(last)}): time cannot go backwards in the history; give a --now at "
            "or after it (is the clock of this machine right?)"
        )


def _after(game: Game, state: GameState, now: datetime | None) -> Game:
    """The game after a resolution made at `now`: the new state and the next deadline (which
    waits for the players it awaits while they are away, in a game that waits)."""
    deadline = None
    if state.phase is not Phase.OVER:
        deadline = deadline_changes.scheduled_deadline(game, now, game.state.resolution)
        deadline = deadline_changes.waiting(
            game.path, game, state.resolution, state.awaiting(), deadline, now
        )
    return replace(game, state=state, deadline=deadline)


def _complete(game: Game, record: HistoryRecord) -> Outcome:
    """Finish a resolution whose history was written before the run stopped."""
    r = record.resolution
    where = f"history/{r:04d}.toml"
    if record.resolution != r or record.key != game.key(r).hex():
        raise GameFileError(
            f"{where} belongs to another game: its key is not this game's key for resolution "
            f"{r}; move it away and run the command again"
        )
    for order in record.orders:
        if not plain_file_name(order.file):
            raise GameFileError(
                f"{where} names the order file '{quoted(order.file)}', which is not a plain "
                "file name; restore the history from a backup"
            )
    orders = recorded_orders(game.state, record.orders)
    state, events = replay_orders(
        game.state, record.orders, randomness(game, r), orders, taken(game.path, r)
    )
    if events != record.events or state_digest(state) != record.state_digest:
        raise GameFileError(f"{where} does not match a replay of its orders; run 'pbem audit'")
    now = clock.parse_instant(record.time, "time") if record.time else None
    new = _after(game, state, now)
    # The tallies are written just before game.toml: a run stopped before them left those of
    # the resolution before, which are brought on; one stopped after them, these, which are
    # of this resolution already: then they are counted again from the history.
    from pbem.records.tallies import tallies_before, write_tallies

    before = tallies_before(game.path, [p.name for p in state.players], r)
    from pbem.present import report  # Jinja2 and the reports: only when rendering

    reports = report.render_reports(
        new,
        r,
        events,
        _rejected_again(game, record),
        orders,
        now,
        undos.undone_told(game.path, drafted(game)),
        _forecasts(game.state, orders),
        away.upcoming(game.path, game, now),
        press.of_resolution(press.press_records(game.path), r),
        tallies=before,
    )
    _archive_recorded(game.path, record)
    written = write_files(new_report_dir(game.path, played_in(game, r, record.turn)), reports)
    write_tallies(game.path, before.after(r, record.turn, events))
    write_game(new)
    return Outcome(r, state, events, recovered=True, reports=written, bots=tuple(bots.answer(new)))


def _rejected_again(game: Game, record: HistoryRecord) -> list[str]:
    """What the interrupted run rejected, found again: the files in orders/ it did not use,
    checked against the same pending turn (for the moderator's report)."""
    used = {o.file for o in record.orders}
    checked = [check_submission(game, p) for p in order_files(game.path) if p.name not in used]
    return [m for s in checked if not s.accepted for m in s.messages()]


def _archive_recorded(directory: Path, record: HistoryRecord) -> None:
    """Archive exactly the order text an interrupted resolution used: the file itself when it
    is still in orders/ unchanged (as an uninterrupted run does), else the text its history
    recorded, leaving a file that changed meanwhile in orders/ for the next turn. The
    autopilot's orders were never files, so they are not archived."""
    received = [o for o in record.orders if not o.autopilot]
    done = done_dir(directory, record.resolution)
    archive_orders(directory, record.resolution, recorded_order_files(directory, received))
    for order in received:
        if not (done / order.file).exists():
            atomic_write(done / order.file, order.text)
