"""Reading a player's message, step by step: what each mail program does to text undone
(format=flowed, wrapped lines, HTML, curly quotes, charsets, PGP armour), the player's own
lines told from the quoted ones, every place an order file may be, and the choice among them."""

from __future__ import annotations

import time
from email.message import EmailMessage
from email.utils import format_datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tnef_writer import winmail

from pbem.languages import i18n
from pbem.mail import found, quoting, text
from pbem.mail.found import Fix, Where
from pbem.mail.message import asks_for_resend, orders_from_body, read_letter

ORDERS = (
    'game = "g"\nturn = 0\nplayer = "alice"\nsecret = "s3"\n\n'
    '[[place]]\nterritory = "Peru"\narmies = 3\n\n[[place]]\nterritory = "Brazil"\n'
    'armies = "rest"\n'
)
READY = 'game = "g"\nturn = 0\nplayer = "alice"\nsecret = "s3"\n\n[[place]]\nterritory = "Peru"\narmies = "rest"\n'  # noqa: E501


def letter_of(*parts: EmailMessage, subject: str = "my orders", kind: str = "mixed") -> bytes:
    msg = EmailMessage()
    msg["From"] = "alice@example.org"
    msg["To"] = "games@example.org"
    msg["Subject"] = subject
    msg["Date"] = format_datetime(__import__("datetime").datetime(2027, 3, 1, 12))
    msg["Message-ID"] = "<m@t>"
    if len(parts) == 1 and kind == "single":
        for name, value in parts[0].items():
            msg[name] = value
        msg.set_payload(parts[0].get_payload())
        return msg.as_bytes()
    msg.set_type(f"multipart/{kind}")
    for part in parts:
        msg.attach(part)
    return msg.as_bytes()


def part(body: str | bytes, ctype: str = "text/plain", **params: str) -> EmailMessage:
    p = EmailMessage()
    maintype, subtype = ctype.split("/")
    if isinstance(body, str):
        p.set_content(body, subtype=subtype, cte="quoted-printable")
    else:
        p.set_content(body, maintype=maintype, subtype=subtype)
    for name, value in params.items():
        if name == "filename":
            p.add_header("Content-Disposition", "attachment", filename=value)
        else:
            p.set_param(name, value)
    return p


def raw_part(headers: str, body: bytes) -> EmailMessage:
    from email import policy
    from email.parser import BytesParser

    made = BytesParser(policy=policy.default).parsebytes(headers.encode() + b"\n\n" + body)
    assert isinstance(made, EmailMessage)
    return made


def only(raw: bytes) -> found.Found:
    chosen = read_letter(raw).choice()
    assert chosen.found is not None, chosen
    return chosen.found


# -- charsets ----------------------------------------------------------------------------------


def test_windows_1252_quotes_are_quotes_whatever_western_label_they_carry() -> None:
    for label in ("windows-1252", "iso-8859-1", "us-ascii", None):
        assert text.decode(b"\x93Alaska\x94", label) == ("\u201cAlaska\u201d", "windows-1252")


def test_an_unknown_charset_on_ascii_or_utf8_is_read_and_on_anything_else_is_refused() -> None:
    assert text.decode(b"game = 1", "X-UNKNOWN") == ("game = 1", "utf-8")
    assert text.decode("café".encode(), "x-unknown") == ("café", "utf-8")
    assert text.decode(b"caf\xe9", "X-UNKNOWN") == (None, "x-unknown")
    assert text.decode("é".encode("utf-16"), "us-ascii") == ("é", "utf-16")


# -- format=flowed -------------------------------------------------------------------------------


def test_flowed_lines_are_joined_and_stuffed_spaces_removed() -> None:
    sent = 'territory = "Peru" # a long \ncomment that \nwrapped\n From the start\n'
    assert text.unflow(sent, delsp=False) == (
        'territory = "Peru" # a long comment that wrapped\nFrom the start\n'
    )


def test_delsp_removes_the_space_the_wrap_added() -> None:
    assert text.unflow("a long wo \nrd\n", delsp=True) == "a long word\n"
    assert text.unflow("a long wo \nrd\n", delsp=False) == "a long wo rd\n"


def test_flowed_quotes_keep_their_depth_and_the_signature_is_never_joined() -> None:
    sent = ">> deep \n>> quote\n> one \n> level\n-- \nBob\n"
    assert text.unflow(sent, delsp=False) == "> > deep quote\n> one level\n-- \nBob\n"
    assert text.unflow("ends flowed ", delsp=False) == "ends flowed "


