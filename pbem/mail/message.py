"""Reading one incoming message: who sent it, what kind of message it is, the orders in it.

A message may come from anyone and hold anything, so it is read once, defensively, into a
`Letter` of plain values; nothing later touches the raw message again. `read_letter` never
raises: what cannot be read becomes a `problem` (or `sender_problem`) the fetch acts on.

Headers are read as the raw text the message carries (the standard library's older, lenient
`compat32` parser), and addresses with `email.utils.getaddresses` plus a strict check, because
the newer header parser raises on malformed values (`From: <`) and reads
`alice@example.org <bob@evil.example>` as alice.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email import errors as email_errors
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from typing import cast

from pbem.core.orders import between_cuts
from pbem.errors import PbemError
from pbem.game.safety import ORDER_FILE_LIMIT
from pbem.mail.machine import automatic

MAX_ORDERS_BYTES = ORDER_FILE_LIMIT
"""The largest order file taken, attached or in a message's text."""
MAX_DEPTH = 20
"""How deep MIME parts may nest before a message is refused as unreadable."""

_PARSER = BytesParser(policy=policy.compat32)
_GAME_LINE = re.compile(r"^\s*game\s*=")
_ORIGINAL = re.compile(r"^\s*(-{3,}\s*original message\s*-{3,}|_{10,})\s*$", re.IGNORECASE)
_TOML_CHARS = re.compile(r"[=\[\]\"'#{}]")
_TOML_TYPES = ("application/toml", "text/toml", "text/x-toml", "application/x-toml")
_MESSAGE_ID = re.compile(r"<[!-;=?-~]{1,250}@[!-;=?-~]{1,250}>")
_ADDRESS = re.compile(r"^[^@\s<>()\[\]\\,;:\"]+@[^@\s<>()\[\]\\,;:\"]+$")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_COMMENT = re.compile(r"\([^()]*\)")


class NoOrders(PbemError):
    """A message in which no order file can be found; says why."""


@dataclass(frozen=True)
class Letter:
    """One incoming message as pbem reads it. Text from the message is as written (print it
    through `printable`); a value that cannot be read is None, with the reason beside it."""

    message_id: str
    """The Message-ID as written (the key it is recorded under), or one made from its bytes."""
    digest: str
    """What the message says (sender, date, subject, body), to tell a resent copy from a new
    message that reuses a Message-ID."""
    sender: str | None
    sender_problem: str | None
    subject: str
    date: datetime | None
    thread_id: str | None
    """The Message-ID if it is well formed (answers refer to it), else None."""
    references: tuple[str, ...]
    machine: str | None
    """Why it was sent by a machine (and must not be answered), or None."""
    orders: str | None
    problem: str | None
    """Why no orders can be taken from it (none found, unreadable), or None."""


def read_letter(raw: bytes) -> Letter:
    """Read a message from its bytes; never raises."""
    headers = _headers(_PARSER.parsebytes(raw, headersonly=True))
    sender, sender_problem = sender_address(headers.get("from", []))
    first = headers.get("message-id", [""])[0].strip()
    match = _MESSAGE_ID.fullmatch(first)
    orders: str | None = None
    problem: str | None = None
    try:
        orders = find_orders(_PARSER.parsebytes(raw))
    except NoOrders as err:
        problem = str(err)
    except RecursionError:
        problem = f"its MIME parts are nested too deep to read (more than {MAX_DEPTH} levels)"
    except Exception as err:  # noqa: BLE001 (what a stranger sends must never stop a fetch)
        problem = f"pbem cannot read its MIME structure ({type(err).__name__}: {err})"[:300]
    return Letter(
        message_id=first[:500] or f"<{hashlib.sha256(raw).hexdigest()[:32]}@pbem.invalid>",
        digest=_digest(headers, raw),
        sender=sender,
        sender_problem=sender_problem,
        subject=_subject(headers.get("subject", [""])[0])[:300],
        date=_date(headers.get("date", [""])[0]),
        thread_id=match.group() if match else None,
        references=tuple(_MESSAGE_ID.findall(" ".join(headers.get("references", []))))[-20:],
        machine=automatic(headers),
        orders=orders,
        problem=problem,
    )


def _headers(msg: Message) -> dict[str, list[str]]:
    """Every header by lower-case name: unfolded text, bytes outside ASCII read as UTF-8."""
    out: dict[str, list[str]] = {}
    for name, value in msg.raw_items():  # as written: items() decodes 8-bit text away
        text = str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        text = re.sub(r"\r?\n(?=[ \t])", "", text).replace("\r", " ").replace("\n", " ")
        out.setdefault(str(name).strip().lower(), []).append(text)
    return out


