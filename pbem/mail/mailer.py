"""Email in and out: orders fetched from a mailbox, reports and replies mailed to the players.

Everything pbem mails goes through DIR/outbox/ first, as one .eml file per message: the top of
outbox/ is what is still to be sent (by `mail send --smtp`, or by hand), outbox/sent/ what was.
The state lives in DIR/mail/, written atomically after every message so that an interrupted run
can simply be run again:

- seen.json: every incoming Message-ID processed (a second copy is skipped), and per pending
  resolution and player the Date and Message-ID of the orders accepted;
- sent.json: which reports were built into the outbox, and per outbox file the addresses it
  was delivered to and those refused, so a failed send retries only what did not go.

The mailboxes themselves are only read, never changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import mailbox
import os
import re
import smtplib
import ssl
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import (
    format_datetime,
    formatdate,
    getaddresses,
    parseaddr,
    parsedate_to_datetime,
)
from enum import Enum
from pathlib import Path
from typing import Any, cast

from pbem.core.orders import parse_orders
from pbem.core.state import Phase
from pbem.errors import GameFileError, OrderError, PbemError
from pbem.game import processor
from pbem.game.store import Game, atomic_write, history_count, locked, read_game, report_dir
from pbem.game.undo import undo_records
from pbem.present import report

LOOP_HEADER = "X-Pbem-Loop"
DEFAULT_FROM = "pbem@localhost"
FROM_ENV = "PBEM_FROM"
PASSWORD_ENV = "PBEM_SMTP_PASSWORD"
MAX_ORDERS_BYTES = 64 * 1024
"""The largest order file taken, attached or in a message's text."""
ORDER_FILE = Path("orders.toml")
"""The name problems are reported against (`orders.toml line 7: ...`)."""

MAIL = "mail"
SEEN = "seen.json"
SENT = "sent.json"
OUTBOX = "outbox"
SENT_FOLDER = "sent"
REPLACED = "replaced"

_GAME_LINE = re.compile(r"^\s*game\s*=")
_ORIGINAL = re.compile(r"^\s*(-{3,}\s*original message\s*-{3,}|_{10,})\s*$", re.IGNORECASE)
_TOML_CHARS = re.compile(r"[=\[\]\"'#{}]")
_TOML_TYPES = ("application/toml", "text/toml", "text/x-toml", "application/x-toml")
_PARSER = BytesParser(policy=policy.default)


# ---------------------------------------------------------------------------------------------
# Reading messages and finding orders in them


class NoOrders(PbemError):
    """A message in which no order file can be found; says why."""


def parse_message(raw: bytes) -> EmailMessage:
    return _PARSER.parsebytes(raw)


def message_id(msg: Message, raw: bytes) -> str:
    """The message's Message-ID, or one made from its bytes when it has none."""
    value = " ".join(str(msg.get("Message-ID", "")).split())
    return value[:500] if value else f"<{hashlib.sha256(raw).hexdigest()[:32]}@pbem.invalid>"


def automatic(msg: Message) -> str | None:
    """Why a message was sent by a machine (and must not be answered), or None."""
    if msg.get(LOOP_HEADER) is not None:
        return f"it carries pbem's own {LOOP_HEADER} header"
    submitted = str(msg.get("Auto-Submitted", "")).split(";")[0].strip().lower()
    if submitted and submitted != "no":
        return f"it is an automatic message (Auto-Submitted: {submitted})"
    precedence = str(msg.get("Precedence", "")).strip().lower()
    if precedence in ("bulk", "junk", "list"):
        return f"it is an automatic message (Precedence: {precedence})"
    for header in ("X-Autoreply", "X-Autorespond"):
        if msg.get(header) is not None:
            return f"it is an automatic reply ({header})"
    return_path = msg.get("Return-Path")
    if return_path is not None and str(return_path).strip() in ("", "<>"):
        return "it has an empty Return-Path (a bounce or notification)"
    return None


