"""A dead mailbox never plays anyone's turn: when `pbem run` cannot read the mail, or the
mailbox has not been read since the deadline, no game past its deadline is played by the
autopilot (its players' orders may be waiting there); a game whose orders are all in goes on."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import held_lock
from dovecot import PASSWORD, USER, Dovecot, start
from test_mail import into_maildir, message, orders_for, run

from pbem.core.state import Options
from pbem.game import deadlines, processor
from pbem.records import clock
from pbem.records.history import history_count, read_history
from pbem.records.mailbox_state import FETCHED

STARTED = "2027-02-25T12:00:00+00:00"
BEFORE = "2027-02-26T12:00:00+00:00"
NOW = "2027-03-01T12:00:00+00:00"
"""After the deadline of the first turn (48 hours from STARTED)."""
PLAYERS = [("ann", "ann@example.org"), ("ben", "ben@example.org")]


def make(root: Path, name: str) -> Path:
    directory = root / name
    processor.new_game(
        directory,
        PLAYERS,
        Options(),
        seed=bytes([7] * 32),
        name=name,
        schedule=deadlines.schedule_from_options("48h", None),
        now=clock.parse_instant(STARTED),
    )
    return directory


@pytest.fixture
def root(tmp_path: Path) -> Path:
    games = tmp_path / "games"
    make(games, "late")
    ready = make(games, "ready")
    for player, _ in PLAYERS:
        (ready / "orders" / f"{player}.toml").write_text(orders_for(ready, player))
    return games


def rows(output: str) -> dict[str, str]:
    """The summary's rows by game: its result and detail."""
    out = {}
    for line in output.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in ("late", "ready"):
            out[parts[1]] = f"{parts[0]} {parts[2]}"
    return out


def test_a_failed_fetch_plays_no_one_by_the_autopilot(root: Path) -> None:
    run("config", root, "maildir=gone")
    output = run("run", root, "--fetch", "--now", NOW, code=1)
    assert "fetch failed: cannot read the Maildir" in output
    assert "no game is played by the autopilot in this run" in output
    row = rows(output)
    assert row["late"].startswith("held not played by the autopilot: this run could not read")
    assert row["ready"].startswith("resolved")  # its orders were all in
    assert history_count(root / "late") == 1 and history_count(root / "ready") == 2


def test_a_mailbox_not_read_since_the_deadline_plays_no_one(root: Path, tmp_path: Path) -> None:
    box = into_maildir(tmp_path / "Maildir", [])
    run("mail", "fetch", root, "--maildir", box, "--now", BEFORE)
    assert (root / FETCHED).is_file()
    row = rows(run("run", root, "--now", NOW))
    assert row["late"] == (
        "held not played by the autopilot: its mailbox was last read at "
        "2027-02-26T12:00:00+00:00, before the deadline 2027-02-27T12:00:00+00:00: the "
        "autopilot plays only once the mail since is read (pbem run --fetch, pbem mail fetch)"
    )
    assert history_count(root / "late") == 1
    mine = orders_for(root / "late", "ann")
    into_maildir(box, [message("ann@example.org", mine, subject="[late] orders")])
    row = rows(run("run", root, "--fetch", "--maildir", box, "--now", NOW))
    assert row["late"].startswith("resolved")
    record = read_history(root / "late", 1)
    assert {o.player: o.autopilot for o in record.orders} == {"ann": False, "ben": True}


def test_a_mailbox_never_read_in_full_says_so(root: Path) -> None:
    """A folder whose every fetch failed: the game past its deadline is held, in words that
    say the mailbox was never read (not "last read never")."""
    run("config", root, "maildir=gone")
    run("mail", "fetch", root, "--now", BEFORE, code=1)
    assert "at" not in json.loads((root / FETCHED).read_text())  # tried, never read
    row = rows(run("run", root, "--now", NOW))
    assert row["late"] == (
        "held not played by the autopilot: its mailbox has never been read in full, and the "
        "deadline 2027-02-27T12:00:00+00:00 has passed: the autopilot plays only once it is "
        "read (pbem run --fetch, pbem mail fetch)"
    )
    assert history_count(root / "late") == 1


@pytest.mark.parametrize("where", ["root", "game"])
def test_messages_given_as_eml_files_do_not_count_as_the_mailbox_read(
    root: Path, tmp_path: Path, where: str
) -> None:
    """A moderator who fetches one message by hand after the deadline has not read the
    mailbox: the game past its deadline stays held (other players' orders may wait there)."""
    box = into_maildir(tmp_path / "Maildir", [])
    run("mail", "fetch", root, "--maildir", box, "--now", BEFORE)
    eml = tmp_path / "ann.eml"
    mine = orders_for(root / "late", "ann")
    eml.write_bytes(message("ann@example.org", mine, subject="[late] orders").as_bytes())
    target = root if where == "root" else root / "late"
    run("mail", "fetch", target, eml, "--now", NOW)
    assert (root / "late" / "orders" / "ann.toml").read_text() == mine  # taken
    assert json.loads((root / FETCHED).read_text())["at"] == BEFORE
    assert not (root / "late" / FETCHED).exists()
    row = rows(run("run", root, "--now", NOW))
    assert row["late"].startswith(
        "held not played by the autopilot: its mailbox was last read at 2027-02-26T12:00:00"
    ), row["late"]
    assert history_count(root / "late") == 1


