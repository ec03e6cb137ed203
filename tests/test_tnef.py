"""Reading Outlook's winmail.dat: the orders a player sent as Rich Text come out as text, the
files inside come out whole, and anything else gives the player a sentence, never an error.

The winmail.dat files are made by tests/tnef_writer.py; the RTF bodies in
tests/fixtures/mail/tnef/ are written in the shapes Outlook writes (plain text encapsulated
with \\fromtext, HTML with \\fromhtml1, native Rich Text). Outlook's own files, from the
test suite of the tnefparse package, are read too when a copy of them is at
$PBEM_TNEF_SAMPLES (default /tmp/tnefparse-src/tests/examples); those tests are skipped
without it.
"""

from __future__ import annotations

import base64
import email
import functools
import os
import struct
import subprocess
import sys
import time
from email import policy
from pathlib import Path

import pytest
import tnef_writer as w
import tomli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.mail import tnef
from pbem.mail.tnef import MAX_ATTACHMENTS, Tnef, read_tnef, rtf_text

FIXTURES = Path(__file__).parent / "fixtures" / "mail" / "tnef"
SAMPLES = Path(os.environ.get("PBEM_TNEF_SAMPLES", "/tmp/tnefparse-src/tests/examples"))

ORDERS = (
    'game = "spring-2027"\n'
    "turn = 0\n"
    'player = "alice"\n'
    'secret = "bf8a3d5a9bd612848d9e1684"\n'
    "\n"
    "[[place]]\n"
    'territory = "Middle East"\n'
    "armies = 6\n"
)


def rtf(name: str) -> bytes:
    return (FIXTURES / f"{name}.rtf").read_bytes()


@functools.cache
def built(name: str) -> bytes:
    """The committed winmail.dat samples, as the writer makes them (compression is slow in
    pure Python, so each is made once)."""
    if name == "orders-fromtext":
        return w.winmail(key=0x2A41, rtf=rtf("fromtext"))
    if name == "orders-attached":
        return w.winmail(
            key=0x2A42,
            body="My orders are attached.\r\n\r\nAlice\r\n",
            rtf=rtf("richtext"),
            files=[("alice-turn-0.toml", ORDERS.encode())],
        )
    raise KeyError(name)


def problem_of(data: bytes) -> str:
    result = read_tnef(data)
    assert result.problem is not None
    assert result == Tnef(None, None, (), result.problem)
    assert "winmail.dat" in result.problem and "Plain Text" in result.problem
    return result.problem


# --- the bodies ----------------------------------------------------------------------------


def test_a_plain_body_alone_is_the_text_with_its_lines() -> None:
    got = read_tnef(w.winmail(body=ORDERS.replace("\n", "\r\n")))
    assert got == Tnef(ORDERS, None, (), None)
    assert tomli.loads(got.text or "")["game"] == "spring-2027"


def test_an_rtf_body_encapsulating_plain_text_gives_the_orders_line_by_line() -> None:
    got = read_tnef(built("orders-fromtext"))
    assert got.problem is None and got.html is None and got.files == ()
    fortify = 'fortify = { from = "Ural", to = "China", armies = "all" }\n'
    assert got.text == ORDERS.replace("\n\n", "\n" + fortify + "\n")
    orders = tomli.loads(got.text)
    assert orders["place"] == [{"territory": "Middle East", "armies": 6}]
    assert orders["fortify"]["armies"] == "all"


def test_the_text_of_par_separated_lines_is_exact() -> None:
    body = b'{\\rtf1\\ansi\\ansicpg1252\\fromtext game = "spring-2027"\\par turn = 0\\par }'
    assert rtf_text(body) == ('game = "spring-2027"\nturn = 0\n', None)


