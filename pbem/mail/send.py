"""Mail out: each player's reports built into the outbox, and everything waiting there handed
to `smtp` to deliver, answers first (`waiting`), with the From, Reply-To and Bcc in force.

Reports are built once each (recorded in the mail state), taken back when their resolution is
undone, and queued again on the moderator's word (`resend_reports`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.kit import kit_bytes
from pbem.mail.machine import LOOP_HEADER
from pbem.mail.records import DEFAULT_FROM, address, write_eml
from pbem.mail.reports import build_report, remade
from pbem.mail.smtp import Delivery, SmtpServer
from pbem.present.text import plural
from pbem.records.disk import locked, write
from pbem.records.history import history_count, played_in, read_history, report_dir
from pbem.records.mailstate import OUTBOX, MailState
from pbem.records.opening import read_game
from pbem.records.seat_changes import seat_changes
from pbem.records.store import Game
from pbem.records.undone import undo_records
from pbem.terminal import printable


@dataclass
class SendResult:
    """What `send_mail` did: messages built into the outbox, delivered, failed, left pending."""

    built: list[str] = field(default_factory=list)
    delivered: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed

    def lines(self) -> list[str]:
        """What happened, safe to print."""
        verb = "would write" if self.dry_run else "wrote"
        out = [f"{verb} {OUTBOX}/{name}" for name in self.built]
        out += [f"sent {line}" for line in self.delivered]
        out += [f"failed: {line}" for line in self.failed]
        out += self.notes
        if self.pending:
            waiting = (
                "would wait" if self.dry_run else "waits" if len(self.pending) == 1 else "wait"
            )
            out.append(
                f"{plural(len(self.pending), 'message')} {waiting} in {OUTBOX}/: "
                + ", ".join(self.pending)
            )
        elif not self.built and not self.delivered:
            out.append("nothing to send")
        return [printable(line) for line in out]


def send_mail(
    directory: Path,
    sender: str = DEFAULT_FROM,
    server: SmtpServer | None = None,
    bcc: str | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
    reply_to: str | None = None,
    every: bool = False,
    kit: bool = False,
) -> SendResult:
    """Build a message for each player's report not yet built into the outbox; with a
    server, deliver everything waiting in the outbox (answers too), each address once.

    From, Reply-To (default: `sender`) and the Bcc of reports are set on every message waiting
    in the outbox, from the settings given now. The first send of a game already under way
    builds only the latest resolution's reports (`every`: all of them). With `kit`, the first
    report (resolution 0) carries the player's kit."""
    with locked(directory):
        game = read_game(directory)
        # a dry run changes nothing: an older game's JSON state is read as it is, not migrated
        opened = MailState.peek(directory) if dry_run else MailState.open(directory)
        with opened as state:
            return _send_game(
                directory, game, state, sender, server, bcc, dry_run, now, reply_to, every, kit
            )


