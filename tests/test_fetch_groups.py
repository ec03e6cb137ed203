"""A fetch commits its messages a group at a time: the writes grouped (folders synced once,
answers and orders written in the background), each game's commit settling its own files
first, the games' commits side by side, and a game whose commit fails read again next time,
by it and by the folder of games."""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path

import pytest
from test_damaged_state import two_games
from test_mail import MODERATOR, NOW, into_maildir, message, orders_for

import pbem.mail.fetch
from pbem import mail
from pbem.errors import DiskError
from pbem.files import TEMPORARY
from pbem.mail import inbox
from pbem.mail.mailboxes import Mailbox
from pbem.mail.sources import Sources
from pbem.records import disk
from pbem.records.mailstate import MailState
from pbem.records.opening import read_game


@pytest.fixture
def synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths synced, in order (files and folders)."""
    calls: list[str] = []
    real = disk._sync

    def sync(path: str | Path) -> None:
        calls.append(os.path.abspath(path))
        real(path)

    monkeypatch.setattr(disk, "_sync", sync)
    return calls


def test_outside_a_group_each_write_syncs_its_folder_at_once(
    tmp_path: Path, synced: list[str]
) -> None:
    disk.atomic_write(tmp_path / "a.txt", "a")
    assert synced[-1] == str(tmp_path)


def test_in_a_group_the_folders_are_synced_once_when_settled(
    tmp_path: Path, synced: list[str]
) -> None:
    with disk.grouped():
        for name in "abc":
            disk.atomic_write(tmp_path / f"{name}.txt", name)
        assert str(tmp_path) not in synced  # each file synced, its folder not yet
        assert len(synced) == 3
        disk.settle()
        assert synced.count(str(tmp_path)) == 1
    assert synced.count(str(tmp_path)) == 1  # nothing left for the end of the group
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt", "c.txt"]


def test_a_group_ended_by_an_error_still_syncs_what_it_wrote(
    tmp_path: Path, synced: list[str]
) -> None:
    with pytest.raises(KeyError), disk.grouped():
        disk.write_later(tmp_path / "kept.txt", "kept")
        raise KeyError("stop")
    assert (tmp_path / "kept.txt").read_text() == "kept"
    assert str(tmp_path) in synced


def test_a_background_write_is_in_place_once_settled_and_waited_for_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    let_go = threading.Event()
    real = disk._write_one

    def slow(path: Path, raw: bytes) -> None:
        assert let_go.wait(10)
        real(path, raw)

    monkeypatch.setattr(disk, "_write_one", slow)
    target = tmp_path / "orders" / "ann.toml"
    with disk.grouped():
        disk.write_later(target, "first\n")
        assert not target.exists()  # under way
        threading.Timer(0.05, let_go.set).start()
        disk.written(target)  # waits for it
        assert target.read_text() == "first\n"
        disk.write_later(target, "second\n")
        disk.write_later(target, "third\n")  # the same file again: after the second
        disk.settle()
        assert target.read_text() == "third\n"
    assert [p.name for p in target.parent.iterdir()] == ["ann.toml"]  # no temporary left


def test_a_background_write_that_fails_is_a_disk_error_at_the_settle_and_only_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: Path, raw: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(disk, "_write_one", full)
    with disk.grouped():
        disk.write_later(tmp_path / "a.eml", "a")
        with pytest.raises(DiskError, match=r"cannot write .*a\.eml: the disk is full"):
            disk.settle()
        disk.settle()  # told once: not tried again


def test_a_commit_settles_the_files_of_its_own_folder_and_no_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game's commit waits for that game's files (they are on the disk before its records
    are), not for another game's."""
    (tmp_path / "a" / "mail").mkdir(parents=True)
    (tmp_path / "b" / "mail").mkdir(parents=True)
    held = threading.Event()
    real = disk._write_one

    def holding(path: Path, raw: bytes) -> None:
        if path.parent.parent.name == "b":
            assert held.wait(10)
        real(path, raw)

    monkeypatch.setattr(disk, "_write_one", holding)
    with disk.grouped():
        disk.write_later(tmp_path / "a" / "outbox" / "x.eml", "x")
        disk.write_later(tmp_path / "b" / "outbox" / "y.eml", "y")
        with MailState.open(tmp_path / "a") as state:
            state.put("seen", "messages", "<x@t>", {"verdict": "accepted"})
            state.commit()
        assert (tmp_path / "a" / "outbox" / "x.eml").read_text() == "x"
        assert not (tmp_path / "b" / "outbox" / "y.eml").exists()  # still held back
        held.set()
    assert (tmp_path / "b" / "outbox" / "y.eml").read_text() == "y"
    assert "<x@t>" in MailState.peek(tmp_path / "a").seen["messages"]


