"""What became of the messages a fetch read: each one's verdict, and the fetch's summary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from pbem.present.text import plural
from pbem.records.mailstate import OUTBOX
from pbem.terminal import printable


class Verdict(Enum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    IGNORED = "ignored"
    """Valid, but older than the orders already accepted: answered with a note."""
    UNANSWERED = "not answered"
    """Sent by a machine (auto-reply, bounce, our own mail): nothing is done. Or a request
    for the report from an address muted (`muting`): not met."""
    DUPLICATE = "already processed"
    RESENT = "report resent"
    """A player asked for their latest report again: it is in the outbox."""
    RELAYED = "press relayed"
    """Table talk from a player, relayed to the players it was for (pbem.mail.press)."""
    HELD = "held"
    """Not read this time (a resolution is interrupted, or its orders cannot be stored): the
    next fetch reads it again."""


@dataclass(frozen=True)
class Incoming:
    """What became of one incoming message."""

    message_id: str
    sender: str
    verdict: Verdict
    player: str | None = None
    reasons: tuple[str, ...] = ()
    reply: str | None = None
    kept: str | None = None
    """Where a rejected message is kept for the moderator (mail/rejected/NAME.eml)."""

    def describe(self) -> str:
        """What happened, safe to print (text from the message has its controls escaped)."""
        who = f" ({self.player})" if self.player else ""
        sender = printable(self.sender) or "(no sender)"
        head = f"{self.verdict.value}: {printable(self.message_id)} from {sender}{who}"
        lines = [head] + [f"  {printable(r)}" for r in self.reasons]
        if self.reply:
            lines.append(f"  answer: {OUTBOX}/{self.reply}")
        if self.kept:
            lines.append(f"  kept: {self.kept}")
        return "\n".join(lines)


@dataclass(frozen=True)
class FetchResult:
    game: str
    incoming: tuple[Incoming, ...]
    note: str | None = None
    """The moderator's summary in the outbox (messages not answered, forged senders)."""
    read_at: datetime | None = None
    broken: str | None = None
    """Why the mailbox could not be read to the end (the rest is read next time), or None."""
    skipped: int = 0
    """The messages handled by an earlier fetch and skipped unread (pbem.mail.handled): they
    count as already processed."""

    def count(self, verdict: Verdict) -> int:
        found = sum(1 for i in self.incoming if i.verdict is verdict)
        return found + self.skipped if verdict is Verdict.DUPLICATE else found

    def lines(self) -> list[str]:
        out = [
            i.describe()
            for i in self.incoming
            if i.verdict is not Verdict.DUPLICATE or i.reasons or i.reply
        ]
        if self.note:
            out.append(f"moderator told: {OUTBOX}/{self.note}")
        counts = ", ".join(
            f"{self.count(v)} {v.value}" for v in Verdict if self.count(v) or v is Verdict.ACCEPTED
        )
        read = plural(len(self.incoming) + self.skipped, "message")
        out.append(f"{self.game}: {read} read: {counts}.")
        if self.count(Verdict.HELD):
            out.append("The held messages are read again by the next 'pbem mail fetch'.")
        if self.broken is not None:
            out.append(not_to_the_end(self.broken))
        return out


def not_to_the_end(broken: str) -> str:
    """What a fetch whose mailbox broke off says."""
    return (
        f"the mailbox could not be read to the end: {printable(broken)}. The messages read "
        "before are handled; the rest are read by the next fetch (no game waiting for them is "
        "played by the autopilot until then)"
    )
