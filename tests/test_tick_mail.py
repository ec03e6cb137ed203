"""A tick's sending costs what waits and what is due: `pbem run --send` opens only the games that
may have mail (their files changed since they were last found with nothing to send, a reminder
falls due in them, this run resolved them), yet sends everything it sent before, at the same
tick, against a real SMTP server (aiosmtpd on loopback); the games it leaves are provably not
opened: no file of theirs but the lock is (the interpreter's audit hook sees every file opened)
(pbem.mail.due; docs/batch.md, "The index")."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from test_mail import Server, orders_for, outbox, parse, run, running_server
from test_tick import age, guard_clock  # noqa: F401 (the guard's clock, which age moves on)

from pbem.club import batch
from pbem.game import processor
from pbem.mail import due
from pbem.records import clock, rootindex
from pbem.records.disk import LOCK_FILE

NOW = "2027-03-01T12:00:00+00:00"
CLUB = {
    "friday": ["ann", "ben"],
    "duel": ["ann", "cy"],
    "league": ["ben", "cy", "dee"],
}
MODERATOR = "games@club.example"
PBEM = [sys.executable, "-m", "pbem"]

# --- which games a tick opens --------------------------------------------------------------------

_RECORDING: list[set[str]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """Every file opened (by `open`, `os.open`, `Path.read_bytes`, SQLite) while recording."""
    if _RECORDING and event in ("open", "sqlite3.connect") and args:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            _RECORDING[-1].add(os.path.abspath(os.fsdecode(path)))


_HOOKED: list[bool] = []


@contextmanager
def recording() -> Iterator[set[str]]:
    if not _HOOKED:  # (an audit hook cannot be taken back: one for the whole session)
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    seen: set[str] = set()
    _RECORDING.append(seen)
    try:
        yield seen
    finally:
        _RECORDING.pop()


def opened(root: Path, seen: set[str]) -> set[str]:
    """The games of `root` (by folder name) any file of which but the lock was opened."""
    out = set()
    for base in {os.path.abspath(root), os.path.realpath(root)}:
        for path in seen:
            rel = Path(path).relative_to(base) if path.startswith(base + os.sep) else None
            if rel is None or len(rel.parts) < 2 or rel.parts[1] == LOCK_FILE:
                continue
            if (root / rel.parts[0] / "game.toml").is_file():
                out.add(rel.parts[0])
    return out


def tick(
    root: Path, *args: object, now: str = NOW, code: int = 0, **kwargs: Any
) -> tuple[str, set[str]]:
    """`pbem run ROOT --send`: what it printed, and the games it opened."""
    with recording() as seen:
        out = run("run", root, "--send", "--now", now, *args, code=code, **kwargs)
    return out, opened(root, seen)


def settle(root: Path, now: str = NOW, code: int = 0) -> None:
    """The files as if written an hour ago, and the tick that finds every game as it is then
    (the index keeps a game only once its files are a few seconds old)."""
    age(root)
    run("run", root, "--send", "--now", now, code=code)


def received(srv: Server) -> list[EmailMessage]:
    return srv.recorder.messages()


# --- a club of three games ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("club") / "games"
    for name, players in CLUB.items():
        seats = [(p, f"{p}@example.org") for p in players]
        processor.new_game(root / name, seats, processor.Options(), seed=bytes(32), name=name)
    (root / "pbem.toml").write_text(f'[mail]\nfrom = "{MODERATOR}"\n')
    return root


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


@pytest.fixture
def club(template: Path, tmp_path: Path, server: Server) -> Path:
    """The club, its setup reports sent, every game found with nothing to send."""
    root = Path(shutil.copytree(template, tmp_path / "games"))
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}")
    run("run", root, "--send", "--now", NOW)
    assert len(received(server)) == 7
    settle(root)
    server.recorder.received.clear()
    return root


def test_an_idle_tick_opens_no_game_and_says_what_opening_them_says(
    club: Path, server: Server
) -> None:
    out, games = tick(club)
    assert games == set() and received(server) == []
    assert "nothing to send in 3 games" in out
    (club / rootindex.INDEX_FOLDER / due.index_file(None)).unlink()
    again, games = tick(club)
    assert games == set(CLUB) and again == out  # every game opened: the same words


def test_a_message_queued_by_another_command_goes_at_the_next_tick(
    club: Path, server: Server
) -> None:
    assert "queued" in run("mail", "resend", club / "duel", "--player", "ann")
    out, games = tick(club)
    assert games == {"duel"}
    (msg,) = received(server)
    assert msg["To"] == "ann@example.org" and "resent" in str(msg["Subject"])
    assert "duel: sent" in out
    _, games = tick(club)  # opened again (its files changed), then kept
    assert games == {"duel"} and len(received(server)) == 1
    age(club)
    tick(club)
    assert tick(club)[1] == set()


def test_a_message_written_into_an_outbox_by_hand_goes_at_the_next_tick(
    club: Path, server: Server
) -> None:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = MODERATOR, "ben@example.org", "a word"
    msg["Message-ID"] = "<word@club.example>"
    msg.set_content("See you on Friday.\n")
    (club / "league" / "outbox" / "word.eml").write_bytes(msg.as_bytes())
    _, games = tick(club)
    assert games == {"league"}
    assert [str(m["Message-ID"]) for m in received(server)] == ["<word@club.example>"]


def test_a_message_written_while_the_tick_sends_goes_with_it_when_it_would_have(
    club: Path, server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Written into league's outbox while the tick sends duel (before league, by its folder):
    it goes with this tick, as it did when every game was opened."""
    real = due.send_into

    def meanwhile(out: Any, name: str, directory: Path, *args: Any, **kwargs: Any) -> Any:
        if directory.name == "duel":
            run("mail", "resend", club / "league", "--player", "dee")
        return real(out, name, directory, *args, **kwargs)

    monkeypatch.setattr(due, "send_into", meanwhile)
    run("mail", "resend", club / "duel", "--player", "ann")
    _, games = tick(club)
    assert games == {"duel", "league"}
    assert sorted(str(m["To"]) for m in received(server)) == ["ann@example.org", "dee@example.org"]


