"""What a fetch skips unread: the messages of its mailbox that an earlier fetch handled.

A fetch records, beside each message it handles, where it found it (`Mark`): a Maildir entry by
the unique part of its name (with the file's size and time), an mbox message by its offset
(with where it ends), an IMAP message by its UID. The next fetch of the same mailbox skips a
message recorded so without opening, downloading or parsing it, so that a fetch costs the new
mail, not the mailbox. A mailbox that is not what it was when they were recorded (an mbox
rewritten or cut short, an IMAP folder whose UIDVALIDITY changed) has its records forgotten: its
messages are read, as before there were any, and those handled before are known by their
Message-IDs, as always. A message is never taken twice because of a record (a record is made
with, or after, the message's own), and never skipped unless the record names it exactly.

The records live in the mail state of the folder that reads the mailbox (`handled`, in
`mail/ledger.sqlite`), committed with the messages handled (`MailState.mark`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pbem.records.mailstate import MailState


@dataclass(frozen=True)
class Mark:
    """Where a message was found: which mailbox, which message in it, and what must be the
    same for a message found there again to be that one (`stamp`)."""

    mailbox: str
    key: str
    stamp: str


WHOLE = ""
"""The key under which a mailbox's check of itself is recorded."""


@dataclass
class Known:
    """The messages handled by earlier fetches of the mailboxes read, once the fetch has its
    mail state (`load`), and the records of the messages it handles."""

    state: MailState | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """The messages skipped unread: their Message-IDs and senders, as recorded."""
    _checks: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """Each mailbox's check as it is now, and whether its records made before stand: recorded
    with its first message handled."""

    def load(self, state: MailState) -> None:
        self.state = state

    def marks(self, mailbox: str) -> tuple[str | None, dict[str, tuple[str, str, str]]]:
        """The check recorded of `mailbox` as a whole (or None), and its messages handled
        before, by key: (stamp, Message-ID, sender). None without a mail state (messages handed
        over outside a fetch)."""
        if self.state is None:
            return None, {}
        found = self.state.handled(mailbox)
        whole = found.pop(WHOLE, None)
        return (whole[0] if whole is not None else None), found

    def renew(self, mailbox: str, check: str, keep: bool) -> None:
        """What `mailbox` is as a whole now (`check`), recorded with its first message handled;
        unless `keep`, its records made before are forgotten then (it is not what it was)."""
        self._checks[mailbox] = (check, keep)

    def skip(self, recorded: tuple[str, str, str]) -> None:
        """A message skipped unread (`recorded`: its stamp, Message-ID and sender)."""
        self.skipped.append((recorded[1], recorded[2]))

    def record(self, mark: Mark | None, message_id: str, sender: str) -> None:
        """A message handled: where it was found is recorded with it (and, with the first of
        its mailbox, the mailbox's check)."""
        if mark is None or self.state is None:
            return
        renewed = self._checks.pop(mark.mailbox, None)
        if renewed is not None:
            check, keep = renewed
            if not keep:
                self.state.forget_mailbox(mark.mailbox)
            self.state.mark(mark.mailbox, WHOLE, check, "", "")
        self.state.mark(mark.mailbox, mark.key, mark.stamp, message_id, sender)

    def unrecord(self, mark: Mark | None) -> None:
        """A message whose handling is not recorded after all: neither is where it was."""
        if mark is not None and self.state is not None:
            self.state.unmark(mark.mailbox, mark.key)