def _send_game(
    directory: Path,
    game: Game,
    state: MailState,
    sender: str,
    server: SmtpServer | None,
    bcc: str | None,
    dry_run: bool,
    now: datetime | None,
    reply_to: str | None,
    every: bool,
    kit: bool,
) -> SendResult:
    """`send_mail` under the game's lock, with its mail state open."""
    result = SendResult(dry_run=dry_run)
    first = "sent" not in state.begun
    sent = state.sent
    kit_file: bytes | None = None
    count = history_count(directory)
    undone = [u.resolution for u in undo_records(directory)]
    attempt = {r: remade(game, r, undone) for r in range(count)}
    skipped = set(sent.get("skipped", []))
    holders = {c.seat: c for c in seat_changes(directory)}  # each seat's latest change

    def keyed(resolution: int, name: str) -> tuple[str, str, int]:
        """A report's key in the mail state, the name its message goes by, and the first
        resolution whose report is its player's (with the kit): a substitute's begin with the
        report made again for them, and are other messages than their predecessor's."""
        # a resolution made again after an undo is another attempt: new messages
        key, whose, since = f"{resolution:04d}{attempt[resolution]}/{name}", name, 0
        if name in holders:
            change = holders[name]
            key, whose = f"{key}/{change.holders}", f"{name}-{change.holders}"
            since = change.resolution - 1
        return key, whose, since

    if first and not every and count > 1:
        skipped |= {keyed(r, reg.name)[0] for r in range(count - 1) for reg in game.registrations}
        latest = played_in(game, count - 1, read_history(directory, count - 1).turn)
        result.notes.append(
            f"the game was under way when its mail began: only the reports after "
            f"{latest.words()} are mailed ('pbem mail send --all' mails the earlier ones too)"
        )
        if not dry_run:  # decided once: a send stopped after this never mails them
            state.reset("sent", "skipped", sorted(skipped))
            state.commit()
    if every:
        skipped = set()
    for resolution in range(count):
        wanted = []
        for reg in game.registrations:
            key, whose, since = keyed(resolution, reg.name)
            if resolution < since or key in sent["reports"] or key in skipped:
                continue
            wanted.append((reg, key, whose, since))
        if not wanted:
            continue  # (its folder is not gone into: nothing in it is read)
        folder = report_dir(directory, resolution)  # (refused if it is or holds a link)
        for reg, key, whose, since in wanted:
            if not (folder / f"{reg.name}.txt").exists():
                continue
            if not address(reg.email):
                where = f"{folder.name}/{reg.name}"
                why = (
                    f"{reg.name}'s address is not one address ({printable(reg.email)!r}): "
                    f"report {where} not mailed; correct it with 'pbem config DIR "
                    f"player.{reg.name}.email=ADDRESS'"
                    if reg.email.strip()
                    else f"{reg.name} has no address: report {where} not mailed"
                )
                result.notes.append(why)
                continue
            name = f"r{folder.name}{attempt[resolution]}-{whose}.eml"
            if not dry_run:
                if kit and resolution == since:
                    kit_file = kit_file or kit_bytes()
                attached = kit_file if resolution == since else None
                msg = build_report(game, resolution, reg.name, sender, bcc, now, attached)
                assert msg is not None
                write_eml(directory, name, msg)
                state.append("sent", "reports", key)
                state.commit()
            result.built.append(name)
    if sorted(skipped) != sent.get("skipped", []) and not dry_run:
        state.reset("sent", "skipped", sorted(skipped))
        state.commit()
    pending = waiting(directory, state)
    if not dry_run:
        for path in pending:
            stamp(path, sender, reply_to or sender, bcc)
    result.pending = [p.name for p in pending]
    if dry_run:
        result.pending += result.built
    if server is None or dry_run or not pending:
        return result
    Delivery(directory, server, state, result.delivered, result.failed).run(pending)
    result.pending = [p.name for p in waiting(directory, state)]
    return result


def deliver_waiting(directory: Path, server: SmtpServer, result: SendResult) -> None:
    """Deliver what waits in a folder's outbox (a game's, or a root's own answers); the caller
    holds the folder's lock."""
    with MailState.open(directory) as state:
        Delivery(directory, server, state, result.delivered, result.failed).run(
            waiting(directory, state)
        )


def waiting(directory: Path, state: MailState | None = None) -> list[Path]:
    """The files waiting at the top of the outbox (hidden ones are half-written files): the
    answers in the order the messages they answer came in (the order of the mail state), then
    the reports, then anything else; so that a player who sent orders reads "accepted" before
    the report of the turn they were for (a fetch, a resolution and a send in one run)."""
    folder = directory / OUTBOX
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if not p.name.startswith(".") and not p.is_dir()]
    seen = (state or MailState.peek(directory)).seen
    answers = {
        str(record["reply"]): n
        for n, record in enumerate(seen["messages"].values())
        if isinstance(record, dict) and record.get("reply")
    }

    def place(path: Path) -> tuple[int, int, str]:
        if path.name in answers:
            return (0, answers[path.name], path.name)
        if REPORT_FILE.match(path.name):
            return (1, 0, path.name)
        return (2, 0, path.name)

    return sorted(files, key=place)


