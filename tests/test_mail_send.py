"""Mail out against a hostile or failing SMTP server (aiosmtpd on loopback): a message refused for
good goes to outbox/failed/ with the reason and the rest are sent; one refused for now waits; a
run killed at any moment loses nothing and repeats at most the message in flight."""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from test_mail import (
    MODERATOR,
    PLAYERS,
    SEED,
    Recorder,
    Server,
    make_template,
    parse,
    run,
    running_server,
)

from pbem import mail
from pbem.core.state import Options
from pbem.game import processor

ROOT = Path(__file__).resolve().parent.parent
JORG = "jörg@example.org"
"""An address outside ASCII: only a server offering SMTPUTF8 takes it."""


def folder(directory: Path, name: str) -> list[str]:
    path = directory / "outbox" / name
    return sorted(p.name for p in path.iterdir()) if path.is_dir() else []


def received_to(srv: Server) -> list[str]:
    return sorted(a for _, rcpt, _ in srv.recorder.received for a in rcpt)


def plain(directory: Path, name: str, to: str, mid: str, sender: str = MODERATOR) -> None:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = "a note"
    msg["Message-ID"] = mid
    msg.set_content("hello\n")
    (directory / "outbox").mkdir(exist_ok=True)
    (directory / "outbox" / name).write_bytes(msg.as_bytes())


@pytest.fixture
def four(tmp_path: Path) -> Path:
    """A game whose fourth player has an address outside ASCII."""
    directory = tmp_path / "four"
    players = [(p, f"{p}@example.org") for p in ("alice", "bob", "carol")] + [("jorg", JORG)]
    processor.new_game(directory, players, Options(), seed=SEED, name="four")
    return directory


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game_dir(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / template.name))


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


@pytest.fixture
def ascii_server() -> Iterator[Server]:
    """A server that does not offer SMTPUTF8 (aiosmtpd's Controller offers it by default)."""
    yield from running_server(enable_SMTPUTF8=False)


def test_a_refusal_at_data_and_an_address_without_smtputf8_fail_alone(
    four: Path, ascii_server: Server
) -> None:
    server = ascii_server
    server.recorder.refuse_data = {"bob@example.org": "554 5.7.1 message refused"}
    first = mail.send_mail(four, MODERATOR, server.smtp())
    assert not first.ok
    assert received_to(server) == ["alice@example.org", "carol@example.org"]
    assert folder(four, "failed") == [
        "r0000-deal-bob.eml",
        "r0000-deal-bob.eml.reason.txt",
        "r0000-deal-jorg.eml",
        "r0000-deal-jorg.eml.reason.txt",
    ]
    assert folder(four, "sent") == ["r0000-deal-alice.eml", "r0000-deal-carol.eml"]
    failed = four / "outbox" / "failed"
    assert "554 5.7.1 message refused" in (failed / "r0000-deal-bob.eml.reason.txt").read_text()
    assert "SMTPUTF8" in (failed / "r0000-deal-jorg.eml.reason.txt").read_text()
    assert any(
        line.startswith("r0000-deal-bob.eml: the server refused it: 554") for line in first.failed
    )
    assert first.pending == []
    # Nothing is sent twice, and the failed ones are not retried by themselves.
    again = mail.send_mail(four, MODERATOR, server.smtp())
    assert again.ok and again.delivered == [] and len(server.recorder.received) == 2


def test_an_address_outside_ascii_goes_to_a_server_with_smtputf8(four: Path) -> None:
    for srv in running_server(enable_SMTPUTF8=True):
        result = mail.send_mail(four, MODERATOR, srv.smtp())
    assert result.ok and JORG in received_to(srv)
    got = next(parse(c) for _, rcpt, c in srv.recorder.received if rcpt == [JORG])
    assert got["To"] == JORG


def test_a_failed_message_put_back_is_tried_again(four: Path, server: Server) -> None:
    server.recorder.refuse_data = {"bob@example.org": "554 5.7.1 message refused"}
    mail.send_mail(four, MODERATOR, server.smtp())
    os.replace(four / "outbox/failed/r0000-deal-bob.eml", four / "outbox/r0000-deal-bob.eml")
    server.recorder.refuse_data = {}
    assert mail.send_mail(four, MODERATOR, server.smtp()).delivered == [
        "r0000-deal-bob.eml to bob@example.org"
    ]
    assert "r0000-deal-bob.eml" in folder(four, "sent")