def test_a_flowed_message_is_read_as_the_player_typed_it() -> None:
    long_line = "armies = 3  # the safest place on my side of the board, far from carol"
    cut = long_line.index(" ", 40)
    wrapped = long_line[: cut + 1] + "\n" + long_line[cut + 1 :] + "\n"  # the space stays
    body = ORDERS.replace("armies = 3\n", wrapped)
    flowed = raw_part(
        'Content-Type: text/plain; charset="utf-8"; format=flowed; delsp=no',
        body.encode(),
    )
    assert only(letter_of(flowed, kind="single")).text == ORDERS.replace("armies = 3", long_line)


# -- wrapped lines ---------------------------------------------------------------------------


def test_a_line_the_text_part_wrapped_is_taken_whole_from_the_html_part() -> None:
    long_line = "armies = 3 # the safest place on my side of the board, far from everyone else"
    typed = ORDERS.replace("armies = 3", long_line)
    cut = long_line.rindex(" ", 0, 60)
    plain = typed.replace(long_line, long_line[:cut] + "\n" + long_line[cut + 1 :])
    html = "<div dir=ltr>" + "".join(f"<div>{line or '<br>'}</div>" for line in typed.split("\n"))
    both = letter_of(part(plain), part(html + "</div>", "text/html"), kind="alternative")
    chosen = only(both)
    assert chosen.text == typed and Fix.WRAPPED in chosen.fixes


def test_without_an_html_part_a_wrapped_comment_tail_is_joined_to_its_comment() -> None:
    typed = ORDERS.replace("armies = 3", "armies = 3  # far from carol, who has")
    plain = typed.replace("carol, who has", "carol, who has\nmany armies")
    chosen = only(letter_of(part(plain), kind="mixed"))
    assert chosen.text == typed.replace("who has", "who has many armies")
    assert Fix.WRAPPED in chosen.fixes
    assert found.toml_data(chosen.text) is not None


# -- curly quotes --------------------------------------------------------------------------------


def test_curly_quotes_are_straightened_only_when_the_orders_need_it() -> None:
    curly = ORDERS.replace('"Peru"', "\u201cPeru\u201d").replace('"g"', "\u201eg\u201c")
    chosen = only(letter_of(part(curly)))
    assert chosen.text == ORDERS and Fix.QUOTES in chosen.fixes
    apostrophe = ORDERS.replace("Brazil", "Brazil\u2019s coast")  # valid TOML: left alone
    kept = only(letter_of(part(apostrophe)))
    assert kept.text == apostrophe and not kept.fixes


def test_windows_1252_curly_quotes_in_outlook_text_are_read() -> None:
    body = ORDERS.replace('"Peru"', "\x93Peru\x94").encode("latin-1")
    head = b"From: alice@example.org\nMessage-ID: <w@t>\n"
    head += b'Content-Type: text/plain; charset="windows-1252"\nContent-Transfer-Encoding: 8bit'
    chosen = only(head + b"\n\n" + body)
    assert chosen.text == ORDERS and Fix.QUOTES in chosen.fixes


def test_guillemets_and_their_spaces_become_plain_quotes() -> None:
    assert text.straightened("territory = «\u00a0Pérou\u00a0»") == 'territory = "Pérou"'


# -- HTML ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "html",
    [
        "<pre>" + ORDERS.replace('"', "&quot;") + "</pre>",
        '<span style="white-space: pre-wrap">' + ORDERS + "</span>",
        "<div>" + "<br>".join(ORDERS.split("\n")) + "</div>",
        "".join(
            f"<p class=MsoNormal>{line or '&nbsp;'}<o:p></o:p></p>" for line in ORDERS.split("\n")
        ),
        "".join(f"<div>{line or '<br>'}</div>" for line in ORDERS.split("\n")),
    ],
    ids=["pre", "pre-wrap", "br", "outlook-p", "gmail-div"],
)
def test_an_html_only_message_is_read(html: str) -> None:
    page = f"<html><head><style>p {{margin:0}}</style></head><body>{html}</body></html>"
    chosen = only(letter_of(part(page, "text/html"), kind="mixed"))
    assert found.toml_data(chosen.text) == found.toml_data(ORDERS)


def test_html_entities_and_nonbreaking_spaces_are_text() -> None:
    assert text.html_text("<p>a&nbsp;&amp;&#160;b &lt;c&gt;</p>") == "a\xa0&\xa0b <c>\n"
    assert text.plain_spaces("a\xa0b\u200bc\r\nd\u2028e") == "a bc\nd\ne"


