"""One mailbox for many games: every message goes to the game it is for, and is answered once.

A message goes to the game its orders name (`game = "..."`), or else to the game its subject is
tagged with (`Re: [friday] turn 3: your move`); that game's fetch then handles it as it would
have alone. A message for no game of the root is answered once, to a player's registered
address only, naming the games that address plays in. The root keeps its own record of every
message it has routed (ROOT/mail/seen.json), so a message is routed once, even if a game of its
name appears later. An IMAP message is marked seen once its game has handled it.

Sending: each game's mail goes out with the settings in force for that game now (its file, the
pbem.toml above it, the flags), and the root's own answers with the root's.
"""

from __future__ import annotations

import contextlib
import hashlib
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pbem.errors import GameFileError, LockedError, PbemError
from pbem.game import clock
from pbem.game.disk import GAME_FILE, locked
from pbem.game.mailbox_state import record_failure, record_fetch, unread_since
from pbem.game.root import open_root
from pbem.game.safety import refuse_links, remove_temporaries
from pbem.game.settings import Security, Settings, Value, in_force
from pbem.game.settings import password as settings_password
from pbem.game.store import read_game
from pbem.mail import route
from pbem.mail.answers import MAX_WORDS, write_reply
from pbem.mail.fetch import FetchResult, Verdict, fetch_entries
from pbem.mail.imap import ImapServer, open_folder
from pbem.mail.message import Letter, read_letter
from pbem.mail.records import (
    MAIL,
    OUTBOX,
    REJECTED,
    SEEN,
    address,
    domain,
    load,
    outgoing,
    save,
    write,
    write_eml,
)
from pbem.mail.send import SendResult, SmtpServer, deliver_waiting, send_mail, stamp, waiting
from pbem.mail.sources import Entry, Sources, read_entries
from pbem.present import i18n
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


@dataclass(frozen=True)
class Taken:
    """A message as read, and its IMAP UID (to mark it seen once handled)."""

    entry: Entry
    uid: str | None = None


def mailbox(
    directory: Path,
    flags: Mapping[str, Value | None] | None = None,
    files: Sequence[Path] = (),
    ask: Callable[[str, str], str] | None = None,
    tls_context: ssl.SSLContext | None = None,
) -> Mailbox:
    """The mailbox to read for a game or root: the one the command line gives (`files`, and
    the flags `maildir`, `mbox`, `imap_host`), or else the one its settings name."""
    _exists(directory)
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


def _exists(directory: Path) -> None:
    if not directory.is_dir():
        raise GameFileError(
            f"{directory} is not a game directory: it has no {GAME_FILE} (nor is it a folder "
            "of games)"
        )


def _own(directory: Path) -> tuple[tuple[str, Value], ...]:
    """A game's own settings (none for a root)."""
    return read_game(directory).mail if (directory / GAME_FILE).is_file() else ()


