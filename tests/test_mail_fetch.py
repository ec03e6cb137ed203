"""Hostile mail never stops `mail fetch`, misleads it or makes it mail strangers: unreadable
messages are kept and shown to the moderator, only the game's own players are answered, what is
printed is safe for a terminal, mail waits while a resolution is interrupted, and dates and
Message-IDs cannot be used to jump the queue."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import flat, stopped_after_the_history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    PLAYERS,
    fetch,
    into_maildir,
    make_template,
    message,
    orders_for,
    outbox,
    owned,
    records,
    reply_to,
    run,
    snapshot,
)

from pbem import mail
from pbem.game import processor
from pbem.mail.message import read_letter
from pbem.records import disk
from pbem.records.history import read_history
from pbem.records.mailstate import MailState

ALICE, BOB, CAROL = (address for _, address in PLAYERS)
ALLOWED = {ALICE, BOB, CAROL, MODERATOR}
"""The only addresses pbem may ever mail: the players' registered ones and the moderator."""
V = mail.Verdict


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def d(template: Path, tmp_path: Path) -> Path:
    """A new game (a copy of one made once)."""
    return Path(shutil.copytree(template, tmp_path / GAME))


def with_header(msg: EmailMessage | bytes, name: str, value: bytes) -> bytes:
    """The message's bytes with every `name` header replaced by one holding the raw `value`."""
    raw = msg if isinstance(msg, bytes) else msg.as_bytes()
    head, sep, body = raw.partition(b"\n\n")
    prefix = name.lower().encode() + b":"
    lines = [line for line in head.split(b"\n") if not line.lower().startswith(prefix)]
    return b"\n".join([name.encode() + b": " + value, *lines]) + sep + body


def nested(sender: str, depth: int, mid: str = "<deep@t>") -> bytes:
    """A message whose MIME parts nest `depth` deep."""
    part = b"Content-Type: text/plain\n\nhello\n"
    for i in range(depth):
        b = f"b{i}".encode()
        part = (
            (b"Content-Type: multipart/mixed; boundary=" + b + b"\n\n--" + b + b"\n" + part)
            + b"\n--"
            + b
            + b"--\n"
        )
    head = f"From: {sender}\nTo: {MODERATOR}\nSubject: deep\nMessage-ID: {mid}\n"
    return head.encode() + b"Date: Mon, 01 Mar 2027 12:00:00 +0000\nMIME-Version: 1.0\n" + part


def addressees(directory: Path) -> set[str]:
    return {str(m["To"]) for m in outbox(directory).values()}


def notes(directory: Path) -> list[EmailMessage]:
    return [m for name, m in outbox(directory).items() if name.startswith("note-")]


# --- 1. one bad message never stops a fetch -----------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        b"<",
        b'"',
        b"bob@[",
        b"alice@example.org <mallory@evil.example>",
        b"alice@example.org)<mallory@evil.example>",
        b"alice@example.org, mallory@evil.example",
        b"",
    ],
)
def test_a_message_whose_from_cannot_be_read_is_kept_and_not_answered(
    d: Path, value: bytes
) -> None:
    bad = with_header(message(ALICE, orders_for(d, "alice"), mid="<p@t>"), "From", value)
    result = fetch(d, [bad, message(BOB, orders_for(d, "bob"), mid="<g@t>")])
    first, second = result.incoming
    assert (first.verdict, first.reply, second.verdict) == (V.REJECTED, None, V.ACCEPTED)
    assert first.kept is not None and (d / first.kept).read_bytes() == bad
    assert "From" in (d / first.kept).with_suffix(".txt").read_text()
    assert not (d / "orders" / "alice.toml").exists()
    assert addressees(d) == {BOB, MODERATOR}
    (note,) = notes(d)
    assert "<p@t>" in note.get_content() and first.kept in note.get_content()
    assert fetch(d, [bad]).incoming[0].verdict is V.DUPLICATE


@pytest.mark.parametrize("kind", ["maildir", "mbox"])
def test_a_mailbox_of_good_poison_good_gives_two_orders_and_one_rejection(
    d: Path, kind: str
) -> None:
    poison = nested("<", 1000, mid="<")
    poison = with_header(poison, "Reply-To", b'"')
    good = [
        message(ALICE, orders_for(d, "alice"), mid="<a@t>"),
        message(BOB, orders_for(d, "bob"), mid="<b@t>"),
    ]
    result = fetch(d, [good[0], poison, good[1]], kind)
    assert [i.verdict for i in result.incoming] == [V.ACCEPTED, V.REJECTED, V.ACCEPTED]
    assert sorted(p.name for p in (d / "orders").glob("*.toml")) == ["alice.toml", "bob.toml"]
    assert len(list((d / "mail" / "rejected").glob("*.eml"))) == 1


