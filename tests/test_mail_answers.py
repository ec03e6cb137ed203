"""What reaches a person: a player's question is answered and passed to the moderator at an
address of their own, a request for the report again is met with the report, and a mailbox of
a few hundred real messages is read once each."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from conftest import flat
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    Server,
    into_maildir,
    make_template,
    message,
    orders_for,
    outbox,
    owned,
    run,
    running_server,
)

from pbem import mail
from pbem.core.state import Options
from pbem.game import processor
from pbem.records.opening import read_game

ALICE = "alice@example.org"
HOME = "moderator@home.example"
CLIENTS = Path(__file__).parent / "fixtures" / "mail" / "clients"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / GAME))


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


def fetch(directory: Path, *msgs: EmailMessage | bytes) -> str:
    box = into_maildir(directory.parent / f"box{len(list(directory.parent.iterdir()))}", msgs)
    return run("mail", "fetch", directory, "--maildir", box, "--now", NOW.isoformat())


def by_kind(directory: Path) -> dict[str, list[EmailMessage]]:
    out: dict[str, list[EmailMessage]] = {}
    for name, msg in outbox(directory).items():
        out.setdefault(name.split("-")[0], []).append(msg)
    return out


QUESTION = "Hi,\n\nI will be away next week. What is the deadline for turn 0?\n\nAlice\n"


def test_a_question_is_answered_and_passed_to_the_moderators_own_address(game: Path) -> None:
    run("config", game, f"from={MODERATOR}", f"moderator={HOME}")
    fetch(game, message(ALICE, QUESTION, subject="deadline?", mid="<q@t>"))
    boxed = by_kind(game)
    (answer,) = boxed["reply"]
    assert answer["To"] == ALICE
    text = answer.get_content()
    assert text.startswith('Your message "deadline?" was not accepted:\n\n  no orders found')
    assert "Your message has been passed to the moderator." in text
    assert "The order file for this turn is at the end of your latest report" in flat(text)
    (note,) = boxed["note"]
    assert note["To"] == HOME and note["From"] == MODERATOR
    listed = note.get_content()
    assert "<q@t> from alice@example.org" in listed
    assert "  | I will be away next week. What is the deadline for turn 0?" in listed
    assert "  | Alice" in listed


def test_without_a_moderator_setting_the_note_goes_to_the_from_address(game: Path) -> None:
    run("config", game, f"from={MODERATOR}")
    fetch(game, message(ALICE, QUESTION, mid="<q@t>"))
    (note,) = by_kind(game)["note"]
    assert note["To"] == MODERATOR


def test_orders_are_not_passed_to_the_moderator(game: Path) -> None:
    run("config", game, f"moderator={HOME}")
    fetch(game, message(ALICE, orders_for(game, "alice", owned(game, "alice", 2)), mid="<o@t>"))
    assert "note" not in by_kind(game) and (game / "orders" / "alice.toml").exists()


def test_a_long_message_is_listed_up_to_its_limit(game: Path) -> None:
    long = "".join(f"line {n} of a long letter\n" for n in range(1000))
    fetch(game, message(ALICE, long, mid="<long@t>"))
    (note,) = by_kind(game)["note"]
    listed = note.get_content()
    assert "| line 0 of a long letter" in listed and "line 999" not in listed
    assert "more characters, in mail/rejected/" in listed


def test_a_player_asking_for_a_resend_gets_the_latest_report_again(
    game: Path, server: Server
) -> None:
    run("mail", "send", game, "--smtp", server.spec)  # the setup reports go out first
    (report,) = [m for m in server.recorder.messages() if m["To"] == ALICE]
    server.recorder.received.clear()
    ask = message(ALICE, "Please resend my report, I deleted it.", subject="resend", mid="<r@t>")
    output = fetch(game, ask)
    assert "report resent: <r@t> from alice@example.org (alice)" in output
    boxed = by_kind(game)
    (resent,) = boxed["resend"]
    assert "reply" not in boxed  # the report is the answer
    assert resent["To"] == ALICE and resent["In-Reply-To"] == "<r@t>"
    assert resent["Subject"] == f"[{GAME}] resent: turn 0: your move"
    assert resent["Message-ID"] != report["Message-ID"]
    assert re.fullmatch(r"<pbem\.spring-2027\.r0000\.resent\.[0-9a-f]{16}\.alice@[^>]+>",
                        resent["Message-ID"])  # fmt: skip
    names = [p.get_filename() for p in resent.iter_attachments()]
    assert names == ["alice.orders.toml", "alice.view.json"]

    def text(msg: EmailMessage) -> str:
        body = msg.get_body(("plain",))
        assert body is not None
        return str(body.get_content()).replace("\r\n", "\n")

    assert text(resent) == text(report)
    (note,) = boxed["note"]
    assert "alice asked for their latest report again: resent" in note.get_content()
    fetch(game, ask)  # the same request read again: nothing more
    assert len(by_kind(game)["resend"]) == 1
    run("mail", "send", game, "--smtp", server.spec)
    delivered = [m for m in server.recorder.messages() if m["To"] == ALICE]
    assert [str(m["Subject"]) for m in delivered] == [f"[{GAME}] resent: turn 0: your move"]


def test_a_resend_asked_by_a_stranger_sends_nothing(game: Path) -> None:
    fetch(game, message("mallory@evil.example", "resend", subject="resend", mid="<m@t>"))
    assert "resend" not in by_kind(game) and "reply" not in by_kind(game)


def test_a_resend_asked_with_orders_plays_the_orders(game: Path) -> None:
    mine = owned(game, "alice", 1)
    body = "resend the report too\n\n" + orders_for(game, "alice", mine)
    fetch(game, message(ALICE, body, subject="resend", mid="<ro@t>"))
    assert "resend" not in by_kind(game)
    assert f'territory = "{mine}"' in (game / "orders" / "alice.toml").read_text()


def test_a_question_for_no_game_reaches_the_roots_moderator(made: Path, tmp_path: Path) -> None:
    root = tmp_path / "club"
    shutil.copytree(made, root / GAME)
    run("config", root, f"from={MODERATOR}", f"moderator={HOME}")
    box = into_maildir(tmp_path / "M", [message(ALICE, "When do we start?", mid="<n@t>")])
    run("mail", "fetch", root, "--maildir", box, "--now", NOW.isoformat())
    notes = [m for name, m in outbox(root).items() if name.startswith("note-")]
    (note,) = notes
    assert note["To"] == HOME and "  | When do we start?" in note.get_content()
    (answer,) = [m for name, m in outbox(root).items() if name.startswith("reply-")]
    assert "passed to the moderator" in flat(answer.get_content())


def test_a_mailbox_of_hundreds_of_real_messages_is_read_once_each(game: Path) -> None:
    raws = []
    for n in range(4):
        for path in sorted(CLIENTS.glob("*.eml")):
            raw = path.read_bytes()
            raws.append(re.sub(rb"(?im)^Message-ID:\s*<", b"Message-ID: <c%d." % n, raw, count=1))
    box = into_maildir(game.parent / "Maildir", raws)
    sources = mail.Sources(maildir=box)
    first = mail.fetch_orders(game, sources, MODERATOR, NOW)
    assert len(first.incoming) == len(raws) >= 380
    assert not first.count(mail.Verdict.HELD) and not first.count(mail.Verdict.DUPLICATE)
    assert len({i.message_id for i in first.incoming}) == len(raws)
    again = mail.fetch_orders(game, sources, MODERATOR, NOW)
    assert again.count(mail.Verdict.DUPLICATE) == len(raws)
    assert not any(i.reply for i in again.incoming)
    assert read_game(game).state.turn == 0


def test_two_players_sharing_one_address_each_send_their_own_orders(tmp_path: Path) -> None:
    home = "home@example.org"
    directory = tmp_path / GAME
    players = [("alice", home), ("bob", home), ("carol", "carol@example.org")]
    processor.new_game(directory, players, Options(), seed=bytes(range(32)), name=GAME)
    msgs = [
        message(home, orders_for(directory, "bob"), mid="<b@t>", minutes=1),
        message(home, orders_for(directory, "alice"), mid="<a@t>", minutes=2),
    ]
    result = mail.fetch_orders(
        directory, mail.Sources(maildir=into_maildir(tmp_path / "M", msgs)), MODERATOR, NOW
    )
    assert [(i.player, i.verdict) for i in result.incoming] == [
        ("bob", mail.Verdict.ACCEPTED),
        ("alice", mail.Verdict.ACCEPTED),
    ]
    assert (directory / "orders" / "bob.toml").read_text() == orders_for(directory, "bob")
