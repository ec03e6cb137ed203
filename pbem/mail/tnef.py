"""Reading a winmail.dat: the TNEF attachment in which Outlook wraps a "Rich Text" message.

A player whose Outlook sends Rich Text mails a message whose text, and every file attached to
it, sits inside one `application/ms-tnef` attachment named winmail.dat. `read_tnef` takes that
attachment's bytes and gives back the message's text (plain), its HTML if it had any, and the
files inside, so that the orders in it are found as in any other mail; when it cannot, it gives
a sentence for the player saying how to send the orders so that pbem reads them.

Anyone can mail anything, so the bytes are read as hostile: `read_tnef` never raises, refuses
input over `MAX_TNEF_BYTES`, a text over `MAX_RTF_BYTES`, more than `MAX_ATTACHMENTS` files,
and groups nested deeper than `MAX_RTF_DEPTH`; it writes nothing to disk and its work grows
with the size of the input, never with its square.

Which code does what, and why:

- The TNEF container is decoded by the `tnefparse` package (pure Python, stable, tested on
  Outlook's own files, no dependencies). It was written for trusted files: its loops run as
  many times as a count read from the file says, even past the end of the data (a count of
  four thousand million properties spins that long), and it copies the rest of the file once
  per attribute. So before it sees the bytes, `_survey` walks the same structure the same
  way, cheaply, and refuses a file whose counts would make it spin, whose attributes are cut
  short, or that holds too many attributes or files. The survey also keeps the exact bytes of
  the compressed RTF body: `tnefparse` strips the trailing zero bytes of binary values and
  puts one back, so a compressed RTF ending in two would no longer match its checksum.
- The compressed RTF (MS-OXRTFCP) is expanded by the `compressed_rtf` package, the one
  `tnefparse` itself uses. It expands without a limit, whatever size the header claims (up to
  eight times the input), so `_expanded_size` first counts what it would produce and refuses
  more than `MAX_RTF_BYTES` before anything is expanded.
- RTF is turned into text here, by `rtf_text`, in one pass over the tokens. The small package
  for this, `striprtf`, rewrites hyperlink fields with a regular expression of nested `.*`
  (slow on hostile input) and has no HTML de-encapsulation; `RTFDE` de-encapsulates but
  does not read an RTF that encapsulates nothing (Outlook's own Rich Text). Outlook's RTF
  needs little: groups, destinations to skip, `\\par` and friends, `\\'hh` in the document's
  code page, `\\uN` with its fallback skipped, and for `\\fromhtml1` the HTML of
  `{\\*\\htmltag}` groups and of the text that `\\htmlrtf` does not suppress (MS-OXRTFEX).

The package's own log records and warnings would print to the moderator's terminal (Python
prints unhandled records of WARNING and above); its logger is given a handler that drops
them and is kept from passing them on, and its calls run with warnings ignored.
"""

from __future__ import annotations

import codecs
import logging
import re
import struct
import warnings
from dataclasses import dataclass

import compressed_rtf  # type: ignore[import-untyped]
from tnefparse.tnef import TNEF  # type: ignore[import-untyped]

MAX_TNEF_BYTES = 1024 * 1024
"""The largest winmail.dat read; a larger one is refused (order files are a few kilobytes)."""
MAX_RTF_BYTES = 1024 * 1024
"""The largest RTF body, once expanded, that is read."""
MAX_ATTACHMENTS = 50
"""The most files a winmail.dat may hold."""
MAX_RTF_DEPTH = 200
"""How deep RTF groups may nest (those of Outlook's samples go eight deep at most)."""
MAX_ATTRIBUTES = 600
"""The most TNEF attributes in one file, embedded messages included (a message with fifty
files has under four hundred): the package copies the rest of the file once per attribute."""
MAX_PROPERTY_STEPS = 100_000
"""The most property values the package is let decode, counting the turns its loops make
past the end of the data."""
MAX_EMBEDDED_DEPTH = 3
"""How deep messages attached inside messages may nest."""

_ADVICE = "send it as plain text (in Outlook: Format Text > Plain Text)"
_PROBLEM = (
    "your mail program (Outlook) sent the message as Rich Text in a winmail.dat attachment, "
    "which pbem could not read{why}: " + _ADVICE
)

_log = logging.getLogger("tnefparse")
_log.addHandler(logging.NullHandler())
_log.propagate = False