def test_html_quotes_are_quoted_and_outlooks_header_block_gets_its_separator() -> None:
    page = (
        "<div>mine</div><div class=gmail_quote><div class=gmail_attr>On Mon, pbem wrote:<br>"
        "</div><blockquote class=gmail_quote>theirs<blockquote>older</blockquote></blockquote>"
        "</div>"
    )
    assert text.html_text(page) == "mine\n> On Mon, pbem wrote:\n> theirs\n> > older\n"
    outlook = "<div>mine</div><hr><div id=divRplyFwdMsg><b>From:</b> pbem</div><div>report</div>"
    assert text.html_text(outlook) == ("mine\n-----Original Message-----\nFrom: pbem\nreport\n")
    yahoo = "<div>mine</div><div class=yahoo_quoted><div>On Monday, pbem wrote:</div>x</div>"
    assert text.html_text(yahoo) == "mine\n> On Monday, pbem wrote:\n> x\n"


def test_a_head_left_open_and_scripts_do_not_hide_or_add_text() -> None:
    assert text.html_text("<html><head><title>t</title><body><p>x</p>") == "x\n"
    assert text.html_text("<script>game = 1</script><style>a{}</style>y") == "y\n"
    assert text.html_text("x" * (text.MAX_HTML_CHARS + 1)) == ""


# -- PGP -------------------------------------------------------------------------------------


def test_an_inline_signed_message_is_read_for_what_it_signs() -> None:
    signed = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        + ORDERS.replace("[[place]]", "- -- a dash-escaped line\n[[place]]", 1)
        + "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n=abcd\n-----END PGP SIGNATURE-----\n"
    )
    unsigned, was = text.unsigned(signed)
    assert was and "-- a dash-escaped line" in unsigned and "PGP" not in unsigned
    chosen = found.toml_data(
        only(letter_of(part(signed.replace("- -- a dash-escaped line\n", "")))).text
    )
    assert chosen == found.toml_data(ORDERS)


def test_encrypted_mail_is_told_as_encrypted() -> None:
    pgp = EmailMessage()
    pgp.set_type("multipart/encrypted")
    pgp.set_param("protocol", "application/pgp-encrypted")
    pgp.attach(part(b"Version: 1", "application/pgp-encrypted"))
    pgp.attach(
        part(
            b"-----BEGIN PGP MESSAGE-----\nhQEMA\n-----END PGP MESSAGE-----\n",
            "application/octet-stream",
        )
    )
    smime = raw_part(
        'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"\n'
        "Content-Transfer-Encoding: base64",
        b"MIAGCSqGSIb3DQEHA6CAMIACAQAxggE=",
    )
    inline = part("-----BEGIN PGP MESSAGE-----\n\nhQEMA\n-----END PGP MESSAGE-----\n")
    for raw in (letter_of(pgp, kind="mixed"), letter_of(smime, kind="single"), letter_of(inline)):
        letter = read_letter(raw)
        assert letter.orders is None
        assert letter.problem is not None and "sent the message encrypted" in letter.problem


# -- the player's own lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "separator",
    [
        "-----Original Message-----",
        "-----Ursprüngliche Nachricht-----",
        "-----Message d'origine-----",
        "-------- Original Message --------",
        "-------- Messaggio originale --------",
        "-------- Oorspronkelijk bericht --------",
        "-------- Ursprungligt meddelande --------",
        "-------- Pesan Asli --------",
        "---------- Forwarded message ---------",
        "-------- Weitergeleitete Nachricht --------",
        "Begin forwarded message:",
        "________________________________\nFrom: pbem\nSent: Monday\nTo: alice\nSubject: x",
    ],
)
def test_the_original_below_a_separator_is_not_the_players(separator: str) -> None:
    parts = quoting.split(f"mine\n\n{separator}\n{READY}")
    assert parts.own.strip() == "mine"
    assert "Peru" in parts.quoted and READY.strip() in parts.quoted


@pytest.mark.parametrize(
    "block",
    [
        "From: pbem <games@example.org>\nSent: Monday, March 1, 2027\nTo: alice\nSubject: x",
        "Von: pbem\nGesendet: Montag, 1. März 2027 12:00\nAn: alice\nBetreff: x",
        "De : pbem\nEnvoyé : lundi 1 mars 2027 12:00\nÀ : alice\nObjet : x",
        "Da: pbem\nInviato: lunedì 1 marzo 2027 12:00\nA: alice\nOggetto: x",
        "Van: pbem\nVerzonden: maandag 1 maart 2027 12:00\nAan: alice\nOnderwerp: x",
        "Från: pbem\nSkickat: den 1 mars 2027 12:00\nTill: alice\nÄmne: x",
        "Dari: pbem\nDikirim: Senin, 1 Maret 2027 12.00\nKepada: alice\nSubjek: x",
        "*From:* pbem\n*Date:* Monday\n*To:* alice\n*Subject:* x",
    ],
)
def test_outlooks_header_block_without_a_separator_starts_the_original(block: str) -> None:
    parts = quoting.split(f"{ORDERS}\n{block}\n\n{READY}")
    assert parts.own.strip() == ORDERS.strip() and READY.strip() in parts.quoted


