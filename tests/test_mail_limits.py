"""One message's size and MIME parts are bounded before it is parsed, and a message already
handled is never parsed again: whether it was read before is told from its headers alone.
Rejected messages are kept within a size and an age."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import flat
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    PLAYERS,
    fetch,
    into_maildir,
    into_mbox,
    message,
    orders_for,
    outbox,
    reply_to,
    run,
)
from test_mail_fetch import d, template  # noqa: F401 (fixtures)

from pbem import mail
from pbem.mail import found, inbox, sources
from pbem.mail.mailboxes import Mailbox
from pbem.mail.message import MAX_MESSAGE_BYTES, MAX_PARTS
from pbem.mail.records import KEPT_BYTES, REJECTED_DAYS

ALICE = PLAYERS[0][1]
V = mail.Verdict


def many_parts(sender: str, parts: int, mid: str = "<parts@t>") -> bytes:
    """A message of `parts` tiny MIME parts (as the 43 MB one, only fewer)."""
    head = (
        f"From: {sender}\nTo: {MODERATOR}\nSubject: parts\nMessage-ID: {mid}\n"
        "Date: Mon, 01 Mar 2027 12:00:00 +0000\nMIME-Version: 1.0\n"
        'Content-Type: multipart/mixed; boundary="b"\n\n'
    )
    return head.encode() + b"--b\nContent-Type: text/plain\n\nx\n" * parts + b"--b--\n"


def large(sender: str, size: int, mid: str = "<large@t>") -> bytes:
    msg = message(sender, "hello", mid=mid, subject="a photo", attach=b"x" * size,
                  filename="photo.jpg")  # fmt: skip
    return msg.as_bytes()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every time a message's body is parsed (its MIME parts walked): counted."""
    calls: list[int] = []
    walk = found.read

    def counted(msg: Any) -> Any:
        calls.append(1)
        return walk(msg)

    monkeypatch.setattr(found, "read", counted)
    return calls


def test_a_message_of_very_many_parts_is_refused_unparsed_with_a_sentence(
    d: Path,  # noqa: F811
    parses: list[int],  # noqa: F811
) -> None:
    raw = many_parts(ALICE, 2001)  # the limit is 2,000 parts (docs/mail.md)
    assert len(raw) < MAX_MESSAGE_BYTES  # refused for its parts alone
    result = fetch(d, [raw])
    (incoming,) = result.incoming
    assert parses == []
    assert incoming.verdict is V.REJECTED and incoming.player == "alice"
    assert incoming.reasons == ("not read: it has more than 2000 MIME parts, the most "
                                "pbem reads",)  # fmt: skip
    _, body = reply_to(d, result, "<parts@t>")
    assert 'Your message "parts" was not read: it has more than 2000 MIME parts' in body
    assert "Send your orders again in a message of their own" in body
    note = outbox(d)[str(result.note)].get_content()
    assert "<parts@t> from alice@example.org" in note and "alice told: not read" in note
    assert (d / str(incoming.kept)).read_bytes() == raw


def test_a_message_within_the_parts_is_read(d: Path) -> None:  # noqa: F811
    (incoming,) = fetch(d, [many_parts(ALICE, 2000)]).incoming
    assert "MIME parts" not in " ".join(incoming.reasons)  # read: it holds no orders
    assert incoming.reasons and "no orders" in " ".join(incoming.reasons)


@pytest.mark.parametrize("kind", ["maildir", "mbox"])
def test_a_message_read_before_is_never_parsed_again(d: Path, parses: list[int], kind: str) -> None:  # noqa: F811
    orders = message(ALICE, orders_for(d, "alice"), mid="<o@t>")
    messages = [orders.as_bytes(), many_parts(ALICE, 3 * MAX_PARTS), large(ALICE, 5 << 20)]
    box = d.parent / "box"
    sources_ = (
        mail.Sources(maildir=into_maildir(box, messages))
        if kind == "maildir"
        else mail.Sources(mbox=into_mbox(box, messages))
    )
    first = mail.fetch_orders(d, sources_, MODERATOR, NOW)
    assert [i.verdict for i in first.incoming] == [V.ACCEPTED, V.REJECTED, V.REJECTED]
    assert len(parses) == 1  # the orders; the two over a limit were not parsed at all
    again = mail.fetch_orders(d, sources_, MODERATOR, NOW + timedelta(hours=1))
    assert again.incoming == () and again.skipped == 3  # known where they are: not even read
    assert len(parses) == 1  # nothing parsed the second time


def test_a_root_parses_no_message_it_routed_before(
    template: Path,  # noqa: F811
    tmp_path: Path,
    parses: list[int],  # noqa: F811
) -> None:
    root = tmp_path / "games"
    friday = Path(shutil.copytree(template, root / GAME))
    messages = [
        message(PLAYERS[0][1], orders_for(friday, PLAYERS[0][0]), mid="<f@t>"),
        many_parts("eve@example.org", 3 * MAX_PARTS),
    ]
    box = Mailbox(mail.Sources(maildir=into_maildir(tmp_path / "Maildir", messages)))
    first = inbox.fetch(root, box, now=NOW)
    assert isinstance(first, inbox.RootFetch)
    assert [u.reasons[0] for u in first.unrouted] == [
        f"not read: it has more than {MAX_PARTS} MIME parts, the most pbem reads"
    ]
    n = len(parses)
    again = inbox.fetch(root, box, now=NOW)
    assert isinstance(again, inbox.RootFetch) and again.skipped == 2
    assert len(parses) == n