_SIGNATURE = 0x223E9F78
_LEVEL_ATTACHMENT = 0x02
_ATT_ATTACH_REND_DATA = 0x9002
_ATT_MAPI_PROPS = 0x9003
_ATT_RECIP_TABLE = 0x9004
_ATT_ATTACHMENT = 0x9005
_PR_RTF_COMPRESSED = 0x1009
_PR_ATTACH_DATA_OBJ = 0x3701
_IMESSAGE_SIG = b"\x07\x03\x02\x00\x00\x00\x00\x00\xc0\x00\x00\x00\x00\x00\x00\x46"
_FIXED_SIZE = {
    0x0002: 2,  # short
    0x000B: 2,  # boolean
    0x0003: 4,  # long
    0x0004: 4,  # float
    0x000A: 4,  # error
    0x0005: 8,  # double
    0x0006: 8,  # currency
    0x0007: 8,  # application time
    0x0014: 8,  # 8-byte integer
    0x0040: 8,  # system time
    0x0048: 16,  # GUID
}
_VARIABLE = frozenset((0x0000, 0x000D, 0x001E, 0x001F, 0x0102))
_BINARY = frozenset((0x0000, 0x000D, 0x0102))
_u16 = struct.Struct("<H").unpack_from
_u32 = struct.Struct("<I").unpack_from


@dataclass(frozen=True)
class Tnef:
    """What a winmail.dat holds, as pbem uses it."""

    text: str | None
    """The message's text as plain text, lines ending in "\\n": the plain body when there is
    one, else the RTF body turned into text; None when there is neither."""
    html: str | None
    """The HTML body, or the HTML the RTF body encapsulates; None when there is none."""
    files: tuple[tuple[str, bytes], ...]
    """The files attached inside, as (file name without folders, bytes)."""
    problem: str | None
    """Why the winmail.dat could not be read, as a sentence for the player; None when read.
    An RTF body that cannot be read is passed over when there is something else to read (a
    plain or HTML body, files), as the orders may well be there."""


class _Refused(ValueError):
    """The input is refused; the argument says why, as a clause for the player's sentence."""


def read_tnef(data: bytes) -> Tnef:
    """Read a winmail.dat. Never raises: what cannot be read gives a `problem` sentence."""
    try:
        return _read(data)
    except _Refused as refused:
        return _refusal(str(refused))
    except Exception:  # the package's own errors on bytes that are no TNEF
        return _refusal("")


def _refusal(why: str) -> Tnef:
    return Tnef(None, None, (), _PROBLEM.format(why=f" ({why})" if why else ""))


def _read(data: bytes) -> Tnef:
    if len(data) > MAX_TNEF_BYTES:
        raise _Refused(f"it is larger than {_size(MAX_TNEF_BYTES)}")
    survey = _Survey()
    _survey(bytes(data), 0, survey)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tnef = TNEF(bytes(data), do_checksum=True)
        files = _files(tnef)
        text = _body_text(tnef.body, tnef.codepage)
        html = _html_text(tnef.htmlbody)
    if survey.rtf is not None and (text is None or html is None):
        try:
            rtf = rtf_text(_expand(survey.rtf))
        except _Refused:
            if text is None and html is None and not files:
                raise  # nothing else to read: the player is told why
        else:
            text = text if text is not None else _lines(rtf[0])
            html = html if html is not None else rtf[1]
    return Tnef(text if text else None, html if html else None, files, None)


def _files(tnef: TNEF) -> tuple[tuple[str, bytes], ...]:
    """The attached files: a message attached inside (Outlook's "item") is no file and is
    left out. Names lose any folder part, as mail programs do."""
    files = []
    for attachment in tnef.attachments:
        if hasattr(attachment, "embed"):
            continue
        payload = attachment.data
        if not isinstance(payload, bytes):
            continue
        try:
            name = attachment.long_filename()
        except Exception:  # a short name not in UTF-8: read as Outlook writes them
            raw = attachment._name
            name = raw.decode("cp1252", "replace") if isinstance(raw, bytes) else str(raw)
        if isinstance(name, bytes):
            name = name.decode("cp1252", "replace")
        name = re.split(r"[/\\]", str(name).strip("\x00"))[-1]
        if name or payload:
            files.append((name, payload))
    return tuple(files)


