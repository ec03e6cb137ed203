"""What mail programs do to the text a player typed, undone.

A mail program rarely sends the characters as they were typed: it wraps long lines
(`format=flowed`, RFC 3676, or a hard wrap of the plain part), writes an HTML part (or only
an HTML part), turns straight quotes into curly ones, adds non-breaking and invisible spaces,
signs the text inside PGP armour, or labels plain ASCII with a charset nobody knows. Each
function here takes one of those back, and says when it changed anything, so that an answer
can tell the player what was done to their orders.
"""

from __future__ import annotations

import bisect
import codecs
import re
from dataclasses import dataclass
from html.parser import HTMLParser

MAX_HTML_CHARS = 2_000_000
"""The longest HTML part read for text; a longer one (no player types that much) is skipped."""
MAX_OPEN = 500
"""The most HTML elements counted as open at once."""

# -- charsets -------------------------------------------------------------------------------

_LATIN = {"us-ascii", "ascii", "iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "cp819"}
_LATIN |= {"iso_8859-1", "iso-ir-100", "ansi_x3.4-1968", "windows-1252", "cp1252", "x-ansi"}


def decode(raw: bytes, charset: str | None) -> tuple[str | None, str]:
    """Bytes of a text part as text: (text, charset used), or (None, the label) when they are
    not text in the charset they say and not UTF-8 either.

    Labels that mean "Western" (US-ASCII, ISO-8859-1) are read as windows-1252, as every mail
    program and browser does, so Outlook's 0x93/0x94 quotes are quotes; any label is first
    tried as UTF-8 when it names ASCII or no charset pbem knows (`X-UNKNOWN`), since that is
    what such bytes nearly always are. A file that starts with a UTF-16 byte-order mark
    (Notepad's "Unicode") is UTF-16, whatever the label says."""
    label = (charset or "us-ascii").strip().strip("\"'").lower() or "us-ascii"
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Notepad's "Unicode"
        try:
            return raw.decode("utf-16"), "utf-16"
        except UnicodeError:
            return None, "utf-16"
    raw = raw.removeprefix(codecs.BOM_UTF8)
    try:
        known = codecs.lookup(label).name
    except LookupError:
        known = None
    if known is None or label in _LATIN:
        try:
            return raw.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            if known is None:
                return None, label
        return _cp1252(raw), "windows-1252"
    try:
        return raw.decode(known), known
    except (UnicodeError, ValueError, LookupError):
        return None, label


def _cp1252(raw: bytes) -> str:
    """windows-1252, with its five unassigned bytes read as ISO-8859-1 reads them."""
    return "".join(
        chunk.decode("cp1252") if i % 2 == 0 else chunk.decode("latin-1")
        for i, chunk in enumerate(re.split(rb"([\x81\x8d\x8f\x90\x9d]+)", raw))
    )


# -- format=flowed (RFC 3676) ---------------------------------------------------------------


def unflow(text: str, delsp: bool) -> str:
    """Text sent as `format=flowed`, with the lines the sender's program broke joined again.

    A line ending in a space continues on the next line of the same quote depth (RFC 3676,
    4.2); with `DelSp=yes` that space was added by the wrap and is dropped (4.3). A space that
    starts a line was added to protect it ("space-stuffing", 4.4) and is removed. The signature
    line `-- ` is never joined. Quoted lines are written back with one `> ` per level."""
    out: list[str] = []
    joining: tuple[int, list[str]] | None = None
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        depth = len(line) - len(line.lstrip(">"))
        body = line[depth:]
        body = body.removeprefix(" ")
        if joining is not None and joining[0] != depth:
            out.append(_quoted(joining[0], "".join(joining[1])))
            joining = None
        flowed = body.endswith(" ") and body != "-- "
        if flowed:
            piece = body[:-1] if delsp else body
            if joining is None:
                joining = (depth, [piece])
            else:
                joining[1].append(piece)
            continue
        if joining is not None:
            out.append(_quoted(depth, "".join(joining[1]) + body))
            joining = None
        else:
            out.append(_quoted(depth, body))
    if joining is not None:
        out.append(_quoted(joining[0], "".join(joining[1])))
    return "\n".join(out)


def _quoted(depth: int, body: str) -> str:
    return "> " * depth + body if depth else body


# -- HTML -----------------------------------------------------------------------------------

_BLOCKS = {
    "address", "article", "aside", "blockquote", "dd", "div", "dl", "dt", "fieldset",
    "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
    "main", "nav", "ol", "p", "pre", "section", "table", "tbody", "td", "tfoot", "th",
    "thead", "tr", "ul",
}  # fmt: skip
_VOID = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "wbr",
}
_SKIP = {"head", "script", "style", "title", "template", "noscript", "xml"}
_QUOTE_CLASSES = re.compile(
    r"(?:^|\s)(gmail_quote|protonmail_quote|yahoo_quoted|moz-forward-container|"
    r"zmail_extra|ymail_android_signature)(?:\s|$)",
    re.IGNORECASE,
)
_PRE = re.compile(r"white-space\s*:\s*(pre-wrap|pre-line|break-spaces|pre)", re.IGNORECASE)
_OUTLOOK_HEADER_IDS = {"divrplyfwdmsg", "x_divrplyfwdmsg", "reply-intro"}
OUTLOOK_SEPARATOR = "-----Original Message-----"


