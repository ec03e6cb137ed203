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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from email import errors as email_errors
from email import policy
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime

from pbem.errors import Problem
from pbem.files import ORDER_FILE_LIMIT
from pbem.mail import found as found_in
from pbem.mail import quoting, text
from pbem.mail.found import Reading
from pbem.mail.machine import automatic, no_automatic_replies, report_inside

MAX_ORDERS_BYTES = ORDER_FILE_LIMIT
"""The largest order file taken, attached or in a message's text."""
MAX_DEPTH = found_in.MAX_DEPTH
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""The largest message read (4 MiB): a longer one is refused unread, from its head alone."""
MAX_PARTS = 2000
"""The most MIME parts a message read may have (counted from its boundary lines, unparsed)."""
HEAD_BYTES = 64 * 1024
"""How much of a message too large to read is kept: its head, where its headers are."""

_PARSER = BytesParser(policy=policy.compat32)
_MESSAGE_ID = re.compile(r"<[!-;=?-~]{1,250}@[!-;=?-~]{1,250}>")
_ADDRESS = re.compile(r"^[^@\s<>()\[\]\\,;:\"]+@[^@\s<>()\[\]\\,;:\"]+$")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_COMMENT = re.compile(r"\([^()]*\)")


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
    in_reply_to: tuple[str, ...]
    """The Message-IDs its In-Reply-To names (what it answers)."""
    machine: str | None
    """Why it was sent by a machine (and must not be answered), or None."""
    reading: Reading
    """Every order file found in it, where, and what could not be read."""
    trouble: Problem | None = None
    """Why the message cannot be read at all (its MIME structure), or None."""
    limit: Problem | None = None
    """The limit the message is over (its size, its MIME parts): it is not read beyond its
    headers, and refused; None when it is within them."""
    whole: bool = False
    """Whether its body has been read (`read_body`), not only its headers (`read_head`)."""
    no_auto_reply: str | None = None
    """The sender's request for no automatic replies (Outlook's X-Auto-Response-Suppress),
    said as a reason, or None: honoured in a thread of pbem's answers (`muting`)."""

    def choice(
        self, is_ready: Callable[[found_in.Found], str | None] = lambda f: None
    ) -> found_in.Choice:
        """The orders the player meant (`found.choose`), `is_ready` telling the ready files."""
        if self.limit is not None or self.trouble is not None:
            return found_in.Choice(problem=self.limit or self.trouble)
        return found_in.choose(self.reading, is_ready, self.forward)

    @property
    def orders(self) -> str | None:
        """The orders the message holds, as far as the message alone tells."""
        chosen = self.choice()
        if chosen.found is not None:
            return chosen.found.text
        if chosen.ambiguous is not None:
            return chosen.ambiguous[0].text
        return chosen.only_ready[0].text if chosen.only_ready else None

    @property
    def problem(self) -> str | None:
        """Why no orders can be taken from it (none found, unreadable), or None."""
        chosen = self.choice()
        if chosen.problem is not None:
            return chosen.problem.message
        if chosen.ambiguous is not None:
            return "it holds two different sets of orders"
        return None

    @property
    def forward(self) -> bool:
        return self.reading.forward or quoting.forwarded(self.subject)

    @property
    def resend(self) -> bool:
        """Whether it asks for the latest report again (asked only of a message without
        orders: orders are the answer to a report)."""
        return asks_for_resend(self.subject, self.reading.own_words)


def read_letter(raw: bytes, cut: bool = False) -> Letter:
    """Read a message from its bytes (`cut`: only its head, the rest being too large to
    read); never raises."""
    return read_body(read_head(raw, cut), raw)


def read_head(raw: bytes, cut: bool = False) -> Letter:
    """What a message's header block alone tells (who sent it, its Message-ID, its digest:
    enough to know it was read before), and whether it is over a limit; its body is not
    parsed. `cut`: `raw` is only the head of a message larger than MAX_MESSAGE_BYTES."""
    headers = _headers(_PARSER.parsebytes(_header_block(raw), headersonly=True))
    sender, sender_problem = sender_address(headers.get("from", []))
    first = headers.get("message-id", [""])[0].strip()
    match = _MESSAGE_ID.fullmatch(first)
    return Letter(
        message_id=first[:500] or f"<{hashlib.sha256(raw).hexdigest()[:32]}@pbem.invalid>",
        digest=_digest(headers, raw),
        sender=sender,
        sender_problem=sender_problem,
        subject=_subject(headers.get("subject", [""])[0])[:300],
        date=_date(headers.get("date", [""])[0]),
        thread_id=match.group() if match else None,
        references=tuple(_MESSAGE_ID.findall(" ".join(headers.get("references", []))))[-20:],
        in_reply_to=tuple(_MESSAGE_ID.findall(" ".join(headers.get("in-reply-to", []))))[:5],
        machine=automatic(headers),
        reading=Reading(),
        limit=_over_limit(raw, cut),
        no_auto_reply=no_automatic_replies(headers),
    )