def orders_from_body(body: str) -> str | None:
    """The TOML in a message's text: from the first `game =` line to the end, leaving out
    quoted lines (and the "... wrote:" line before them), the signature and anything after
    an "Original Message" separator, and trailing lines that cannot be TOML ("Thanks, Bob")."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").replace("\xa0", " ").split("\n")
    kept: list[str] = []
    for i, line in enumerate(lines):
        if line.rstrip() == "--" or _ORIGINAL.match(line):
            break
        if line.lstrip().startswith(">") or _attribution(lines, i):
            continue
        kept.append(line)
    start = next((i for i, line in enumerate(kept) if _GAME_LINE.match(line)), None)
    if start is None:
        return None
    kept = kept[start:]
    while kept and (not kept[-1].strip() or not _TOML_CHARS.search(kept[-1])):
        kept.pop()
    return "\n".join(line.rstrip() for line in kept) + "\n"


def _attribution(lines: Sequence[str], i: int) -> bool:
    """Whether line i introduces a quote ("On Monday, Bob wrote:" followed by "> ...")."""
    if not lines[i].rstrip().endswith(":") or _GAME_LINE.match(lines[i]):
        return False
    following = next((line for line in lines[i + 1 :] if line.strip()), "")
    return following.lstrip().startswith(">")


def _parts(part: Message) -> Iterator[Message]:
    """The leaf parts of a message, not descending into attached messages."""
    if part.is_multipart():
        if part.get_content_maintype() == "message":
            return
        for sub in cast(list[Message], part.get_payload()):
            yield from _parts(sub)
    else:
        yield part


def _is_order_file(part: Message) -> bool:
    name = (part.get_filename() or "").lower()
    return name.endswith(".toml") or part.get_content_type() in _TOML_TYPES


def _decoded(part: Message, what: str) -> str:
    data = part.get_payload(decode=True)
    raw = data if isinstance(data, bytes) else b""
    if len(raw) > MAX_ORDERS_BYTES:
        raise NoOrders(
            f"{what} is {len(raw)} bytes; an order file may be at most "
            f"{MAX_ORDERS_BYTES // 1024} KiB"
        )
    charset = part.get_content_charset() or "utf-8"
    try:
        return raw.decode("utf-8-sig" if charset.lower() in ("utf-8", "utf8") else charset)
    except (LookupError, UnicodeDecodeError):
        raise NoOrders(f"{what} is not text in {charset}: save it as UTF-8") from None


def find_orders(msg: EmailMessage) -> str:
    """The order file in a message: a .toml attachment, or else the TOML in its text."""
    attached = [p for p in _parts(msg) if _is_order_file(p)]
    if len(attached) > 1:
        names = ", ".join(p.get_filename() or "(unnamed)" for p in attached)
        raise NoOrders(f"{len(attached)} order files are attached ({names}): attach only one")
    if attached:
        name = attached[0].get_filename() or "the attached order file"
        return _decoded(attached[0], f"the attachment {name}")
    plain = msg.get_body(preferencelist=("plain",))
    if plain is None:
        if msg.get_body(preferencelist=("html",)) is not None:
            raise NoOrders(
                "the message is HTML only: send it as plain text, or attach the .toml order file"
            )
        raise NoOrders("the message has no text and no .toml attachment")
    orders = orders_from_body(_decoded(plain, "the message's text"))
    if orders is None:
        raise NoOrders(
            "no orders found: put the order file (from 'game = ...' on) in the text of your "
            "message, or attach it as a .toml file"
        )
    return orders


def _date(msg: Message) -> datetime | None:
    value = msg.get("Date")
    if value is None:
        return None
    try:
        when = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _address(value: object) -> str:
    return parseaddr(str(value or ""))[1].strip()


# ---------------------------------------------------------------------------------------------
# Mailboxes


@dataclass(frozen=True)
class Sources:
    """Where incoming mail is read from: a Maildir, an mbox file, single .eml files."""

    maildir: Path | None = None
    mbox: Path | None = None
    files: tuple[Path, ...] = ()


def read_messages(sources: Sources) -> list[bytes]:
    """Every message in the sources, in order of arrival, as bytes; the mailboxes are not
    changed (no message is marked read or removed)."""
    if sources.maildir is None and sources.mbox is None and not sources.files:
        raise PbemError("give a mailbox to read: --maildir PATH, --mbox PATH or .eml files")
    out: list[bytes] = []
    if sources.maildir is not None:
        try:
            box = mailbox.Maildir(sources.maildir, factory=None, create=False)
            keys = sorted(box.keys(), key=lambda k: (box.get_message(k).get_date(), k))
            out += [box.get_bytes(k) for k in keys]
        except (OSError, mailbox.Error) as err:
            raise PbemError(f"cannot read the Maildir {sources.maildir}: {err}") from None
    if sources.mbox is not None:
        try:
            if not sources.mbox.is_file():
                raise mailbox.NoSuchMailboxError(str(sources.mbox))
            mbox = mailbox.mbox(sources.mbox, create=False)
            out += [mbox.get_bytes(k) for k in mbox.iterkeys()]
        except (OSError, mailbox.Error) as err:
            raise PbemError(f"cannot read the mbox {sources.mbox}: {err}") from None
    for path in sources.files:
        try:
            out.append(path.read_bytes())
        except OSError as err:
            raise PbemError(f"cannot read {path}: {err}") from None
    return out


# ---------------------------------------------------------------------------------------------
# State files


def _load(path: Path, default: dict[str, Any]) -> dict[str, Any]:
    if not path.exists():
        return default
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GameFileError(f"{path} is damaged ({err}); restore it from a backup") from None
    if not isinstance(data, dict):
        raise GameFileError(f"{path} is damaged: not a JSON object")
    for key, value in default.items():
        data.setdefault(key, value)
    return data


def _save(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _seen(directory: Path) -> dict[str, Any]:
    return _load(directory / MAIL / SEEN, {"messages": {}, "accepted": {}})


def _sent(directory: Path) -> dict[str, Any]:
    return _load(directory / MAIL / SENT, {"reports": [], "messages": {}})


def _domain(sender: str) -> str:
    address = _address(sender)
    return address.rpartition("@")[2] or "localhost"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "game"


def _write_eml(directory: Path, name: str, msg: EmailMessage) -> None:
    atomic_write(directory / OUTBOX / name, msg.as_bytes())


# ---------------------------------------------------------------------------------------------
# Orders in


class Verdict(Enum):
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    IGNORED = "ignored"
    """Valid, but older than the orders already accepted: answered with a note."""
    UNANSWERED = "not answered"
    """Sent by a machine (auto-reply, bounce, our own mail): nothing is done."""
    DUPLICATE = "already processed"


@dataclass(frozen=True)
class Incoming:
    """What became of one incoming message."""

    message_id: str
    sender: str
    verdict: Verdict
    player: str | None = None
    reasons: tuple[str, ...] = ()
    reply: str | None = None
    note: str | None = None

    def describe(self) -> str:
        who = f" ({self.player})" if self.player else ""
        head = f"{self.verdict.value}: {self.message_id} from {self.sender or '(no sender)'}{who}"
        lines = [head] + [f"  {r}" for r in self.reasons]
        if self.reply:
            lines.append(f"  answer: {OUTBOX}/{self.reply}")
        if self.note:
            lines.append(f"  moderator told: {OUTBOX}/{self.note}")
        return "\n".join(lines)


@dataclass(frozen=True)
class FetchResult:
    game: str
    incoming: tuple[Incoming, ...]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for i in self.incoming if i.verdict is verdict)

    def lines(self) -> list[str]:
        out = [i.describe() for i in self.incoming if i.verdict is not Verdict.DUPLICATE]
        counts = ", ".join(
            f"{self.count(v)} {v.value}" for v in Verdict if self.count(v) or v is Verdict.ACCEPTED
        )
        out.append(f"{self.game}: {len(self.incoming)} messages read: {counts}.")
        return out


def fetch_orders(directory: Path, sources: Sources, sender: str = DEFAULT_FROM) -> FetchResult:
    """Read the mailboxes, store each accepted order file in DIR/orders/<player>.toml and
    answer every message (but machines') in the outbox. Messages already processed are
    skipped, so fetching the same mailbox again changes nothing."""
    messages = read_messages(sources)
    with locked(directory):
        game = read_game(directory)
        seen = _seen(directory)
        results: list[Incoming] = []
        for raw in messages:
            msg = parse_message(raw)
            mid = message_id(msg, raw)
            frm = _address(msg.get("From"))
            if mid in seen["messages"]:
                results.append(Incoming(mid, frm, Verdict.DUPLICATE))
                continue
            outcome = _Fetcher(game, seen, sender).handle(msg, mid)
            seen["messages"][mid] = {
                "from": frm,
                "verdict": outcome.verdict.value,
                "player": outcome.player,
                "reply": outcome.reply,
            }
            _save(directory / MAIL / SEEN, seen)
            results.append(outcome)
    return FetchResult(game.name, tuple(results))


@dataclass
class _Fetcher:
    """Handles one message against the game; writes orders and answers to the directory."""

    game: Game
    seen: dict[str, Any]
    sender: str

    def handle(self, msg: EmailMessage, mid: str) -> Incoming:
        frm = _address(msg.get("From"))
        why = automatic(msg)
        if why is not None:
            return Incoming(mid, frm, Verdict.UNANSWERED, reasons=(f"not answered: {why}",))
        if not frm:
            return Incoming(mid, frm, Verdict.UNANSWERED, reasons=("no From address to answer",))
        try:
            text = find_orders(msg)
        except NoOrders as err:
            return self.reject(msg, mid, None, [str(err)])
        try:
            orders = parse_orders(text, self.game.state.board)
        except OrderError as err:
            return self.reject(
                msg, mid, None, [p.format(ORDER_FILE.name) for p in err.problems], text
            )
        state = self.game.state
        player = orders.player
        if orders.game != self.game.name:
            return self.reject(
                msg,
                mid,
                None,
                [
                    f"these orders are for an unknown game '{orders.game}': this address takes "
                    f"orders for '{self.game.name}'"
                ],
            )
        if state.phase is Phase.OVER:
            return self.reject(
                msg,
                mid,
                None,
                [f"game '{self.game.name}' is over ({state.winner} won): no more orders are taken"],
            )
        reg = self.game.registration(player)
        if reg is None:
            return self.reject(msg, mid, None, [f"there is no player '{player}' in this game"])
        senders = getaddresses([str(v) for v in msg.get_all("From", [])])
        registered = _address(reg.email)
        if len(senders) != 1 or not registered or frm.lower() != registered.lower():
            reason = (
                f"{frm} is not the address registered for {player}: orders are taken only "
                "from the player's own address"
            )
            note = self.tell_moderator(msg, mid, player, frm, registered)
            out = self.reject(msg, mid, None, [reason])
            return Incoming(mid, frm, out.verdict, player, out.reasons, out.reply, note)
        submission = processor.check_submission(self.game, ORDER_FILE, text)
        if not submission.accepted:
            return self.reject(msg, mid, player, submission.messages(), text)
        when = _date(msg)
        if when is None:
            return self.reject(
                msg, mid, player, ["the message has no valid Date header: send it again"]
            )
        key = f"{state.resolution}/{player}"
        previous = self.seen["accepted"].get(key)
        if previous is not None and when < datetime.fromisoformat(previous["date"]):
            reason = (
                f"this message is dated {format_datetime(when)}, before the orders already "
                f"accepted (dated {format_datetime(datetime.fromisoformat(previous['date']))}), "
                "which stand"
            )
            body = (
                f"Your message of {format_datetime(when)} was not used: {reason}.\n\n"
                "The latest orders by the Date of the message count. To change your orders, "
                "send them again.\n"
            )
            reply = self.answer(msg, mid, f"[{self.game.name}] not used: older orders", body)
            return Incoming(mid, frm, Verdict.IGNORED, player, (reason,), reply)
        replaced = _store_orders(self.game.path, player, text)
        self.seen["accepted"][key] = {"date": when.isoformat(), "message_id": mid}
        lines = processor.forecast(state, submission.orders)
        body = f"Your orders for turn {state.turn} of {self.game.name} are accepted.\n"
        if previous is not None:
            replaced_date = format_datetime(datetime.fromisoformat(previous["date"]))
            body += f"They replace the orders you sent on {replaced_date}.\n"
        body += "\nWhat they will do:\n" + "".join(f"  {line}\n" for line in lines)
        body += (
            "\nUntil the turn is resolved you may send new orders: the latest message "
            "(by its Date) counts.\n"
        )
        reply = self.answer(
            msg, mid, f"[{self.game.name}] accepted: your orders for turn {state.turn}", body
        )
        reasons = (f"replaced the orders of {previous['date']} ({replaced})",) if replaced else ()
        return Incoming(mid, frm, Verdict.ACCEPTED, player, reasons, reply)

    def reject(
        self,
        msg: EmailMessage,
        mid: str,
        player: str | None,
        reasons: Sequence[str],
        text: str | None = None,
    ) -> Incoming:
        frm = _address(msg.get("From"))
        if player is None:  # known by the address alone: say whether earlier orders stand
            player = next(
                (
                    r.name
                    for r in self.game.registrations
                    if _address(r.email).lower() == frm.lower() and frm
                ),
                None,
            )
        subject = str(msg.get("Subject", "")).strip()
        about = f' "{subject}"' if subject else ""
        body = f"Your message{about} was not accepted:\n\n"
        body += "".join(f"  {r}\n" for r in reasons)
        if text is not None:
            body += "\nThe orders as read from your message:\n\n"
            body += "".join(f"  {n:3} | {line}\n" for n, line in enumerate(text.splitlines(), 1))
        key = f"{self.game.state.resolution}/{player}"
        if player is not None and key in self.seen["accepted"]:
            body += "\nNothing from this message was used: your orders accepted earlier stand.\n"
        else:
            body += "\nNothing from this message was used. Correct it and send it again.\n"
        reply = self.answer(msg, mid, f"[{self.game.name}] rejected: your orders", body)
        return Incoming(mid, frm, Verdict.REJECTED, player, tuple(reasons), reply)

    def answer(self, msg: EmailMessage, mid: str, subject: str, body: str) -> str:
        to = _address(msg.get("Reply-To")) or _address(msg.get("From"))
        digest = hashlib.sha256(mid.encode()).hexdigest()[:16]
        out = _outgoing(self.sender, to, subject, self.game.name, "auto-replied")
        out["Message-ID"] = f"<pbem.{_slug(self.game.name)}.reply.{digest}@{_domain(self.sender)}>"
        out["In-Reply-To"] = mid
        references = " ".join(str(msg.get("References", "")).split())
        out["References"] = f"{references} {mid}".strip()
        out.set_content(body, cte="quoted-printable")
        name = f"reply-{digest}.eml"
        _write_eml(self.game.path, name, out)
        return name

    def tell_moderator(
        self, msg: EmailMessage, mid: str, player: str, frm: str, registered: str
    ) -> str:
        digest = hashlib.sha256(mid.encode()).hexdigest()[:16]
        subject = f"[{self.game.name}] orders for {player} from an unregistered address"
        out = _outgoing(self.sender, self.sender, subject, self.game.name, "auto-generated")
        out["Message-ID"] = f"<pbem.{_slug(self.game.name)}.note.{digest}@{_domain(self.sender)}>"
        out.set_content(
            f"A message from {frm} carried orders for {player}, whose registered address is "
            f"{registered or '(none)'}.\nIt was rejected and its sender told so.\n\n"
            f"Message-ID: {mid}\nDate: {msg.get('Date', '(none)')}\n"
            f"Subject: {msg.get('Subject', '(none)')}\n"
        )
        name = f"note-{digest}.eml"
        _write_eml(self.game.path, name, out)
        return name


def _store_orders(directory: Path, player: str, text: str) -> str | None:
    """Write orders/<player>.toml; an earlier file there is kept in orders/replaced/."""
    target = directory / "orders" / f"{player}.toml"
    moved: str | None = None
    if target.exists():
        if target.read_text(encoding="utf-8") == text:
            return None  # the same orders again (a run repeated after a stop)
        folder = target.parent / REPLACED
        folder.mkdir(parents=True, exist_ok=True)
        n = 1
        while (folder / f"{player}-{n}.toml").exists():
            n += 1
        os.replace(target, folder / f"{player}-{n}.toml")
        moved = f"orders/{REPLACED}/{player}-{n}.toml"
    atomic_write(target, text)
    return moved


def _outgoing(sender: str, to: str, subject: str, game: str, auto: str) -> EmailMessage:
    out = EmailMessage()
    out["From"] = sender
    out["To"] = to
    out["Subject"] = subject
    out["Date"] = formatdate(usegmt=True)
    out["Auto-Submitted"] = auto
    out[LOOP_HEADER] = game
    return out


# ---------------------------------------------------------------------------------------------
# Reports out


def report_subject(view: dict[str, Any] | None, player: str, resolution: int) -> str:
    """`turn 13: your move`, or what else the report is (game over, out of the game)."""
    if view is None:
        return f"report after resolution {resolution}"
    if view.get("phase") == "over":
        return f"game over: {view.get('winner')} won"
    me: dict[str, Any] = next((p for p in view.get("players", []) if p.get("name") == player), {})
    if not me.get("alive", True):
        return "report: you are out of the game"
    if player in view.get("awaiting", []):
        return f"turn {view.get('turn')}: your move"
    return f"turn {view.get('turn')}: report"


def build_report(
    game: Game, resolution: int, player: str, sender: str, bcc: str | None = None
) -> EmailMessage | None:
    """One player's report after a resolution as a message: the text report and its HTML
    alternative, the next order file and the view as attachments. None without a report."""
    folder = report_dir(game.path, resolution)
    text_path = folder / f"{player}.txt"
    reg = game.registration(player)
    if reg is None or not text_path.exists():
        return None
    text = text_path.read_text(encoding="utf-8")
    html_path = folder / f"{player}.html"
    page = (
        html_path.read_text(encoding="utf-8")
        if html_path.exists()
        else f"<!doctype html>\n<html><body><pre>{html.escape(text)}</pre></body></html>\n"
    )
    view_path = folder / f"{player}.view.json"
    view_bytes = view_path.read_bytes() if view_path.exists() else None
    view = json.loads(view_bytes) if view_bytes else None
    orders_path = folder / f"{player}.orders.toml"
    orders = orders_path.read_text(encoding="utf-8") if orders_path.exists() else None
    state = game.state
    latest = resolution == state.resolution - 1
    if orders is None and latest and state.phase is not Phase.OVER and state.player(player).alive:
        orders = report.order_skeleton(state, player, reg.secret)

    msg = _outgoing(
        sender,
        reg.email,
        f"[{game.name}] {report_subject(view, player, resolution)}",
        game.name,
        "auto-generated",
    )
    if bcc:
        msg["Bcc"] = bcc
    msg["Reply-To"] = sender
    msg["Message-ID"] = (
        f"<pbem.{_slug(game.name)}.r{resolution:04d}{_remade(game, resolution)}.{player}"
        f"@{_domain(sender)}>"
    )
    msg.set_content(text, cte="quoted-printable")
    msg.add_alternative(page, subtype="html", cte="quoted-printable")
    if orders is not None:
        msg.add_attachment(
            orders, subtype="plain", filename=f"{player}.orders.toml", cte="quoted-printable"
        )
    if view_bytes is not None:
        msg.add_attachment(
            view_bytes, maintype="application", subtype="json", filename=f"{player}.view.json"
        )
    return msg


@dataclass(frozen=True)
class SmtpServer:
    """Where and how to send: host, port, STARTTLS, login (the password asked for only when
    the connection is made)."""

    host: str
    port: int = 25
    starttls: bool = False
    user: str | None = None
    password: Callable[[], str | None] = field(default=lambda: None, compare=False)
    tls_context: ssl.SSLContext | None = field(default=None, compare=False)
    timeout: float = 30.0

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def smtp_server(
    spec: str,
    starttls: bool = False,
    user: str | None = None,
    ask: Callable[[], str] | None = None,
) -> SmtpServer:
    """`HOST:PORT` (port 25 when left out) into a server; the password comes from the
    PBEM_SMTP_PASSWORD environment variable, or else `ask()` (a prompt), never an argument."""
    host, colon, port_text = spec.strip().rpartition(":")
    if not colon:
        host, port_text = port_text, "25"
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise PbemError(f"--smtp must be HOST:PORT, e.g. smtp.example.org:587; got '{spec}'")

    def password() -> str | None:
        if user is None:
            return None
        value = os.environ.get(PASSWORD_ENV)
        if value is None and ask is not None:
            value = ask()
        return value

    return SmtpServer(host, int(port_text), starttls, user, password)


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
        verb = "would write" if self.dry_run else "wrote"
        out = [f"{verb} {OUTBOX}/{name}" for name in self.built]
        out += [f"sent {line}" for line in self.delivered]
        out += [f"failed: {line}" for line in self.failed]
        out += self.notes
        if self.pending:
            waiting = "would wait" if self.dry_run else "wait"
            out.append(
                f"{len(self.pending)} messages {waiting} in {OUTBOX}/: " + ", ".join(self.pending)
            )
        elif not self.built and not self.delivered:
            out.append("nothing to send")
        return out


def send_mail(
    directory: Path,
    sender: str = DEFAULT_FROM,
    server: SmtpServer | None = None,
    bcc: str | None = None,
    dry_run: bool = False,
) -> SendResult:
    """Build a message for each player's report not yet built into the outbox; with a
    server, deliver everything waiting in the outbox (replies too), each address once."""
    result = SendResult(dry_run=dry_run)
    with locked(directory):
        game = read_game(directory)
        sent = _sent(directory)
        for resolution in range(history_count(directory)):
            for reg in game.registrations:
                key = f"{resolution:04d}/{reg.name}"
                if key in sent["reports"]:
                    continue
                if not (report_dir(directory, resolution) / f"{reg.name}.txt").exists():
                    continue
                if not _address(reg.email):
                    result.notes.append(f"{reg.name} has no address: report {key} not mailed")
                    continue
                name = f"r{resolution:04d}-{reg.name}.eml"
                if not dry_run:
                    msg = build_report(game, resolution, reg.name, sender, bcc)
                    assert msg is not None
                    _write_eml(directory, name, msg)
                    sent["reports"].append(key)
                    _save(directory / MAIL / SENT, sent)
                result.built.append(name)
        pending = _pending(directory)
        result.pending = [p.name for p in pending]
        if dry_run:
            result.pending += result.built
        if server is None or dry_run or not pending:
            return result
        _deliver(directory, server, sent, pending, result)
        result.pending = [p.name for p in _pending(directory)]
    return result


def _pending(directory: Path) -> list[Path]:
    folder = directory / OUTBOX
    return sorted(p for p in folder.glob("*.eml") if p.is_file()) if folder.is_dir() else []


def _recipients(msg: Message) -> list[str]:
    values = [str(v) for h in ("To", "Cc", "Bcc") for v in msg.get_all(h, [])]
    out: list[str] = []
    for _, address in getaddresses(values):
        if address and address not in out:
            out.append(address)
    return out


def _connect(server: SmtpServer) -> smtplib.SMTP:
    password = server.password() if server.user is not None else None
    if server.user is not None and password is None:
        raise PbemError(f"no SMTP password for {server.user}: set {PASSWORD_ENV}")
    client = smtplib.SMTP(server.host, server.port, timeout=server.timeout)
    try:
        if server.starttls:
            client.ehlo()
            client.starttls(context=server.tls_context or ssl.create_default_context())
            client.ehlo()
        if server.user is not None and password is not None:
            client.login(server.user, password)
    except BaseException:
        with contextlib.suppress(Exception):
            client.close()
        raise
    return client


def _deliver(
    directory: Path,
    server: SmtpServer,
    sent: dict[str, Any],
    pending: Sequence[Path],
    result: SendResult,
) -> None:
    try:
        client = _connect(server)
    except (OSError, smtplib.SMTPException) as err:
        result.failed.append(
            f"cannot connect to {server}: {err or type(err).__name__}; "
            "nothing was sent, run 'pbem mail send' again later"
        )
        return
    try:
        for path in pending:
            record = sent["messages"].setdefault(path.name, {"delivered": [], "refused": {}})
            msg = parse_message(path.read_bytes())
            record["message_id"] = str(msg.get("Message-ID", ""))
            todo = [a for a in _recipients(msg) if a not in record["delivered"]]
            if todo:
                try:
                    refused = _send_one(client, msg, todo)
                except (OSError, smtplib.SMTPServerDisconnected) as err:
                    result.failed.append(
                        f"{path.name}: not sent, the connection to {server} was lost ({err}); "
                        "it and the rest wait for the next 'pbem mail send'"
                    )
                    return
                except smtplib.SMTPException as err:
                    result.failed.append(f"{path.name}: {_smtp_reason(err)}")
                    continue
                for address in todo:
                    if address in refused:
                        record["refused"][address] = refused[address]
                        result.failed.append(f"{path.name}: {address} refused: {refused[address]}")
                    else:
                        record["delivered"].append(address)
                        record["refused"].pop(address, None)
                        result.delivered.append(f"{path.name} to {address}")
                _save(directory / MAIL / SENT, sent)
            if all(a in record["delivered"] for a in _recipients(msg)):
                done = directory / OUTBOX / SENT_FOLDER
                done.mkdir(parents=True, exist_ok=True)
                os.replace(path, done / path.name)
    finally:
        with contextlib.suppress(OSError, smtplib.SMTPException):
            client.quit()


def _send_one(client: smtplib.SMTP, msg: EmailMessage, to: list[str]) -> dict[str, str]:
    """Send to `to`; the addresses refused, with the server's reason."""
    envelope_from = _address(msg.get("From"))
    try:
        refused = client.send_message(msg, from_addr=envelope_from, to_addrs=to)
    except smtplib.SMTPRecipientsRefused as err:
        refused = err.recipients
    return {a: _reply_text(code, text) for a, (code, text) in refused.items()}


def _reply_text(code: int, text: bytes | str) -> str:
    words = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return f"{code} {words}"


def _smtp_reason(err: smtplib.SMTPException) -> str:
    if isinstance(err, smtplib.SMTPResponseException):
        return f"the server answered {_reply_text(err.smtp_code, err.smtp_error)}"
    return str(err) or type(err).__name__


def _remade(game: Game, resolution: int) -> str:
    """`.a2` for a resolution made again after its first was undone (a new Message-ID)."""
    again = sum(1 for u in undo_records(game.path) if u.resolution == resolution)
    return f".a{again + 1}" if again else ""


def withdraw_reports(directory: Path, resolution: int, into: Path) -> None:
    """An undone resolution's reports: the messages built for them and not yet sent move from
    outbox/ to `into`, and they count as not mailed, so the reports of the resolution made
    again in its place are mailed. Safe to run again."""
    prefix = f"r{resolution:04d}-"
    for path in _pending(directory):
        if path.name.startswith(prefix):
            atomic_write(into / path.name, path.read_bytes())
            path.unlink()
    path = directory / MAIL / SENT
    if path.exists():
        sent = _sent(directory)
        keep = [k for k in sent["reports"] if not str(k).startswith(f"{resolution:04d}/")]
        if keep != sent["reports"]:
            sent["reports"] = keep
            _save(path, sent)