def test_a_game_that_could_not_take_its_messages_is_held(root: Path, tmp_path: Path) -> None:
    box = into_maildir(
        tmp_path / "Maildir",
        [message("ann@example.org", orders_for(root / "late", "ann"), subject="[late] x")],
    )
    damaged = root / "late" / "mail" / "seen.json"
    damaged.parent.mkdir()
    damaged.write_text("[")  # its messages cannot be handed to it
    run("mail", "fetch", root, "--maildir", box, "--now", NOW, code=1)
    damaged.unlink()
    row = rows(run("run", root, "--now", NOW))
    assert row["late"].startswith("held not played by the autopilot: the fetch of")
    assert "could not take its messages (since 2027-03-01T12:00:00+00:00)" in row["late"]
    row = rows(run("run", root, "--fetch", "--maildir", box, "--now", NOW))
    assert row["late"].startswith("resolved")
    record = read_history(root / "late", 1)
    assert {o.player: o.autopilot for o in record.orders} == {"ann": False, "ben": True}


def test_games_that_never_fetched_mail_are_played_as_before(root: Path) -> None:
    late = root / "late"
    (late / "orders" / "ann.toml").write_text(orders_for(late, "ann"))
    row = rows(run("run", root, "--now", NOW))
    assert row["late"].startswith("resolved")  # no mailbox ever read: nothing to wait for


@pytest.fixture
def dovecot(tmp_path: Path) -> Iterator[Dovecot]:
    """A Dovecot of this test alone (it is stopped and started again)."""
    server = start(tmp_path / "dovecot")
    running = next(server)
    yield running
    try:
        if (running.folder / "run" / "master.pid").is_file():
            running.stop()
    finally:
        shutil.rmtree(running.folder / "run", ignore_errors=True)
        server.close()  # the first server's process, and the server's own folder


def test_an_imap_server_down_after_the_deadline_holds_the_game_until_it_is_back(
    root: Path, dovecot: Dovecot
) -> None:
    host, port = dovecot.spec().split(":")
    settings = [f"imap_host={host}", f"imap_port={port}", "imap_security=ssl"]
    run("config", root, *settings, f"imap_user={USER}")
    late = root / "late"
    dovecot.deliver(
        message("ann@example.org", orders_for(late, "ann"), subject="[late] o", mid="<a@t>")
        .as_bytes(),
        message("ben@example.org", orders_for(late, "ben"), subject="[late] o", mid="<b@t>")
        .as_bytes(),
    )  # fmt: skip
    env = {"PBEM_IMAP_PASSWORD": PASSWORD, "SSL_CERT_FILE": str(dovecot.folder / "cert.pem")}
    dovecot.stop()
    output = run("run", root, "--fetch", "--now", NOW, env=env, code=1)
    assert "fetch failed: " in output
    assert rows(output)["late"].startswith("held not played by the autopilot")
    assert history_count(late) == 1
    again = run("run", root, "--now", NOW, env=env)  # without a fetch: still held
    assert rows(again)["late"].startswith("held")
    dovecot.start_again()
    output = run("run", root, "--fetch", "--now", NOW, env=env)
    assert rows(output)["late"].startswith("resolved")
    record = read_history(late, 1)
    assert {o.player: o.autopilot for o in record.orders} == {"ann": False, "ben": False}


def test_a_run_that_finds_the_mailbox_busy_exits_0_and_plays_no_one(
    root: Path, tmp_path: Path
) -> None:
    box = into_maildir(tmp_path / "Maildir", [])
    with held_lock(root):
        output = run("run", root, "--fetch", "--maildir", box, "--now", NOW)  # exit code 0
    assert "another run is reading this mailbox; this run leaves the mail to it" in output
    assert not (root / FETCHED).exists()  # the other run reads it: this one's is no failure
    row = rows(output)
    assert row["late"].startswith("held not played by the autopilot: another run is reading")
    assert row["ready"].startswith("resolved")


def test_a_game_another_run_holds_is_busy_not_failed(root: Path, tmp_path: Path) -> None:
    late = root / "late"
    msg = message("ann@example.org", orders_for(late, "ann"), subject="[late] orders")
    box = into_maildir(tmp_path / "Maildir", [msg])
    with held_lock(late):
        output = run("run", root, "--fetch", "--send", "--maildir", box, "--now", BEFORE)
    assert "late: busy (another run holds it); its 1 messages are read again next time" in output
    assert "late: busy (another run holds it); its mail waits" in output
    assert rows(output)["late"] == "skipped locked by another run"
    again = run("run", root, "--fetch", "--maildir", box, "--now", BEFORE)
    assert "accepted: " in again and (late / "orders" / "ann.toml").is_file()