def test_quotes_attributions_and_signatures_are_not_the_players() -> None:
    quoted = "".join(f"> {line}\n" for line in READY.split("\n"))
    wrapped = "On Mon, 1 Mar 2027 at 12:00, pbem <\ngames@example.org> wrote:\n"
    for body in (
        ORDERS + "\n" + wrapped + quoted,
        wrapped + quoted + "\n" + ORDERS,  # bottom-posted, as mutt and Alpine users do
        ORDERS + "-- \nAlice\n\n-------- Original Message --------\n" + READY,
        "Le lun. 1 mars 2027 à 12:00, pbem a écrit :\n" + quoted + ORDERS,
        ORDERS + "\nAm 01.03.2027 um 12:00 schrieb pbem <games@example.org>:\n" + READY,
    ):
        assert orders_from_body(body) == ORDERS, body


def test_a_signature_ends_the_players_text_but_not_what_is_quoted_below() -> None:
    parts = quoting.split("-- \nSent from my phone\n\n-------- Original Message --------\nold")
    assert parts.own == "" and parts.quoted.endswith("old")


def test_a_subject_says_when_a_message_is_a_forward() -> None:
    assert all(map(quoting.forwarded, ["Fwd: x", "FW: x", "WG: x", "TR: x", "I: x", "VB: x"]))
    assert not any(map(quoting.forwarded, ["Re: [g] turn 1", "Fwdx", "Iceland: x"]))


# -- where the orders end ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sign_off",
    ["Let's see how it goes!", "=)", "Cheers, Bob", "Sent from my iPhone", "Good luck :-)"],
)
def test_a_sign_off_after_the_orders_is_not_read(sign_off: str) -> None:
    assert orders_from_body(f"Here:\n\n{ORDERS}\n{sign_off}\n") == ORDERS


def test_a_reports_text_after_its_order_file_is_not_read() -> None:
    report = ORDERS + "\nDice check\n  Key of resolution 0:\n    270bc6c4a7\n  (the README)\n"
    assert orders_from_body(report) == ORDERS


def test_a_mistake_in_the_middle_keeps_the_orders_after_it() -> None:
    typed = ORDERS.replace(
        '[[place]]\nterritory = "Brazil"', 'oops\n[[place]]\nterritory = "Brazil"'
    )
    read = orders_from_body(typed)
    assert read is not None and "oops" in read and "Brazil" in read  # told, never dropped


# -- attachments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "disposition",
    [
        'attachment; filename="=?UTF-8?B?w6RsaWNlLm9yZGVycy50b21s?="',
        "attachment; filename*=UTF-8''%C3%A4lice.orders.toml",
        'attachment; filename="alice.orders.toml.txt"',
        'attachment; filename="orders.txt"',
        "attachment",
    ],
)
def test_an_attached_order_file_is_found_under_any_name(disposition: str) -> None:
    attached = raw_part(
        f'Content-Type: text/plain; charset="utf-8"\nContent-Disposition: {disposition}',
        ORDERS.encode(),
    )
    chosen = only(letter_of(part("see attached"), attached))
    assert chosen.where is Where.FILE and chosen.text == ORDERS
    if "lice" in disposition and "=?" in disposition or "%C3" in disposition:
        assert chosen.name == "älice.orders.toml"


def test_a_text_attachment_that_is_not_an_order_file_is_not_read() -> None:
    note = raw_part(
        'Content-Type: text/plain\nContent-Disposition: attachment; filename="notes.txt"', b"hi"
    )
    view = raw_part(
        "Content-Type: application/json\n"
        'Content-Disposition: attachment; filename="alice.view.json"',
        b'{"game": 1}',
    )
    letter = read_letter(letter_of(part(ORDERS), note, view))
    assert [f.where for f in letter.reading.found] == [Where.TEXT]


def test_the_text_split_around_a_picture_is_read_whole() -> None:
    first, second = ORDERS.split('[[place]]\nterritory = "Brazil"')
    picture = raw_part("Content-Type: image/jpeg\nContent-Disposition: inline", b"\xff\xd8")
    raw = letter_of(part(first), picture, part('[[place]]\nterritory = "Brazil"' + second))
    assert found.toml_data(only(raw).text) == found.toml_data(ORDERS)