@dataclass
class _Open:
    tag: str
    quote: bool = False
    pre: str | None = None
    skip: bool = False


class _TextOf(HTMLParser):
    """The text of an HTML part, as a plain-text mail of it would read: block elements and
    `<br>` break lines, whitespace collapses except in `<pre>` and `white-space: pre*`, and
    what the sender's program marks as quoted (`<blockquote>`, Gmail's, Proton's, Yahoo's and
    Thunderbird's quote containers) is written with `> ` per level, as a plain reply quotes.
    Outlook's header block of the message replied to (`divRplyFwdMsg`) is preceded by its
    plain-text separator, so that what follows it is known to be the original."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self.line: list[str] = []
        self.line_depth = 0
        self.stack: list[_Open] = []
        # kept as elements open and close, so that each tag costs the same however many are
        # open (a stranger's page may open 100,000 and close none)
        self.at: dict[str, list[int]] = {}
        self.blockquotes = self.containers = self.skips = 0
        self.pres: list[str] = []

    @property
    def depth(self) -> int:
        """The quote level: one per open `<blockquote>`; a quote container of a mail program
        (Gmail's, Proton's `div`) that holds no blockquote counts as one level (Yahoo's holds
        the original as it is; Gmail's holds the attribution, then a blockquote)."""
        return self.blockquotes or (1 if self.containers else 0)

    @property
    def pre(self) -> str | None:
        return self.pres[-1] if self.pres else None

    @property
    def skipping(self) -> bool:
        return self.skips > 0

    def push(self, opened: _Open) -> None:
        if len(self.stack) >= MAX_OPEN:
            return  # no mail program nests so deep: what is opened beyond is text
        self.at.setdefault(opened.tag, []).append(len(self.stack))
        self.stack.append(opened)
        self.count(opened, 1)

    def pop_to(self, index: int) -> None:
        for opened in reversed(self.stack[index:]):
            self.at[opened.tag].pop()
            self.count(opened, -1)
        del self.stack[index:]

    def count(self, opened: _Open, step: int) -> None:
        self.blockquotes += step if opened.tag == "blockquote" else 0
        self.containers += step if opened.quote and opened.tag != "blockquote" else 0
        self.skips += step if opened.skip else 0
        if opened.pre is not None:
            if step > 0:
                self.pres.append(opened.pre)
            else:
                self.pres.pop()

    def newline(self, force: bool = False) -> None:
        if self.line or force:
            self.lines.append(_quoted(self.line_depth, "".join(self.line).rstrip(" ")))
            self.line = []
        self.line_depth = self.depth

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): (v or "") for k, v in attrs}
        if tag == "body" and self.at.get("head"):  # a <head> left open must not hide the body
            self.pop_to(self.at["head"][0])
        if tag == "br":
            self.newline(force=True)
            return
        if tag in _BLOCKS:
            self.newline()
        if tag == "hr":
            return
        if values.get("id", "").lower() in _OUTLOOK_HEADER_IDS:
            self.newline()
            self.lines.append(_quoted(self.depth, OUTLOOK_SEPARATOR))
        if tag in _VOID:
            return
        style = _PRE.search(values.get("style", ""))
        opened = _Open(
            tag,
            quote=tag == "blockquote" or bool(_QUOTE_CLASSES.search(values.get("class", ""))),
            pre="pre" if tag in ("pre", "textarea", "plaintext", "listing", "xmp") else None,
            skip=tag in _SKIP,
        )
        if style is not None:
            opened.pre = style.group(1).lower()
        self.push(opened)
        if opened.quote:
            self.newline()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID and self.stack and self.stack[-1].tag == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        open_at = self.at.get(tag)
        index = open_at[-1] if open_at else None
        if index is None:
            if tag in _BLOCKS or tag == "br":
                self.newline(force=tag == "br")
            return
        quotes = self.depth
        self.pop_to(index)
        if tag in _BLOCKS or self.depth != quotes:
            self.lines_break()
        self.line_depth = self.depth if not self.line else self.line_depth

    def lines_break(self) -> None:
        """End the line being written, as it was quoted when it began."""
        if self.line:
            self.lines.append(_quoted(self.line_depth, "".join(self.line).rstrip(" ")))
            self.line = []

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        pre = self.pre
        if pre in ("pre", "pre-wrap", "break-spaces"):
            pieces = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for i, piece in enumerate(pieces):
                if i:
                    self.newline(force=True)
                self.write(piece)
            return
        if pre == "pre-line":
            pieces = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for i, piece in enumerate(pieces):
                if i:
                    self.newline(force=True)
                self.write(re.sub(r"[ \t\f]+", " ", piece))
            return
        text = re.sub(r"[ \t\n\r\f]+", " ", data)
        if not self.line or self.line[-1].endswith(" "):
            text = text.lstrip(" ")
        self.write(text)

    def write(self, text: str) -> None:
        if not text:
            return
        if not self.line:
            self.line_depth = self.depth
        self.line.append(text)

    def text(self) -> str:
        self.close()
        self.newline()
        while self.lines and not self.lines[-1].strip():
            self.lines.pop()
        return "\n".join(self.lines) + "\n" if self.lines else ""