def test_an_rtf_body_encapsulating_html_gives_text_and_the_html() -> None:
    got = read_tnef(w.winmail(rtf=rtf("fromhtml")))
    assert got.problem is None
    assert got.text == (
        'game = "spring-2027"\nturn = 0\nplayer = "alice"\n\n'
        "secret = \u201cbf8a3d5a9bd612848d9e1684\u201d\n\n"
        '[[place]]\nterritory = "Middle\u00a0East"\narmies = 6\n\n'
    )
    html = got.html or ""
    assert html.startswith("<html xmlns:v=") and html.endswith("</body></html>")
    assert (
        '<p class=MsoNormal><span lang=EN-US>game = "spring-2027"<br>turn = 0<br>'
        "player = &quot;alice&quot;<o:p></o:p></span></p>"
    ) in html
    assert '<br>territory = "Middle&nbsp;East"<br>armies = 6<o:p></o:p></p>' in html
    assert "\t{margin:0cm;\r\n" in html  # \par and \tab inside an htmltag
    # the RTF-only runs (\htmlrtf ... \htmlrtf0) are not in it: no quote or space doubled
    assert '""' not in html and "\u00a0" not in html and "lang2057" not in html


def test_a_plain_body_comes_before_the_rtf_and_the_html_still_comes_from_it() -> None:
    got = read_tnef(w.winmail(body="orders attached\r\n", rtf=rtf("fromhtml")))
    assert got.text == "orders attached\n"
    assert got.html is not None and "<br>turn = 0<br>" in got.html


def test_an_html_body_property_is_the_html() -> None:
    page = '<html><body><p>game = "spring-2027"<br>turn = 0</p></body></html>'
    got = read_tnef(w.winmail(html=page, rtf=rtf("fromhtml")))
    assert got.html == page
    assert got.text is not None and got.text.startswith('game = "spring-2027"\nturn = 0\n')


def test_outlook_rich_text_keeps_curly_quotes_nbsp_and_unicode() -> None:
    text, html = rtf_text(rtf("richtext"))
    assert html is None
    assert text == (
        "game = \u201cspring-2027\u201d\nturn = 0\nplayer = \u201calice\u201d\n"
        'secret = "bf8a3d5a9bd612848d9e1684"\n\n[[place]]\n'
        'territory = "Middle\u00a0East"\narmies = 6\n\n'
        "Good luck \u2014 see you at 10\u20ac\tend\n"
    )


@pytest.mark.parametrize(
    ("body", "text"),
    [
        (b"\\'93a\\'94 \\'85", "\u201ca\u201d \u2026"),
        (b"\\u8220?a\\u8221?", "\u201ca\u201d"),
        (b"\\uc2\\u8364\\'80\\'80 x", "\u20ac x"),  # two fallback bytes skipped
        (b"\\uc0\\u8364 x", "\u20acx"),
        (b"\\uc1\\u-10179?\\u-8704?!", "\U0001f600!"),  # a surrogate pair
        (b"{\\uc3\\u8364}abc", "\u20acabc"),  # the fallback ends with its group
        (b"a\\~b\\_c\\-d", "a\u00a0b\u2011cd"),
        (
            b"\\ldblquote x\\rdblquote  \\lquote y\\rquote \\emdash \\endash \\bullet",
            "\u201cx\u201d \u2018y\u2019\u2014\u2013\u2022",  # a word's space ends it
        ),
        (b"\\{a\\}\\\\b", "{a}\\b"),
        (b"a\\line b\\tab c\\\r\nd", "a\nb\tc\nd"),
        (b"{\\*\\unknown x}{\\fonttbl{\\f0 Arial;}}{\\info{\\title t}}y", "y"),
        (b"{\\pict\\pngblip\\bin6 }}{{\\}}x", "x"),  # \bin bytes are skipped whole
        (b"a\r\nb\nc", "abc"),  # line ends in the source are no text
    ],
)
def test_rtf_escapes(body: bytes, text: str) -> None:
    assert rtf_text(b"{\\rtf1\\ansi\\ansicpg1252\\deff0 " + body + b"}") == (text, None)


