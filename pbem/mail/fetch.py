"""Orders in: every message in the mailboxes is read once and ends accepted, rejected, ignored
(older than orders already taken), not answered (sent by a machine) or held (for the next
fetch). One bad message never stops a fetch; only the game's own players are ever answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Orders
from pbem.core.state import Phase
from pbem.errors import DiskError, GameFileError, OrderError, PbemError, Problem
from pbem.game import processor
from pbem.languages import i18n
from pbem.languages.reasons import problem_told
from pbem.mail.ahead import reading_ahead
from pbem.mail.answers import Answers
from pbem.mail.found import Choice, Found, normal
from pbem.mail.handled import Known
from pbem.mail.message import Letter, addresses_match, read_body, read_head
from pbem.mail.outcomes import FetchResult, Incoming, Verdict
from pbem.mail.press import Relaying
from pbem.mail.records import (
    DEFAULT_FROM,
    CannotStore,
    address,
    prune_rejected,
    store_orders,
    write_eml,
)
from pbem.mail.reports import ready_files, resent_report
from pbem.mail.sources import Entry, Sources, read_entries
from pbem.mail.told import found_notes, why_none
from pbem.records import clock
from pbem.records.disk import grouped, locked, under_way, written
from pbem.records.history import ORDERS, played_in, resolution_interrupted
from pbem.records.mailstate import OUTBOX, MailState
from pbem.records.opening import read_game
from pbem.records.settings import Value, in_force
from pbem.records.store import Game, Registration

GROUP = 100
"""How many messages of a Maildir, mbox or .eml files are taken between two commits of the
mail state: a fetch killed part way reads at most this many again. An IMAP message is
committed as soon as it is taken, then marked seen on the server, before the next is read."""

ORDER_FILE = Path("orders.toml")
"""The name problems are reported against (`orders.toml line 7: ...`)."""


def parse_time(text: str) -> datetime:
    """`--now`: an ISO 8601 time with its offset (`2027-03-01T12:00+01:00`, or `Z` for UTC);
    the same reading as every other command's `--now`."""
    return clock.parse_instant(text)


def fetch_orders(
    directory: Path,
    sources: Sources,
    sender: str = DEFAULT_FROM,
    now: datetime | None = None,
    moderator: str | None = None,
) -> FetchResult:
    """Read the mailboxes, store each accepted order file in DIR/orders/<player>.toml and
    answer the game's players in the outbox. Messages already processed are skipped, so
    fetching the same mailbox again changes nothing. `moderator`: where the summary and the
    players' questions go (default: `sender`)."""
    known = Known()
    entries = read_entries(sources, known)
    return fetch_entries(directory, entries, sender, now, moderator, known=known)


def fetch_entries(
    directory: Path,
    entries: Iterable[Entry],
    sender: str = DEFAULT_FROM,
    now: datetime | None = None,
    moderator: str | None = None,
    done: Callable[[Entry], None] | None = None,
    known: Known | None = None,
) -> FetchResult:
    """`fetch_orders` for messages from any mailbox (IMAP too), each handled as it comes (an
    IMAP message as it is downloaded); the outcomes come in the order of `entries`. `done`:
    told of each message once it is handled (not of one held for the next fetch). `known`: the
    messages handled by earlier fetches, which `entries` skips unread (pbem.mail.handled): it
    is given the game's mail state, where each message handled records where it was found."""
    taken = 0
    marking: list[Entry] = []  # the IMAP messages taken, without their bytes
    known = known or Known()
    with grouped(), game_fetch(directory, sender, now, moderator) as fetcher:
        known.load(fetcher.state)  # (before the mailbox is looked at)
        with reading_ahead(entries, fetcher.wanted) as letters:
            for entry, letter in letters:
                outcome = fetcher.take(entry, letter)
                if outcome.verdict is Verdict.HELD:
                    continue
                known.record(entry.mark, outcome.message_id, outcome.sender)
                fetcher.state.complete()  # (where it was found: a part of its handling)
                taken += 1
                if entry.uid is not None:
                    marking.append(replace(entry, raw=None))
                if taken >= GROUP or entry.uid is not None:
                    fetcher.state.commit()
                    _tell(marking, done)
                    taken = 0
    _tell(marking, done)  # committed as the fetch finished
    return replace(fetcher.result, skipped=len(known.skipped))