def test_a_message_too_large_is_read_no_further_than_the_limit(
    d: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    raw = large(ALICE, 6 << 20)
    box = into_maildir(d.parent / "box", [raw])
    read: list[int] = []
    take = sources._read

    def measured(handle: Any) -> bytes:
        data = take(handle)
        read.append(len(data))
        return data

    monkeypatch.setattr(sources, "_read", measured)
    (entry,) = list(sources.read_entries(mail.Sources(maildir=box)))
    assert read == [MAX_MESSAGE_BYTES + 1]
    assert entry.cut and entry.raw == raw[: 64 * 1024]  # its head: the first 64 KiB
    result = mail.fetch_orders(d, mail.Sources(maildir=box), MODERATOR, NOW)
    (incoming,) = result.incoming
    assert incoming.verdict is V.REJECTED
    assert incoming.reasons == ("not read: it is larger than 4 MiB, the most pbem reads",)
    assert (d / str(incoming.kept)).read_bytes() == raw[: 64 * 1024]  # only its head is kept
    _, body = reply_to(d, result, "<large@t>")
    assert 'Your message "a photo" was not read: it is larger than 4 MiB' in body


def test_a_stranger_too_large_is_told_to_the_moderator_only(d: Path) -> None:  # noqa: F811
    result = fetch(d, [large("eve@example.org", 6 << 20)])
    (incoming,) = result.incoming
    assert incoming.reply is None and incoming.verdict is V.REJECTED
    assert "not answered: eve@example.org is not a player's address" in incoming.reasons
    note = outbox(d)[str(result.note)].get_content()
    assert (
        "rejected, not answered (eve@example.org is not a player's address): not read: "
        "it is larger than 4 MiB" in flat(note)
    )


def test_a_large_rejected_message_is_kept_only_in_part(d: Path) -> None:  # noqa: F811
    raw = large("eve@example.org", 2 << 20)  # within the limit: read, and rejected
    (incoming,) = fetch(d, [raw]).incoming
    kept = d / str(incoming.kept)
    assert kept.read_bytes() == raw[:KEPT_BYTES]
    about = kept.with_suffix(".txt").read_text()
    assert f"Kept: the first {KEPT_BYTES} bytes of {len(raw)} or more" in about


def test_rejected_messages_are_removed_after_their_days_by_the_fetch_time(d: Path) -> None:  # noqa: F811
    (old,) = fetch(d, [message("eve@example.org", "hello", mid="<old@t>")]).incoming
    kept = d / str(old.kept)
    assert kept.is_file() and kept.with_suffix(".txt").is_file()
    box = into_maildir(d.parent / "later", [message("eve@example.org", "hi", mid="<new@t>")])
    within = NOW + timedelta(days=REJECTED_DAYS)
    run("mail", "fetch", d, "--maildir", box, "--now", within.isoformat())
    assert kept.is_file()
    after = NOW + timedelta(days=REJECTED_DAYS + 1)
    run("mail", "fetch", d, "--maildir", box, "--now", after.isoformat())
    assert not kept.exists() and not kept.with_suffix(".txt").exists()
    names = sorted(p.name for p in (d / "mail" / "rejected").iterdir())
    assert len(names) == 2  # the newer one stays, .eml and .txt


def test_the_answer_is_in_the_players_language(d: Path) -> None:  # noqa: F811
    run("config", d, "player.alice.language=sv")
    result = fetch(d, [many_parts(ALICE, MAX_PARTS + 1)])
    _, body = reply_to(d, result, "<parts@t>")
    assert f'Ditt meddelande "parts" lästes inte: det har fler än {MAX_PARTS} MIME-delar' in body
    assert "Skicka dina order igen i ett eget meddelande" in body


def test_a_players_message_too_large_for_no_game_is_answered_what_to_do(
    template: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    root = tmp_path / "games"
    shutil.copytree(template, root / GAME)
    box = into_maildir(tmp_path / "Maildir", [many_parts(ALICE, 3 * MAX_PARTS)])
    result = inbox.fetch(root, Mailbox(mail.Sources(maildir=box)), now=NOW)
    assert isinstance(result, inbox.RootFetch)
    (unrouted,) = result.unrouted
    assert unrouted.reasons[0] == f"not read: it has more than {MAX_PARTS} MIME parts, the most " \
        "pbem reads"  # fmt: skip
    answer = outbox(root)[str(unrouted.reply)]
    assert answer["Subject"] == "not read: your message is too large"
    words = answer.get_content()
    assert 'Your message "parts" was not read: it has more than' in words
    assert f"At this address you play in: {GAME}." in words
