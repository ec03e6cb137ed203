"""The command line: each command reads its arguments, calls one library function, prints.

Every `PbemError` becomes a one-line message (or one line per problem) and exit code 1.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import click

from pbem import __version__
from pbem.errors import PbemError
from pbem.terminal import printable

# Each command imports the library modules it uses, so that a command that only checks or
# computes loads neither the reports (Jinja2) nor the rest: its start-up is what a moderator
# waits for.

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Turn library errors into a clean message and exit code 1, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PbemError as err:
            raise click.ClickException(printable(str(err), lines=True)) from None
        except OSError as err:  # a fault no library function foresaw: still a sentence
            from pbem.game.safety import disk_error

            path = Path(err.filename) if err.filename else Path(".")
            raise click.ClickException(printable(str(disk_error(err, path, "use")))) from None

    return wrapper  # type: ignore[return-value]


def echo(text: str) -> None:
    """Print pbem's own lines; any control character in them (from a player) shown escaped."""
    click.echo(printable(text, lines=True))


GAME_DIR = click.Path(file_okay=False, path_type=Path)

NOW = click.option(
    "--now",
    metavar="ISO-TIME",
    help="The time to act at, e.g. 2026-12-03T20:00+01:00 (default: the system clock).",
)


def _now(text: str | None) -> datetime:
    """The time a command acts at: --now, or else the system clock (the one place read)."""
    from pbem.game import clock

    if text is None:
        return datetime.now(timezone.utc).replace(microsecond=0)
    return clock.parse_instant(text)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="pbem")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Run games of Risk by email: check orders, resolve turns, write reports, audit dice.

    \b
    Example, a whole turn:
      pbem new games/spring --players alice,bob,carol
      pbem check games/spring games/spring/orders/*.toml
      pbem resolve games/spring

    \b
    Shell completion (for zsh or fish, write zsh_source or fish_source):
      eval "$(_PBEM_COMPLETE=bash_source pbem)"
    """
    if ctx.invoked_subcommand is None:  # bare `pbem`: the help, and success
        click.echo(ctx.get_help())


@main.command(short_help="Create a game and write the first reports.")
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
    "--fortify",
    type=click.Choice(["adjacent", "connected"]),
    default="adjacent",
    show_default=True,
    help="Fortify to an adjacent territory, or through any chain of your own.",
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
    fortify: str,
    traded_cards: str,
    turn_time: str | None,
    due_at: str | None,
    zone: str,
    drop_after: int,
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
    from pbem.core.state import FortifyMode, Options, Phase, SetupMode, TradedCards, TwoPlayer
    from pbem.game import clock, deadlines, processor, settings
    from pbem.game.store import read_game

    try:
        seed_bytes = bytes.fromhex(seed) if seed else None
    except ValueError:
        raise PbemError("--seed must be 64 hexadecimal digits") from None
    schedule = deadlines.schedule_from_options(turn_time, due_at, zone)
    options = Options(
        SetupMode(setup),
        TwoPlayer(two_player),
        FortifyMode(fortify),
        TradedCards(traded_cards),
        drop_after,
        missions,
    )
    mail = settings.changed((), settings.parse_assignments(mail_settings))
    outcome = processor.new_game(
        directory,
        processor.parse_player_list(players.split(",")),
        options,
        seed_bytes,
        name,
        schedule=schedule,
        now=_now(now),
        language=language,
        languages=processor.parse_player_languages(players.split(",")),
        mail=mail,
    )
    state = outcome.state
    echo(f"Created game '{state.game}' in {directory}: {len(state.players)} players.")
    echo("Order of play: " + ", ".join(p.name for p in state.players))
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


@main.command(short_help="Check order files, changing nothing.")
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
    from pbem.game import checking, processor

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
        results = processor.check_files(directory, list(files))[1]
    lines, ok = checking.check_lines(results)
    for line in lines:
        echo(line)
    if not ok:
        raise SystemExit(1)


@main.command(short_help="Resolve the pending turn and write the reports.")
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

    outcome = processor.resolve_game(directory, list(files) or None, _now(now), force)
    if outcome.recovered:
        echo(f"Completed {processor.played(outcome).words()}, interrupted earlier.")
    for s in outcome.rejected:
        for message in s.messages():
            echo(f"rejected: {message}")
    echo(processor.summary(outcome))


@main.command(short_help="Show the board and the players.")
@click.argument("directory", type=GAME_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON (docs/views.md).")
@click.option("--player", help="Show only what this player may see.")
@reports_errors
def show(directory: Path, as_json: bool, player: str | None) -> None:
    """Show a game's state, for the moderator or as one player may see it.

    \b
    Examples:
      pbem show games/spring-2027
      pbem show games/spring-2027 --json --player alice
    """
    from pbem.game import processor
    from pbem.game.store import read_game
    from pbem.present.context import deadline_iso, deadline_text
    from pbem.present.view import game_view

    game = read_game(directory)
    if player is not None and not game.state.has_player(player):
        raise PbemError(f"there is no player '{player}' in this game")
    view = game_view(game.state, player, game.commitment, deadline_iso(game))
    if as_json:
        echo(json.dumps(view, indent=2, ensure_ascii=False))
    else:
        click.echo(
            printable(
                processor.show_table(game.state, view, deadline_text(game, None)),
                lines=True,
            ),
            nl=False,
        )


@main.command(name="dice", short_help="List every die rolled, with its key.")
@click.argument("directory", type=GAME_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON (docs/views.md).")
@click.option("--turn", type=click.IntRange(min=0), help="Only this turn (0: the setup turn).")
@click.option("--resolution", type=int, help="Only this resolution (history/NNNN.toml).")
@reports_errors
def dice_command(directory: Path, as_json: bool, turn: int | None, resolution: int | None) -> None:
    """List every die rolled, turn by turn, with its key.

    \b
    Examples:
      pbem dice games/spring-2027 --turn 13
      pbem dice games/spring-2027 --resolution 14
    """
    from pbem.game import processor

    history = processor.dice_history(directory, resolution, turn)
    if as_json:
        echo(json.dumps(history, indent=2))
        return
    for line in processor.dice_lines(history):
        echo(line)


@main.command(short_help="Replay the history; check every event, die and key.")
@click.argument("directory", type=GAME_DIR)
@reports_errors
def audit(directory: Path) -> None:
    """Replay the whole history and check every event, die and key against it.

    \b
    Example:
      pbem audit games/spring-2027
    """
    from pbem.game import processor

    echo(processor.audit_game(directory).passed())


@main.command(short_help="Move the pending turn's deadline, with a reason.")
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
    from pbem.game import clock, deadlines

    game, change = deadlines.change_deadline(directory, _now(now), why, extend, set_to)
    assert game.deadline is not None and game.schedule is not None
    echo(
        f"Turn {game.state.turn} is now due by {clock.describe(game.deadline, game.schedule.zone)}"
        f" (change {change.number} of this turn, recorded in the history)."
    )


@main.command(name="undo", short_help="Take back the last resolution.")
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

    record, finished = undo.undo_last(directory, _now(now), why)
    echo(undo.taken_back(directory, record, finished))


@main.command(name="map", short_help="Print the board, with the names orders accept.")
@click.argument("name", default="classic")
@click.option("--json", "as_json", is_flag=True, help="Print the board as JSON (docs/views.md).")
@reports_errors
def map_command(name: str, as_json: bool) -> None:
    """Print a board: continents, territories, borders, cards and the other names of each
    territory that orders accept.

    \b
    Example:
      pbem map classic --json
    """
    from pbem.core.board import load_board

    board = load_board(name)
    if as_json:
        echo(json.dumps(board.to_json(), indent=2))
        return
    echo("Orders accept each name in any case, with or without spaces, hyphens and dots,")
    echo("and the other names given after 'also'.")
    for continent in board.continents.values():
        echo(f"{continent.name} (+{continent.bonus})")
        for t in continent.territories:
            territory = board.territories[t]
            neighbours = ", ".join(territory.neighbours)
            echo(f"  {t} [{territory.card.value}]: {neighbours}")
            alternatives = board.alternatives(t)
            if alternatives:
                echo(f"    also: {', '.join(alternatives)}")


@main.command(name="verify", short_help="Check a resolution's key chain and dice.")
@click.argument("key", required=False)
@click.argument("previous_key", required=False)
@click.option(
    "--dice",
    "rolls",
    multiple=True,
    help='One roll, attacker/defender dice as rolled: "6 3 1/5 2". Repeat, in order.',
)
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Take the keys and rolls from a report: its .view.json or its .txt.",
)
@reports_errors
def verify_command(
    key: str | None, previous_key: str | None, rolls: tuple[str, ...], report_file: Path | None
) -> None:
    """Check a resolution's dice: SHA-256(KEY) = PREVIOUS_KEY, and every die from KEY.

    The view file of a finished game with missions also has every mission checked against
    the card key it reveals.

    Exit code 0 when the key and every die check out, 1 when anything does not.

    \b
    Examples:
      pbem verify --report reports/0003-turn-2/alice.view.json
      pbem verify KEY PREVIOUS_KEY --dice "6 3 1/5 2" --dice "4 4/6"
    """
    from pbem.present import verify

    try:
        lines, ok = verify.verify_lines(key, previous_key, rolls, report_file)
    except verify.ArgumentsError as err:
        raise click.UsageError(str(err)) from None
    echo("\n".join(lines))
    if not ok:
        raise SystemExit(1)


@main.command(name="stats", short_help="The story of a game, with each player's luck.")
@click.argument("directory", type=GAME_DIR, required=False)
@click.option(
    "--view",
    "view_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A player's .view.json from a report, instead of a game directory.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
@reports_errors
def stats_command(directory: Path | None, view_file: Path | None, as_json: bool) -> None:
    """The story of a game: its length, who eliminated whom, territories and armies over
    time, the biggest battles, the cards traded, and each player's luck with the dice.

    \b
    Examples:
      pbem stats games/spring-2027
      pbem stats --view alice.view.json
    """
    from pbem.present import stats

    if (directory is None) == (view_file is None):
        raise PbemError("give a game directory or --view FILE (one of them)")
    if view_file is not None:
        numbers, lines = stats.view_stats(view_file)
    else:
        assert directory is not None
        numbers = stats.directory_stats(directory)
        lines = stats.stats_text(numbers)
    echo(json.dumps(numbers, indent=2, ensure_ascii=False) if as_json else "\n".join(lines))


@main.command(name="odds", short_help="Exact odds of an attack.")
@click.argument("attackers", type=click.IntRange(min=1))
@click.argument("defenders", type=click.IntRange(min=1))
@click.option(
    "--stop-at",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Stop attacking when the attackers are down to this many armies.",
)
@click.option("--dice", type=click.IntRange(1, 3), help="Most dice the attacker rolls.")
@reports_errors
def odds_command(attackers: int, defenders: int, stop_at: int, dice: int | None) -> None:
    """Exact odds of an attack from ATTACKERS armies against DEFENDERS.

    \b
    Example:
      pbem odds 10 10 --stop-at 3
    """
    from pbem.core import odds

    echo(odds.attack_summary(attackers, defenders, stop_at, dice))


@main.command(name="kit", short_help="Write the player's kit, pbem-player.pyz.")
@click.argument("directory", type=GAME_DIR, default=".")
@reports_errors
def kit_command(directory: Path) -> None:
    """Write pbem-player.pyz into DIRECTORY (default: here): one file a player runs with any
    Python 3.10 or newer, nothing else installed, to check orders against the view.json of
    their report, work out odds and verify dice. `pbem mail send --kit` attaches it to the
    first report.

    \b
    Examples:
      pbem kit games/spring-2027
      python3 pbem-player.pyz check --view alice.view.json orders.toml
    """
    from pbem import kit

    path = kit.write_kit(directory)
    echo(f"Wrote {path} ({path.stat().st_size // 1024} KiB): players run it with")
    echo(f"  python3 {kit.KIT_NAME} check --view NAME.view.json ORDERS.toml")


# The mail commands import pbem.mail (email, mailbox, smtplib) only when they run.
MAIL_FROM = click.option(
    "--from",
    "sender",
    help="The moderator's address, over the settings (pbem config; or set PBEM_FROM).",
)
GAME_OR_ROOT = click.Path(file_okay=False, path_type=Path)


def _asker(kind: str) -> Callable[[str, str], str]:
    """Ask for a server password (once per server and login); under cron there is no one to
    ask, and the environment variable must be set."""
    answers: dict[tuple[str, str], str] = {}
    env = f"PBEM_{kind}_PASSWORD"

    def ask(host: str, user: str) -> str:
        if (host, user) not in answers:
            prompt = f"{kind} password for {user} at {host}"
            try:
                answers[host, user] = str(click.prompt(prompt, hide_input=True))
            except click.Abort:  # no one to ask (cron): the environment must hold it
                raise PbemError(f"no {kind} password for {user} at {host}: set {env}") from None
        return answers[host, user]

    return ask


def _imap_flags(
    imap: str | None, user: str | None, folder: str | None, security: str | None
) -> dict[str, str | None]:
    from pbem.game.settings import split_host

    host, port = split_host(imap, "--imap") if imap else (None, None)
    return {
        "imap_host": host,
        "imap_port": port,
        "imap_user": user,
        "imap_folder": folder,
        "imap_security": security,
    }


MAILBOX_OPTIONS = [
    click.option(
        "--maildir",
        type=click.Path(file_okay=False, exists=True, path_type=Path),
        help="Read the messages of this Maildir folder (its new/ and cur/).",
    ),
    click.option(
        "--mbox",
        type=click.Path(dir_okay=False, exists=True, path_type=Path),
        help="Read the messages of this mbox file.",
    ),
    click.option(
        "--imap",
        metavar="HOST[:PORT]",
        help="Read the unseen messages of an IMAP folder (each marked seen once handled).",
    ),
    click.option("--user", help="The IMAP login (password: PBEM_IMAP_PASSWORD or a prompt)."),
    click.option("--folder", help="The IMAP folder to read (default INBOX)."),
    click.option(
        "--security",
        type=click.Choice(["ssl", "starttls", "none"]),
        help="How the IMAP connection is protected (default ssl).",
    ),
]


def mailbox_options(func: F) -> F:
    """The ways to name a mailbox: a Maildir, an mbox file or an IMAP folder."""
    for option in reversed(MAILBOX_OPTIONS):
        func = option(func)
    return func


@main.group(
    name="mail",
    short_help="Fetch orders from a mailbox; mail the reports.",
    invoke_without_command=True,
)
@click.pass_context
def mail_group(ctx: click.Context) -> None:
    """Take orders from a mailbox and mail the reports; without a server, through folders.

    DIRECTORY is a game, or a folder of games: then each message goes to the game its orders
    name (or the [game] tag of its subject), and each game's mail goes out with its own
    settings (see pbem config).
    """
    if ctx.invoked_subcommand is None:  # bare `pbem mail`: its help, and success
        click.echo(ctx.get_help())


@mail_group.command(name="fetch", short_help="Store mailed orders and answer the players.")
@click.argument("directory", type=GAME_OR_ROOT)
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, exists=True, path_type=Path))
@mailbox_options
@MAIL_FROM
@click.option(
    "--now", metavar="TIME", help="Read the mail as at this ISO 8601 time (default: now)."
)
@reports_errors
def mail_fetch(
    directory: Path,
    files: tuple[Path, ...],
    maildir: Path | None,
    mbox: Path | None,
    imap: str | None,
    user: str | None,
    folder: str | None,
    security: str | None,
    sender: str | None,
    now: str | None,
) -> None:
    """Store the orders mailed in (DIRECTORY/orders/) and answer the players (outbox/).

    Messages that are not from a player's address are not answered: they are kept in
    mail/rejected/ and listed in one message to the moderator. Without a mailbox given, the
    one the settings name (maildir, mbox, imap_host) is read. Exit code 1 when a game could
    not take its messages (they are read again next time).

    \b
    Examples:
      pbem mail fetch games/spring-2027 --maildir ~/Maildir
      pbem mail fetch games --imap mail.example.org --user games --folder INBOX
      pbem mail fetch games/spring-2027 alice.eml
    """
    from pbem import mail
    from pbem.mail import inbox

    flags: dict[str, str | None] = {
        "from": sender,
        "maildir": str(maildir) if maildir else None,
        "mbox": str(mbox) if mbox else None,
        **_imap_flags(imap, user, folder, security),
    }
    when = mail.parse_time(now) if now else None
    box = inbox.mailbox(directory, flags, files, _asker("IMAP"))
    result = inbox.fetch(directory, box, flags, when)
    click.echo("\n".join(result.lines()))
    if isinstance(result, inbox.RootFetch) and not result.ok:
        raise SystemExit(1)


@mail_group.command(name="send", short_help="Mail the reports not yet sent.")
@click.argument("directory", type=GAME_OR_ROOT)
@click.option(
    "--smtp",
    metavar="HOST:PORT",
    help="Send through this server, over the settings; else only outbox/.",
)
@click.option("--starttls", is_flag=True, help="Encrypt the connection with STARTTLS.")
@click.option("--ssl", "use_ssl", is_flag=True, help="Connect with SSL (SMTPS, port 465).")
@click.option("--user", help="Log in as NAME (password: PBEM_SMTP_PASSWORD or a prompt).")
@click.option("--dry-run", is_flag=True, help="Show what would be written and sent only.")
@click.option(
    "--all",
    "every",
    is_flag=True,
    help="A game under way whose mail begins now: mail every past report, not the latest only.",
)
@click.option(
    "--bcc-moderator",
    "bcc",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[ADDRESS]",
    help="Send the moderator (the From address, or ADDRESS) a copy of every report.",
)
@click.option(
    "--kit",
    is_flag=True,
    help="Attach the player's kit (pbem-player.pyz, see pbem kit) to each first report.",
)
@MAIL_FROM
@click.option("--reply-to", help="The Reply-To of every message, over the settings.")
@reports_errors
def mail_send(
    directory: Path,
    smtp: str | None,
    starttls: bool,
    use_ssl: bool,
    user: str | None,
    dry_run: bool,
    every: bool,
    bcc: str | None,
    kit: bool,
    sender: str | None,
    reply_to: str | None,
) -> None:
    """Mail each player's reports not yet sent, and the answers waiting in outbox/.

    The server, From, Reply-To and Bcc come from the flags, else the settings in force when
    sending (pbem config); without a server the messages wait in outbox/ as .eml files. A
    message the server refuses for good goes to outbox/failed/ with the reason; one refused for
    now waits. Exit code 1 when anything could not be sent; run it again to send what is left.

    \b
    Examples:
      pbem mail send games/spring-2027 --dry-run
      pbem mail send games/spring-2027 --smtp mail.example.org:587 --starttls --user pbem
      pbem mail send games
    """
    from dataclasses import replace

    from pbem import mail
    from pbem.mail import inbox

    ask = _asker("SMTP")
    server = None
    if smtp:
        server = mail.smtp_server(smtp, starttls, user, lambda: ask(smtp, user or ""))
        server = replace(server, ssl=use_ssl)
    elif starttls or use_ssl or user:
        raise click.UsageError("--starttls, --ssl and --user go with --smtp")
    flags: dict[str, str | None] = {"from": sender, "reply_to": reply_to, "bcc": bcc or None}
    result = inbox.send(
        directory, flags, server, ask, dry_run, every, copy_sender=bcc == "", kit=kit
    )
    click.echo("\n".join(result.lines()))
    if not result.ok:
        raise SystemExit(1)


# Many games: where each stands, the batch run, the mail settings.
@main.command(short_help="One line per game: where it stands, what it needs.")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per game.")
@click.option("--now", help="The time to count deadlines from (ISO); default: the clock.")
@reports_errors
def status(root: Path, as_json: bool, now: str | None) -> None:
    """One line per game of ROOT (a folder of games, or one game): its turn, who is awaited,
    the orders in, and its state: damaged, overdue, ready, locked, waiting or over. What needs
    the moderator comes first.

    \b
    Examples:
      pbem status games
      pbem status games --json
    """
    from pbem.game import status as game_status

    statuses = game_status.root_status(root, game_status.moment(now))
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in statuses], indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(game_status.status_lines(statuses)))


@main.command(short_help="The cron job: fetch, resolve every game due, send.")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Resolve this many games at once, each in a process of its own.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be resolved; change nothing.")
@click.option("--now", help="The time to count deadlines from (ISO); default: the clock.")
@click.option(
    "--fetch",
    is_flag=True,
    help="First fetch the mail: the mailbox given, or the one the settings name.",
)
@mailbox_options
@click.option("--send", is_flag=True, help="Last, send every game's mail with its settings.")
@reports_errors
def run(
    root: Path,
    jobs: int,
    dry_run: bool,
    now: str | None,
    fetch: bool,
    maildir: Path | None,
    mbox: Path | None,
    imap: str | None,
    user: str | None,
    folder: str | None,
    security: str | None,
    send: bool,
) -> None:
    """Fetch the mail (--fetch), resolve every game of ROOT that is due, send what was
    written (--send), then print one line per game.

    Exit code 1 when any game failed (a damaged game, a resolution that went wrong) or mail
    could not be fetched or sent; the other games are resolved all the same. Made for cron:
    nothing but the summary is printed unless on a terminal, where a progress bar shows.

    \b
    Examples:
      pbem run games --jobs 2
      pbem run games --fetch --send
      pbem run games --dry-run
    """
    from pbem.game import batch
    from pbem.game.status import moment

    flags: dict[str, str | None] = {
        "maildir": str(maildir) if maildir else None,
        "mbox": str(mbox) if mbox else None,
        **_imap_flags(imap, user, folder, security),
    }
    mail = batch.MailRun(fetch or any(flags.values()), send, flags, _asker("IMAP"), _asker("SMTP"))
    summary = batch.run_root(root, moment(now), jobs, dry_run, _progress_bar(), mail)
    click.echo("\n".join(summary.lines()))
    if not summary.ok:
        raise SystemExit(1)


def _progress_bar() -> Any:
    """Click's progress bar on stderr when it is a terminal; nothing under cron."""
    stream = sys.stderr
    if not stream.isatty():
        return None

    def progress(results: Any, length: int) -> Any:
        with click.progressbar(results, length=length, label="games", file=stream) as bar:
            yield from bar

    return progress


@main.command(short_help="Show or change mail settings and players' addresses.")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("assignments", nargs=-1, metavar="[KEY=VALUE]...")
@NOW
@reports_errors
def config(directory: Path, assignments: tuple[str, ...], now: str | None) -> None:
    """Show or change the mail settings of a game, or of every game in a folder of games, and
    players' addresses.

    In a game directory the settings go into its game file; in any other folder into its
    pbem.toml, which every game below it inherits. KEY= (nothing after '=') removes a
    setting. Without KEY=VALUE, print the settings in force and where each comes from.
    Passwords are never stored: set PBEM_SMTP_PASSWORD or type it when asked.

    player.NAME.email=ADDRESS changes a player's address: game.toml gets it, the history
    records the change with the time, and every later mail goes to it (player.NAME.email=
    leaves them without one). player.NAME.language=CODE (en, id, sv, it, nl, gu) sets the
    language of their reports, answers and order files from the next one on
    (player.NAME.language= gives them the game's again).

    \b
    Keys: from, reply_to, bcc, smtp_host, smtp_port, smtp_security (none, starttls, ssl),
    smtp_user, imap_host, imap_port, imap_security, imap_user, imap_folder, maildir, mbox,
    player.NAME.email, player.NAME.language.

    \b
    Examples:
      pbem config games from=games@example.org smtp_host=mail.example.org smtp_security=ssl
      pbem config games/spring-2027 reply_to=spring@example.org
      pbem config games/spring-2027 player.ann.email=ann@example.net
      pbem config games/spring-2027 player.ann.language=it
      pbem config games/spring-2027
    """
    from pbem.game import players, settings

    addresses = tuple(a for a in assignments if players.is_player_setting(a))
    changed = settings.parse_assignments(tuple(a for a in assignments if a not in addresses))
    settings.changed((), changed)  # every mail setting checked before anything is written
    if addresses:
        for change in players.configure(directory, addresses, _now(now)):
            if isinstance(change, players.LanguageChange):
                echo(f"{change.describe()}; from the next report on.")
            else:
                echo(f"{change.describe()}; recorded in history/{players.ADDRESSES}/.")
        if not changed:
            return
    path, in_force = settings.configure(directory, changed)
    if changed:
        click.echo(f"Wrote {path}.")
    click.echo("\n".join(in_force.lines()) or "No mail settings: pbem mails from pbem@localhost.")
