"""Writes the mail-client corpus: tests/fixtures/mail/clients/*.eml and cases.toml.

Run by hand from the repository's root (`python tests/make_mail_corpus.py`); the files it
writes are committed, and tests/test_mail_clients.py feeds each message to the fetch.

Every message answers pbem's own report of the deal of the game that test_mail.py makes
(spring-2027, alice, bob and carol at example.org), the way one mail program really writes a
reply, a forward or a new message: its headers, MIME structure, quoting, attribution line,
separators, wrapping and encodings. The messages are written here byte by byte (not through
the standard library's EmailMessage, which would tidy them), always the same bytes: every
boundary and Message-ID is drawn from the case's name.
"""

from __future__ import annotations

import base64
import hashlib
import html
import quopri
import re
import shutil
import struct
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email import policy
from email.header import Header
from email.parser import BytesParser
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import tomli_w

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pbem.core.state import Options  # noqa: E402
from pbem.game import processor  # noqa: E402
from pbem.mail import build_report  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "mail" / "clients"
GAME = "spring-2027"
MODERATOR = "moderator@example.org"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
NAMES = {"alice": "Alice Liddell", "bob": "Bob Marley", "carol": "Carol Danvers"}
SENT = datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc)
"""When pbem mailed the reports the players answer."""
CRLF = "\r\n"
DIGITS = "0123456789"
LOWER = "abcdefghijklmnopqrstuvwxyz"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ" + LOWER + DIGITS


# --- the game and the reports answered ---------------------------------------------------------


@dataclass
class Report:
    """One player's report message as the player received it."""

    player: str
    secret: str
    subject: str
    message_id: str
    text: str
    html: str
    ready: str
    """The ready order file (attached as NAME.orders.toml, and between the cut lines)."""
    view: bytes


def reports() -> dict[str, Report]:
    work = Path(tempfile.mkdtemp())
    try:
        directory = work / GAME
        processor.new_game(directory, PLAYERS, Options(), seed=bytes(range(32)), name=GAME)
        game = read_game(directory)
        out: dict[str, Report] = {}
        for player, _ in PLAYERS:
            msg = build_report(game, 0, player, MODERATOR, now=SENT)
            assert msg is not None
            raw = msg.as_bytes()
            parsed: Any = BytesParser(policy=policy.default).parsebytes(raw)
            text = parsed.get_body(preferencelist=("plain",)).get_content()
            page = parsed.get_body(preferencelist=("html",)).get_content()
            ready = view = None
            for part in parsed.iter_attachments():
                if part.get_filename() == f"{player}.orders.toml":
                    ready = part.get_content()
                elif part.get_filename() == f"{player}.view.json":
                    view = part.get_content()
            reg = game.registration(player)
            assert reg is not None and ready is not None and view is not None
            out[player] = Report(
                player,
                reg.secret,
                str(parsed["Subject"]),
                str(parsed["Message-ID"]),
                text,
                page,
                ready,
                view,
            )
        return out
    finally:
        shutil.rmtree(work)


REPORTS = reports()


# --- orders ------------------------------------------------------------------------------------


@dataclass
class Orders:
    text: str
    data: dict[str, Any]


def orders(
    player: str,
    places: Sequence[tuple[str, int | str, str]],
    intro: Sequence[str] = (),
    align: bool = True,
) -> Orders:
    """A player's order file placing armies on `places` (territory, armies, comment), in the
    ready file's layout; `intro` comment lines go on top."""
    rep = REPORTS[player]
    lines = [f"# {line}" for line in intro]
    lines += [
        f'game = "{GAME}"',
        "turn = 0",
        f'player = "{player}"',
        f'secret = "{rep.secret}"',
    ]
    data: dict[str, Any] = {"game": GAME, "turn": 0, "player": player, "secret": rep.secret}
    data["place"] = []
    for territory, armies, comment in places:
        value = f'"{armies}"' if isinstance(armies, str) else str(armies)
        line = f"armies = {value}"
        if comment:
            line = (line.ljust(25) + " " if align else line + "  ") + f"# {comment}"
        lines += ["", "[[place]]", f'territory = "{territory}"', line]
        data["place"].append({"territory": territory, "armies": armies})
    return Orders("\n".join(lines) + "\n", data)


def template_data(player: str) -> dict[str, Any]:
    rep = REPORTS[player]
    return {
        "game": GAME,
        "turn": 0,
        "player": player,
        "secret": rep.secret,
        "place": [{"territory": _first_territory(rep.ready), "armies": "rest"}],
    }


def _first_territory(ready: str) -> str:
    match = re.search(r'^territory = "([^"]+)"', ready, re.M)
    assert match
    return match.group(1)


# --- text transformations that mail programs make ----------------------------------------------


def crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", CRLF)


def quote(text: str, prefix: str = "> ", blank: str = ">") -> str:
    """Each line quoted; a line already quoted gets one more '>' with no space between."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        if not line.strip():
            out.append(blank)
        elif line.startswith(">"):
            out.append(prefix.rstrip() + line)
        else:
            out.append(prefix + line)
    return "\n".join(out) + "\n"


def hard_wrap(text: str, width: int = 78, quoted: bool = False) -> str:
    """Hard line breaks at `width` columns, as Gmail and Outlook write their text/plain."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        prefix = re.match(r"^(>+ ?)", line).group(1) if quoted and line.startswith(">") else ""
        body = line[len(prefix) :]
        indent = re.match(r"^\s*", body).group(0)
        pieces = textwrap.wrap(
            body,
            width=width - len(prefix),
            break_long_words=False,
            break_on_hyphens=False,
            drop_whitespace=True,
            initial_indent="",
            subsequent_indent="",
        )
        if indent and pieces:
            pieces[0] = indent + pieces[0].lstrip()
        out += [prefix + p for p in pieces]
    return "\n".join(out)


def flowed(text: str, width: int = 72, delsp: bool = False) -> str:
    """RFC 3676 format=flowed: long lines soft-broken (a line that ends in a space goes on in
    the next), lines space-stuffed; with DelSp=yes the space added at each break is removed
    on reading, as Apple Mail writes it."""
    out: list[str] = []
    for line in text.rstrip("\n").split("\n"):
        line = line.rstrip(" ")
        match = re.match(r"^(>+ ?)", line)
        prefix = match.group(1) if match else ""
        if prefix and not prefix.endswith(" "):
            prefix += " "
        body = line[len(match.group(1)) :] if match else line
        if line.rstrip() == "--":
            out.append("-- ")
            continue
        stuff = " " if (not prefix and (body.startswith((" ", "From ")))) else ""
        room = width - len(prefix) - len(stuff)
        chunks: list[str] = []
        while len(body) > room:
            cut = body.rfind(" ", 0, room)
            if cut <= 0:
                cut = body.find(" ", room)
                if cut < 0:
                    break
            chunks.append(body[: cut + 1] + (" " if delsp else ""))
            body = body[cut + 1 :]
        chunks.append(body)
        if prefix and not body and len(chunks) == 1:
            out.append(prefix.rstrip())
            continue
        first = True
        for chunk in chunks:
            lead = stuff if first else (" " if chunk.startswith(" ") and not prefix else "")
            out.append(prefix + lead + chunk)
            first = False
    return "\n".join(out) + "\n"