def test_a_permanently_refused_copy_does_not_hold_back_the_player(
    game_dir: Path,
    server: Server,
) -> None:
    server.recorder.refuse = {MODERATOR: "550 5.1.1 no such mailbox"}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp(), bcc=MODERATOR)
    assert received_to(server) == [f"{p}@example.org" for p in ("alice", "bob", "carol")]
    assert len(first.failed) == 3 and first.pending == []
    assert all(f"{MODERATOR} refused: 550 5.1.1" in line for line in first.failed)
    assert mail.send_mail(game_dir, MODERATOR, server.smtp()).delivered == []
    assert len(server.recorder.received) == 3


def test_a_refusal_for_now_at_data_waits_and_the_rest_go(
    game_dir: Path,
    server: Server,
) -> None:
    server.recorder.refuse_data = {"bob@example.org": "451 4.3.0 try again later"}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert not first.ok and first.pending == ["r0000-deal-bob.eml"]
    assert (
        "r0000-deal-bob.eml: bob@example.org refused for now: 451 4.3.0 try again later; it waits"
        in (first.failed)
    )
    assert folder(game_dir, "failed") == []
    server.recorder.refuse_data = {}
    second = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert second.ok and second.delivered == ["r0000-deal-bob.eml to bob@example.org"]
    assert received_to(server) == [f"{p}@example.org" for p in ("alice", "bob", "carol")]