def test_orders_in_a_winmail_dat_are_read() -> None:
    rtf = (
        r"{\rtf1\ansi\ansicpg1252\fromtext \deff0{\fonttbl{\f0 Calibri;}}"
        + "".join(
            line.replace('"', r"\'93", 1).replace('"', r"\'94", 1) + r"\par "
            for line in ORDERS.split("\n")
        )
        + "}"
    ).encode()
    data = winmail(rtf=rtf)
    attached = part(data, "application/ms-tnef")
    attached.add_header("Content-Disposition", "attachment", filename="winmail.dat")
    chosen = only(letter_of(part(""), attached))
    assert found.toml_data(chosen.text) == found.toml_data(ORDERS)
    broken = part(b"\x78\x9f\x3e\x22 broken", "application/ms-tnef")
    letter = read_letter(letter_of(part(""), broken))
    assert letter.problem is not None and "winmail.dat" in letter.problem


def test_orders_in_an_attached_message_are_read_as_passed_on() -> None:
    earlier = EmailMessage()
    earlier["Subject"] = "my orders"
    earlier.set_content(ORDERS + "\n> " + READY.replace("\n", "\n> "))
    carrier = EmailMessage()
    carrier.set_content(earlier.as_bytes(), maintype="message", subtype="rfc822")
    inner = raw_part("Content-Type: message/rfc822", earlier.as_bytes())
    chosen = only(letter_of(part("see the one below"), inner))
    assert chosen.where is Where.ATTACHED and chosen.name == "my orders"
    assert chosen.text == ORDERS


# -- choosing ------------------------------------------------------------------------------------


def ready(f: found.Found) -> str | None:
    return "alice.orders.toml" if found.toml_data(f.text) == found.toml_data(READY) else None


def choose(raw: bytes) -> found.Choice:
    return read_letter(raw).choice(ready)


def test_the_ready_file_never_wins_over_orders_the_player_wrote() -> None:
    forwarded = letter_of(part(ORDERS), part(READY, filename="alice.orders.toml"), subject="Fwd: x")
    assert choose(forwarded).found is not None and choose(forwarded).found.text == ORDERS  # type: ignore[union-attr]
    typed = letter_of(part(READY), part(ORDERS, filename="mine.toml"))
    assert choose(typed).found.name == "mine.toml"  # type: ignore[union-attr]


def test_two_different_sets_of_orders_are_refused_naming_both() -> None:
    other = ORDERS.replace("Brazil", "Argentina")
    chosen = choose(letter_of(part(ORDERS), part(other, filename="b.toml")))
    assert chosen.found is None and chosen.ambiguous is not None
    first, second = chosen.ambiguous
    assert (first.where, second.where, second.name) == (Where.TEXT, Where.FILE, "b.toml")
    same = choose(letter_of(part(ORDERS), part(ORDERS + "# the same\n", filename="b.toml")))
    assert same.found is not None  # the same orders twice are one set


def test_orders_edited_in_the_quote_are_read_when_they_are_the_only_ones() -> None:
    quoted = "On Mon, pbem wrote:\n" + "".join(f"> {line}\n" for line in ORDERS.split("\n"))
    chosen = choose(letter_of(part("here you go\n\n" + quoted)))
    assert chosen.found is not None and chosen.found.where is Where.QUOTE
    untouched = quoted.replace(
        ORDERS.rstrip().replace("\n", "\n> "), READY.rstrip().replace("\n", "\n> ")
    )
    left = choose(letter_of(part("a question\n\n" + untouched)))
    assert left.found is None and left.only_ready is not None
    assert left.only_ready[0].where is Where.QUOTE and left.only_ready[1] == "alice.orders.toml"


def test_the_ready_file_alone_is_played_only_when_the_player_chose_it() -> None:
    attached = choose(letter_of(part("as it is"), part(READY, filename="alice.orders.toml")))
    assert attached.found is not None and attached.ready == "alice.orders.toml"
    forward = choose(
        letter_of(part("fyi"), part(READY, filename="alice.orders.toml"), subject="Fwd: x")
    )
    assert forward.found is None and forward.only_ready is not None
    report = f"Your order file\n-- 8< ----\n{READY}\n-- 8< ----\nDice check\n"
    whole = choose(letter_of(part(report)))
    assert whole.found is None and whole.only_ready is not None and whole.only_ready[0].in_report


# -- a request for the report again --------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "first"),
    [
        ("resend", ""),
        ("Re: [g] turn 3", "Could you send it again please"),
        ("kirim ulang", ""),
        ("Sv: [g]", "Skicka igen"),
        ("", "invia di nuovo"),
        ("opnieuw sturen", ""),
        ("ફરીથી મોકલો", ""),
        ("", "Bitte erneut senden"),
    ],
)
def test_a_resend_is_asked_in_the_subject_or_the_first_line(subject: str, first: str) -> None:
    assert asks_for_resend(subject, f"\n{first}\nthanks\n")


