"""No mail loop: an auto-responder that carries none of the marks of machine mail and pbem
would answer each other for ever. The answers to one address are limited per fetch, per
thread and per day (`pbem.mail.muting`), a muted address is named in the moderator's summary,
and a muted player's orders are still played. The loop runs with the real parts: a Maildir
fetched by `pbem mail fetch`, an SMTP server taking what `pbem mail send` delivers, and a
script answering each message that reaches the player."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    Recorder,
    Server,
    into_maildir,
    make_template,
    message,
    orders_for,
    outbox,
    parse,
    run,
    running_server,
)

from pbem.mail import muting
from pbem.records.mailstate import MailState

ALICE = "alice@example.org"
HOME = "moderator@home.example"
DOCS = Path(__file__).parent.parent / "docs" / "mail.md"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game(made: Path, tmp_path: Path) -> Path:
    directory = Path(shutil.copytree(made, tmp_path / GAME))
    run("config", directory, f"from={MODERATOR}", f"moderator={HOME}")
    return directory


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server(Recorder())


def auto_reply(to_answer: EmailMessage, n: int, threaded: bool, **headers: str) -> EmailMessage:
    """What a plain auto-responder at Alice's address writes: none of the marks of machine
    mail, a subject of its own, threaded to what it answers or not."""
    reply = EmailMessage()
    reply["From"] = ALICE
    reply["To"] = MODERATOR
    reply["Subject"] = "Thank you for your message"
    reply["Date"] = format_datetime(NOW + timedelta(minutes=10 * n))
    reply["Message-ID"] = f"<auto.{n}@example.org>"
    if threaded and to_answer["Message-ID"]:
        reply["In-Reply-To"] = to_answer["Message-ID"]
        reply["References"] = to_answer["Message-ID"]
    for name, value in headers.items():
        reply[name.replace("_", "-")] = value
    reply.set_content("Thank you for your message. I will read it when I can.\n")
    return reply


def loop(
    game: Path, server: Server, rounds: int, threaded: bool, **headers: str
) -> tuple[int, str]:
    """Run the loop for `rounds` fetches ten minutes apart, each followed by a send; the
    number of pbem's answers that reached Alice, and the summaries the moderator got."""
    box = into_maildir(game.parent / "box", [])
    answered = 0
    summaries = ""
    n = 0
    run("mail", "send", game, "--smtp", server.spec, "--now", NOW.isoformat())
    for i in range(rounds + 1):
        now = (NOW + timedelta(minutes=10 * i)).isoformat()
        delivered = server.recorder.messages()
        server.recorder.received.clear()
        to_alice = [m for m in delivered if m["To"] == ALICE]
        summaries += "".join(str(m.get_content()) for m in delivered if m["To"] == HOME)
        answered += sum(1 for m in to_alice if ".reply." in str(m["Message-ID"]))
        if i == rounds:
            break
        for msg in to_alice:
            n += 1
            into_maildir(box, [])
            entry = box / "new" / f"{1_900_000_000 + n}.M{n}P1.auto"
            entry.write_bytes(auto_reply(msg, n, threaded, **headers).as_bytes())
        run("mail", "fetch", game, "--maildir", box, "--now", now)
        run("mail", "send", game, "--smtp", server.spec, "--now", now)
    return answered, summaries


@pytest.mark.timeout(300)
@pytest.mark.parametrize("threaded", [True, False], ids=["threaded", "unthreaded"])
def test_an_auto_responder_loop_of_50_rounds_gets_the_documented_answers(
    game: Path, server: Server, threaded: bool
) -> None:
    answered, summaries = loop(game, server, 50, threaded)
    limit = muting.PER_THREAD if threaded else muting.PER_DAY
    assert answered == limit
    assert len(MailState.peek(game).seen[muting.ANSWERED]) == answered
    why = "muted for this thread" if threaded else "muted until"
    assert f"{ALICE} {why}" in " ".join(summaries.split())


def muted_summary(game: Path) -> str:
    notes = [m for name, m in outbox(game).items() if name.startswith("note-")]
    return "\n".join(str(m.get_content()) for m in notes)


def fetch(game: Path, msgs: list[EmailMessage], minutes: int = 0) -> str:
    box = into_maildir(game.parent / f"box{len(list(game.parent.iterdir()))}", msgs)
    now = (NOW + timedelta(minutes=minutes)).isoformat()
    return run("mail", "fetch", game, "--maildir", box, "--now", now)


def replies(game: Path) -> list[EmailMessage]:
    return [m for name, m in outbox(game).items() if name.startswith("reply-")]