def test_a_message_refused_for_now_is_sent_again_at_every_tick_until_it_goes(
    club: Path, server: Server
) -> None:
    run("mail", "resend", club / "friday", "--player", "ann")
    run("mail", "resend", club / "league", "--player", "ben")
    server.recorder.refuse = {"ann@example.org": "450 4.2.0 mailbox busy, try later"}
    out, games = tick(club, code=1)
    assert games == {"friday", "league"} and "refused for now" in out
    age(club)  # nothing of friday changes but the time: its message waits, and is tried
    for _ in range(2):
        out, games = tick(club, code=1)
        assert "friday" in games and "refused for now" in out
    server.recorder.refuse = {}
    out, games = tick(club)
    assert games == {"friday"}
    assert sorted(str(m["To"]) for m in received(server)) == ["ann@example.org", "ben@example.org"]
    age(club)
    tick(club)
    assert tick(club)[1] == set()


def test_a_message_put_back_from_failed_goes_at_the_next_tick(club: Path, server: Server) -> None:
    run("mail", "resend", club / "duel", "--player", "cy")
    server.recorder.refuse = {"cy@example.org": "550 5.1.1 no such user"}
    out, _ = tick(club, code=1)
    assert "moved to outbox/failed/" in out
    settle(club)
    assert tick(club)[1] == set()
    (failed,) = (club / "duel" / "outbox" / "failed").glob("*.eml")
    os.replace(failed, club / "duel" / "outbox" / failed.name)  # (its own times unchanged)
    server.recorder.refuse = {}
    _, games = tick(club)
    assert games == {"duel"} and [str(m["To"]) for m in received(server)] == ["cy@example.org"]


def test_a_game_that_cannot_send_is_told_at_every_tick(club: Path, server: Server) -> None:
    path = club / "duel" / "game.toml"
    path.write_text(path.read_text() + '\n[mail]\nfrom = "nobody"\n')
    settle(club, code=1)
    for _ in range(2):
        out, games = tick(club, code=1)
        assert "duel" in games and "failed: duel: " in out


def test_a_note_of_a_report_not_mailed_is_told_at_every_tick(
    template: Path, tmp_path: Path, server: Server
) -> None:
    root = Path(shutil.copytree(template, tmp_path / "games"))
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}")
    run("config", root / "duel", "player.cy.email=")
    run("run", root, "--send", "--now", NOW)
    settle(root)
    out, games = tick(root)
    assert games == set()
    assert "duel: cy has no address: report 0000-deal/cy not mailed" in out.splitlines()
    (root / rootindex.INDEX_FOLDER / due.index_file(None)).unlink()
    assert tick(root)[0] == out


