"""A fetch costs the new mail: the messages of its mailbox that an earlier fetch handled are
skipped unread (a Maildir entry by its name, an mbox message by its offset, an IMAP message by
its UID), and a mailbox that is not what it was (an mbox rewritten or cut short, an IMAP folder
of another UIDVALIDITY, a mail state from before the records) is read whole, as before, each
message handled before known by its Message-ID. No message is taken twice, none skipped that
was not handled."""

from __future__ import annotations

import mailbox
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from dovecot import Dovecot, start
from test_mail import MODERATOR, NOW, into_maildir, make_template, message, orders_for

from pbem import mail
from pbem.mail import inbox
from pbem.mail.imap import ImapFolder
from pbem.mail.mailboxes import Mailbox
from pbem.records.mailstate import DATABASE, SCHEMA, MailState
from pbem.records.settings import Security


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game_dir(template: Path, tmp_path: Path) -> Path:
    """A new game of three players (a copy of one made once)."""
    return Path(shutil.copytree(template, tmp_path / template.name))


def orders_mail(game: Path, player: str, n: int) -> bytes:
    """`player`'s orders, the n-th message they send (a later one replaces the earlier)."""
    sender = f"{player}@example.org"
    return message(sender, orders_for(game, player), minutes=n, mid=f"<{player}.{n}@t>").as_bytes()


def fetch(game: Path, **where: Path) -> mail.FetchResult:
    return mail.fetch_orders(game, mail.Sources(**where), MODERATOR, NOW)  # type: ignore[arg-type]


def taken(result: mail.FetchResult) -> list[tuple[str, mail.Verdict]]:
    return [(i.message_id, i.verdict) for i in result.incoming]


def replies(game: Path) -> int:
    return len(list((game / "outbox").glob("reply-*.eml")))


# --- Maildir ---------------------------------------------------------------------------------


def test_a_maildir_entry_handled_is_skipped_unread_by_its_name(game_dir: Path) -> None:
    box = into_maildir(game_dir.parent / "Maildir", [orders_mail(game_dir, "alice", 1)])
    into_maildir(box, [])
    first = fetch(game_dir, maildir=box)
    assert taken(first) == [("<alice.1@t>", mail.Verdict.ACCEPTED)]
    [entry] = (box / "new").iterdir()
    # the file's bytes changed in place, its size and time kept: a fetch that read it would
    # find a message without a sender; the entry is known by its name and skipped unread
    info = entry.stat()
    entry.write_bytes(b"x" * info.st_size)
    os.utime(entry, ns=(info.st_atime_ns, info.st_mtime_ns))
    again = fetch(game_dir, maildir=box)
    assert again.incoming == () and again.skipped == 1
    assert "1 message read: 0 accepted, 1 already processed." in again.lines()[-1]
    # moved to cur/ with its flags by a mail program: the same entry, still skipped
    entry.rename(box / "cur" / f"{entry.name}:2,S")
    assert fetch(game_dir, maildir=box).skipped == 1
    # a new message is read, the one handled is not
    newer = box / "new" / "1900000000.M9P1.test"
    newer.write_bytes(orders_mail(game_dir, "bob", 2))
    third = fetch(game_dir, maildir=box)
    assert taken(third) == [("<bob.2@t>", mail.Verdict.ACCEPTED)] and third.skipped == 1
    assert replies(game_dir) == 2


def test_a_new_message_under_a_name_used_before_is_read(game_dir: Path) -> None:
    box = into_maildir(game_dir.parent / "Maildir", [orders_mail(game_dir, "alice", 1)])
    fetch(game_dir, maildir=box)
    [entry] = (box / "new").iterdir()
    entry.write_bytes(orders_mail(game_dir, "alice", 2))  # another message, the same name
    again = fetch(game_dir, maildir=box)
    assert taken(again) == [("<alice.2@t>", mail.Verdict.ACCEPTED)] and again.skipped == 0
    assert replies(game_dir) == 2
    assert fetch(game_dir, maildir=box).skipped == 1  # and is recorded in its turn


def test_a_message_delivered_twice_under_two_names_is_taken_once(game_dir: Path) -> None:
    raw = orders_mail(game_dir, "alice", 1)
    box = into_maildir(game_dir.parent / "Maildir", [raw])
    fetch(game_dir, maildir=box)
    (box / "new" / "1900000000.M8P1.test").write_bytes(raw)  # the same message, delivered again
    again = fetch(game_dir, maildir=box)
    assert taken(again) == [("<alice.1@t>", mail.Verdict.DUPLICATE)] and again.skipped == 1
    assert replies(game_dir) == 1 and not (game_dir / "orders" / "replaced").exists()
    third = fetch(game_dir, maildir=box)
    assert third.incoming == () and third.skipped == 2