def test_bytes_follow_the_code_page_of_the_font() -> None:
    body = (
        b"{\\rtf1\\ansi\\ansicpg1252{\\fonttbl{\\f0\\fswiss\\fcharset0 Arial;}"
        b"{\\f1\\fnil\\fcharset128 MS Gothic;}{\\f2\\fnil\\fcharset204 Arial CYR;}}"
        b"\\f1 \\'82\\'a0\\f2 \\'c0\\f0 \\'e9}"
    )
    assert rtf_text(body)[0] == "\u3042\u0410\u00e9"
    assert rtf_text(b"{\\rtf1\\ansi\\ansicpg1251 \\'c0}")[0] == "\u0410"


def test_text_after_the_document_group_is_no_part_of_it() -> None:
    assert rtf_text(b"{\\rtf1 a\\par}\x00 b}")[0] == "a\n"
    assert rtf_text(b"{\\rtf1 cut short")[0] == "cut short"


def test_no_rtf_is_refused() -> None:
    for data in (b"", b"plain text", b"xx{\\rtf1 a}"):
        with pytest.raises(ValueError):
            rtf_text(data)


def test_deep_groups_are_refused() -> None:
    with pytest.raises(ValueError):
        rtf_text(b"{\\rtf1 " + b"{" * 500 + b"x" + b"}" * 500 + b"}")
    deep = b"{\\rtf1 " + b"{" * 150 + b"x" + b"}" * 150 + b"}"
    assert rtf_text(deep)[0] == "x"
    stored = w.winmail(rtf=b"{\\rtf1 " + b"{" * 100_000 + b"}", compress=False)
    assert "could not read" in problem_of(stored)


# --- the files -----------------------------------------------------------------------------


def test_an_attached_order_file_comes_out_whole_with_its_name() -> None:
    got = read_tnef(built("orders-attached"))
    assert got.problem is None
    assert got.text == "My orders are attached.\n\nAlice\n"
    assert got.files == (("alice-turn-0.toml", ORDERS.encode()),)
    assert tomli.loads(got.files[0][1].decode())["turn"] == 0


def test_files_keep_their_names_and_bytes_but_no_folders() -> None:
    files = [
        ("orders.toml", b'game = "x"\n'),
        ("Bestellung-\u00e4\u00fc.toml", b"\x00\x01binary\x00"),
        ("..\\..\\evil.toml", b"x"),
        ("a/b/c.toml", b"y"),
    ]
    got = read_tnef(w.winmail(body="see attached", files=files))
    assert got.files == (
        ("orders.toml", b'game = "x"\n'),
        ("Bestellung-\u00e4\u00fc.toml", b"\x00\x01binary\x00"),
        ("evil.toml", b"x"),
        ("c.toml", b"y"),
    )


def test_fifty_files_are_read_and_more_are_refused() -> None:
    files = [(f"f{n}.toml", b"x") for n in range(MAX_ATTACHMENTS)]
    assert len(read_tnef(w.winmail(files=files)).files) == MAX_ATTACHMENTS
    extra = files + [("one-more.toml", b"x")]
    assert "more than 50 files" in problem_of(w.winmail(files=extra))


# --- what cannot be read -------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"x", b"\x78\x9f\x3e\x22", b"garbage " * 100, bytes(range(256)) * 4, b"\xff" * 64],
)
def test_garbage_gives_a_sentence(data: bytes) -> None:
    problem = problem_of(data)
    assert problem.startswith("your mail program (Outlook) sent the message as Rich Text")
    assert problem.endswith("send it as plain text (in Outlook: Format Text > Plain Text)")


def test_a_truncated_file_gives_a_sentence_at_every_cut() -> None:
    data = built("orders-attached")
    ends = set()
    offset = 6
    while offset < len(data):
        ends.add(offset)
        offset += struct.unpack_from("<I", data, offset + 5)[0] + 11
    for cut in range(len(data)):
        got = read_tnef(data[:cut])
        if cut in ends or cut - 1 in ends or cut - 2 in ends:
            continue  # cut between attributes (two stray bytes after one are let be)
        assert got.problem is not None, cut
    assert "it is cut short" in problem_of(data[: len(data) - 200])


def test_a_huge_length_claim_is_refused_at_once() -> None:
    data = bytearray(w.winmail(body=ORDERS))
    struct.pack_into("<I", data, 6 + 5, 0xFFFFFFF0)
    assert "cut short" in problem_of(bytes(data))