def test_a_game_resolved_in_the_run_sends_its_reports(club: Path, server: Server) -> None:
    for player in CLUB["duel"]:
        (club / "duel" / "orders" / f"{player}.toml").write_text(orders_for(club / "duel", player))
    age(club)
    out, games = tick(club)
    assert "resolved  duel" in out and "duel" in games
    subjects = sorted(str(m["Subject"]) for m in received(server))
    assert len(subjects) == 2 and all(s.startswith("[duel] turn 1") for s in subjects)


def test_a_setting_changed_above_the_games_opens_every_game(club: Path, server: Server) -> None:
    run("config", club, "bcc=archive@club.example")
    assert tick(club)[1] == set(CLUB)


def test_settings_from_outside_the_files_open_every_game_again(club: Path, server: Server) -> None:
    _, games = tick(club, env={"PBEM_FROM": "other@club.example"})
    assert games == set(CLUB)
    assert tick(club, env={"PBEM_FROM": "other@club.example"})[1] == set()
    assert tick(club)[1] == set(CLUB)  # back to no PBEM_FROM: another set of settings
    assert tick(club)[1] == set()
    run("mail", "resend", club / "friday", "--player", "ben")
    now = clock.parse_instant(NOW)
    flags = {"from": "flag@club.example"}
    with recording() as seen:
        summary = batch.run_root(club, now, mail=batch.MailRun(send=True, flags=flags))
    assert summary.ok and opened(club, seen) == set(CLUB)
    (msg,) = received(server)
    assert msg["From"] == "flag@club.example"  # the sender the command line gives
    with recording() as seen:
        batch.run_root(club, now, mail=batch.MailRun(send=True, flags=flags))
    assert opened(club, seen) == {"friday"}  # (its files changed: opened once more)


# --- reminders ------------------------------------------------------------------------------------

ROME = ["--turn-time", "48h", "--due-at", "20:00", "--timezone", "Europe/Rome"]
START = "2026-11-30T21:00+01:00"
"""The setup turn is due on Thursday 3 December, 20:00 in Rome; `remind = "24h, 2h"` reminds at
20:00 on Wednesday and 18:00 on Thursday."""


@pytest.fixture
def towns(tmp_path: Path, server: Server) -> Path:
    root = tmp_path / "towns"
    for town in ("rome", "pisa"):
        players = ",".join(f"{p}=" + f"{p}.{town}@example.org" for p in ("alice", "bob"))
        run("new", root / town, "--players", players, "--seed", "22" * 32, "--now", START, *ROME)
    run("config", root, "smtp_host=127.0.0.1", f"smtp_port={server.port}", "remind=24h, 2h")
    run("run", root, "--send", "--now", START)  # the setup reports
    settle(root, "2026-12-01T12:00+01:00")
    server.recorder.received.clear()
    return root


def reminded(srv: Server) -> list[str]:
    return sorted(str(m["To"]) for m in received(srv) if "reminder" in str(m["Subject"]))


def test_a_reminder_falls_due_with_no_file_changed(towns: Path, server: Server) -> None:
    out, games = tick(towns, now="2026-12-02T19:59+01:00")  # a minute before
    assert games == set() and reminded(server) == []
    out, games = tick(towns, now="2026-12-02T20:00+01:00")
    assert games == {"rome", "pisa"} and out.count("reminder queued") == 4
    assert len(reminded(server)) == 4
    for now in ("2026-12-02T20:10+01:00", "2026-12-02T20:20+01:00"):
        tick(towns, now=now)  # opened (their files changed), kept: nothing twice
    age(towns)
    tick(towns, now="2026-12-02T20:30+01:00")
    for now in ("2026-12-03T17:59+01:00", "2026-12-02T19:00+01:00", "2026-12-02T21:00+01:00"):
        out, games = tick(towns, now=now)  # forward and back: nothing due
        assert games == set() and "reminder queued" not in out
    assert len(reminded(server)) == 4
    out, games = tick(towns, now="2026-12-03T18:00+01:00")
    assert games == {"rome", "pisa"} and len(reminded(server)) == 8