class _Text(HTMLParser):
    """The text a mail program shows for an HTML message (and quotes in a plain reply)."""

    BLOCK = {
        "p",
        "div",
        "h1",
        "h2",
        "h3",
        "h4",
        "li",
        "tr",
        "table",
        "section",
        "header",
        "footer",
        "ol",
        "ul",
        "dl",
        "dt",
        "dd",
        "main",
        "blockquote",
        "pre",
    }
    SKIP = {"style", "script", "svg", "head", "title"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.skip = 0
        self.pre = 0
        self.cell = False

    def newline(self) -> None:
        if self.out and not self.out[-1].endswith("\n"):
            self.out.append("\n")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self.skip += 1
        elif tag == "br":
            self.out.append("\n")
        elif tag in self.BLOCK:
            self.newline()
            if tag == "li":
                self.out.append("* ")
            if tag == "pre":
                self.pre += 1
            if tag in ("h2", "section"):
                self.out.append("\n")
        elif tag in ("td", "th"):
            if self.cell:
                self.out.append("  ")
            self.cell = True

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP:
            self.skip -= 1
        elif tag in self.BLOCK:
            if tag == "pre":
                self.pre -= 1
            if tag == "tr":
                self.cell = False
            self.newline()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre:
            self.out.append(data)
            return
        text = re.sub(r"\s+", " ", data)
        if self.out and self.out[-1].endswith("\n"):
            text = text.lstrip()
        if text:
            self.out.append(text)


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    text = "".join(parser.out)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def report_body(page: str) -> str:
    """The report's HTML as a webmail quotes it: the inside of <body>, without its map."""
    start = page.index(">", page.index("<body")) + 1
    body = page[start : page.index("</body>")]
    return re.sub(r"<svg.*?</svg>", "", body, flags=re.S).strip() + "\n"


def lines_html(text: str, tag: str = "div", attrs: str = "") -> str:
    """Typed text as a rich-text editor writes it: one element a line, <br> for blank ones."""
    out = []
    for line in text.rstrip("\n").split("\n"):
        inner = html.escape(line, quote=False) if line.strip() else "<br>"
        out.append(f"<{tag}{attrs}>{inner}</{tag}>")
    return "\n".join(out) + "\n"


def br_html(text: str) -> str:
    return "<br>\n".join(html.escape(line, quote=False) for line in text.rstrip("\n").split("\n"))


# --- MIME, written out ------------------------------------------------------------------------


def qp(text: str, charset: str = "utf-8") -> bytes:
    data = text.replace("\r\n", "\n").encode(charset)
    return quopri.encodestring(data).replace(b"\n", b"\r\n")


def b64(data: bytes, width: int = 76) -> bytes:
    flat = base64.b64encode(data).decode()
    return (CRLF.join(flat[i : i + width] for i in range(0, len(flat), width)) + CRLF).encode()


def plain_bytes(text: str, charset: str = "utf-8") -> bytes:
    return crlf(text).encode(charset)


def encoded(text: str, cte: str, charset: str = "utf-8") -> bytes:
    if cte == "quoted-printable":
        return qp(text, charset)
    if cte == "base64":
        return b64(crlf(text).encode(charset))
    return plain_bytes(text, charset)


def part(headers: Sequence[tuple[str, str]], body: bytes) -> bytes:
    head = "".join(f"{name}: {value}{CRLF}" for name, value in headers)
    return head.encode() + CRLF.encode() + body


def text_part(
    text: str,
    subtype: str = "plain",
    charset: str = "utf-8",
    cte: str = "quoted-printable",
    params: str = "",
    extra: Sequence[tuple[str, str]] = (),
    cte_first: bool = False,
    quote_charset: bool = True,
) -> bytes:
    if cte == "7bit" and not text.isascii():
        cte = "8bit"
    cs = f'"{charset}"' if quote_charset else charset
    ctype = ("Content-Type", f"text/{subtype}; charset={cs}{params}")
    enc = ("Content-Transfer-Encoding", cte)
    headers = [enc, ctype] if cte_first else [ctype, enc]
    return part([*headers, *extra], encoded(text, cte, charset))


def multipart(
    subtype: str,
    boundary: str,
    parts: Sequence[bytes],
    preamble: str = "",
    params: str = "",
    extra: Sequence[tuple[str, str]] = (),
) -> tuple[list[tuple[str, str]], bytes]:
    """(headers, body) of a multipart: the headers to put on a part or a message."""
    body = preamble.encode() + (CRLF.encode() if preamble else b"")
    for p in parts:
        body += f"--{boundary}{CRLF}".encode() + p
        if not p.endswith(CRLF.encode()):
            body += CRLF.encode()
    body += f"--{boundary}--{CRLF}".encode()
    headers = [("Content-Type", f'multipart/{subtype};{CRLF}\tboundary="{boundary}"{params}')]
    return [*headers, *extra], body


def nested(subtype: str, boundary: str, parts: Sequence[bytes], **kw: Any) -> bytes:
    headers, body = multipart(subtype, boundary, parts, **kw)
    return part(headers, body)


def attachment(
    name: str,
    data: bytes,
    ctype: str = "application/octet-stream",
    cte: str = "base64",
    disposition: str | None = None,
    extra: Sequence[tuple[str, str]] = (),
) -> bytes:
    body = b64(data) if cte == "base64" else encoded(data.decode(), cte)
    disp = disposition or f'attachment; filename="{name}"'
    headers = [("Content-Type", f'{ctype}; name="{name}"'), ("Content-Disposition", disp)]
    headers.append(("Content-Transfer-Encoding", cte))
    return part([*headers, *extra], body)


def message(headers: Sequence[tuple[str, str]], body: bytes) -> bytes:
    return part(headers, body)


def words(text: str) -> str:
    """A header value with RFC 2047 encoded words where it is not ASCII."""
    return text if text.isascii() else Header(text, "utf-8").encode()


def who(player: str) -> str:
    name = NAMES[player]
    return f"{words(name)} <{player}@example.org>"


def rfc_date(when: datetime, zone_name: str = "") -> str:
    text = f"{when:%a}, {when.day} {when:%b %Y %H:%M:%S %z}"
    return f"{text} ({zone_name})" if zone_name else text


def at(day: int, hour: int, minute: int, zone: int = 0) -> datetime:
    """A time on 1 or 2 March 2027 in UTC, written in a zone `zone` hours from UTC."""
    from datetime import timedelta

    utc = datetime(2027, 3, day, hour, minute, tzinfo=timezone.utc)
    return utc.astimezone(timezone(timedelta(hours=zone)))


def token(name: str, n: int = 32, alphabet: str = "0123456789abcdef") -> str:
    """Characters drawn from a name, always the same."""
    out = ""
    seed = name.encode()
    while len(out) < n:
        seed = hashlib.sha256(seed).digest()
        out += "".join(alphabet[b % len(alphabet)] for b in seed)
    return out[:n]


def uuid(name: str) -> str:
    t = token(name, 32, "0123456789ABCDEF")
    return f"{t[:8]}-{t[8:12]}-{t[12:16]}-{t[16:20]}-{t[20:]}"


def pseudo_bytes(name: str, n: int) -> bytes:
    out = b""
    seed = name.encode()
    while len(out) < n:
        seed = hashlib.sha256(seed).digest()
        out += seed
    return out[:n]


def reply_headers(rep: Report) -> list[tuple[str, str]]:
    return [("In-Reply-To", rep.message_id), ("References", rep.message_id)]


# --- the corpus -------------------------------------------------------------------------------


@dataclass
class Case:
    file: str
    client: str
    what: str
    expect: str
    player: str
    raw: bytes
    orders: dict[str, Any] | None = None
    answer: list[str] = field(default_factory=list)
    untouched: bool = False


CASES: list[Case] = []
MAKERS: list[Callable[[], Case]] = []


def case(fn: Callable[[], Case]) -> Callable[[], Case]:
    MAKERS.append(fn)
    return fn


A, B, C = REPORTS["alice"], REPORTS["bob"], REPORTS["carol"]

# What each player orders in most messages (different from the ready file).
ALICE = orders(
    "alice",
    [
        ("Alberta", 8, "hold the Rockies"),
        ("Kamchatka", 6, "watch the Bering crossing"),
        ("Madagascar", "rest", ""),
    ],
)
ALICE2 = orders("alice", [("Eastern Australia", 12, "all in on Oceania"), ("Peru", "rest", "")])
ALICE3 = orders(
    "alice",
    [("Iceland", 7, ""), ("Ontario", 7, ""), ("Japan", "rest", "")],
    intro=["three stacks, one per front"],
)
BOB = orders("bob", [("Alaska", 9, "the door to Asia"), ("Ural", "rest", "")])
BOB2 = orders("bob", [("Egypt", 5, ""), ("Indonesia", 10, "Oceania first"), ("China", "rest", "")])
CAROL = orders("carol", [("Greenland", 6, ""), ("Siam", 10, ""), ("Argentina", "rest", "")])
CAROL2 = orders(
    "carol", [("Middle East", 11, "hinge of three continents"), ("Siberia", "rest", "")]
)


def accepted(
    file: str,
    client: str,
    what: str,
    player: str,
    raw: bytes,
    placed: Orders,
    answer: Sequence[str] = (),
) -> Case:
    return Case(file, client, what, "accepted", player, raw, placed.data, ["accepted", *answer])


# ---- Gmail (web) ----

GMAIL_STYLE = "margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex"


def gmail_id(name: str) -> str:
    return f"<CA{token(name, 40, ALNUM + '+_-')}@mail.gmail.com>"


def gmail_boundary(name: str, n: int = 0) -> str:
    return "000000000000" + token(f"{name}/{n}", 16)


def gmail_reply(
    name: str,
    rep: Report,
    typed: str,
    when: datetime,
    attribution: str = "On Mon, 1 Mar 2027 at 09:00, <moderator@example.org> wrote:",
    quoted_text: str | None = None,
    quoted_html: str | None = None,
    subject: str | None = None,
    attachments: Sequence[bytes] = (),
    android: bool = False,
) -> bytes:
    """Gmail's reply: top-posted, text/plain wrapped at 78 columns with the quote in '>'
    lines, the HTML with the quote in a gmail_quote div."""
    qtext = quoted_text if quoted_text is not None else html_text(report_body(rep.html))
    plain = hard_wrap(typed.rstrip("\n"), 78) + "\n\n"
    plain += hard_wrap(attribution, 78) + "\n\n" + hard_wrap(quote(qtext), 78, quoted=True)
    qhtml = quoted_html if quoted_html is not None else report_body(rep.html)
    mine = lines_html(typed)
    attr_html = html.escape(attribution).replace(
        "&lt;moderator@example.org&gt;",
        '&lt;<a href="mailto:moderator@example.org">moderator@example.org</a>&gt;',
    )
    page = (
        f'<div dir="{"auto" if android else "ltr"}">{mine}</div><br>'
        f'<div class="gmail_quote gmail_quote_container"><div dir="ltr" class="gmail_attr">'
        f"{attr_html}<br></div>"
        f'<blockquote class="gmail_quote" style="{GMAIL_STYLE}">{qhtml}</blockquote></div>\n'
    )
    alts = [
        text_part(plain, cte="quoted-printable", charset="UTF-8"),
        text_part(page, "html", cte="quoted-printable", charset="UTF-8"),
    ]
    headers = [("MIME-Version", "1.0")]
    headers += reply_headers(rep) if subject is None else []
    headers += [
        ("From", who(rep.player)),
        ("Date", rfc_date(when)),
        ("Message-ID", gmail_id(name)),
        ("Subject", subject or f"Re: {rep.subject}"),
        ("To", MODERATOR),
    ]
    if attachments:
        alt = nested("alternative", gmail_boundary(name, 1), alts)
        top, body = multipart("mixed", gmail_boundary(name, 0), [alt, *attachments])
    else:
        top, body = multipart("alternative", gmail_boundary(name, 1), alts)
    return message(headers + top, body)


def gmail_attach(name: str, filename: str, data: bytes, ctype: str, n: int) -> bytes:
    att = f"f_{token(f'{name}/att{n}', 9, 'abcdefghijklmnopqrstuvwxyz0123456789')}{n - 1}"
    return part(
        [
            ("Content-Type", f'{ctype}; name="{filename}"'),
            ("Content-Disposition", f'attachment; filename="{filename}"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-ID", f"<{att}>"),
            ("X-Attachment-Id", att),
        ],
        b64(data),
    )


@case
def gmail_web_reply() -> Case:
    name = "gmail-web-reply-top-posted.eml"
    typed = "Here are my placements:\n\n" + ALICE.text + "\nCheers,\nAlice\n"
    raw = gmail_reply(name, A, typed, at(1, 10, 2))
    return accepted(
        name,
        "Gmail (web)",
        "Reply top-posted above 'On Mon, 1 Mar 2027 at 09:00, <...> wrote:' and the report in "
        "'>' lines; text/plain wrapped at 78 columns with an HTML part holding a gmail_quote div",
        "alice",
        raw,
        ALICE,
    )


@case
def gmail_web_wrapped_comment() -> Case:
    name = "gmail-web-long-comment-wrapped.eml"
    placed = orders(
        "alice",
        [
            (
                "Alberta",
                10,
                "the whole northern flank, Alberta to Ontario, so carol cannot walk in "
                "from Greenland",
            ),
            ("Japan", "rest", ""),
        ],
    )
    raw = gmail_reply(name, A, placed.text, at(1, 10, 41))
    return accepted(
        name,
        "Gmail (web)",
        "Reply whose long comment line Gmail's text/plain breaks at 78 columns (the continuation "
        "is not a comment any more); the HTML part has the line whole",
        "alice",
        raw,
        placed,
    )


def forwarded_block_gmail(rep: Report) -> str:
    return (
        "---------- Forwarded message ---------\n"
        "From: <moderator@example.org>\n"
        "Date: Mon, 1 Mar 2027 at 09:00\n"
        f"Subject: {rep.subject}\n"
        f"To: <{rep.player}@example.org>\n"
    )


@case
def gmail_web_forward() -> Case:
    name = "gmail-web-forward-with-attachments.eml"
    rep = A
    typed = "Orders below (forwarding so you have the report too)\n\n" + ALICE3.text
    plain = hard_wrap(typed, 78) + "\n" + forwarded_block_gmail(rep) + "\n\n" + rep.text
    page = (
        f'<div dir="ltr">{lines_html(typed)}<br><div class="gmail_quote gmail_quote_container">'
        f'<div dir="ltr" class="gmail_attr">---------- Forwarded message ---------<br>From: '
        f"&lt;moderator@example.org&gt;<br>Date: Mon, 1 Mar 2027 at 09:00<br>Subject: "
        f"{html.escape(rep.subject)}<br>To: &lt;alice@example.org&gt;<br></div><br><br>"
        f"{report_body(rep.html)}</div></div>\n"
    )
    alt = nested(
        "alternative",
        gmail_boundary(name, 1),
        [text_part(plain, charset="UTF-8"), text_part(page, "html", charset="UTF-8")],
    )
    atts = [
        gmail_attach(name, "alice.orders.toml", rep.ready.encode(), "text/plain; charset=utf-8", 1),
        gmail_attach(name, "alice.view.json", rep.view, "application/json", 2),
    ]
    top, body = multipart("mixed", gmail_boundary(name, 0), [alt, *atts])
    raw = message(
        [
            ("MIME-Version", "1.0"),
            ("References", rep.message_id),
            ("In-Reply-To", rep.message_id),
            ("From", who("alice")),
            ("Date", rfc_date(at(1, 11, 15, 1))),
            ("Message-ID", gmail_id(name)),
            ("Subject", f"Fwd: {rep.subject}"),
            ("To", MODERATOR),
            *top,
        ],
        body,
    )
    return accepted(
        name,
        "Gmail (web)",
        "Forward: orders typed above '---------- Forwarded message ---------'; the report's "
        "attachments go with it, the untouched alice.orders.toml among them",
        "alice",
        raw,
        ALICE3,
    )


def edited_report_text(rep: Report, placed: Orders) -> str:
    """The text report with the order file between the cut lines replaced by `placed`."""
    lines = rep.text.split("\n")
    cuts = [i for i, line in enumerate(lines) if line.startswith("-- 8<")]
    assert len(cuts) == 2
    new = lines[: cuts[0] + 1] + placed.text.rstrip("\n").split("\n") + [""] + lines[cuts[1] :]
    return "\n".join(new)


def edited_report_html(rep: Report, placed: Orders) -> str:
    body = report_body(rep.html)
    start = body.index("<pre>game = ")
    end = body.index("</pre>", start)
    return body[:start] + "<pre>" + html.escape(placed.text) + body[end:]


@case
def gmail_web_edited_in_quote() -> Case:
    name = "gmail-web-orders-edited-in-quote.eml"
    placed = orders("alice", [("Brazil", 9, ""), ("Afghanistan", "rest", "")])
    quoted_text = html_text(edited_report_html(A, placed))
    raw = gmail_reply(
        name,
        A,
        "",
        at(1, 12, 30),
        quoted_text=quoted_text,
        quoted_html=edited_report_html(A, placed),
    )
    return accepted(
        name,
        "Gmail (web)",
        "Reply with nothing written above the quote: the player edited the order file inside "
        "the quoted report ('>' lines in text/plain, the <pre> in the gmail_quote)",
        "alice",
        raw,
        placed,
        ["in the quoted part of your message"],
    )


@case
def gmail_web_template_only_in_quote() -> Case:
    name = "gmail-web-template-only-in-quote.eml"
    raw = gmail_reply(name, A, "Here are my orders, good luck all!\n", at(1, 13, 5))
    return Case(
        name,
        "Gmail (web)",
        "Reply saying 'Here are my orders' with no orders pasted: the only order file is the "
        "untouched one in the quoted report",
        "rejected",
        "alice",
        raw,
        None,
        ["no orders found", "the ready order file"],
    )


def new_message(
    name: str,
    player: str,
    subject: str,
    when: datetime,
    parts: Sequence[bytes],
    mid: str,
    boundary: str,
    extra: Sequence[tuple[str, str]] = (),
    first: Sequence[tuple[str, str]] = (("MIME-Version", "1.0"),),
) -> bytes:
    top, body = multipart("mixed", boundary, parts)
    headers = [
        *first,
        ("From", who(player)),
        ("Date", rfc_date(when)),
        ("Message-ID", mid),
        ("Subject", subject),
        ("To", MODERATOR),
        *extra,
        *top,
    ]
    return message(headers, body)


@case
def gmail_web_new_with_ready_file() -> Case:
    name = "gmail-web-new-message-ready-file-attached.eml"
    rep = A
    alt = nested(
        "alternative",
        gmail_boundary(name, 1),
        [
            text_part("Happy with the default, Scandinavia it is.\n", charset="UTF-8"),
            text_part(
                '<div dir="ltr">Happy with the default, Scandinavia it is.</div>\n',
                "html",
                charset="UTF-8",
            ),
        ],
    )
    att = gmail_attach(name, "alice.orders.toml", rep.ready.encode(), "application/octet-stream", 1)
    raw = new_message(
        name, "alice", "orders", at(1, 14, 0), [alt, att], gmail_id(name), gmail_boundary(name, 0)
    )
    c = Case(
        name,
        "Gmail (web)",
        "New message with the untouched ready file alice.orders.toml attached: the player "
        "chose the ready orders",
        "accepted",
        "alice",
        raw,
        template_data("alice"),
        ["accepted"],
        untouched=True,
    )
    return c


@case
def gmail_web_signoff() -> Case:
    name = "gmail-web-sign-off-after-orders.eml"
    typed = ALICE2.text + "\nLet's see how it goes!\n=)\nAlice\n"
    raw = gmail_reply(name, A, typed, at(1, 15, 20))
    return accepted(
        name,
        "Gmail (web)",
        'Orders followed by a sign-off with TOML characters in it ("Let\'s see how it goes!", '
        "'=)') and the quoted report",
        "alice",
        raw,
        ALICE2,
    )


@case
def gmail_web_question() -> Case:
    name = "gmail-web-question.eml"
    typed = (
        "Hi,\n\nI deleted my last report, could you resend it? What is the deadline?\n\n"
        "Thanks\nBob\n"
    )
    top, body = multipart(
        "alternative",
        gmail_boundary(name, 1),
        [text_part(typed, charset="UTF-8"), text_part(lines_html(typed), "html", charset="UTF-8")],
    )
    raw = message(
        [
            ("MIME-Version", "1.0"),
            ("From", who("bob")),
            ("Date", rfc_date(at(1, 16, 3, -5))),
            ("Message-ID", gmail_id(name)),
            ("Subject", "question about the game"),
            ("To", MODERATOR),
            *top,
        ],
        body,
    )
    return Case(
        name,
        "Gmail (web)",
        "A question to the moderator, no orders: 'I deleted my last report, could you resend "
        "it? What is the deadline?'",
        "question",
        "bob",
        raw,
        None,
        ["passed to the moderator"],
    )


def gmail_simple(
    name: str, player: str, subject: str, typed: str, when: datetime, rep: Report | None = None
) -> bytes:
    top, body = multipart(
        "alternative",
        gmail_boundary(name, 1),
        [
            text_part(hard_wrap(typed, 78), charset="UTF-8"),
            text_part(f'<div dir="ltr">{lines_html(typed)}</div>', "html", charset="UTF-8"),
        ],
    )
    headers = [("MIME-Version", "1.0")]
    if rep is not None:
        headers += reply_headers(rep)
    headers += [
        ("From", who(player)),
        ("Date", rfc_date(when)),
        ("Message-ID", gmail_id(name)),
        ("Subject", words(subject)),
        ("To", MODERATOR),
        *top,
    ]
    return message(headers, body)


@case
def gmail_web_resend_subject() -> Case:
    name = "gmail-web-resend-in-subject.eml"
    raw = gmail_simple(name, "carol", "resend", "", at(1, 17, 45))
    return Case(
        name,
        "Gmail (web)",
        "New message with the subject 'resend' and an empty body",
        "resend",
        "carol",
        raw,
    )


def earlier_orders_message(name: str, rep: Report, placed: Orders, when: datetime) -> bytes:
    """The player's earlier message with orders (a Gmail for Android reply)."""
    return gmail_reply(
        name + "/earlier",
        rep,
        placed.text,
        when,
        attribution="On Mon, 1 Mar 2027, 09:00 <moderator@example.org> wrote:",
        android=True,
    )


@case
def gmail_web_forward_as_attachment() -> Case:
    name = "gmail-web-forward-earlier-as-attachment.eml"
    earlier = earlier_orders_message(name, A, ALICE2, at(1, 9, 40))
    typed = "I sent these from my phone this morning but got no answer, forwarding the message.\n"
    alt = nested(
        "alternative",
        gmail_boundary(name, 1),
        [text_part(typed, charset="UTF-8"), text_part(lines_html(typed), "html", charset="UTF-8")],
    )
    fname = "Re_ [spring-2027] turn 0_ your move.eml"
    att = part(
        [
            ("Content-Type", f'message/rfc822; name="{fname}"'),
            ("Content-Disposition", f'attachment; filename="{fname}"'),
            ("Content-ID", f"<{token(name, 12)}>"),
            ("X-Attachment-Id", token(name, 12)),
        ],
        earlier,
    )
    raw = new_message(
        name,
        "alice",
        "Fwd: Re: [spring-2027] turn 0: your move",
        at(1, 18, 10),
        [alt, att],
        gmail_id(name),
        gmail_boundary(name, 0),
    )
    return accepted(
        name,
        "Gmail (web)",
        "'Forward as attachment' of the player's earlier order message (message/rfc822), "
        "with a line of text and no orders of its own",
        "alice",
        raw,
        ALICE2,
        ["in the message attached to yours"],
    )


@case
def gmail_web_two_sets() -> Case:
    name = "gmail-web-two-different-order-sets.eml"
    typed = "New plan, see below. (I also attached the file from this morning.)\n\n" + ALICE.text
    alt = nested(
        "alternative",
        gmail_boundary(name, 1),
        [
            text_part(hard_wrap(typed, 78), charset="UTF-8"),
            text_part(f'<div dir="ltr">{lines_html(typed)}</div>', "html", charset="UTF-8"),
        ],
    )
    att = gmail_attach(name, "orders.toml", ALICE2.text.encode(), "application/octet-stream", 1)
    raw = new_message(
        name, "alice", "orders", at(1, 19, 0), [alt, att], gmail_id(name), gmail_boundary(name, 0)
    )
    return Case(
        name,
        "Gmail (web)",
        "Orders typed in the text and a different order file attached",
        "rejected",
        "alice",
        raw,
        None,
        ["two different sets of orders"],
    )


@case
def gmail_vacation() -> Case:
    name = "gmail-vacation-reply.eml"
    typed = "I'm hiking until 8 March with no signal. I'll answer when I'm back.\n"
    top, body = multipart(
        "alternative",
        gmail_boundary(name, 1),
        [text_part(typed, charset="UTF-8"), text_part(lines_html(typed), "html", charset="UTF-8")],
    )
    raw = message(
        [
            ("MIME-Version", "1.0"),
            ("From", who("carol")),
            ("Date", rfc_date(at(1, 9, 0))),
            ("Auto-Submitted", "auto-replied"),
            ("Message-ID", gmail_id(name)),
            ("Subject", f"Re: {C.subject}"),
            ("To", MODERATOR),
            *reply_headers(C),
            *top,
        ],
        body,
    )
    return Case(
        name,
        "Gmail (web)",
        "Gmail's vacation responder answering the report",
        "unanswered",
        "carol",
        raw,
    )


@case
def gmail_web_whole_report_back() -> Case:
    name = "gmail-web-whole-report-pasted-edited.eml"
    text = edited_report_text(B, BOB2)
    raw = gmail_simple(name, "bob", f"Re: {B.subject}", text, at(1, 20, 30, -5), rep=B)
    return accepted(
        name,
        "Gmail (web)",
        "The whole text report pasted back into the reply, the order file edited between the "
        "cut lines",
        "bob",
        raw,
        BOB2,
    )


# ---- Gmail (Android) ----


@case
def gmail_android_reply() -> Case:
    name = "gmail-android-reply.eml"
    raw = gmail_reply(
        name,
        C,
        CAROL.text,
        at(1, 10, 12, 1),
        attribution="On Mon, 1 Mar 2027, 10:00 <moderator@example.org> wrote:",
        android=True,
    )
    return accepted(
        name,
        "Gmail (Android)",
        "Reply from the Gmail app: <div dir=\"auto\">, attribution without 'at', quote in '>' "
        "lines and a gmail_quote div",
        "carol",
        raw,
        CAROL,
    )


@case
def gmail_android_attach() -> Case:
    name = "gmail-android-attached-edited-file.eml"
    placed = orders("carol", [("Ukraine", 9, ""), ("New Guinea", "rest", "")])
    alt = nested(
        "alternative",
        gmail_boundary(name, 1),
        [
            text_part("\n", charset="UTF-8"),
            text_part('<div dir="auto"></div>\n', "html", charset="UTF-8"),
        ],
    )
    att = gmail_attach(
        name, "carol.orders.toml", placed.text.encode(), "application/octet-stream", 1
    )
    raw = new_message(
        name, "carol", "", at(1, 11, 2), [alt, att], gmail_id(name), gmail_boundary(name, 0)
    )
    return accepted(
        name,
        "Gmail (Android)",
        "New message with no subject and no text, the edited carol.orders.toml attached "
        "from the phone's files",
        "carol",
        raw,
        placed,
    )


@case
def gmail_android_resend_first_line() -> Case:
    name = "gmail-android-resend-first-line.eml"
    raw = gmail_simple(
        name, "bob", f"Re: {B.subject}", "Resend please\n\nBob\n", at(1, 21, 0, -5), rep=B
    )
    return Case(
        name,
        "Gmail (Android)",
        "Reply whose first line is 'Resend please'",
        "resend",
        "bob",
        raw,
    )


@case
def gmail_android_resend_indonesian() -> Case:
    name = "gmail-android-resend-indonesian.eml"
    raw = gmail_simple(
        name, "alice", "kirim ulang", "Tolong kirim ulang laporan saya.\n", at(1, 21, 30, 7)
    )
    return Case(
        name,
        "Gmail (Android)",
        "Subject 'kirim ulang' (Indonesian: send again)",
        "resend",
        "alice",
        raw,
    )


# ---- Outlook 2016 (desktop) ----


def outlook_id(name: str) -> str:
    t = token(name, 30)
    return f"<000{t[:1]}01db{t[1:5]}${t[5:13]}${t[13:21]}$@example.org>"


def outlook_boundary(name: str, n: int = 0) -> str:
    t = token(f"{name}/{n}", 16, "0123456789ABCDEF")
    return f"----=_NextPart_000_00{n}{t[0]}_01DB8A{t[1:3]}.{t[3:11]}"


def outlook_headers(
    name: str, player: str, subject: str, when: datetime, rep: Report | None, lang: str = "en-us"
) -> list[tuple[str, str]]:
    headers = [
        ("From", who(player)),
        ("To", f"<{MODERATOR}>"),
    ]
    if rep is not None:
        headers += reply_headers(rep)
    headers += [
        ("Subject", subject),
        ("Date", rfc_date(when)),
        ("Message-ID", outlook_id(name)),
        ("MIME-Version", "1.0"),
        ("X-Mailer", "Microsoft Outlook 16.0"),
        (
            "Thread-Index",
            "AQH" + token(name, 25, ALNUM),
        ),
        ("Content-Language", lang),
    ]
    return headers


OUTLOOK_EN = (
    "-----Original Message-----\n"
    "From: moderator@example.org <moderator@example.org> \n"
    "Sent: Monday, March 1, 2027 9:00 AM\n"
    "To: {player}@example.org\n"
    "Subject: {subject}\n"
)
OUTLOOK_DE = (
    "-----Ursprüngliche Nachricht-----\n"
    "Von: moderator@example.org <moderator@example.org> \n"
    "Gesendet: Montag, 1. März 2027 10:00\n"
    "An: {player}@example.org\n"
    "Betreff: {subject}\n"
)
OUTLOOK_FR = (
    "-----Message d'origine-----\n"
    "De : moderator@example.org <moderator@example.org> \n"
    "Envoyé : lundi 1 mars 2027 10:00\n"
    "À : {player}@example.org\n"
    "Objet : {subject}\n"
)


def outlook_plain(
    name: str,
    rep: Report,
    typed: str,
    when: datetime,
    block: str,
    original: str | None = None,
    subject_prefix: str = "RE: ",
    charset: str = "us-ascii",
    lang: str = "en-us",
    separator: bool = True,
) -> bytes:
    """Outlook's plain-text reply: the text typed, then the header block of the original and
    the original itself unquoted (Outlook's default 'include original message text')."""
    head = block.format(player=rep.player, subject=rep.subject)
    if not separator:
        head = head.split("\n", 1)[1]
    body = (
        typed.rstrip("\n") + "\n\n" + head + "\n" + (original if original is not None else rep.text)
    )
    return message(
        [
            *outlook_headers(name, rep.player, subject_prefix + rep.subject, when, rep, lang),
            ("Content-Type", f'text/plain;{CRLF}\tcharset="{charset}"'),
            ("Content-Transfer-Encoding", "quoted-printable" if charset != "us-ascii" else "7bit"),
        ],
        qp(body, charset) if charset != "us-ascii" else plain_bytes(body),
    )


@case
def outlook_en_plain() -> Case:
    name = "outlook2016-en-plain-reply.eml"
    raw = outlook_plain(name, B, BOB.text, at(1, 14, 30, -5), OUTLOOK_EN)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "Plain-text reply (mail read as plain text): orders typed on top, then "
        "'-----Original Message-----', From:/Sent:/To:/Subject: and the whole report unquoted, "
        "its cut lines and ready order file included",
        "bob",
        raw,
        BOB,
    )


@case
def outlook_en_edited_below() -> Case:
    name = "outlook2016-en-edited-below-separator.eml"
    original = edited_report_text(B, BOB2)
    raw = outlook_plain(name, B, "", at(1, 15, 0, -5), OUTLOOK_EN, original=original)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "Plain-text reply with nothing typed on top: the order file edited in place in the "
        "unquoted original below '-----Original Message-----'",
        "bob",
        raw,
        BOB2,
        ["in the quoted part of your message"],
    )