def test_a_file_over_one_mib_is_refused() -> None:
    big = w.winmail(files=[("big.bin", b"\x00" * (1024 * 1024))])
    assert "larger than 1 MiB" in problem_of(big)


def spin(value: bytes) -> bytes:
    """A winmail.dat whose message properties are `value`."""
    return b"".join(
        [
            struct.pack("<IH", w.SIGNATURE, 1),
            w.attribute(w.MESSAGE, w.ATT_OEM_CODEPAGE, struct.pack("<II", 1252, 0)),
            w.attribute(w.MESSAGE, w.ATT_MAPI_PROPS, value),
        ]
    )


@pytest.mark.parametrize(
    "value",
    [
        struct.pack("<I", 0xFFFFFFFF),  # four thousand million properties, none there
        struct.pack("<IHHI", 1, 0x1003, 0x6666, 0xFFFFFFFF),  # as many longs in one value
        struct.pack("<IHHI", 1, 0x1002, 0x6666, 0x7FFFFFFF),
        struct.pack("<IHHI", 10**9, 0x0003, 0x3FDE, 1252),  # one there, the rest past the end
    ],
)
def test_counts_the_data_cannot_hold_are_refused_at_once(value: bytes) -> None:
    start = time.perf_counter()
    assert "damaged" in problem_of(spin(value))
    assert time.perf_counter() - start < 1


def test_a_recipient_table_of_impossible_rows_is_refused() -> None:
    data = b"".join(
        [
            struct.pack("<IH", w.SIGNATURE, 1),
            w.attribute(w.MESSAGE, w.ATT_OEM_CODEPAGE, struct.pack("<II", 1252, 0)),
            w.attribute(w.MESSAGE, (0x9004, 0x0006), struct.pack("<II", 0xFFFFFFFF, 0xFFFFFFF)),
        ]
    )
    start = time.perf_counter()
    problem_of(data)
    assert time.perf_counter() - start < 1


def test_many_attributes_are_refused() -> None:
    head = struct.pack("<IH", w.SIGNATURE, 1)
    one = w.attribute(w.MESSAGE, (0x8020, 0x0003), b"\x00" * 14)
    assert read_tnef(head + one * 100).problem is None
    start = time.perf_counter()
    assert "damaged" in problem_of(head + one * 40_000)
    assert time.perf_counter() - start < 1


def rtf_value(contents: bytes, claimed: int) -> bytes:
    """A PR_RTF_COMPRESSED value with these LZFu contents (and their right checksum)."""
    from compressed_rtf.crc32 import crc32  # type: ignore[import-untyped]

    return (
        struct.pack("<II", len(contents) + 12, claimed)
        + b"LZFu"
        + struct.pack("<I", crc32(contents))
        + contents
    )


def with_rtf_value(value: bytes) -> bytes:
    return spin(w.props([w.prop(w.PT_BINARY, w.PR_RTF_COMPRESSED, value)]))


def test_an_rtf_that_expands_past_one_mib_is_refused_before_it_is_expanded() -> None:
    contents = bytearray()
    write = 207
    for _ in range(20_000):  # references of 17 bytes each, 8 per control byte: 2.7 MB out
        contents.append(0xFF)
        for _ in range(8):
            contents += struct.pack(">H", ((write - 20) % 4096) << 4 | 15)
            write = (write + 17) % 4096
    start = time.perf_counter()
    bomb = with_rtf_value(rtf_value(bytes(contents), 10))
    assert "its text is larger than 1 MiB" in problem_of(bomb)
    assert time.perf_counter() - start < 1
    huge_claim = rtf_value(b"\x00{\\rtf1 x}", 1 << 30)
    assert "its text is larger than 1 MiB" in problem_of(with_rtf_value(huge_claim))