def _body_text(body: object, codepage: object) -> str | None:
    """The plain body, which the package gives as text (from a MAPI property) or as bytes in
    the file's OEM code page (from the attBody attribute); None when it is blank."""
    if isinstance(body, bytes):
        body = body.decode(_codec(codepage if isinstance(codepage, str) else None), "replace")
    if not isinstance(body, str):
        return None
    text = _lines(body.replace("\x00", ""))
    return text if text.strip() else None


def _html_text(html: object) -> str | None:
    """The HTML body: the package decodes it in the message's internet code page when the
    file names one; else it is bytes, read as UTF-8 when they are, else as cp1252."""
    if isinstance(html, bytes):
        raw = html
        try:
            html = raw.decode("utf-8")
        except UnicodeDecodeError:
            html = raw.decode("cp1252", "replace")
    if not isinstance(html, str):
        return None
    html = html.rstrip("\x00")
    return html if html.strip() else None


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit} bytes"


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _codec(name: str | None) -> str:
    """A codec Python has for a code page's name, cp1252 (Outlook's usual) when unknown."""
    if name:
        try:
            return codecs.lookup(name).name
        except LookupError:
            pass
    return "cp1252"


# --- the survey: the package's walk over the file, made cheaply and with limits ---------------


@dataclass
class _Survey:
    attributes: int = 0
    attachments: int = 0
    steps: int = 0
    rtf: bytes | None = None

    def step(self, count: int) -> None:
        self.steps += count
        if self.steps > MAX_PROPERTY_STEPS:
            raise _Refused("its structure is damaged")


class _Stop(Exception):
    """Where the package's property loop would raise and stop, as its own handler does."""


def _survey(data: bytes, depth: int, survey: _Survey) -> None:
    """Walk the attributes as `tnefparse.TNEF` does and refuse what would make it work without
    bound. Mirrors its loop: an attribute is level, id, type, length, value, checksum."""
    if len(data) < 6 or _u32(data, 0)[0] != _SIGNATURE:
        raise _Refused("it is not a TNEF file" if depth == 0 else "its structure is damaged")
    offset = 6
    size = len(data)
    while offset + 12 < size:
        survey.attributes += 1
        if survey.attributes > MAX_ATTRIBUTES:
            raise _Refused("its structure is damaged")
        level = data[offset]
        name = _u16(data, offset + 1)[0]
        length = _u32(data, offset + 5)[0] + 11
        if length > size - offset:
            if depth == 0:
                raise _Refused("it is cut short")
            # An attached message reaches the package without its trailing zero bytes, which
            # may be its last checksum: the package reads what is left, and so does this.
            length = size - offset
        value = data[offset + 9 : offset + length - 2]
        offset += length
        if name == _ATT_ATTACH_REND_DATA:
            survey.attachments += 1
            if survey.attachments > MAX_ATTACHMENTS:
                raise _Refused(f"it holds more than {MAX_ATTACHMENTS} files")
        if level == _LEVEL_ATTACHMENT:
            if name == _ATT_ATTACHMENT:
                _survey_properties(value, 0, depth, survey, message=False)
        elif name == _ATT_MAPI_PROPS:
            _survey_properties(value, 0, depth, survey, message=depth == 0)
        elif name == _ATT_RECIP_TABLE:
            if len(value) < 4:
                raise _Refused("its structure is damaged")
            rows = _u32(value, 0)[0]
            at = 4
            for _ in range(rows):  # each row takes four bytes at least, or raises
                at = _survey_properties(value, at, depth, survey, message=False)
    # What is left is part of an attribute, unless it is the stray byte or two that some of
    # Outlook's files end with (the package skips up to twelve).
    if depth == 0 and size - offset > 2:
        raise _Refused("it is cut short")