def test_no_reminder_is_due_for_players_whose_orders_are_in(towns: Path, server: Server) -> None:
    run("config", towns / "rome", "resolve=at-deadline")  # (resolved at the deadline)
    for player in ("alice", "bob"):
        (towns / "rome" / "orders" / f"{player}.toml").write_text(
            orders_for(towns / "rome", player)
        )
    (towns / "pisa" / "orders" / "bob.toml").write_text(orders_for(towns / "pisa", "bob"))
    settle(towns, "2026-12-01T13:00+01:00")
    _, games = tick(towns, now="2026-12-02T20:00+01:00")
    assert games == {"pisa"} and reminded(server) == ["alice.pisa@example.org"]
    _, games = tick(towns, now="2026-12-03T18:00+01:00")
    assert games == {"pisa"} and reminded(server) == ["alice.pisa@example.org"] * 2


def test_a_deadline_moved_by_hand_sends_its_notice_and_moves_the_reminders(
    towns: Path, server: Server
) -> None:
    run("deadline", towns / "rome", "--extend", "24h", "--why", "a holiday", "--now", START)
    out, games = tick(towns, now="2026-12-01T14:00+01:00")
    assert games == {"rome"}
    assert sorted(str(m["To"]) for m in received(server)) == [
        "alice.rome@example.org",
        "bob.rome@example.org",
    ]
    settle(towns, "2026-12-01T15:00+01:00")
    server.recorder.received.clear()
    _, games = tick(towns, now="2026-12-02T20:00+01:00")
    assert games == {"pisa"}  # rome's first reminder is a day later now
    server.recorder.received.clear()
    settle(towns, "2026-12-02T21:00+01:00")
    _, games = tick(towns, now="2026-12-03T20:00+01:00")  # (pisa is overdue: resolved)
    assert "rome" in games
    assert [to for to in reminded(server) if "rome" in to] == [
        "alice.rome@example.org",
        "bob.rome@example.org",
    ]


# --- shards ---------------------------------------------------------------------------------------


def answer(root: Path, name: str = "answer") -> None:
    """A message for no game waiting in the root's own outbox (an answer to a stranger)."""
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = MODERATOR, "stranger@example.net", "which game?"
    msg["Message-ID"] = f"<{name}@club.example>"
    msg.set_content("Your message names no game.\n")
    (root / "outbox").mkdir(exist_ok=True)
    (root / "outbox" / f"{name}.eml").write_bytes(msg.as_bytes())


@pytest.fixture
def many(tmp_path: Path, server: Server) -> Path:
    """Twelve games, every other one ready to be resolved; none of their mail sent yet."""
    from conftest import write_skeletons

    root = tmp_path / "many"
    for i in range(12):
        seats = [(p, f"{p}.{i}@example.org") for p in ("ann", "ben")]
        directory = root / f"game-{i:02d}"
        processor.new_game(
            directory, seats, processor.Options(), seed=bytes(32), name=directory.name
        )
        if i % 2:
            write_skeletons(directory)
    (root / "pbem.toml").write_text(
        f'[mail]\nfrom = "{MODERATOR}"\nsmtp_host = "127.0.0.1"\nsmtp_port = {server.port}\n'
    )
    return root