def test_a_malformed_message_id_or_reply_to_does_not_stop_a_players_orders(d: Path) -> None:
    msg = with_header(message(ALICE, orders_for(d, "alice")), "Message-ID", b"<")
    msg = with_header(msg, "Reply-To", b'"')
    (incoming,) = fetch(d, [msg]).incoming
    assert incoming.verdict is V.ACCEPTED and incoming.message_id == "<"
    answer = outbox(d)[incoming.reply or ""]
    assert answer["To"] == ALICE and answer["In-Reply-To"] is None


def test_mime_nested_a_thousand_deep_is_refused_with_the_reason(d: Path) -> None:
    (incoming,) = fetch(d, [nested(ALICE, 1000)]).incoming
    assert incoming.verdict is V.REJECTED and "nested too deep" in incoming.reasons[0]
    assert outbox(d)[incoming.reply or ""]["To"] == ALICE
    (incoming,) = fetch(d, [nested(ALICE, 30, mid="<deep30@t>")]).incoming
    assert "nested too deep to read (more than 20 levels)" in incoming.reasons[0]


def test_orders_that_cannot_be_parsed_are_refused(d: Path) -> None:
    deep = orders_for(d, "alice") + "x = " + "[" * 3000 + "]" * 3000 + "\n"
    (incoming,) = fetch(d, [message(ALICE, deep)]).incoming
    assert incoming.verdict is V.REJECTED and incoming.reply is not None
    assert not (d / "orders" / "alice.toml").exists()


def test_earlier_orders_that_are_not_utf8_are_replaced(d: Path) -> None:
    (d / "orders").mkdir(exist_ok=True)
    (d / "orders" / "alice.toml").write_bytes(b"\xff\xfe not text")
    (incoming,) = fetch(d, [message(ALICE, orders_for(d, "alice"))]).incoming
    assert incoming.verdict is V.ACCEPTED
    assert (d / "orders" / "replaced" / "alice-1.toml").read_bytes() == b"\xff\xfe not text"
    assert (d / "orders" / "alice.toml").read_text() == orders_for(d, "alice")


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_orders_that_cannot_be_stored_are_held_for_the_next_fetch(d: Path, kind: str) -> None:
    target = d / "orders" / "alice.toml"
    target.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    msgs = [message(ALICE, orders_for(d, "alice"), mid="<x@t>"), message(BOB, orders_for(d, "bob"))]
    first = fetch(d, msgs)
    assert [i.verdict for i in first.incoming] == [V.HELD, V.ACCEPTED]
    assert "is not a regular file: remove it" in first.incoming[0].reasons[0]
    assert "<x@t>" not in MailState.peek(d).seen["messages"]
    if kind == "directory":
        target.rmdir()
    else:
        target.unlink()
    assert [i.verdict for i in fetch(d, msgs).incoming] == [V.ACCEPTED, V.DUPLICATE]


def test_a_dangling_maildir_entry_is_recorded_and_the_rest_are_read(d: Path) -> None:
    box = into_maildir(
        d.parent / "Maildir",
        [message(ALICE, orders_for(d, "alice")), message(BOB, orders_for(d, "bob"))],
    )
    os.symlink(d.parent / "nowhere", box / "new" / "1800000000.5.dangling")
    sources = mail.Sources(maildir=box)
    result = mail.fetch_orders(d, sources, MODERATOR, NOW)
    assert [i.verdict for i in result.incoming] == [V.ACCEPTED, V.ACCEPTED, V.REJECTED]
    assert "cannot read Maildir entry 1800000000.5.dangling" in result.incoming[2].reasons[0]
    assert (d / (result.incoming[2].kept or "")).read_text().count("dangling") >= 1
    again = mail.fetch_orders(d, sources, MODERATOR, NOW)
    assert {i.verdict for i in again.incoming} == {V.DUPLICATE}


# --- 3. pbem mails only the game's own people ---------------------------------------------------


