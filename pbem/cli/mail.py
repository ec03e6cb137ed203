"""The mail commands (`pbem mail fetch`, `pbem mail send`) and the mailbox options `pbem run`
shares with them. They import pbem.mail (email, mailbox, smtplib) only when they run."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from pbem.cli.common import F, instant, reports_errors
from pbem.errors import PbemError

MAIL_FROM = click.option(
    "--from",
    "sender",
    help="The moderator's address, over the settings (pbem config; or set PBEM_FROM).",
)
GAME_OR_ROOT = click.Path(file_okay=False, path_type=Path)


def asker(kind: str) -> Callable[[str, str], str]:
    """Ask for a server password (once per server and login). Without a terminal (cron, a
    pipe) the password is a line of the input, read without a prompt or a warning; under cron
    there is none, and the environment variable must be set."""
    answers: dict[tuple[str, str], str] = {}
    env = f"PBEM_{kind}_PASSWORD"

    def ask(host: str, user: str) -> str:
        if (host, user) not in answers:
            prompt = f"{kind} password for {user} at {host}"
            if not sys.stdin.isatty():  # no terminal (cron, a pipe): a line of input, no prompt
                line = sys.stdin.readline()
                if not line.strip():
                    raise PbemError(f"no {kind} password for {user} at {host}: set {env}")
                answers[host, user] = line.rstrip("\r\n")
                return answers[host, user]
            try:
                answers[host, user] = str(click.prompt(prompt, hide_input=True))
            except click.Abort:  # no one to ask: the environment must hold it
                raise PbemError(f"no {kind} password for {user} at {host}: set {env}") from None
        return answers[host, user]

    return ask


def imap_flags(
    imap: str | None, user: str | None, folder: str | None, security: str | None
) -> dict[str, str | None]:
    from pbem.records.settings import split_host

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


@click.group(
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
    not take its messages, or the mailbox could not be read to the end (the IMAP server broke
    off): what was not taken is read again next time.

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
        **imap_flags(imap, user, folder, security),
    }
    when = mail.parse_time(now) if now else None
    box = inbox.mailbox(directory, flags, files, asker("IMAP"))
    result = inbox.fetch(directory, box, flags, when)
    click.echo("\n".join(result.lines()))
    if result.broken is not None or (isinstance(result, inbox.RootFetch) and not result.ok):
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
@click.option(
    "--now",
    metavar="ISO-TIME",
    help="The Date of the messages built now, e.g. 2026-12-03T20:00+01:00 (default: the clock).",
)
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
    now: str | None,
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

    ask = asker("SMTP")
    server = None
    if smtp:
        server = mail.smtp_server(smtp, starttls, user, lambda: ask(smtp, user or ""))
        server = replace(server, ssl=use_ssl)
    elif starttls or use_ssl or user:
        raise click.UsageError("--starttls, --ssl and --user go with --smtp")
    flags: dict[str, str | None] = {"from": sender, "reply_to": reply_to, "bcc": bcc or None}
    result = inbox.send(
        directory,
        flags,
        server,
        ask,
        dry_run,
        every,
        copy_sender=bcc == "",
        kit=kit,
        now=instant(now),
    )
    click.echo("\n".join(result.lines()))
    if not result.ok:
        raise SystemExit(1)


@mail_group.command(name="resend", short_help="Mail a player's report again.")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--player", "players", multiple=True, metavar="NAME", help="This player's (repeatable)."
)
@click.option("--turn", type=int, help="The report after this turn (default: the latest).")
@MAIL_FROM
@click.option(
    "--now",
    metavar="ISO-TIME",
    help="The Date of the messages, e.g. 2026-12-03T20:00+01:00 (default: the clock).",
)
@reports_errors
def mail_resend(
    directory: Path,
    players: tuple[str, ...],
    turn: int | None,
    sender: str | None,
    now: str | None,
) -> None:
    """Queue a report again in DIRECTORY/outbox/ as a new message ("resent" in its subject, a
    Message-ID of its own), for every player or those given; 'pbem mail send' (or 'pbem run
    --send') delivers it.

    \b
    Examples:
      pbem mail resend games/spring-2027 --player alice
      pbem mail resend games/spring-2027 --player bob --turn 12
    """
    from pbem.mail import inbox
    from pbem.mail.send import resend_reports

    settings = inbox.game_settings(directory, {"from": sender})
    result = resend_reports(directory, players, turn, settings.sender, instant(now))
    lines = [f"queued {name}: 'pbem mail send' delivers it" for name in result.queued]
    click.echo("\n".join(lines + result.notes or ["nothing to resend"]))