REPORT_FILE = re.compile(r"^r\d{4}-.+\.eml$")
"""The outbox name of a report, after its folder (r0003-turn-2-alice.eml; r0003-alice.eml from
a folder an older pbem named); the rest are answers and notes."""


def stamp(path: Path, sender: str, reply_to: str, bcc: str | None) -> None:
    """Set a waiting message's From and Reply-To (and a report's Bcc) to the settings in force
    now, so that nothing queued keeps an address changed since. Messages pbem did not write
    are left as they are."""
    if path.suffix != ".eml" or not path.is_file():
        return
    try:
        raw = path.read_bytes()
    except OSError:
        return  # left as it is: its delivery moves it to outbox/failed/ with the reason
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    if msg.get(LOOP_HEADER) is None:
        return  # not written by pbem (a message the moderator put there): left as it is
    wanted = {"From": sender, "Reply-To": reply_to}
    if REPORT_FILE.match(path.name):
        wanted["Bcc"] = bcc or ""
    changed = False
    for header, value in wanted.items():
        if str(msg.get(header, "")) == value:
            continue
        del msg[header]
        if value:
            msg[header] = value
        changed = True
    if not changed:
        return
    data = msg.as_bytes(policy=policy.default.clone(utf8=not str(msg.get("To", "")).isascii()))
    write(path, data)


@dataclass
class Resent:
    """What `resend_reports` queued: outbox file names, and what could not be resent."""

    queued: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def resend_reports(
    directory: Path,
    players: Sequence[str] = (),
    turn: int | None = None,
    sender: str = DEFAULT_FROM,
    now: datetime | None = None,
) -> Resent:
    """Queue reports again, each as a new message ("resent" in its subject, a Message-ID of
    its own): the latest report of each of `players` (default: every player with an
    address), or the report after `turn`. Recorded in the mail state; `now` (default: the
    clock) dates the messages and names them, so the same call twice queues them once."""
    from pbem.mail.reports import resent_report

    when = now or datetime.now().astimezone()
    out = Resent()
    with locked(directory):
        game = read_game(directory)
        known = {reg.name for reg in game.registrations}
        unknown = [p for p in players if p not in known]
        if unknown:
            raise PbemError(
                f"no player {', '.join(unknown)} in {game.name}: the players are "
                + ", ".join(sorted(known))
            )
        resolution = None if turn is None else _resolution_of(game, turn)
        with MailState.open(directory) as state:
            sent = state.sent
            for reg in game.registrations:
                if (players and reg.name not in players) or not address(reg.email):
                    if players and reg.name in players:
                        out.notes.append(f"{reg.name} has no address: nothing resent")
                    continue
                key = f"resend/{reg.name}/{resolution}/{when.isoformat()}"
                made = resent_report(game, reg.name, sender, when, key, resolution)
                if made is None:
                    which = f"after turn {turn}" if turn is not None else "yet"
                    out.notes.append(f"{reg.name} has no report {which}: nothing resent")
                    continue
                name, msg = made
                if any(r.get("file") == name for r in sent.setdefault("resent", [])):
                    continue
                write_eml(directory, name, msg)
                state.append(
                    "sent", "resent", {"player": reg.name, "file": name, "at": when.isoformat()}
                )
                state.commit()
                out.queued.append(name)
    return out


def _resolution_of(game: Any, turn: int) -> int:
    """The resolution whose reports follow turn `turn` (the last, if it was played again)."""
    found = [
        r
        for r in range(history_count(game.path))
        if read_history(game.path, r).turn == turn and (report_dir(game.path, r)).is_dir()
    ]
    if not found:
        raise PbemError(f"{game.name} has no report after turn {turn}")
    return found[-1]