def test_resend_further_down_is_not_a_request() -> None:
    assert not asks_for_resend("Re: [g] turn 3", "Hi!\nCould you resend it?\n")


def test_a_resend_is_looked_for_in_the_first_300_characters_only() -> None:
    within, beyond = "!" * 294 + "resend", "!" * 295 + "resend"  # 300 and 301 characters
    assert asks_for_resend(within, "") and asks_for_resend("", within)
    assert not asks_for_resend(beyond, "") and not asks_for_resend("", beyond)


# -- never a traceback ---------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_is_split_unflowed_and_read_as_html(typed: str) -> None:
    parts = quoting.split(text.plain_spaces(typed))
    assert isinstance(parts.own, str) and isinstance(parts.quoted, str)
    text.unflow(typed, delsp=True)
    text.html_text(typed)
    text.unsigned(typed)
    found.orders_in(typed)
    found.repaired(typed)


TAGS = ["<pre>", "</pre>", "<br>", "<blockquote>", "</blockquote>", "<div class=gmail_quote>",
        "</div>", "<p>", "game = 1", "\n", "&quot;", "<span style='white-space:pre'>", "</span>",
        "<head>", "<body>", "<hr>", "<div id=divRplyFwdMsg>"]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(TAGS), max_size=60))
def test_any_html_made_of_mail_programs_tags_is_read(pieces: list[str]) -> None:
    assert isinstance(text.html_text("".join(pieces)), str)


# -- what a review found -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "intro",
    [
        "On second thought, ignore what I wrote before. New orders:",
        "Den ordern jag skrev i morse var fel, här är de nya:",
        "2 changes to what I wrote this morning:",
    ],
)
def test_a_players_own_line_about_what_they_wrote_is_not_an_attribution(intro: str) -> None:
    quoted = "On Mon, 1 Mar 2027 at 09:00, <games@example.org> wrote:\n\n> " + READY.replace(
        "\n", "\n> "
    )
    body = f"{intro}\n\n{ORDERS}\nAlice\n\n{quoted}"
    assert quoting.split(body).own.startswith(intro)
    assert orders_from_body(body) == ORDERS


@pytest.mark.parametrize("last", ["stop_at: 15", "stop_at 15", "move: 2", "Stop at 15 please"])
def test_an_order_mistyped_on_the_last_line_is_told_not_dropped(last: str) -> None:
    read = orders_from_body(f"Orders:\n\n{ORDERS}{last}\n\nCarol\n")
    assert read is not None and read.endswith(f"{last}\n")
    assert found.toml_data(read) is None  # so it is refused with its line, never played without


def test_a_signed_block_without_its_signature_is_read_at_once() -> None:
    """Read in time that grows as the text does: four times the text, about four times the CPU
    time (a ratio in the same run, the least of three tries), never a search that backtracks."""

    def cost(n: int) -> float:
        body = "-----BEGIN PGP SIGNED MESSAGE-----\n" + "Hash: SHA256\n" * n + "\n"
        body += (
            ORDERS * n + "> -----BEGIN PGP SIGNATURE-----\n> abc\n> -----END PGP SIGNATURE-----\n"
        )
        tries = []
        for _ in range(3):
            started = time.process_time()
            assert text.unsigned(body) == (body, False)
            tries.append(time.process_time() - started)
        return min(tries)

    assert cost(4000) < 8 * max(cost(1000), 0.001)


@pytest.mark.parametrize("page", ["<b>x" * 100_000, "<blockquote>x" * 50_000, "</b>" * 200_000])
def test_a_page_of_unclosed_or_stray_tags_is_read_in_linear_time(page: str) -> None:
    started = time.perf_counter()
    text.html_text(page)
    assert time.perf_counter() - started < 3


@pytest.mark.parametrize(
    "block",
    [
        "Fra: pbem <games@example.org>\nSendt: 1. marts 2027 09:00\nTil: alice\nEmne: x",
        "De: pbem <games@example.org>\nEnviado: lunes, 1 de marzo\nPara: alice\nAsunto: x",
        "Od: pbem <games@example.org>\nWysłane: poniedziałek\nDo: alice\nTemat: x",
        "Lähettäjä: pbem <games@example.org>\nLähetetty: maanantai\nAihe: x",
    ],
)
def test_a_header_block_in_any_language_starts_the_original(block: str) -> None:
    parts = quoting.split(f"When is the deadline?\n\n{block}\n\nspring: report\n{READY}")
    assert parts.own.strip() == "When is the deadline?" and READY.strip() in parts.quoted