def test_a_damaged_rtf_is_refused_unless_something_else_is_there() -> None:
    value = bytearray(w.compressed(rtf("fromtext")))
    value[40] ^= 0xFF  # the checksum no longer matches
    assert "its text is damaged" in problem_of(with_rtf_value(bytes(value)))
    data = w.winmail(body="hello\r\n", rtf=b"{\\rtf1 x}")
    good = w.compressed(b"{\\rtf1 x}")
    broken = data.replace(good, good[:20] + bytes([good[20] ^ 0xFF]) + good[21:])
    assert broken != data
    # the checksum of the attribute is now wrong too: read all the same, as Outlook's are
    assert read_tnef(broken) == Tnef("hello\n", None, (), None)
    data = w.winmail(rtf=b"{\\rtf1 x}", files=[("orders.toml", b"turn = 0\n")])
    broken = data.replace(good, good[:20] + bytes([good[20] ^ 0xFF]) + good[21:])
    assert read_tnef(broken) == Tnef(None, None, (("orders.toml", b"turn = 0\n"),), None)


def test_a_stored_rtf_is_read() -> None:
    got = read_tnef(w.winmail(rtf=rtf("fromtext"), compress=False))
    assert got.text == read_tnef(built("orders-fromtext")).text


QUIET = """
import logging, sys
logging.basicConfig(level=logging.DEBUG)  # a program that shows every record it is given
from pbem.mail.tnef import read_tnef
for data in sys.stdin.buffer.read().split(b"<cut>"):
    print(read_tnef(data).problem is None)
"""


def test_the_package_prints_nothing() -> None:
    """The package logs a warning for a wrong checksum and for a property list that ends
    early; a moderator's terminal shows none of it, even when the program logs everything."""
    early = spin(struct.pack("<IHH", 3, 0x0003, 0x6666) + b"\x01")
    checksum = bytearray(w.winmail(body="x"))
    checksum[-1] ^= 0xFF
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", QUIET],
        input=b"<cut>".join([early, bytes(checksum), b"garbage"]),
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    assert done.stdout.split() == [b"True", b"True", b"False"]
    assert done.stderr == b""


# --- never an exception --------------------------------------------------------------------


def mutated(data: bytes, edits: list[tuple[int, int]], cut: int) -> bytes:
    out = bytearray(data)
    for at, byte in edits:
        out[at % len(out)] = byte
    return bytes(out[: max(0, len(out) - cut)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.sampled_from(["orders-fromtext", "orders-attached"]),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=8),
    cut=st.integers(0, 64) | st.just(0),
)
def test_mutated_files_never_raise(which: str, edits: list[tuple[int, int]], cut: int) -> None:
    result = read_tnef(mutated(built(which), edits, cut))
    assert isinstance(result, Tnef)
    assert (result.problem is None) or (result.text is None and result.files == ())


@settings(max_examples=300, deadline=None)
@given(
    data=st.binary(max_size=3000)
    | st.binary(max_size=3000).map(lambda b: struct.pack("<IH", 0x223E9F78, 1) + b)
)
def test_random_bytes_never_raise(data: bytes) -> None:
    assert isinstance(read_tnef(data), Tnef)


RTF_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "\\par ",
        "\\'93",
        "\\'",
        "\\u8220?",
        "\\u-1",
        "\\uc9",
        "\\*",
        "\\htmltag64 ",
        "\\htmlrtf ",
        "\\htmlrtf0 ",
        "\\fromhtml1 ",
        "\\bin3 ",
        "\\fonttbl",
        "\\f1 ",
        "\\fcharset128 ",
        "\\ansicpg99999 ",
        "\\\\",
        "\\",
        "text ",
        "\r\n",
        "\u00e9",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(RTF_PIECES, max_size=60))
def test_any_rtf_gives_text_or_value_error(pieces: list[str]) -> None:
    data = ("{\\rtf1 " + "".join(pieces)).encode("utf-8")
    try:
        text, html = rtf_text(data)
    except ValueError:
        return
    assert isinstance(text, str) and (html is None or isinstance(html, str))


# --- the mail around it --------------------------------------------------------------------

BOUNDARY = "----=_NextPart_000_0001_01DB7A3C.5E2F1D90"


