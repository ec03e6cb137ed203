"""Reading a game's or a folder of games' mailbox, and sending their mail.

Fetching: into a game, or into every game of a folder (pbem.mail.rootfetch), each message
handled as it is read; a mailbox that breaks off part way is a sentence, what was handled
stays handled. Sending: each game's mail goes out with the settings in force for that game now
(its file, the pbem.toml above it, the flags), and the root's own answers with the root's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from pbem.errors import GameFileError, LockedError, PbemError
from pbem.mail.fetch import fetch_entries
from pbem.mail.mailboxes import Mailbox, exists, mailbox, opened
from pbem.mail.outcomes import FetchResult
from pbem.mail.rootfetch import RootFetch, Unrouted, _sweep, fetch_root, game_settings
from pbem.mail.send import SendResult, deliver_waiting, send_mail, stamp, waiting
from pbem.mail.smtp import SmtpServer
from pbem.records.disk import GAME_FILE, locked
from pbem.records.mailbox_state import record_failure, record_fetch
from pbem.records.root import open_root
from pbem.records.settings import Security, Settings, Value, in_force
from pbem.records.settings import password as settings_password
from pbem.terminal import printable

__all__ = [
    "Mailbox",
    "RootFetch",
    "RootSend",
    "Unrouted",
    "fetch",
    "fetch_game",
    "fetch_root",
    "game_settings",
    "mailbox",
    "send",
    "send_answers",
    "send_game",
    "send_into",
    "send_root",
    "smtp_of",
]


def fetch(
    directory: Path,
    box: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> FetchResult | RootFetch:
    """Fetch into a game, or into every game of a root. A mailbox that cannot be read, or
    not to the end (`broken`), is recorded as such (pbem.records.mailbox_state), so that no game
    waiting for it is played by the autopilot; .eml files given alone are some messages, not
    the mailbox, and are not recorded."""
    exists(directory)
    when = now or datetime.now(timezone.utc)
    try:
        if (directory / GAME_FILE).is_file():
            result: FetchResult | RootFetch = fetch_game(directory, box, flags, when)
        else:
            result = fetch_root(directory, box, flags, when)
    except PbemError as err:
        if box.whole and not isinstance(err, (GameFileError, LockedError)):
            record_failure(directory, when, str(err))
        raise
    if result.broken is not None and box.whole:
        record_failure(directory, when, result.broken)
    return result


# ---------------------------------------------------------------------------------------------
# Fetching


def fetch_game(
    directory: Path,
    mailbox: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> FetchResult:
    """Fetch one game's mail from any mailbox, each message handled as it is read (an IMAP
    message marked seen once handled)."""
    settings = game_settings(directory, flags)
    with opened(mailbox) as reading:
        result = fetch_entries(
            directory,
            reading.entries(),
            settings.sender,
            now,
            settings.moderator,
            reading.done,
            reading.known,
        )
    if reading.broken is not None:
        return replace(result, broken=reading.broken)
    if mailbox.whole:  # .eml files alone are not the mailbox read
        record_fetch(directory, result.read_at or datetime.now(timezone.utc))
    return result


# ---------------------------------------------------------------------------------------------
# Sending


def smtp_of(settings: Settings, ask: Callable[[str, str], str] | None = None) -> SmtpServer | None:
    """The SMTP server the settings name (None: the messages stay in the outbox); `ask(host,
    user)` is asked for a password when PBEM_SMTP_PASSWORD is not set."""
    server = settings.server("smtp")
    if server is None:
        return None
    user, host = server.user, server.host

    def password() -> str | None:
        if user is None:
            return None
        return settings_password("smtp", user, (lambda: ask(host, user)) if ask else None)

    return SmtpServer(
        server.host,
        server.port,
        starttls=server.security is Security.STARTTLS,
        user=user,
        password=password,
        ssl=server.security is Security.SSL,
    )


@dataclass
class RootSend:
    """What sending for a root did, game by game."""

    games: list[tuple[str, SendResult]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    """Games another run held (not a failure: their mail waits in their outbox)."""

    @property
    def ok(self) -> bool:
        return not self.failed and all(r.ok for _, r in self.games)

    def lines(self) -> list[str]:
        out: list[str] = []
        for name, result in self.games:
            if result.built or result.delivered or result.failed or result.pending:
                out += [f"{name}: {line}" for line in result.lines()]
            else:
                out += [f"{name}: {line}" for line in result.notes]
        if not out:
            out.append(f"nothing to send in {len(self.games)} games")
        out += [f"failed: {printable(f)}" for f in self.failed]
        out += [printable(b) for b in self.busy]
        return out


def send(
    directory: Path,
    flags: Mapping[str, Value | None] | None = None,
    server: SmtpServer | None = None,
    ask: Callable[[str, str], str] | None = None,
    dry_run: bool = False,
    every: bool = False,
    copy_sender: bool = False,
    kit: bool = False,
    now: datetime | None = None,
) -> SendResult | RootSend:
    """Send a game's mail, or every game's of a root; `kit`: the player's kit goes with each
    first report; `now`: the Date of the messages built now (default: the clock)."""
    exists(directory)
    if (directory / GAME_FILE).is_file():
        return send_game(
            directory, flags, server, ask, dry_run, every, now, copy_sender=copy_sender, kit=kit
        )
    return send_root(
        directory, flags, server, ask, dry_run, every, now, copy_sender=copy_sender, kit=kit
    )


def send_game(
    directory: Path,
    flags: Mapping[str, Value | None] | None = None,
    server: SmtpServer | None = None,
    ask: Callable[[str, str], str] | None = None,
    dry_run: bool = False,
    every: bool = False,
    now: datetime | None = None,
    copy_sender: bool = False,
    kit: bool = False,
) -> SendResult:
    """Send one game's mail with the settings in force for it now; `server` (from the command
    line) over the one the settings name; `copy_sender`: a copy of each report to the From."""
    settings = game_settings(directory, flags)
    return send_mail(
        directory,
        settings.sender,
        server or smtp_of(settings, ask),
        settings.sender if copy_sender else settings.bcc,
        dry_run,
        now,
        reply_to=settings.reply_to,
        every=every,
        kit=kit,
    )


def send_root(
    root: Path,
    flags: Mapping[str, Value | None] | None = None,
    server: SmtpServer | None = None,
    ask: Callable[[str, str], str] | None = None,
    dry_run: bool = False,
    every: bool = False,
    now: datetime | None = None,
    games: Sequence[Path] | None = None,
    copy_sender: bool = False,
    kit: bool = False,
    answers: bool = True,
) -> RootSend:
    """Send every game's mail, each with its own settings, then the root's own answers (unless
    not `answers`: another run sends them)."""
    out = RootSend()
    listing = open_root(root, games)
    for name, path in listing.games:
        twin = listing.duplicate_reason(path)
        if twin is not None:
            out.failed.append(f"{path}: not sent: {twin}")
            continue
        send_into(out, name, path, flags, server, ask, dry_run, every, now, copy_sender, kit)
    if answers:
        send_answers(out, root, [p for _, p in listing.games], flags, server, ask, dry_run)
    return out


def send_into(
    out: RootSend,
    name: str,
    directory: Path,
    flags: Mapping[str, Value | None] | None = None,
    server: SmtpServer | None = None,
    ask: Callable[[str, str], str] | None = None,
    dry_run: bool = False,
    every: bool = False,
    now: datetime | None = None,
    copy_sender: bool = False,
    kit: bool = False,
) -> SendResult | None:
    """Send one game's mail as a root's send does, told in `out`: what it did, or None when
    another run held the game or it could not be sent (told in `out` as such)."""
    try:
        result = send_game(directory, flags, server, ask, dry_run, every, now, copy_sender, kit)
    except LockedError:  # another run is at it: its mail goes with that run or the next
        out.busy.append(f"{name}: busy (another run holds it); its mail waits")
        return None
    except PbemError as err:
        out.failed.append(f"{name}: {err}")
        return None
    out.games.append((name, result))
    return result


def send_answers(
    out: RootSend,
    root: Path,
    games: Sequence[Path],
    flags: Mapping[str, Value | None] | None = None,
    server: SmtpServer | None = None,
    ask: Callable[[str, str], str] | None = None,
    dry_run: bool = False,
) -> None:
    """Send the root's own answers (the messages for no game), told in `out`; nothing when the
    root is itself one of its `games` (its outbox is that game's)."""
    if waiting(root) and root.resolve() not in {p.resolve() for p in games}:
        sent = _send_root_outbox(root, flags, server, ask, dry_run)
        out.games.append((f"{root.name} (messages for no game)", sent))


def _send_root_outbox(
    root: Path,
    flags: Mapping[str, Value | None] | None,
    server: SmtpServer | None,
    ask: Callable[[str, str], str] | None,
    dry_run: bool,
) -> SendResult:
    settings = in_force(root, (), flags)
    result = SendResult(dry_run=dry_run)
    with locked(root, creating=True):
        _sweep(root)
        pending = waiting(root)
        if not dry_run:
            for path in pending:
                stamp(path, settings.sender, settings.reply_to, None)
        result.pending = [p.name for p in pending]
        smtp = server or smtp_of(settings, ask)
        if smtp is None or dry_run or not pending:
            return result
        deliver_waiting(root, smtp, result)
        result.pending = [p.name for p in waiting(root)]
    return result