def test_answers_go_to_the_registered_address_never_to_reply_to(d: Path) -> None:
    msg = message(
        "Alice <ALICE@example.org>", orders_for(d, "alice"), headers={"Reply-To": "x@evil.example"}
    )
    (incoming,) = fetch(d, [msg]).incoming
    assert incoming.verdict is V.ACCEPTED
    assert addressees(d) == {ALICE}


def test_strangers_are_not_answered_and_the_moderator_gets_one_summary(d: Path) -> None:
    strangers = [
        message("eve@example.org", "When is the next turn?", mid="<s1@t>"),
        message("eve@example.org", orders_for(d, "bob").replace('"bob"', '"zed"'), mid="<s2@t>"),
        message("spam@example.net", orders_for(d, "bob").replace(GAME, "other"), mid="<s3@t>"),
    ]
    result = fetch(d, strangers)
    assert [(i.verdict, i.reply) for i in result.incoming] == [(V.REJECTED, None)] * 3
    (note,) = notes(d)
    assert note["To"] == MODERATOR and result.note in outbox(d)
    assert all(mid in note.get_content() for mid in ("<s1@t>", "<s2@t>", "<s3@t>"))
    assert addressees(d) == {MODERATOR}
    before = records(d)
    fetch(d, strangers)
    assert records(d) == before


def test_a_stranger_learns_nothing_of_a_players_orders(d: Path) -> None:
    fetch(d, [message(CAROL, orders_for(d, "carol"), mid="<c@t>")])
    result = fetch(d, [message("mallory@evil.example", orders_for(d, "carol"), mid="<f@t>")])
    incoming, body = reply_to(d, result, "<f@t>")
    assert incoming.verdict is V.REJECTED and outbox(d)[incoming.reply or ""]["To"] == CAROL
    assert "mallory@evil.example carried orders for you (carol)" in body
    assert "your orders accepted earlier stand" in body
    assert addressees(d) == {CAROL, MODERATOR}
    (note,) = notes(d)
    assert "mallory@evil.example" in note.get_content()


# --- 5. what is printed is safe for a terminal --------------------------------------------------


def test_control_characters_from_a_message_are_escaped_when_printed(d: Path) -> None:
    msg = message("eve\x1b@example.org", "hello")
    raw = with_header(msg, "Subject", "\x1b]0;owned\x07 \u202eevil".encode())
    raw = with_header(raw, "Message-ID", b"<\x1b[2J@t>")
    raw = with_header(raw, "From", b"eve\x1b[31m@example.org")
    box = into_maildir(d.parent / "Maildir", [raw])
    out = run("mail", "fetch", d, "--maildir", box, "--now", NOW.isoformat())
    assert "\x1b" not in out and "\\x1b[2J" in out and "eve\\x1b[31m@example.org" in out
    kept = list((d / "mail" / "rejected").glob("*.txt"))
    texts = [p.read_text() for p in kept] + [m.get_content() for m in notes(d)]
    assert texts and all("\x1b" not in t and "\u202e" not in t and "\x07" not in t for t in texts)
    assert "\\u202eevil" in texts[0]


# --- 8. mail waits while a resolution is interrupted --------------------------------------------


