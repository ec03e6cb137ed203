"""What a fetch writes for people: answers to the players (only ever to a registered address),
the rejected messages kept for the moderator in mail/rejected/, and the moderator's summary."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path

from pbem.mail.message import Letter
from pbem.mail.muting import Muting
from pbem.mail.records import (
    address,
    domain,
    keep_rejected,
    outgoing,
    set_text,
    slug,
    write_eml,
)
from pbem.present.text import wrapped_message
from pbem.records.mailstate import MailState
from pbem.records.store import Game, Registration
from pbem.terminal import printable

MAX_WORDS = 4000
"""The most of a player's own words listed in the moderator's summary."""


def write_reply(
    folder: Path, key: str, letter: Letter, out: EmailMessage, body: str, where: str, sender: str
) -> str:
    """Finish an answer to `letter` (its Message-ID from the message's key, threaded to it
    where its ID allows, `body` as text) and put it in `folder`'s outbox; returns its name."""
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]
    out["Message-ID"] = f"<pbem.{where}.reply.{digest}@{domain(sender)}>"
    if letter.thread_id is not None:
        out["In-Reply-To"] = letter.thread_id
        out["References"] = " ".join((*letter.references, letter.thread_id))
    set_text(out, wrapped_message(body))
    name = f"reply-{digest}.eml"
    write_eml(folder, name, out)
    return name


@dataclass
class Answers:
    """Writes a fetch's answers and records into the game directory."""

    game: Game
    state: MailState
    sender: str
    now: datetime
    moderator: str = ""
    """Where the summary goes (the `moderator` setting; default: `sender`)."""
    muted: dict[str, str] = field(default_factory=dict)
    """Why a message (by its key) was not answered though it would have been (`muting`)."""
    notes: dict[str, str] = field(default_factory=dict)
    """A paragraph to end the answer to a message with (by its Message-ID): a vacation the
    message also held is told in the one answer to its orders."""

    def __post_init__(self) -> None:
        self.muting = Muting(self.state, self.now)

    @property
    def path(self) -> Path:
        return self.game.path

    def mute(self, letter: Letter, to: Registration) -> str | None:
        """Why `to` gets no answer to `letter` (the limits of `muting`), or None; a message
        muted is listed in the moderator's summary."""
        why = self.muting.muted(address(to.email), letter)
        if why is not None:
            self.muted[letter.message_id] = why
            self.summarise(
                letter.message_id, letter.sender or "", letter.subject, f"not answered: {why}", ""
            )
        return why

    def answered(self, letter: Letter, to: Registration, message_id: str) -> None:
        self.muting.answered(address(to.email), message_id, letter)

    def answer(self, letter: Letter, to: Registration, subject: str, body: str) -> str | None:
        """An answer in the outbox, to the player's registered address (never to the
        message's Reply-To or From), threaded to the message where its ID allows; None when
        the address is muted (`mute`)."""
        if self.mute(letter, to) is not None:
            return None
        key = f"{letter.message_id}\0{letter.digest}"
        note = self.notes.pop(letter.message_id, None)
        if note is not None:
            body = f"{body.rstrip()}\n\n{note}\n"
        out = outgoing(
            self.sender,
            address(to.email),
            f"[{self.game.name}] {subject}",
            self.game.name,
            "auto-replied",
            self.now,
        )
        name = write_reply(self.path, key, letter, out, body, slug(self.game.name), self.sender)
        self.answered(letter, to, str(out["Message-ID"]))
        return name

    def keep(
        self, key: str, raw: bytes | None, frm: str, reason: str, letter: Letter | None = None
    ) -> str:
        """Keep a rejected message in mail/rejected/ (its bytes as .eml, the reason as .txt)."""
        subject = printable(letter.subject) if letter else ""
        return keep_rejected(
            self.path,
            key + (letter.digest if letter else ""),
            raw,
            f"Message-ID: {printable(key)}\nFrom: {printable(frm) or '(unreadable)'}\n"
            f"Subject: {subject}\nRead: {self.now.isoformat()}\nReason:\n"
            + "".join(f"  {printable(line)}\n" for line in reason.splitlines()),
        )

    def summarise(
        self, key: str, frm: str, subject: str, what: str, kept: str, words: str = ""
    ) -> None:
        """Add a message to the moderator's summary (kept in the mail state until it is written);
        `words`: what a player wrote, listed in full (up to MAX_WORDS characters)."""
        line = f"{printable(key)} from {printable(frm) or '(unreadable sender)'}"
        if subject:
            line += f', "{printable(subject[:100])}"'
        item = f"{line}\n  {printable(what)}"
        if kept:
            item += f"\n  {kept}"
        text = words.strip("\n")
        if text.strip():
            cut = text[:MAX_WORDS]
            item += "\n  Their message:\n" + "".join(
                f"  | {printable(row)}\n" for row in cut.split("\n")
            ).rstrip("\n")
            if len(text) > MAX_WORDS:
                item += f"\n  | ... ({len(text) - MAX_WORDS} more characters, in {kept or 'it'})"
        self.state.append("seen", "to_tell", item)  # committed with the message's record

    def tell_moderator(self) -> str | None:
        """One message to the moderator about every message not answered or sent in another
        player's name since the last summary."""
        items: list[str] = self.state.seen.get("to_tell", [])
        if not items:
            return None
        digest = hashlib.sha256("\n".join(items).encode()).hexdigest()[:16]
        n = len(items)
        out = outgoing(
            self.sender,
            self.moderator or self.sender,
            f"[{self.game.name}] {n} message{'s' if n > 1 else ''} for the moderator",
            self.game.name,
            "auto-generated",
            self.now,
        )
        out["Message-ID"] = f"<pbem.{slug(self.game.name)}.note.{digest}@{domain(self.sender)}>"
        out.set_content(
            wrapped_message(
                f"pbem read {n} message{'s' if n > 1 else ''} for {self.game.name} that need a "
                "person: messages from players that hold no orders (a question, a request), and "
                "messages no player was answered for or that carried a player's orders from "
                "another address. Each rejected one is kept in the game's mail/rejected/ folder "
                "with the reason.\n\n" + "".join(f"- {item}\n\n" for item in items)
            )
        )
        name = f"note-{digest}.eml"
        write_eml(self.path, name, out)
        self.state.reset("seen", "to_tell", [])
        self.state.commit()
        return name