def _survey_properties(data: bytes, start: int, depth: int, survey: _Survey, message: bool) -> int:
    """Walk a MAPI property list as `tnefparse.mapi.decode_mapi` does; return where it ends.
    Its loop goes on past the end of the data for as many turns as the count says: those
    turns are counted, and refused past `MAX_PROPERTY_STEPS`."""
    size = len(data)
    if start + 4 > size:
        raise _Refused("its structure is damaged")
    count = _u32(data, start)[0]
    offset = start + 4

    def need(at: int, width: int) -> int:
        if at + width > size:
            raise _Stop
        return int(struct.unpack_from("<I" if width == 4 else "<H", data, at)[0])

    try:
        done = 0
        while done < count:
            if offset >= size:
                survey.step(count - done)
                break
            done += 1
            survey.step(1)
            kind = need(offset, 2)
            name = need(offset + 2, 2)
            offset += 4
            if name >= 0x8000:
                if offset + 16 > size:
                    raise _Stop
                offset += 16
                named = need(offset, 4)
                offset += 4
                if named == 0:
                    need(offset, 4)
                    offset += 4
                else:
                    length = need(offset, 4)
                    offset += 4 + length + (-length % 4)
            values: int | None = None
            if kind & 0x1000:
                kind ^= 0x1000
                values = need(offset, 4)
                offset += 4
            turns = values or 1
            if kind in _FIXED_SIZE:
                survey.step(turns)
                offset += _FIXED_SIZE[kind] * turns
            elif kind in _VARIABLE:
                items: list[bytes] = []
                for _ in range(turns):  # each turn reads four bytes, or stops
                    if values:
                        pieces = 1
                    else:
                        pieces = need(offset, 4)
                        offset += 4
                    for _ in range(pieces):
                        length = need(offset, 4)
                        offset += 4
                        length += -length % 4
                        items.append(data[offset : offset + length])
                        survey.step(1)
                        offset += length
                if message and name == _PR_RTF_COMPRESSED and items:
                    survey.rtf = items[0]
                if name == _PR_ATTACH_DATA_OBJ and kind in _BINARY:
                    joined = b"".join(item.rstrip(b"\x00") for item in items)
                    if joined.startswith(_IMESSAGE_SIG):
                        if depth + 1 > MAX_EMBEDDED_DEPTH:
                            raise _Refused("its structure is damaged")
                        _survey(joined[len(_IMESSAGE_SIG) :], depth + 1, survey)
            else:
                raise _Stop
            if turns % 2 and kind in (0x0002, 0x000B):
                offset += 2
    except _Stop:
        pass
    return offset


# --- compressed RTF ------------------------------------------------------------------------

_LZFU = b"LZFu"
_MELA = b"MELA"
_DICTIONARY_START = 207


def _expand(raw: bytes) -> bytes:
    """The RTF of a PR_RTF_COMPRESSED value, refused when it would be over `MAX_RTF_BYTES`."""
    if len(raw) < 16:
        raise _Refused("its text is damaged")
    packed, claimed = struct.unpack_from("<II", raw)
    kind = raw[8:12]
    if claimed > MAX_RTF_BYTES:
        raise _Refused(f"its text is larger than {_size(MAX_RTF_BYTES)}")
    if kind == _MELA:
        return bytes(raw[16 : 16 + claimed])
    if kind != _LZFU or packed < 12 or packed - 12 > len(raw) - 16:
        raise _Refused("its text is damaged")
    contents = raw[16 : 16 + packed - 12]
    if len(contents) * 8 > MAX_RTF_BYTES and _expanded_size(contents) > MAX_RTF_BYTES:
        raise _Refused(f"its text is larger than {_size(MAX_RTF_BYTES)}")
    try:
        rtf = compressed_rtf.decompress(bytes(raw))
    except Exception as error:  # its checksum or token errors, all of one Exception class
        raise _Refused("its text is damaged") from error
    if not isinstance(rtf, bytes):
        raise _Refused("its text is damaged")
    return rtf


def _expanded_size(contents: bytes) -> int:
    """How many bytes `compressed_rtf.decompress` would write for these contents, counted the
    way it reads them (a control byte, then eight literals or references) and without the
    dictionary; counting stops once past `MAX_RTF_BYTES`. No more than eight times the input
    can come out, so shorter contents need no count."""
    at = 0
    size = len(contents)
    written = 0
    write = _DICTIONARY_START
    while at < size:
        control = contents[at]
        at += 1
        for bit in range(8):
            if control >> bit & 1:
                if at >= size:
                    break
                if at + 2 > size:
                    raise _Refused("its text is damaged")
                token = contents[at] << 8 | contents[at + 1]
                at += 2
                if token >> 4 == write:
                    return written
                length = (token & 0xF) + 2
                written += length
                write = (write + length) % 4096
            else:
                if at >= size:
                    break
                at += 1
                written += 1
                write = (write + 1) % 4096
        if written > MAX_RTF_BYTES:
            return written
    return written


# --- RTF to text and HTML ----------------------------------------------------------------

