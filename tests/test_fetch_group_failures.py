"""The grouped fetch (messages committed a group at a time, files written in the background)
when a write fails, a fetch is stopped or killed part way, or a game is named through a link:
nothing is recorded that was not written, and nothing written is lost or kept twice."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest
from test_damaged_state import two_games
from test_mail import MODERATOR, NOW, into_maildir, message, orders_for

from pbem import mail
from pbem.errors import PbemError
from pbem.records import disk
from pbem.records.mailstate import MailState


def failing_once(monkeypatch: pytest.MonkeyPatch, hit: str) -> list[Path]:
    """Make the first background write of a path ending in `hit` fail as on a full disk."""
    failed: list[Path] = []
    real = disk._write_one

    def write(path: Path, raw: bytes) -> None:
        if str(path).endswith(hit) and not failed:
            failed.append(path)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, raw)

    monkeypatch.setattr(disk, "_write_one", write)
    return failed


def ann_twice(tmp_path: Path, later: str, ben: bool = False) -> tuple[Path, str, Path]:
    """A folder of two games, ann's orders for autumn (the text of them) and a Maildir holding
    them and then other orders of hers (`later` added); `ben`: and ben's orders for winter."""
    root = two_games(tmp_path, addresses=True)
    text = orders_for(root / "autumn", "ann")
    messages = [
        message("ann@autumn.example", text, minutes=1, mid="<one@t>"),
        message("ann@autumn.example", text + later, minutes=2, mid="<two@t>"),
    ]
    if ben:
        winter = orders_for(root / "winter", "ben")
        messages.append(message("ben@winter.example", winter, mid="<w@t>"))
    return root, text, into_maildir(tmp_path / "box", messages)


def test_a_failed_orders_write_found_by_the_next_message_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background write that failed, first found by the same player's next orders in the
    group (`disk.written`), stays failed for the commit that covers it: the fetch stops, and the
    earlier message is not recorded as accepted without its orders file."""
    root, _, box = ann_twice(tmp_path, "# later\n")
    game = root / "autumn"
    failed = failing_once(monkeypatch, "orders/ann.toml")
    with pytest.raises(PbemError):
        mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert failed  # the first orders file could not be written
    assert not (game / "orders" / "ann.toml").exists()
    seen = MailState.peek(game).seen
    # the promise: a message is recorded only once the files it wrote are on the disk
    assert "<one@t>" not in seen["messages"], "recorded, its orders never written"


def killed_at_the_first_commit(game: Path, box: Path) -> None:
    """A fetch killed (`kill -9`) just before its first commit writes anything."""
    pid = os.fork()
    if pid == 0:  # the child: killed as the first transaction begins
        try:
            MailState._write = lambda self, work, fresh=False: os._exit(9)  # type: ignore[method-assign]
            mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 9


def test_a_fetch_killed_before_its_group_is_committed_keeps_no_orders_twice(
    tmp_path: Path,
) -> None:
    """A player's two orders messages in one group, and the fetch killed before the group's
    commit: read again, the second finds the first's orders committed before it moves them to
    orders/replaced/, so they are kept there once, as an uninterrupted fetch keeps them (not
    twice, with the newest among them as if the first had replaced it)."""
    root, text, box = ann_twice(tmp_path, "# changed my mind\n")
    game = root / "autumn"
    killed_at_the_first_commit(game, box)
    result = mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED] * 2
    assert (game / "orders" / "ann.toml").read_text() == text + "# changed my mind\n"
    kept = sorted((game / "orders" / "replaced").iterdir())
    # as an uninterrupted fetch leaves it: the first message's orders, kept once
    assert [p.read_text() for p in kept] == [text], [p.name for p in kept]


def test_a_fetch_stopped_while_its_games_commit_reads_a_failed_games_messages_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's fetch stopped (Ctrl-C) while its games commit side by side, just as they have
    ended and one of them (winter) has failed: the folder does not record winter's messages as
    routed (winter never recorded them), so the next fetch reads them again."""
    import concurrent.futures

    from test_fetch_groups import orders_of_two_games

    from pbem.errors import DiskError
    from pbem.mail import inbox, rootfetch
    from pbem.mail.mailboxes import Mailbox
    from pbem.mail.sources import Sources

    root, box = orders_of_two_games(tmp_path)
    real_commit, real_wait = MailState.commit, concurrent.futures.wait

    def commit(self: MailState) -> None:
        if self.directory.name == "winter" and self.pending:
            self._changes = []
            raise DiskError(f"cannot write {self.path}: the disk is full: free some space")
        real_commit(self)

    def wait(futures, *args, **kwargs):  # type: ignore[no-untyped-def]
        done = real_wait(futures, *args, **kwargs)
        if len(futures) == 2 and not stopped:
            stopped.append(True)
            raise KeyboardInterrupt  # the moderator's Ctrl-C, as the commits end
        return done

    stopped: list[bool] = []
    with monkeypatch.context() as patch:
        patch.setattr(rootfetch, "ROOT_GROUP", 4)  # the four messages make one group
        patch.setattr(MailState, "commit", commit)
        patch.setattr(concurrent.futures, "wait", wait)
        with pytest.raises(KeyboardInterrupt):
            inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert MailState.peek(root / "winter").seen["messages"] == {}
    routed = MailState.peek(root).seen["messages"]
    # the promise: a game whose commit fails has its messages read again, by the folder too
    assert "winter" not in {v["game"] for v in routed.values()}, routed
    inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert len(MailState.peek(root / "winter").seen["messages"]) == 2
    assert len(MailState.peek(root).seen["messages"]) == 4


