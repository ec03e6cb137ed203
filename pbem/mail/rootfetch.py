"""One mailbox for many games: every message goes to the game it is for, and is answered once.

A message goes to the game its orders name (`game = "..."`), or else to the game its subject is
tagged with (`Re: [friday] turn 3: your move`); that game's fetch then handles it as it would
have alone. A message for no game of the root is answered once, to a player's registered
address only, naming the games that address plays in. The root keeps its own record of every
message it has routed (ROOT/mail/ledger.sqlite), so a message is routed once, even if a game of its
name appears later; whether a message was routed before is told from its headers alone, its
body never parsed again. Each message is handled as it is read (an IMAP message as it is
downloaded, and marked seen once its game has handled it); each game is opened, under its
lock, when its first message comes, and its fetch finished once the mailbox has been read.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from pbem.errors import GameFileError, LockedError, PbemError
from pbem.files import refuse_links, remove_temporaries
from pbem.languages import i18n
from pbem.mail import fetch, route
from pbem.mail.ahead import reading_ahead
from pbem.mail.answers import MAX_WORDS, write_reply
from pbem.mail.fetch import _Fetcher, game_fetch
from pbem.mail.handled import Known, Mark
from pbem.mail.mailboxes import Mailbox, opened
from pbem.mail.message import Letter, read_body
from pbem.mail.muting import Muting
from pbem.mail.outcomes import FetchResult, Verdict, not_to_the_end
from pbem.mail.records import (
    MAIL,
    address,
    domain,
    keep_rejected,
    outgoing,
    prune_rejected,
    write_eml,
)
from pbem.mail.sources import Entry
from pbem.mail.told import not_read
from pbem.present.text import plural, wrapped_message
from pbem.records import clock
from pbem.records.disk import grouped, locked, side_by_side
from pbem.records.mailbox_state import record_fetch, unread_since
from pbem.records.mailstate import OUTBOX, MailState
from pbem.records.opening import read_game
from pbem.records.root import Root, indexed_root
from pbem.records.settings import Settings, Value, in_force
from pbem.terminal import printable


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
    broken: str | None = None
    """Why the mailbox could not be read to the end (the rest is read next time), or None."""

    @property
    def ok(self) -> bool:
        return not self.failed and self.broken is None

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
        read = plural(routed + len(self.unrouted) + self.skipped, "message")
        out.append(
            f"{read} read: {routed} to {plural(len(self.games), 'game')}, "
            f"{len(self.unrouted)} for no game, {self.skipped} read before"
        )
        if self.broken is not None:
            out.append(not_to_the_end(self.broken))
        return out


def game_settings(directory: Path, flags: Mapping[str, Value | None] | None = None) -> Settings:
    """The mail settings in force for a game now."""
    return in_force(directory, read_game(directory).mail, flags)


ROOT_GROUP = 1000
"""How many messages of a Maildir, mbox or .eml files a folder's fetch handles, at most,
between two commits of the mail state (a game commits the messages it took, at most
`fetch.GROUP`, with them): a fetch killed part way reads at most this many again."""


def fetch_root(
    root: Path,
    mailbox: Mailbox,
    flags: Mapping[str, Value | None] | None = None,
    now: datetime | None = None,
) -> RootFetch:
    """Send each message of the mailbox to its game in the root as it is read; answer once
    those for none. When the mailbox breaks off (`RootFetch.broken`), what was handled stays
    handled and the rest is read next time."""
    read_at = now or datetime.now(timezone.utc)
    games = indexed_root(root)
    out = RootFetch()
    with opened(mailbox) as reading, locked(root, creating=True):
        _sweep(root)
        prune_rejected(root, read_at)
        routing = _Routing(root, games, flags, read_at, out, reading.done, reading.known)
        try:
            with grouped():
                try:
                    with reading_ahead(reading.entries(), routing.wanted) as letters:
                        for entry, letter in letters:
                            routing.take(entry, letter)
                except BaseException:
                    routing.finish(failed=True)
                    raise
                routing.finish()
        finally:
            routing.state.close()
        out.skipped += len(reading.known.skipped)
        out.broken = reading.broken
        before = unread_since(root)
        since = {n: before.get(n, clock.iso(read_at)) for n in sorted(routing.unread)}
        if out.broken is None and mailbox.whole:
            record_fetch(root, read_at, since)
    return out


@dataclass
class _Open:
    """A game taking messages in a root's fetch: its fetch, under its lock until finished."""

    fetcher: _Fetcher
    stack: contextlib.ExitStack[bool | None]


