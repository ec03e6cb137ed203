"""A game's turn: create a game, check orders, resolve the turn, move its deadline, undo."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pbem.cli.common import GAME_DIR, NOW, echo, instant, reports_errors
from pbem.errors import PbemError

if TYPE_CHECKING:
    from pbem.core.state import Options


@click.command(short_help="Create a game and write the first reports.")
@click.argument("directory", type=GAME_DIR)
@click.option(
    "--players",
    required=True,
    help="Comma-separated names, each optionally with an address and a language: "
    "alice=alice@example.org:it, bob:nl",
)
@click.option(
    "--language",
    type=click.Choice(["en", "id", "sv", "it", "nl", "gu"]),
    help="The players' language (default en); a player's own after a colon in --players.",
)
@click.option("--seed", help="64 hex digits; by default a fresh random seed.")
@click.option("--name", help="The game's name (default: the directory's name).")
@click.option(
    "--setup",
    type=click.Choice(["deal", "random", "draft"]),
    default="deal",
    show_default=True,
    help="Territories dealt, dealt with armies placed at random, or chosen from ranked lists.",
)
@click.option(
    "--missions",
    is_flag=True,
    help="Secret Mission Risk (3 to 6 players): each player is dealt a secret mission.",
)
@click.option(
    "--two-player",
    type=click.Choice(["neutral", "classic"]),
    default="neutral",
    show_default=True,
    help="Two players: 40 each and a neutral with 40, or 50 each and no neutral.",
)
@click.option(
    "--board",
    "board",
    default="classic",
    show_default=True,
    metavar="NAME|FILE",
    help="pbem's board by name (classic, islands), or a board file of the club's own "
    "(docs/boards.md), which the game keeps a copy of.",
)
@click.option(
    "--fortify",
    type=click.Choice(["adjacent", "connected", "unlimited", "none"]),
    default="adjacent",
    show_default=True,
    help="Fortify to an adjacent territory, through any chain of your own, between any two of "
    "your own, or not at all.",
)
@click.option(
    "--cards",
    type=click.Choice(["escalating", "flat", "none"]),
    default="escalating",
    show_default=True,
    help="Sets worth 4, 6, 8, 10, 12, 15, then 5 more each; or by what they show (three "
    "infantry 4, cavalry 6, artillery 8, one of each 10); or a game without cards.",
)
@click.option(
    "--fortifies",
    type=click.IntRange(min=1, max=10),
    default=1,
    show_default=True,
    help="How many fortifications a player may make in a turn ([[fortify]] tables).",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=0),
    default=0,
    help="End the game after this many rounds of play: the most territories win, then the most "
    "armies, then the earliest to play (0, the default: play until someone wins).",
)
@click.option(
    "--teams",
    metavar="NxM|A+B,C+D",
    help="A team game: 2x2 is two teams of two from the players as listed (the 1st and 3rd, "
    "the 2nd and 4th); or name them, alice+carol,bob+dave. Team-mates never attack each other "
    "and win together.",
)
@click.option(
    "--team-fortify",
    is_flag=True,
    help="In a team game, a player may fortify into (and through) a team-mate's territories.",
)
@click.option(
    "--team-cards-visible",
    is_flag=True,
    help="In a team game, each player's report shows their team-mates' cards.",
)
@click.option(
    "--fog",
    type=click.Choice(["none", "light", "heavy"]),
    default="none",
    show_default=True,
    help="Fog of war: light, every owner shown but armies only on and next to your "
    "territories; heavy, owners hidden there too (docs/fog.md).",
)
@click.option(
    "--no-territory-bonus",
    is_flag=True,
    help="A traded card that shows a territory of yours puts no 2 armies there.",
)
@click.option(
    "--traded-cards",
    type=click.Choice(["aside", "deck"]),
    default="aside",
    show_default=True,
    help="Traded cards are set aside until the draw pile runs out, or go back into the deck.",
)
@click.option("--turn-time", help="Deadlines: each turn is due this long after the last (48h, 2d).")
@click.option("--due-at", metavar="HH:MM", help="Move each deadline forward to this time of day.")
@click.option("--timezone", "zone", default="UTC", show_default=True, help="IANA zone of --due-at.")
@click.option(
    "--vacation",
    metavar="DAYS",
    help="Each player's vacation days: 14d for the game (the default), 14d/year, 0 for none.",
)
@click.option(
    "--vacation-mode",
    type=click.Choice(["wait", "autopilot"]),
    default="wait",
    show_default=True,
    help="While a player is away, their turns wait for them, or the autopilot plays them.",
)
@click.option(
    "--substitute-within",
    type=int,
    metavar="TURNS",
    help="How many turns after a player is dropped 'pbem substitute' may give their seat to a "
    "new player (default 6; 0: never).",
)
@click.option(
    "--drop-after",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Missed turns in a row after which a player leaves the game (0: never).",
)
@NOW
@click.option(
    "--mail",
    "mail_settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="A mail setting of this game, as for 'pbem config' (repeat for more).",
)
@reports_errors
def new(
    directory: Path,
    players: str,
    seed: str | None,
    name: str | None,
    setup: str,
    two_player: str,
    board: str,
    fortify: str,
    cards: str,
    no_territory_bonus: bool,
    fortifies: int,
    rounds: int,
    teams: str | None,
    team_fortify: bool,
    team_cards_visible: bool,
    fog: str,
    traded_cards: str,
    turn_time: str | None,
    due_at: str | None,
    zone: str,
    drop_after: int,
    vacation: str | None,
    vacation_mode: str,
    substitute_within: int | None,
    missions: bool,
    now: str | None,
    language: str | None,
    mail_settings: tuple[str, ...],
) -> None:
    """Create a game in DIRECTORY and write each player's first report.

    \b
    Examples:
      pbem new games/spring-2027 --players alice=alice@example.org,bob,carol
      pbem new games/rome --players a,b,c --turn-time 48h --due-at 20:00 --timezone Europe/Rome
      pbem new games/mondo --players ann=ann@x.org:it,bob:nl,cas --language id
      pbem new games/club/friday --players a=a@example.org,b=b@example.org \\
        --mail from=games@example.org
    """
    from pbem.core.state import Phase
    from pbem.core.teams import parse_teams
    from pbem.game import deadlines, processor
    from pbem.records import clock, settings
    from pbem.records.opening import read_game

    try:
        seed_bytes = bytes.fromhex(seed) if seed else None
    except ValueError:
        raise PbemError("--seed must be 64 hexadecimal digits") from None
    schedule = deadlines.schedule_from_options(
        turn_time, due_at, zone, vacation, vacation_mode, substitute_within
    )
    listed = processor.parse_player_list(players.split(","))
    team_list: tuple[tuple[str, ...], ...] = ()
    if teams is not None:
        try:
            team_list = parse_teams(teams, [n for n, _ in listed])
        except ValueError as err:
            raise PbemError(f"--teams: {err}") from None
    options = game_options(locals(), rounds, team_list)  # (this command's options, by name)
    mail = settings.changed((), settings.parse_assignments(mail_settings))
    the_board = board_named(board)
    outcome = processor.new_game(
        directory,
        listed,
        options,
        seed_bytes,
        name,
        board=the_board,
        schedule=schedule,
        now=instant(now),
        language=language,
        languages=processor.parse_player_languages(players.split(",")),
        mail=mail,
    )
    state = outcome.state
    echo(f"Created game '{state.game}' in {directory}: {len(state.players)} players.")
    echo("Order of play: " + ", ".join(p.name for p in state.players))
    if options.teams:
        echo("Teams: " + "; ".join(" + ".join(team) for team in options.teams))
    if state.phase is Phase.DRAFT:
        echo("Draft turn: every player sends a ranked list of territories (draft = [...]).")
    if state.phase is Phase.SETUP:
        echo("Setup turn: every player places their remaining armies in one order file.")
    if options.missions:
        echo("Each player's secret mission is in their own report only.")
    game = read_game(directory)
    if game.deadline is not None and game.schedule is not None:
        echo(f"Orders are due by {clock.describe(game.deadline, game.schedule.zone)}.")
    echo(f"Reports to send: {outcome.reports[0].parent}")


def game_options(given: Mapping[str, Any], rounds: int, teams: Any = ()) -> Options:
    """The rules of a game from `pbem new`'s options as click gives them (by their names; the
    team options only where given), for `pbem new` and for each game of a tournament."""
    from pbem.core.state import (
        CardRule,
        FogLevel,
        FortifyMode,
        Options,
        SetupMode,
        TradedCards,
        TwoPlayer,
    )

    return Options(
        SetupMode(given["setup"]),
        TwoPlayer(given["two_player"]),
        FortifyMode(given["fortify"]),
        TradedCards(given["traded_cards"]),
        given["drop_after"],
        given["missions"],
        cards=CardRule(given["cards"]),
        territory_bonus=not given["no_territory_bonus"],
        fortifies=given["fortifies"],
        rounds=rounds,
        teams=teams,
        team_fortify=given.get("team_fortify", False),
        team_cards=given.get("team_cards_visible", False),
        fog=FogLevel(given["fog"]),
    )


def board_named(board: str) -> str | Path:
    """`--board`: one of pbem's boards by name, or the path of a club's board file."""
    from pbem.core.board import board_names

    if board in board_names():
        return board
    if not Path(board).is_file():
        raise PbemError(
            f"there is no board '{board}': pbem's boards are {', '.join(board_names())}, "
            "or give the path of a board file (docs/boards.md)"
        )
    return Path(board)


@click.command(short_help="Check order files, changing nothing.")
@click.argument("directory", type=click.Path(path_type=Path), required=False)
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--view",
    "view_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Check against a view.json from a report instead of a game directory.",
)
@reports_errors
def check(directory: Path | None, files: tuple[Path, ...], view_file: Path | None) -> None:
    """Check order files against the pending turn, changing nothing: FILES, or the files in
    DIRECTORY/orders/ when none are given (as resolve takes them). Every problem is listed,
    and for a valid file the forecast of the whole plan.

    Exit code 0 when every file is valid, 1 when any is not.

    \b
    Examples:
      pbem check games/spring-2027
      pbem check games/spring-2027 alice.toml
      pbem check --view view.json my-orders.toml
    """
    from pbem.game import check as game_check
    from pbem.game import checking

    if view_file is not None:
        paths = ((directory,) if directory else ()) + files
        if not paths:
            raise click.UsageError("give at least one order file to check")
        results = checking.check_with_view(view_file, [Path(p) for p in paths])
    else:
        if directory is None:
            raise click.UsageError(
                "give a game directory (and order files, or none for its orders/)"
            )
        results = game_check.check_files(directory, list(files))[1]
    lines, ok = checking.check_lines(results)
    for line in lines:
        echo(line)
    if not ok:
        raise SystemExit(1)


@click.command(short_help="Resolve the pending turn and write the reports.")
@click.argument("directory", type=GAME_DIR)
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@NOW
@click.option("--force", is_flag=True, help="Let the autopilot play even for most players.")
@reports_errors
def resolve(directory: Path, files: tuple[Path, ...], now: str | None, force: bool) -> None:
    """Resolve the pending turn from FILES, or from DIRECTORY/orders/ when none are given.

    Before the deadline (or in a game without deadlines) it refuses, changing nothing, while
    an awaited player has no valid orders; after it, the autopilot plays for them. It refuses
    when that would be more than half of the players, unless --force.

    \b
    Examples:
      pbem resolve games/spring-2027
      pbem resolve games/spring-2027 --now 2026-12-03T20:05+01:00 --force
    """
    from pbem.game import processor

    outcome = processor.resolve_game(directory, list(files) or None, instant(now), force)
    if outcome.recovered:
        echo(f"Completed {processor.played(outcome).words()}, interrupted earlier.")
    for s in outcome.rejected:
        for message in s.messages():
            echo(f"rejected: {message}")
    echo(processor.summary(outcome))


@click.command(short_help="Move the pending turn's deadline, with a reason.")
@click.argument("directory", type=GAME_DIR)
@click.option("--extend", metavar="DURATION", help="Move the deadline later by 24h, 2d, ...")
@click.option("--set", "set_to", metavar="ISO-TIME", help="Set it: 2026-12-03T20:00+01:00.")
@click.option("--why", required=True, help="The reason, recorded in the history.")
@NOW
@reports_errors
def deadline(
    directory: Path, extend: str | None, set_to: str | None, why: str, now: str | None
) -> None:
    """Move the pending turn's deadline, recording when and why in the history.

    \b
    Examples:
      pbem deadline games/rome --extend 24h --why "alice is on holiday"
      pbem deadline games/rome --set 2026-12-03T20:00+01:00 --why "server down"
    """
    from pbem.game import deadlines
    from pbem.records import clock

    game, change, finished = deadlines.change_deadline(directory, instant(now), why, extend, set_to)
    assert game.deadline is not None and game.schedule is not None
    due = clock.describe(game.deadline, game.schedule.zone)
    if finished:
        echo(
            f"The last deadline change (change {change.number} of this turn, "
            f'"{change.why}") was interrupted before the game file followed it; it is now '
            f"complete: turn {game.state.turn} is due by {due}. Nothing else was changed: run "
            "the command again to move the deadline further."
        )
        return
    echo(
        f"Turn {game.state.turn} is now due by {due}"
        f" (change {change.number} of this turn, recorded in the history)."
    )
    from pbem.records.clock import parse_instant

    key = f"{change.resolution}/{change.number}"
    _tell_players("deadline", directory, parse_instant(change.time, "time"), change.why, key)


@click.command(name="undo", short_help="Take back the last resolution.")
@click.argument("directory", type=GAME_DIR)
@click.option("--why", default="", help="The reason, shown in every later report.")
@NOW
@reports_errors
def undo_command(directory: Path, why: str, now: str | None) -> None:
    """Take back the last resolution; its files are kept in history/undone/.

    The order files go back into orders/; resolving again uses the same key, so the same
    dice. Run it again to take back the one before. After a crash, run it again to finish.

    \b
    Example:
      pbem undo games/spring-2027 --why "bob's orders were in the spam folder"
    """
    from pbem.game import undo

    record, finished = undo.undo_last(directory, instant(now), why)
    echo(undo.taken_back(directory, record, finished))
    key = f"{record.resolution}/{record.attempt}"
    from pbem.records.clock import parse_instant

    _tell_players("undo", directory, parse_instant(record.time, "time"), record.why, key)


def _tell_players(what: str, directory: Path, now: datetime, why: str, key: str) -> None:
    """Queue the notice of an undo or a deadline change to every player, and say so."""
    from pbem.mail import inbox, notices

    settings = inbox.game_settings(directory)
    tell = notices.tell_undo if what == "undo" else notices.tell_deadline
    names = tell(directory, settings, now, why, key)
    if names:
        echo(
            f"The players are told: {len(names)} messages in outbox/ "
            "('pbem mail send' delivers them)."
        )


@click.command(name="release", short_help="Let a game held after an undo go on.")
@click.argument("directory", type=GAME_DIR)
@reports_errors
def release_command(directory: Path) -> None:
    """Let a game that waits after 'pbem undo' go on: 'pbem run' resolves it again when it is
    due. Resolving it by hand ('pbem resolve') releases it too.

    \b
    Example:
      pbem release games/spring-2027
    """
    from pbem.game import undo

    why = undo.release(directory)
    echo(f"Released: {why}. 'pbem run' resolves it when it is due." if why else "It was not held.")


@click.command(name="substitute", short_help="Give a seat to a new player.")
@click.argument("directory", type=GAME_DIR)
@click.argument("seat")
@click.option(
    "--to",
    "newcomer",
    required=True,
    metavar="NAME=ADDRESS[:LANG]",
    help="The new player: their name, address and (optionally) language.",
)
@click.option("--why", default="", help="The reason, kept in the history.")
@NOW
@reports_errors
def substitute_command(
    directory: Path, seat: str, newcomer: str, why: str, now: str | None
) -> None:
    """Give SEAT (its armies, cards and mission) to a new player, with a secret of their own.

    The seat keeps its name; orders signed with its previous player's secret are refused
    from now on. A seat dropped after missed turns may be given too, within the game's
    --substitute-within turns: it comes back with the territories it held then that are
    still neutral (its cards went back to the pile). The new player's first report (the
    seat's latest, made again with their secret) is mailed by the next 'pbem mail send'. Run
    it again after a crash: it completes the change.

    \b
    Example:
      pbem substitute games/spring-2027 dave --to carol=carol@example.org --why "dave moved abroad"
    """
    from pbem.game import processor, seats

    name, email, language = processor.parse_player(newcomer)
    if not email:
        raise PbemError(f"give the new player's address: --to {name}=ADDRESS")
    change = seats.substitute(directory, seat, name, email, instant(now), language, why)
    echo(f"{change.describe()}.")
    echo(
        f"The seat's latest report is made again for {change.holder}, with their secret: "
        "'pbem mail send' mails it to them as their first."
    )


@click.command(name="vacation", short_help="Record that a player is away.")
@click.argument("directory", type=GAME_DIR)
@click.argument("player")
@click.option("--from", "start", required=True, metavar="YYYY-MM-DD", help="The first day away.")
@click.option("--to", "end", required=True, metavar="YYYY-MM-DD", help="The last day away.")
@NOW
@reports_errors
def vacation_command(directory: Path, player: str, start: str, end: str, now: str | None) -> None:
    """Record that PLAYER is away from --from to --to (both days included, in the game's time
    zone), within their allowance of vacation days. Their turns wait for them, or, in a game
    made with --vacation-mode autopilot, the autopilot plays them without counting a miss.

    \b
    Example:
      pbem vacation games/rome bob --from 2027-03-12 --to 2027-03-19
    """
    from pbem.game import vacations
    from pbem.records import clock

    first, last = clock.parse_date(start, "--from"), clock.parse_date(end, "--to")
    when = instant(now)
    vacation, game, moved = vacations.declare(directory, player, first, last, when)
    echo(f"{vacation.describe()} ({vacation.days} days); recorded in history/vacations/.")
    if game.deadline is not None and game.schedule is not None:
        due = clock.describe(game.deadline, game.schedule.zone)
        echo(f"Turn {game.state.turn} is due by {due}.")
    if moved:  # the players are told the new deadline, as after 'pbem deadline'
        key = f"vacation-{vacation.resolution}-{vacation.number}"
        _tell_players("deadline", directory, when, vacation.describe(), key)


@click.command(name="seat", short_help="Let a program play a seat, or a person again.")
@click.argument("directory", type=GAME_DIR)
@click.argument("seat")
@click.option("--bot", metavar="BOT", help='"reference" (pbem\'s own) or "COMMAND ARGS".')
@click.option("--person", is_flag=True, help="Give the seat back to a person.")
@reports_errors
def seat_command(directory: Path, seat: str, bot: str | None, person: bool) -> None:
    """Let a bot play SEAT (--bot reference, or --bot "COMMAND ARGS"), or a person (--person).

    A bot answers as soon as the seat is awaited: it is given the seat's view file on standard
    input and writes an order file, checked as a person's; a bot that fails gets the
    autopilot's orders instead. See docs/bots.md.

    \b
    Example:
      pbem seat games/rome dave --bot reference
    """
    from pbem.game import bots

    if (bot is None) == (not person):
        raise PbemError("give either --bot BOT or --person")
    _game, answers = bots.set_bot(directory, seat, None if person else bot)
    echo(f"{seat}'s seat is played by " + (f"the bot {bot}." if bot else "a person."))
    for answer in answers:
        echo(answer.describe() + ".")