def sender_address(values: Sequence[str]) -> tuple[str | None, str | None]:
    """The one address in the From header(s), or None and why it cannot be told."""
    if not values or not "".join(values).strip():
        return None, "it has no From address"
    if len(values) > 1:
        return None, "it has more than one From header"
    try:
        pairs = getaddresses([values[0]])
    except (ValueError, IndexError, TypeError, AttributeError):  # older Pythons' parser
        pairs = []
    bare = _COMMENT.sub("", _QUOTED.sub("", values[0]))
    if len(pairs) != 1 or not _ADDRESS.match(pairs[0][1]) or bare.count("@") != 1 or "," in bare:
        return None, f"its From header is not one readable address: {values[0][:200]}"
    return pairs[0][1], None


def addresses_match(a: str, b: str) -> bool:
    return bool(a) and a.strip().lower() == b.strip().lower()


def _subject(value: str) -> str:
    try:
        return str(make_header(decode_header(value))).strip()
    except (email_errors.MessageError, ValueError, LookupError, UnicodeError):
        return value.strip()


def _date(value: str) -> datetime | None:
    if not value.strip():
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _digest(headers: Mapping[str, list[str]], raw: bytes) -> str:
    """A hash of what a person wrote; ignores what mail systems add on the way (trace headers,
    line endings, mbox quoting), so two deliveries of one message hash the same."""
    split = re.search(rb"\r?\n\r?\n", raw)
    body = raw[split.end() :] if split else b""
    body = re.sub(rb"[ \t]*\r?\n", b"\n", body)
    body = re.sub(rb"(?m)^>(>*From )", rb"\1", body)
    digest = hashlib.sha256()
    for name in ("from", "date", "subject"):
        digest.update(" ".join(headers.get(name, [])).strip().encode() + b"\0")
    digest.update(body.rstrip())
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# The orders in a message


def orders_from_body(body: str) -> str | None:
    """The TOML in a message's text: from the first `game =` line to the end, leaving out
    quoted lines (and the "... wrote:" line before them), the signature and anything after
    an "Original Message" separator, and trailing lines that cannot be TOML ("Thanks, Bob");
    in a whole report sent back, only what is between pbem's cut lines."""
    body = between_cuts(body.replace("\r\n", "\n").replace("\r", "\n"))
    lines = body.replace("\xa0", " ").split("\n")
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


def _leaves(msg: Message) -> Iterator[Message]:
    """The leaf parts of a message in order, not descending into attached messages; refuses
    parts nested deeper than MAX_DEPTH."""
    stack: list[tuple[Message, int]] = [(msg, 0)]
    while stack:
        part, depth = stack.pop()
        if not part.is_multipart():
            yield part
            continue
        if part.get_content_maintype() == "message":
            continue
        if depth >= MAX_DEPTH:
            raise NoOrders(f"its MIME parts are nested more than {MAX_DEPTH} levels deep")
        subparts = [p for p in cast(list[object], part.get_payload()) if isinstance(p, Message)]
        stack.extend((p, depth + 1) for p in reversed(subparts))


def _filename(part: Message) -> str:
    return str(part.get_filename() or "").strip()


def _is_order_file(part: Message) -> bool:
    return _filename(part).lower().endswith(".toml") or part.get_content_type() in _TOML_TYPES


def _decoded(part: Message, what: str) -> str:
    data = part.get_payload(decode=True)
    raw = data if isinstance(data, bytes) else b""
    if len(raw) > MAX_ORDERS_BYTES:
        raise NoOrders(
            f"{what} is {len(raw)} bytes; an order file may be at most "
            f"{MAX_ORDERS_BYTES // 1024} KiB"
        )
    charset = str(part.get_content_charset() or "utf-8")
    try:
        return raw.decode("utf-8-sig" if charset.lower() in ("utf-8", "utf8") else charset)
    except (LookupError, UnicodeError, ValueError):
        raise NoOrders(f"{what} is not text in {charset[:40]}: save it as UTF-8") from None


def find_orders(msg: Message) -> str:
    """The order file in a message: a .toml attachment, or else the TOML in its text."""
    leaves = list(_leaves(msg))
    attached = [p for p in leaves if _is_order_file(p)]
    if len(attached) > 1:
        names = ", ".join(_filename(p) or "(unnamed)" for p in attached[:5])
        raise NoOrders(f"{len(attached)} order files are attached ({names}): attach only one")
    if attached:
        name = _filename(attached[0]) or "the attached order file"
        return _decoded(attached[0], f"the attachment {name}")
    texts = [p for p in leaves if p.get_content_maintype() == "text" and not _attachment(p)]
    plain = next((p for p in texts if p.get_content_subtype() == "plain"), None)
    if plain is None:
        if any(p.get_content_subtype() == "html" for p in texts):
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


def _attachment(part: Message) -> bool:
    return str(part.get("Content-Disposition", "")).split(";")[0].strip().lower() == "attachment"