def interrupted(d: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All orders taken by mail, then a resolve stopped after writing the history."""
    fetch(
        d, [message(p, orders_for(d, p.split("@")[0]), mid=f"<{p}>") for p in (ALICE, BOB, CAROL)]
    )
    stopped_after_the_history(d, monkeypatch)
    assert (d / "history" / "0001.toml").exists()


def test_mail_is_held_while_a_resolution_is_interrupted(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupted(d, monkeypatch)
    late = [message(ALICE, orders_for(d, "alice", owned(d, "alice", 1)), minutes=9, mid="<late@t>")]
    before = snapshot(d)
    result = fetch(d, late)
    assert [i.verdict for i in result.incoming] == [V.HELD]
    assert "run 'pbem resolve' to complete it" in result.incoming[0].reasons[0]
    assert "read again by the next 'pbem mail fetch'" in result.lines()[-1]
    assert snapshot(d) == before

    assert processor.resolve_game(d).recovered
    used = {o.player: o.text for o in read_history(d, 1).orders}
    done = d / "orders" / "done" / "0001"
    assert {p.stem: p.read_text() for p in done.iterdir()} == used
    # The held message is read against the game as it now stands.
    assert fetch(d, late).incoming[0].verdict is not V.HELD


def test_a_completed_resolution_archives_only_the_text_it_used(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    interrupted(d, monkeypatch)
    (d / "orders" / "bob.toml").write_text("# changed by hand\n")
    processor.resolve_game(d)
    used = {o.file: o.text for o in read_history(d, 1).orders}
    done = d / "orders" / "done" / "0001"
    assert {p.name: p.read_text() for p in done.iterdir()} == used  # bob's as used, not changed
    assert sorted(used) == ["alice.toml", "bob.toml", "carol.toml"]
    assert (d / "orders" / "bob.toml").read_text() == "# changed by hand\n"


# --- 10. dates and Message-IDs ------------------------------------------------------------------


def test_a_message_dated_in_the_future_counts_as_received_when_read(d: Path) -> None:
    future = message(ALICE, orders_for(d, "alice"), minutes=60 * 24 * 365 * 50, mid="<fut@t>")
    (first,) = fetch(d, [future]).incoming
    assert first.verdict is V.ACCEPTED and "in the future" in first.reasons[0]
    accepted = MailState.peek(d).seen["accepted"]["1/alice"]
    assert accepted["date"] == NOW.isoformat()
    later = message(ALICE, orders_for(d, "alice", owned(d, "alice", 2)), mid="<later@t>")
    later.replace_header("Date", "Wed, 03 Mar 2027 12:30:00 +0000")  # after NOW, before 2077
    box = into_maildir(d.parent / "later", [later])
    result = mail.fetch_orders(d, mail.Sources(maildir=box), MODERATOR, NOW + timedelta(hours=1))
    assert result.incoming[0].verdict is V.ACCEPTED
    assert (d / "orders" / "alice.toml").read_text() == orders_for(d, "alice", owned(d, "alice", 2))


def test_a_reused_message_id_with_other_content_is_answered_as_a_duplicate(d: Path) -> None:
    first = message(ALICE, orders_for(d, "alice"), mid="<m@t>")
    fetch(d, [first])
    resent = with_header(first, "Received", b"from relay.example.org by mx.example.org")
    other = message(ALICE, orders_for(d, "alice", owned(d, "alice", 1)), minutes=5, mid="<m@t>")
    stranger = message("eve@example.org", "hi", minutes=6, mid="<m@t>")
    result = fetch(d, [resent, other, stranger])
    assert [(i.verdict, bool(i.reply)) for i in result.incoming] == [
        (V.DUPLICATE, False),
        (V.DUPLICATE, True),
        (V.REJECTED, False),  # another sender's message: its own, and not answered
    ]
    answer = outbox(d)[result.incoming[1].reply or ""]
    assert answer["To"] == ALICE
    body = answer.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    assert "the same as a message pbem read" in flat(body) and "It was not used" in flat(body)
    assert (d / "orders" / "alice.toml").read_text() == orders_for(d, "alice")
    before = records(d)
    fetch(d, [first, other, stranger])
    assert records(d) == before


# --- property tests: no input makes a fetch fail ------------------------------------------------

HEADERS = [
    "From",
    "Message-ID",
    "Reply-To",
    "Date",
    "Subject",
    "References",
    "Content-Type",
    "Content-Transfer-Encoding",
    "Content-Disposition",
    "MIME-Version",
    "Auto-Submitted",
    "Return-Path",
    "To",
]


@pytest.fixture(scope="module")
def playground(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One game reused by every example (its mail state is wiped between them)."""
    directory = Path(shutil.copytree(template, tmp_path_factory.mktemp("play") / GAME))
    yield directory


def fetch_one(directory: Path, raw: bytes) -> mail.Incoming:
    for sub in ("mail", "outbox", "orders"):
        shutil.rmtree(directory / sub, ignore_errors=True)
    with tempfile.NamedTemporaryFile(suffix=".eml") as handle:
        handle.write(raw)
        handle.flush()
        sources = mail.Sources(files=(Path(handle.name),))
        (incoming,) = mail.fetch_orders(directory, sources, MODERATOR, NOW).incoming
    assert addressees(directory) <= ALLOWED
    return incoming


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4000))
def test_any_bytes_are_read_as_a_letter(raw: bytes) -> None:
    letter = read_letter(raw)
    assert letter.message_id and (letter.sender is None) == (letter.sender_problem is not None)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=st.binary(max_size=3000))