def shards(root: Path, n: int = 4) -> list[str]:
    """`pbem run ROOT --send --shard K/N` for every K, all at once; what each printed."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    runs = [
        subprocess.Popen(
            [*PBEM, "run", str(root), "--send", "--now", NOW, "--shard", f"{k}/{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for k in range(1, n + 1)
    ]
    done = [r.communicate(timeout=600) for r in runs]
    assert all(r.returncode == 0 for r in runs), [e for _, e in done]
    return [o for o, _ in done]


def deliveries(srv: Server) -> list[tuple[str, str]]:
    return sorted(
        (str(parse(content)["Message-ID"]), rcpt)
        for _, rcpts, content in srv.recorder.received
        for rcpt in rcpts
    )


def test_four_shards_send_every_games_mail_exactly_once(many: Path, server: Server) -> None:
    answer(many)
    shards(many)
    sent = deliveries(server)
    assert len(sent) == len(set(sent))  # nothing twice
    made = sum(len(list((g / "outbox" / "sent").glob("*.eml"))) for g in many.glob("game-*"))
    assert made == 12 * 2  # each game's latest reports (a game under way mails only those)
    assert len(sent) == made + 1 and ("<answer@club.example>", "stranger@example.net") in sent
    assert not any(outbox(g) for g in [many, *many.glob("game-*")])  # nothing left waiting
    age(many)
    # (the shards run apart, on the machine's clock: the files' change times, which cannot be
    # set back, must be past the guard's wait for files changed just now)
    time.sleep(rootindex.RACY_NS / 1e9 + 0.1)
    shards(many)  # every game found with nothing to send
    assert deliveries(server) == sent
    for k in range(1, 5):
        assert (many / rootindex.INDEX_FOLDER / f"mail-{k}-of-4.json").is_file()
    run("mail", "resend", many / "game-03", "--player", "ann")
    answer(many, "another")
    with recording() as seen:
        for k in range(1, 5):
            run("run", many, "--send", "--now", NOW, "--shard", f"{k}/4")
    assert opened(many, seen) == {"game-03"}
    late = [d for d in deliveries(server) if d not in sent]
    assert sorted(rcpt for _, rcpt in late) == ["ann.3@example.org", "stranger@example.net"]


def test_only_the_first_shard_sends_the_roots_answers(many: Path, server: Server) -> None:
    answer(many)
    out = run("run", many, "--send", "--now", NOW, "--shard", "2/2")
    assert "messages for no game" not in out
    assert (many / "outbox" / "answer.eml").is_file()
    assert "stranger@example.net" not in [r for _, r in deliveries(server)]
    out = run("run", many, "--send", "--now", NOW, "--shard", "1/2")
    assert "many (messages for no game): sent answer.eml to stranger@example.net" in out
    assert not (many / "outbox" / "answer.eml").exists()
    assert [r for _, r in deliveries(server)].count("stranger@example.net") == 1


def test_when_a_reminder_is_due_is_when_a_run_queues_one(tmp_path: Path) -> None:
    """At any time, forward or back, a run queues a reminder exactly when the last run said one
    was due then (`Reminded.due`, what the index keeps)."""
    import random
    from datetime import timedelta

    from pbem.mail.inbox import game_settings
    from pbem.mail.reminders import queue_reminders

    game = tmp_path / "rome"
    players = ",".join(f"{p}={p}@example.org" for p in ("alice", "bob", "carol"))
    run("new", game, "--players", players, "--seed", "22" * 32, "--now", START, *ROME)
    settings = game_settings(game, {"remind": "3d, 24h, 2h, 30m"})
    deadline = clock.parse_instant("2026-12-03T20:00+01:00")
    rng = random.Random(7)
    last = queue_reminders(game, settings, clock.parse_instant(START))
    queued = 0
    at = clock.parse_instant(START)
    for step in range(60):  # mostly forward, sometimes back, past the deadline at the end
        at += timedelta(minutes=rng.randint(-3 * 60, 7 * 60))
        if step == 30:  # alice's orders come in: what is due is told afresh
            (game / "orders" / "alice.toml").write_text(orders_for(game, "alice"))
            last = queue_reminders(game, settings, at)
        done = queue_reminders(game, settings, at)
        assert bool(done.queued) == last.due(at), (step, at, last)
        queued += len(done.queued)
        last = done
    assert queued == 5 and at > deadline  # 24h: all three; 2h: bob and carol; then past it


def test_a_tick_that_fetches_reads_no_idle_game_file_for_its_name(
    club: Path, tmp_path: Path
) -> None:
    """The fetch routes mail by the games' names, taken from the index of names where a game
    file is as it was (`root.indexed_root`): a tick with a mailbox to read opens no idle game."""
    import mailbox

    box = tmp_path / "box"
    mailbox.Maildir(box, create=True)
    with recording() as seen:
        out = run("run", club, "--maildir", box, "--now", NOW)
    assert opened(club, seen) == set(), out
    (club / rootindex.INDEX_FOLDER / rootindex.NAMES).unlink()  # (the names read from the files)
    with recording() as seen:
        run("run", club, "--maildir", box, "--now", NOW)
    assert opened(club, seen) == set(CLUB)