def test_the_ready_file_in_the_text_is_never_played_though_no_quote_was_seen() -> None:
    # a reply whose original, rendered from the report's HTML (no cut lines), sits below a
    # separator pbem does not know
    body = f"When is the deadline?\n\nUnknown separator\n\nspring: report for alice\n{READY}"
    chosen = choose(letter_of(part(body)))
    assert chosen.found is None and chosen.only_ready is not None


def test_the_reports_attachments_sent_back_with_a_reply_are_not_played() -> None:
    quoted = "On Mon, 1 Mar 2027, pbem <g@x.org> wrote:\n" + "".join(
        f"> {line}\n" for line in f"report\n-- 8< --\n{READY}-- 8< --\n".split("\n")
    )
    reply = letter_of(part("When is the deadline?\n\n" + quoted), part(READY, filename="a.toml"))
    chosen = choose(reply)
    assert chosen.found is None and chosen.only_ready is not None


def test_a_mistyped_order_is_never_joined_to_the_comment_above_it() -> None:
    typed = ORDERS.replace("armies = 3\n", "armies = 3  # optional: a comment\nmove: 2\n")
    chosen = only(letter_of(part(typed)))
    assert "move: 2" in chosen.text.split("\n") and Fix.WRAPPED not in chosen.fixes


def test_a_players_line_with_a_time_about_what_they_wrote_is_theirs() -> None:
    intro = "On Monday at 10:30 I wrote the wrong orders, these are the right ones:"
    quote = "".join(f"> {line}\n" for line in READY.split("\n"))
    body = f"{intro}\n\n{ORDERS}\n\nOn Mon, 1 Mar 2027 at 09:00, pbem <g@x.org> wrote:\n{quote}"
    assert orders_from_body(body) == ORDERS


def test_orders_in_the_text_beyond_the_size_of_an_order_file_are_refused() -> None:
    big = ORDERS + "".join(f"# comment {n:06d} {'x' * 60}\n" for n in range(1100))
    letter = read_letter(letter_of(part(big)))
    assert letter.orders is None
    assert letter.problem is not None and "an order file may be at most 64 KiB" in letter.problem


def test_text_of_many_short_lines_is_split_in_linear_time() -> None:
    """Four times the lines take about four times the CPU time, not sixteen: a ratio measured
    in the same run (the least of three tries each), so that a busy machine does not decide."""

    def cost(n: int) -> float:
        text = "1\n" * (10 * n) + "On it:\n" * n
        tries = []
        for _ in range(3):
            started = time.process_time()
            quoting.split(text)
            tries.append(time.process_time() - started)
        return min(tries)

    small, large = cost(5_000), cost(20_000)
    assert large < 8 * max(small, 0.001)


@pytest.mark.parametrize(
    "words",
    [
        "I will resend my orders tomorrow",
        "Si rimanda la partita a domani?",
        "Je te renvoie mes ordres ce soir",
        "Ik stuur ze morgen opnieuw",
        "Kan jag skicka om ordern?",
    ],
)
def test_words_about_sending_again_later_in_a_line_are_no_request(words: str) -> None:
    assert not asks_for_resend("Re: [g] turn 3: your move", f"{words}\n")


@pytest.mark.parametrize(
    "words",
    [
        "Could you send me my report again?",
        "Kan du skicka rapporten igen?",
        "Puoi inviarmi di nuovo il rapporto?",
        "Schick mir bitte den Bericht nochmal",
        "Kunt u het rapport opnieuw sturen?",
        "કૃપા કરીને રિપોર્ટ ફરીથી મોકલો",
    ],
)
def test_a_polite_request_for_the_report_is_one(words: str) -> None:
    assert asks_for_resend("Re: [g] turn 3: your move", f"\n{words}\n")


def test_pbems_own_resent_subject_is_no_request() -> None:
    for code in ("en", "id", "sv", "it", "nl", "gu"):
        resent = i18n.language(code)._("resent: %(subject)s", subject="turn 3: your move")
        assert not asks_for_resend(f"Re: [g] {resent}", "When is the deadline?\n"), code


def test_files_inside_an_alternative_are_read_whichever_versions_it_has() -> None:
    related = EmailMessage()
    related.set_type("multipart/related")
    related.attach(part("<p>see the file</p>", "text/html"))
    related.attach(part(ORDERS, filename="mine.toml"))
    for texts in ([part("see the file")], []):
        alternative = EmailMessage()
        alternative.set_type("multipart/alternative")
        for text_part in texts:
            alternative.attach(text_part)
        alternative.attach(related)
        chosen = only(letter_of(alternative, kind="mixed"))
        assert (chosen.where, chosen.name, chosen.text) == (Where.FILE, "mine.toml", ORDERS)