def test_a_game_named_through_a_link_and_dot_dot_gets_its_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game named `link/../autumn` (the link to a folder elsewhere): its background writes go
    where the system takes the path (the link followed, then `..`), into the game, not into a
    folder made beside the link (`name/..` dropped as text)."""
    root = two_games(tmp_path / "real", addresses=True)
    (root / "deep").mkdir()
    (tmp_path / "link").symlink_to(root / "deep")
    monkeypatch.chdir(tmp_path)
    game = Path("link/../autumn")  # the game: link/.. is the folder of games
    assert (game / "game.toml").is_file()
    box = into_maildir(
        tmp_path / "box",
        [message("ann@autumn.example", orders_for(root / "autumn", "ann"), minutes=1)],
    )
    result = mail.fetch_orders(game, mail.Sources(maildir=box), MODERATOR, NOW)
    (outcome,) = result.incoming
    assert outcome.verdict is mail.Verdict.ACCEPTED
    assert not (tmp_path / "autumn").exists(), "written to a folder made beside the link"
    assert (root / "autumn" / "outbox" / str(outcome.reply)).is_file()
    assert (root / "autumn" / "orders" / "ann.toml").is_file()


def test_a_folder_fetch_whose_game_failed_an_orders_write_reads_its_messages_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same in a folder of games: a game whose orders write failed, found while it takes a
    later message, records neither message, and the folder neither; the other game's are."""
    from pbem.mail import inbox
    from pbem.mail.mailboxes import Mailbox
    from pbem.mail.sources import Sources

    root, text, box = ann_twice(tmp_path, "# later\n", ben=True)
    game = root / "autumn"
    failing_once(monkeypatch, "orders/ann.toml")
    result = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(result, inbox.RootFetch) and not result.ok
    assert MailState.peek(game).seen["messages"] == {}
    routed = MailState.peek(root).seen["messages"]
    assert sorted(str(v["game"]) for v in routed.values()) == ["winter"], routed
    again = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(again, inbox.RootFetch) and again.ok
    assert len(MailState.peek(game).seen["messages"]) == 2
    assert (game / "orders" / "ann.toml").read_text() == text + "# later\n"


def test_a_game_given_up_on_its_first_message_leaves_no_failed_write_to_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game given up while it takes the first message of its group (nothing finished to
    commit) still settles its own writes: its failed background write is told as that game's
    failure, and the folder records the other game's messages rather than failing with it."""
    from pbem.mail import inbox
    from pbem.mail.mailboxes import Mailbox
    from pbem.mail.sources import Sources

    root = two_games(tmp_path, addresses=True)
    game = root / "autumn"
    outbox = game / "outbox"
    if outbox.exists():
        shutil.rmtree(outbox)
    outbox.write_text("not a folder\n")  # the answer cannot be written
    box = into_maildir(
        tmp_path / "box",
        [
            message("ann@autumn.example", orders_for(game, "ann"), mid="<a@t>"),
            message("ben@winter.example", orders_for(root / "winter", "ben"), mid="<w@t>"),
        ],
    )
    failing_once(monkeypatch, "orders/ann.toml")  # and the orders write fails in the background
    result = inbox.fetch(root, Mailbox(Sources(maildir=box)), now=NOW)
    assert isinstance(result, inbox.RootFetch)
    assert any(f.startswith("autumn:") for f in result.failed), result.failed
    assert len(MailState.peek(root / "winter").seen["messages"]) == 1
    routed = MailState.peek(root).seen["messages"]
    assert sorted(str(v["game"]) for v in routed.values()) == ["winter"], routed