def test_a_refused_sender_fails_that_message_only(
    game_dir: Path,
    server: Server,
) -> None:
    plain(
        game_dir, "hand-made.eml", "alice@example.org", "<h@t>", sender="someone@elsewhere.example"
    )

    async def mail_hook(srv: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if address == "someone@elsewhere.example":
            return "553 5.7.1 sender not allowed"
        envelope.mail_from = address
        return "250 OK"

    server.recorder.handle_MAIL = mail_hook  # type: ignore[attr-defined]
    result = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert folder(game_dir, "failed") == ["hand-made.eml", "hand-made.eml.reason.txt"]
    assert any("553 5.7.1 sender not allowed" in line for line in result.failed)
    assert len(folder(game_dir, "sent")) == 3


def test_a_file_that_is_not_a_message_goes_to_failed_never_to_sent(
    game_dir: Path,
    server: Server,
) -> None:
    outbox = game_dir / "outbox"
    outbox.mkdir()
    (outbox / "garbage.eml").write_bytes(os.urandom(300).replace(b":", b"-"))
    (outbox / "notes.txt").write_text("To: alice@example.org\n\nnot to be sent\n")
    (outbox / ".r0000-deal-alice.eml.x.tmp").write_text("a half-written file")
    result = run("mail", "send", game_dir, "--smtp", server.spec, code=1)
    assert "garbage.eml: not a message" in result and "notes.txt: not a message" in result
    assert folder(game_dir, "failed") == [
        "garbage.eml",
        "garbage.eml.reason.txt",
        "notes.txt",
        "notes.txt.reason.txt",
    ]
    assert len(server.recorder.received) == 3 and "garbage.eml" not in folder(game_dir, "sent")
    assert (outbox / ".r0000-deal-alice.eml.x.tmp").exists()


def test_a_report_renamed_out_of_eml_goes_to_failed_as_it_was_not_restamped(
    game_dir: Path, server: Server
) -> None:
    mail.send_mail(game_dir, MODERATOR)  # built, waiting
    renamed = game_dir / "outbox" / "r0000-deal-alice.eml.bak"
    os.replace(game_dir / "outbox" / "r0000-deal-alice.eml", renamed)
    before = renamed.read_bytes()
    result = mail.send_mail(game_dir, "club@club.example", server.smtp())  # another From now
    assert result.failed[0].startswith("r0000-deal-alice.eml.bak: not a message")
    assert (game_dir / "outbox" / "failed" / renamed.name).read_bytes() == before
    assert {str(m["From"]) for m in server.recorder.messages()} == {"club@club.example"}


@pytest.mark.parametrize("through", ["deliver", "send"])
def test_a_waiting_message_that_cannot_be_read_goes_to_failed_and_the_rest_are_sent(
    game_dir: Path, server: Server, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    from pbem.mail import send

    mail.send_mail(game_dir, MODERATOR)  # built, waiting
    unreadable = game_dir / "outbox" / "r0000-deal-alice.eml"
    read_bytes = Path.read_bytes

    def failing(path: Path) -> bytes:
        if path == unreadable:
            raise PermissionError(13, "Permission denied")
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", failing)
    if through == "send":  # the whole command: the addresses stamped first, then delivered
        result = mail.send_mail(game_dir, MODERATOR, server.smtp())
    else:
        result = mail.SendResult()
        send.deliver_waiting(game_dir, server.smtp(), result)
    assert result.failed == [
        "r0000-deal-alice.eml: cannot be read: Permission denied; moved to outbox/failed/ "
        "(put it back in outbox/ to try again)"
    ]
    assert folder(game_dir, "failed") == ["r0000-deal-alice.eml", "r0000-deal-alice.eml.reason.txt"]
    assert received_to(server) == ["bob@example.org", "carol@example.org"]


def test_a_421_at_data_stops_the_run_and_the_rest_wait(
    game_dir: Path,
    server: Server,
) -> None:
    server.recorder.drop_after = 0
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert first.delivered == [] and len(first.pending) == 3 and folder(game_dir, "failed") == []
    assert "stopped taking mail (421" in first.failed[0]


class Dropping(Recorder):
    """A server whose connection drops in the middle of DATA for bob's message: the message
    was sent but no reply comes (a server restarting, a network gone)."""

    async def handle_DATA(  # noqa: N802
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        if "bob@example.org" in envelope.rcpt_tos:
            server.transport.close()
            return "250 OK"  # never reaches the client: the connection is gone
        return await super().handle_DATA(server, session, envelope)


def test_a_connection_dropped_during_data_leaves_the_message_waiting(game_dir: Path) -> None:
    for srv in running_server(Dropping()):
        first = mail.send_mail(game_dir, MODERATOR, srv.smtp())
        assert not first.ok
        assert folder(game_dir, "sent") == ["r0000-deal-alice.eml"]
        assert folder(game_dir, "failed") == []
        assert first.pending == ["r0000-deal-bob.eml", "r0000-deal-carol.eml"]
        assert first.failed[0].startswith("r0000-deal-bob.eml: not sent, ")
        assert "stopped taking mail" in first.failed[0]
    for srv in running_server():
        second = mail.send_mail(game_dir, MODERATOR, srv.smtp())
        assert second.ok and second.pending == []
        assert received_to(srv) == ["bob@example.org", "carol@example.org"]
    assert folder(game_dir, "failed") == []


# --- killed at random moments --------------------------------------------------------------------


class Counting(Recorder):
    """Records, for each message, the run that was going when the server began to take it."""

    run: int = 0
    runs: list[tuple[int, str]]

    def __init__(self, delay: float) -> None:
        super().__init__(delay=delay)
        self.runs = []

    async def handle_DATA(  # noqa: N802
        self, server: Any, session: Any, envelope: Any
    ) -> str:
        current = self.run
        answer = await super().handle_DATA(server, session, envelope)
        self.runs.append((current, parse(envelope.content)["Message-ID"]))
        return answer


@pytest.fixture
def slow_server() -> Iterator[Server]:
    yield from running_server(Counting(delay=0.01))


@dataclass
class Child:
    """`pbem mail send` in a forked process, to be killed with SIGKILL (a fork, not a new
    interpreter, so that 40 runs take seconds; the child runs only pbem's send, none of the
    test server's thread)."""

    pid: int
    status: int | None = None

    @classmethod
    def send(cls, directory: Path, spec: str) -> Child:
        with warnings.catch_warnings():  # Python 3.12+ warns of forking with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            code = 1
            try:
                mail.send_mail(directory, MODERATOR, mail.smtp_server(spec))
                code = 0
            finally:
                os._exit(code)
        return cls(pid)

    def alive(self) -> bool:
        if self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
        return self.status is None

    def kill(self) -> bool:
        """Kill it if it still runs (True), and wait for its end."""
        running = self.alive()
        if running:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        return running


def test_killing_send_at_random_moments_loses_nothing(
    game_dir: Path,
    slow_server: Server,
) -> None:
    """40 `kill -9`s of `mail send` at random moments: every message arrives, and each
    run after a kill repeats at most one message (the one in flight)."""
    recorder = slow_server.recorder
    assert isinstance(recorder, Counting)
    rng = random.Random(20270301)
    made: list[str] = []

    def top_up() -> None:
        while len(mail.send_mail(game_dir, MODERATOR).pending) < 25:
            n = len(made)
            made.append(f"<m{n}@t>")
            plain(game_dir, f"m{n:03d}.eml", f"p{n % 5}@example.org", made[-1])

    killed: list[int] = []
    attempt = 0
    while len(killed) < 40 and attempt < 80:
        attempt += 1
        top_up()
        recorder.run = attempt
        child = Child.send(game_dir, slow_server.spec)
        # Kill at a random moment: while it starts, or after it has sent 1 to 3 messages,
        # a few milliseconds into the next one (mid-DATA, or between delivery and record).
        wanted = rng.choice([0, 1, 1, 2, 3])
        if wanted == 0:
            time.sleep(rng.uniform(0.0, 0.05))
        give_up = time.monotonic() + 10
        while wanted and child.alive() and time.monotonic() < give_up:
            if sum(1 for r, _ in recorder.runs if r == attempt) >= wanted:
                time.sleep(rng.uniform(0.0, 0.025))
                break
            time.sleep(0.001)
        if child.kill():
            killed.append(attempt)
    assert len(killed) == 40
    recorder.run = attempt + 1
    out = run("mail", "send", game_dir, "--smtp", slow_server.spec, "--from", MODERATOR)
    assert "messages wait" not in out

    reports = {f"<pbem.spring-2027.r0000.{p}@example.org>" for p in ("alice", "bob", "carol")}
    assert set(made) | reports <= {mid for _, mid in recorder.runs}  # nothing lost
    mid_send = [r for r in killed if any(run == r for run, _ in recorder.runs)]
    assert len(mid_send) >= 20  # most kills hit a run that was sending
    seen: set[str] = set()
    for r in range(1, attempt + 2):
        mids = [mid for run, mid in recorder.runs if run == r]
        assert len([m for m in mids if m in seen]) <= (1 if r - 1 in killed else 0), r
        seen.update(mids)
    assert folder(game_dir, "failed") == []
    assert sorted(p.name for p in (game_dir / "outbox").iterdir()) == ["sent"]


def test_mail_send_takes_now_for_the_date_and_builds_the_same_bytes_on_any_day(
    game_dir: Path, tmp_path: Path
) -> None:
    twin = Path(shutil.copytree(game_dir, tmp_path / "twin"))
    for directory in (game_dir, twin):
        run("mail", "send", directory, "--now", "2026-12-03T20:00+01:00")
    built = sorted((game_dir / "outbox").glob("*.eml"))
    assert built
    for path in built:
        message = parse(path.read_bytes())
        assert message["Date"] == "Thu, 03 Dec 2026 20:00:00 +0100"
        assert path.read_bytes() == (twin / "outbox" / path.name).read_bytes()
    out = run("mail", "send", game_dir, "--now", "yesterday", code=1)
    assert "--now 'yesterday' is not an ISO 8601 time" in out
    assert sorted((game_dir / "outbox").glob("*.eml")) == built


# --- what is built, and how the session ends ----------------------------------------------------


def played_twice(directory: Path) -> Path:
    """The game with its setup and first turn resolved: reports of resolutions 0, 1 and 2."""
    from conftest import write_skeletons

    for _ in range(2):
        write_skeletons(directory)
        processor.resolve_game(directory)
    return directory


def test_the_first_send_of_a_game_under_way_builds_only_its_latest_reports(
    game_dir: Path,
) -> None:
    played_twice(game_dir)
    first = mail.send_mail(game_dir, MODERATOR)
    assert sorted(first.built) == [
        "r0002-turn-1-alice.eml",
        "r0002-turn-1-bob.eml",
        "r0002-turn-1-carol.eml",
    ]
    assert "only the reports after turn 1 (resolution 2, history/0002.toml)" in first.notes[0]
    assert mail.send_mail(game_dir, MODERATOR).built == []
    every = mail.send_mail(game_dir, MODERATOR, every=True)
    assert sorted(every.built) == [
        f"r000{r}-{what}-{p}.eml"
        for r, what in ((0, "deal"), (1, "setup-turn"))
        for p in ("alice", "bob", "carol")
    ]


def test_a_game_one_resolution_past_its_deal_first_mails_only_that_resolutions_reports(
    game_dir: Path,
) -> None:
    from conftest import write_skeletons

    write_skeletons(game_dir)
    processor.resolve_game(game_dir)  # resolutions 0 (the deal) and 1
    first = mail.send_mail(game_dir, MODERATOR)
    assert sorted(first.built) == [f"r0001-setup-turn-{p}.eml" for p in ("alice", "bob", "carol")]
    assert "only the reports after" in first.notes[0]


def test_a_first_send_stopped_after_its_first_report_never_mails_the_earlier_ones(
    game_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pbem.mail import send

    played_twice(game_dir)
    write_eml = send.write_eml
    calls = []

    def disk_full_after_one(directory: Path, name: str, msg: EmailMessage) -> None:
        calls.append(name)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        write_eml(directory, name, msg)

    monkeypatch.setattr(send, "write_eml", disk_full_after_one)
    with pytest.raises(OSError):
        mail.send_mail(game_dir, MODERATOR)
    monkeypatch.setattr(send, "write_eml", write_eml)
    again = mail.send_mail(game_dir, MODERATOR)
    outbox = sorted(p.name for p in (game_dir / "outbox").glob("*.eml"))
    assert outbox == [
        "r0002-turn-1-alice.eml",
        "r0002-turn-1-bob.eml",
        "r0002-turn-1-carol.eml",
    ]
    assert len(again.built) == 2


def test_a_report_carries_the_kit_only_when_asked(game_dir: Path, tmp_path: Path) -> None:
    asked = Path(shutil.copytree(game_dir, tmp_path / "asked"))
    mail.send_mail(game_dir, MODERATOR)
    from pbem.kit import KIT_NAME

    built = parse((game_dir / "outbox" / "r0000-deal-alice.eml").read_bytes())
    assert [p.get_filename() for p in built.iter_attachments()] == [
        "alice.orders.toml",
        "alice.view.json",
    ]
    assert f"Attached: {KIT_NAME}" not in str(built.get_body(("plain",)))
    mail.send_mail(asked, MODERATOR, kit=True)
    for player in ("alice", "bob", "carol"):
        first = parse((asked / "outbox" / f"r0000-deal-{player}.eml").read_bytes())
        assert KIT_NAME in [p.get_filename() for p in first.iter_attachments()]


def test_waiting_messages_take_the_addresses_in_force_when_sent(game_dir: Path) -> None:
    mail.send_mail(game_dir, "old@example.org")
    plain(game_dir, "by-hand.eml", "alice@example.org", "<h@t>", sender="me@example.org")
    by_hand = (game_dir / "outbox" / "by-hand.eml").read_bytes()
    changed = mail.send_mail(
        game_dir, "new@example.org", bcc="copy@example.org", reply_to="answers@example.org"
    )
    assert sorted(changed.pending) == [
        "by-hand.eml",
        "r0000-deal-alice.eml",
        "r0000-deal-bob.eml",
        "r0000-deal-carol.eml",
    ]
    report = parse((game_dir / "outbox" / "r0000-deal-alice.eml").read_bytes())
    assert (report["From"], report["Reply-To"], report["Bcc"]) == (
        "new@example.org",
        "answers@example.org",
        "copy@example.org",
    )
    assert (game_dir / "outbox" / "by-hand.eml").read_bytes() == by_hand
    mail.send_mail(game_dir, "new@example.org")
    report = parse((game_dir / "outbox" / "r0000-deal-alice.eml").read_bytes())
    assert (report["Reply-To"], report["Bcc"]) == ("new@example.org", None)


def test_the_session_ends_with_quit(game_dir: Path, server: Server) -> None:
    quits: list[str] = []

    async def quit_hook(srv: Any, session: Any, envelope: Any) -> str:
        quits.append("QUIT")
        return "221 Bye"

    server.recorder.handle_QUIT = quit_hook  # type: ignore[attr-defined]
    assert mail.send_mail(game_dir, MODERATOR, server.smtp()).ok
    for _ in range(100):  # the server's side of the session ends a moment later
        if quits:
            break
        time.sleep(0.01)
    assert quits == ["QUIT"]


def test_a_refusal_500_at_data_is_for_good(game_dir: Path, server: Server) -> None:
    server.recorder.refuse_data = {"bob@example.org": "500 5.5.2 line too long"}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert [line.split(";")[0] for line in first.failed] == [
        "r0000-deal-bob.eml: the server refused it: 500 5.5.2 line too long"
    ]
    assert folder(game_dir, "failed") == ["r0000-deal-bob.eml", "r0000-deal-bob.eml.reason.txt"]


def test_a_refusal_500_of_an_address_is_for_good(game_dir: Path, server: Server) -> None:
    server.recorder.refuse = {"bob@example.org": "500 5.5.2 syntax error"}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert [line.split(";")[0] for line in first.failed] == [
        "r0000-deal-bob.eml: bob@example.org refused: 500 5.5.2 syntax error"
    ]
    assert folder(game_dir, "failed") == ["r0000-deal-bob.eml", "r0000-deal-bob.eml.reason.txt"]


def test_a_reply_code_beyond_5xx_at_data_is_not_taken_as_for_good(
    game_dir: Path, server: Server
) -> None:
    server.recorder.refuse_data = {"bob@example.org": "600 no such reply"}
    first = mail.send_mail(game_dir, MODERATOR, server.smtp())
    assert first.pending == ["r0000-deal-bob.eml"] and folder(game_dir, "failed") == []
    assert first.failed == [
        "r0000-deal-bob.eml: bob@example.org refused for now: 600 no such reply; it waits"
    ]


def test_a_message_the_server_cannot_take_goes_to_failed(
    game_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import smtplib

    from pbem.mail import smtp as send

    class Unable:
        def sendmail(self, *args: object, **kwargs: object) -> dict[str, tuple[int, bytes]]:
            raise smtplib.SMTPNotSupportedError("SMTPUTF8 not supported by server")

        def quit(self) -> None:
            pass

    monkeypatch.setattr(send, "_connect", lambda server: Unable())
    result = mail.send_mail(game_dir, MODERATOR, mail.SmtpServer("h"))
    assert len(result.failed) == 3
    assert result.failed[0].startswith("r0000-deal-alice.eml: the server cannot take it: SMTPUTF8")
    assert len(folder(game_dir, "failed")) == 6


def test_a_dry_run_lists_what_would_wait_and_a_run_without_server_each_once(
    game_dir: Path,
) -> None:
    names = ["r0000-deal-alice.eml", "r0000-deal-bob.eml", "r0000-deal-carol.eml"]
    dry = mail.send_mail(game_dir, MODERATOR, dry_run=True)
    assert (sorted(dry.built), sorted(dry.pending)) == (names, names)
    assert "3 messages would wait in outbox/: " in dry.lines()[-1]
    assert not (game_dir / "outbox").exists()
    real = mail.send_mail(game_dir, MODERATOR)
    assert (sorted(real.built), sorted(real.pending)) == (names, names)
    assert "3 messages wait in outbox/: " in real.lines()[-1]


# --- delivery by message: a resolution made again, a report resent ------------------------------


def test_after_an_undo_the_corrected_reports_reach_every_player_once(
    game_dir: Path, server: Server
) -> None:
    from conftest import write_skeletons

    from pbem.game import undo
    from pbem.records.clock import parse_instant

    played_twice(game_dir)
    run("mail", "send", game_dir, "--smtp", server.spec, "--all")
    first = {str(m["Message-ID"]) for m in server.recorder.messages()}
    assert any(".r0002." in mid for mid in first)
    server.recorder.received.clear()
    undo.undo_last(game_dir, parse_instant("2027-03-05T12:00Z"), "a mistake in the deal")
    write_skeletons(game_dir)
    processor.resolve_game(game_dir)
    out = run("mail", "send", game_dir, "--smtp", server.spec)
    again = server.recorder.messages()
    assert sorted(str(m["To"]) for m in again) == sorted(address for _, address in PLAYERS)
    assert all(".r0002.a2." in str(m["Message-ID"]) for m in again)
    assert not {str(m["Message-ID"]) for m in again} & first
    assert "r0002-turn-1.a2-alice.eml" in out
    assert "nothing to send" in run("mail", "send", game_dir, "--smtp", server.spec)
    assert len(server.recorder.messages()) == 3  # each once


def test_another_message_under_a_name_already_delivered_is_sent(
    game_dir: Path, server: Server
) -> None:
    plain(game_dir, "note.eml", "alice@example.org", "<one@t>")
    run("mail", "send", game_dir, "--smtp", server.spec)
    plain(game_dir, "note.eml", "alice@example.org", "<two@t>")
    run("mail", "send", game_dir, "--smtp", server.spec)
    ids = [str(m["Message-ID"]) for m in server.recorder.messages() if m["Subject"] == "a note"]
    assert ids == ["<one@t>", "<two@t>"]


def test_a_report_is_resent_as_a_new_message_once(game_dir: Path, server: Server) -> None:
    played_twice(game_dir)
    run("mail", "send", game_dir, "--smtp", server.spec, "--all")
    (report,) = [
        m
        for m in server.recorder.messages()
        if m["To"] == "bob@example.org" and ".r0002." in str(m["Message-ID"])
    ]
    server.recorder.received.clear()
    now = "2027-03-06T09:00+01:00"
    out = run("mail", "resend", game_dir, "--player", "bob", "--now", now)
    assert out.startswith("queued resend-") and "'pbem mail send' delivers it" in out
    assert "nothing to resend" in run("mail", "resend", game_dir, "--player", "bob", "--now", now)
    run("mail", "send", game_dir, "--smtp", server.spec)
    (resent,) = server.recorder.messages()
    assert resent["To"] == "bob@example.org"
    assert str(resent["Subject"]) == str(report["Subject"]).replace("] ", "] resent: ", 1)
    assert resent["Message-ID"] != report["Message-ID"] and ".resent." in resent["Message-ID"]
    assert resent["Date"] == "Sat, 06 Mar 2027 09:00:00 +0100"
    older = run("mail", "resend", game_dir, "--player", "alice", "--turn", "0", "--now", now)
    assert older.startswith("queued resend-")
    (again,) = [parse(p.read_bytes()) for p in (game_dir / "outbox").glob("resend-*")]
    # turn 0 was resolved twice (the deal, the setup turn): the report after its last
    assert ".r0001.resent." in again["Message-ID"] and "turn 1: carol's move" in again["Subject"]
    assert "no player zed in" in run("mail", "resend", game_dir, "--player", "zed", code=1)
    assert "has no report after turn 7" in run("mail", "resend", game_dir, "--turn", "7", code=1)


def test_killing_run_fetch_send_at_random_moments_resolves_and_delivers_once(
    tmp_path: Path, slow_server: Server
) -> None:
    """15 `kill -9`s of `pbem run --fetch --send` at random moments, then the same run again:
    every turn is resolved once with the players' own orders, and every message (answers and
    reports) arrives, each run after a kill repeating at most the one message in flight."""
    from test_mail import into_maildir, message, orders_for

    from pbem.club import batch
    from pbem.records.clock import parse_instant
    from pbem.records.history import history_count, read_history
    from pbem.records.opening import read_game

    recorder = slow_server.recorder
    assert isinstance(recorder, Counting)
    root = tmp_path / "games"
    games = [root / f"g{n}" for n in range(3)]
    for n, d in enumerate(games):
        players = [(f"p{n}{k}", f"p{n}{k}@example.org") for k in range(2)]
        processor.new_game(d, players, Options(), seed=bytes([n + 1] * 32), name=d.name)
    msgs = [
        message(f"{p}@example.org", orders_for(d, p), mid=f"<{p}@t>")
        for d in games
        for p in read_game(d).state.awaiting()
    ]
    box = into_maildir(tmp_path / "Maildir", msgs)
    run("config", root, f"maildir={box}", "smtp_host=127.0.0.1", f"smtp_port={slow_server.port}")
    run("mail", "send", root)  # the setup reports went out when the games began
    recorder.runs.clear()
    now = parse_instant("2027-03-02T12:00Z")
    flags: dict[str, str | None] = {}

    def child() -> Child:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            code = 1
            try:
                batch.run_root(root, now, mail=batch.MailRun(True, True, flags))
                code = 0
            finally:
                os._exit(code)
        return Child(pid)

    rng = random.Random(20270302)
    killed: list[int] = []
    for attempt in range(1, 16):
        recorder.run = attempt
        running = child()
        time.sleep(rng.uniform(0.02, 0.15))  # a little work each time, then the kill
        if running.kill():
            killed.append(attempt)
    recorder.run = 99
    out = run("run", root, "--fetch", "--send", "--now", "2027-03-02T12:00Z")
    assert "failed" not in out.lower().split("result")[-1], out
    for d in games:  # each turn resolved once, with the players' own orders
        assert history_count(d) == 2, d
        assert not any(o.autopilot for o in read_history(d, 1).orders)
    ids = [mid for _, mid in recorder.runs]
    expected = {f"<pbem.{d.name}.r0001.p{d.name[1]}{k}@localhost>" for d in games
                for k in range(2)}  # fmt: skip
    assert expected <= set(ids), sorted(expected - set(ids))  # every report arrived
    answers = [mid for mid in ids if ".reply." in mid]
    assert len(set(answers)) == 6  # one answer to each order message
    seen: set[str] = set()
    order = [*range(1, 16), 99]
    for before, r in zip([0, *order[:-1]], order, strict=True):
        mids = [mid for run_, mid in recorder.runs if run_ == r]
        assert len([m for m in mids if m in seen]) <= (1 if before in killed else 0), r
        seen.update(mids)
    assert len(killed) >= 8  # most runs were killed while at work


def test_an_address_edited_by_hand_into_two_or_a_header_sends_that_report_nowhere(
    game_dir: Path, server: Server
) -> None:
    path = game_dir / "game.toml"
    text = path.read_text()
    text = text.replace('"bob@example.org"', '"bob@example.org, eve@evil.example"')
    text = text.replace('"carol@example.org"', '"carol@example.org\\r\\nBcc: eve@evil.example"')
    path.write_text(text)
    out = run("mail", "send", game_dir, "--smtp", server.spec)
    assert "bob's address is not one address ('bob@example.org, eve@evil.example')" in out
    assert "carol's address is not one address" in out and "player.carol.email=ADDRESS" in out
    assert received_to(server) == ["alice@example.org"]  # alice's report alone; eve gets nothing


def test_answers_go_first_in_the_order_read_then_reports_then_the_rest(tmp_path: Path) -> None:
    """A send takes the outbox in this order, so that a player reads "accepted" before the
    report of the turn their orders were for, and a notice after the report it follows."""
    from pbem.mail.send import waiting
    from pbem.records.mailstate import MailState

    outbox = tmp_path / "outbox"
    outbox.mkdir()
    names = [
        "a-note.eml",
        "deadline-1.eml",
        "r0003-turn-2-alice.eml",
        "r0002-bob.eml",
        "reply-b.eml",
        "reply-a.eml",
        "zz-reply-c.eml",
    ]
    for name in names:
        (outbox / name).write_text("x")
    (outbox / ".hidden.eml").write_text("x")
    (tmp_path / "mail").mkdir()
    with MailState.open(tmp_path) as state:  # read in this order: b, then a
        state.put("seen", "messages", "<1@t>", {"reply": "reply-b.eml"})
        state.put("seen", "messages", "<2@t>", {"reply": "reply-a.eml"})
        state.commit()
    assert [p.name for p in waiting(tmp_path)] == [
        "reply-b.eml",
        "reply-a.eml",
        "r0002-bob.eml",
        "r0003-turn-2-alice.eml",
        "a-note.eml",
        "deadline-1.eml",
        "zz-reply-c.eml",
    ]


NOON = datetime(2027, 3, 1, 12, 0, tzinfo=timezone.utc)


def test_a_resend_says_who_has_no_address_or_no_report_and_resends_the_rest(
    tmp_path: Path,
) -> None:
    """Asked for by name, a player without an address is told to the moderator, and so is a
    player whose report is not there (taken away by hand); the others' reports are queued."""
    from pbem.mail.send import resend_reports
    from pbem.records.history import report_dir

    d = tmp_path / "g"
    processor.new_game(
        d,
        processor.parse_player_list(["alice=alice@example.org", "bob", "carol=c@example.org"]),
        Options(),
        seed=bytes(32),
        name="g",
    )
    (report_dir(d, 0) / "carol.txt").unlink()
    out = resend_reports(d, ["alice", "bob", "carol"], now=NOON)
    assert sorted(out.notes) == [  # (told in the order of the seats, which the deal draws)
        "bob has no address: nothing resent",
        "carol has no report yet: nothing resent",
    ]
    assert len(out.queued) == 1
    [queued] = [p for p in (d / "outbox").glob("resend-*.eml")]
    assert "To: alice@example.org" in queued.read_text()
    every = resend_reports(d, now=NOON)  # nobody named: every player with an address
    assert every.notes == ["carol has no report yet: nothing resent"]