@case
def outlook_en_template_below() -> Case:
    name = "outlook2016-en-only-untouched-original.eml"
    raw = outlook_plain(name, B, "Thanks, will send later today.\n", at(1, 15, 30, -5), OUTLOOK_EN)
    return Case(
        name,
        "Outlook 2016 (English)",
        "Plain-text reply 'will send later': the only order file is the untouched one in the "
        "original below the separator",
        "rejected",
        "bob",
        raw,
        None,
        ["no orders found", "the ready order file"],
    )


def outlook_html_page(typed_html: str, header_html: str, original_html: str) -> str:
    return (
        '<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:'
        'office" xmlns:w="urn:schemas-microsoft-com:office:word" xmlns:m="http://schemas.'
        'microsoft.com/office/2004/12/omml" xmlns="http://www.w3.org/TR/REC-html40"><head>'
        '<meta http-equiv=Content-Type content="text/html; charset=utf-8"><meta name=Generator '
        'content="Microsoft Word 15 (filtered medium)"><style><!--\n'
        "p.MsoNormal, li.MsoNormal, div.MsoNormal\n\t{margin:0cm;\n\tfont-size:11.0pt;\n"
        '\tfont-family:"Calibri",sans-serif;}\n--></style></head><body lang=EN-US '
        'link="#0563C1" vlink="#954F72"><div class=WordSection1>'
        f"{typed_html}"
        "<div><div style='border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm'>"
        f"<p class=MsoNormal>{header_html}<o:p></o:p></p></div></div>"
        "<p class=MsoNormal><o:p>&nbsp;</o:p></p>"
        f"{original_html}</div></body></html>\n"
    )


def outlook_msonormal(text: str) -> str:
    out = []
    for line in text.rstrip("\n").split("\n"):
        inner = (
            html.escape(line, quote=False).replace("  ", " &nbsp;") if line else "<o:p>&nbsp;</o:p>"
        )
        out.append(f"<p class=MsoNormal>{inner}<o:p></o:p></p>")
    return "\n".join(out) + "\n"


def outlook_html_reply(
    name: str,
    rep: Report,
    typed: str,
    when: datetime,
    labels: tuple[str, str, str, str],
    sent: str,
    subject_prefix: str,
    lang: str,
) -> bytes:
    """Outlook's HTML reply: its text/plain has the header block with no separator line (the
    HTML draws a border instead)."""
    frm, snt, to, subj = labels
    block = (
        f"{frm} moderator@example.org <moderator@example.org> \n{snt} {sent}\n"
        f"{to} {rep.player}@example.org\n{subj} {rep.subject}\n"
    )
    plain = (
        hard_wrap(typed.rstrip("\n"), 76) + "\n\n" + block + "\n" + html_text(report_body(rep.html))
    )
    header_html = (
        f"<b>{frm}</b> moderator@example.org &lt;moderator@example.org&gt; <br><b>{snt}</b> "
        f"{html.escape(sent)}<br><b>{to}</b> {rep.player}@example.org<br><b>{subj}</b> "
        f"{html.escape(rep.subject)}"
    )
    page = outlook_html_page(outlook_msonormal(typed), header_html, report_body(rep.html))
    top, body = multipart(
        "alternative",
        outlook_boundary(name),
        [
            text_part(plain, charset="utf-8"),
            text_part(page, "html", charset="utf-8"),
        ],
    )
    headers = outlook_headers(name, rep.player, subject_prefix + rep.subject, when, rep, lang)
    return message([*headers, *top], b"This is a multipart message in MIME format.\r\n\r\n" + body)


@case
def outlook_en_no_separator() -> Case:
    name = "outlook2016-en-html-reply-header-block.eml"
    raw = outlook_html_reply(
        name,
        C,
        CAROL2.text,
        at(1, 16, 0),
        ("From:", "Sent:", "To:", "Subject:"),
        "Monday, March 1, 2027 9:00 AM",
        "RE: ",
        "en-gb",
    )
    return accepted(
        name,
        "Outlook 2016 (English)",
        "HTML reply: text/plain with the From:/Sent:/To:/Subject: block and no separator line "
        "above the report (the HTML draws a border instead)",
        "carol",
        raw,
        CAROL2,
    )


@case
def outlook_en_underscores() -> Case:
    name = "outlook2016-en-underscore-separator.eml"
    block = (
        "________________________________\n"
        "From: moderator@example.org [mailto:moderator@example.org]\n"
        "Sent: Monday, March 01, 2027 9:00 AM\n"
        "To: {player}@example.org\n"
        "Subject: {subject}\n"
    )
    raw = outlook_plain(name, A, ALICE.text, at(1, 16, 40), block)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "Plain-text reply with the older separator, a line of underscores, above From:/Sent:/"
        "To:/Subject: and the unquoted report",
        "alice",
        raw,
        ALICE,
    )


@case
def outlook_en_read_receipt() -> Case:
    name = "outlook2016-en-read-receipt.eml"
    human = (
        "Your message\n\n"
        f"  To: bob@example.org\n  Subject: {B.subject}\n"
        "  Sent: Monday, March 1, 2027 4:00:00 AM (UTC-05:00) Eastern Time (US & Canada)\n\n"
        "was read on Monday, March 1, 2027 8:12:43 AM (UTC-05:00) Eastern Time (US & Canada).\n"
    )
    report = (
        "Reporting-UA: DESKTOP-7K2M4QP; Microsoft Outlook 16.0\n"
        "Final-Recipient: rfc822;bob@example.org\n"
        f"Original-Message-ID: {B.message_id}\n"
        "Disposition: manual-action/MDN-sent-manually; displayed\n"
    )
    top, body = multipart(
        "report",
        outlook_boundary(name),
        [
            text_part(human, charset="utf-8", cte="7bit"),
            part([("Content-Type", "message/disposition-notification")], plain_bytes(report)),
        ],
        params="; report-type=disposition-notification",
    )
    headers = outlook_headers(name, "bob", f"Read: {B.subject}", at(1, 13, 12), B)
    return Case(
        name,
        "Outlook 2016 (English)",
        "Read receipt: multipart/report; report-type=disposition-notification, without "
        "Auto-Submitted",
        "unanswered",
        "bob",
        message([*headers, *top], body),
    )


@case
def outlook_en_orders_txt() -> Case:
    name = "outlook2016-en-orders-txt-attached.eml"
    typed = "Hi,\n\nMy orders are in the attached file.\n\nRegards,\nBob\n"
    att = part(
        [
            ("Content-Type", 'text/plain;\r\n\tname="orders.txt"'),
            ("Content-Transfer-Encoding", "quoted-printable"),
            ("Content-Disposition", 'attachment;\r\n\tfilename="orders.txt"'),
        ],
        qp(crlf(BOB2.text)),
    )
    top, body = multipart(
        "mixed", outlook_boundary(name), [text_part(typed, charset="us-ascii", cte="7bit"), att]
    )
    headers = outlook_headers(name, "bob", "orders", at(1, 17, 0, -5), None)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "New message, the orders saved from Notepad as orders.txt and attached",
        "bob",
        message([*headers, *top], b"This is a multipart message in MIME format.\r\n\r\n" + body),
        BOB2,
    )


@case
def outlook_en_toml_txt() -> Case:
    name = "outlook2016-en-orders-toml-txt-attached.eml"
    placed = orders("bob", [("Western Europe", 11, ""), ("India", "rest", "")])
    att = part(
        [
            ("Content-Type", 'text/plain;\r\n\tname="bob.orders.toml.txt"'),
            ("Content-Transfer-Encoding", "7bit"),
            ("Content-Disposition", 'attachment;\r\n\tfilename="bob.orders.toml.txt"'),
        ],
        plain_bytes(placed.text),
    )
    top, body = multipart(
        "mixed", outlook_boundary(name), [text_part("\n", charset="us-ascii", cte="7bit"), att]
    )
    headers = outlook_headers(name, "bob", f"RE: {B.subject}", at(1, 17, 30, -5), B)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "Reply with an empty text and the edited file attached as bob.orders.toml.txt (Notepad "
        "added .txt, Windows hides extensions)",
        "bob",
        message([*headers, *top], body),
        placed,
    )


