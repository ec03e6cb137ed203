"""Email in and out: orders fetched from Maildir, mbox and .eml files; reports mailed over a real
SMTP server (aiosmtpd on loopback) or written to the outbox."""

from __future__ import annotations

import asyncio
import json
import mailbox
import os
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from click.testing import CliRunner
from conftest import flat, force_state

from pbem import mail
from pbem.cli import main
from pbem.core.state import Options, Phase
from pbem.errors import PbemError
from pbem.game import processor
from pbem.mail.message import orders_from_body, read_letter
from pbem.present import report
from pbem.records.history import report_dir
from pbem.records.mailstate import MailState
from pbem.records.opening import read_game

SEED = bytes(range(32))
GAME = "spring-2027"
MODERATOR = "moderator@example.org"
PLAYERS = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")]
FILES = ["r0000-deal-alice.eml", "r0000-deal-bob.eml", "r0000-deal-carol.eml"]
T0 = datetime(2027, 3, 1, 12, 0, tzinfo=timezone.utc)
NOW = T0 + timedelta(days=1)
"""When the mail is read: after every message of the tests was sent."""


# --- building games and messages ---------------------------------------------------------------


def make_template(factory: pytest.TempPathFactory) -> Path:
    directory = factory.mktemp("template") / GAME
    processor.new_game(directory, PLAYERS, Options(), seed=SEED, name=GAME)
    return directory


@pytest.fixture(scope="module")
def new_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game_dir(new_game: Path, tmp_path: Path) -> Path:
    """A new game (a copy of one made once: creating a game renders every report)."""
    return Path(shutil.copytree(new_game, tmp_path / GAME))


def orders_for(directory: Path, player: str, territory: str | None = None) -> str:
    """Valid orders a player wrote: the ready order file placing on `territory`, or on one of
    theirs other than the ready file's (the ready file unchanged is not taken from a text)."""
    game = read_game(directory)
    reg = game.registration(player)
    assert reg is not None
    text = report.order_skeleton(game.state, player, reg.secret)
    start = text.index('territory = "')
    end = text.index("\n", start)
    if territory is None:
        ready = text[start:end].split('"')[1]
        territory = next(t for t in reversed(game.state.owned(player)) if t != ready)
    return text[:start] + f'territory = "{territory}"' + text[end:]


def ready_file(directory: Path, player: str) -> str:
    """The player's ready order file, as their report holds it."""
    game = read_game(directory)
    reg = game.registration(player)
    assert reg is not None
    return report.order_skeleton(game.state, player, reg.secret)


def owned(directory: Path, player: str, n: int) -> str:
    return read_game(directory).state.owned(player)[n]