@dataclass
class _Lost:
    """A game that could not take its messages: why, and how many are left for next time."""

    why: PbemError
    left: int = 1


@dataclass
class _Routing:
    """A root's fetch under way: each message to its game, or answered for none."""

    root: Path
    games: Root
    flags: Mapping[str, Value | None] | None
    now: datetime
    out: RootFetch
    done: Callable[[Entry], None]
    """Told of each message once its handling is committed (an IMAP message is then marked
    seen)."""
    before: Known
    """The messages handled by earlier fetches, skipped unread; each message handled records
    where it was found, in the root's mail state (pbem.mail.handled)."""
    open: dict[str, _Open] = field(default_factory=dict)
    lost: dict[str, _Lost] = field(default_factory=dict)
    """The games that could not take their messages (busy: a LockedError)."""
    answers: _RootAnswers | None = None

    def __post_init__(self) -> None:
        self.state = MailState.open(self.root)
        self.before.load(self.state)  # (before the mailbox is looked at)
        self.known = {*self.games.by_name, *self.games.duplicates}
        self.handled = 0
        """How many messages were handled since the last commit."""
        self.to_mark: list[tuple[str, Entry]] = []
        """The IMAP messages among them, to be marked seen once committed (their keys, and
        their entries without their bytes)."""
        self.unsettled: dict[str, list[str]] = {}
        """The root's keys of those each game took."""
        self.found: dict[str, Mark] = {}
        """Where those were found in the mailbox, by their keys."""
        self.taker: str | None = None
        """The game that took the message handled last, if any."""
        self.committing: set[str] = set()
        """The games whose commit is under way or was stopped before its outcome was known
        (`settle`): the root does not record their messages of the group."""

    @property
    def unread(self) -> set[str]:
        return set(self.lost)

    def wanted(self, head: Letter) -> bool:
        """Whether a message's body may be needed: it was not read before."""
        return _key(Entry(""), head) not in self.state.seen["messages"]

    def take(self, entry: Entry, letter: Letter | None) -> None:
        """Hand one message on. Once handled, it waits with the others handled since the last
        commit; they are committed together (`settle`: each game's state, then the root's) when
        one game has taken `fetch.GROUP` of them or the folder ROOT_GROUP, and at the end. An
        IMAP message is committed at once and then marked seen on the server, before the next
        is downloaded. One not handled is read again next time."""
        self.taker = None
        key = self._take(entry, letter)
        if key is None:
            return
        if entry.mark is not None:
            mid, frm = (letter.message_id, letter.sender or "") if letter else (key, "")
            self.before.record(entry.mark, mid, frm)
            self.state.complete()  # (where it was found: a part of its handling)
            self.found[key] = entry.mark
        self.handled += 1
        if entry.uid is not None:
            self.to_mark.append((key, replace(entry, raw=None)))
        # (only the game that took it may have reached fetch.GROUP: each reaching it settles)
        busiest = len(self.unsettled.get(self.taker or "", ()))
        if entry.uid is not None or self.handled >= ROOT_GROUP or busiest >= fetch.GROUP:
            self.settle()

    def settle(self) -> None:
        """Commit the messages handled since the last commit, then tell `done` of each. A game
        whose state cannot be written is given up, and its messages of the group are read
        again next time (the root does not record them either)."""
        waiting = [(n, g) for n, g in self.open.items() if g.fetcher.state.pending]
        self.committing = {n for n, _ in waiting}
        failures = side_by_side([g.fetcher.state.commit for _, g in waiting])
        for (name, _), err in zip(waiting, failures, strict=True):
            if err is not None:
                self.lose(name, err, recorded=False)
        self.committing.clear()
        self.state.commit()
        marking, self.to_mark, self.handled = self.to_mark, [], 0
        self.unsettled.clear()
        self.found.clear()
        for _, entry in marking:
            self.done(entry)

    def _take(self, entry: Entry, letter: Letter | None) -> str | None:
        """Handle one message (`letter`: its head, or its whole letter, from
        `reading_ahead`); its key once handled, or None (it is read again next time)."""
        key = _key(entry, letter)
        if key in self.state.seen["messages"]:
            self.out.skipped += 1
            return key
        if letter is not None and entry.raw is not None:
            letter = read_body(letter, entry.raw)
        name = route.game_for(letter.orders, letter.subject, self.known) if letter else None
        if name is not None and name in self.games.duplicates:
            where = ", ".join(str(p) for p in self.games.duplicates[name])
            self.out.failed.append(
                f"{printable(letter.message_id) if letter else key}: for '{name}', the name of "
                f"more than one game ({where}): rename one; it is read again next time"
            )
            return None
        if name is None:
            if self.answers is None:
                settings = in_force(self.root, (), self.flags)
                muting = Muting(self.state, self.now)
                self.answers = _RootAnswers(
                    self.root, settings, self.now, self.games.by_name, muting=muting
                )
            outcome = self.answers.take(key, entry, letter)
            self.out.unrouted.append(outcome)
            self.record(key, {"game": None, "reply": outcome.reply})
            return key
        fetcher = self.fetcher(name)
        if fetcher is None:
            return None
        try:
            incoming = fetcher.take(entry, letter)
        except (PbemError, OSError) as err:  # the game cannot be written: its messages wait
            why = (
                err
                if isinstance(err, PbemError)
                else GameFileError(
                    f"cannot write in {self.games.by_name[name]}: {err.strerror or err}"
                )
            )
            self.lose(name, why)
            return None
        if incoming.verdict is Verdict.HELD:
            return None
        self.record(key, {"game": name})
        self.unsettled.setdefault(name, []).append(key)
        self.taker = name
        return key

    def fetcher(self, name: str) -> _Fetcher | None:
        """The open fetch of a game (opened at its first message), or None when the game
        cannot take messages now (another run holds it, it cannot be read)."""
        if name in self.lost:
            self.lost[name].left += 1
            return None
        if name not in self.open:
            path = self.games.by_name[name]
            stack = contextlib.ExitStack()
            try:
                fetcher = stack.enter_context(
                    game_fetch(path, now=self.now, flags=self.flags or {})
                )
            except PbemError as err:
                stack.close()
                self.lost[name] = _Lost(err)
                return None
            self.open[name] = _Open(fetcher, stack)
        return self.open[name].fetcher

    def lose(self, name: str, err: PbemError, recorded: bool = True) -> None:
        """A game that failed while taking a message (or, not `recorded`, while committing
        them): its lock is let go (its summary is written by its next fetch) once the messages
        it had finished are committed; the message and those after are read again next time.
        When those cannot be committed, they are read again too (`forget`)."""
        game = self.open.pop(name)
        try:
            game.stack.__exit__(type(err), err, err.__traceback__)
            if not recorded or game.fetcher.state.failed:  # (a commit of its own failed)
                raise err
        except PbemError:
            self.forget(name, err, 0 if not recorded else 1)
        else:
            self.unsettled.pop(name, None)
            self.lost[name] = _Lost(err)
        self.out.games.append(game.fetcher.result)

    def forget(self, name: str, err: PbemError, more: int = 0) -> None:
        """The messages a game took since the last commit are not recorded in it: the root
        does not record them either, so that they are read again next time (with `more`)."""
        unsettled = self.unsettled.pop(name, [])
        for key in unsettled:
            self.state.drop("seen", "messages", key)
            self.before.unrecord(self.found.pop(key, None))
        self.to_mark = [(k, e) for k, e in self.to_mark if k not in unsettled]
        self.handled -= len(unsettled)
        self.lost[name] = _Lost(err, len(unsettled) + more)

    def record(self, key: str, what: dict[str, object]) -> None:
        """Record a message as handled (committed with its group, before the server marks it
        seen)."""
        self.state.put("seen", "messages", key, {**what, "read": self.now.isoformat()})
        self.state.complete()

    def finish(self, failed: bool = False) -> None:
        """Finish every game's fetch (each writes its moderator's summary and commits the
        messages it took), then commit the root's records (`settle`), write the answers for no
        game, and word what could not be taken. `failed`: the fetch is stopping on an error;
        the root commits only its finished steps."""
        games, self.open = self.open, {}
        # each writes its summary and commits every message it took
        failures = side_by_side([game.stack.close for game in games.values()])
        for (name, game), err in zip(games.items(), failures, strict=True):
            if err is not None:
                self.forget(name, err)
            self.out.games.append(game.fetcher.result)
        for name in sorted(self.committing & set(self.unsettled)):  # a commit stopped part way
            self.forget(name, GameFileError("the fetch stopped while its messages were committed"))
        self.committing.clear()
        self.unsettled.clear()
        if failed:
            self.state.commit_complete()
        else:
            self.settle()  # the root's records, and then the IMAP message marked seen
        for name, lost in sorted(self.lost.items()):
            left = (
                f"its {lost.left} messages are read again next time"
                if lost.left
                else "its messages were taken; the next fetch writes the moderator's summary"
            )
            if isinstance(lost.why, LockedError):  # another run is at the game: nothing lost
                self.out.busy.append(f"{name}: busy (another run holds it); {left}")
            else:
                self.out.failed.append(f"{name}: {lost.why}; {left}")
        if self.answers is not None:
            self.out.note = self.answers.tell_moderator()


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
    muting: Muting | None = None
    """The limits of answers to one address (the root's own, in ROOT/mail/ledger.sqlite)."""

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
        if letter.limit is not None:  # not read: its orders, if any, are not known
            why = f"not read: {letter.limit.message}"
        raw = entry.raw or b""
        if letter.machine is not None:
            return Unrouted(mid, frm, (why, f"not answered: {letter.machine}"))
        games = self.plays_in(frm) if letter.sender else []
        if not games:
            kept = self.keep(key, raw, why, letter)
            who = f"{frm} is not a player's address" if frm else "no sender to answer"
            return Unrouted(mid, frm, (why, f"not answered: {who}"), kept=kept)
        listing = ", ".join(games)
        muted = self.muting.muted(frm, letter) if self.muting is not None else None
        if muted is not None:
            self.told.append(f"{printable(mid)} from {printable(frm)}\n  not answered: {muted}")
            return Unrouted(mid, frm, (why, f"not answered: {muted}"))
        subject = printable(letter.subject)
        lang = self.language(frm)
        _ = lang._
        title = _("your message reached no game")
        body = (
            _('Your message "%(subject)s" reached no game: %(why)s.', subject=subject, why=why)
            if subject
            else _("Your message reached no game: %(why)s.", why=why)
        )
        if letter.limit is not None:
            title, body = not_read(letter.limit, letter.subject, lang)
        body += "\n\n" + _("At this address you play in: %(games)s.", games=listing)
        body += "\n\n" + _(
            'Put the game\'s name at the top of your orders (game = "%(game)s"), or answer a '
            "report of the game (its subject begins with [%(game)s]).",
            game=games[0],
        )
        body += "\n\n" + _("Nothing from this message was used.")
        body += " " + _("Your message has been passed to the moderator.") + "\n"
        reply = self.answer(key, letter, frm, body, title)
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
            wrapped_message(
                f"pbem read {n} message{'s' if n > 1 else ''} from players that reached no game "
                "of this folder (no orders naming one, no [game] in the subject). Each player "
                "was answered with the games they play in. What they wrote:\n\n"
                + "".join(f"- {item}\n\n" for item in self.told)
            )
        )
        name = f"note-{digest}.eml"
        write_eml(self.root, name, out)
        return name

    def answer(self, key: str, letter: Letter, to: str, body: str, subject: str) -> str:
        sender = self.settings.sender
        out = outgoing(sender, to, subject, self.root.name, "auto-replied", self.now)
        out["Reply-To"] = self.settings.reply_to
        name = write_reply(self.root, key, letter, out, body, "root", sender)
        if self.muting is not None:
            self.muting.answered(to, str(out["Message-ID"]), letter)
        return name

    def keep(self, key: str, raw: bytes | None, reason: str, letter: Letter | None = None) -> str:
        return keep_rejected(
            self.root,
            key,
            raw,
            f"Key: {printable(key)}\nFrom: {printable(letter.sender or '') if letter else ''}\n"
            f"Subject: {printable(letter.subject) if letter else ''}\n"
            f"Read: {self.now.isoformat()}\nReason: {printable(reason)}\n",
        )