def _holds(path: Path, text: str) -> bool:
    """Whether the file at `path` (once its write under way is done) holds `text` already."""
    written(path)
    try:
        return path.read_bytes() == text.encode("utf-8")
    except OSError:
        return False


def _tell(entries: list[Entry], done: Callable[[Entry], None] | None) -> None:
    """Tell `done` of each message taken, once committed."""
    if done is not None:
        for entry in entries:
            done(entry)
    entries.clear()


@contextlib.contextmanager
def game_fetch(
    directory: Path,
    sender: str = DEFAULT_FROM,
    now: datetime | None = None,
    moderator: str | None = None,
    flags: Mapping[str, Value | None] | None = None,
) -> Iterator[_Fetcher]:
    """A fetch into one game, under its lock: hand it messages (`take`) as they come; once
    they are all in, the moderator's summary is written and `result` says what became of
    each. The rejected messages kept longer than REJECTED_DAYS are removed first. `flags`:
    the sender and moderator are the game's own settings in force (with these flags), read
    with the game, in place of `sender` and `moderator`."""
    read_at = now or datetime.now(timezone.utc)
    with locked(directory):
        game = read_game(directory)
        if flags is not None:
            settings = in_force(directory, game.mail, flags)
            sender, moderator = settings.sender, settings.moderator
        held = resolution_interrupted(directory, game.state.resolution)
        with MailState.open(directory) as state:
            fetcher = _Fetcher(game, state, sender, read_at, moderator or sender, held)
            prune_rejected(directory, read_at)
            try:
                yield fetcher
            except BaseException:
                state.commit_complete()  # the messages taken before stay taken
                raise
            fetcher.finish()
            state.commit()