def read_body(head: Letter, raw: bytes) -> Letter:
    """`head` (from `read_head(raw)`) with the orders its body holds; a message over a limit
    is left unread."""
    if head.whole or head.limit is not None:
        return head
    reading = Reading()
    trouble: Problem | None = None
    machine = head.machine
    try:
        whole = _PARSER.parsebytes(raw)
        machine = machine or report_inside(whole)
        reading = found_in.read(whole)
    except RecursionError:
        trouble = Problem.of(
            "its MIME parts are nested too deep to read (more than %(depth)s levels)",
            depth=MAX_DEPTH,
        )
    except Exception as err:  # noqa: BLE001 (what a stranger sends must never stop a fetch)
        trouble = Problem.of(
            "pbem cannot read its MIME structure (%(error)s)",
            error=f"{type(err).__name__}: {err}"[:250],
        )
    return replace(head, reading=reading, trouble=trouble, machine=machine, whole=True)


_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOUNDARY = re.compile(rb'boundary\s*=\s*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))', re.IGNORECASE)
_DASHES = re.compile(rb"(?:\r\n|\r|\n)--([^\r\n]{1,204})")


def _header_block(raw: bytes) -> bytes:
    """The header block of a message, to its first empty line (at most HEAD_BYTES)."""
    end = 0
    for found in _LINE_END.finditer(raw, 0, HEAD_BYTES):
        if found.start() == end:  # an empty line: the headers end here
            return raw[: found.end()]
        end = found.end()
    return raw[:HEAD_BYTES]


def _over_limit(raw: bytes, cut: bool) -> Problem | None:
    """Why a message is not to be read (larger than MAX_MESSAGE_BYTES, more MIME parts than
    MAX_PARTS), judged without parsing it: each part begins with a line of "--" and the
    boundary its multipart declares."""
    if cut or len(raw) > MAX_MESSAGE_BYTES:
        return Problem.of(
            "it is larger than %(size)s MiB, the most pbem reads",
            size=MAX_MESSAGE_BYTES // (1024 * 1024),
        )
    if raw.count(b"\n--") + raw.count(b"\r--") <= MAX_PARTS:
        return None  # too few lines begin with "--" to separate that many parts
    boundaries = {a or b for a, b in _BOUNDARY.findall(raw)}
    parts = 0
    for found in _DASHES.finditer(raw):
        if found.group(1).rstrip(b" \t") in boundaries:  # a part begins (not "--b--": the end)
            parts += 1
            if parts > MAX_PARTS:
                return Problem.of(
                    "it has more than %(parts)s MIME parts, the most pbem reads",
                    parts=MAX_PARTS,
                )
    return None


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
    """The TOML a player wrote in a message's text: from the first `game =` line on, leaving
    out quoted lines (and the "... wrote:" line before them), the signature and the original
    message below a separator, and trailing lines that cannot be TOML ("Thanks, Bob"); in a
    whole report sent back, only what is between pbem's cut lines."""
    own = quoting.split(text.plain_spaces(body)).own
    found = found_in.orders_in(own)
    return None if found is None else found[0]


# A request for the report again, as the subject or the first line begins: a polite word or
# two, then the verb ("Please resend", "Could you send me my report again?", "Kirim ulang",
# "Kan du skicka rapporten igen?", "Puoi inviarmi di nuovo il rapporto?", "Bitte erneut
# senden"). Anywhere else the words mean other things ("I will resend my orders tomorrow",
# "Si rimanda la partita?"), and pbem's own "resent:" is no request.
_POLITE = (
    r"(?:(?:please|pls|plz|could you|can you|would you|kindly|tolong|mohon|bisa|kan du|"
    r"snälla|per favore|puoi|potresti|kun je|kunt u|wil je|graag|bitte|kannst du|können sie|"
    r"pouvez-vous|peux-tu|merci de|કૃપા કરીને)[\s,]+)*"
)
_RESEND = re.compile(
    rf"^\W*{_POLITE}(?:resend|re-send|send (?:me )?(?:it|the report|my report|my last report)"
    r" again|kirim(?:kan)? ulang|kirim lagi|skicka (?:om|igen|rapporten igen|på nytt)|"
    r"(?:invia|inviar)(?:mi|e)? (?:di nuovo|ancora)|reinvia(?:mi)?|"
    r"rimanda(?:mi|re|rmi)?(?: il rapporto)?\W*$|"
    r"(?:het |mijn )?(?:rapport )?(?:opnieuw|nogmaals) (?:ver)?sturen|"
    r"stuur (?:het |mijn )?(?:rapport )?opnieuw|"
    r"(?:erneut|nochmal|noch einmal) (?:senden|schicken)|schick mir .{0,30}(?:nochmal|erneut)|"
    r"renvoy(?:er|ez)|renvoie(?:-moi)?|(?:રિપોર્ટ )?(?:ફરીથી|ફરી) (?:મોકલો|મોકલશો))(?!\w)",
    re.IGNORECASE,
)
REPLY_PREFIXES = re.compile(
    r"^\s*(?:(?:re|aw|sv|vs|antw|r|rif|ant|balas|fwd?|wg)\s*:\s*|\[[^\]]*\]\s*)+", re.I
)


def asks_for_resend(subject: str, words: str) -> bool:
    """Whether a message asks for the latest report again: "resend" (or its like in the
    languages pbem speaks, German and French) in its subject or its first line."""
    first = next((line for line in words.split("\n") if line.strip()), "")
    topic = REPLY_PREFIXES.sub("", subject)
    return bool(_RESEND.search(topic[:300]) or _RESEND.search(first[:300]))