# --- mbox ------------------------------------------------------------------------------------


def into_mbox(path: Path, messages: list[bytes]) -> Path:
    """Messages appended to an mbox, as a delivery agent appends them."""
    box = mailbox.mbox(path, create=True)
    for raw in messages:
        box.add(raw)
    box.flush()
    box.close()
    return path


def test_mbox_messages_handled_are_skipped_by_their_offsets(game_dir: Path) -> None:
    path = game_dir.parent / "mbox"
    into_mbox(path, [orders_mail(game_dir, p, 1) for p in ("alice", "bob", "carol")])
    assert [v for _, v in taken(fetch(game_dir, mbox=path))] == [mail.Verdict.ACCEPTED] * 3
    into_mbox(path, [orders_mail(game_dir, "alice", 2), orders_mail(game_dir, "bob", 2)])
    again = fetch(game_dir, mbox=path)
    assert taken(again) == [
        ("<alice.2@t>", mail.Verdict.ACCEPTED),
        ("<bob.2@t>", mail.Verdict.ACCEPTED),
    ]
    assert again.skipped == 3
    third = fetch(game_dir, mbox=path)
    assert third.incoming == () and third.skipped == 5
    assert replies(game_dir) == 5


def test_an_mbox_rewritten_is_read_whole_and_nothing_is_taken_twice(game_dir: Path) -> None:
    path = game_dir.parent / "mbox"
    into_mbox(path, [orders_mail(game_dir, p, 1) for p in ("alice", "bob", "carol")])
    fetch(game_dir, mbox=path)
    box = mailbox.mbox(path)
    box.lock()
    box.remove(next(iter(box.keys())))  # a mail program deletes alice's: the file is rewritten
    box.add(orders_mail(game_dir, "carol", 2))
    box.flush()
    box.unlock()
    box.close()
    again = fetch(game_dir, mbox=path)
    assert taken(again) == [
        ("<bob.1@t>", mail.Verdict.DUPLICATE),
        ("<carol.1@t>", mail.Verdict.DUPLICATE),
        ("<carol.2@t>", mail.Verdict.ACCEPTED),
    ]
    assert again.skipped == 0 and replies(game_dir) == 4
    third = fetch(game_dir, mbox=path)  # recorded afresh
    assert third.incoming == () and third.skipped == 3


def test_an_mbox_cut_short_and_written_again_is_read_whole(game_dir: Path) -> None:
    path = game_dir.parent / "mbox"
    into_mbox(path, [orders_mail(game_dir, p, 1) for p in ("alice", "bob")])
    fetch(game_dir, mbox=path)
    path.write_bytes(b"")  # emptied, then new mail: the offsets handled hold other messages
    into_mbox(path, [orders_mail(game_dir, "carol", 1), orders_mail(game_dir, "alice", 1)])
    again = fetch(game_dir, mbox=path)
    assert taken(again) == [
        ("<carol.1@t>", mail.Verdict.ACCEPTED),
        ("<alice.1@t>", mail.Verdict.DUPLICATE),
    ]
    assert again.skipped == 0


def test_an_mbox_written_again_with_messages_where_the_old_were_is_read(game_dir: Path) -> None:
    path = game_dir.parent / "mbox"
    into_mbox(path, [orders_mail(game_dir, "alice", 1)])
    fetch(game_dir, mbox=path)
    size = path.stat().st_size
    path.write_bytes(b"")  # another message of the same length at the same offset
    into_mbox(path, [orders_mail(game_dir, "alice", 2)])
    assert path.stat().st_size == size
    again = fetch(game_dir, mbox=path)
    assert taken(again) == [("<alice.2@t>", mail.Verdict.ACCEPTED)] and again.skipped == 0


def test_a_message_handled_that_grew_is_read_again(game_dir: Path) -> None:
    path = game_dir.parent / "mbox"
    into_mbox(path, [orders_mail(game_dir, "alice", 1)])
    fetch(game_dir, mbox=path)
    with path.open("ab") as handle:  # more lines of the last message, no new "From " line
        handle.write(b"more text of the same message\n")
    again = fetch(game_dir, mbox=path)
    assert again.skipped == 0 and len(again.incoming) == 1  # known by its Message-ID
    assert replies(game_dir) == 1 + (again.incoming[0].reply is not None)


