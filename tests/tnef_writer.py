"""A small TNEF writer, so the tests can make winmail.dat files as Outlook does.

It follows MS-OXTNEF: the signature 0x223E9F78 and a key, then attributes, each a level
(1 the message, 2 an attachment), an id and type (one 32-bit number written as two 16-bit
halves), the length of the value, the value and its checksum (the sum of its bytes, modulo
65536). The message attributes come first, in the order Outlook writes them (TNEF version,
OEM code page, message class, subject, plain body, then the MAPI properties, where the RTF
body is PR_RTF_COMPRESSED and the HTML body PR_BODY_HTML); each attachment follows, opened by
its rendering data, with its file name, its bytes and its own MAPI properties (the long file
name). Each id and type was checked against Outlook's own files (tests/test_tnef.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence

import compressed_rtf  # type: ignore[import-untyped]

SIGNATURE = 0x223E9F78
MESSAGE = 0x01
ATTACHMENT = 0x02

# attribute id: (id, type) -- types atpString 1, atpText 2, atpDate 3, atpShort 4,
# atpByte 6, atpWord 7, atpDword 8
ATT_TNEF_VERSION = (0x9006, 0x0008)
ATT_OEM_CODEPAGE = (0x9007, 0x0006)
ATT_MESSAGE_CLASS = (0x8008, 0x0007)
ATT_SUBJECT = (0x8004, 0x0001)
ATT_BODY = (0x800C, 0x0002)
ATT_MAPI_PROPS = (0x9003, 0x0006)
ATT_ATTACH_REND_DATA = (0x9002, 0x0006)
ATT_ATTACH_TITLE = (0x8010, 0x0001)
ATT_ATTACH_DATA = (0x800F, 0x0006)
ATT_ATTACHMENT = (0x9005, 0x0006)

PT_BOOLEAN = 0x000B
PT_LONG = 0x0003
PT_STRING8 = 0x001E
PT_UNICODE = 0x001F
PT_BINARY = 0x0102

PR_RTF_IN_SYNC = 0x0E1F
PR_BODY = 0x1000
PR_RTF_COMPRESSED = 0x1009
PR_BODY_HTML = 0x1013
PR_INTERNET_CPID = 0x3FDE
PR_ATTACH_METHOD = 0x3705
PR_ATTACH_LONG_FILENAME = 0x3707


def attribute(level: int, which: tuple[int, int], value: bytes) -> bytes:
    """One attribute: level, id, type, length, value, checksum."""
    name, kind = which
    checksum = sum(value) & 0xFFFF
    return struct.pack("<BHHI", level, name, kind, len(value)) + value + struct.pack("<H", checksum)


def _padded(value: bytes) -> bytes:
    return value + b"\x00" * (-len(value) % 4)


def prop(kind: int, name: int, value: int | bytes | str) -> bytes:
    """One MAPI property in TNEF's encoding: type, id, then the value; a variable value is a
    count of values (one), its length and its bytes padded to four."""
    head = struct.pack("<HH", kind, name)
    if kind == PT_LONG:
        assert isinstance(value, int)
        return head + struct.pack("<I", value)
    if kind == PT_BOOLEAN:
        assert isinstance(value, int)
        return head + struct.pack("<H", value) + b"\x00\x00"
    if kind == PT_STRING8:
        assert isinstance(value, str)
        data = value.encode("cp1252") + b"\x00"
    elif kind == PT_UNICODE:
        assert isinstance(value, str)
        data = value.encode("utf-16-le") + b"\x00\x00"
    else:
        assert isinstance(value, bytes)
        data = value
    return head + struct.pack("<II", 1, len(data)) + _padded(data)


def props(items: Iterable[bytes]) -> bytes:
    listed = list(items)
    return struct.pack("<I", len(listed)) + b"".join(listed)


def compressed(rtf: bytes, compress: bool = True) -> bytes:
    """PR_RTF_COMPRESSED's value: LZFu-compressed (slow in pure Python for long texts), or
    stored ("MELA") when `compress` is false."""
    return bytes(compressed_rtf.compress(rtf, compressed=compress))


def rend_data() -> bytes:
    """attAttachRendData for a file: type 1, position unknown, 32 by 32, no flags."""
    return struct.pack("<HIHHI", 1, 0xFFFFFFFF, 32, 32, 0)


def winmail(
    *,
    key: int = 0x1234,
    subject: str | None = "orders",
    body: str | None = None,
    rtf: bytes | None = None,
    compress: bool = True,
    html: str | None = None,
    files: Sequence[tuple[str, bytes]] = (),
    message_class: str = "IPM.Note",
    codepage: int = 1252,
) -> bytes:
    """A winmail.dat with the given plain body (attBody), RTF body, HTML body and files."""
    out = [struct.pack("<IH", SIGNATURE, key)]
    out.append(attribute(MESSAGE, ATT_TNEF_VERSION, struct.pack("<I", 0x00010000)))
    out.append(attribute(MESSAGE, ATT_OEM_CODEPAGE, struct.pack("<II", codepage, 0)))
    out.append(attribute(MESSAGE, ATT_MESSAGE_CLASS, message_class.encode("ascii") + b"\x00"))
    if subject is not None:
        out.append(attribute(MESSAGE, ATT_SUBJECT, subject.encode("cp1252") + b"\x00"))
    if body is not None:
        out.append(attribute(MESSAGE, ATT_BODY, body.encode(f"cp{codepage}") + b"\x00"))
    mapi = [prop(PT_LONG, PR_INTERNET_CPID, 65001 if html is not None else codepage)]
    if rtf is not None:
        mapi.append(prop(PT_BOOLEAN, PR_RTF_IN_SYNC, 1))
        mapi.append(prop(PT_BINARY, PR_RTF_COMPRESSED, compressed(rtf, compress)))
    if html is not None:
        mapi.append(prop(PT_BINARY, PR_BODY_HTML, html.encode("utf-8")))
    out.append(attribute(MESSAGE, ATT_MAPI_PROPS, props(mapi)))
    for name, data in files:
        out.append(attribute(ATTACHMENT, ATT_ATTACH_REND_DATA, rend_data()))
        short = name.encode("cp1252", "replace") + b"\x00"
        out.append(attribute(ATTACHMENT, ATT_ATTACH_TITLE, short))
        out.append(attribute(ATTACHMENT, ATT_ATTACH_DATA, data))
        attached = [
            prop(PT_LONG, PR_ATTACH_METHOD, 1),
            prop(PT_STRING8, PR_ATTACH_LONG_FILENAME, name),
        ]
        out.append(attribute(ATTACHMENT, ATT_ATTACHMENT, props(attached)))
    return b"".join(out)


def attributes(data: bytes) -> list[tuple[int, int, int]]:
    """The (level, id, type) of each attribute of a TNEF file, to compare with Outlook's."""
    found = []
    offset = 6
    while offset + 12 < len(data):
        level, name, kind, length = struct.unpack_from("<BHHI", data, offset)
        found.append((level, name, kind))
        offset += length + 11
    return found