_TOKEN = re.compile(
    rb"\\([a-zA-Z]{1,32})(-?[0-9]{1,10})? ?"  # 1, 2: a control word and its number
    rb"|\\'([0-9a-fA-F]{2})"  # 3: a byte in the code page
    rb"|\\(.)"  # 4: a control symbol
    rb"|([{}])"  # 5: a group's start or end
    rb"|[\r\n]+"  # line ends in the source: no text
    rb"|([^\\{}\r\n]+)"  # 6: text
    rb"|\\",  # a backslash ending the data
    re.DOTALL,
)
_DESTINATIONS = frozenset(
    b"""fonttbl colortbl stylesheet info pict object objdata objclass objname header headerl
    headerr headerf footer footerl footerr footerf footnote ftnsep ftnsepc ftncn aftnsep
    aftnsepc aftncn annotation atnid atnauthor atntime atnref atndate atnicn fldinst datafield
    themedata colorschememapping latentstyles listtable listoverridetable rsidtbl generator
    xmlnstbl mmathPr filetbl revtbl protusertbl pgdsctbl author operator title subject keywords
    comment doccomm company category manager hlinkbase creatim revtim printim buptim userprops
    bkmkstart bkmkend nonshppict shppict template xe tc txe rxe pnseclvl""".split()
)
_WORDS = {
    b"par": "\n",
    b"line": "\n",
    b"sect": "\n",
    b"page": "\n",
    b"row": "\n",
    b"tab": "\t",
    b"cell": "\t",
    b"nestcell": "\t",
    b"emdash": "\u2014",
    b"endash": "\u2013",
    b"emspace": "\u2003",
    b"enspace": "\u2002",
    b"qmspace": "\u2005",
    b"bullet": "\u2022",
    b"lquote": "\u2018",
    b"rquote": "\u2019",
    b"ldblquote": "\u201c",
    b"rdblquote": "\u201d",
}
_SYMBOLS = {
    b"~": "\u00a0",
    b"_": "\u2011",
    b"{": "{",
    b"}": "}",
    b"\\": "\\",
    b"\n": "\n",
    b"\r": "\n",
}
_CHARSETS = {
    2: "cp1252",
    77: "mac_roman",
    128: "cp932",
    129: "cp949",
    130: "johab",
    134: "gbk",
    136: "cp950",
    161: "cp1253",
    162: "cp1254",
    163: "cp1258",
    177: "cp1255",
    178: "cp1256",
    186: "cp1257",
    204: "cp1251",
    222: "cp874",
    238: "cp1250",
    255: "cp437",
}


@dataclass
class _Group:
    """What a group carries and its subgroups inherit: whether its text is shown (`text`),
    whether it is part of the encapsulated HTML (`html`: an htmltag destination, or shared
    text that `\\htmlrtf` does not suppress), the fallback length of `\\uN`, the code page."""

    text: bool = True
    html: bool = True
    htmlrtf: bool = False
    htmltag: bool = False
    fonttbl: bool = False
    starred: bool = False
    uc: int = 1
    codec: str = "cp1252"

    def copy(self) -> _Group:
        return _Group(
            self.text,
            self.html,
            self.htmlrtf,
            self.htmltag,
            self.fonttbl,
            False,
            self.uc,
            self.codec,
        )