def fetch(
    directory: Path,
    box: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> FetchResult | RootFetch:
    """Fetch into a game, or into every game of a root. A mailbox that cannot be read is
    recorded as such (pbem.game.mailbox_state), so that no game waiting for it is played by
    the autopilot."""
    _exists(directory)
    try:
        if (directory / GAME_FILE).is_file():
            return fetch_game(directory, box, flags, now)
        return fetch_root(directory, box, flags, now)
    except PbemError as err:
        if not isinstance(err, (GameFileError, LockedError)):
            record_failure(directory, now or datetime.now(timezone.utc), str(err))
        raise


@contextlib.contextmanager
def opened(mailbox: Mailbox) -> Iterator[tuple[list[Taken], Callable[[Taken], None]]]:
    """Every message of the mailbox, oldest first, and how to mark one handled."""
    if mailbox.empty:
        raise PbemError(
            "give a mailbox to read: --maildir PATH, --mbox PATH, .eml files or --imap HOST"
        )
    f = mailbox.folders
    local = [Taken(e) for e in read_entries(f)] if f.maildir or f.mbox or f.files else []
    if mailbox.imap is None:
        yield local, lambda taken: None
        return
    with open_folder(mailbox.imap) as folder:
        remote = [Taken(Entry(f"IMAP message {m.uid}", raw=m.raw), m.uid) for m in folder.unseen()]

        def done(taken: Taken) -> None:
            if taken.uid is not None:
                folder.mark_seen(taken.uid)

        yield local + remote, done


# ---------------------------------------------------------------------------------------------
# Fetching


@dataclass(frozen=True)
class Unrouted:
    """A message for no game of the root: answered (to a player) or kept (anyone else)."""

    message_id: str
    sender: str
    reasons: tuple[str, ...]
    reply: str | None = None
    kept: str | None = None

    def describe(self) -> str:
        sender = printable(self.sender) or "(no sender)"
        lines = [f"for no game: {printable(self.message_id)} from {sender}"]
        lines += [f"  {printable(r)}" for r in self.reasons]
        if self.reply:
            lines.append(f"  answer: {OUTBOX}/{self.reply}")
        if self.kept:
            lines.append(f"  kept: {self.kept}")
        return "\n".join(lines)


@dataclass
class RootFetch:
    """What a fetch into a root did: each game's result, the messages for no game, failures."""

    games: list[FetchResult] = field(default_factory=list)
    unrouted: list[Unrouted] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    """Games another run held: their messages are read again next time (not a failure)."""
    skipped: int = 0
    note: str | None = None
    """The root moderator's note of the players' messages for no game (outbox file name)."""

    @property
    def ok(self) -> bool:
        return not self.failed

    def lines(self) -> list[str]:
        out: list[str] = []
        for result in self.games:
            out += result.lines()
        out += [u.describe() for u in self.unrouted]
        if self.note:
            out.append(f"moderator told: {OUTBOX}/{self.note}")
        out += [f"failed: {printable(f)}" for f in self.failed]
        out += [printable(b) for b in self.busy]
        routed = sum(len(g.incoming) for g in self.games)
        out.append(
            f"{routed + len(self.unrouted) + self.skipped} messages read: {routed} to "
            f"{len(self.games)} games, {len(self.unrouted)} for no game, {self.skipped} "
            "read before"
        )
        return out


def game_settings(directory: Path, flags: Mapping[str, Value | None] | None = None) -> Settings:
    """The mail settings in force for a game now."""
    return in_force(directory, read_game(directory).mail, flags)


def fetch_game(
    directory: Path,
    mailbox: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> FetchResult:
    """Fetch one game's mail from any mailbox (IMAP messages marked seen once handled)."""
    settings = game_settings(directory, flags)
    with opened(mailbox) as (taken, done):
        entries = [t.entry for t in taken]
        result = fetch_entries(directory, entries, settings.sender, now, settings.moderator)
        for t, incoming in zip(taken, result.incoming, strict=True):
            if incoming.verdict is not Verdict.HELD:
                done(t)
    record_fetch(directory, result.read_at or datetime.now(timezone.utc))
    return result


def fetch_root(
    root: Path,
    mailbox: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> RootFetch:
    """Send each message of the mailbox to its game in the root; answer once those for none."""
    read_at = now or datetime.now(timezone.utc)
    games = open_root(root)
    names = games.by_name
    out = RootFetch()
    with opened(mailbox) as (taken, done), locked(root, creating=True):
        _sweep(root)
        seen = load(root / MAIL / SEEN, {"messages": {}})
        unread: set[str] = set()
        by_game: dict[str, list[tuple[Taken, str]]] = {}
        nowhere: list[tuple[Taken, str, Letter | None]] = []
        for t in taken:
            letter = read_letter(t.entry.raw) if t.entry.raw is not None else None
            key = _key(t.entry, letter)
            if key in seen["messages"]:
                out.skipped += 1
                done(t)
                continue
            known = {*names, *games.duplicates}
            name = route.game_for(letter.orders, letter.subject, known) if letter else None
            if name in games.duplicates:
                where = ", ".join(str(p) for p in games.duplicates[name])
                out.failed.append(
                    f"{printable(letter.message_id) if letter else key}: for '{name}', the name of "
                    f"more than one game ({where}): rename one; it is read again next time"
                )
            elif name is None:
                nowhere.append((t, key, letter))
            else:
                by_game.setdefault(name, []).append((t, key))
        for name, items in by_game.items():
            try:
                settings = game_settings(names[name], flags)
                result = fetch_entries(
                    names[name],
                    [t.entry for t, _ in items],
                    settings.sender,
                    read_at,
                    settings.moderator,
                )
            except LockedError:  # another run is at the game: not a fault, nothing lost
                out.busy.append(f"{name}: busy (another run holds it); its {len(items)} "
                                "messages are read again next time")  # fmt: skip
                unread.add(name)
                continue
            except PbemError as err:
                out.failed.append(
                    f"{name}: {err}; its {len(items)} messages are read again next time"
                )
                unread.add(name)
                continue
            out.games.append(result)
            for (t, key), incoming in zip(items, result.incoming, strict=True):
                if incoming.verdict is Verdict.HELD:
                    continue
                seen["messages"][key] = {"game": name, "read": read_at.isoformat()}
                save(root / MAIL / SEEN, seen)
                done(t)
        if nowhere:
            answers = _RootAnswers(root, in_force(root, (), flags), read_at, games.by_name)
            for t, key, letter in nowhere:
                outcome = answers.take(key, t.entry, letter)
                out.unrouted.append(outcome)
                seen["messages"][key] = {
                    "game": None,
                    "read": read_at.isoformat(),
                    "reply": outcome.reply,
                }
                save(root / MAIL / SEEN, seen)
                done(t)
            out.note = answers.tell_moderator()
        before = unread_since(root)
        since = {n: before.get(n, clock.iso(read_at)) for n in sorted(unread)}
        record_fetch(root, read_at, since)
    return out


def _sweep(root: Path) -> None:
    """Refuse a root whose own mail/ or outbox/ is or holds a symbolic link, then remove the
    temporary files a killed run left in them (the games' own are swept under their locks);
    call it under the root's lock."""
    refuse_links(root, (MAIL, OUTBOX))
    for folder in (root / MAIL, root / OUTBOX):
        if folder.is_dir() and not folder.is_symlink():
            remove_temporaries(folder)


def _key(entry: Entry, letter: Letter | None) -> str:
    if letter is None:
        return entry.key or entry.where
    return f"{letter.message_id} {letter.digest}"


@dataclass
class _RootAnswers:
    """Answers and records for the messages of a root that are for none of its games."""

    root: Path
    settings: Settings
    now: datetime
    games: Mapping[str, Path]
    _players: dict[str, list[str]] | None = None
    _languages: dict[str, str] = field(default_factory=dict)
    told: list[str] = field(default_factory=list)
    """The players' messages for the moderator's note."""

    def plays_in(self, sender: str) -> list[str]:
        """The games of the root in which `sender` is a player's registered address."""
        if self._players is None:
            self._players = {}
            for name, path in sorted(self.games.items()):
                try:
                    game = read_game(path)
                except PbemError:
                    continue
                for reg in game.registrations:
                    if address(reg.email):
                        key = address(reg.email).lower()
                        self._players.setdefault(key, []).append(name)
                        self._languages.setdefault(key, game.language_of(reg.name))
        return self._players.get(sender.lower(), [])

    def language(self, sender: str) -> i18n.Language:
        """The language of a player's answer: theirs in the first of their games."""
        return i18n.language(self._languages.get(sender.lower(), i18n.DEFAULT))

    def take(self, key: str, entry: Entry, letter: Letter | None) -> Unrouted:
        if letter is None:
            reason = entry.error or "cannot be read"
            return Unrouted(key, "", (reason, "not answered"), kept=self.keep(key, None, reason))
        frm, mid = letter.sender or "", letter.message_id
        named = route.named_game(letter.orders)
        why = (
            f"its orders are for the game '{named}', which is not run at this address"
            if named
            else "it names no game: no orders with a game line, no [game] in its subject"
        )
        raw = entry.raw or b""
        if letter.machine is not None:
            return Unrouted(mid, frm, (why, f"not answered: {letter.machine}"))
        games = self.plays_in(frm) if letter.sender else []
        if not games:
            kept = self.keep(key, raw, why, letter)
            who = f"{frm} is not a player's address" if frm else "no sender to answer"
            return Unrouted(mid, frm, (why, f"not answered: {who}"), kept=kept)
        listing = ", ".join(games)
        subject = printable(letter.subject)
        _ = self.language(frm)._
        body = (
            _('Your message "%(subject)s" reached no game: %(why)s.', subject=subject, why=why)
            if subject
            else _("Your message reached no game: %(why)s.", why=why)
        )
        body += "\n\n" + _("At this address you play in: %(games)s.", games=listing)
        body += "\n\n" + _(
            'Put the game\'s name at the top of your orders (game = "%(game)s"), or answer a '
            "report of the game (its subject begins with [%(game)s]).",
            game=games[0],
        )
        body += "\n\n" + _("Nothing from this message was used.")
        body += " " + _("Your message has been passed to the moderator.") + "\n"
        reply = self.answer(key, letter, frm, body, _("your message reached no game"))
        self.told.append(
            f"{printable(mid)} from {printable(frm)} (plays in {listing})"
            + (f', "{printable(letter.subject[:100])}"' if letter.subject else "")
            + f"\n  {printable(why)}"
            + "".join(
                f"\n  | {printable(row)}"
                for row in letter.reading.own_words.strip("\n")[:MAX_WORDS].split("\n")
            )
        )
        return Unrouted(mid, frm, (why, f"{frm} plays in {listing}"), reply=reply)

    def tell_moderator(self) -> str | None:
        """One message to the root's moderator listing the players' messages that reached
        no game (they may be questions for a person); the name of its outbox file."""
        if not self.told:
            return None
        n = len(self.told)
        sender = self.settings.sender
        out = outgoing(
            sender,
            self.settings.moderator,
            f"[{self.root.name}] {n} message{'s' if n > 1 else ''} from players for no game",
            self.root.name,
            "auto-generated",
            self.now,
        )
        digest = hashlib.sha256("\n".join(self.told).encode()).hexdigest()[:16]
        out["Message-ID"] = f"<pbem.root.note.{digest}@{domain(sender)}>"
        out.set_content(
            f"pbem read {n} message{'s' if n > 1 else ''} from players that reached no game "
            "of this folder (no orders naming one, no [game] in the subject). Each player was "
            "answered with the games they play in. What they wrote:\n\n"
            + "".join(f"- {item}\n\n" for item in self.told)
        )
        name = f"note-{digest}.eml"
        write_eml(self.root, name, out)
        return name

    def answer(self, key: str, letter: Letter, to: str, body: str, subject: str) -> str:
        sender = self.settings.sender
        out = outgoing(sender, to, subject, self.root.name, "auto-replied", self.now)
        out["Reply-To"] = self.settings.reply_to
        return write_reply(self.root, key, letter, out, body, "root", sender)

    def keep(self, key: str, raw: bytes | None, reason: str, letter: Letter | None = None) -> str:
        digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]
        folder = self.root / MAIL / REJECTED
        if raw is not None:
            write(folder / f"{digest}.eml", raw)
        write(
            folder / f"{digest}.txt",
            f"Key: {printable(key)}\nFrom: {printable(letter.sender or '') if letter else ''}\n"
            f"Subject: {printable(letter.subject) if letter else ''}\n"
            f"Read: {self.now.isoformat()}\nReason: {printable(reason)}\n",
        )
        return f"{MAIL}/{REJECTED}/{digest}." + ("eml" if raw is not None else "txt")


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
    _exists(directory)
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
) -> RootSend:
    """Send every game's mail, each with its own settings, then the root's own answers."""
    out = RootSend()
    listing = open_root(root, games)
    for name, path in listing.games:
        twin = listing.duplicate_reason(path)
        if twin is not None:
            out.failed.append(f"{path}: not sent: {twin}")
            continue
        try:
            result = send_game(path, flags, server, ask, dry_run, every, now, copy_sender, kit)
            out.games.append((name, result))
        except LockedError:  # another run is at it: its mail goes with that run or the next
            out.busy.append(f"{name}: busy (another run holds it); its mail waits")
        except PbemError as err:
            out.failed.append(f"{name}: {err}")
    if waiting(root) and root.resolve() not in {p.resolve() for _, p in listing.games}:
        answers = _send_root_outbox(root, flags, server, ask, dry_run)
        out.games.append((f"{root.name} (messages for no game)", answers))
    return out


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
