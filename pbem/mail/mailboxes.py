"""The mailbox a game or a folder of games reads, and reading it one message at a time.

A mailbox is folders and files (a Maildir, an mbox, .eml files) and an IMAP folder. Its
messages are handed on one at a time, each downloaded only when the one before has been
handled, and an IMAP message is marked seen once it has been handled: when the server drops
the connection, stalls past its timeout or answers nonsense, the messages handled so far stay
handled, the rest are read by the next fetch, and `Reading.broken` says what went wrong (a
sentence, never a traceback).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pbem.errors import GameFileError, PbemError
from pbem.mail.handled import Known, Mark
from pbem.mail.imap import ImapError, ImapFolder, ImapServer, open_folder
from pbem.mail.message import MAX_MESSAGE_BYTES
from pbem.mail.sources import Entry, Sources, entry_of, read_entries
from pbem.records.disk import GAME_FILE
from pbem.records.opening import read_game
from pbem.records.settings import Value, in_force
from pbem.terminal import printable


@dataclass(frozen=True)
class Mailbox:
    """Where mail is read from: folders and files, and an IMAP folder."""

    folders: Sources = field(default_factory=Sources)
    imap: ImapServer | None = None

    @property
    def empty(self) -> bool:
        f = self.folders
        return f.maildir is None and f.mbox is None and not f.files and self.imap is None

    @property
    def whole(self) -> bool:
        """Whether it reads a mailbox (a Maildir, an mbox, an IMAP folder), whose reading in
        full is recorded (pbem.records.mailbox_state): .eml files alone are some messages the
        moderator gave, which say nothing of what waits in the mailbox."""
        f = self.folders
        return f.maildir is not None or f.mbox is not None or self.imap is not None


def mailbox(
    directory: Path,
    flags: Mapping[str, Value | None] | None = None,
    files: Sequence[Path] = (),
    ask: Callable[[str, str], str] | None = None,
    tls_context: ssl.SSLContext | None = None,
) -> Mailbox:
    """The mailbox to read for a game or root: the one the command line gives (`files`, and
    the flags `maildir`, `mbox`, `imap_host`), or else the one its settings name."""
    exists(directory)
    given = {k for k, v in (flags or {}).items() if v is not None}
    mine = bool(files) or bool(given & {"maildir", "mbox", "imap_host"})
    settings = in_force(directory, _own(directory), flags)
    maildir = settings.location("maildir", directory) if not mine or "maildir" in given else None
    mbox = settings.location("mbox", directory) if not mine or "mbox" in given else None
    server = settings.server("imap") if not mine or "imap_host" in given else None
    imap = None
    if server is not None:
        if server.user is None:
            raise PbemError(
                f"give the IMAP login for {server} (--user, or imap_user in the settings); "
                "the password comes from PBEM_IMAP_PASSWORD or a prompt"
            )
        user, host = server.user, server.host
        imap = ImapServer(
            host,
            server.port,
            server.security,
            user,
            settings.text("imap_folder") or "INBOX",
            (lambda: ask(host, user)) if ask else None,
            tls_context,
        )
    return Mailbox(Sources(maildir, mbox, tuple(files)), imap)


def exists(directory: Path) -> None:
    """Refuse a directory that is neither a game nor a folder."""
    if not directory.is_dir():
        raise GameFileError(
            f"{directory} is not a game directory: it has no {GAME_FILE} (nor is it a folder "
            "of games)"
        )


def _own(directory: Path) -> tuple[tuple[str, Value], ...]:
    """A game's own settings (none for a root)."""
    return read_game(directory).mail if (directory / GAME_FILE).is_file() else ()


@dataclass
class Reading:
    """The messages of an open mailbox, oldest first, the folders' before the IMAP folder's."""

    local: Iterator[Entry]
    folder: ImapFolder | None = None
    broken: str | None = None
    """Why the mailbox could not be read to the end (the IMAP server dropped the connection,
    stalled, answered nonsense), or None: the messages not read are read next time."""
    known: Known = field(default_factory=Known)
    """The messages handled by earlier fetches, skipped unread (pbem.mail.handled)."""

    def entries(self) -> Iterator[Entry]:
        """Each message, read when asked for: an IMAP message is downloaded only then."""
        yield from self.local
        if self.folder is None:
            return
        try:
            uids, odd = self.folder.unseen_uids()
        except ImapError as err:
            self.broken = str(err)
            return
        if odd:
            listed = ", ".join(f"'{printable(t[:20])}'" for t in odd[:3])
            self.broken = (
                f"the IMAP server {self.folder.server} named messages by what are not UIDs "
                f"({listed}): those were not read"
            )
        name, validity = self.folder.name, self.folder.uidvalidity
        marks: dict[str, tuple[str, str, str]] = {}
        if validity is not None:  # without it, a UID may name another message next time
            check, marks = self.known.marks(name)
            self.known.renew(name, validity, keep=check == validity)
            marks = marks if check == validity else {}
        for uid in uids:
            if self.folder.broken:
                return
            recorded = marks.get(uid)
            if recorded is not None:  # handled before, not marked seen then: marked now
                self.known.skip(recorded)
                self.done(Entry(f"IMAP message {uid}", uid=uid))
                continue
            try:
                message = self.folder.message(uid, MAX_MESSAGE_BYTES)
            except ImapError as err:  # the server broke off, or would not give this one
                self.broken = self.broken or str(err)
                continue
            if message is not None:
                mark = Mark(name, uid, "") if validity is not None else None
                yield entry_of(f"IMAP message {uid}", message.raw, uid, mark)

    def done(self, entry: Entry) -> None:
        """A message has been handled: an IMAP message is marked seen (when that fails, the
        next fetch reads it again, and knows it)."""
        if entry.uid is None or self.folder is None or self.folder.broken:
            return
        try:
            self.folder.mark_seen(entry.uid)
        except ImapError as err:
            self.broken = self.broken or str(err)


@contextlib.contextmanager
def opened(mailbox: Mailbox) -> Iterator[Reading]:
    """Open the mailbox (a folder that cannot be read, a server that cannot be reached or
    refuses the login, is a PbemError at once) and read it. The messages handled by earlier
    fetches are skipped unread once `Reading.known` has the fetch's mail state (`Known.load`),
    which it must have before the first message is asked for."""
    if mailbox.empty:
        raise PbemError(
            "give a mailbox to read: --maildir PATH, --mbox PATH, .eml files or --imap HOST"
        )
    f = mailbox.folders
    known = Known()
    local = read_entries(f, known) if f.maildir or f.mbox or f.files else iter(())
    if mailbox.imap is None:
        yield Reading(local, known=known)
        return
    with open_folder(mailbox.imap) as folder:
        yield Reading(local, folder, known=known)