@dataclass
class _Fetcher(Relaying):
    """Handles each message against the game; writes orders, answers and records."""

    game: Game
    state: MailState
    sender: str
    now: datetime
    moderator: str
    held: bool = False
    """A resolution of the game is interrupted: every new message is held."""

    def __post_init__(self) -> None:
        self.out = Answers(self.game, self.state, self.sender, self.now, self.moderator)
        self._ready: dict[str, tuple[str, dict[str, Any] | None]] | None = None
        self.incoming: list[Incoming] = []
        self.note: str | None = None

    @property
    def result(self) -> FetchResult:
        return FetchResult(self.game.name, tuple(self.incoming), self.note, self.now)

    def finish(self) -> None:
        """Write the moderator's summary of the messages handled."""
        self.note = self.out.tell_moderator()

    @property
    def path(self) -> Path:
        return self.game.path

    @property
    def seen(self) -> dict[str, Any]:
        return self.state.seen

    def record(self, key: str, outcome: Incoming, digest: str | None) -> Incoming:
        entry: dict[str, Any] = {
            "from": outcome.sender,
            "verdict": outcome.verdict.value,
            "player": outcome.player,
            "reply": outcome.reply,
            "read": self.now.isoformat(),
        }
        if digest is not None:
            entry["digest"] = digest
        self.state.put("seen", "messages", key, entry)
        self.state.complete()  # committed with its group (`GROUP`)
        return outcome

    def wanted(self, head: Letter) -> bool:
        """Whether a message's body may be needed (`reading_ahead`): not read before, as far
        as its head tells (`_take` decides)."""
        previous = self.seen["messages"].get(head.message_id)
        if not isinstance(previous, dict):
            return True
        return head.digest not in (previous.get("digest"), *previous.get("also", []))

    def take(self, entry: Entry, letter: Letter | None = None) -> Incoming:
        """One entry of a mailbox, start to finish (`letter`: as read already, from its head
        or whole); its outcome is also added to `incoming`."""
        outcome = self._take(entry, letter)
        self.incoming.append(outcome)
        return outcome

    def _take(self, entry: Entry, letter: Letter | None) -> Incoming:
        held = self.held
        if entry.raw is None:
            key = entry.key or entry.where
            if key in self.seen["messages"]:
                return Incoming(key, "", Verdict.DUPLICATE)
            if held:
                return self.hold(key, "")
            reason = entry.error or "cannot be read"
            kept = self.out.keep(key, None, "", reason)
            self.out.summarise(key, "", "", f"rejected, not answered: {reason}", kept)
            outcome = Incoming(key, "", Verdict.REJECTED, reasons=(reason,), kept=kept)
            return self.record(key, outcome, None) if entry.key else outcome
        # whether it was read before is told from its headers alone: its body is never
        # parsed again
        letter = letter or read_head(entry.raw, entry.cut)
        mid, frm = letter.message_id, letter.sender or ""
        key = mid
        previous = self.seen["messages"].get(mid)
        earlier = str(previous.get("from", "")) if isinstance(previous, dict) else frm
        if earlier.strip().lower() != frm.strip().lower():
            # another sender's message under this Message-ID (a stranger who sent first with a
            # player's ID): it is not the same message, and it blocks no one's
            key = f"{mid} from {frm.lower()}"
            previous = self.seen["messages"].get(key)
        if previous is not None:
            if letter.digest in (previous.get("digest", letter.digest), *previous.get("also", [])):
                return Incoming(mid, frm, Verdict.DUPLICATE)
            if held:
                return self.hold(mid, frm)
            outcome = self.reused_id(letter, previous)
            previous.setdefault("also", []).append(letter.digest)
            self.state.put("seen", "messages", key, previous)
            self.state.complete()
            return outcome
        if held:
            return self.hold(mid, frm)
        if letter.limit is not None:
            return self.record(key, self.too_large(letter, entry.raw, letter.limit), letter.digest)
        letter = read_body(letter, entry.raw)
        try:
            outcome = self.handle(letter, entry.raw)
        except CannotStore as err:
            return Incoming(mid, frm, Verdict.HELD, reasons=(str(err),))
        except (GameFileError, DiskError, OSError):
            raise  # the game directory cannot be written: stop, with the reason
        except Exception as err:  # noqa: BLE001 (the last line of defence, see below)
            # A message that trips an unforeseen error while being read is a bad message, not a
            # reason to stop reading everyone else's: it is kept and shown to the moderator.
            error = f"{type(err).__name__}: {err}"[:500]
            failed = Problem.of("pbem could not read this message (%(error)s)", error=error)
            failed.message = failed.message[:500]  # for the records: a long error is cut
            me = self.registered(letter.sender) if letter.machine is None else None
            outcome = self.reject(letter, entry.raw, [failed], to=me)
        muted = self.out.muted.get(letter.message_id)
        if muted is not None:
            outcome = replace(outcome, reasons=(*outcome.reasons, f"not answered: {muted}"))
        return self.record(key, outcome, letter.digest)

    def hold(self, key: str, frm: str) -> Incoming:
        state = self.game.state
        played = played_in(self.game, state.resolution, state.turn).words()
        reason = (
            f"{played} was interrupted (its history is written, game.toml not yet): run 'pbem "
            "resolve' to complete it"
        )
        return Incoming(key, frm, Verdict.HELD, reasons=(reason,))

    # -- deciding ------------------------------------------------------------------------------

    def handle(self, letter: Letter, raw: bytes) -> Incoming:
        mid, frm = letter.message_id, letter.sender or ""
        if letter.machine is not None:
            reason = f"not answered: {letter.machine}"
            return Incoming(mid, frm, Verdict.UNANSWERED, reasons=(reason,))
        if letter.sender is None:
            return self.reject(letter, raw, [letter.sender_problem or "no sender"], to=None)
        me = self.registered(letter.sender)
        choice = letter.choice(self.ready)
        talk = self.table_talk(letter, raw, me, choice)
        if talk is not None:
            return talk
        if choice.found is None:
            return self.no_orders(letter, raw, choice, me)
        text, state = choice.found.text, self.game.state
        clean = True  # the file read without a problem
        try:
            orders = parse_orders(text, state.board)
        except OrderError as err:
            clean = False
            if err.partial is None:
                told = self.speaking(me) if me is not None else i18n.language(i18n.DEFAULT)
                problems = [problem_told(told, p, ORDER_FILE.name) for p in err.problems]
                return self.reject(letter, raw, problems, to=me, shown=text, choice=choice)
            orders = err.partial  # every problem is listed by check_submission below
        except RecursionError:
            deep = Problem.of("the orders are nested too deep to read: send the plain order file")
            return self.reject(letter, raw, [deep], to=me)
        name = self.game.name
        if orders.game != name:
            unknown = Problem.of(
                "these orders are for an unknown game '%(other)s': this address takes orders "
                "for '%(game)s'",
                other=orders.game,
                game=name,
            )
            return self.reject(letter, raw, [unknown], to=me)
        if state.phase is Phase.OVER:
            over = Problem.of(
                "game '%(game)s' is over (%(winner)s won): no more orders are taken",
                game=name,
                winner=str(state.won_by),
            )
            return self.reject(letter, raw, [over], to=me)
        player = self.game.registration(orders.player)
        if player is None:
            nobody = Problem.of(
                "there is no player '%(player)s' in this game", player=orders.player
            )
            return self.reject(letter, raw, [nobody], to=me)
        if letter.sender is not None and addresses_match(letter.sender, address(player.email)):
            me = player  # two players of one household may share an address
        if me is None or me.name != player.name:
            return self.forged(letter, raw, player)
        if orders.vacation is not None and clean and not orders.plays:
            return self.away(letter, raw, me, orders)  # the player says when they are away
        if orders.vacation is not None:  # beside orders: not recorded, and the answer says so
            self.out.notes[letter.message_id] = self.speaking(me)._(
                "The vacation in this message is not recorded: a vacation is recorded from an "
                "order file that holds nothing else. Send it in a message of its own."
            )
            outcome = self.play(letter, raw, me, text, choice)
            return replace(
                outcome, reasons=("vacation not recorded: beside orders", *outcome.reasons)
            )
        return self.play(letter, raw, me, text, choice)

    def play(
        self, letter: Letter, raw: bytes, me: Registration, text: str, choice: Choice
    ) -> Incoming:
        """Orders for the turn from the player `me`, checked, then accepted or refused."""
        submission = processor.check_submission(
            self.game, ORDER_FILE, text, self.game.language_of(me.name)
        )
        if not submission.accepted:
            return self.reject(letter, raw, submission.messages(), to=me, shown=text, choice=choice)
        if letter.date is None:
            undated = Problem.of("the message has no valid Date header: send it again")
            return self.reject(letter, raw, [undated], to=me)
        return self.accept(letter, me, submission, choice)

    def away(self, letter: Letter, raw: bytes, me: Registration, orders: Orders) -> Incoming:
        """A vacation the player mails in a file of its own (`vacation = { from, to }`):
        recorded within their allowance (pbem.game.vacations) and answered; the other players
        are told when it moves the deadline. A damaged game or a disk error stops the fetch
        (the message is read again next time), as everywhere."""
        from datetime import date

        from pbem.game import vacations
        from pbem.game.check import secret_problem

        wrong = secret_problem(self.game, orders)
        if wrong is not None:
            return self.reject(letter, raw, [wrong], to=me)
        assert orders.vacation is not None
        start, end = (date.fromisoformat(day) for day in orders.vacation)
        try:
            vacation, game, moved = vacations.record(
                self.game, me.name, start, end, self._asked(letter), by="player"
            )
        except (GameFileError, DiskError):
            raise
        except vacations.VacationRefused as err:
            from pbem.languages.reasons import told

            with i18n.speaking(self.speaking(me)):
                why = told(err.why)
            refused = Problem.of("your vacation was not recorded: %(why)s", why=why)
            return self.reject(letter, raw, [refused], to=me)
        except PbemError as err:
            refused = Problem.of("your vacation was not recorded: %(why)s", why=str(err))
            return self.reject(letter, raw, [refused], to=me)
        self.game = self.out.game = game
        if moved:
            from pbem.mail.notices import tell_deadline

            why = vacation.describe()
            key = f"vacation-{vacation.resolution}-{vacation.number}"
            tell_deadline(self.path, in_force(self.path, game.mail), self.now, why, key)
        speaker = self.speaking(me)
        _ = speaker._
        first, last = speaker.day(vacation.start), speaker.day(vacation.end)
        schedule = game.schedule
        body = _(
            "Your vacation from %(start)s to %(end)s is recorded (%(days)s days).",
            start=first,
            end=last,
            days=vacation.days,
        )
        body += " " + (
            _(
                "While you are away, the autopilot plays your turns, and they do not count "
                "as missed."
            )
            if schedule is not None and schedule.vacation_mode == "autopilot"
            else _("While you are away, the turns that await you wait for you.")
        )
        mid, frm = letter.message_id, letter.sender or ""
        subject = _("vacation recorded: %(start)s to %(end)s", start=first, end=last)
        reply = self.out.answer(letter, me, subject, body + "\n")
        reason = (
            f"vacation from {vacation.start.isoformat()} to {vacation.end.isoformat()} recorded"
        )
        return Incoming(mid, frm, Verdict.ACCEPTED, me.name, (reason,), reply)

    def _asked(self, letter: Letter) -> datetime:
        """When a mailed vacation was asked: the message's Date, as for orders (never later
        than it was read), and not before the last resolution (the turns before are played)."""
        from pbem.records.history import read_history

        asked = min(letter.date, self.now) if letter.date is not None else self.now
        r = self.game.state.resolution
        last = read_history(self.path, r - 1, events=False).time if r else None
        if last is not None:
            asked = max(asked, clock.parse_instant(last, "time"))
        return asked

    def ready(self, found: Found) -> str | None:
        """The name of the ready order file pbem mailed that `found` is (the same orders as
        data, or the same text), or None: every report's files, and the file each awaited
        player's report is given now. Read once a fetch, when first asked."""
        if self._ready is None:
            self._ready = ready_files(self.game)
        data = found.data()
        same = normal(found.text)
        for name, (text, ready_data) in self._ready.items():
            if (data is not None and data == ready_data) or same == text:
                return name.rsplit("/", 1)[-1]
        return None

    def accept(
        self,
        letter: Letter,
        me: Registration,
        submission: processor.Submission,
        choice: Choice,
    ) -> Incoming:
        assert letter.date is not None and choice.found is not None
        mid, frm, state = letter.message_id, letter.sender or "", self.game.state
        when = min(letter.date, self.now)
        future = (
            f"the message is dated {format_datetime(letter.date)}, in the future: it counts as "
            f"received when pbem read it, {format_datetime(self.now)}"
            if letter.date > self.now
            else None
        )
        key = f"{state.resolution}/{me.name}{me.stint}"  # a substitute's are their own
        previous = self.seen["accepted"].get(key)
        if previous is not None and when < datetime.fromisoformat(previous["date"]):
            standing = format_datetime(datetime.fromisoformat(previous["date"]))
            reason = (
                f"this message is dated {format_datetime(when)}, before the orders already "
                f"accepted (dated {standing}), which stand"
            )
            _ = self.speaking(me)._
            body = _(
                "Your message of %(date)s was not used: this message is dated %(date)s, before "
                "the orders already accepted (dated %(standing)s), which stand.",
                date=format_datetime(when),
                standing=standing,
            )
            body += "\n\n" + _(
                "The latest orders by the Date of the message count. To change your orders, "
                "send them again."
            )
            body += "\n"
            reply = self.out.answer(letter, me, _("not used: older orders"), body)
            return Incoming(mid, frm, Verdict.IGNORED, me.name, (reason,), reply)
        mine = self.path / ORDERS / f"{me.name}.toml"
        if under_way(mine) and self.state.between_steps and not _holds(mine, choice.found.text):
            # other orders than the player's of an earlier message of this group: those are
            # committed first, so that a fetch stopped before the next commit, read again, does
            # not keep them twice in orders/replaced/ (and the later ones as if they came first)
            self.state.commit()
        replaced = store_orders(self.path, me.name, choice.found.text)
        taken = {"date": when.isoformat(), "message_id": mid}
        if future is not None:
            taken["dated"] = letter.date.isoformat()
        self.state.put("seen", "accepted", key, taken)  # committed with the message's record
        lines = processor.forecast(state, submission.orders, self.speaking(me))
        _ = self.speaking(me)._
        body = _(
            "Your orders for turn %(turn)s of %(game)s are accepted.",
            turn=state.turn,
            game=self.game.name,
        )
        body += "\n"
        notes = found_notes(choice, self.speaking(me))
        body += "".join(f"{note}\n" for note in notes)
        if future is not None:
            body += _("Note: %(note)s.", note=future) + "\n"
        if previous is not None:
            replaced_date = self.speaking(me).when(datetime.fromisoformat(previous["date"]))
            body += _("They replace the orders you sent on %(date)s.", date=replaced_date) + "\n"
        body += "\n" + _("What they will do:") + "\n" + "".join(f"  {line}\n" for line in lines)
        body += "\n" + _(
            "Until the turn is resolved you may send new orders: the latest message "
            "(by its Date) counts."
        )
        body += "\n"
        subject = _("accepted: your orders for turn %(turn)s", turn=state.turn)
        reply = self.out.answer(letter, me, subject, body)
        english = i18n.language(i18n.DEFAULT)
        reasons = list(found_notes(choice, english)[1 if choice.ready else 0 :])
        if replaced:
            since = f" of {previous['date']}" if previous is not None else ""
            reasons.append(f"replaced the orders{since} (kept as {replaced})")
        if future is not None:
            reasons.append(future)
        return Incoming(mid, frm, Verdict.ACCEPTED, me.name, tuple(reasons), reply)

    def no_orders(
        self, letter: Letter, raw: bytes, choice: Choice, me: Registration | None
    ) -> Incoming:
        """A message in which no orders can be taken: two different sets are refused; a
        player's request for their report is met; anything else a player sent is answered
        and passed to the moderator, since it may be a question for a person."""
        if me is None:
            reason = why_none(choice, i18n.language(i18n.DEFAULT))
            return self.reject(letter, raw, [reason], to=None)
        told = self.speaking(me)
        if choice.ambiguous is not None:
            sets = [found.text for found in choice.ambiguous]
            return self.reject(letter, raw, [why_none(choice, told)], to=me, shown=sets)
        if letter.resend:
            outcome = self.resend(letter, me)
            if outcome is not None:
                return outcome
        return self.reject(letter, raw, [why_none(choice, told)], to=me, passed=True)

    def resend(self, letter: Letter, me: Registration) -> Incoming | None:
        """The player's latest report again, as a new message; None when there is none."""
        key = f"{letter.message_id}\0{letter.digest}"
        made = resent_report(self.game, me.name, self.sender, self.now, key)
        if made is None:
            return None
        mid, frm = letter.message_id, letter.sender or ""
        if self.out.mute(letter, me) is not None:
            reason = "asked for the latest report again: not resent"
            return Incoming(mid, frm, Verdict.UNANSWERED, me.name, (reason,))
        name, msg = made
        if letter.thread_id is not None:
            msg["In-Reply-To"] = letter.thread_id
        write_eml(self.path, name, msg)
        self.out.answered(letter, me, str(msg["Message-ID"]))
        what = f"{me.name} asked for their latest report again: resent ({OUTBOX}/{name})"
        self.out.summarise(mid, frm, letter.subject, what, "", letter.reading.own_words)
        reason = f"asked for the latest report again: {OUTBOX}/{name}"
        return Incoming(mid, frm, Verdict.RESENT, me.name, (reason,), name)