def message(
    sender: str,
    body: str | None = "",
    *,
    minutes: int = 0,
    mid: str | None = None,
    subject: str = "my orders",
    attach: str | bytes | None = None,
    filename: str = "orders.toml",
    html: str | None = None,
    headers: dict[str, str] | None = None,
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = MODERATOR
    msg["Subject"] = subject
    msg["Date"] = format_datetime(T0 + timedelta(minutes=minutes))
    msg["Message-ID"] = mid or f"<{sender.split('@')[0]}.{minutes}.{subject.count(' ')}@test>"
    for name, value in (headers or {}).items():
        msg[name] = value
    if body is not None:
        msg.set_content(body)
    if html is not None:
        if body is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    if attach is not None:
        data = attach.encode() if isinstance(attach, str) else attach
        msg.add_attachment(data, maintype="application", subtype="octet-stream", filename=filename)
    return msg


def into_maildir(path: Path, messages: Sequence[EmailMessage | bytes]) -> Path:
    """A Maildir holding the messages as delivered, in order (each file stamped with its
    arrival time, as the delivery agent does)."""
    for sub in ("new", "cur", "tmp"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    for i, msg in enumerate(messages):
        when = 1_800_000_000 + i
        entry = path / "new" / f"{when}.M{i}P1.test"
        entry.write_bytes(msg if isinstance(msg, bytes) else msg.as_bytes())
        os.utime(entry, (when, when))
    return path


def into_mbox(path: Path, messages: Sequence[EmailMessage | bytes]) -> Path:
    box = mailbox.mbox(path, create=True)
    for msg in messages:
        box.add(msg if isinstance(msg, bytes) else msg.as_bytes())
    box.flush()
    box.close()
    return path


def fetch(
    directory: Path, messages: Sequence[EmailMessage | bytes], kind: str = "maildir"
) -> mail.FetchResult:
    where = directory.parent / f"box-{kind}-{len(list(directory.parent.iterdir()))}"
    if kind == "maildir":
        sources = mail.Sources(maildir=into_maildir(where, messages))
    else:
        sources = mail.Sources(mbox=into_mbox(where, messages))
    return mail.fetch_orders(directory, sources, MODERATOR, NOW)


def parse(data: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(data)


def outbox(directory: Path) -> dict[str, EmailMessage]:
    return {p.name: parse(p.read_bytes()) for p in sorted((directory / "outbox").glob("*.eml"))}


def reply_to(directory: Path, result: mail.FetchResult, mid: str) -> tuple[mail.Incoming, str]:
    incoming = next(i for i in result.incoming if i.message_id == mid)
    assert incoming.reply is not None
    msg = parse((directory / "outbox" / incoming.reply).read_bytes())
    body = msg.get_body(preferencelist=("plain",))
    assert body is not None
    return incoming, body.get_content()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def records(directory: Path) -> tuple[dict[str, bytes], dict[str, Any], dict[str, Any]]:
    """The game's files and its mail state's records, all but where each message handled was
    found in its mailbox (`fetch` copies the messages into a new mailbox each time: reading
    the same messages there records where they are)."""
    state = MailState.peek(directory)
    files = {k: v for k, v in snapshot(directory).items() if k != "mail/ledger.sqlite"}
    return files, state.seen, state.sent


def run(*args: object, code: int = 0, **kwargs: Any) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kwargs)
    assert result.exit_code == code, result.output
    return result.output


# --- a real SMTP server on loopback ------------------------------------------------------------


@dataclass
class Recorder:
    """An aiosmtpd handler that keeps what it receives; it can refuse addresses (at RCPT, or at
    DATA for the whole message) or drop a connection in the middle of a message (421), as real
    servers do."""

    received: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    refuse: dict[str, str] = field(default_factory=dict)
    refuse_data: dict[str, str] = field(default_factory=dict)
    drop_after: int | None = None
    delay: float = 0.0

    async def handle_RCPT(  # noqa: N802 (aiosmtpd's hook names)
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address in self.refuse:
            return self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(  # noqa: N802
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.drop_after is not None and len(self.received) >= self.drop_after:
            self.drop_after = None
            return "421 4.3.2 service shutting down"
        for address in envelope.rcpt_tos:
            if address in self.refuse_data:
                return self.refuse_data[address]
        self.received.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"

    def messages(self) -> list[EmailMessage]:
        return [parse(content) for _, _, content in self.received]


class _OwnSocket(Controller):
    """aiosmtpd's Controller serving on a socket the test bound itself: no other server can
    take its port between choosing it and listening on it (as with a port chosen, closed and
    bound again)."""

    def __init__(self, sock: socket.socket, handler: Any, **kwargs: Any) -> None:
        super().__init__(handler, **kwargs)
        self._sock = sock

    def _create_server(self) -> Any:
        return self.loop.create_server(self._factory_invoker, sock=self._sock, ssl=self.ssl_context)


@dataclass
class Server:
    recorder: Recorder
    port: int = 0
    """0 until started: then the port its socket was bound to (kept when stopped, so that it
    starts again on it)."""
    options: dict[str, Any] = field(default_factory=dict)
    controller: Controller | None = None

    @property
    def spec(self) -> str:
        return f"127.0.0.1:{self.port}"

    def smtp(self, **kwargs: Any) -> mail.SmtpServer:
        return mail.SmtpServer("127.0.0.1", self.port, timeout=5, **kwargs)

    def start(self) -> None:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen()
        sock.setblocking(False)
        self.port = int(sock.getsockname()[1])
        self.controller = _OwnSocket(
            sock, self.recorder, hostname="127.0.0.1", port=self.port, **self.options
        )
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None


def running_server(recorder: Recorder | None = None, **options: Any) -> Iterator[Server]:
    """A server on a free port for the length of a test (the body of the server fixtures)."""
    running = Server(recorder or Recorder(), options=options)
    running.start()
    yield running
    running.stop()


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


# --- finding the orders in a message -----------------------------------------------------------


ORDERS = 'game = "g"\nturn = 0\nplayer = "alice"\nsecret = "x"\n\n[[place]]\nterritory = "Peru"\n'


def test_orders_in_the_body_are_read_from_game_to_the_end() -> None:
    assert orders_from_body("Hello,\nhere they are:\n\n" + ORDERS) == ORDERS


def test_the_signature_and_trailing_words_are_left_out() -> None:
    body = ORDERS + "\nThanks!\nBob\n-- \nBob Smith, Springfield\ngame = 'not this'\n"
    assert orders_from_body(body) == ORDERS


def test_quoted_lines_and_their_attribution_are_left_out() -> None:
    quoted = "".join(f"> {line}\n" for line in ORDERS.replace("Peru", "Ural").splitlines())
    top = ORDERS + "\nOn Mon, 1 Mar 2027, pbem wrote:\n" + quoted
    bottom = "On Mon, 1 Mar 2027, pbem wrote:\n" + quoted + "\n" + ORDERS
    assert orders_from_body(top) == ORDERS
    assert orders_from_body(bottom) == ORDERS


def test_an_original_message_separator_ends_the_orders() -> None:
    body = ORDERS + "\n-----Original Message-----\nFrom: pbem\n" + ORDERS.replace("Peru", "Ural")
    assert orders_from_body(body) == ORDERS


def test_a_body_without_a_game_line_has_no_orders() -> None:
    assert orders_from_body("See you next week!\n> game = 'quoted'\n") is None


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Auto-Submitted", "auto-replied"),
        ("Auto-Submitted", "auto-generated; owner-email=x@y"),
        ("Precedence", "bulk"),
        ("Precedence", "junk"),
        ("Precedence", "list"),
        ("X-Autoreply", "yes"),
        ("X-Autorespond", "On vacation"),
        ("Return-Path", "<>"),
        ("X-Pbem-Loop", GAME),
    ],
)
def test_machines_are_recognised(header: str, value: str) -> None:
    msg = message("alice@example.org", "x", headers={header: value})
    assert read_letter(msg.as_bytes()).machine


def test_people_are_not_machines() -> None:
    headers = {"Auto-Submitted": "no", "Precedence": "first-class", "Return-Path": "<a@b>"}
    assert (
        read_letter(message("alice@example.org", "x", headers=headers).as_bytes()).machine is None
    )


# --- orders in: each kind of message ends as specified ------------------------------------------


@pytest.mark.parametrize("kind", ["maildir", "mbox"])
def test_a_mailbox_of_every_kind_of_message(game_dir: Path, kind: str) -> None:
    d = game_dir
    alice, bob, carol = (f"{p}@example.org" for p in ("alice", "bob", "carol"))
    last_report = (report_dir(d, 0) / "carol.txt").read_text()
    quoting = (
        orders_for(d, "carol")
        + "\nOn Mon, 1 Mar 2027 at 09:00, pbem <pbem@localhost> wrote:\n"
        + "".join(f"> {line}\n" for line in last_report.splitlines())
        + "\n-- \nCarol\n"
    )
    first_alice = message(alice, "Here:\n\n" + orders_for(d, "alice"), minutes=1, mid="<a1@t>")
    messages = [
        first_alice,
        message(bob, "orders attached", attach=orders_for(d, "bob"), minutes=10, mid="<b2@t>"),
        message("mallory@evil.example", orders_for(d, "carol"), minutes=2, mid="<forged@t>"),
        message(carol, quoting, subject="Re: [spring-2027] turn 0: your move", mid="<c@t>"),
        message(alice, None, html="<p>game = ...</p>", minutes=3, mid="<html@t>"),
        first_alice,  # delivered twice
        message(alice, orders_for(d, "alice", owned(d, "alice", 0)), minutes=20, mid="<a2@t>"),
        message(bob, orders_for(d, "bob", owned(d, "bob", 0)), minutes=5, mid="<b1@t>"),
        message(
            bob, "I am away", minutes=30, mid="<away@t>", headers={"Auto-Submitted": "auto-replied"}
        ),
    ]
    result = fetch(d, messages, kind)

    verdicts = [(i.message_id, i.verdict) for i in result.incoming]
    assert verdicts == [
        ("<a1@t>", mail.Verdict.ACCEPTED),
        ("<b2@t>", mail.Verdict.ACCEPTED),
        ("<forged@t>", mail.Verdict.REJECTED),
        ("<c@t>", mail.Verdict.ACCEPTED),
        ("<html@t>", mail.Verdict.REJECTED),
        ("<a1@t>", mail.Verdict.DUPLICATE),
        ("<a2@t>", mail.Verdict.ACCEPTED),
        ("<b1@t>", mail.Verdict.IGNORED),
        ("<away@t>", mail.Verdict.UNANSWERED),
    ]
    # The orders that stand: alice's later message, bob's attachment, carol's reply.
    assert (d / "orders" / "alice.toml").read_text() == orders_for(d, "alice", owned(d, "alice", 0))
    assert (d / "orders" / "bob.toml").read_text() == orders_for(d, "bob")
    assert (d / "orders" / "carol.toml").read_text() == orders_for(d, "carol")
    assert (d / "orders" / "replaced" / "alice-1.toml").read_text() == orders_for(d, "alice")
    assert sorted(p.name for p in (d / "orders").glob("*.toml")) == [
        "alice.toml",
        "bob.toml",
        "carol.toml",
    ]
    # One answer per message from a person, none to the machine, and a note to the moderator.
    box = outbox(d)
    answered = [i for i in result.incoming if i.reply]
    assert len(answered) == 7 and len({i.reply for i in answered}) == 7
    assert sum(name.startswith("reply-") for name in box) == 7
    notes = [m for name, m in box.items() if name.startswith("note-")]
    assert len(notes) == 1 and notes[0]["To"] == MODERATOR
    assert "mallory@evil.example" in notes[0].get_content()
    assert all(m[mail.LOOP_HEADER] == GAME for m in box.values())
    # Only the game's people are answered: the forged message is answered to carol.
    assert {m["To"] for m in box.values()} == {alice, bob, carol, MODERATOR}
    assert result.note is not None and result.note in box

    incoming, forged = reply_to(d, result, "<forged@t>")
    assert box[incoming.reply or ""]["To"] == carol
    assert "sent from mallory@evil.example carried orders for you (carol)" in forged
    assert "mallory@evil.example is not the address registered for carol" in incoming.reasons[0]
    _, html_only = reply_to(d, result, "<html@t>")
    assert "not valid TOML" in html_only and "accepted earlier stand" in html_only
    _, ignored = reply_to(d, result, "<b1@t>")
    assert "before the orders already accepted" in ignored
    incoming, replaced = reply_to(d, result, "<a2@t>")
    assert "They replace the orders you sent on" in replaced
    assert "orders/replaced/alice-1.toml" in incoming.reasons[0]
    _, accepted = reply_to(d, result, "<c@t>")
    assert "accepted" in accepted and "What they will do:\n  place 21 on " in accepted

    # The same messages in another mailbox are read again and change nothing but the record
    # of where they were found.
    before = records(d)
    again = fetch(d, messages, kind)
    assert {i.verdict for i in again.incoming} == {mail.Verdict.DUPLICATE}
    assert again.skipped == 0 and len(again.incoming) == len(messages)
    assert records(d) == before
    # The same mailbox again: every message is skipped unread, and nothing changes at all.
    box = d.parent / f"box-{kind}-{len(list(d.parent.iterdir())) - 1}"
    before = snapshot(d)
    sources = mail.Sources(maildir=box) if kind == "maildir" else mail.Sources(mbox=box)
    third = mail.fetch_orders(d, sources, MODERATOR, NOW)
    assert third.incoming == () and third.skipped == len(messages)
    assert third.count(mail.Verdict.DUPLICATE) == len(messages)
    assert (
        f"{len(messages)} messages read: 0 accepted, {len(messages)} already processed"
        in (third.lines()[-1])
    )
    assert snapshot(d) == before


def test_a_reply_threads_to_the_message_it_answers(game_dir: Path) -> None:
    msg = message(
        "alice@example.org",
        orders_for(game_dir, "alice"),
        mid="<q@t>",
        headers={"References": "<pbem.spring-2027.r0000.alice@localhost>"},
    )
    result = fetch(game_dir, [msg])
    answer = outbox(game_dir)[result.incoming[0].reply or ""]
    assert answer["In-Reply-To"] == "<q@t>"
    assert answer["References"] == "<pbem.spring-2027.r0000.alice@localhost> <q@t>"
    assert answer["Auto-Submitted"] == "auto-replied"
    assert answer["Subject"] == "[spring-2027] accepted: your orders for turn 0"


def test_a_rejection_lists_every_problem_with_its_line(game_dir: Path) -> None:
    text = orders_for(game_dir, "alice")
    text += '\n[[place]]\nterritory = "Atlantis"\narmies = 1\n'
    text += '\n[[place]]\nterritory = "Lemuria"\narmies = 1\n'
    result = fetch(game_dir, [message("alice@example.org", text, mid="<bad@t>")])
    incoming, body = reply_to(game_dir, result, "<bad@t>")
    assert incoming.verdict is mail.Verdict.REJECTED
    assert len(incoming.reasons) == 2
    for reason in incoming.reasons:
        assert reason.startswith("orders.toml line ")
        assert reason in body
    assert '15 | territory = "Atlantis"' in body and '19 | territory = "Lemuria"' in body
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_a_misspelt_name_does_not_hide_an_army_count_error_in_a_mail(game_dir: Path) -> None:
    text = orders_for(game_dir, "alice").replace('armies = "rest"', "armies = 999")
    text += '\n[[place]]\nterritory = "Atlantis"\narmies = 1\n'
    result = fetch(game_dir, [message("alice@example.org", text, mid="<two@t>")])
    incoming, body = reply_to(game_dir, result, "<two@t>")
    assert incoming.verdict is mail.Verdict.REJECTED
    assert len(incoming.reasons) == 2
    assert "unknown territory 'Atlantis'" in incoming.reasons[0]  # line 15
    assert "too many armies placed: 1000" in incoming.reasons[1]  # line 16
    assert all(flat(reason) in flat(body) for reason in incoming.reasons)


def test_the_whole_report_sent_back_in_a_mail_is_read_between_the_cut_lines(
    game_dir: Path,
) -> None:
    report = (report_dir(game_dir, 0) / "alice.txt").read_text()
    mine = owned(game_dir, "alice", 1)
    edited = report.replace(ready_file(game_dir, "alice"), orders_for(game_dir, "alice", mine))
    assert edited != report
    result = fetch(game_dir, [message("alice@example.org", edited, mid="<whole@t>")])
    incoming, body = reply_to(game_dir, result, "<whole@t>")
    assert incoming.verdict is mail.Verdict.ACCEPTED, incoming.reasons
    assert "What they will do:\n  place " in body and mine in body
    assert f'territory = "{mine}"' in (game_dir / "orders" / "alice.toml").read_text()


def test_the_whole_report_sent_back_unchanged_is_not_taken_for_orders(game_dir: Path) -> None:
    report = (report_dir(game_dir, 0) / "alice.txt").read_text()
    result = fetch(game_dir, [message("alice@example.org", report, mid="<whole@t>")])
    incoming, body = reply_to(game_dir, result, "<whole@t>")
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "the only orders in your message are the ready order file of your report" in flat(body)
    assert "alice.orders.toml" in body and "between the cut lines" in body
    assert "passed to the moderator" in body
    assert not (game_dir / "orders" / "alice.toml").exists()


def test_a_wrong_secret_is_rejected(game_dir: Path) -> None:
    text = orders_for(game_dir, "alice")
    secret = read_game(game_dir).registration("alice").secret  # type: ignore[union-attr]
    result = fetch(game_dir, [message("alice@example.org", text.replace(secret, "guess"))])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "the secret is not alice's" in result.incoming[0].reasons[0]


def test_a_message_without_orders_is_rejected(game_dir: Path) -> None:
    result = fetch(game_dir, [message("bob@example.org", "When is the next turn?")])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert result.incoming[0].reasons[0].startswith("no orders found")


def test_orders_for_an_unknown_game_are_rejected(game_dir: Path) -> None:
    text = orders_for(game_dir, "bob").replace(f'game = "{GAME}"', 'game = "autumn-2027"')
    result = fetch(game_dir, [message("bob@example.org", text)])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "unknown game 'autumn-2027'" in result.incoming[0].reasons[0]
    assert not (game_dir / "orders" / "bob.toml").exists()


def test_orders_for_a_finished_game_are_rejected(game_dir: Path) -> None:
    game = read_game(game_dir)
    force_state(game_dir, replace(game.state, phase=Phase.OVER, winner="carol"))
    result = fetch(game_dir, [message("bob@example.org", orders_for(game_dir, "bob"))])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "is over (carol won)" in result.incoming[0].reasons[0]


def test_an_oversized_attachment_is_rejected(game_dir: Path) -> None:
    big = orders_for(game_dir, "bob") + "#" * (mail.MAX_ORDERS_BYTES + 1)
    result = fetch(game_dir, [message("bob@example.org", "attached", attach=big)])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert "at most 64 KiB" in result.incoming[0].reasons[0]


def test_two_different_attached_order_files_are_refused_naming_both(game_dir: Path) -> None:
    one = orders_for(game_dir, "bob", owned(game_dir, "bob", 1))
    msg = message("bob@example.org", "both", attach=one, filename="mine.toml")
    msg.add_attachment(b"x = 1", maintype="text", subtype="plain", filename="other.toml")
    result = fetch(game_dir, [msg])
    incoming, body = reply_to(game_dir, result, result.incoming[0].message_id)
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "two different sets of orders" in body
    assert "in the attached file mine.toml" in body and "in the attached file other.toml" in body
    assert "Set 1 of the orders" in body and "Set 2 of the orders" in body
    assert not (game_dir / "orders" / "bob.toml").exists()


def test_the_ready_file_attached_beside_other_orders_never_wins(game_dir: Path) -> None:
    mine = owned(game_dir, "bob", 2)
    msg = message("bob@example.org", "both", attach=orders_for(game_dir, "bob", mine))
    msg.add_attachment(
        ready_file(game_dir, "bob").encode(),
        maintype="text",
        subtype="plain",
        filename="bob.orders.toml",
    )
    result = fetch(game_dir, [msg])
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert f'territory = "{mine}"' in (game_dir / "orders" / "bob.toml").read_text()


def test_a_report_attached_to_a_reply_is_not_read_for_orders(game_dir: Path) -> None:
    sent = mail.build_report(read_game(game_dir), 0, "bob", MODERATOR)
    assert sent is not None
    msg = message(
        "bob@example.org", "my orders:\n" + orders_for(game_dir, "bob", owned(game_dir, "bob", 1))
    )
    msg.add_attachment(sent)  # message/rfc822, with the old order file inside
    result = fetch(game_dir, [msg])
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert owned(game_dir, "bob", 1) in (game_dir / "orders" / "bob.toml").read_text()


def test_orders_from_a_player_without_an_address_are_rejected(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    processor.new_game(
        directory, [("alice", ""), ("bob", "bob@example.org")], Options(), seed=SEED, name="g"
    )
    result = fetch(directory, [message("alice@example.org", orders_for(directory, "alice"))])
    assert result.incoming[0].verdict is mail.Verdict.REJECTED
    assert result.incoming[0].reply is None and result.note is not None


def test_orders_from_eml_files(game_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "alice.eml"
    path.write_bytes(message("alice@example.org", orders_for(game_dir, "alice")).as_bytes())
    result = mail.fetch_orders(game_dir, mail.Sources(files=(path,)), MODERATOR, NOW)
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert (game_dir / "orders" / "alice.toml").read_text() == orders_for(game_dir, "alice")


def test_an_interrupted_fetch_can_be_run_again(
    game_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = [message("alice@example.org", orders_for(game_dir, "alice"), mid="<i@t>")]
    real_commit = MailState.commit

    def crash(self: MailState) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(MailState, "commit", crash)
    with pytest.raises(KeyboardInterrupt):
        fetch(game_dir, messages)
    monkeypatch.setattr(MailState, "commit", real_commit)
    result = fetch(game_dir, messages)
    assert result.incoming[0].verdict is mail.Verdict.ACCEPTED
    assert not (game_dir / "orders" / "replaced").exists()
    assert len(outbox(game_dir)) == 1


def test_a_missing_mailbox_is_a_clean_error(game_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(PbemError, match="cannot read the mbox"):
        mail.fetch_orders(game_dir, mail.Sources(mbox=tmp_path / "nope"))
    with pytest.raises(PbemError, match="give a mailbox"):
        mail.fetch_orders(game_dir, mail.Sources())


def test_fetch_on_the_command_line(
    game_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBEM_FROM", "Risk moderator <risk@example.org>")
    box = into_maildir(
        tmp_path / "Maildir",
        [
            message("alice@example.org", orders_for(game_dir, "alice"), mid="<x@t>"),
            message("eve@example.org", "hi", mid="<y@t>"),
        ],
    )
    out = run("mail", "fetch", game_dir, "--maildir", box, "--now", NOW.isoformat())
    assert "accepted: <x@t> from alice@example.org (alice)" in out
    assert "rejected: <y@t> from eve@example.org" in out
    assert "2 messages read: 1 accepted, 1 rejected" in out
    assert {m["From"] for m in outbox(game_dir).values()} == {"Risk moderator <risk@example.org>"}
    assert "0 accepted" in run(
        "mail", "fetch", game_dir, "--maildir", box, "--now", NOW.isoformat()
    )


# --- reports out -------------------------------------------------------------------------------


def check_report(directory: Path, msg: EmailMessage, player: str, resolution: int = 0) -> None:
    """The message holds exactly the report files written for the player."""
    folder = report_dir(directory, resolution)
    text = msg.get_body(preferencelist=("plain",))
    page = msg.get_body(preferencelist=("html",))
    assert text is not None and page is not None
    assert text.get_content().replace("\r\n", "\n") == (folder / f"{player}.txt").read_text()
    html_file = folder / f"{player}.html"
    if html_file.exists():
        assert page.get_content().replace("\r\n", "\n") == html_file.read_text()
    attachments = {p.get_filename(): p for p in msg.iter_attachments()}
    view = attachments[f"{player}.view.json"].get_content()
    assert view == (folder / f"{player}.view.json").read_bytes()
    if player not in json.loads(view)["awaiting"]:  # only the next player is asked for orders
        assert set(attachments) == {f"{player}.view.json"}
        return
    assert set(attachments) == {f"{player}.orders.toml", f"{player}.view.json"}
    orders = attachments[f"{player}.orders.toml"].get_content().replace("\r\n", "\n")
    orders_file = folder / f"{player}.orders.toml"
    if orders_file.exists():
        assert orders == orders_file.read_text()
    else:
        assert orders == orders_for(directory, player)
    assert msg["To"] == f"{player}@example.org"
    assert msg[mail.LOOP_HEADER] == GAME
    assert msg["Message-ID"].startswith(f"<pbem.{GAME}.r{resolution:04d}.{player}@")


def test_without_a_server_reports_go_to_the_outbox(game_dir: Path) -> None:
    result = mail.send_mail(game_dir, MODERATOR)
    assert result.ok and sorted(result.built) == FILES
    box = outbox(game_dir)
    assert set(box) == set(result.built)
    for player in ("alice", "bob", "carol"):
        msg = box[f"r0000-deal-{player}.eml"]
        check_report(game_dir, msg, player)
        assert msg["Subject"] == f"[{GAME}] turn 0: your move"
        assert msg["From"] == MODERATOR and msg["Reply-To"] == MODERATOR
        assert msg["Bcc"] is None
    before = snapshot(game_dir)
    assert mail.send_mail(game_dir, MODERATOR).built == []
    assert snapshot(game_dir) == before


def test_missing_report_files_are_made_up_for(game_dir: Path) -> None:
    """Reports written before the HTML page and the order file existed are still mailed."""
    folder = report_dir(game_dir, 0)
    for name in ("alice.html", "alice.orders.toml", "alice.view.json"):
        (folder / name).unlink(missing_ok=True)
    msg = mail.build_report(read_game(game_dir), 0, "alice", MODERATOR)
    assert msg is not None
    page = msg.get_body(preferencelist=("html",))
    assert page is not None and page.get_content().startswith("<!doctype html>")
    assert "<pre>" in page.get_content()
    attachments = {p.get_filename(): p.get_content() for p in msg.iter_attachments()}
    assert attachments == {"alice.orders.toml": ready_file(game_dir, "alice")}
    assert msg["Subject"] == f"[{GAME}] report after the deal"
    (folder / "alice.txt").unlink()
    assert mail.build_report(read_game(game_dir), 0, "alice", MODERATOR) is None
    assert "r0000-deal-alice.eml" not in mail.send_mail(game_dir).built


def test_a_dry_run_changes_nothing(game_dir: Path) -> None:
    before = snapshot(game_dir)
    out = run("mail", "send", game_dir, "--dry-run", "--smtp", "127.0.0.1:1")
    assert "would write outbox/r0000-deal-alice.eml" in out
    assert snapshot(game_dir) == before


def test_subjects_say_what_the_report_is() -> None:
    view = {
        "phase": "play",
        "turn": 13,
        "awaiting": ["alice"],
        "players": [{"name": "alice", "alive": True}, {"name": "bob", "alive": False}],
    }
    assert mail.report_subject(view, "alice", "turn 13") == "turn 13: your move"
    assert mail.report_subject(view, "bob", "turn 13") == "report: you are out of the game"
    assert mail.report_subject({**view, "awaiting": ["carol"]}, "alice", "turn 13") == (
        "turn 13: carol's move"
    )
    assert mail.report_subject({**view, "phase": "over", "winner": "alice"}, "bob", "turn 19") == (
        "game over: alice won"
    )


def test_reports_over_smtp_parse_back_into_the_files(game_dir: Path, server: Server) -> None:
    result = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert result.ok and result.pending == []
    assert len(result.delivered) == 3
    received = server.recorder.received
    assert sorted(rcpt[0] for _, rcpt, _ in received) == [
        f"{p}@example.org" for p in ("alice", "bob", "carol")
    ]
    assert {sender for sender, _, _ in received} == {MODERATOR}
    for msg in server.recorder.messages():
        check_report(game_dir, msg, msg["To"].split("@")[0])
    assert sorted(p.name for p in (game_dir / "outbox" / "sent").iterdir()) == FILES
    assert mail.send_mail(game_dir, MODERATOR, server.smtp()).delivered == []
    assert len(server.recorder.received) == 3


def test_the_moderator_gets_a_copy_only_when_asked(
    new_game: Path, tmp_path: Path, server: Server
) -> None:
    players = [f"{p}@example.org" for p in ("alice", "bob", "carol")]
    runs = [(), ("--bcc-moderator",), ("--bcc-moderator", "archive@example.org")]
    for n, extra in enumerate(runs):
        directory = shutil.copytree(new_game, tmp_path / str(n))
        server.recorder.received.clear()
        run("mail", "send", directory, "--smtp", server.spec, "--from", MODERATOR, *extra)
        copies = [[], [MODERATOR], ["archive@example.org"]][n]
        assert [rcpt for _, rcpt, _ in server.recorder.received] == [[p, *copies] for p in players]
        assert all(b"Bcc" not in content for _, _, content in server.recorder.received)


def test_with_the_server_down_send_fails_cleanly_then_delivers_once(
    game_dir: Path, server: Server
) -> None:
    server.stop()
    out = run("mail", "send", game_dir, "--smtp", server.spec, code=1)
    assert "cannot connect to 127.0.0.1" in out and "3 messages wait in outbox/" in out
    server.start()
    out = run("mail", "send", game_dir, "--smtp", server.spec)
    assert out.count("sent r0000-deal-") == 3
    run("mail", "send", game_dir, "--smtp", server.spec)
    assert sorted(m["To"] for m in server.recorder.messages()) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]


def test_a_connection_lost_half_way_sends_the_rest_later(game_dir: Path, server: Server) -> None:
    server.recorder.drop_after = 1
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert not first.ok and len(first.delivered) == 1 and len(first.pending) == 2
    assert any("421" in line for line in first.failed)
    second = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert second.ok and len(second.delivered) == 2 and second.pending == []
    assert sorted(m["To"] for m in server.recorder.messages()) == [
        "alice@example.org",
        "bob@example.org",
        "carol@example.org",
    ]


def test_an_address_refused_for_now_is_retried_alone(game_dir: Path, server: Server) -> None:
    busy = "450 4.2.1 mailbox busy"
    server.recorder.refuse = {"bob@example.org": busy, MODERATOR: busy}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp(), bcc=MODERATOR)
    assert not first.ok
    assert f"r0000-deal-bob.eml: bob@example.org refused for now: {busy}; it waits" in first.failed
    assert sorted({line.split(":")[0] for line in first.failed}) == FILES
    assert first.pending == FILES
    assert [rcpt for _, rcpt, _ in server.recorder.received] == [
        ["alice@example.org"],
        ["carol@example.org"],
    ]
    server.recorder.refuse = {}
    # The Bcc is set when a message is sent, from the settings then in force: still a copy.
    second = mail.send_mail(game_dir, MODERATOR, server.smtp(), bcc=MODERATOR)
    assert second.ok and second.pending == []
    delivered = sorted(a for _, rcpt, _ in server.recorder.received for a in rcpt)
    assert delivered == sorted(
        [f"{p}@example.org" for p in ("alice", "bob", "carol")] + [MODERATOR] * 3
    )


def make_certificate(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[Server, Path, list[tuple[str, str]]]]:
    cert, key = make_certificate(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    logins: list[tuple[str, str]] = []

    def authenticate(
        server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        logins.append((data.login.decode(), data.password.decode()))
        return AuthResult(success=data.password == b"hunter2", handled=False)

    running = Server(
        Recorder(),
        options={
            "tls_context": context,
            "require_starttls": True,
            "authenticator": authenticate,
            "auth_required": True,
        },
    )
    running.start()
    yield running, cert, logins
    running.stop()


def test_starttls_and_a_password_from_the_environment(
    game_dir: Path,
    tls_server: tuple[Server, Path, list[tuple[str, str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, cert, logins = tls_server
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    untrusted = cert.with_name("none.pem")
    untrusted.write_text("")  # the server's certificate is not trusted: no password, no mail
    monkeypatch.setenv("SSL_CERT_FILE", str(untrusted))
    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "hunter2")
    args = ("mail", "send", game_dir, "--smtp", server.spec, "--starttls", "--user", "mod")
    out = run(*args, code=1)
    assert "certificate verify failed" in out and "3 messages wait" in out
    assert logins == [] and server.recorder.received == []
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    run(*args)
    assert logins == [("mod", "hunter2")]
    assert len(server.recorder.received) == 3


def test_a_password_is_asked_for_never_taken_as_an_argument(
    game_dir: Path,
    tls_server: tuple[Server, Path, list[tuple[str, str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server, cert, logins = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    monkeypatch.delenv("PBEM_SMTP_PASSWORD", raising=False)
    run("mail", "send", game_dir, "--smtp", server.spec, "--password", "x", code=2)
    login = ["--smtp", server.spec, "--starttls", "--user", "mod"]
    out = run("mail", "send", game_dir, *login, input="", code=1)
    assert f"no SMTP password for mod at {server.spec}: set PBEM_SMTP_PASSWORD" in out
    out = run(
        "mail",
        "send",
        game_dir,
        "--smtp",
        server.spec,
        "--starttls",
        "--user",
        "mod",
        input="wrong\n",
        code=1,
    )
    assert "535" in out and "3 messages wait" in out
    run(
        "mail",
        "send",
        game_dir,
        "--smtp",
        server.spec,
        "--starttls",
        "--user",
        "mod",
        input="hunter2\n",
    )
    assert logins[-1] == ("mod", "hunter2") and {pw for _, pw in logins[:-1]} == {"wrong"}
    assert len(server.recorder.received) == 3
    assert "hunter2" not in (game_dir / "game.toml").read_text()
    assert all(b"hunter2" not in p.read_bytes() for p in (game_dir / "mail").iterdir())


def test_without_starttls_a_server_that_requires_it_refuses(
    game_dir: Path, tls_server: tuple[Server, Path, list[tuple[str, str]]]
) -> None:
    server, _, _ = tls_server
    out = run("mail", "send", game_dir, "--smtp", server.spec, code=1)
    assert "failed:" in out and "3 messages wait" in out


def test_a_bad_server_spec_is_a_clean_error(game_dir: Path) -> None:
    assert "must be HOST:PORT" in run("mail", "send", game_dir, "--smtp", "host:port", code=1)


def test_the_mail_commands_check_their_arguments(game_dir: Path, tmp_path: Path) -> None:
    afile = tmp_path / "a-file"
    afile.write_text("not a folder\n")
    for args in (["send", afile], ["fetch", afile, "--maildir", tmp_path]):
        assert "is a file" in run("mail", *args, code=2)
    for option in ("--starttls", "--ssl", "--user mod"):
        out = run("mail", "send", game_dir, *option.split(), code=2)
        assert "--starttls, --ssl and --user go with --smtp" in out
    for args, message in (
        (["--maildir", afile], "is a file"),
        (["--maildir", tmp_path / "nowhere"], "does not exist"),
        (["--mbox", tmp_path], "is a directory"),
        ([tmp_path / "missing.eml"], "does not exist"),
    ):
        assert message in run("mail", "fetch", game_dir, *args, code=2)
    assert not (game_dir / "outbox").exists() or not list((game_dir / "outbox").iterdir())


def test_fetch_reads_the_message_files_given(game_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "alice.eml"
    path.write_bytes(
        message("alice@example.org", orders_for(game_dir, "alice"), mid="<e@t>").as_bytes()
    )
    out = run("mail", "fetch", game_dir, path, "--from", MODERATOR, "--now", NOW.isoformat())
    assert "accepted: <e@t> from alice@example.org (alice)" in out
    assert (game_dir / "orders" / "alice.toml").exists()


def test_a_password_is_asked_once_per_server_and_login(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    import click

    from pbem.cli.mail import asker

    def never(*args: object, **kwargs: object) -> str:
        raise AssertionError("no prompt without a terminal")

    monkeypatch.setattr(click, "prompt", never)
    monkeypatch.setattr(sys, "stdin", io.StringIO("first\r\nsecond\n\n"))
    ask = asker("SMTP")
    assert ask("mail.example.org:587", "mod") == "first"
    assert ask("mail.example.org:587", "mod") == "first"
    assert ask("mail.example.org:587", "other") == "second"
    with pytest.raises(PbemError, match="no SMTP password for third at h: set PBEM_SMTP_PASSWORD"):
        ask("h", "third")

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    asked: list[str] = []

    def prompt(text: str, hide_input: bool) -> str:
        asked.append(text)
        assert hide_input
        return "typed"

    monkeypatch.setattr(sys, "stdin", Terminal("not read\n"))
    monkeypatch.setattr(click, "prompt", prompt)
    ask = asker("IMAP")
    assert ask("imap.example.org", "games") == "typed"
    assert ask("imap.example.org", "games") == "typed"
    assert asked == ["IMAP password for games at imap.example.org"]

    def aborted(text: str, hide_input: bool) -> str:
        raise click.Abort

    monkeypatch.setattr(click, "prompt", aborted)
    with pytest.raises(PbemError, match="no IMAP password for games at x: set PBEM_IMAP_PASSWORD"):
        asker("IMAP")("x", "games")


def test_send_attaches_the_kit_and_resend_takes_several_players(game_dir: Path) -> None:
    run("mail", "send", game_dir, "--kit", "--from", MODERATOR)
    for msg in outbox(game_dir).values():
        assert "pbem-player.pyz" in {p.get_filename() for p in msg.iter_attachments()}
    out = run(
        "mail", "resend", game_dir, "--player", "alice", "--player", "bob", "--from", MODERATOR
    )
    names = [line.split()[1].rstrip(":") for line in out.splitlines()]
    assert len(names) == 2 and all(n.startswith("resend-") for n in names), out
    assert {outbox(game_dir)[n]["To"] for n in names} == {"alice@example.org", "bob@example.org"}


# --- the whole loop ----------------------------------------------------------------------------


def test_a_game_played_by_email(game_dir: Path, server: Server, tmp_path: Path) -> None:
    """New game, reports mailed, replies built from them fetched from a Maildir, resolved, the
    answers and the next reports mailed."""
    assert mail.send_mail(game_dir, MODERATOR, server.smtp()).ok
    reports = server.recorder.messages()
    assert len(reports) == 3
    replies = []
    for i, msg in enumerate(reports):
        attached = {p.get_filename(): p for p in msg.iter_attachments()}
        player = msg["To"].split("@")[0]
        orders = attached[f"{player}.orders.toml"].get_content()
        reply = message(
            msg["To"],
            "Here are my orders.",
            minutes=i,
            mid=f"<loop{i}@t>",
            subject=f"Re: {msg['Subject']}",
            attach=orders,
            filename=f"{player}.orders.toml",
            headers={"In-Reply-To": msg["Message-ID"]},
        )
        replies.append(reply)
    box = into_maildir(tmp_path / "Maildir", replies)
    fetched = mail.fetch_orders(game_dir, mail.Sources(maildir=box), MODERATOR, NOW)
    assert fetched.count(mail.Verdict.ACCEPTED) == 3

    outcome = processor.resolve_game(game_dir)
    assert outcome.resolution == 0 + 1 and len(outcome.used) == 3

    server.recorder.received.clear()
    sent = mail.send_mail(game_dir, MODERATOR, server.smtp())
    after_setup = [f.replace("r0000-deal", "r0001-setup-turn") for f in FILES]
    assert sent.ok and sorted(sent.built) == after_setup
    received = server.recorder.messages()
    assert len(received) == 6  # three answers to the orders, three reports
    answers = [m for m in received if m["In-Reply-To"]]
    assert sorted(m["To"] for m in answers) == [
        f"{p}@example.org" for p in ("alice", "bob", "carol")
    ]
    assert all("accepted" in m["Subject"] for m in answers)
    state = read_game(game_dir).state
    first = state.current_player.name
    for msg in received:
        if msg["In-Reply-To"] is None:
            player = msg["To"].split("@")[0]
            check_report(game_dir, msg, player, 1)
            mine = "your move" if player == first else f"{first}'s move"
            assert msg["Subject"] == f"[{GAME}] turn {state.turn}: {mine}"

    # The next turn's orders, from the player whose move it is, go round once more.
    report_msg = next(
        m for m in received if m["To"] == f"{first}@example.org" and m["In-Reply-To"] is None
    )
    orders = next(
        p for p in report_msg.iter_attachments() if (p.get_filename() or "").endswith(".toml")
    ).get_content()
    box2 = into_maildir(  # the ready file as it came, attached to a new message: chosen
        tmp_path / "Maildir2",
        [message(f"{first}@example.org", "as it is", attach=orders, minutes=100, mid="<turn1@t>")],
    )
    assert (
        mail.fetch_orders(game_dir, mail.Sources(maildir=box2), MODERATOR, NOW).count(
            mail.Verdict.ACCEPTED
        )
        == 1
    )
    assert processor.resolve_game(game_dir).resolution == 2
    server.recorder.received.clear()
    assert mail.send_mail(game_dir, MODERATOR, server.smtp()).ok
    assert len(server.recorder.received) == 4