def eml(winmail: bytes, stub: str | None) -> bytes:
    """A message as Outlook sends Rich Text: a multipart/mixed of a plain text stub (or none)
    and the winmail.dat, base64 in lines of 76."""
    encoded = base64.encodebytes(winmail).decode("ascii").replace("\n", "\r\n")
    lines = [
        "From: Alice <alice@example.org>",
        "To: <moderator@example.org>",
        "Subject: orders",
        "Date: Tue, 2 Mar 2027 10:00:00 +0100",
        "Message-ID: <000001db7a3c$5e2f1d90$1a8d58b0@example.org>",
        "MIME-Version: 1.0",
        "Content-Type: multipart/mixed;",
        f'\tboundary="{BOUNDARY}"',
        "X-Mailer: Microsoft Outlook 16.0",
        "Content-Language: en-gb",
        "",
        "This is a multipart message in MIME format.",
        "",
    ]
    if stub is not None:
        lines += [
            f"--{BOUNDARY}",
            "Content-Type: text/plain;",
            '\tcharset="us-ascii"',
            "Content-Transfer-Encoding: 7bit",
            "",
            stub,
            "",
        ]
    lines += [
        f"--{BOUNDARY}",
        "Content-Type: application/ms-tnef;",
        '\tname="winmail.dat"',
        "Content-Transfer-Encoding: base64",
        "Content-Disposition: attachment;",
        '\tfilename="winmail.dat"',
        "",
        encoded.rstrip("\r\n"),
        "",
        f"--{BOUNDARY}--",
        "",
    ]
    return "\r\n".join(lines).encode("ascii")


STUB = "My orders are attached.\r\n\r\nAlice"


def test_the_committed_eml_is_outlook_s_shape_around_the_sample() -> None:
    assert (FIXTURES / "outlook-rich-text.eml").read_bytes() == eml(built("orders-attached"), STUB)


@pytest.mark.parametrize("stub", [STUB, None])
@pytest.mark.parametrize("chosen", [policy.compat32, policy.default])
def test_a_mail_carrying_a_winmail_dat_is_read_with_the_standard_library(
    stub: str | None, chosen: policy.Policy
) -> None:
    message = email.message_from_bytes(eml(built("orders-attached"), stub), policy=chosen)
    parts = [p for p in message.walk() if p.get_content_type() == "application/ms-tnef"]
    assert len(parts) == 1
    assert parts[0].get_filename() == "winmail.dat"
    payload = parts[0].get_payload(decode=True)
    assert isinstance(payload, bytes)
    got = read_tnef(payload)
    assert got.problem is None
    assert got.files == (("alice-turn-0.toml", ORDERS.encode()),)


# --- the writer and the samples ------------------------------------------------------------


@pytest.mark.parametrize("name", ["orders-fromtext", "orders-attached"])
def test_the_committed_samples_are_what_the_writer_makes(name: str) -> None:
    assert (FIXTURES / f"{name}.winmail.dat").read_bytes() == built(name)


def samples() -> Path:
    if not (SAMPLES / "two-files.tnef").is_file():
        pytest.skip(f"no copy of Outlook's sample files at {SAMPLES}")
    return SAMPLES


def test_the_writer_writes_each_attribute_as_outlook_does() -> None:
    outlook = set()
    for path in samples().glob("*.tnef"):
        outlook |= set(w.attributes(path.read_bytes()))
    ours = w.attributes(built("orders-attached")) + w.attributes(w.winmail(body="x"))
    assert set(ours) <= outlook
    real = (samples() / "two-files.tnef").read_bytes()
    assert w.attributes(real)[:2] == w.attributes(built("orders-attached"))[:2]


