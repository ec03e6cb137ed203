"""An IMAP server that drops the connection, stalls or answers nonsense in the middle of a
fetch: a sentence, never a traceback; each message is handled as it is downloaded, so those
handled before stay handled and the rest are read, once, by the next fetch; the run goes on
with the other games (none played by the autopilot while its mail may be waiting)."""

from __future__ import annotations

import json
import os
import shutil
import signal
from datetime import datetime
from pathlib import Path

import pytest
from dovecot import Dovecot
from fake_imap import PASSWORD, USER, fake_imap
from test_dead_mailbox import NOW, dovecot, make  # noqa: F401 (dovecot: a fixture)
from test_mail import into_maildir, message, orders_for, run

from pbem.club import batch
from pbem.mail import fetch as fetching
from pbem.mail import inbox
from pbem.mail.mailboxes import Mailbox
from pbem.mail.outcomes import Incoming
from pbem.records import clock
from pbem.records.history import history_count, read_history
from pbem.records.mailstate import MailState

ENV = {"PBEM_IMAP_PASSWORD": PASSWORD}
WHEN = clock.parse_instant(NOW)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Two games whose orders are all in the mailbox (first's in messages 1 and 2, second's
    in 3 and 4), and one whose orders are all in already."""
    games = tmp_path / "games"
    make(games, "first")
    make(games, "second")
    ready = make(games, "ready")
    for player in ("ann", "ben"):
        (ready / "orders" / f"{player}.toml").write_text(orders_for(ready, player))
    return games


def mail_for(root: Path) -> list[bytes]:
    out = []
    for game in ("first", "second"):
        for player in ("ann", "ben"):
            orders = orders_for(root / game, player)
            msg = message(f"{player}@example.org", orders, subject=f"[{game}] orders",
                          mid=f"<{game}.{player}@t>")  # fmt: skip
            out.append(msg.as_bytes())
    return out


def rows(output: str) -> dict[str, str]:
    """The run's summary rows by game: its result and detail."""
    out = {}
    for line in output.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in ("first", "second", "ready"):
            out[parts[1]] = f"{parts[0]} {parts[2]}"
    return out


def configure(root: Path, port: int) -> None:
    run("config", root, "imap_host=127.0.0.1", f"imap_port={port}", "imap_security=none",
        f"imap_user={USER}")  # fmt: skip


def accepted(game: Path) -> int:
    """How many answers "accepted" the game's fetches wrote."""
    return sum(b"accepted: your orders" in p.read_bytes() for p in (game / "outbox").glob("*"))


def test_a_server_that_drops_at_the_third_fetch_leaves_the_rest_for_next_time(
    root: Path,
) -> None:
    with fake_imap(mail_for(root), drop_at=3) as imap:
        configure(root, imap.port)
        output = run("run", root, "--fetch", "--now", NOW, env=ENV, code=1)
        assert "Traceback" not in output
        assert (
            f"the mailbox could not be read to the end: the IMAP server 127.0.0.1:{imap.port} "
            "broke off the connection when asked to read message 3"
        ) in output
        assert imap.folder.fetched == ["1", "2"] and imap.folder.seen == {"1", "2"}
        row = rows(output)
        assert row["first"].startswith("resolved")  # its orders came before the drop
        assert row["second"].startswith("held not played by the autopilot: this run could not")
        assert row["ready"].startswith("resolved")  # its orders were all in
        assert history_count(root / "second") == 1
        assert accepted(root / "first") == 2

        imap.folder.drop_at = None
        output = run("run", root, "--fetch", "--now", NOW, env=ENV)
        assert imap.folder.fetched == ["1", "2", "3", "4"]  # each read once
        assert imap.folder.seen == {"1", "2", "3", "4"}
    assert accepted(root / "first") == 2 and accepted(root / "second") == 2
    record = read_history(root / "second", 1)
    assert {o.player: o.autopilot for o in record.orders} == {"ann": False, "ben": False}
    routed = MailState.peek(root).seen["messages"]
    assert sorted(v["game"] for v in routed.values()) == ["first", "first", "second", "second"]


def test_a_server_that_stalls_is_a_sentence_and_the_other_games_go_on(root: Path) -> None:
    with fake_imap(mail_for(root), stall_at=3) as imap:
        result = inbox.fetch(root, Mailbox(imap=imap.server(timeout=0.5)), now=WHEN)
        assert isinstance(result, inbox.RootFetch) and not result.ok
        assert result.broken == (
            f"the IMAP server 127.0.0.1:{imap.port} failed when asked to read message 3: no "
            "answer within the timeout (timed out)"
        )
        assert [len(g.incoming) for g in result.games] == [2]
        assert imap.folder.seen == {"1", "2"}
    summary = batch.run_root(root, WHEN)
    results = {r.name: r.result for r in summary.games}
    assert results == {
        "first": batch.Result.RESOLVED,
        "second": batch.Result.HELD,  # its orders are in the mailbox not read to the end
        "ready": batch.Result.RESOLVED,
    }
    with fake_imap(mail_for(root)) as imap:
        imap.folder.seen |= {"1", "2"}
        again = inbox.fetch(root, Mailbox(imap=imap.server()), now=WHEN)
        assert again.broken is None and imap.folder.fetched == ["3", "4"]
    assert accepted(root / "second") == 2