def test_an_alternative_of_neither_text_nor_html_is_read_part_by_part() -> None:
    alternative = EmailMessage()
    alternative.set_type("multipart/alternative")
    inner = EmailMessage()
    inner.set_type("multipart/mixed")
    inner.attach(part(ORDERS))
    alternative.attach(inner)
    alternative.attach(part(b"BEGIN:VCALENDAR", "text/calendar"))
    assert only(letter_of(alternative, kind="mixed")).text == ORDERS


# -- what the mutation trial found untested ------------------------------------------------------


def nested(levels: int) -> EmailMessage:
    msg = part(ORDERS)
    for _ in range(levels):
        outer = EmailMessage()
        outer.set_type("multipart/mixed")
        outer.attach(msg)
        msg = outer
    return msg


def test_parts_nested_to_the_limit_are_read_and_one_more_is_refused() -> None:
    assert found.read(nested(found.MAX_DEPTH)).found
    with pytest.raises(RecursionError):
        found.read(nested(found.MAX_DEPTH + 1))


def test_an_attached_messages_subject_is_named_up_to_a_hundred_characters() -> None:
    earlier = EmailMessage()
    earlier["Subject"] = "x" * 150
    earlier.set_content(ORDERS)
    inner = raw_part("Content-Type: message/rfc822", earlier.as_bytes())
    assert only(letter_of(part("below"), inner)).name == "x" * 100


@pytest.mark.parametrize(
    ("separator", "forward"),
    [
        ("-----Original Message-----", False),
        ("---------- Forwarded message ---------", True),
        ("Begin forwarded message:", True),
        ("________________________________\nFrom: pbem\nSent: Monday\nSubject: x", False),
        ("From: pbem\nSent: Monday\nSubject: x", False),
    ],
)
def test_a_separator_says_whether_the_message_passes_another_on(
    separator: str, forward: bool
) -> None:
    assert quoting.split(f"mine\n\n{separator}\n\nold\n").forward is forward
    assert quoting.split(f"mine\n{separator}\n\nold\n").own.strip() == "mine"


def test_a_wrapped_attribution_with_no_quote_below_starts_the_original() -> None:
    body = f"{ORDERS}\nOn Mon, 1 Mar 2027 at 12:00, pbem <\ngames@example.org> wrote:\n\n{READY}"
    assert quoting.split(body).own.strip() == ORDERS.strip()


def test_a_header_block_in_a_language_pbem_does_not_list_needs_an_address_in_one_line() -> None:
    block = "Feladó: pbem <games@example.org>\nElküldve: hétfő\nCímzett: alice\nTárgy: x"
    assert quoting.split(f"mine\n\n{block}\n\n{READY}").own.strip() == "mine"
    plain = "Feladó: pbem\nElküldve: hétfő\nCímzett: alice\nTárgy: x"  # no address: kept
    assert "Feladó" in quoting.split(f"mine\n\n{plain}\n").own


def test_an_attribution_before_a_quote_is_not_the_players() -> None:
    assert quoting.split("mine\nOn Monday, Bob wrote:\n> old\n").own == "mine\n"
    assert quoting.split("mine\nOn Monday, Bob wrote:\n\n> old").own == "mine\n"


def test_an_order_line_ending_in_a_colon_before_a_quote_is_kept() -> None:
    first, rest = ORDERS.split("\n", 1)
    body = f"{first}  # mine, not the ones quoted:\n> old orders\n{rest}"
    assert orders_from_body(body) == f"{first}  # mine, not the ones quoted:\n{rest}"


def test_blank_lines_inside_pre_and_pre_line_spacing_are_kept() -> None:
    assert text.html_text("<pre>a\n\nb</pre>") == "a\n\nb\n"
    assert text.html_text('<div style="white-space: pre-line">a   b\nc</div>') == "a b\nc\n"
    assert text.html_text("<div>a   b\nc</div>") == "a b c\n"


def test_every_head_left_open_is_closed_by_the_body() -> None:
    assert text.html_text("<head><title>t</title><head><body><p>x</p>") == "x\n"


def test_a_signed_block_cut_in_its_armour_headers_is_left_as_it_is() -> None:
    cut = "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256"
    assert text.unsigned(cut) == (cut, False)


def test_an_alternative_with_only_an_html_version_is_read() -> None:
    alternative = EmailMessage()
    alternative.set_type("multipart/alternative")
    alternative.attach(part("<pre>" + ORDERS.replace('"', "&quot;") + "</pre>", "text/html"))
    alternative.attach(part(b"BEGIN:VCALENDAR", "text/calendar"))
    assert only(letter_of(alternative, kind="mixed")).text == ORDERS


def test_a_quote_loses_its_mark_and_one_space_only() -> None:
    assert quoting.split("mine\n>  two spaces\n> one\n>none").quoted == " two spaces\none\nnone"
