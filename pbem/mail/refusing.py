"""Refusing a message: kept for the moderator, answered (only ever to a player's registered
address) in the player's language with what to do. Also who sent it and in which language
the answer goes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from email.utils import format_datetime
from typing import Any

from pbem.errors import Problem
from pbem.languages import i18n
from pbem.mail.answers import Answers
from pbem.mail.found import Choice
from pbem.mail.message import Letter, addresses_match
from pbem.mail.outcomes import Incoming, Verdict
from pbem.mail.records import address
from pbem.mail.told import found_notes, not_read
from pbem.records.mailstate import MailState
from pbem.records.store import Game, Registration
from pbem.terminal import printable


class Refusing:
    """The refusals of a game's fetch (pbem.mail.fetch's `_Fetcher` is one)."""

    game: Game
    state: MailState
    out: Answers

    def speaking(self, player: Registration) -> i18n.Language:
        """The language a player's answers are in."""
        return i18n.language(self.game.language_of(player.name), self.game.state.board.name)

    def registered(self, sender: str | None) -> Registration | None:
        """The player whose registered address sent the message, if any (the first, when
        players of one household share an address)."""
        return next((r for r in self.game.registrations if self.sent_by(sender, r)), None)

    @staticmethod
    def sent_by(sender: str | None, reg: Registration) -> bool:
        """Whether `sender` is `reg`'s registered address."""
        return sender is not None and addresses_match(sender, address(reg.email))

    def reject(
        self,
        letter: Letter,
        raw: bytes,
        why: Sequence[str | Problem],
        *,
        to: Registration | None,
        shown: str | Sequence[str] | None = None,
        choice: Choice | None = None,
        passed: bool = False,
    ) -> Incoming:
        """Refuse a message: kept in mail/rejected/, answered only to a registered sender.
        `why`: the reasons, each a sentence already in the player's language or a Problem (in
        English for the moderator and the records, in the player's language in the answer).
        `shown`: the orders as read (or the sets of them) to list in the answer; `passed`: the
        message holds no orders and goes to the moderator (the answer says so)."""
        mid, frm = letter.message_id, letter.sender or ""
        reasons = [r.message if isinstance(r, Problem) else r for r in why]
        kept = self.out.keep(mid, raw, frm, "\n".join(reasons), letter)
        if passed and to is not None:
            what = f"no orders from {to.name}, passed on: {reasons[0]}"
            self.out.summarise(mid, frm, letter.subject, what, kept, letter.reading.own_words)
        if to is None:
            unanswered = f"not answered: {frm} is not a player's address" if frm else "not answered"
            summary = f"rejected, {unanswered}: {reasons[0]}"
            self.out.summarise(mid, frm, letter.subject, summary, kept)
            return Incoming(mid, frm, Verdict.REJECTED, None, (*reasons, unanswered), kept=kept)
        _ = self.speaking(to)._
        body = (
            _('Your message "%(subject)s" was not accepted:', subject=printable(letter.subject))
            if letter.subject
            else _("Your message was not accepted:")
        )
        body += "\n\n" + "".join(f"  {printable(reason_told(r, _))}\n" for r in why)
        if choice is not None:
            body += "".join(f"\n{note}\n" for note in found_notes(choice, self.speaking(to)))
        sets = [shown] if isinstance(shown, str) else list(shown or ())
        for n, orders in enumerate(sets, 1):
            heading = (
                _("The orders as read from your message:")
                if len(sets) == 1
                else _("Set %(n)s of the orders as read from your message:", n=n)
            )
            body += "\n" + heading + "\n\n"
            body += "".join(
                f"  {i:3} | {printable(line)}\n" for i, line in enumerate(orders.splitlines(), 1)
            )
        if passed:
            body += "\n" + _(
                "An order message holds the order file in its text (from the line game = ... "
                "on), or attached as a .toml file. The order file for this turn is at the end of "
                "your latest report, ready to edit; answer 'resend' to have that report again."
            )
            body += "\n\n" + _("Your message has been passed to the moderator.") + "\n"
        if f"{self.game.state.resolution}/{to.name}{to.stint}" in self.state.seen["accepted"]:
            body += "\n" + _(
                "Nothing from this message was used: your orders accepted earlier stand."
            )
        else:
            body += "\n" + _("Nothing from this message was used. Correct it and send it again.")
        body += "\n"
        reply = self.out.answer(letter, to, _("rejected: your orders"), body)
        return Incoming(mid, frm, Verdict.REJECTED, to.name, tuple(reasons), reply, kept)

    def forged(self, letter: Letter, raw: bytes, player: Registration) -> Incoming:
        """Orders for a player from another address: the player (at the registered address)
        and the moderator are told; the sender is not answered."""
        mid, frm = letter.message_id, letter.sender or ""
        registered = address(player.email)
        reason = (
            f"{frm} is not the address registered for {player.name}: orders are taken only "
            "from the player's own address"
        )
        kept = self.out.keep(mid, raw, frm, reason, letter)
        told = f"{player.name} told at {registered}" if registered else "no address to tell"
        self.out.summarise(mid, frm, letter.subject, f"rejected, {told}: {reason}", kept)
        if not registered:
            return Incoming(mid, frm, Verdict.REJECTED, player.name, (reason,), kept=kept)
        accepted = self.state.seen["accepted"]
        stands = f"{self.game.state.resolution}/{player.name}{player.stint}" in accepted
        _ = self.speaking(player)._
        values = {
            "sender": printable(frm),
            "player": player.name,
            "game": self.game.name,
            "address": registered,
        }
        body = (
            _(
                "A message sent from %(sender)s carried orders for you (%(player)s) in "
                "%(game)s. Orders are taken only from your registered address, %(address)s, so "
                "it was not used: your orders accepted earlier stand.",
                **values,
            )
            if stands
            else _(
                "A message sent from %(sender)s carried orders for you (%(player)s) in "
                "%(game)s. Orders are taken only from your registered address, %(address)s, so "
                "it was not used.",
                **values,
            )
        )
        body += "\n\n" + _(
            "If you sent it, send your orders again from %(address)s. If you did not, someone "
            "else has sent orders in your name; the moderator has been told.",
            **values,
        )
        body += (
            f"\n\nMessage-ID: {printable(mid)}\nSubject: {printable(letter.subject) or '(none)'}\n"
        )
        subject = _("orders in your name from another address")
        reply = self.out.answer(letter, player, subject, body)
        return Incoming(mid, frm, Verdict.REJECTED, player.name, (reason,), reply, kept)

    def too_large(self, letter: Letter, raw: bytes, limit: Problem) -> Incoming:
        """A message over a limit (its size, its MIME parts), refused from its headers alone:
        its head is kept, the moderator told, a player answered what to do."""
        mid, frm = letter.message_id, letter.sender or ""
        reason = f"not read: {limit.message}"
        kept = self.out.keep(mid, raw, frm, reason, letter)
        me = self.registered(letter.sender) if letter.machine is None else None
        if me is None:
            why = letter.machine or (f"{frm} is not a player's address" if frm else "no sender")
            self.out.summarise(
                mid, frm, letter.subject, f"rejected, not answered ({why}): {reason}", kept
            )
            return Incoming(
                mid, frm, Verdict.REJECTED, None, (reason, f"not answered: {why}"), kept=kept
            )
        self.out.summarise(mid, frm, letter.subject, f"rejected, {me.name} told: {reason}", kept)
        subject, body = not_read(limit, letter.subject, self.speaking(me))
        body += "\n"
        reply = self.out.answer(letter, me, subject, body)
        return Incoming(mid, frm, Verdict.REJECTED, me.name, (reason,), reply, kept)

    def reused_id(self, letter: Letter, previous: dict[str, Any]) -> Incoming:
        """A message with the Message-ID of one already read but other content."""
        mid, frm = letter.message_id, letter.sender or ""
        read = previous.get("read")
        when = format_datetime(datetime.fromisoformat(read)) if read else "earlier"
        reason = (
            f"a message with this Message-ID was already read ({when}) and this one says "
            "something else: it was not used"
        )
        me = self.registered(letter.sender) if letter.machine is None else None
        if me is None:
            return Incoming(mid, frm, Verdict.DUPLICATE, None, (reason, "not answered"))
        _ = self.speaking(me)._
        body = _(
            'Your message "%(subject)s" has the Message-ID %(id)s, the same as a message pbem '
            "read %(when)s, but says something else. It was not used.",
            subject=printable(letter.subject),
            id=printable(mid),
            when=when,
        )
        body += "\n\n" + _(
            "To change your orders, send them again as a new message (not by resending or "
            "editing an earlier one)."
        )
        body += "\n"
        reply = self.out.answer(letter, me, _("not used: a message already read"), body)
        return Incoming(mid, frm, Verdict.DUPLICATE, me.name, (reason,), reply)


def reason_told(reason: str | Problem, _: Any) -> str:
    """A reason as the player reads it: a sentence as it is, a Problem in their language (its
    English message when it has no catalogue entry)."""
    if isinstance(reason, str):
        return reason
    return str(_(reason.template, **reason.values)) if reason.template else reason.message