def test_a_commit_whose_files_failed_records_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mail").mkdir()

    def full(path: Path, raw: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(disk, "_write_one", full)
    with disk.grouped(), MailState.open(tmp_path) as state:
        disk.write_later(tmp_path / "outbox" / "x.eml", "x")
        state.put("seen", "messages", "<x@t>", {"verdict": "accepted"})
        with pytest.raises(DiskError):
            state.commit()
    assert MailState.peek(tmp_path).seen["messages"] == {}


def test_side_by_side_runs_every_call_and_returns_each_ones_error() -> None:
    ran: list[int] = []

    def ok(n: int) -> None:
        ran.append(n)

    def refused() -> None:
        raise DiskError("cannot write x: the disk is full")

    outcome = disk.side_by_side([lambda: ok(1), refused, lambda: ok(3)])
    assert sorted(ran) == [1, 3]
    assert outcome[0] is None and outcome[2] is None
    assert isinstance(outcome[1], DiskError)


def test_side_by_side_calls_see_the_group_under_way(tmp_path: Path) -> None:
    with disk.grouped():
        disk.write_later(tmp_path / "a.txt", "a")
        assert disk.side_by_side([lambda: disk.written(tmp_path / "a.txt")] * 2) == [None, None]
        assert (tmp_path / "a.txt").read_text() == "a"


def test_a_background_write_names_its_temporary_as_the_sweep_knows_and_keeps_it_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fetch killed while a background write is under way leaves a temporary file that the
    next run's sweep removes: named as `atomic_write` names its own, readable by its owner."""
    seen: list[str] = []
    real = os.replace

    def replace(src: str, dst: Path) -> None:
        seen.append(src)
        assert stat.S_IMODE(os.stat(src).st_mode) == 0o600
        assert Path(src).read_text() == "x" * 100_000  # whole and synced before the rename
        real(src, dst)

    monkeypatch.setattr(disk.os, "replace", replace)
    disk._write_one(tmp_path / "reply-ab.eml", ("x" * 100_000).encode())
    assert len(seen) == 1
    assert Path(seen[0]).parent == tmp_path
    assert TEMPORARY.match(Path(seen[0]).name)
    assert Path(seen[0]).name.startswith(".reply-ab.eml.")
    assert [p.name for p in tmp_path.iterdir()] == ["reply-ab.eml"]


def test_a_background_write_never_writes_through_a_name_already_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file, or a link to a file outside, already at the temporary's name is left alone:
    another name is drawn; none free after 100 draws is an error, and nothing is written."""
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    game = tmp_path / "game"
    game.mkdir()
    draws = iter([b"\x00" * 4, b"\x00" * 4, b"\x01" * 4])
    monkeypatch.setattr(disk.os, "urandom", lambda n: next(draws))
    (game / ".a.eml.00000000.tmp").symlink_to(outside)
    disk._write_one(game / "a.eml", b"new")
    assert (game / "a.eml").read_bytes() == b"new"
    assert outside.read_text() == "untouched"
    assert (game / ".a.eml.00000000.tmp").is_symlink()
    drawn: list[int] = []
    monkeypatch.setattr(disk.os, "urandom", lambda n: drawn.append(n) or b"\x00" * 4)
    with pytest.raises(FileExistsError, match="no free temporary name"):
        disk._write_one(game / "a.eml", b"newer")
    assert drawn == [4] * 100
    assert (game / "a.eml").read_bytes() == b"new"
    assert outside.read_text() == "untouched"


def test_background_writes_have_two_threads_and_syncs_eight(tmp_path: Path) -> None:
    """The writes beside a fetch's own thread take two threads (more slow the fetch); the
    syncs side by side, which only wait for the disk, eight."""
    with disk.grouped():
        for n in range(20):
            disk.write_later(tmp_path / f"{n}.eml", "x")
    disk.atomic_write_all({tmp_path / f"{n}.txt": "y" for n in range(20)})
    assert disk._pool("write")._max_workers == 2
    assert disk._pool("sync")._max_workers == 8


def test_a_folder_that_cannot_be_synced_fails_the_settle_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every folder is tried; the first that fails is told (the files in it may not be on the
    disk), and no other is tried again at the end of the group."""
    real = disk._sync
    tried: list[str] = []

    def sync(path: str | Path) -> None:
        tried.append(Path(path).name)
        if Path(path).name in ("a", "b"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(path)

    monkeypatch.setattr(disk, "_sync", sync)
    for name in "abc":
        (tmp_path / name).mkdir()
    with disk.grouped():
        for name in "abc":
            disk.atomic_write(tmp_path / name / "x.txt", name)
        tried.clear()
        with pytest.raises(DiskError, match=r"cannot write .*/a: "):
            disk.settle()
        assert sorted(tried) == ["a", "b", "c"]
        tried.clear()
    assert tried == []


def test_two_calls_side_by_side_run_at_once() -> None:
    """Two commits are made at the same time (their syncs then go to the disk together), not
    one after the other: each call here waits for the other to have started."""
    started = [threading.Event(), threading.Event()]

    def call(mine: int) -> None:
        started[mine].set()
        if not started[1 - mine].wait(10):
            raise DiskError("the other call did not run beside this one")

    assert disk.side_by_side([lambda: call(0), lambda: call(1)]) == [None, None]


def test_calls_side_by_side_stopped_by_ctrl_c_all_end_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C while commits are under way: each ends before the caller goes on (a commit cut
    off in another thread would be finished after the fetch has moved on)."""
    import concurrent.futures

    real = concurrent.futures.wait
    interrupted = []

    def wait(futures: object, *args: object, **kwargs: object) -> object:
        if not interrupted:
            interrupted.append(True)
            raise KeyboardInterrupt
        return real(futures, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(concurrent.futures, "wait", wait)
    ended: list[int] = []
    let_go = threading.Event()

    def call(n: int) -> None:
        let_go.wait(0.2)
        ended.append(n)

    with pytest.raises(KeyboardInterrupt):
        disk.side_by_side([lambda: call(1), lambda: call(2), lambda: call(3)])
    assert sorted(ended) == [1, 2, 3]


# --- a fetch ---------------------------------------------------------------------------------


def counted_commits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders whose mail state was committed with changes, in order."""
    folders: list[str] = []
    real = MailState.commit

    def commit(self: MailState) -> None:
        if self.pending:
            folders.append(self.directory.name)
        real(self)

    monkeypatch.setattr(MailState, "commit", commit)
    return folders


def test_a_game_fetch_commits_its_messages_a_group_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = two_games(tmp_path, addresses=True)
    game = root / "autumn"
    box = into_maildir(
        tmp_path / "box",
        [message(f"s{n}@example.net", "hello", mid=f"<s{n}@t>") for n in range(7)],
    )
    monkeypatch.setattr(pbem.mail.fetch, "GROUP", 3)
    commits = counted_commits(monkeypatch)
    result = mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert len(result.incoming) == 7
    assert commits == ["autumn"] * 3  # after 3, after 6, and the last one with the summary
    assert len(MailState.peek(game).seen["messages"]) == 7


def orders_of_two_games(tmp_path: Path) -> tuple[Path, Path]:
    """A folder of two games, and a Maildir holding every player's orders."""
    root = two_games(tmp_path, addresses=True)
    box = into_maildir(
        tmp_path / "box",
        [
            message(f"{p}@{g}.example", orders_for(root / g, p), mid=f"<{p}.{g}@t>")
            for g in ("autumn", "winter")
            for p in ("ann", "ben")
        ],
    )
    return root, box


def test_a_folder_fetch_commits_each_game_then_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, box = orders_of_two_games(tmp_path)
    commits = counted_commits(monkeypatch)
    result = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(result, inbox.RootFetch) and result.ok
    assert sorted(commits[:2]) == ["autumn", "winter"] and commits[2:] == ["games"]
    assert all((root / g / "orders" / f"{p}.toml").is_file() for g in ("autumn", "winter")
               for p in ("ann", "ben"))  # fmt: skip


def test_a_game_whose_commit_fails_is_read_again_and_the_others_are_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, box = orders_of_two_games(tmp_path)
    real = MailState.commit
    failing = {"winter"}

    def commit(self: MailState) -> None:
        if self.directory.name in failing and self.pending:
            self._changes = []
            raise DiskError(f"cannot write {self.path}: the disk is full: free some space")
        real(self)

    with monkeypatch.context() as patch:
        patch.setattr(MailState, "commit", commit)
        result = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(result, inbox.RootFetch) and not result.ok
    assert any(
        f.startswith("winter: cannot write") and "its 2 messages are read again" in f
        for f in result.failed
    ), result.failed
    assert len(MailState.peek(root / "autumn").seen["messages"]) == 2
    assert MailState.peek(root / "winter").seen["messages"] == {}
    routed = MailState.peek(root).seen["messages"]
    assert sorted(v["game"] for v in routed.values()) == ["autumn", "autumn"]

    again = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(again, inbox.RootFetch) and again.ok and again.skipped == 2
    assert {i.verdict for g in again.games for i in g.incoming} == {mail.Verdict.ACCEPTED}
    assert len(MailState.peek(root / "winter").seen["messages"]) == 2
    assert len(MailState.peek(root).seen["messages"]) == 4


# --- the headers of an answer, made once ----------------------------------------------------


def test_an_answers_headers_are_made_once_and_give_the_standard_bytes() -> None:
    from datetime import datetime, timezone
    from email.message import EmailMessage

    from pbem.mail import records

    when = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)
    subject = "[höst] ઓર્ડર સ્વીકાર્યા: your orders"  # folded and encoded (RFC 2047)
    one = records.outgoing(
        "pbem <pbem@example.org>", "ann@x.example", subject, "höst", "auto-replied", when
    )
    two = records.outgoing(
        "pbem <pbem@example.org>", "ann@x.example", subject, "höst", "auto-replied", when
    )
    assert one["From"] is two["From"] and one["Subject"] is two["Subject"]
    plain = EmailMessage()
    for name, value in (
        ("From", "pbem <pbem@example.org>"),
        ("To", "ann@x.example"),
        ("Subject", subject),
        ("Date", "Tue, 02 Mar 2027 12:00:00 +0000"),
        ("Auto-Submitted", "auto-replied"),
        (mail.LOOP_HEADER, "höst"),
    ):
        plain[name] = value
    for msg in (one, plain):
        msg.set_content("Ordrar mottagna.\n" * 3, cte="quoted-printable")
    assert one.as_bytes() == plain.as_bytes()


@pytest.mark.parametrize("value", ["a\nBcc: eve@evil.example", "a\rb", "a\r\nb"])
def test_a_header_with_a_line_break_is_refused_as_the_standard_one_is(value: str) -> None:
    from email.message import EmailMessage

    from pbem.mail import records

    with pytest.raises(ValueError, match="linefeed or carriage return"):
        records.header("Subject", value)
    with pytest.raises(ValueError, match="linefeed or carriage return"):
        EmailMessage()["Subject"] = value


def test_a_header_ending_in_a_line_break_is_refused_too() -> None:
    """(The standard check lets a value ending in one through.)"""
    from pbem.mail import records

    for value in ("a\r", "a\n"):
        with pytest.raises(ValueError, match="linefeed or carriage return"):
            records.header("Subject", value)


@pytest.mark.parametrize(("same", "commits"), [(True, 1), (False, 2)])
def test_a_players_second_orders_in_a_group_commit_the_first_only_when_they_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same: bool, commits: int
) -> None:
    """The same orders again replace nothing, so the group goes on; other orders move the first
    ones aside, so those are committed first (a fetch stopped then keeps them once)."""
    root = two_games(tmp_path, addresses=True)
    game = root / "autumn"
    first = orders_for(game, "ann")
    held = read_game(game).state.owned("ann")
    other = next(t for t in held if f'"{t}"' not in first)
    second = first if same else orders_for(game, "ann", other)
    assert (first == second) is same
    box = into_maildir(
        tmp_path / "box",
        [
            message("ann@autumn.example", first, mid="<one@t>", minutes=1),
            message("ann@autumn.example", second, mid="<two@t>", minutes=2),
        ],
    )
    done = counted_commits(monkeypatch)
    result = mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED] * 2
    assert done == ["autumn"] * commits
    assert (game / "orders" / "ann.toml").read_text() == second
    assert len(list((game / "orders" / "replaced").glob("*"))) == (0 if same else 1)