@case
def outlook_en_bom_crlf() -> Case:
    name = "outlook2016-en-attachment-bom-crlf.eml"
    placed = orders(
        "alice",
        [("Quebec", 5, ""), ("Eastern United States", 5, ""), ("Central America", "rest", "")],
    )
    data = b"\xef\xbb\xbf" + crlf(placed.text).encode()
    att = part(
        [
            ("Content-Type", 'application/octet-stream;\r\n\tname="alice.orders.toml"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-Disposition", 'attachment;\r\n\tfilename="alice.orders.toml"'),
        ],
        b64(data),
    )
    top, body = multipart(
        "mixed",
        outlook_boundary(name),
        [text_part("Orders attached.\n", charset="us-ascii", cte="7bit"), att],
    )
    headers = outlook_headers(name, "alice", "RE: " + A.subject, at(1, 18, 0), A)
    return accepted(
        name,
        "Outlook 2016 (English)",
        "The order file edited in Notepad (UTF-8 with a byte-order mark, CRLF line ends) "
        "attached to a short reply",
        "alice",
        message([*headers, *top], body),
        placed,
    )


@case
def outlook_en_utf16() -> Case:
    name = "outlook2016-en-attachment-utf16.eml"
    placed = orders(
        "carol", [("East Africa", 7, ""), ("South Africa", 7, ""), ("Venezuela", "rest", "")]
    )
    data = crlf(placed.text).encode("utf-16")
    att = part(
        [
            ("Content-Type", 'application/octet-stream;\r\n\tname="carol.orders.toml"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-Disposition", 'attachment;\r\n\tfilename="carol.orders.toml"'),
        ],
        b64(data),
    )
    top, body = multipart(
        "mixed",
        outlook_boundary(name),
        [text_part("see attachment\n", charset="us-ascii", cte="7bit"), att],
    )
    headers = outlook_headers(name, "carol", "orders", at(1, 18, 30), None, "en-gb")
    return accepted(
        name,
        "Outlook 2016 (English)",
        "The order file saved by Notepad as 'Unicode' (UTF-16 with a byte-order mark) and attached",
        "carol",
        message([*headers, *top], body),
        placed,
    )


# TNEF (winmail.dat): written here from the format's description (MS-OXTNEF).


def _tnef_attr(level: int, attr: int, data: bytes) -> bytes:
    return (
        struct.pack("<BII", level, attr, len(data)) + data + struct.pack("<H", sum(data) & 0xFFFF)
    )


def _rtf_compressed_uncompressed(rtf: bytes) -> bytes:
    """PR_RTF_COMPRESSED in its uncompressed form (magic MELA, CRC 0)."""
    return struct.pack("<IIII", len(rtf) + 12, len(rtf), 0x414C454D, 0) + rtf


def tnef(body_rtf: str, subject: str) -> bytes:
    rtf = body_rtf.encode("cp1252")
    comp = _rtf_compressed_uncompressed(rtf)
    props = struct.pack("<I", 2)
    # PR_RTF_COMPRESSED (0x1009, PT_BINARY)
    props += struct.pack("<HH", 0x0102, 0x1009) + struct.pack("<II", 1, len(comp))
    props += comp + b"\0" * (-len(comp) % 4)
    # PR_RTF_IN_SYNC (0x0E1F, PT_BOOLEAN)
    props += struct.pack("<HH", 0x000B, 0x0E1F) + struct.pack("<I", 1)
    out = struct.pack("<IH", 0x223E9F78, 0x0001)
    out += _tnef_attr(1, 0x00089006, struct.pack("<I", 0x00010000))  # attTnefVersion
    out += _tnef_attr(1, 0x00069007, struct.pack("<II", 1252, 0))  # attOemCodepage
    out += _tnef_attr(1, 0x00078008, b"IPM.Microsoft Mail.Note\0")  # attMessageClass
    out += _tnef_attr(1, 0x00018004, subject.encode("cp1252") + b"\0")  # attSubject
    out += _tnef_attr(1, 0x00069003, props)  # attMsgProps
    return out


def rtf_from_text(text: str) -> str:
    body = "".join(
        line.replace("\\", "\\\\").replace("{", "\\{").replace("}", "\\}") + "\\par\r\n"
        for line in text.rstrip("\n").split("\n")
    )
    return (
        "{\\rtf1\\ansi\\ansicpg1252\\fromtext \\fbidis \\deff0{\\fonttbl\r\n"
        "{\\f0\\fswiss Arial;}\r\n{\\f1\\fmodern Courier New;}\r\n{\\f2\\fnil\\fcharset2 Symbol;}"
        "\r\n{\\f3\\fmodern\\fcharset0 Courier New;}}\r\n"
        "{\\colortbl\\red0\\green0\\blue0;\\red0\\green0\\blue255;}\r\n"
        "\\uc1\\pard\\plain\\deftab360 \\f0\\fs20 " + body + "}\r\n"
    )


@case
def outlook_winmail() -> Case:
    name = "outlook2016-en-winmail-dat.eml"
    placed = orders("bob", [("Northern Europe", 8, "hold the middle"), ("Congo", "rest", "")])
    typed = "Hi,\n\nMy orders:\n\n" + placed.text + "\nBob\n"
    dat = tnef(rtf_from_text(typed), f"RE: {B.subject}")
    att = part(
        [
            ("Content-Type", 'application/ms-tnef;\r\n\tname="winmail.dat"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-Disposition", 'attachment;\r\n\tfilename="winmail.dat"'),
        ],
        b64(dat),
    )
    top, body = multipart(
        "mixed", outlook_boundary(name), [text_part("\n", charset="us-ascii", cte="7bit"), att]
    )
    headers = outlook_headers(name, "bob", f"RE: {B.subject}", at(1, 19, 0, -5), B)
    headers.append(("X-MS-TNEF-Correlator", f"<{token(name, 24)}@example.org>"))
    return accepted(
        name,
        "Outlook 2016 (English)",
        "Reply in Rich Text Format: an empty text/plain and winmail.dat (application/ms-tnef) "
        "whose RTF body holds the orders",
        "bob",
        message([*headers, *top], body),
        placed,
    )


@case
def outlook_en_smime() -> Case:
    name = "outlook2016-en-smime-encrypted.eml"
    # A DER ContentInfo for envelopedData (1.2.840.113549.1.7.3), the rest as good as random.
    inner = pseudo_bytes(name, 1400)
    der = (
        b"\x30\x82"
        + struct.pack(">H", len(inner) + 13)
        + b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x07\x03"
    )
    der += b"\xa0\x82" + struct.pack(">H", len(inner)) + inner
    headers = outlook_headers(name, "alice", f"RE: {A.subject}", at(1, 19, 30), A)
    headers += [
        (
            "Content-Type",
            'application/pkcs7-mime;\r\n\tsmime-type=enveloped-data;\r\n\tname="smime.p7m"',
        ),
        ("Content-Transfer-Encoding", "base64"),
        ("Content-Disposition", 'attachment;\r\n\tfilename="smime.p7m"'),
    ]
    return Case(
        name,
        "Outlook 2016 (English)",
        "Reply sent S/MIME encrypted (application/pkcs7-mime; smime-type=enveloped-data)",
        "rejected",
        "alice",
        message(headers, b64(der)),
        None,
        ["sent the message encrypted"],
    )


@case
def outlook_automatic_reply() -> Case:
    name = "outlook2016-en-automatic-reply.eml"
    headers = outlook_headers(name, "carol", f"Automatic reply: {C.subject}", at(1, 9, 0), C)
    headers += [
        ("Auto-Submitted", "auto-generated"),
        ("X-Auto-Response-Suppress", "All"),
        ("Content-Type", 'text/plain; charset="us-ascii"'),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    return Case(
        name,
        "Outlook 2016 (English)",
        "Out-of-office 'Automatic reply:' from Exchange",
        "unanswered",
        "carol",
        message(headers, plain_bytes("I am out of the office until 8 March.\n")),
    )


# German and French Outlook


@case
def outlook_de_plain() -> Case:
    name = "outlook2016-de-plain-reply.eml"
    placed = orders(
        "alice",
        [
            ("Iceland", 6, "Nordflanke"),
            ("Scandinavia", 6, "gegen Ukraine"),
            ("Afghanistan", "rest", "Mitte"),
        ],
    )
    typed = "Hallo,\n\nhier meine Befehle:\n\n" + placed.text + "\nViele Grüße\nAlice\n"
    raw = outlook_plain(
        name,
        A,
        typed,
        at(1, 10, 30, 1),
        OUTLOOK_DE,
        subject_prefix="AW: ",
        charset="iso-8859-1",
        lang="de-de",
    )
    return accepted(
        name,
        "Outlook 2016 (German)",
        "Plain-text reply in ISO-8859-1: orders, then '-----Ursprüngliche Nachricht-----' with "
        "Von:/Gesendet:/An:/Betreff: and the report unquoted",
        "alice",
        raw,
        placed,
    )


@case
def outlook_de_no_separator() -> Case:
    name = "outlook2016-de-html-reply-header-block.eml"
    raw = outlook_html_reply(
        name,
        B,
        BOB.text + "\nGruß Bob\n",
        at(1, 11, 30, 1),
        ("Von:", "Gesendet:", "An:", "Betreff:"),
        "Montag, 1. März 2027 10:00",
        "AW: ",
        "de-de",
    )
    return accepted(
        name,
        "Outlook 2016 (German)",
        "HTML reply: text/plain with the Von:/Gesendet:/An:/Betreff: block and no separator "
        "line above the report",
        "bob",
        raw,
        BOB,
    )


@case
def outlook_de_forward() -> Case:
    name = "outlook2016-de-forward-with-attachments.eml"
    rep = C
    typed = "Befehle anbei im Text, die Datei ist nur die alte.\n\n" + CAROL.text
    block = (
        "-----Ursprüngliche Nachricht-----\nVon: moderator@example.org <moderator@example.org> \n"
        "Gesendet: Montag, 1. März 2027 10:00\nAn: carol@example.org\n"
        f"Betreff: {rep.subject}\n"
    )
    body = typed + "\n" + block + "\n" + rep.text
    text = text_part(body, charset="iso-8859-1")
    atts = [
        part(
            [
                ("Content-Type", 'text/plain;\r\n\tname="carol.orders.toml"'),
                ("Content-Transfer-Encoding", "quoted-printable"),
                ("Content-Disposition", 'attachment;\r\n\tfilename="carol.orders.toml"'),
            ],
            qp(rep.ready),
        ),
        part(
            [
                ("Content-Type", 'application/json;\r\n\tname="carol.view.json"'),
                ("Content-Transfer-Encoding", "base64"),
                ("Content-Disposition", 'attachment;\r\n\tfilename="carol.view.json"'),
            ],
            b64(rep.view),
        ),
    ]
    top, mbody = multipart("mixed", outlook_boundary(name), [text, *atts])
    headers = outlook_headers(name, "carol", f"WG: {rep.subject}", at(1, 12, 0, 1), rep, "de-de")
    return accepted(
        name,
        "Outlook 2016 (German)",
        "Forward (WG:) with the orders typed on top; Outlook carries the report's attachments, "
        "the untouched carol.orders.toml among them",
        "carol",
        message([*headers, *top], mbody),
        CAROL,
    )


@case
def outlook_de_rfc2047_name() -> Case:
    name = "outlook2016-de-attachment-name-encoded-word.eml"
    placed = orders("bob", [("Southern Europe", 10, "Südflanke"), ("North Africa", "rest", "")])
    fname = Header("Befehle für Runde 0.toml", "utf-8").encode()
    att = part(
        [
            ("Content-Type", f'application/octet-stream;\r\n\tname="{fname}"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-Disposition", f'attachment;\r\n\tfilename="{fname}"'),
        ],
        b64(placed.text.encode()),
    )
    top, body = multipart(
        "mixed",
        outlook_boundary(name),
        [text_part("Anbei.\n", charset="us-ascii", cte="7bit"), att],
    )
    headers = outlook_headers(name, "bob", "Befehle", at(1, 12, 30, 1), None, "de-de")
    return accepted(
        name,
        "Outlook 2016 (German)",
        "Attachment named 'Befehle für Runde 0.toml', the name written as an RFC 2047 encoded word",
        "bob",
        message([*headers, *top], body),
        placed,
    )


@case
def outlook_fr_plain() -> Case:
    name = "outlook2016-fr-plain-reply.eml"
    placed = orders("carol", [("Great Britain", 8, "tête de pont"), ("Mongolia", "rest", "")])
    typed = "Bonjour,\n\nVoici mes ordres :\n\n" + placed.text + "\nCordialement,\nCarol\n"
    raw = outlook_plain(
        name,
        C,
        typed,
        at(1, 10, 45, 1),
        OUTLOOK_FR,
        subject_prefix="RE : ",
        charset="iso-8859-1",
        lang="fr-fr",
    )
    return accepted(
        name,
        "Outlook 2016 (French)",
        "Plain-text reply: orders, then '-----Message d'origine-----' with De :/Envoyé :/À :/"
        "Objet : and the report unquoted",
        "carol",
        raw,
        placed,
    )


@case
def outlook_fr_no_separator() -> Case:
    name = "outlook2016-fr-html-reply-header-block.eml"
    raw = outlook_html_reply(
        name,
        A,
        ALICE3.text,
        at(1, 11, 0, 1),
        ("De :", "Envoyé :", "À :", "Objet :"),
        "lundi 1 mars 2027 10:00",
        "RE : ",
        "fr-fr",
    )
    return accepted(
        name,
        "Outlook 2016 (French)",
        "HTML reply: text/plain with the De :/Envoyé :/À :/Objet : block and no separator line",
        "alice",
        raw,
        ALICE3,
    )


@case
def outlook_fr_cp1252_quotes() -> Case:
    name = "outlook2016-fr-windows-1252-curly-quotes.eml"
    placed = orders("bob", [("Yakutsk", 7, "le nord"), ("Western Australia", "rest", "")])
    curly = re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", placed.text)
    typed = "Bonjour,\n\n" + curly + "\nBob\n"
    raw = outlook_plain(
        name,
        B,
        typed,
        at(1, 13, 0, 1),
        OUTLOOK_FR,
        subject_prefix="RE : ",
        charset="windows-1252",
        lang="fr-fr",
    )
    assert b"=93" in raw and b"=94" in raw
    return accepted(
        name,
        "Outlook 2016 (French)",
        'Plain-text reply in windows-1252 where AutoCorrect turned every " into curly quotes '
        "(bytes 0x93/0x94)",
        "bob",
        raw,
        placed,
        ["curly quotes"],
    )


# ---- Outlook on the web ----


OWA_STYLE = (
    "font-family: Aptos, Aptos_EmbeddedFont, Aptos_MSFontService, Calibri, Helvetica, "
    "sans-serif; font-size: 12pt; color: rgb(0, 0, 0);"
)


def owa_id(name: str) -> str:
    t = token(name, 26, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return f"<AM9PR07MB{t[:6]}{t[6:22]}@AM9PR07MB{t[:6]}.eurprd07.prod.outlook.com>"


def owa_reply(
    name: str, rep: Report, typed: str, when: datetime, original_html: str | None = None
) -> bytes:
    block = (
        "________________________________\n"
        "From: moderator@example.org <moderator@example.org>\n"
        "Sent: Monday, March 1, 2027 10:00\n"
        f"To: {rep.player}@example.org <{rep.player}@example.org>\n"
        f"Subject: {rep.subject}\n"
    )
    orig = original_html if original_html is not None else report_body(rep.html)
    plain = typed.rstrip("\n").replace("  ", " \u00a0") + "\n\n" + block + "\n" + html_text(orig)
    style = OWA_STYLE
    mine = (
        lines_html(
            typed.replace("  ", " &nbsp;"), "div", f' class="elementToProof" style="{style}"'
        ).replace("&amp;nbsp;", "&nbsp;")
        if typed
        else ""
    )
    page = (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n'
        '<style type="text/css" style="display:none;"> P {margin-top:0;margin-bottom:0;} </style>\n'
        '</head>\n<body dir="ltr">\n'
        f"{mine}"
        '<div id="appendonsend"></div>\n'
        '<hr style="display:inline-block;width:98%" tabindex="-1">\n'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt"'
        ' color="#000000"><b>From:</b> moderator@example.org &lt;moderator@example.org&gt;<br>'
        "<b>Sent:</b> Monday, March 1, 2027 10:00<br>"
        f"<b>To:</b> {rep.player}@example.org &lt;{rep.player}@example.org&gt;<br>"
        f"<b>Subject:</b> {html.escape(rep.subject)}</font>\n<div>&nbsp;</div>\n</div>\n"
        f"<div>{orig}</div>\n</body>\n</html>\n"
    )
    bnd = f"_000_{owa_id(name)[1:26]}_"
    top, body = multipart(
        "alternative",
        bnd,
        [text_part(plain), text_part(page, "html")],
    )
    headers = [
        ("From", who(rep.player)),
        ("To", f'"{MODERATOR}" <{MODERATOR}>'),
        ("Subject", f"Re: {rep.subject}"),
        ("Thread-Topic", rep.subject),
        (
            "Thread-Index",
            "AQH" + token(name, 22, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
        ),
        ("Date", rfc_date(when)),
        ("Message-ID", owa_id(name)),
        *reply_headers(rep),
        ("Accept-Language", "en-GB, en-US"),
        ("Content-Language", "en-GB"),
        ("X-MS-Has-Attach", ""),
        ("X-MS-TNEF-Correlator", ""),
        ("msip_labels", ""),
        *top,
        ("MIME-Version", "1.0"),
    ]
    return message(headers, body)


@case
def outlook_web_reply() -> Case:
    name = "outlook-web-reply.eml"
    raw = owa_reply(name, C, CAROL.text, at(1, 10, 20))
    return accepted(
        name,
        "Outlook on the web",
        'Reply: each typed line a <div class="elementToProof">, the quote after <hr> and '
        '<div id="divRplyFwdMsg">; text/plain with the underscore separator and non-breaking '
        "spaces in the comment alignment",
        "carol",
        raw,
        CAROL,
    )


@case
def outlook_web_edited_in_original() -> Case:
    name = "outlook-web-orders-edited-in-original.eml"
    placed = orders("carol", [("Irkutsk", 10, ""), ("Northwest Territory", "rest", "")])
    raw = owa_reply(name, C, "", at(1, 11, 20), original_html=edited_report_html(C, placed))
    return accepted(
        name,
        "Outlook on the web",
        "Reply with nothing typed: the order file edited inside the original below divRplyFwdMsg",
        "carol",
        raw,
        placed,
        ["in the quoted part of your message"],
    )


@case
def outlook_web_resend_dutch() -> Case:
    name = "outlook-web-resend-dutch.eml"
    raw = owa_reply(name, A, "Kunt u het rapport opnieuw sturen?\n", at(1, 12, 20, 1))
    raw = raw.replace(f"Subject: Re: {A.subject}".encode(), b"Subject: opnieuw sturen", 1)
    return Case(
        name,
        "Outlook on the web",
        "Reply with the subject 'opnieuw sturen' (Dutch: send again)",
        "resend",
        "alice",
        raw,
    )


# ---- Outlook for iOS ----


@case
def outlook_ios_curly() -> Case:
    name = "outlook-ios-curly-quotes.eml"
    placed = orders("bob", [("Alaska", 12, "the bridge"), ("Egypt", "rest", "")])
    curly = re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", placed.text)
    typed = curly + "\nGet Outlook for iOS<https://aka.ms/o0ukef>\n"
    block = (
        "________________________________\n"
        "From: moderator@example.org <moderator@example.org>\n"
        "Sent: Monday, March 1, 2027 4:00:00 AM\n"
        "To: bob@example.org <bob@example.org>\n"
        f"Subject: {B.subject}\n"
    )
    plain = typed + block + "\n" + html_text(report_body(B.html))
    page = (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n'
        "</head>\n"
        '<body>\n<div dir="ltr">' + br_html(curly) + "</div>\n"
        '<div dir="ltr"><br></div>\n<div id="ms-outlook-mobile-signature" dir="ltr">'
        'Get <a href="https://aka.ms/o0ukef">Outlook for iOS</a></div>\n'
        '<hr style="display:inline-block;width:98%" tabindex="-1">\n'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt"'
        ' color="#000000"><b>From:</b> moderator@example.org &lt;moderator@example.org&gt;<br>'
        "<b>Sent:</b> Monday, March 1, 2027 4:00:00 AM<br><b>To:</b> bob@example.org "
        f"&lt;bob@example.org&gt;<br><b>Subject:</b> {html.escape(B.subject)}</font>"
        f"<div>&nbsp;</div></div>\n<div>{report_body(B.html)}</div>\n</body>\n</html>\n"
    )
    top, body = multipart(
        "alternative",
        f"_000_{owa_id(name)[1:26]}_",
        [text_part(plain), text_part(page, "html")],
    )
    headers = [
        ("From", who("bob")),
        ("To", f'"{MODERATOR}" <{MODERATOR}>'),
        ("Subject", f"Re: {B.subject}"),
        ("Date", rfc_date(at(1, 13, 40, -5))),
        ("Message-ID", owa_id(name)),
        *reply_headers(B),
        ("X-MS-Has-Attach", ""),
        ("Content-Language", "en-US"),
        *top,
        ("MIME-Version", "1.0"),
    ]
    return accepted(
        name,
        "Outlook for iOS",
        "Reply typed on the phone: the keyboard's smart punctuation wrote every \" as curly "
        "quotes (“Alaska”); 'Get Outlook for iOS' and the underscore separator below",
        "bob",
        message(headers, body),
        placed,
        ["curly quotes"],
    )


# ---- Apple Mail (macOS) and iOS Mail ----


def apple_boundary(name: str, ios: bool = False) -> str:
    return ("Apple-Mail-" if ios else "Apple-Mail=_") + uuid(name + "/b")


def apple_id(name: str, domain: str = "example.org") -> str:
    return f"<{uuid(name)}@{domain}>"


@case
def apple_mail_flowed() -> Case:
    name = "apple-mail-flowed-delsp.eml"
    placed = orders(
        "carol",
        [
            (
                "Siam",
                9,
                "Siam is the only way into Australia from Asia, so it is worth a big stack early",
            ),
            ("Venezuela", "rest", "and the same for South America"),
        ],
    )
    typed = placed.text + "\nCarol\n"
    quoted = "On Mar 1, 2027, at 4:00 AM, moderator@example.org wrote:\n\n" + quote(C.text)
    body = flowed(typed + "\n" + quoted, 72, delsp=True)
    headers = [
        ("Mime-Version", "1.0 (Apple Message framework v1085)"),
        ("Content-Type", "text/plain; charset=US-ASCII; delsp=yes; format=flowed"),
        ("Subject", f"Re: {C.subject}"),
        ("From", who("carol")),
        ("In-Reply-To", C.message_id),
        ("Date", rfc_date(at(1, 12, 5, -5))),
        ("Content-Transfer-Encoding", "7bit"),
        ("Message-Id", apple_id(name)),
        ("References", C.message_id),
        ("To", MODERATOR),
        ("X-Mailer", "Apple Mail (2.1085)"),
    ]
    return accepted(
        name,
        "Apple Mail",
        "Plain-text reply in format=flowed with DelSp=yes: the long comment lines soft-broken "
        "(two spaces before each break), the report quoted with '>'",
        "carol",
        message(headers, plain_bytes(body)),
        placed,
    )


@case
def apple_mail_rich() -> Case:
    name = "apple-mail-rich-reply.eml"
    typed = BOB2.text + "\nBob\n"
    attribution = "On 1 Mar 2027, at 09:00, moderator@example.org wrote:"
    plain = typed + "\n" + quote(attribution + "\n\n" + html_text(report_body(B.html)))
    page = (
        '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>'
        '<body style="overflow-wrap: break-word; -webkit-nbsp-mode: space; line-break: '
        'after-white-space;">' + lines_html(typed) + '<div><br><blockquote type="cite">'
        f'<div>{html.escape(attribution)}</div><br class="Apple-interchange-newline">'
        f"<div>{report_body(B.html)}</div></blockquote></div><br></body></html>\n"
    )
    bnd = apple_boundary(name)
    top, body = multipart(
        "alternative",
        bnd,
        [
            text_part(plain, charset="utf-8", cte_first=True, quote_charset=False),
            text_part(page, "html", charset="utf-8", cte_first=True, quote_charset=False),
        ],
    )
    headers = [
        ("From", who("bob")),
        *top,
        ("Mime-Version", "1.0 (Mac OS X Mail 16.0 \\(3776.700.51\\))"),
        ("Subject", f"Re: {B.subject}"),
        ("Date", rfc_date(at(1, 14, 10, 1))),
        *reply_headers(B),
        ("To", MODERATOR),
        ("Message-Id", apple_id(name)),
        ("X-Mailer", "Apple Mail (2.3776.700.51)"),
    ]
    return accepted(
        name,
        "Apple Mail",
        "Rich-text reply: text/plain (quoted-printable, '>' quote with the attribution inside) "
        'and HTML with <blockquote type="cite">',
        "bob",
        message(headers, body),
        BOB2,
    )


@case
def apple_mail_attach() -> Case:
    name = "apple-mail-attached-toml.eml"
    placed = orders("alice", [("Kamchatka", 10, ""), ("Eastern Australia", "rest", "")])
    bnd = apple_boundary(name)
    parts = [
        text_part(
            "Orders attached.\n\n",
            charset="us-ascii",
            cte="7bit",
            cte_first=True,
            quote_charset=False,
        ),
        part(
            [
                ("Content-Disposition", "attachment;\r\n\tfilename=alice.orders.toml"),
                (
                    "Content-Type",
                    'application/octet-stream;\r\n\tx-unix-mode=0644;\r\n\tname="alice.orders.toml"',
                ),
                ("Content-Transfer-Encoding", "7bit"),
            ],
            plain_bytes(placed.text),
        ),
        text_part(
            "\n\nAlice\n", charset="us-ascii", cte="7bit", cte_first=True, quote_charset=False
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = [
        ("From", who("alice")),
        *top,
        ("Mime-Version", "1.0 (Mac OS X Mail 16.0 \\(3776.700.51\\))"),
        ("Subject", "Re: orders"),
        ("Date", rfc_date(at(1, 14, 40, 1))),
        ("To", MODERATOR),
        ("Message-Id", apple_id(name)),
        ("X-Mailer", "Apple Mail (2.3776.700.51)"),
    ]
    return accepted(
        name,
        "Apple Mail",
        "New message with the edited alice.orders.toml attached inline between two text "
        "parts (application/octet-stream; x-unix-mode=0644)",
        "alice",
        message(headers, body),
        placed,
    )


@case
def apple_mail_same_twice() -> Case:
    name = "apple-mail-same-orders-typed-and-attached.eml"
    bnd = apple_boundary(name)
    parts = [
        text_part(
            CAROL2.text + "\n(also attached)\n",
            charset="us-ascii",
            cte="7bit",
            cte_first=True,
            quote_charset=False,
        ),
        part(
            [
                ("Content-Disposition", "attachment;\r\n\tfilename=carol.orders.toml"),
                (
                    "Content-Type",
                    'application/octet-stream;\r\n\tx-unix-mode=0644;\r\n\tname="carol.orders.toml"',
                ),
                ("Content-Transfer-Encoding", "7bit"),
            ],
            plain_bytes(CAROL2.text),
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = [
        ("From", who("carol")),
        *top,
        ("Mime-Version", "1.0 (Mac OS X Mail 16.0 \\(3776.700.51\\))"),
        ("Subject", "orders"),
        ("Date", rfc_date(at(1, 15, 40, 1))),
        ("To", MODERATOR),
        ("Message-Id", apple_id(name)),
        ("X-Mailer", "Apple Mail (2.3776.700.51)"),
    ]
    return accepted(
        name,
        "Apple Mail",
        "The same orders typed in the text and attached as carol.orders.toml (one set, twice)",
        "carol",
        message(headers, body),
        CAROL2,
    )


def ios_headers(
    name: str,
    player: str,
    subject: str,
    when: datetime,
    rep: Report | None,
    top: Sequence[tuple[str, str]],
) -> list[tuple[str, str]]:
    headers = (
        [*top, ("Content-Transfer-Encoding", "7bit")]
        if top[0][1].startswith("multipart")
        else list(top)
    )
    headers += [
        ("From", who(player)),
        ("Mime-Version", "1.0 (1.0)"),
        ("Subject", subject),
        ("Date", rfc_date(when)),
        ("Message-Id", apple_id(name)),
    ]
    if rep is not None:
        headers += [("References", rep.message_id), ("In-Reply-To", rep.message_id)]
    headers += [("To", MODERATOR), ("X-Mailer", "iPhone Mail (21D61)")]
    return headers


@case
def ios_mail_reply() -> Case:
    name = "ios-mail-reply-flowed.eml"
    typed = ALICE.text + "\nSent from my iPhone\n"
    quoted = quote("On 1 Mar 2027, at 09:00, moderator@example.org wrote:\n\n" + A.text)
    body = flowed(typed + "\n" + quoted, 76)
    top = [("Content-Type", "text/plain;\r\n\tcharset=utf-8;\r\n\tformat=flowed")]
    headers = ios_headers(name, "alice", f"Re: {A.subject}", at(1, 9, 55), A, top)
    headers.insert(1, ("Content-Transfer-Encoding", "quoted-printable"))
    return accepted(
        name,
        "iOS Mail",
        "Plain reply from the iPhone (format=flowed, quoted-printable): orders, 'Sent from my "
        "iPhone', then the report quoted with the attribution inside the quote",
        "alice",
        message(headers, qp(body)),
        ALICE,
    )


@case
def ios_mail_inline_image() -> Case:
    name = "ios-mail-text-around-inline-image.eml"
    bnd = apple_boundary(name, ios=True)
    jpeg = (
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x48\x00\x48\x00\x00"
        + pseudo_bytes(name, 900)
        + b"\xff\xd9"
    )
    parts = [
        text_part(
            "My battle plan on paper, orders below the photo:\n",
            charset="us-ascii",
            cte="7bit",
            quote_charset=False,
        ),
        part(
            [
                (
                    "Content-Type",
                    "image/jpeg;\r\n\tname=IMG_0412.jpeg;\r\n\tx-apple-part-url="
                    + uuid(name + "/img"),
                ),
                ("Content-Disposition", "inline;\r\n\tfilename=IMG_0412.jpeg"),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(jpeg),
        ),
        text_part(
            "\n" + BOB.text + "\nSent from my iPhone\n",
            charset="us-ascii",
            cte="7bit",
            quote_charset=False,
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = ios_headers(name, "bob", "Orders", at(1, 10, 5, -5), None, top)
    return accepted(
        name,
        "iOS Mail",
        "New message with a photo put in the middle: text/plain, image/jpeg inline, text/plain "
        "again, the orders in the second text part",
        "bob",
        message(headers, body),
        BOB,
    )


@case
def ios_mail_html_reply() -> Case:
    name = "ios-mail-html-reply.eml"
    typed = CAROL.text + "\nGood luck everyone =)\n\nSent from my iPhone\n"
    attribution = "On 1 Mar 2027, at 09:00, moderator@example.org wrote:"
    plain = typed + "\n" + quote(attribution + "\n\n" + html_text(report_body(C.html)))
    page = (
        '<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"></head>'
        '<body dir="auto"><div dir="ltr">' + br_html(typed) + '</div><div dir="ltr"><br>'
        f'<blockquote type="cite">{html.escape(attribution)}<br><br></blockquote></div>'
        f'<blockquote type="cite"><div dir="ltr">{report_body(C.html)}</div></blockquote>'
        "</body></html>\n"
    )
    bnd = apple_boundary(name, ios=True)
    top, body = multipart(
        "alternative",
        bnd,
        [
            text_part(plain, charset="utf-8", quote_charset=False),
            text_part(page, "html", charset="utf-8", quote_charset=False),
        ],
    )
    headers = ios_headers(name, "carol", f"Re: {C.subject}", at(1, 11, 45), C, top)
    return accepted(
        name,
        "iOS Mail",
        "Reply to the HTML report: multipart/alternative, the orders and a sign-off with '=)' "
        "above 'Sent from my iPhone', the quote in <blockquote type=\"cite\">",
        "carol",
        message(headers, body),
        CAROL,
    )


@case
def ios_mail_resend_swedish() -> Case:
    name = "ios-mail-resend-swedish.eml"
    body = "Skicka igen\n\nSkickat från min iPhone\n\n" + quote(
        "1 mars 2027 kl. 10:00 skrev moderator@example.org:\n\n" + B.text
    )
    top = [("Content-Type", "text/plain;\r\n\tcharset=utf-8")]
    headers = ios_headers(name, "bob", f"Sv: {B.subject}", at(1, 16, 15, 1), B, top)
    headers.insert(1, ("Content-Transfer-Encoding", "quoted-printable"))
    return Case(
        name,
        "iOS Mail",
        "Reply whose first line is 'Skicka igen' (Swedish: send again)",
        "resend",
        "bob",
        message(headers, qp(body)),
    )


@case
def icloud_vacation() -> Case:
    name = "icloud-vacation-reply.eml"
    headers = [
        ("From", who("alice")),
        ("To", MODERATOR),
        ("Subject", f"Auto reply: {A.subject}"),
        ("Date", rfc_date(at(1, 9, 1))),
        ("Message-Id", f"<{uuid(name)}@icloud.com>"),
        ("In-Reply-To", A.message_id),
        ("X-Apple-Action", "VACATION"),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    text = "I am away until 10 March and will read my mail when I am back.\n"
    return Case(
        name,
        "iCloud Mail",
        "iCloud's vacation notice: X-Apple-Action: VACATION and an 'Auto reply:' subject, no "
        "Auto-Submitted",
        "unanswered",
        "alice",
        message(headers, plain_bytes(text)),
    )


@case
def apple_mail_forward_attachment() -> Case:
    name = "apple-mail-forward-as-attachment.eml"
    earlier = earlier_orders_message(name, B, BOB2, at(1, 9, 30, -5))
    bnd = apple_boundary(name)
    parts = [
        text_part(
            "Resending my orders from this morning, in case they got lost.\n\n",
            charset="us-ascii",
            cte="7bit",
            cte_first=True,
            quote_charset=False,
        ),
        part(
            [
                (
                    "Content-Disposition",
                    'attachment;\r\n\tfilename="Re: [spring-2027] turn 0: your move.eml"',
                ),
                (
                    "Content-Type",
                    "message/rfc822;\r\n\tx-unix-mode=0666;\r\n\t"
                    'name="Re: [spring-2027] turn 0: your move.eml"',
                ),
                ("Content-Transfer-Encoding", "7bit"),
            ],
            earlier,
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = [
        ("From", who("bob")),
        *top,
        ("Mime-Version", "1.0 (Mac OS X Mail 16.0 \\(3776.700.51\\))"),
        ("Subject", "Fwd: Re: [spring-2027] turn 0: your move"),
        ("Date", rfc_date(at(1, 18, 40, -5))),
        ("To", MODERATOR),
        ("Message-Id", apple_id(name)),
        ("X-Mailer", "Apple Mail (2.3776.700.51)"),
    ]
    return accepted(
        name,
        "Apple Mail",
        "'Forward as Attachment' of the earlier order message (message/rfc822); the text says "
        "'Resending my orders' and holds none",
        "bob",
        message(headers, body),
        BOB2,
        ["in the message attached to yours"],
    )


# ---- Thunderbird ----


def tb_id(name: str) -> str:
    return f"<{uuid(name).lower()}@example.org>"


def tb_boundary(name: str, n: int = 0) -> str:
    return "------------" + token(f"{name}/{n}", 24, ALNUM)


def tb_headers(
    name: str, player: str, subject: str, when: datetime, rep: Report | None, lang: str = "en-US"
) -> list[tuple[str, str]]:
    headers = [
        ("Message-ID", tb_id(name)),
        ("Date", rfc_date(when)),
        ("MIME-Version", "1.0"),
        ("User-Agent", "Mozilla Thunderbird"),
    ]
    if rep is not None:
        headers += [("Subject", subject), ("Content-Language", lang), ("To", MODERATOR)]
        headers += [
            ("References", rep.message_id),
            ("From", who(player)),
            ("In-Reply-To", rep.message_id),
        ]
    else:
        headers += [
            ("Content-Language", lang),
            ("To", MODERATOR),
            ("From", who(player)),
            ("Subject", subject),
        ]
    return headers


@case
def thunderbird_flowed() -> Case:
    name = "thunderbird-flowed-bottom-posted.eml"
    placed = orders(
        "bob",
        [
            (
                "Ural",
                8,
                "Ural and Afghanistan are the two doors alice can use to come into my part of Asia",
            ),
            ("Indonesia", "rest", ""),
        ],
    )
    body = (
        "On 01/03/2027 09:00, moderator@example.org wrote:\n"
        + quote(B.text)
        + "\n"
        + placed.text
        + "\n-- \nBob\n"
    )
    headers = tb_headers(name, "bob", f"Re: {B.subject}", at(1, 9, 20, -5), B)
    headers += [
        ("Content-Type", "text/plain; charset=UTF-8; format=flowed"),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    return accepted(
        name,
        "Thunderbird",
        "Plain-text reply below the quote (format=flowed, no DelSp): the long comment soft-broken "
        "at 72 columns, a signature after the orders",
        "bob",
        message(headers, plain_bytes(flowed(body))),
        placed,
    )


@case
def thunderbird_flowed_delsp() -> Case:
    name = "thunderbird-flowed-delsp.eml"
    placed = orders(
        "carol",
        [
            (
                "Irkutsk",
                6,
                "北の守り、シベリアとモンゴルのあいだの大事な拠点なので厚くしておく。ここから"
                "カムチャツカを見張る",
            ),
            ("New Guinea", "rest", ""),
        ],
    )
    lines = []
    for line in placed.text.split("\n"):
        if len(line) > 60:
            lines += [line[:60] + " ", line[60:]]  # DelSp=yes: the added space goes on reading
        else:
            lines.append(line)
    rest = "\nOn 01/03/2027 10:00, moderator@example.org wrote:\n" + quote(C.text)
    body = "\n".join(lines) + flowed(rest, 998)
    headers = tb_headers(name, "carol", f"Re: {C.subject}", at(1, 10, 50, 9), C, "ja")
    headers += [
        ("Content-Type", "text/plain; charset=UTF-8; format=flowed; delsp=yes"),
        ("Content-Transfer-Encoding", "8bit"),
    ]
    return accepted(
        name,
        "Thunderbird",
        "Reply in format=flowed with DelSp=yes: a long Japanese comment broken inside a word "
        "(the space before the break is not part of the text)",
        "carol",
        message(headers, plain_bytes(body)),
        placed,
    )


def tb_forward_block(rep: Report, title: str) -> str:
    return (
        f"-------- {title} --------\n"
        f"Subject: \t{rep.subject}\n"
        "Date: \tMon, 01 Mar 2027 09:00:00 +0000\n"
        "From: \tmoderator@example.org\n"
        "Reply-To: \tmoderator@example.org\n"
        f"To: \t{rep.player}@example.org\n"
    )


@case
def thunderbird_forward() -> Case:
    name = "thunderbird-forward-inline.eml"
    rep = A
    typed = ALICE2.text
    body = (
        typed
        + "\n\n"
        + tb_forward_block(rep, "Forwarded Message")
        + "\n\n\n"
        + html_text(report_body(rep.html))
    )
    parts = [
        text_part(
            flowed(body), charset="UTF-8", cte="7bit", params="; format=flowed", quote_charset=False
        ),
        part(
            [
                ("Content-Type", 'text/plain; charset=UTF-8; name="alice.orders.toml"'),
                ("Content-Disposition", 'attachment; filename="alice.orders.toml"'),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(rep.ready.encode()),
        ),
        part(
            [
                ("Content-Type", 'application/json; name="alice.view.json"'),
                ("Content-Disposition", 'attachment; filename="alice.view.json"'),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(rep.view),
        ),
    ]
    top, mbody = multipart(
        "mixed", tb_boundary(name), parts, preamble="This is a multi-part message in MIME format."
    )
    headers = tb_headers(name, "alice", f"Fwd: {rep.subject}", at(1, 15, 10, 1), None)
    return accepted(
        name,
        "Thunderbird",
        "Forward inline: orders on top of '-------- Forwarded Message --------' and its header "
        "table; the report's attachments carried along, the untouched alice.orders.toml among "
        "them",
        "alice",
        message([*headers, *top], mbody),
        ALICE2,
    )


@case
def thunderbird_forward_old() -> Case:
    name = "thunderbird-forward-original-message.eml"
    rep = B
    body = BOB.text + "\n\n" + tb_forward_block(rep, "Original Message") + "\n\n\n" + rep.text
    headers = tb_headers(name, "bob", f"Fwd: {rep.subject}", at(1, 15, 50, -5), None)
    headers = [
        (
            k,
            v.replace(
                "Mozilla Thunderbird",
                "Mozilla/5.0 (Windows NT 6.1; WOW64; rv:45.0) Gecko/20100101\r\n"
                " Thunderbird/45.8.0",
            ),
        )
        for k, v in headers
    ]
    headers += [
        ("Content-Type", "text/plain; charset=utf-8; format=flowed"),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    return accepted(
        name,
        "Thunderbird",
        "Older Thunderbird's inline forward, '-------- Original Message --------', the text "
        "report below it with its cut lines and ready order file",
        "bob",
        message(headers, plain_bytes(flowed(body))),
        BOB,
    )


@case
def thunderbird_html_reply() -> Case:
    name = "thunderbird-html-reply.eml"
    rep = C
    attribution = "On 01/03/2027 09:00, moderator@example.org wrote:"
    page = (
        '<!DOCTYPE html>\n<html>\n  <head>\n    <meta http-equiv="content-type" '
        'content="text/html; '
        'charset=UTF-8">\n  </head>\n  <body>\n    <p>' + br_html(CAROL2.text) + "</p>\n"
        '    <p>Carol<br>\n    </p>\n    <div class="moz-cite-prefix">'
        + html.escape(attribution)
        + '<br>\n    </div>\n    <blockquote type="cite" cite="mid:'
        + rep.message_id[1:-1]
        + '">\n'
        + report_body(rep.html)
        + "    </blockquote>\n  </body>\n</html>\n"
    )
    plain = (
        CAROL2.text + "\nCarol\n\n" + attribution + "\n" + quote(html_text(report_body(rep.html)))
    )
    top, body = multipart(
        "alternative",
        tb_boundary(name),
        [
            text_part(
                flowed(plain),
                charset="UTF-8",
                cte="7bit",
                params="; format=flowed",
                quote_charset=False,
            ),
            text_part(page, "html", charset="UTF-8", cte="7bit", quote_charset=False),
        ],
        preamble="This is a multi-part message in MIME format.",
    )
    headers = tb_headers(name, "carol", f"Re: {rep.subject}", at(1, 16, 25), rep)
    return accepted(
        name,
        "Thunderbird",
        "HTML reply with the orders above the quote: <p> with <br> lines, moz-cite-prefix and "
        '<blockquote type="cite">',
        "carol",
        message([*headers, *top], body),
        CAROL2,
    )


@case
def thunderbird_forward_attachment() -> Case:
    name = "thunderbird-forward-as-attachment.eml"
    earlier = earlier_orders_message(name, C, CAROL, at(1, 9, 10))
    fname = "Re: [spring-2027] turn 0: your move.eml"
    parts = [
        text_part(
            flowed("Did these arrive? I had no answer.\n"),
            charset="UTF-8",
            cte="7bit",
            params="; format=flowed",
            quote_charset=False,
        ),
        part(
            [
                ("Content-Type", f'message/rfc822; charset=UTF-8; name="{fname}"'),
                ("Content-Disposition", f'attachment; filename="{fname}"'),
                ("Content-Transfer-Encoding", "7bit"),
            ],
            earlier,
        ),
    ]
    top, body = multipart(
        "mixed", tb_boundary(name), parts, preamble="This is a multi-part message in MIME format."
    )
    headers = tb_headers(
        name, "carol", "Fwd: Re: [spring-2027] turn 0: your move", at(1, 19, 5), None
    )
    return accepted(
        name,
        "Thunderbird",
        "'Forward As Attachment' of the earlier order message (message/rfc822)",
        "carol",
        message([*headers, *top], body),
        CAROL,
        ["in the message attached to yours"],
    )


def pgp_armor(name: str, kind: str, n: int) -> str:
    lead = (
        b"\x89\x01\x33\x04\x01\x01\x08\x00\x1d\x16\x21\x04"
        if kind == "SIGNATURE"
        else b"\x85\x02\x0c\x03"
    )
    data = base64.b64encode(lead + pseudo_bytes(name + kind, n)).decode()
    rows = [data[i : i + 64] for i in range(0, len(data), 64)]
    crc = base64.b64encode(pseudo_bytes(name + "crc", 3)).decode()
    return (
        f"-----BEGIN PGP {kind}-----\n\n"
        + "\n".join(rows)
        + f"\n={crc}\n-----END PGP {kind}-----\n"
    )


def pgp_mime_encrypted(name: str, boundary: str) -> tuple[list[tuple[str, str]], bytes]:
    return multipart(
        "encrypted",
        boundary,
        [
            part(
                [
                    ("Content-Type", "application/pgp-encrypted"),
                    ("Content-Description", "PGP/MIME version identification"),
                ],
                b"Version: 1\r\n",
            ),
            part(
                [
                    ("Content-Type", 'application/octet-stream; name="encrypted.asc"'),
                    ("Content-Description", "OpenPGP encrypted message"),
                    ("Content-Disposition", 'inline; filename="encrypted.asc"'),
                ],
                plain_bytes(pgp_armor(name, "MESSAGE", 1200)),
            ),
        ],
        preamble="This is an OpenPGP/MIME encrypted message (RFC 4880 and 3156)",
        params='; protocol="application/pgp-encrypted"',
    )


@case
def thunderbird_pgp_encrypted() -> Case:
    name = "thunderbird-openpgp-encrypted.eml"
    top, body = pgp_mime_encrypted(name, tb_boundary(name))
    headers = tb_headers(name, "alice", "...", at(1, 20, 0), A)
    return Case(
        name,
        "Thunderbird",
        "Reply encrypted with Thunderbird's OpenPGP (multipart/encrypted; "
        "protocol=\"application/pgp-encrypted\"), the subject hidden as '...'",
        "rejected",
        "alice",
        message([*headers, *top], body),
        None,
        ["sent the message encrypted"],
    )


@case
def thunderbird_two_sets() -> Case:
    name = "thunderbird-two-different-order-sets.eml"
    other = orders("bob", [("Yakutsk", 11, ""), ("Egypt", "rest", "")])
    parts = [
        text_part(
            flowed(BOB.text + "\n-- \nBob\n"),
            charset="UTF-8",
            cte="7bit",
            params="; format=flowed",
            quote_charset=False,
        ),
        part(
            [
                ("Content-Type", 'application/toml; name="bob.orders.toml"'),
                ("Content-Disposition", 'attachment; filename="bob.orders.toml"'),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(other.text.encode()),
        ),
    ]
    top, body = multipart(
        "mixed", tb_boundary(name), parts, preamble="This is a multi-part message in MIME format."
    )
    headers = tb_headers(name, "bob", "orders", at(1, 20, 30, -5), None)
    return Case(
        name,
        "Thunderbird",
        "Orders typed in the text and a different bob.orders.toml attached (application/toml)",
        "rejected",
        "bob",
        message([*headers, *top], body),
        None,
        ["two different sets of orders"],
    )


@case
def thunderbird_rfc2231_name() -> Case:
    name = "thunderbird-attachment-name-rfc2231.eml"
    placed = orders("carol", [("Argentina", 8, "bastión del sur"), ("Ukraine", "rest", "")])
    fname = "órdenes carol.toml"
    encoded_name = "UTF-8''" + "".join(
        c
        if c.isascii() and (c.isalnum() or c in ".-_")
        else "".join(f"%{b:02X}" for b in c.encode())
        for c in fname
    )
    parts = [
        text_part(
            flowed("Hola, van adjuntas.\n"),
            charset="UTF-8",
            cte="7bit",
            params="; format=flowed",
            quote_charset=False,
        ),
        part(
            [
                ("Content-Type", f"application/octet-stream; name*={encoded_name}"),
                ("Content-Disposition", f"attachment; filename*={encoded_name}"),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(placed.text.encode()),
        ),
    ]
    top, body = multipart(
        "mixed", tb_boundary(name), parts, preamble="This is a multi-part message in MIME format."
    )
    headers = tb_headers(name, "carol", "órdenes", at(1, 17, 15, -3), None, "es-ES")
    headers = [(k, words(v)) for k, v in headers]
    return accepted(
        name,
        "Thunderbird",
        "Attachment named 'órdenes carol.toml', written as an RFC 2231 parameter "
        "(filename*=UTF-8''%C3%B3rdenes%20carol.toml)",
        "carol",
        message([*headers, *top], body),
        placed,
    )


@case
def thunderbird_new_ready_file() -> Case:
    name = "thunderbird-new-message-ready-file-attached.eml"
    rep = B
    parts = [
        text_part(
            flowed("Default placement is fine for me.\n"),
            charset="UTF-8",
            cte="7bit",
            params="; format=flowed",
            quote_charset=False,
        ),
        part(
            [
                ("Content-Type", 'text/plain; charset=UTF-8; name="bob.orders.toml"'),
                ("Content-Disposition", 'attachment; filename="bob.orders.toml"'),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(rep.ready.encode()),
        ),
    ]
    top, body = multipart(
        "mixed", tb_boundary(name), parts, preamble="This is a multi-part message in MIME format."
    )
    headers = tb_headers(name, "bob", "orders turn 0", at(1, 21, 15, -5), None)
    return Case(
        name,
        "Thunderbird",
        "New message with the untouched ready file bob.orders.toml attached",
        "accepted",
        "bob",
        message([*headers, *top], body),
        template_data("bob"),
        ["accepted"],
        untouched=True,
    )


@case
def thunderbird_read_receipt() -> Case:
    name = "thunderbird-return-receipt.eml"
    human = (
        "This is a Return Receipt for the mail that you sent to carol@example.org.\n\n"
        "Note: This Return Receipt only acknowledges that the message was displayed on the "
        "recipient's computer. There is no guarantee that the recipient has read or understood "
        "the message contents.\n"
    )
    report = (
        "Reporting-UA: example.org; Thunderbird 128.7.1esr\n"
        "Final-Recipient: rfc822;carol@example.org\n"
        f"Original-Message-ID: {C.message_id}\n"
        "Disposition: manual-action/MDN-sent-manually; displayed\n"
    )
    top, body = multipart(
        "report",
        tb_boundary(name),
        [
            text_part(human, charset="UTF-8", cte="7bit", quote_charset=False),
            part(
                [
                    ("Content-Type", 'message/disposition-notification; name="MDNPart2.txt"'),
                    ("Content-Disposition", "inline"),
                    ("Content-Transfer-Encoding", "7bit"),
                ],
                plain_bytes(report),
            ),
        ],
        params="; report-type=disposition-notification",
        preamble="This is a multi-part message in MIME format.",
    )
    headers = tb_headers(
        name, "carol", f"Return Receipt (displayed) - {C.subject}", at(1, 10, 0), C
    )
    return Case(
        name,
        "Thunderbird",
        "Return receipt: multipart/report; report-type=disposition-notification, no Auto-Submitted",
        "unanswered",
        "carol",
        message([*headers, *top], body),
    )


@case
def thunderbird_whole_report() -> Case:
    name = "thunderbird-whole-report-edited.eml"
    text = edited_report_text(C, CAROL2)
    headers = tb_headers(name, "carol", f"Re: {C.subject}", at(1, 21, 40), C)
    headers += [
        ("Content-Type", "text/plain; charset=UTF-8; format=flowed"),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    return accepted(
        name,
        "Thunderbird",
        "The whole text report sent back (pasted from the saved .txt), the order file edited "
        "between the cut lines",
        "carol",
        message(headers, plain_bytes(flowed(text))),
        CAROL2,
    )


# ---- K-9 Mail ----


def k9_id(name: str) -> str:
    return f"<{uuid(name)}@email.android.com>"


def k9_headers(
    name: str,
    player: str,
    subject: str,
    when: datetime,
    rep: Report | None,
    top: Sequence[tuple[str, str]],
) -> list[tuple[str, str]]:
    headers = [("MIME-Version", "1.0"), ("Date", rfc_date(when))]
    headers += reply_headers(rep) if rep else []
    headers += [
        ("User-Agent", "K-9 Mail for Android"),
        *top,
        ("Subject", subject),
        ("To", MODERATOR),
        ("From", who(player)),
        ("Message-ID", k9_id(name)),
    ]
    return headers


@case
def k9_header_style() -> Case:
    name = "k9-header-quote-style.eml"
    body = (
        CAROL.text + "\n-- \nSent from my Android device with K-9 Mail.\n\n"
        "-------- Original Message --------\n"
        "From: moderator@example.org\n"
        "Sent: March 1, 2027 9:00:00 AM UTC\n"
        "To: carol@example.org\n"
        f"Subject: {C.subject}\n\n" + C.text
    )
    top = [
        ("Content-Type", "text/plain;\r\n charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    headers = k9_headers(name, "carol", f"Re: {C.subject}", at(1, 12, 45), C, top)
    return accepted(
        name,
        "K-9 Mail",
        "Reply in the 'header' quote style: orders and signature, then '-------- Original "
        "Message --------', From/Sent/To/Subject and the text report below unquoted (cut lines "
        "and ready file included)",
        "carol",
        message(headers, qp(body)),
        CAROL,
    )


@case
def k9_prefix_style() -> Case:
    name = "k9-prefix-quote-style.eml"
    body = (
        ALICE3.text
        + "\nOn March 1, 2027 9:00:00 AM UTC, moderator@example.org wrote:\n"
        + quote(A.text, prefix=">")
    )
    top = [
        ("Content-Type", "text/plain;\r\n charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    headers = k9_headers(name, "alice", f"Re: {A.subject}", at(1, 13, 15), A, top)
    return accepted(
        name,
        "K-9 Mail",
        "Reply in the prefix quote style: orders on top, 'On March 1, 2027 9:00:00 AM UTC, ... "
        "wrote:' and the report in '>' lines with no space after the '>'",
        "alice",
        message(headers, qp(body)),
        ALICE3,
    )


@case
def k9_attach() -> Case:
    name = "k9-attached-file-manager-name.eml"
    placed = orders("bob", [("China", 10, ""), ("Alaska", "rest", "")])
    bnd = "----" + token(name, 30, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    parts = [
        text_part("Orders attached\n", charset="utf-8", quote_charset=False),
        part(
            [
                ("Content-Type", 'application/octet-stream;\r\n name="bob.orders (1).toml"'),
                ("Content-Transfer-Encoding", "base64"),
                (
                    "Content-Disposition",
                    'attachment;\r\n filename="bob.orders (1).toml";\r\n size='
                    + str(len(placed.text)),
                ),
            ],
            b64(placed.text.encode()),
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = k9_headers(name, "bob", "orders", at(1, 13, 50, -5), None, [(top[0][0], top[0][1])])
    return accepted(
        name,
        "K-9 Mail",
        "New message with the file the phone saved as 'bob.orders (1).toml' attached",
        "bob",
        message(headers, body),
        placed,
    )


@case
def k9_resend_italian() -> Case:
    name = "k9-resend-italian.eml"
    body = (
        "invia di nuovo\n\nOn March 1, 2027 9:00:00 AM UTC, moderator@example.org wrote:\n"
        + quote(C.text, prefix=">")
    )
    top = [
        ("Content-Type", "text/plain;\r\n charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    headers = k9_headers(name, "carol", f"Re: {C.subject}", at(1, 14, 5, 1), C, top)
    return Case(
        name,
        "K-9 Mail",
        "Reply whose first line is 'invia di nuovo' (Italian: send again)",
        "resend",
        "carol",
        message(headers, qp(body)),
    )


@case
def k9_question() -> Case:
    name = "k9-question.eml"
    body = (
        "Do I have to place all 21 armies now, or can I keep some for later? And can I put "
        "them on a territory I don't own yet?\n\n"
        "On March 1, 2027 9:00:00 AM UTC, moderator@example.org wrote:\n"
        + quote(A.text, prefix=">")
    )
    top = [
        ("Content-Type", "text/plain;\r\n charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    headers = k9_headers(name, "alice", f"Re: {A.subject}", at(1, 14, 35), A, top)
    return Case(
        name,
        "K-9 Mail",
        "A question about the rules above the quoted report (whose ready file is untouched)",
        "question",
        "alice",
        message(headers, qp(body)),
        None,
        ["passed to the moderator"],
    )


# ---- FairEmail ----


def fair_boundary(name: str) -> str:
    n = token(name, 3, "123456789")
    m = token(name + "x", 9, "123456789")
    return f"----=_Part_{n}_{m}.1772355600000"


@case
def fairemail_flowed() -> Case:
    name = "fairemail-flowed-reply.eml"
    rep = B
    attribution = "On 1 Mar 2027 04:00, moderator@example.org wrote:"
    plain = BOB2.text + "\n" + attribution + "\n" + quote(html_text(report_body(rep.html)))
    page = (
        '<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width, '
        'initial-scale=1.0"></head><body><div dir="auto">' + br_html(BOB2.text) + "</div>"
        '<br><p dir="auto">' + html.escape(attribution) + '</p><blockquote style="margin:0 0 0 '
        '3px;border-left:3px solid #3e82f7;padding-left:3px;">'
        + report_body(rep.html)
        + "</blockquote></body></html>\n"
    )
    top, body = multipart(
        "alternative",
        fair_boundary(name),
        [
            text_part(
                flowed(plain),
                charset="UTF-8",
                cte="7bit",
                params="; format=flowed",
                quote_charset=False,
            ),
            text_part(page, "html", charset="UTF-8", cte="quoted-printable", quote_charset=False),
        ],
    )
    headers = [
        ("Date", rfc_date(at(1, 15, 5, -5))),
        ("From", who("bob")),
        ("To", MODERATOR),
        ("Message-ID", f"<{uuid(name).lower()}@example.org>"),
        *reply_headers(rep),
        ("Subject", f"Re: {rep.subject}"),
        ("MIME-Version", "1.0"),
        *top,
        ("User-Agent", "FairEmail 1.2247"),
    ]
    return accepted(
        name,
        "FairEmail",
        "Reply: text/plain in format=flowed and HTML with a styled blockquote, orders on top",
        "bob",
        message(headers, body),
        BOB2,
    )


@case
def fairemail_edited_in_quote() -> Case:
    name = "fairemail-orders-edited-in-quote.eml"
    rep = C
    placed = orders("carol", [("Siberia", 9, ""), ("Greenland", "rest", "")])
    text = edited_report_text(rep, placed)
    plain = "On 1 Mar 2027 10:00, moderator@example.org wrote:\n" + quote(text)
    headers = [
        ("Date", rfc_date(at(1, 15, 35, 1))),
        ("From", who("carol")),
        ("To", MODERATOR),
        ("Message-ID", f"<{uuid(name).lower()}@example.org>"),
        *reply_headers(rep),
        ("Subject", f"Re: {rep.subject}"),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=UTF-8; format=flowed"),
        ("Content-Transfer-Encoding", "7bit"),
        ("User-Agent", "FairEmail 1.2247"),
    ]
    return accepted(
        name,
        "FairEmail",
        "Plain-text reply with nothing written: the order file edited inside the '>' quote, "
        "between the quoted cut lines",
        "carol",
        message(headers, plain_bytes(flowed(plain))),
        placed,
        ["in the quoted part of your message"],
    )


# ---- mutt ----


def mutt_id(name: str) -> str:
    return f"<20270301{token(name, 6, DIGITS)}.{token(name, 8, LOWER)}@box.example.org>"


def mutt_headers(
    name: str,
    player: str,
    subject: str,
    when: datetime,
    rep: Report | None,
    top: Sequence[tuple[str, str]] = (
        ("Content-Type", "text/plain; charset=us-ascii"),
        ("Content-Disposition", "inline"),
    ),
) -> list[tuple[str, str]]:
    headers = [
        ("Date", when.strftime("%a, %d %b %Y %H:%M:%S %z")),
        ("From", who(player)),
        ("To", MODERATOR),
        ("Subject", subject),
        ("Message-ID", mutt_id(name)),
    ]
    headers += reply_headers(rep)[::-1] if rep else []
    headers += [("MIME-Version", "1.0"), *top]
    headers.append(("User-Agent", "Mutt/2.2.13 (2024-03-09)"))
    return headers


MUTT_ATTR = "On Mon, Mar 01, 2027 at 09:00:00AM +0000, moderator@example.org wrote:"


def trimmed_quote(rep: Report) -> str:
    lines = rep.text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Your order file for turn"))
    return quote("\n".join(lines[start : start + 7]) + "\n[...]\n")


@case
def mutt_bottom() -> Case:
    name = "mutt-bottom-posted.eml"
    body = MUTT_ATTR + "\n" + trimmed_quote(A) + "\n" + ALICE.text + "\n-- \nalice\n"
    headers = mutt_headers(name, "alice", f"Re: {A.subject}", at(1, 11, 0), A)
    return accepted(
        name,
        "mutt",
        "Bottom-posted: the trimmed quote in '>' lines first, the orders below it, a '-- ' "
        "signature last",
        "alice",
        message(headers, plain_bytes(body)),
        ALICE,
    )


@case
def mutt_pgp_inline() -> Case:
    name = "mutt-pgp-inline-clearsigned.eml"
    cut = "-- 8< " + "-" * 66
    signed = MUTT_ATTR + "\n" + trimmed_quote(B) + "\n" + cut + "\n" + BOB2.text + "\n" + cut + "\n"
    escaped = "\n".join(
        "- " + line if line.startswith("-") else line for line in signed.split("\n")
    )
    body = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        + escaped
        + pgp_armor(name, "SIGNATURE", 566)
    )
    headers = mutt_headers(name, "bob", f"Re: {B.subject}", at(1, 11, 30, -5), B)
    return accepted(
        name,
        "mutt",
        "Inline PGP clear-signed body (-----BEGIN PGP SIGNED MESSAGE-----): the orders pasted "
        "with pbem's cut lines, which the signature dash-escapes to '- -- 8< ---'",
        "bob",
        message(headers, plain_bytes(body)),
        BOB2,
    )


@case
def mutt_pgp_mime() -> Case:
    name = "mutt-pgp-mime-encrypted.eml"
    top, body = pgp_mime_encrypted(name, token(name, 16, ALNUM))
    headers = mutt_headers(name, "carol", f"Re: {C.subject}", at(1, 12, 0), C, top)
    return Case(
        name,
        "mutt",
        "Reply encrypted as PGP/MIME (multipart/encrypted)",
        "rejected",
        "carol",
        message(headers, body),
        None,
        ["sent the message encrypted"],
    )


@case
def mutt_attach() -> Case:
    name = "mutt-attached-text-plain.eml"
    placed = orders("carol", [("Venezuela", 10, ""), ("Middle East", "rest", "")])
    bnd = token(name, 16, ALNUM)
    parts = [
        part(
            [("Content-Type", "text/plain; charset=us-ascii"), ("Content-Disposition", "inline")],
            plain_bytes("Orders attached.\n\n-- \ncarol\n"),
        ),
        part(
            [
                ("Content-Type", "text/plain; charset=us-ascii"),
                ("Content-Disposition", 'attachment; filename="orders.toml"'),
            ],
            plain_bytes(placed.text),
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = mutt_headers(name, "carol", "orders", at(1, 12, 30), None, top)
    return accepted(
        name,
        "mutt",
        "A short text and orders.toml attached as text/plain (the type mutt gives a .toml file)",
        "carol",
        message(headers, body),
        placed,
    )


# ---- Proton Mail ----


def proton_message(name: str, player: str, rep: Report, inner: str, when: datetime) -> bytes:
    attribution = (
        "On Monday, March 1st, 2027 at 10:00 AM, moderator@example.org "
        "&lt;moderator@example.org&gt; wrote:"
    )
    page = (
        '<div style="font-family: Arial, sans-serif; font-size: 14px;">' + inner + "</div>"
        '<div style="font-family: Arial, sans-serif; font-size: 14px;"><br></div>'
        '<div class="protonmail_signature_block" style="font-family: Arial, sans-serif; '
        'font-size: 14px;"><div class="protonmail_signature_block-user '
        'protonmail_signature_block-empty"></div><div class="protonmail_signature_block-proton">'
        'Sent with <a target="_blank" href="https://proton.me/mail/home">Proton Mail</a> secure '
        'email.</div></div><div style="font-family: Arial, sans-serif; font-size: 14px;"><br>'
        '</div><div class="protonmail_quote">\n        ' + attribution + "<br><br>\n        "
        '<blockquote class="protonmail_quote" type="cite">\n            '
        + report_body(rep.html)
        + "\n        </blockquote><br>\n    </div>"
    )
    headers = [
        ("Date", rfc_date(when)),
        ("To", MODERATOR),
        ("From", who(player)),
        ("Subject", f"Re: {rep.subject}"),
        (
            "Message-ID",
            f"<{token(name, 40, ALNUM + '_-')}=@proton.me>",
        ),
        *reply_headers(rep),
        ("Feedback-ID", "12345678:user:proton"),
        ("X-Pm-Message-ID", token(name, 20)),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/html; charset=utf-8"),
        ("Content-Transfer-Encoding", "base64"),
    ]
    return message(headers, b64(page.encode()))


@case
def proton_pre() -> Case:
    name = "proton-html-only-pre.eml"
    inner = "<pre>" + html.escape(ALICE2.text) + "</pre>"
    return accepted(
        name,
        "Proton Mail",
        "HTML-only reply (no text/plain at all), the orders pasted as a <pre> block, the quote "
        "in a protonmail_quote div",
        "alice",
        proton_message(name, "alice", A, inner, at(1, 10, 10, 1)),
        ALICE2,
    )


@case
def proton_prewrap() -> Case:
    name = "proton-html-only-pre-wrap-span.eml"
    inner = '<span style="white-space: pre-wrap;">' + html.escape(CAROL.text) + "</span>"
    return accepted(
        name,
        "Proton Mail",
        'HTML-only reply, the orders pasted into a <span style="white-space: pre-wrap"> with '
        "their newlines as they were",
        "carol",
        proton_message(name, "carol", C, inner, at(1, 11, 10, 1)),
        CAROL,
    )


@case
def proton_br() -> Case:
    name = "proton-html-only-br-lines.eml"
    inner = re.sub(
        " {2,}", lambda m: " ".join(["&nbsp;"] * (len(m.group()) // 2 + 1)), br_html(BOB.text)
    )
    inner += "<br>"
    return accepted(
        name,
        "Proton Mail",
        "HTML-only reply, the orders typed as lines ending in <br>, &nbsp; in the comment's "
        "alignment",
        "bob",
        proton_message(name, "bob", B, inner, at(1, 12, 10, -5)),
        BOB,
    )


# ---- Yahoo Mail ----


@case
def yahoo_reply() -> Case:
    name = "yahoo-reply.eml"
    rep = A
    attribution = "On Monday, March 1, 2027 at 10:00:00 AM GMT+1, <moderator@example.org> wrote:"
    qtext = html_text(report_body(rep.html))
    plain = (
        ALICE.text
        + "\n\n    "
        + attribution
        + "  \n\n"
        + "".join(" " + line + "\n" for line in qtext.split("\n"))
    )
    yid = token(name, 10, DIGITS)
    page = (
        '<html><head></head><body><div class="ydp5b3e1c2cyahoo-style-wrap" style="font-family:'
        'Helvetica Neue, Helvetica, Arial, sans-serif;font-size:16px;">'
        + lines_html(ALICE.text, "div", ' dir="ltr" data-setdir="false"')
        + "<div><br></div>\n"
        f'</div><div id="yahoo_quoted_{yid}" class="yahoo_quoted">\n'
        "<div style=\"font-family:'Helvetica Neue', Helvetica, Arial, sans-serif;font-size:13px;"
        'color:#26282a;">\n<div>\n' + html.escape(attribution) + "\n</div>\n<div><br></div>\n"
        f'<div><br></div>\n<div><div id="yiv{yid}">{report_body(rep.html)}</div></div>\n'
        "</div>\n</div></body></html>\n"
    )
    bnd = f"----=_Part_{token(name, 7, DIGITS)}_{token(name + 'b', 9, DIGITS)}.1772355650000"
    top, body = multipart(
        "alternative",
        bnd,
        [
            text_part(plain, charset="UTF-8", quote_charset=False),
            text_part(page, "html", charset="UTF-8", quote_charset=False),
        ],
    )
    headers = [
        ("Date", rfc_date(at(1, 10, 40, 1))),
        ("From", who("alice")),
        ("To", f'"{MODERATOR}" <{MODERATOR}>'),
        (
            "Message-ID",
            f"<{token(name, 9, DIGITS)}.{token(name, 7, DIGITS)}.1772358040123@mail.yahoo.com>",
        ),
        ("In-Reply-To", rep.message_id),
        ("References", rep.message_id),
        ("Subject", f"Re: {rep.subject}"),
        ("MIME-Version", "1.0"),
        *top,
        ("X-Mailer", "WebService/1.1.23187 YMailNorrin"),
    ]
    return accepted(
        name,
        "Yahoo Mail",
        "Reply: orders on top; text/plain with the attribution indented and the report "
        "unquoted (its ready file included), HTML with the quote in a yahoo_quoted div",
        "alice",
        message(headers, body),
        ALICE,
    )


@case
def yahoo_question() -> Case:
    name = "yahoo-question.eml"
    text = "Hello, when is the deadline for this turn? I will be travelling on Wednesday.\n\nBob\n"
    page = (
        '<html><head></head><body><div class="ydp1f2e3d4cyahoo-style-wrap">'
        + lines_html(text, "div", ' dir="ltr" data-setdir="false"')
        + "</div></body></html>\n"
    )
    bnd = f"----=_Part_{token(name, 7, DIGITS)}_{token(name + 'b', 9, DIGITS)}.1772400000000"
    top, body = multipart(
        "alternative",
        bnd,
        [
            text_part(text, cte="7bit", charset="UTF-8", quote_charset=False),
            text_part(page, "html", charset="UTF-8", quote_charset=False),
        ],
    )
    headers = [
        ("Date", rfc_date(at(2, 8, 0, -5))),
        ("From", who("bob")),
        ("To", f'"{MODERATOR}" <{MODERATOR}>'),
        (
            "Message-ID",
            f"<{token(name, 9, DIGITS)}.{token(name, 7, DIGITS)}.1772400000123@mail.yahoo.com>",
        ),
        ("Subject", "deadline?"),
        ("MIME-Version", "1.0"),
        *top,
        ("X-Mailer", "WebService/1.1.23187 YMailNorrin"),
    ]
    return Case(
        name,
        "Yahoo Mail",
        "New message asking when the deadline is, no orders",
        "question",
        "bob",
        message(headers, body),
        None,
        ["passed to the moderator"],
    )


# ---- Samsung Email ----


def samsung_message(
    name: str, player: str, rep: Report, typed: str, subject: str, when: datetime
) -> bytes:
    block = (
        "-------- Original message --------\n"
        "From: moderator@example.org \n"
        "Date: 01/03/2027 09:00 (GMT+00:00) \n"
        f"To: {rep.player}@example.org \n"
        f"Subject: {rep.subject} \n"
    )
    qtext = html_text(report_body(rep.html))
    plain = typed + "\n\n\nSent from my Galaxy\n\n\n" + block + "\n" + qtext
    page = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8"></head>'
        '<body dir="auto">' + lines_html(typed, "div", ' dir="auto"') + '<div dir="auto"><br>'
        '</div><div dir="auto"><br></div><div id="composer_signature" dir="auto"><div '
        'style="font-size:12px;color:#575757" dir="auto">Sent from my Galaxy</div></div><div '
        'dir="auto"><br></div><div><br></div><div align="left" dir="auto" style="font-size:100%;'
        'color:#000000"><div>-------- Original message --------</div><div>From: '
        "moderator@example.org </div><div>Date: 01/03/2027 09:00 (GMT+00:00) </div><div>To: "
        f"{rep.player}@example.org </div><div>Subject: {html.escape(rep.subject)} </div><div>"
        f"</div></div>{report_body(rep.html)}</body></html>\n"
    )
    bnd = "--_com.samsung.android.email_" + token(name, 16, DIGITS)
    top, body = multipart(
        "alternative",
        bnd,
        [
            text_part(plain, charset="UTF-8", cte="base64", quote_charset=False),
            text_part(page, "html", charset="UTF-8", cte="base64", quote_charset=False),
        ],
    )
    headers = [
        ("Message-ID", f"<{token(name, 12)}.{token(name, 6, DIGITS)}@email.android.com>"),
        ("Date", rfc_date(when)),
        ("Subject", words(subject)),
        *reply_headers(rep),
        ("From", who(player)),
        ("To", MODERATOR),
        ("MIME-Version", "1.0"),
        *top,
    ]
    return message(headers, body)


@case
def samsung_reply() -> Case:
    name = "samsung-email-reply.eml"
    raw = samsung_message(name, "bob", B, BOB.text, f"RE: {B.subject}", at(1, 16, 50, -5))
    return accepted(
        name,
        "Samsung Email",
        "Reply (base64 parts): orders, 'Sent from my Galaxy', then '-------- Original message "
        "--------' with From/Date/To/Subject lines ending in a space and the report unquoted",
        "bob",
        raw,
        BOB,
    )


@case
def samsung_resend_gujarati() -> Case:
    name = "samsung-email-resend-gujarati.eml"
    raw = samsung_message(
        name, "carol", C, "કૃપા કરીને રિપોર્ટ ફરીથી મોકલો", "ફરીથી મોકલો", at(1, 17, 20, 5)
    )
    return Case(
        name,
        "Samsung Email",
        "Reply with the subject 'ફરીથી મોકલો' (Gujarati: send again) in an encoded word",
        "resend",
        "carol",
        raw,
    )


# ---- The Bat! ----


@case
def thebat_reply() -> Case:
    name = "thebat-reply-initials-quote.eml"
    quoted = quote(C.text, prefix="m> ", blank="m>")
    body = (
        "Hello moderator,\n\n"
        + CAROL2.text
        + "\n\nYou wrote 1 March 2027, 09:00:00:\n\n"
        + quoted
        + "\n\n\n-- \nBest regards,\n carol                            mailto:carol@example.org\n"
    )
    headers = [
        ("Date", rfc_date(at(1, 17, 55, 3))),
        ("From", who("carol")),
        ("Message-ID", f"<{token(name, 10, DIGITS)}.20270301175500@example.org>"),
        ("To", MODERATOR),
        ("Subject", f"Re: {C.subject}"),
        *reply_headers(C),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Transfer-Encoding", "8bit"),
        ("X-Mailer", "The Bat! (v10.5.3) Professional"),
        ("X-Priority", "3 (Normal)"),
    ]
    return accepted(
        name,
        "The Bat!",
        "Reply from the default template: 'Hello moderator,', the orders, 'You wrote 1 March "
        "2027, 09:00:00:' and the report quoted with the sender's initials ('m> ')",
        "carol",
        message(headers, plain_bytes(body)),
        CAROL2,
    )


@case
def thebat_encoded_ascii_name() -> Case:
    name = "thebat-attachment-name-encoded-ascii.eml"
    placed = orders("alice", [("Ontario", 9, ""), ("Madagascar", "rest", "")])
    bnd = "----------" + token(name, 13, "0123456789ABCDEF")
    fname = "=?utf-8?Q?alice.orders.toml?="
    parts = [
        text_part(
            "Hello moderator,\n\n  orders attached.\n\n-- \nBest regards,\n"
            " alice                            mailto:alice@example.org\n",
            charset="utf-8",
            cte="8bit",
            quote_charset=False,
        ),
        part(
            [
                ("Content-Type", f'application/octet-stream;\r\n name="{fname}"'),
                ("Content-Transfer-Encoding", "Base64"),
                ("Content-Disposition", f'attachment;\r\n filename="{fname}"'),
            ],
            b64(placed.text.encode()),
        ),
    ]
    top, body = multipart("mixed", bnd, parts)
    headers = [
        ("Date", rfc_date(at(1, 18, 20, 3))),
        ("From", who("alice")),
        ("Message-ID", f"<{token(name, 10, DIGITS)}.20270301182000@example.org>"),
        ("To", MODERATOR),
        ("Subject", "orders"),
        ("MIME-Version", "1.0"),
        *top,
        ("X-Mailer", "The Bat! (v10.5.3) Professional"),
    ]
    return accepted(
        name,
        "The Bat!",
        "Attachment whose plain ASCII name is still written as an encoded word "
        "(=?utf-8?Q?alice.orders.toml?=)",
        "alice",
        message(headers, body),
        placed,
    )


# ---- Alpine ----


@case
def alpine_x_unknown() -> Case:
    name = "alpine-x-unknown-charset.eml"
    body = (
        "On Mon, 1 Mar 2027, moderator@example.org wrote:\n\n" + trimmed_quote(B) + "\n" + BOB.text
    )
    headers = [
        ("Date", rfc_date(at(1, 19, 10, -5), "EST")),
        ("From", who("bob")),
        ("To", MODERATOR),
        ("Subject", f"Re: {B.subject}"),
        ("In-Reply-To", B.message_id),
        (
            "Message-ID",
            f"<alpine.DEB.2.22.394.270301191{token(name, 4, DIGITS)}.{token(name, 5, DIGITS)}@box>",
        ),
        ("References", B.message_id),
        ("User-Agent", "Alpine 2.26 (DEB 649 2022-06-02)"),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; format=flowed; charset=X-UNKNOWN"),
    ]
    return accepted(
        name,
        "Alpine",
        "Bottom-posted reply below a trimmed quote, labelled charset=X-UNKNOWN though every "
        "byte is ASCII",
        "bob",
        message(headers, plain_bytes(flowed(body))),
        BOB,
    )


@case
def alpine_resend_rimanda() -> Case:
    name = "alpine-resend-rimanda.eml"
    body = "rimanda\n"
    headers = [
        ("Date", rfc_date(at(1, 19, 50, 1), "CET")),
        ("From", who("alice")),
        ("To", MODERATOR),
        ("Subject", "rimanda"),
        ("Message-ID", f"<alpine.DEB.2.22.394.2703012050{token(name, 4, DIGITS)}@box>"),
        ("User-Agent", "Alpine 2.26 (DEB 649 2022-06-02)"),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; format=flowed; charset=US-ASCII"),
    ]
    return Case(
        name,
        "Alpine",
        "New message 'rimanda' (Italian: send it again) in subject and text",
        "resend",
        "alice",
        message(headers, plain_bytes(body)),
    )


# ---- a bounce from the mail system ----


@case
def mailer_daemon_dsn() -> Case:
    name = "mailer-daemon-bounce.eml"
    human = (
        "This is the mail system at host mail.example.org.\n\n"
        "I'm sorry to have to inform you that your message could not\n"
        "be delivered to one or more recipients. It's attached below.\n\n"
        "                   The mail system\n\n"
        "<bob@example.org>: host mx.example.org[192.0.2.25] said: 552 5.2.2 mailbox full\n"
    )
    status = (
        "Reporting-MTA: dns; mail.example.org\nX-Postfix-Queue-ID: 4Xk2Zt1Hq9z9sRw\n"
        "Arrival-Date: Mon,  1 Mar 2027 09:00:01 +0000 (UTC)\n\n"
        "Final-Recipient: rfc822; bob@example.org\nOriginal-Recipient: rfc822;bob@example.org\n"
        "Action: failed\nStatus: 5.2.2\nRemote-MTA: dns; mx.example.org\n"
        "Diagnostic-Code: smtp; 552 5.2.2 mailbox full\n"
    )
    original = (
        f"From: {MODERATOR}\nTo: bob@example.org\nSubject: {B.subject}\n"
        "Date: Mon, 01 Mar 2027 09:00:00 +0000\nAuto-Submitted: auto-generated\n"
        f"X-Pbem-Loop: {GAME}\nMessage-ID: {B.message_id}\n"
    )
    bnd = "4Xk2Zt1Hq9z9sRw.1772355602/mail.example.org"
    top, body = multipart(
        "report",
        bnd,
        [
            part(
                [
                    ("Content-Description", "Notification"),
                    ("Content-Type", "text/plain; charset=us-ascii"),
                ],
                plain_bytes(human),
            ),
            part(
                [
                    ("Content-Description", "Delivery report"),
                    ("Content-Type", "message/delivery-status"),
                ],
                plain_bytes(status),
            ),
            part(
                [
                    ("Content-Description", "Undelivered Message Headers"),
                    ("Content-Type", "text/rfc822-headers"),
                ],
                plain_bytes(original),
            ),
        ],
        preamble="This is a MIME-encapsulated message.",
        params="; report-type=delivery-status",
    )
    headers = [
        ("Return-Path", "<>"),
        ("Date", "Mon,  1 Mar 2027 09:00:02 +0000 (UTC)"),
        ("From", "MAILER-DAEMON@mail.example.org (Mail Delivery System)"),
        ("Subject", "Undelivered Mail Returned to Sender"),
        ("To", MODERATOR),
        ("Auto-Submitted", "auto-replied"),
        ("MIME-Version", "1.0"),
        *top,
        ("Content-Transfer-Encoding", "8bit"),
        ("Message-Id", "<20270301090002.5F2A31A0012@mail.example.org>"),
    ]
    return Case(
        name,
        "Postfix (bounce)",
        "Delivery status notification from MAILER-DAEMON: bob's report bounced",
        "unanswered",
        "bob",
        message(headers, body),
    )


# ---- more of the same programs, and two more webmail and desktop programs ----


@case
def gmail_web_split_attribution() -> Case:
    name = "gmail-web-attribution-over-two-lines.eml"
    attribution = (
        "On Mon, Mar 1, 2027 at 4:00 AM Spring 2027 Risk game moderator <\n"
        "moderator@example.org> wrote:"
    )
    raw = gmail_reply(name, B, BOB.text, at(1, 10, 25, -5), attribution=attribution)
    return accepted(
        name,
        "Gmail (web)",
        "Reply from a US-English Gmail whose contact name makes the attribution line wrap "
        "('... moderator <' / 'moderator@example.org> wrote:')",
        "bob",
        raw,
        BOB,
    )


@case
def gmail_web_pasted_with_cuts() -> Case:
    name = "gmail-web-orders-pasted-with-cut-lines.eml"
    cut = "-- 8< " + "-" * 66
    typed = cut + "\n" + CAROL2.text + "\n" + cut + "\n"
    raw = gmail_reply(name, C, typed, at(1, 11, 25))
    return accepted(
        name,
        "Gmail (web)",
        "Orders pasted above the quote together with pbem's two cut lines",
        "carol",
        raw,
        CAROL2,
    )


@case
def k9_blank_reply() -> Case:
    name = "k9-header-style-nothing-written.eml"
    body = (
        "\n-- \nSent from my Android device with K-9 Mail.\n\n"
        "-------- Original Message --------\n"
        "From: moderator@example.org\n"
        "Sent: March 1, 2027 9:00:00 AM UTC\n"
        "To: bob@example.org\n"
        f"Subject: {B.subject}\n\n" + B.text
    )
    top = [
        ("Content-Type", "text/plain;\r\n charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    headers = k9_headers(name, "bob", f"Re: {B.subject}", at(1, 15, 45, -5), B, top)
    return Case(
        name,
        "K-9 Mail",
        "Reply sent with nothing written (header quote style): the only order file is the "
        "untouched one in the unquoted original",
        "rejected",
        "bob",
        message(headers, qp(body)),
        None,
        ["no orders found", "the ready order file"],
    )


@case
def fairemail_attach() -> Case:
    name = "fairemail-attached-toml.eml"
    placed = orders("alice", [("Peru", 8, ""), ("Brazil", 8, ""), ("Iceland", "rest", "")])
    alt = nested(
        "alternative",
        fair_boundary(name + "/alt"),
        [
            text_part(
                flowed("Attached.\n"),
                charset="UTF-8",
                cte="7bit",
                params="; format=flowed",
                quote_charset=False,
            ),
            text_part(
                '<!DOCTYPE html><html><head></head><body><div dir="auto">Attached.</div>'
                "</body></html>\n",
                "html",
                charset="UTF-8",
                cte="7bit",
                quote_charset=False,
            ),
        ],
    )
    att = part(
        [
            ("Content-Type", 'application/octet-stream; name="alice.orders.toml"'),
            ("Content-Transfer-Encoding", "base64"),
            ("Content-Disposition", 'attachment; filename="alice.orders.toml"'),
        ],
        b64(placed.text.encode()),
    )
    top, body = multipart("mixed", fair_boundary(name), [alt, att])
    headers = [
        ("Date", rfc_date(at(1, 16, 5))),
        ("From", who("alice")),
        ("To", MODERATOR),
        ("Message-ID", f"<{uuid(name).lower()}@example.org>"),
        ("Subject", "orders alice"),
        ("MIME-Version", "1.0"),
        *top,
        ("User-Agent", "FairEmail 1.2247"),
    ]
    return accepted(
        name,
        "FairEmail",
        "New message with the edited alice.orders.toml attached",
        "alice",
        message(headers, body),
        placed,
    )


@case
def outlook_web_forward() -> Case:
    name = "outlook-web-forward-with-attachments.eml"
    rep = B
    block = (
        "________________________________\n"
        "From: moderator@example.org <moderator@example.org>\n"
        "Sent: Monday, March 1, 2027 04:00\n"
        "To: bob@example.org <bob@example.org>\n"
        f"Subject: {rep.subject}\n"
    )
    typed = "Forwarding with my orders:\n\n" + BOB2.text
    plain = typed + "\n" + block + "\n" + html_text(report_body(rep.html))
    style = OWA_STYLE
    page = (
        '<html>\n<head>\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\n'
        '</head>\n<body dir="ltr">\n'
        + lines_html(typed, "div", f' class="elementToProof" style="{style}"')
        + '<div id="appendonsend"></div>\n'
        '<hr style="display:inline-block;width:98%" tabindex="-1">\n'
        '<div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif" style="font-size:11pt"'
        ' color="#000000"><b>From:</b> moderator@example.org &lt;moderator@example.org&gt;<br>'
        "<b>Sent:</b> Monday, March 1, 2027 04:00<br><b>To:</b> bob@example.org "
        f"&lt;bob@example.org&gt;<br><b>Subject:</b> {html.escape(rep.subject)}</font>\n"
        f"<div>&nbsp;</div>\n</div>\n<div>{report_body(rep.html)}</div>\n</body>\n</html>\n"
    )
    bnd = f"_000_{owa_id(name)[1:26]}_"
    alt = nested("alternative", bnd, [text_part(plain), text_part(page, "html")])
    atts = [
        part(
            [
                ("Content-Type", 'text/plain; name="bob.orders.toml"'),
                ("Content-Description", "bob.orders.toml"),
                (
                    "Content-Disposition",
                    'attachment; filename="bob.orders.toml"; size=291;\r\n\t'
                    'creation-date="Mon, 01 Mar 2027 09:00:00 GMT";\r\n\t'
                    'modification-date="Mon, 01 Mar 2027 09:00:00 GMT"',
                ),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(rep.ready.encode()),
        ),
        part(
            [
                ("Content-Type", 'application/json; name="bob.view.json"'),
                ("Content-Description", "bob.view.json"),
                ("Content-Disposition", 'attachment; filename="bob.view.json"'),
                ("Content-Transfer-Encoding", "base64"),
            ],
            b64(rep.view),
        ),
    ]
    top, body = multipart("mixed", f"_004_{owa_id(name)[1:26]}_", [alt, *atts])
    headers = [
        ("From", who("bob")),
        ("To", f'"{MODERATOR}" <{MODERATOR}>'),
        ("Subject", f"Fw: {rep.subject}"),
        ("Date", rfc_date(at(1, 17, 5, -5))),
        ("Message-ID", owa_id(name)),
        *reply_headers(rep),
        ("X-MS-Has-Attach", "yes"),
        ("Content-Language", "en-US"),
        *top,
        ("MIME-Version", "1.0"),
    ]
    return accepted(
        name,
        "Outlook on the web",
        "Forward (Fw:) with the orders typed on top and the report's attachments, the "
        "untouched bob.orders.toml among them",
        "bob",
        message(headers, body),
        BOB2,
    )


@case
def ios_mail_edited_in_quote() -> Case:
    name = "ios-mail-orders-edited-in-quote.eml"
    placed = orders("alice", [("Alberta", 11, ""), ("Japan", "rest", "")])
    quoted = quote(
        "On 1 Mar 2027, at 09:00, moderator@example.org wrote:\n\n" + edited_report_text(A, placed)
    )
    body = "Sent from my iPhone\n\n" + quoted
    top = [("Content-Type", "text/plain;\r\n\tcharset=utf-8")]
    headers = ios_headers(name, "alice", f"Re: {A.subject}", at(1, 17, 35), A, top)
    headers.insert(1, ("Content-Transfer-Encoding", "quoted-printable"))
    return accepted(
        name,
        "iOS Mail",
        "Reply with only 'Sent from my iPhone' written: the order file edited inside the quoted "
        "report, between the quoted cut lines",
        "alice",
        message(headers, qp(body)),
        placed,
        ["in the quoted part of your message"],
    )


@case
def proton_plain_text() -> Case:
    name = "proton-plain-text-mode.eml"
    rep = C
    body = (
        CAROL2.text + "\nSent with Proton Mail secure email.\n\n"
        "On Monday, March 1st, 2027 at 10:00 AM, moderator@example.org <moderator@example.org> "
        "wrote:\n\n" + quote(rep.text)
    )
    headers = [
        ("Date", rfc_date(at(1, 18, 0, 1))),
        ("To", MODERATOR),
        ("From", who("carol")),
        ("Subject", f"Re: {rep.subject}"),
        (
            "Message-ID",
            f"<{token(name, 40, ALNUM + '_-')}=@proton.me>",
        ),
        *reply_headers(rep),
        ("Feedback-ID", "12345678:user:proton"),
        ("MIME-Version", "1.0"),
        ("Content-Type", "text/plain; charset=utf-8"),
        ("Content-Transfer-Encoding", "quoted-printable"),
    ]
    return accepted(
        name,
        "Proton Mail",
        "Reply in Proton's plain-text mode: orders, 'Sent with Proton Mail secure email.' and "
        "the report in '>' lines",
        "carol",
        message(headers, qp(body)),
        CAROL2,
    )


@case
def outlook_en_question() -> Case:
    name = "outlook2016-en-question.eml"
    typed = (
        "Hi,\n\nCan I change my orders after I have sent them, or is the first message final?\n\n"
        "Thanks,\nCarol\n"
    )
    raw = outlook_plain(name, C, typed, at(1, 20, 40), OUTLOOK_EN)
    return Case(
        name,
        "Outlook 2016 (English)",
        "A question above the unquoted original (whose ready file is untouched), no orders",
        "question",
        "carol",
        raw,
        None,
        ["passed to the moderator"],
    )


@case
def roundcube_bottom() -> Case:
    name = "roundcube-bottom-posted-flowed.eml"
    rep = A
    body = (
        "On 2027-03-01 10:00, moderator@example.org wrote:\n" + quote(rep.text) + "\n" + ALICE3.text
    )
    headers = [
        ("MIME-Version", "1.0"),
        ("Date", rfc_date(at(1, 19, 20, 1))),
        ("From", who("alice")),
        ("To", MODERATOR),
        ("Subject", f"Re: {rep.subject}"),
        ("In-Reply-To", rep.message_id),
        ("References", rep.message_id),
        ("Message-ID", f"<{token(name, 32)}@example.org>"),
        ("X-Sender", "alice@example.org"),
        ("User-Agent", "Roundcube Webmail/1.6.9"),
        ("Content-Type", "text/plain; charset=US-ASCII;\r\n format=flowed"),
        ("Content-Transfer-Encoding", "7bit"),
    ]
    return accepted(
        name,
        "Roundcube",
        "Plain-text reply below the whole quoted report (Roundcube's default), format=flowed",
        "alice",
        message(headers, plain_bytes(flowed(body, 76))),
        ALICE3,
    )


@case
def evolution_top() -> Case:
    name = "evolution-reply.eml"
    rep = B
    body = (
        BOB2.text
        + "\nOn Mon, 2027-03-01 at 09:00 +0000, moderator@example.org wrote:\n"
        + quote(rep.text)
    )
    headers = [
        ("Message-ID", f"<{token(name, 40)}.camel@example.org>"),
        ("Subject", f"Re: {rep.subject}"),
        ("From", who("bob")),
        ("To", MODERATOR),
        ("Date", rfc_date(at(1, 19, 45, -5))),
        ("In-Reply-To", rep.message_id),
        ("References", rep.message_id),
        ("Content-Type", 'text/plain; charset="UTF-8"'),
        ("Content-Transfer-Encoding", "7bit"),
        ("User-Agent", "Evolution 3.50.3-1"),
        ("MIME-Version", "1.0"),
    ]
    return accepted(
        name,
        "Evolution",
        "Plain-text reply above 'On Mon, 2027-03-01 at 09:00 +0000, ... wrote:' and the quote",
        "bob",
        message(headers, plain_bytes(body)),
        BOB2,
    )


@case
def exchange_ndr() -> Case:
    name = "exchange-undeliverable.eml"
    human = (
        "Delivery has failed to these recipients or groups:\n\n"
        "alice@example.org\nThe recipient's mailbox is full and can't accept messages now.\n"
    )
    status = (
        "Reporting-MTA: dns;AM9PR07MB7777.eurprd07.prod.outlook.com\n"
        "Received-From-MTA: dns;mail.example.org\n"
        "Arrival-Date: Mon, 1 Mar 2027 09:00:03 +0000\n\n"
        "Final-Recipient: rfc822;alice@example.org\nAction: failed\nStatus: 5.2.2\n"
        "Diagnostic-Code: smtp;552 5.2.2 mailbox full\n"
    )
    bnd = "_" + uuid(name).lower() + "_"
    top, body = multipart(
        "report",
        bnd,
        [
            text_part(human, charset="us-ascii", cte="7bit"),
            part([("Content-Type", "message/delivery-status")], plain_bytes(status)),
            part(
                [("Content-Type", "text/rfc822-headers")],
                plain_bytes(
                    f"From: {MODERATOR}\nTo: alice@example.org\n"
                    "Subject: {A.subject}\nMessage-ID: {A.message_id}\n"
                ),
            ),
        ],
        params="; report-type=delivery-status",
    )
    headers = [
        ("From", "Microsoft Outlook <postmaster@example.org>"),
        ("To", MODERATOR),
        ("Date", rfc_date(at(1, 9, 0))),
        ("Content-Language", "en-US"),
        ("Message-ID", f"<{uuid(name)}@AM9PR07MB7777.eurprd07.prod.outlook.com>"),
        ("In-Reply-To", A.message_id),
        ("References", A.message_id),
        ("Subject", f"Undeliverable: {A.subject}"),
        ("X-MS-Exchange-Message-Is-Ndr", ""),
        *top,
        ("MIME-Version", "1.0"),
    ]
    return Case(
        name,
        "Exchange (bounce)",
        "Exchange's 'Undeliverable:' notice (multipart/report; report-type=delivery-status) "
        "for alice's report, without Auto-Submitted or an empty Return-Path",
        "unanswered",
        "alice",
        message(headers, body),
    )


# --- writing ----------------------------------------------------------------------------------


def main() -> None:
    for make in MAKERS:
        CASES.append(make())
    names = [c.file for c in CASES]
    assert len(names) == len(set(names)), "two cases with one file name"
    if OUT.exists():
        for old in OUT.glob("*.eml"):
            old.unlink()
    OUT.mkdir(parents=True, exist_ok=True)
    table: list[dict[str, Any]] = []
    for c in CASES:
        assert c.raw.count(b"\r\n\r\n") >= 1
        (OUT / c.file).write_bytes(c.raw)
        row: dict[str, Any] = {
            "file": c.file,
            "client": c.client,
            "what": c.what,
            "expect": c.expect,
            "player": c.player,
        }
        if c.untouched:
            row["untouched"] = True
        if c.orders is not None:
            row["orders"] = c.orders
        row["answer"] = c.answer
        table.append(row)
    head = (
        "# The mail-client corpus: one [[case]] per message in this folder, written by\n"
        "# tests/make_mail_corpus.py (run it again rather than editing these files).\n"
        "# expect: accepted | rejected | unanswered | question | resend. orders: the order data\n"
        "# the player wrote (compared as data with orders/<player>.toml). untouched: the player\n"
        "# chose the ready order file as it was. answer: phrases the answer must contain.\n\n"
    )
    (OUT / "cases.toml").write_text(head + tomli_w.dumps({"case": table}), encoding="utf-8")
    print(f"{len(CASES)} messages written to {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