def test_uids_that_are_not_numbers_are_a_sentence(root: Path) -> None:
    first = root / "first"
    with fake_imap(mail_for(root)[:2], odd_uids=["x7", "-1"]) as imap:
        configure(first, imap.port)
        output = run("mail", "fetch", first, "--now", NOW, env=ENV, code=1)
        assert imap.folder.seen == {"1", "2"}
    assert "Traceback" not in output
    assert "first: 2 messages read: 2 accepted." in output
    assert (
        f"the IMAP server 127.0.0.1:{imap.port} named messages by what are not UIDs ('x7', "
        "'-1'): those were not read"
    ) in output
    assert json.loads((first / "mail" / "fetched.json").read_text())["why"].startswith(
        f"the IMAP server 127.0.0.1:{imap.port} named messages"
    )


def test_a_real_server_stopped_in_the_middle_of_a_fetch(
    root: Path,
    dovecot: Dovecot,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    dovecot.deliver(*mail_for(root))
    box = Mailbox(imap=dovecot.server())
    take = fetching._Fetcher.take
    handled: list[str] = []

    def stopping(self: fetching._Fetcher, *args: object) -> Incoming:
        outcome = take(self, *args)  # type: ignore[arg-type]
        handled.append(outcome.message_id)
        if len(handled) == 2:
            cut_off(dovecot)
        return outcome

    monkeypatch.setattr(fetching._Fetcher, "take", stopping)
    result = inbox.fetch(root, box, now=WHEN)
    assert isinstance(result, inbox.RootFetch) and result.broken is not None
    assert "nothing was read" not in result.broken
    assert handled == ["<first.ann@t>", "<first.ben@t>"]
    # the second was handled, and the connection cut before it was marked seen
    assert ["\\Seen" in f for f in dovecot.flags()] == [True, False, False, False]
    again = inbox.fetch(root, box, now=WHEN)
    assert isinstance(again, inbox.RootFetch) and again.broken is None
    assert again.skipped == 1  # the second, known as handled: not handed to its game again
    assert handled == ["<first.ann@t>", "<first.ben@t>", "<second.ann@t>", "<second.ben@t>"]
    assert accepted(root / "first") == 2 and accepted(root / "second") == 2


def cut_off(server: Dovecot) -> None:
    """End the IMAP sessions of this test's Dovecot (its `imap` processes, by their ids): the
    server drops every connection in the middle, as a crash or a restart does."""
    master = (server.folder / "run" / "master.pid").read_text().split()[0]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" ", 1)
        except OSError:
            continue
        name, _, fields = rest.rpartition(") ")
        if name == "(imap" and fields.split()[1] == master:
            os.kill(int(pid), signal.SIGKILL)


def test_a_drop_is_recorded_as_a_mailbox_not_read(root: Path) -> None:
    with fake_imap(mail_for(root), drop_at=1) as imap:
        result = inbox.fetch(root, Mailbox(imap=imap.server()), now=WHEN)
    assert result.broken is not None
    record = json.loads((root / "mail" / "fetched.json").read_text())
    assert datetime.fromisoformat(record["failed"]) == WHEN and "at" not in record


def test_a_game_that_fails_part_way_leaves_the_others_going(root: Path, tmp_path: Path) -> None:
    ann_first, ben_first, ann_second, ben_second = mail_for(root)
    box = into_maildir(tmp_path / "Maildir", [ann_first, ann_second, ben_first, ben_second])
    outbox = root / "second" / "outbox"
    shutil.rmtree(outbox, ignore_errors=True)
    outbox.write_text("not a folder")  # the second game cannot write its answers
    output = run("mail", "fetch", root, "--maildir", box, "--now", NOW, code=1)
    assert "Traceback" not in output
    assert "failed: second: cannot write" in output
    assert "its 2 messages are read again next time" in output
    assert accepted(root / "first") == 2
    outbox.unlink()
    output = run("mail", "fetch", root, "--maildir", box, "--now", NOW)
    assert "4 messages read: 2 to 1 game, 0 for no game, 2 read before" in output
    assert accepted(root / "first") == 2 and accepted(root / "second") == 2


def test_a_message_the_server_will_not_give_is_named_and_the_others_read(root: Path) -> None:
    with fake_imap(mail_for(root), refused={"2"}) as imap:
        result = inbox.fetch(root, Mailbox(imap=imap.server()), now=WHEN)
        assert imap.folder.fetched == ["1", "3", "4"] and imap.folder.seen == {"1", "3", "4"}
        assert result.broken == (
            f"the IMAP server 127.0.0.1:{imap.port} would not read message 2: [SERVERBUG] "
            "cannot read it"
        )
        imap.folder.refused.clear()
        again = inbox.fetch(root, Mailbox(imap=imap.server()), now=WHEN)
        assert again.broken is None and imap.folder.fetched == ["1", "3", "4", "2"]
    assert accepted(root / "first") == 2 and accepted(root / "second") == 2