def html_text(page: str) -> str:
    """The text of an HTML part (see `_TextOf`); empty when the part is too long to read."""
    if len(page) > MAX_HTML_CHARS:
        return ""
    reader = _TextOf()
    try:
        reader.feed(page)
        return reader.text()
    except (AssertionError, ValueError, RecursionError):  # what the parser may raise on junk
        return reader.text() if reader.lines else ""


# -- PGP armour ------------------------------------------------------------------------------


def unsigned(text: str) -> tuple[str, bool]:
    """Text with each inline PGP clear-signed block replaced by what it signs (its lines
    dash-escaped by the signer, `- -- 8<`, taken back: RFC 4880, 7.1); whether any was. The
    signature is not checked: pbem's orders are signed by the player's secret. A block without
    its signature (cut, or quoted) is left as it is. Read line by line, once."""
    if "-----BEGIN PGP SIGNED MESSAGE-----" not in text:
        return text, False
    lines = text.replace("\r\n", "\n").split("\n")
    marks = [line.rstrip() for line in lines]
    signatures = [n for n, mark in enumerate(marks) if mark == "-----BEGIN PGP SIGNATURE-----"]
    ends = [n for n, mark in enumerate(marks) if mark == "-----END PGP SIGNATURE-----"]
    out: list[str] = []
    i, changed = 0, False
    while i < len(lines):
        if marks[i] != "-----BEGIN PGP SIGNED MESSAGE-----":
            out.append(lines[i])
            i += 1
            continue
        body = i + 1
        while body < len(lines) and marks[body]:  # the armour headers (Hash: ...)
            body += 1
        signature = next((n for n in signatures[bisect.bisect_right(signatures, body) :]), None)
        end = (
            next((n for n in ends[bisect.bisect_right(ends, signature) :]), None)
            if signature is not None
            else None
        )
        if signature is None or end is None:
            out.append(lines[i])
            i += 1
            continue
        out.extend(
            line[2:] if line.startswith("- ") else line for line in lines[body + 1 : signature]
        )
        i, changed = end + 1, True
    return "\n".join(out), changed


# -- typography -----------------------------------------------------------------------------

_QUOTES_MAP = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
    "\u00ab": '"', "\u00bb": '"', "\uff02": '"', "\u301d": '"', "\u301e": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u2039": "'", "\u203a": "'", "\uff07": "'", "\uff1d": "=",
}  # fmt: skip
_QUOTES = str.maketrans(_QUOTES_MAP)
_GUILLEMET_SPACE = re.compile(
    "(?<=[\u00ab\u2039])[\u00a0\u202f ]+|[\u00a0\u202f ]+(?=[\u00bb\u203a])"
)
_SPACES = str.maketrans(
    {"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ", "\u3000": " ",
     "\u2028": "\n", "\u2029": "\n"}
)  # fmt: skip
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")


def plain_spaces(text: str) -> str:
    """Non-breaking, thin and ideographic spaces as spaces; zero-width characters and soft
    hyphens (invisible, and added by mail programs and phones) removed; line ends as `\\n`."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _INVISIBLE.sub("", text.translate(_SPACES))


def straightened(text: str) -> str:
    """Text with the typographic replacements of phones and word processors taken back:
    curly and angle quotes as straight ones, a full-width `=` as `=`."""
    return _GUILLEMET_SPACE.sub("", text).translate(_QUOTES)