def test_any_bytes_as_an_email_never_stop_a_fetch(playground: Path, raw: bytes) -> None:
    assert fetch_one(playground, raw).verdict is not V.ACCEPTED


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(HEADERS),
    value=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)),
)
def test_any_header_value_in_a_valid_email_never_stops_a_fetch(
    playground: Path, name: str, value: bytes
) -> None:
    orders = orders_for(playground, "alice")
    incoming = fetch_one(playground, with_header(message(ALICE, orders), name, value))
    if incoming.verdict is V.ACCEPTED:
        assert (playground / "orders" / "alice.toml").read_text() == orders
        assert addressees(playground) == {ALICE}


@pytest.mark.parametrize("error", ["unforeseen", "unforeseen " * 100])
def test_an_unforeseen_error_on_one_message_does_not_stop_the_others(
    d: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    real = processor.forecast

    def trips(state: object, orders: object, *lang: object) -> list[str]:
        if getattr(orders, "player", None) == "alice":
            raise ValueError(error)
        return real(state, orders, *lang)  # type: ignore[arg-type]

    monkeypatch.setattr(processor, "forecast", trips)
    msgs = [message(ALICE, orders_for(d, "alice")), message(BOB, orders_for(d, "bob"))]
    first, second = fetch(d, msgs).incoming
    assert first.verdict is V.REJECTED and second.verdict is V.ACCEPTED
    told = f"pbem could not read this message (ValueError: {error})"
    assert first.reasons[0] == told[:500]  # a long error's text is cut to 500 characters
    assert outbox(d)[first.reply or ""]["To"] == ALICE and first.kept is not None


def test_a_bad_now_is_a_clean_error(d: Path) -> None:
    out = run("mail", "fetch", d, "--maildir", d, "--now", "tomorrow", code=1)
    assert "--now 'tomorrow' is not an ISO 8601 time" in out
    out = run("mail", "fetch", d, "--maildir", d, "--now", "2027-03-01T12:00", code=1)
    assert "has no offset" in out


def test_a_message_whose_parts_trip_the_reader_is_refused_not_raised(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def trips(msg: object) -> None:
        raise LookupError("unforeseen")

    monkeypatch.setattr(mail.message.found_in, "read", trips)
    letter = read_letter(message(ALICE, orders_for(d, "alice")).as_bytes())
    assert letter.orders is None
    assert letter.problem == "pbem cannot read its MIME structure (LookupError: unforeseen)"


def test_a_full_disk_stops_the_fetch_with_a_sentence_and_a_rerun_completes(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    msgs = [message(ALICE, orders_for(d, "alice"), mid="<a@t>")]
    box = into_maildir(d.parent / "Maildir", msgs)

    def full(path: Path, data: bytes | str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as patch:  # the orders and the answer are written in the
        patch.setattr(disk, "_write_one", full)  # background, and found failed at the commit
        out = run("mail", "fetch", d, "--maildir", box, "--now", NOW.isoformat(), code=1)
    assert "cannot write" in out and "the disk is full" in out, out
    assert "Traceback" not in out
    assert MailState.peek(d).seen["messages"] == {}  # nothing recorded: read again
    result = mail.fetch_orders(d, mail.Sources(maildir=box), MODERATOR, NOW)
    assert [i.verdict for i in result.incoming] == [V.ACCEPTED]


def test_the_moderator_is_told_the_first_problem_of_a_strangers_orders(d: Path) -> None:
    (incoming,) = fetch(d, [message("eve@example.org", f'game = "{GAME}"\n', mid="<e@t>")]).incoming
    assert incoming.verdict is V.REJECTED and len(incoming.reasons) > 2
    (note,) = notes(d)
    told = note.get_content()
    assert incoming.reasons[0] in told and incoming.reasons[1] not in told


def test_a_strangers_message_with_a_players_message_id_blocks_nothing(d: Path) -> None:
    mine = orders_for(d, "alice")
    first = message("mallory@evil.example", "hello", mid="<alice.1@mail>", minutes=1)
    real = message(ALICE, mine, mid="<alice.1@mail>", minutes=2)
    stranger, player = fetch(d, [first, real]).incoming
    assert stranger.verdict is V.REJECTED and player.verdict is V.ACCEPTED
    assert (d / "orders" / "alice.toml").read_text() == mine
    (again,) = fetch(d, [real]).incoming  # the player's, read again: a duplicate
    assert again.verdict is V.DUPLICATE