class _Out:
    """Text and HTML being written; bytes of a code page are held until a whole run of them
    can be decoded (a character of an Asian code page is two `\\'hh`)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.html: list[str] = []
        self._held = bytearray()
        self._key: tuple[bool, bool, str] = (False, False, "cp1252")

    def raw(self, data: bytes, text: bool, html: bool, codec: str) -> None:
        if (text, html, codec) != self._key:
            self.flush()
            self._key = (text, html, codec)
        self._held += data

    def chars(self, text: str | None, html: str | None) -> None:
        self.flush()
        if text is not None:
            self.text.append(text)
        if html is not None:
            self.html.append(html)

    def flush(self) -> None:
        if self._held:
            decoded = self._held.decode(self._key[2], "replace")
            if self._key[0]:
                self.text.append(decoded)
            if self._key[1]:
                self.html.append(decoded)
            self._held.clear()


def rtf_text(rtf: bytes) -> tuple[str, str | None]:
    """The text of an RTF document, and the HTML it encapsulates (None unless `\\fromhtml1`).

    The text is what an RTF reader shows: paragraphs and line breaks as "\\n", tabs as "\\t",
    `\\'hh` decoded in the code page of the document or of the current font, `\\uN` as its
    character with the N fallback characters after it skipped, and the destinations that are
    no text (font and colour tables, style sheet, document information, pictures, every
    `{\\*...}` group) left out. Curly quotes stay curly, `\\~` is U+00A0. Raises ValueError
    when the data is no RTF or its groups nest deeper than `MAX_RTF_DEPTH`."""
    if len(rtf) > MAX_RTF_BYTES:
        raise _Refused(f"its text is larger than {_size(MAX_RTF_BYTES)}")
    start = rtf.find(b"{\\rtf")
    if start < 0 or rtf[:start].strip(b" \t\r\n\x00"):
        raise _Refused("its text is damaged")
    out = _Out()
    stack: list[_Group] = []
    group = _Group()
    ansi = "cp1252"
    fonts: dict[int, str] = {}
    font: int | None = None
    from_html = False
    skip = 0  # fallback characters of a \uN still to skip
    at = start
    size = len(rtf)
    while at < size:
        token = _TOKEN.match(rtf, at)
        if token is None:  # cannot happen: the last branch takes any byte left
            break
        at = token.end()
        word, number, byte, symbol, brace, run = token.groups()
        if brace is not None:
            skip = 0
            if brace == b"{":
                if len(stack) >= MAX_RTF_DEPTH:
                    raise _Refused("its text is damaged")
                stack.append(group)
                group = group.copy()
            else:
                if len(stack) <= 1:
                    break  # the document's group is closed: what follows is no part of it
                group = stack.pop()
            continue
        if not stack:
            continue
        shows = group.text
        html = from_html and group.html and not group.htmlrtf
        if run is not None:
            if skip:
                cut = min(skip, len(run))
                skip -= cut
                run = run[cut:]
            if run and (shows or html):
                out.raw(run, shows, html, group.codec)
            continue
        if byte is not None:
            if skip:
                skip -= 1
            elif shows or html:
                out.raw(bytes((int(byte, 16),)), shows, html, group.codec)
            continue
        if skip:
            skip -= 1  # a control word or symbol counts as one fallback character
            continue
        if symbol is not None:
            if symbol == b"*":
                group.starred = True
            elif symbol in _SYMBOLS and (shows or html):
                char = _SYMBOLS[symbol]
                crlf = "\r\n" if char == "\n" else char
                out.chars(char if shows else None, crlf if html else None)
            continue
        name = word
        value = int(number) if number is not None else None
        if group.starred:
            group.starred = False
            group.text = False
            if name == b"htmltag" and from_html and group.html and not group.htmlrtf:
                group.htmltag = True
                group.codec = ansi
            else:
                group.html = False
            continue
        if name in _DESTINATIONS:
            group.text = group.html = False
            if name == b"fonttbl":
                group.fonttbl = True
            continue
        if name == b"bin":
            at += max(0, min(value or 0, size - at))
            continue
        if name in _WORDS:
            if shows or html:
                char = _WORDS[name]
                crlf = "\r\n" if char == "\n" else char
                out.chars(char if shows else None, crlf if html else None)
        elif name == b"u" and value is not None:
            if value < 0:
                value += 0x10000
            char = chr(value) if 0 <= value <= 0xFFFF else "\ufffd"
            if shows or html:
                out.chars(char if shows else None, char if html else None)
            skip = group.uc
        elif name == b"uc" and value is not None:
            group.uc = max(0, min(value, 8))
        elif name == b"htmlrtf":
            group.htmlrtf = value != 0
        elif name == b"fromhtml" and len(stack) == 1:
            from_html = True
        elif name == b"ansicpg" and value is not None:
            ansi = _codec("utf-8" if value == 65001 else f"cp{value}")
            group.codec = ansi
        elif name in (b"mac", b"pc", b"pca"):
            ansi = group.codec = {b"mac": "mac_roman", b"pc": "cp437", b"pca": "cp850"}[name]
        elif group.fonttbl:
            if name == b"f" and value is not None:
                font = value
            elif name == b"fcharset" and value is not None and font is not None:
                if value in _CHARSETS:
                    fonts[font] = _CHARSETS[value]
            elif name == b"cpg" and value is not None and font is not None:
                fonts[font] = _codec(f"cp{value}")
        elif name == b"f" and value is not None and not group.htmltag:
            group.codec = fonts.get(value, ansi)
    out.flush()
    text = _whole("".join(out.text))
    return text, (_whole("".join(out.html)) if from_html else None)


def _whole(text: str) -> str:
    """Join the halves of characters beyond U+FFFF that `\\uN` writes as two surrogates."""
    if any("\ud800" <= char <= "\udfff" for char in text):
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text