def test_a_mail_state_from_before_the_records_reads_everything_once(game_dir: Path) -> None:
    box = into_maildir(game_dir.parent / "Maildir", [orders_mail(game_dir, "alice", 1)])
    fetch(game_dir, maildir=box)
    database = game_dir / "mail" / DATABASE
    with sqlite3.connect(database) as db:  # the state as the pbem before this one left it
        db.execute("DROP TABLE handled")
        db.execute("UPDATE schema_version SET version = 1")
    assert MailState.peek(game_dir).seen["messages"]  # still read as it is
    again = fetch(game_dir, maildir=box)
    assert taken(again) == [("<alice.1@t>", mail.Verdict.DUPLICATE)] and again.skipped == 0
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT max(version) FROM schema_version").fetchone() == (SCHEMA,)
    third = fetch(game_dir, maildir=box)
    assert third.incoming == () and third.skipped == 1
    assert replies(game_dir) == 1


# --- IMAP ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dovecot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dovecot]:
    yield from start(tmp_path_factory.mktemp("dovecot"))


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The UIDs of the messages downloaded from the server."""
    got: list[str] = []
    real = ImapFolder.message

    def counted(self: ImapFolder, uid: str, limit: int) -> object:
        got.append(uid)
        return real(self, uid, limit)

    monkeypatch.setattr(ImapFolder, "message", counted)
    return got


def unsee(dovecot: Dovecot, folder: str) -> None:
    """Another mail program marks every message unseen again."""
    client = dovecot.client()
    try:
        client.select(folder)
        assert client.store("1:*", "-FLAGS", "(\\Seen)")[0] == "OK"
    finally:
        client.logout()


def validity(dovecot: Dovecot, folder: str) -> bytes:
    client = dovecot.client()
    try:
        client.select(folder)
        return bytes(client.response("UIDVALIDITY")[1][-1])
    finally:
        client.logout()


def test_imap_messages_handled_are_skipped_by_their_uids(
    game_dir: Path, dovecot: Dovecot, downloads: list[str]
) -> None:
    dovecot.deliver(*(orders_mail(game_dir, p, 1) for p in ("alice", "bob")), folder="Uids")
    box = Mailbox(imap=dovecot.server(Security.SSL, "Uids"))
    first = inbox.fetch(game_dir, box, None, NOW)
    assert isinstance(first, mail.FetchResult) and len(first.incoming) == 2
    assert downloads == ["1", "2"]
    unsee(dovecot, "Uids")  # handled, unseen again: known by their UIDs, marked, not downloaded
    dovecot.deliver(orders_mail(game_dir, "carol", 1), folder="Uids")
    again = inbox.fetch(game_dir, box, None, NOW)
    assert isinstance(again, mail.FetchResult)
    assert taken(again) == [("<carol.1@t>", mail.Verdict.ACCEPTED)] and again.skipped == 2
    assert downloads == ["1", "2", "3"]
    assert all("\\Seen" in flags for flags in dovecot.flags("Uids"))


def test_imap_uids_of_another_uidvalidity_are_not_trusted(
    game_dir: Path, dovecot: Dovecot, downloads: list[str]
) -> None:
    dovecot.deliver(orders_mail(game_dir, "alice", 1), folder="Again")
    box = Mailbox(imap=dovecot.server(Security.SSL, "Again"))
    inbox.fetch(game_dir, box, None, NOW)
    before = validity(dovecot, "Again")
    client = dovecot.client()
    try:  # the folder made again: its UIDs start over, and UID 1 is another message
        assert client.delete("Again")[0] == "OK"
    finally:
        client.logout()
    dovecot.deliver(
        orders_mail(game_dir, "bob", 1), orders_mail(game_dir, "alice", 1), folder="Again"
    )
    assert validity(dovecot, "Again") != before
    again = inbox.fetch(game_dir, box, None, NOW)
    assert isinstance(again, mail.FetchResult)
    assert taken(again) == [
        ("<bob.1@t>", mail.Verdict.ACCEPTED),
        ("<alice.1@t>", mail.Verdict.DUPLICATE),
    ]
    assert again.skipped == 0 and downloads == ["1", "1", "2"]
    unsee(dovecot, "Again")
    third = inbox.fetch(game_dir, box, None, NOW)
    assert isinstance(third, mail.FetchResult) and third.skipped == 2 and third.incoming == ()
    assert replies(game_dir) == 2