# file: (file names, start of the text, a piece of the HTML, the problem's clause)
OUTLOOK = {
    "two-files.tnef": (["AUTHORS", "README"], None, None, None),
    "one-file.tnef": (["AUTHORS"], None, None, None),
    "long-filename.tnef": (
        ["allproductsmar2000.dat"],
        "I've attached a temp. license for QARun 4.7.  Do you need",
        None,
        None,
    ),
    "missing-filenames.tnef": (
        ["generpts.src", "TechlibDEC99.doc", "TechlibDEC99-JAN00.doc", "TechlibNOV99.doc"],
        "Hi Stephen,\n\nSue has encountered a Date problem",
        None,
        None,
    ),
    "multi-value-attribute.tnef": (
        ["208225__5_seconds__Voice_Mail.mp3"],
        "You received a voice mail from Curie Conf Room at 208225.\n",
        'at <a style="color: #3399ff; " href="tel:208225">208225</a>.</div><br><table',
        None,
    ),
    "umlaut.tnef": (
        ["TBZ PARIV GmbH.jpg", "image003.jpg", "UmlautAnhang-\u00e4\u00fc\u00f6.txt"],
        "TEST \u00e4\u00f6\u00fc +-*/~\n\n\u00a0\n\n",
        "<p class=MsoNormal><b>TEST \u00e4\u00f6\u00fc +-*/~<o:p></o:p></b></p>",
        None,
    ),
    "IPM-DistList.tnef": (
        [],  # its one attachment is a message (a distribution list), no file
        "This is the first half of the list because Comcast allows only up to 100",
        "Will send the second half same way.<o:p></o:p></span></p>",
        None,
    ),
    "triples.tnef": ([], "Sample description", None, None),
    "rtf.tnef": ([], "\naafgag'alga'kgk\n\nagka;kgag\n", None, None),
    "body.tnef": ([], None, "<HTML><HEAD>", None),
    "unicode-mapi-attr.tnef": (["example.dat"], "\u200bhello world", "<html>", None),
    "unicode-mapi-attr-name.tnef": (
        ["spaconsole2.cfg", "image001.png", "image002.png", "image003.png"],
        None,
        "<html",
        None,
    ),
    "MAPI_ATTACH_DATA_OBJ.tnef": (
        ["VIA_Nytt_1402.doc", "VIA_Nytt_1402.pdf", "VIA_Nytt_14021.htm"],
        "Det er jo en velkjent sak at bod\u00f8damene er noe mer j\u00e5lete",
        None,
        None,
    ),
    "data-before-name.tnef": (["AUTOEXEC.BAT", "CONFIG.SYS", "boot.ini"], "asdf", None, None),
    "garbage-at-end.tnef": ([], None, None, None),
    "bad_checksum.tnef": ([], None, None, "it is larger than 1 MiB"),
}


@pytest.mark.parametrize("name", sorted(OUTLOOK))
def test_outlook_s_own_files(name: str) -> None:
    names, text, html, why = OUTLOOK[name]
    start = time.perf_counter()
    got = read_tnef((samples() / name).read_bytes())
    assert time.perf_counter() - start < 2
    if why is not None:
        assert got.problem is not None and f"({why})" in got.problem
        return
    assert got.problem is None
    assert [file for file, _ in got.files] == names
    if text is None:
        assert got.text is None
    else:
        assert got.text is not None and got.text.startswith(text)
    if html is None:
        assert got.html is None
    else:
        assert got.html is not None and html in got.html
    sizes = {file: len(data) for file, data in got.files}
    if name == "two-files.tnef":
        assert sizes == {"AUTHORS": 244, "README": 893}


def test_outlook_s_files_cut_short_or_changed_never_raise() -> None:
    for path in sorted(samples().glob("*.tnef")):
        data = path.read_bytes()[: tnef.MAX_TNEF_BYTES]
        for cut in range(7, len(data), max(1, len(data) // 97)):
            assert isinstance(read_tnef(data[:cut]), Tnef)
            changed = bytearray(data)
            changed[cut] ^= 0x5A
            assert isinstance(read_tnef(bytes(changed)), Tnef)


if __name__ == "__main__":  # rewrite the committed samples: python tests/test_tnef.py
    sys.path.insert(0, str(Path(__file__).parent))
    for sample in ("orders-fromtext", "orders-attached"):
        (FIXTURES / f"{sample}.winmail.dat").write_bytes(built(sample))
    (FIXTURES / "outlook-rich-text.eml").write_bytes(eml(built("orders-attached"), STUB))
