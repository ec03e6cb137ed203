"""The mail state in SQLite (`pbem.records.mailstate`): a message read or sent writes its own rows
and nothing else, an old game's JSON state is migrated once (and again if the migration was
killed), a damaged database is a sentence for its game alone, and a fetch killed at random
moments then run again reads each message once."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from conftest import snapshot
from test_damaged_state import played, two_games  # noqa: F401 (a fixture)
from test_hostile_files import never_hang  # noqa: F401 (a read that blocks fails the test)
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    into_maildir,
    make_template,
    message,
    orders_for,
    run,
)

import pbem.mail.fetch
from pbem import mail
from pbem.records import mailstate
from pbem.records.mailstate import DATABASE, MailState

FIXTURE = Path(__file__).parent / "fixtures" / "json-mail-state"
ALICE = "alice@example.org"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / GAME))


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A game whose mail state is the JSON files an older pbem wrote (fixtures/README.md)."""
    return Path(shutil.copytree(FIXTURE / GAME, tmp_path / GAME))


def fetch(game: Path, box: Path, code: int = 0) -> str:
    now = NOW.isoformat()
    return run(
        "mail", "fetch", game, "--maildir", box, "--from", MODERATOR, "--now", now, code=code
    )


def old_state(game: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURE / GAME / "mail" / name).read_text()))


def filled(half: dict[str, Any]) -> dict[str, Any]:
    """A half of the mail state without its empty sections (an empty list is no rows)."""
    return {section: value for section, value in half.items() if value}


# --- the migration -----------------------------------------------------------------------------


def test_an_old_games_json_state_is_migrated_once_and_kept_renamed(old: Path) -> None:
    seen, sent = old_state(old, "seen.json"), old_state(old, "sent.json")
    out = fetch(old, FIXTURE / "Maildir")
    assert "3 messages read: 0 accepted, 3 already processed" in out  # nothing read twice
    folder = old / "mail"
    assert not (folder / "seen.json").exists() and not (folder / "sent.json").exists()
    assert json.loads((folder / "seen.json.migrated").read_text()) == seen
    assert json.loads((folder / "sent.json.migrated").read_text()) == sent
    state = MailState.peek(old)
    assert filled(state.seen) == filled(seen) and filled(state.sent) == filled(sent)
    assert list(state.seen["messages"]) == list(seen["messages"])  # in the order read
    # the send goes on where the old one stopped: nothing built again, only the resend waits
    built = mail.send_mail(old, MODERATOR)
    assert built.built == [] and built.pending == ["resend-3e9fe1ad53f4419b.eml"]
    again = fetch(old, FIXTURE / "Maildir")  # the migration is not made again
    assert "3 already processed" in again
    assert json.loads((folder / "seen.json.migrated").read_text()) == seen


def test_status_reads_an_old_game_without_migrating_it(old: Path) -> None:
    assert MailState.peek(old).seen["accepted"]["1/alice"]["message_id"] == "<a1@test>"
    run("status", old)
    assert (old / "mail" / "seen.json").exists() and not (old / "mail" / DATABASE).exists()


def test_a_dry_run_send_of_an_old_game_migrates_nothing_and_changes_nothing(old: Path) -> None:
    before = snapshot(old)
    assert "would" in run("mail", "send", old, "--dry-run")
    assert snapshot(old) == before
    assert (old / "mail" / "seen.json").exists() and not (old / "mail" / DATABASE).exists()
    run("mail", "send", old)  # a real send migrates, as documented
    assert (old / "mail" / DATABASE).exists() and not (old / "mail" / "seen.json").exists()