def test_answers_per_fetch_are_limited_and_the_summary_names_the_address(game: Path) -> None:
    msgs = [message(ALICE, "Hello?", mid=f"<q{i}@t>", minutes=i) for i in range(5)]
    out = fetch(game, msgs)
    assert len(replies(game)) == muting.PER_FETCH
    summary = muted_summary(game)
    assert f"{ALICE} muted until the next fetch" in summary
    assert "not answered: alice@example.org muted until the next fetch" in out


def test_answers_per_day_are_limited_by_the_runs_time_and_a_rerun_counts_them(
    game: Path,
) -> None:
    for i in range(muting.PER_DAY + 2):
        fetch(game, [message(ALICE, "Hello?", mid=f"<d{i}@t>", minutes=i)], minutes=i)
    assert len(replies(game)) == muting.PER_DAY
    first = NOW + timedelta(hours=24)
    assert f"{ALICE} muted until {format_datetime(first)}" in muted_summary(game)
    # a day later by --now (never the wall clock), the address is answered again
    fetch(game, [message(ALICE, "Hello?", mid="<later@t>")], minutes=24 * 60 + 1)
    assert len(replies(game)) == muting.PER_DAY + 1


def test_a_muted_players_orders_are_still_played(game: Path) -> None:
    msgs = [message(ALICE, "Hello?", mid=f"<o{i}@t>", minutes=i) for i in range(muting.PER_FETCH)]
    orders = orders_for(game, "alice")
    msgs.append(message(ALICE, orders, mid="<orders@t>", minutes=10))
    out = fetch(game, msgs)
    assert "accepted: <orders@t>" in out
    assert (game / "orders" / "alice.toml").read_text() == orders
    assert len(replies(game)) == muting.PER_FETCH
    assert "<orders@t>" in muted_summary(game)


def test_outlooks_request_for_no_auto_replies_ends_a_thread_of_answers(
    game: Path, server: Server
) -> None:
    answered, summaries = loop(game, server, 10, True, X_Auto_Response_Suppress="All")
    assert answered == 1
    assert "it asks for no automatic replies" in " ".join(summaries.split())


def test_a_delivery_report_sent_as_the_player_is_not_answered(game: Path) -> None:
    raw = (
        f"From: {ALICE}\r\nTo: {MODERATOR}\r\nSubject: Re: your orders\r\n"
        "Message-ID: <dsn@example.org>\r\nDate: Tue, 2 Mar 2027 11:00:00 +0000\r\n"
        'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="BB"\r\n\r\n'
        "--BB\r\nContent-Type: text/plain\r\n\r\nYour message was delivered.\r\n"
        "--BB\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n"
        "\r\nFinal-Recipient: rfc822; pbem@example.org\r\nAction: delivered\r\n"
        "Status: 2.0.0\r\n--BB--\r\n"
    ).encode()
    out = fetch(game, [parse(raw)])
    assert "not answered: <dsn@example.org>" in out
    assert "it holds a report among its parts (message/delivery-status)" in out
    assert replies(game) == []


def test_the_limits_are_documented() -> None:
    doc = " ".join(DOCS.read_text().split())
    for number, what in (
        (muting.PER_FETCH, "a fetch"),
        (muting.PER_THREAD, "a thread"),
        (muting.PER_DAY, "24 hours"),
    ):
        assert f"{number} answers" in doc and what in doc


def test_a_folder_of_games_limits_its_own_answers_too(made: Path, tmp_path: Path) -> None:
    """A message for no game of a folder is answered by the folder: an auto-responder that
    answers each of those answers (threaded, no game named) is stopped by the same limits."""
    root = tmp_path / "club"
    shutil.copytree(made, root / GAME)
    box = into_maildir(tmp_path / "box", [])
    to_answer: EmailMessage = message(ALICE, "Hello?", mid="<first@t>")
    for n in range(1, 51):
        reply = to_answer if n == 1 else auto_reply(to_answer, n, True)
        (box / "new" / f"{1_900_000_000 + n}.M{n}P1.auto").write_bytes(reply.as_bytes())
        now = (NOW + timedelta(minutes=10 * n)).isoformat()
        run("mail", "fetch", root, "--maildir", box, "--now", now)
        answers = sorted((root / "outbox").glob("reply-*.eml"), key=lambda p: p.stat().st_mtime)
        if answers:
            to_answer = parse(answers[-1].read_bytes())
    assert len(list((root / "outbox").glob("reply-*.eml"))) == muting.PER_THREAD
    notes = "".join(str(parse(p.read_bytes()).get_content()) for p in root.glob("outbox/note-*"))
    assert f"{ALICE} muted for this thread" in " ".join(notes.split())
