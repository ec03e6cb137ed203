"""Many games: where each stands, the batch run (the cron job), the mail settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from pbem.cli.common import NOW, echo, instant, reports_errors
from pbem.cli.mail import asker, imap_flags, mailbox_options

SHARD_HELP = (
    "Only the games of shard K of N (K from 1 to N), for N machines sharing the folder; "
    "only shard 1 fetches the mail (docs/batch.md)."
)


@click.command(short_help="One line per game: where it stands, what it needs.")
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list, one object per game.")
@click.option("--now", help="The time to count deadlines from (ISO); default: the clock.")
@click.option("--shard", metavar="K/N", help=SHARD_HELP)
@reports_errors
def status(root: Path, as_json: bool, now: str | None, shard: str | None) -> None:
    """One line per game of ROOT (a folder of games, or one game): its turn, who is awaited,
    the orders in, and its state: damaged, overdue, ready, locked, waiting or over. What needs
    the moderator comes first.

    \b
    Examples:
      pbem status games
      pbem status games --json
    """
    from pbem.club import status as game_status
    from pbem.records.rootindex import parse_shard

    part = parse_shard(shard)
    statuses = game_status.root_status(root, game_status.moment(now), part)
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in statuses], indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(game_status.status_lines(statuses)))


@click.command(short_help="The cron job: fetch, resolve every game due, send.")
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
    help="First fetch the mail of the mailbox the settings name (a mailbox given here is "
    "fetched without --fetch).",
)
@mailbox_options
@click.option("--send", is_flag=True, help="Last, send every game's mail with its settings.")
@click.option(
    "--kit",
    is_flag=True,
    help="With --send: the player's kit (pbem-player.pyz) goes with each first report.",
)
@click.option("--shard", metavar="K/N", help=SHARD_HELP)
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
    kit: bool,
    shard: str | None,
) -> None:
    """Fetch the mail (--fetch, or a mailbox given), resolve every game of ROOT that is due,
    send what was written (--send), then print one line per game. Last, each tournament of
    ROOT whose round is over gets its next round, with a line saying so (docs/tournaments.md).

    Exit code 1 when any game failed (a damaged game, a resolution that went wrong) or mail
    could not be fetched or sent; the other games are resolved all the same. Made for cron:
    nothing but the summary is printed unless on a terminal, where a progress bar shows.

    \b
    Examples:
      pbem run games --jobs 2
      pbem run games --fetch --send --kit
      pbem run games --dry-run
      pbem run games --shard 2/4
    """
    from pbem.club import batch
    from pbem.club.status import moment
    from pbem.records.rootindex import parse_shard

    part = parse_shard(shard)
    flags: dict[str, str | None] = {
        "maildir": str(maildir) if maildir else None,
        "mbox": str(mbox) if mbox else None,
        **imap_flags(imap, user, folder, security),
    }
    if kit and not send:
        raise click.UsageError("--kit goes with --send (it is attached to the reports sent)")
    mail = batch.MailRun(
        fetch or any(flags.values()), send, flags, asker("IMAP"), asker("SMTP"), kit
    )
    when = moment(now)
    from pbem.club.tournament import advance_tournaments  # (docs/tournaments.md)

    summary = batch.run_root(
        root, when, jobs, dry_run, _progress_bar(), mail, advance_tournaments, part
    )
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


@click.command(short_help="Show or change mail settings and players' addresses.")
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
    from pbem.game import players, setting
    from pbem.records import settings

    addresses = tuple(a for a in assignments if players.is_player_setting(a))
    changed = settings.parse_assignments(tuple(a for a in assignments if a not in addresses))
    settings.changed((), changed)  # every mail setting checked before anything is written
    if addresses:
        for change in players.configure(directory, addresses, instant(now)):
            if isinstance(change, players.LanguageChange):
                echo(f"{change.describe()}; from the next report on.")
            else:
                echo(f"{change.describe()}; recorded in history/{players.ADDRESSES}/.")
        if not changed:
            return
    path, in_force = setting.configure(directory, changed)
    if changed:
        click.echo(f"Wrote {path}.")
    click.echo("\n".join(in_force.lines()) or "No mail settings: pbem mails from pbem@localhost.")