def killed_in(monkeypatch: pytest.MonkeyPatch, where: str, old: Path) -> None:
    """Open `old`'s mail state in a forked child killed with SIGKILL at `where`: inside the
    migration's transaction before its commit, or after the commit before the renaming."""
    if where == "before the commit":

        def write(self: MailState, work: Any, fresh: bool = False) -> None:
            def dying(db: sqlite3.Connection) -> None:
                work(db)
                os.kill(os.getpid(), signal.SIGKILL)

            original(self, dying, fresh)

        original = MailState._write
        monkeypatch.setattr(MailState, "_write", write)
    else:
        monkeypatch.setattr(
            MailState, "_finish_migration", lambda self: os.kill(os.getpid(), signal.SIGKILL)
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            MailState.open(old)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    monkeypatch.undo()


@pytest.mark.parametrize("where", ["before the commit", "after the commit"])
def test_a_migration_killed_part_way_is_made_again(
    old: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    seen, sent = old_state(old, "seen.json"), old_state(old, "sent.json")
    killed_in(monkeypatch, where, old)
    assert (old / "mail" / "seen.json").exists()  # not renamed yet
    with contextlib.closing(sqlite3.connect(old / "mail" / DATABASE)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        sql = "SELECT value FROM meta WHERE name = 'made'"
        made = db.execute(sql).fetchall() if "meta" in tables else []
    assert made == ([] if where == "before the commit" else [("seen.json sent.json",)])
    out = fetch(old, FIXTURE / "Maildir")
    assert "3 already processed" in out
    assert not (old / "mail" / "seen.json").exists()
    state = MailState.peek(old)
    assert filled(state.seen) == filled(seen) and filled(state.sent) == filled(sent)


def test_a_damaged_json_file_is_still_a_sentence_and_nothing_is_migrated(old: Path) -> None:
    (old / "mail" / "sent.json").write_text('{"reports": 3}')
    out = run("mail", "send", old, code=1)
    assert f"Error: {old / 'mail' / 'sent.json'} is damaged: 'reports' is not a list" in out
    assert (old / "mail" / "seen.json").exists() and not (old / "mail" / DATABASE).exists()


# --- a damaged database --------------------------------------------------------------------------


def test_a_damaged_database_is_a_sentence_for_every_command(
    played: Path,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    game = Path(shutil.copytree(played, tmp_path / GAME))  # a turn in: there is one to undo
    box = into_maildir(tmp_path / "box", [message(ALICE, orders_for(game, "alice"), mid="<o@t>")])
    fetch(game, box)
    database = game / "mail" / DATABASE
    database.write_bytes(b"this is no database, but a file cut and overwritten" * 100)
    commands = [
        ("mail", "fetch", game, "--maildir", box),
        ("mail", "send", game),
        ("mail", "resend", game),
        ("undo", game, "--why", "a test"),
    ]
    for command in commands:
        out = run(*command, "--now", NOW.isoformat(), code=1)
        assert f"Error: {database} is damaged (file is not a database)" in out, out
        assert "restore it from a backup" in out and "Traceback" not in out


@pytest.mark.parametrize(
    "row",
    [
        ("seen", "messages", "<x@t>", "3"),
        ("seen", "accepted", "1/alice", '{"date": "not a time"}'),
        ("sent", "reports", None, "{not json"),
    ],
)
def test_a_damaged_record_in_the_database_is_a_sentence(
    game: Path, row: tuple[str, str, str | None, str]
) -> None:
    run("mail", "send", game)
    database = game / "mail" / DATABASE
    with sqlite3.connect(database) as db:
        db.execute("INSERT INTO entries (file, section, key, value) VALUES (?, ?, ?, ?)", row)
    out = run("mail", "send", game, code=1)
    assert f"Error: {database} is damaged (" in out and "Traceback" not in out
    assert f"'{row[1]}'" in out


def test_a_database_of_a_newer_pbem_is_refused(game: Path) -> None:
    run("mail", "send", game)
    with sqlite3.connect(game / "mail" / DATABASE) as db:
        db.execute("UPDATE schema_version SET version = 99")
    out = run("mail", "send", game, code=1)
    assert "was written by a newer pbem (schema 99, this pbem reads 2): upgrade pbem" in out


@pytest.mark.usefixtures("never_hang")
@pytest.mark.parametrize("name", [DATABASE, DATABASE + "-wal"])
def test_a_fifo_as_the_database_is_a_sentence(game: Path, name: str) -> None:
    (game / "mail").mkdir(exist_ok=True)
    os.mkfifo(game / "mail" / name)
    out = run("mail", "send", game, code=1)
    assert f"cannot read {game / 'mail' / name}: this is a named pipe (FIFO)" in out


def test_a_damaged_database_stops_only_its_own_game(tmp_path: Path) -> None:
    root = two_games(tmp_path, addresses=True)
    run("mail", "send", root)
    database = root / "autumn" / "mail" / DATABASE
    database.write_bytes(b"\0" * 4096)
    out = run("mail", "send", root, code=1)
    assert f"failed: autumn: {database} is damaged" in out and "Traceback" not in out
    assert "winter: 2 messages wait in outbox/" in out


# --- what one message costs --------------------------------------------------------------------


def test_a_message_read_writes_its_own_rows_whatever_is_behind_it(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With 20,000 messages read before, the new ones are one small transaction (a fetch
    commits its messages a group at a time): a few rows each, and no JSON file written."""
    with MailState.open(game) as state:
        for n in range(20_000):
            state.put("seen", "messages", f"<old{n}@t>", {"from": "x@y", "verdict": "rejected"})
        state.commit()
    changes: list[int] = []
    commit = MailState.commit

    def counting(self: MailState) -> None:
        before = self._db.total_changes if self._db is not None else 0
        commit(self)
        changes.append(self._db.total_changes - before if self._db is not None else 0)

    monkeypatch.setattr(MailState, "commit", counting)
    box = into_maildir(
        tmp_path / "box",
        [message(ALICE, orders_for(game, "alice"), mid="<o@t>")]
        + [message(f"s{n}@example.net", "hello", mid=f"<s{n}@t>") for n in range(5)],
    )
    fetch(game, box)
    assert 6 <= sum(changes) <= 6 * 6 and len(changes) <= 2, changes
    assert not (game / "mail" / "seen.json").exists()
    assert len(MailState.peek(game).seen["messages"]) == 20_006


# --- kill -9 ---------------------------------------------------------------------------------


def forked_fetch(game: Path, box: Path) -> int:
    with warnings.catch_warnings():  # Python 3.12+ warns of forking with threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
            code = 0
        finally:
            os._exit(code)
    return pid


def read_so_far(game: Path) -> int:
    """How many messages the game's ledger holds as read (looked at while a fetch writes)."""
    if not (game / "mail" / DATABASE).exists():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(game / "mail" / DATABASE, timeout=5)) as db:
            sql = "SELECT count(*) FROM entries WHERE file = 'seen' AND section = 'messages'"
            return int(db.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # not made yet
        return 0


def outcome(game: Path) -> dict[str, Any]:
    """What a fetch leaves that must not depend on kills: the messages read and how, the
    orders stored, the answers written, the messages kept."""
    state = MailState.peek(game)
    files = {
        str(p.relative_to(game)): p.read_bytes()
        for folder in ("orders", "outbox", "mail/rejected")
        for p in sorted((game / folder).rglob("*"))
        if p.is_file() and not p.name.startswith("note-")
    }
    return {
        "messages": state.seen["messages"],
        "accepted": state.seen["accepted"],
        "answered": state.seen.get("answered", {}),
        "files": files,
    }


@pytest.mark.parametrize("group", [1, 3])
def test_a_fetch_killed_at_random_moments_reads_each_message_once(
    game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group: int
) -> None:
    """A fetch of 80 messages killed with SIGKILL 15 times at random moments, then run to the
    end, leaves what one uninterrupted fetch leaves: each message read once, each answer
    written once, no temporary file; only the moderator's summary may name a message of a
    killed run twice. The messages are committed `group` at a time (a fetch's GROUP is 100:
    smaller here, so that the kills fall between commits as well as in them)."""
    monkeypatch.setattr(pbem.mail.fetch, "GROUP", group)
    # each player writes three times (orders, orders again, a question): within the answers
    # one address gets from one fetch, so that a run killed and run again answers as one run
    players = ["alice", "bob", "carol"]
    messages = [
        message(f"{players[n % 3]}@example.org", orders_for(game, players[n % 3]), minutes=n)
        if n < 6
        else message(f"{players[n % 3]}@example.org", "hi", mid=f"<q{n}@t>")
        if n < 9
        else message(f"s{n}@example.net", "hi", mid=f"<h{n}@t>")
        for n in range(80)
    ]
    box = into_maildir(tmp_path / "box", messages)
    twin = Path(shutil.copytree(game, tmp_path / "twin" / GAME))
    mail.fetch_orders(twin, mail.Sources(maildir=box), MODERATOR, NOW)
    rng = random.Random(20271202)
    kills = 0
    for _ in range(15):
        # kill once 1 to 3 more messages are recorded, a few milliseconds into the next one
        # (while its answer is written, between that and its commit, in the commit)
        target = read_so_far(game) + rng.randint(1, 3)  # one commit more, or a few
        pid = forked_fetch(game, box)
        give_up = time.monotonic() + 20
        ended = False
        while read_so_far(game) < target and time.monotonic() < give_up:
            if os.waitpid(pid, os.WNOHANG)[0]:
                ended = True  # it ran to the end
                break
            time.sleep(0.001)
        if not ended:
            time.sleep(rng.uniform(0.0, 0.01))
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            kills += os.WIFSIGNALED(status)
    assert kills >= 10  # most runs were killed, not finished
    mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert outcome(game) == outcome(twin)
    assert not [p for p in game.rglob("*.tmp")]
    notes = "".join(p.read_text() for p in (game / "outbox").glob("note-*.eml"))
    for n in range(9, 80):  # a stranger's message: in the moderator's summary, once or twice
        assert 1 <= notes.count(f"<h{n}@t>") <= 2, n
    again = mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert all(i.verdict is mail.Verdict.DUPLICATE for i in again.incoming)


def test_the_store_is_in_wal_mode(game: Path) -> None:
    run("mail", "send", game)
    with sqlite3.connect(game / "mail" / DATABASE) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(mailstate.SCHEMA,)]
