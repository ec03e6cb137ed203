"""The order files in a message: every place one may be, and which of them the player meant.

A message is read into candidates before anything is decided. Each says where it was found:
in the text the player wrote, in a file attached to the message, in the quoted part (or the
original below a reply's separator), or inside a message attached to this one. `choose` then
takes the player's own orders over quoted ones, never lets the ready order file that pbem
mailed (the template) win over orders the player wrote, and refuses, naming both, when two
different sets of orders remain: a wrong guess would play a turn the player did not send.

What the mail program did to the text is undone first (`pbem.mail.text`), and each candidate
records what was changed, so that the answer can say so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from email.header import decode_header, make_header
from email.message import Message
from enum import Enum
from typing import Any, cast

import tomli

from pbem.core.order_parsing import between_cuts
from pbem.errors import Problem
from pbem.files import ORDER_FILE_LIMIT
from pbem.mail import quoting, text

MAX_DEPTH = 20
"""How deep MIME parts may nest before a message is refused as unreadable."""
MAX_FILES = 20
"""Attachments looked at in one message; the rest are not read."""
MAX_TEXT_CHARS = 1_000_000
"""The most text of one message read for orders (a report quoted whole is some 20,000)."""

_GAME_LINE = re.compile(r"^\s*game\s*=", re.MULTILINE)
_TOML_TYPES = ("application/toml", "text/toml", "text/x-toml", "application/x-toml")
# A line an order file may hold: blank, a comment, a table, `key = ...` (bare, quoted or
# dotted key), or the continuation of a list or inline table written over several lines.
_TOML_LINE = re.compile(
    r"""^\s*(?:$|\#|\[|\]|\{|\}|,|"|'|-?\d
    |[A-Za-z0-9_-]+(?:\s*\.\s*[A-Za-z0-9_-]+)*\s*=(?!=)
    |"[^"\n]*"\s*=)""",
    re.VERBOSE,
)
# A line that gives an order, or tries to ("stop_at: 15", "Stop at 15", "move 2"): what must
# never be dropped as a sign-off, nor with the text after an order file.
_KEYS = r"(territory|armies|from|to|trade|draft|dice|stop[ _-]?at|move|place|attack|fortify)"
_ORDER_LINE = re.compile(
    rf"^\s*(\[\[?\s*(place|attack|fortify|draft)\s*\]\]?|{_KEYS}\s*[:=]|{_KEYS}\s+[\"'\d])",
    re.IGNORECASE,
)
_NOT_ORDERS = re.compile(r"\.(json|html?|pyz|zip|png|jpe?g|gif|pdf|docx?|xlsx?|ics|vcf)$", re.I)


class Where(Enum):
    """Where in a message an order file was found, from most to least the player's own."""

    TEXT = "text"
    FILE = "file"
    QUOTE = "quote"
    ATTACHED = "attached"

    @property
    def own(self) -> bool:
        """Whether the player wrote it into this message (not quoted, not passed on)."""
        return self in (Where.TEXT, Where.FILE)


class Fix(Enum):
    """A change a mail program made to the orders, taken back."""

    QUOTES = "quotes"
    """Curly quotes (and other typographic replacements) made straight."""
    WRAPPED = "wrapped"
    """A line the mail program wrapped, joined again."""


@dataclass(frozen=True)
class Found:
    """One order file found in a message."""

    text: str
    where: Where
    name: str = ""
    """The attached file's name, or the subject of the attached message it was in."""
    fixes: frozenset[Fix] = frozenset()
    in_report: bool = False
    """Read between pbem's cut lines: a report was around it."""

    def data(self) -> dict[str, Any] | None:
        """The file's TOML as data, or None: read once (a Found never changes; its data is
        only compared), by the helper that reads a fetch's messages ahead when there is one
        (pbem.mail.ahead)."""
        try:
            data: dict[str, Any] | None = self.__dict__["_data"]
        except KeyError:
            data = toml_data(self.text)
            object.__setattr__(self, "_data", data)
        return data


@dataclass
class Reading:
    """Everything a message holds that bears on orders."""

    found: list[Found] = field(default_factory=list)
    troubles: list[Problem] = field(default_factory=list)
    """What could not be read (a file too big, not in its charset, a winmail.dat)."""
    encrypted: bool = False
    forward: bool = False
    texts: int = 0
    """How many text parts were read."""
    own_words: str = ""
    """The player's own text, without quotes (for the moderator, and a resend request)."""


@dataclass(frozen=True)
class Choice:
    """Which orders of a message are taken, or why none are: exactly one of `found`,
    `ambiguous`, `only_ready` and `problem` is set."""

    found: Found | None = None
    ready: str | None = None
    """When the orders chosen are a ready order file pbem mailed, unchanged: which one."""
    ambiguous: tuple[Found, Found] | None = None
    """Two different sets of orders, neither more the player's than the other."""
    only_ready: tuple[Found, str] | None = None
    """The only orders are a ready file (which one) quoted, passed on or in a report."""
    problem: Problem | None = None


def toml_data(orders: str) -> dict[str, Any] | None:
    """An order file's TOML as data, or None when it is not valid TOML."""
    try:
        return tomli.loads(orders.removeprefix("\ufeff"))
    except (tomli.TOMLDecodeError, RecursionError, ValueError, TypeError):
        return None


# -- reading a message ----------------------------------------------------------------------


def read(msg: Message) -> Reading:
    """Every order file in a message (raises RecursionError past MAX_DEPTH)."""
    out = Reading()
    _Reader(out).message(msg, 0)
    return out


@dataclass
class _Piece:
    """The text of one text part (an HTML part already as text) and its HTML twin's."""

    text: str
    twin: str | None = None


class _Reader:
    def __init__(self, out: Reading) -> None:
        self.out = out
        self.pieces: list[_Piece] = []
        self.files = 0

    def message(self, msg: Message, depth: int) -> None:
        self.walk(msg, depth)
        self.body()

    def walk(self, part: Message, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise RecursionError("nested too deep")
        ctype = part.get_content_type()
        if _is_encrypted(part):
            self.out.encrypted = True
            return
        if part.get_content_maintype() == "message":
            self.attached(part, depth)
            return
        if part.is_multipart():
            subs = _subparts(part)
            if ctype == "multipart/alternative":
                self.alternative(subs, depth)
            elif ctype == "multipart/signed":
                if subs:
                    self.walk(subs[0], depth + 1)
            else:
                for sub in subs:
                    self.walk(sub, depth + 1)
            return
        name = filename(part)
        if ctype == "application/ms-tnef" or name.lower() == "winmail.dat":
            self.winmail(part, name or "winmail.dat")
        elif name or _disposition(part) == "attachment":
            self.file(part, name)
        elif ctype == "text/plain":
            self.pieces.append(_Piece(self.plain(part)))
        elif ctype == "text/html":
            self.pieces.append(_Piece(self.html(part)))

    def alternative(self, subs: Sequence[Message], depth: int) -> None:
        """A text and its HTML version: the text is read, the HTML kept beside it to rejoin
        lines the text part had wrapped; an HTML version alone is read as text; files inside
        either (an HTML part's related pictures, a file a program put there) are read too.
        Without either, each version is read as it is."""
        plain = next((p for p in subs if p.get_content_type() == "text/plain"), None)
        rich = [p for p in subs if p is not plain]
        page = next((p for p in _leaves(rich, depth) if p.get_content_type() == "text/html"), None)
        if plain is None and page is None:
            for sub in subs:
                self.walk(sub, depth + 1)
            return
        if plain is not None:
            self.pieces.append(_Piece(self.plain(plain), self.html(page) if page else None))
        elif page is not None:
            self.pieces.append(_Piece(self.html(page)))
        for leaf in _leaves(rich, depth):
            if leaf is not page and (filename(leaf) or _disposition(leaf) == "attachment"):
                self.walk(leaf, depth + 1)

    def plain(self, part: Message) -> str:
        decoded = self.decoded(part)
        if decoded is None:
            return ""
        self.out.texts += 1
        if (part.get_param("format") or "").__str__().lower() == "flowed":
            delsp = str(part.get_param("delsp") or "").lower() == "yes"
            return text.unflow(decoded, delsp)
        return decoded

    def html(self, part: Message) -> str:
        decoded = self.decoded(part)
        if decoded is None:
            return ""
        self.out.texts += 1
        return text.html_text(decoded)

    def decoded(self, part: Message) -> str | None:
        raw = _payload(part)
        if len(raw) > MAX_TEXT_CHARS:
            return None
        decoded, _ = text.decode(raw, part.get_content_charset())
        if decoded is None:  # not text in any charset: read what is ASCII in it
            decoded = raw.decode("utf-8", "replace")
        return decoded

    def file(self, part: Message, name: str) -> None:
        lower = name.lower()
        ctype = part.get_content_type()
        named = lower.endswith((".toml", ".toml.txt")) or ctype in _TOML_TYPES
        texty = part.get_content_maintype() == "text" or ctype == "application/octet-stream"
        if not named and (_NOT_ORDERS.search(lower) or not texty or ctype == "text/html"):
            return
        self.files += 1
        if self.files > MAX_FILES:
            return
        raw = _payload(part)
        if len(raw) > ORDER_FILE_LIMIT:
            if named:
                size, limit = len(raw), ORDER_FILE_LIMIT // 1024
                self.out.troubles.append(
                    Problem.of(
                        "the attachment %(name)s is %(size)s bytes; an order file may be at "
                        "most %(limit)s KiB",
                        name=name,
                        size=size,
                        limit=limit,
                    )
                    if name
                    else Problem.of(
                        "the attached order file is %(size)s bytes; an order file may be at "
                        "most %(limit)s KiB",
                        size=size,
                        limit=limit,
                    )
                )
            return
        decoded, charset = text.decode(raw, part.get_content_charset())
        if decoded is None:
            if named:
                self.out.troubles.append(
                    Problem.of(
                        "the attachment %(name)s is not text in %(charset)s: save it as UTF-8",
                        name=name,
                        charset=charset[:40],
                    )
                    if name
                    else Problem.of(
                        "the attached order file is not text in %(charset)s: save it as UTF-8",
                        charset=charset[:40],
                    )
                )
            return
        self.add_file(decoded, name, named)

    def add_file(self, content: str, name: str, named: bool) -> None:
        content = text.plain_spaces(content)
        if not named and not _GAME_LINE.search(content):
            return
        orders, fixes = repaired(content)
        self.out.found.append(Found(orders, Where.FILE, name, fixes))

    def winmail(self, part: Message, name: str) -> None:
        from pbem.mail import tnef  # the reader of winmail.dat, loaded only when one comes

        read_out = tnef.read_tnef(_payload(part))
        if read_out.problem is not None:
            self.out.troubles.append(
                Problem.of(
                    "your mail program (Outlook) sent the message as Rich Text, in an "
                    "attachment %(name)s that pbem cannot read: send it as plain text (in "
                    "Outlook: Format Text, Plain Text), or attach the .toml order file",
                    name=name,
                )
            )
            return
        for inner, data in read_out.files[:MAX_FILES]:
            decoded, _ = text.decode(data, "utf-8")
            lower = inner.lower()
            if decoded is not None and not _NOT_ORDERS.search(lower):
                self.add_file(decoded, inner, lower.endswith((".toml", ".toml.txt")))
        body = read_out.text
        if read_out.html is not None and (body is None or not _GAME_LINE.search(body)):
            body = text.html_text(read_out.html)
        if body:
            self.out.texts += 1
            self.pieces.append(_Piece(body))

    def attached(self, part: Message, depth: int) -> None:
        """A message attached to this one (a forward as attachment): its orders count as
        passed on, whatever their place in it."""
        inner = next(iter(_subparts(part)), None)
        if inner is None:
            return
        nested = Reading()
        _Reader(nested).message(inner, depth + 1)
        subject = _decoded_header(str(inner.get("Subject", "")))[:100]
        for found in nested.found:  # what that message itself quoted is not passed on
            if found.where.own:
                self.out.found.append(replace(found, where=Where.ATTACHED, name=subject))
        self.out.encrypted = self.out.encrypted or nested.encrypted

    def body(self) -> None:
        """The candidates in the message's text: the player's own lines, then the quoted."""
        if not self.pieces:
            return
        plain = "\n".join(p.text for p in self.pieces)
        twins = [p.twin for p in self.pieces]
        twin = "\n".join(t for t in twins if t is not None) if all(twins) else None
        own, quoted, forward = _split(plain)
        self.out.forward = self.out.forward or forward
        self.out.own_words = own[:20_000]
        mine = orders_in(own)
        if twin is not None:
            twin_own, _, _ = _split(twin)
            mine = _rejoined_by(mine, orders_in(twin_own))
        if mine is not None and self.small(mine[0]):
            orders, fixes = repaired(mine[0], mine[2])
            self.out.found.insert(0, Found(orders, Where.TEXT, fixes=fixes, in_report=mine[1]))
        theirs = orders_in(quoted)
        if theirs is not None and self.small(theirs[0]):
            orders, fixes = repaired(theirs[0], theirs[2])
            self.out.found.append(Found(orders, Where.QUOTE, fixes=fixes, in_report=theirs[1]))

    def small(self, orders: str) -> bool:
        """Whether orders found in a text are within the size of an order file (else the
        reason is kept: they would be accepted by mail and refused by the turn)."""
        size = len(orders.encode("utf-8", "replace"))
        if size <= ORDER_FILE_LIMIT:
            return True
        self.out.troubles.append(
            Problem.of(
                "the orders in your message are %(size)s bytes; an order file may be at most "
                "%(limit)s KiB",
                size=size,
                limit=ORDER_FILE_LIMIT // 1024,
            )
        )
        return False


def _split(body: str) -> tuple[str, str, bool]:
    body, _ = text.unsigned(text.plain_spaces(body))
    parts = quoting.split(body)
    return parts.own, parts.quoted, parts.forward


def _rejoined_by(
    plain: tuple[str, bool, frozenset[Fix]] | None, html: tuple[str, bool, frozenset[Fix]] | None
) -> tuple[str, bool, frozenset[Fix]] | None:
    """The orders of a text part, or its HTML twin's where the text part wrapped a line that
    the HTML has whole (Gmail wraps its text part at 78 columns): the two say the same words,
    but only the HTML's are TOML."""
    if html is None:
        return plain
    if plain is None:
        return html
    if toml_data(plain[0]) is not None or toml_data(html[0]) is None:
        return plain
    if " ".join(plain[0].split()) == " ".join(html[0].split()):
        return html[0], html[1], html[2] | {Fix.WRAPPED}
    return plain


def orders_in(body: str) -> tuple[str, bool, frozenset[Fix]] | None:
    """The order file in a text: from the first `game =` line, less the lines after it that
    cannot be TOML (a sign-off: "Let's see how it goes!", "=)", "Sent from my phone"); in a
    whole report sent back, only what is between pbem's cut lines. The orders end at the first
    line that cannot be TOML when no order follows it (a report's text after its order file);
    when one does, everything is kept, so that a mistake in the middle is told, never dropped
    with the orders after it. With whether cut lines were around it; None without `game =`."""
    cut = between_cuts(body)
    in_report = cut is not body
    lines = cut.split("\n")
    start = next((i for i, line in enumerate(lines) if _GAME_LINE.match(line)), None)
    if start is None:
        return None
    kept = lines[start:]
    prose = next((i for i, line in enumerate(kept) if not _TOML_LINE.match(line)), None)
    if prose is not None and not any(_ORDER_LINE.match(line) for line in kept[prose:]):
        kept = kept[:prose]  # what follows holds no orders: the rest of a report, a sign-off
    while kept and (not kept[-1].strip() or not _TOML_LINE.match(kept[-1])):
        if _ORDER_LINE.match(kept[-1]):
            break  # an order mistyped: kept, and told as a mistake
        kept.pop()
    return "\n".join(line.rstrip() for line in kept) + "\n", in_report, frozenset()


def repaired(orders: str, fixes: frozenset[Fix] = frozenset()) -> tuple[str, frozenset[Fix]]:
    """Orders as the player typed them: when they are not TOML as they came, with the curly
    quotes of phones and word processors made straight, then with the tails of comments that
    a mail program wrapped onto a line of their own joined back; each change recorded. Valid
    TOML is never changed (a name may hold a curly apostrophe)."""
    if toml_data(orders) is not None:
        return orders, fixes
    straight = text.straightened(orders)
    if straight != orders:
        fixes |= {Fix.QUOTES}
        orders = straight
        if toml_data(orders) is not None:
            return orders, fixes
    joined = _comment_tails_joined(orders)
    if joined != orders and toml_data(joined) is not None:
        return joined, fixes | {Fix.WRAPPED}
    return orders, fixes


def _comment_tails_joined(orders: str) -> str:
    """A line that cannot be TOML right after a line that ends in a comment is that comment's
    tail, wrapped by a mail program: joined to it (unless it is a mistyped order, `move: 2`,
    which is told as a mistake, never hidden in a comment)."""
    out: list[str] = []
    for line in orders.split("\n"):
        tail = line.strip() and not _TOML_LINE.match(line) and not _ORDER_LINE.match(line)
        if out and "#" in out[-1] and tail:
            out[-1] = f"{out[-1].rstrip()} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


# -- choosing -------------------------------------------------------------------------------


def choose(reading: Reading, is_ready: Callable[[Found], str | None], forward: bool) -> Choice:
    """The orders the player meant, or why none can be taken.

    The player's own (the text they wrote, a file they attached) come first; only when there
    are none do orders in the quoted part or in an attached message count. An order file that
    is the ready file pbem mailed (`is_ready` says which, or None) never wins over orders
    the player wrote; played alone, it must have been chosen: attached to a message with no
    other copy of it (a quoted report, a report's text, which a reply that sends the report's
    attachments back also holds), and not carried along by a forward (`forward`: the subject
    says it is one; a forward separator in the text says so too). In the text, it never is:
    a report's text that pbem did not see as quoted holds it too."""
    written = [f for f in reading.found if is_ready(f) is None]
    for tier in (True, False):
        mine = _distinct([f for f in written if f.where.own is tier])
        if len(mine) == 1:
            return Choice(mine[0])
        if len(mine) > 1:
            return Choice(ambiguous=(mine[0], mine[1]))
    if len(reading.found) == 1 and not (forward or reading.forward):
        (alone,) = reading.found
        which = is_ready(alone)
        if which is not None and alone.where is Where.FILE:  # attached, nothing beside it
            return Choice(alone, ready=which)
    for f in reading.found:
        which = is_ready(f)
        if which is not None:
            return Choice(only_ready=(f, which))
    return Choice(problem=nothing_found(reading))


def _distinct(found: Sequence[Found]) -> list[Found]:
    """The candidates that say different things (as data, where both are TOML; else as text
    without trailing spaces), the first of each."""
    out: list[Found] = []
    for f in found:
        if not any(_same(f, g) for g in out):
            out.append(f)
    return out


def _same(a: Found, b: Found) -> bool:
    da, db = a.data(), b.data()
    if da is not None and db is not None:
        return da == db
    return normal(a.text) == normal(b.text)


def normal(orders: str) -> str:
    """An order file without what mail programs change unseen: line ends, spaces at the ends of
    lines, blank lines at the end."""
    lines = [line.rstrip() for line in orders.replace("\r\n", "\n").split("\n")]
    return "\n".join(lines).strip("\n").removeprefix("\ufeff")


def nothing_found(reading: Reading) -> Problem:
    """Why a message with no order file has none, as exactly as it can be told."""
    if reading.troubles:
        return reading.troubles[0]
    if reading.encrypted:
        return Problem.of(
            "your mail program sent the message encrypted (PGP or S/MIME), and pbem cannot "
            "read encrypted mail: send your orders again without encryption"
        )
    if reading.texts == 0:
        return Problem.of("the message has no text and no .toml attachment")
    return Problem.of(
        "no orders found: put the order file (from 'game = ...' on) in the text of your "
        "message, or attach it as a .toml file"
    )


# -- the parts of a message -----------------------------------------------------------------


def filename(part: Message) -> str:
    """An attachment's name as its sender wrote it: RFC 2231 (`filename*=UTF-8''...`) and RFC
    2047 encoded words (`=?UTF-8?B?...?=`, how Gmail and Outlook write names outside ASCII)
    decoded; from `filename`, else the Content-Type's `name`."""
    try:
        name = part.get_filename() or part.get_param("name") or ""
    except (ValueError, LookupError, UnicodeError, TypeError):
        return ""
    if isinstance(name, tuple):
        name = str(name[2])
    return _decoded_header(str(name)).strip().replace("\n", " ")[:200]


def _decoded_header(value: str) -> str:
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError, UnicodeError, TypeError, AttributeError):
        return value


def _disposition(part: Message) -> str:
    return str(part.get("Content-Disposition", "")).split(";")[0].strip().lower()


def _is_encrypted(part: Message) -> bool:
    ctype = part.get_content_type()
    if ctype in ("multipart/encrypted", "application/pgp-encrypted"):
        return True
    if ctype in ("application/pkcs7-mime", "application/x-pkcs7-mime"):
        smime = str(part.get_param("smime-type") or "").lower()
        return smime != "signed-data"
    if ctype == "text/plain" and not part.is_multipart():
        head = _payload(part)[:4096]
        return b"-----BEGIN PGP MESSAGE-----" in head
    return False


def _subparts(part: Message) -> list[Message]:
    payload = part.get_payload()
    if not isinstance(payload, list):
        return []
    return [p for p in cast(list[object], payload) if isinstance(p, Message)]


def _leaves(parts: Sequence[Message], depth: int) -> Iterator[Message]:
    for part in parts:
        if depth > MAX_DEPTH:
            raise RecursionError("nested too deep")
        if part.is_multipart() and part.get_content_maintype() != "message":
            yield from _leaves(_subparts(part), depth + 1)
        elif not part.is_multipart():
            yield part


def _payload(part: Message) -> bytes:
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else b""
