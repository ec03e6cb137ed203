"""Reading orders from an IMAP folder, against a real Dovecot on loopback."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import replace
from email.message import EmailMessage
from pathlib import Path

import pytest
from dovecot import Dovecot, free_port, start

from pbem.errors import PbemError
from pbem.mail.imap import ImapError, ImapFolder, ImapMessage, imap_server, open_folder
from pbem.mail.message import MAX_MESSAGE_BYTES
from pbem.records.settings import Security


@pytest.fixture(scope="module")
def dovecot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dovecot]:
    yield from start(tmp_path_factory.mktemp("dovecot"))


@pytest.fixture
def folder(request: pytest.FixtureRequest) -> str:
    """A folder of its own for each test."""
    return "T" + str(abs(hash(request.node.nodeid)))


def unseen(box: ImapFolder) -> list[ImapMessage]:
    """Every unseen message of the folder, as a fetch reads them."""
    found = [box.message(uid, MAX_MESSAGE_BYTES) for uid in box.unseen_uids()[0]]
    return [m for m in found if m is not None]


def raw(n: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"player{n}@example.org"
    msg["To"] = "moderator@example.org"
    msg["Subject"] = f"orders {n}"
    msg["Message-ID"] = f"<{n}@example.org>"
    msg.set_content(f'game = "g"\nturn = {n}\n')
    return msg.as_bytes()


@pytest.mark.parametrize("security", [Security.SSL, Security.STARTTLS])
def test_unseen_messages_are_read_oldest_first_without_marking_them(
    dovecot: Dovecot, folder: str, security: Security
) -> None:
    folder += security.value
    dovecot.deliver(raw(1), raw(2), folder=folder)
    with open_folder(dovecot.server(security, folder)) as box:
        messages = unseen(box)
    assert [b"Subject: orders 1" in m.raw for m in messages] == [True, False]
    assert [b"Subject: orders 2" in m.raw for m in messages] == [False, True]
    assert not any("\\Seen" in f for f in dovecot.flags(folder))


def test_a_message_marked_seen_is_not_read_again(dovecot: Dovecot, folder: str) -> None:
    dovecot.deliver(raw(1), raw(2), raw(3), folder=folder)
    with open_folder(dovecot.server(folder=folder)) as box:
        first = unseen(box)
        box.mark_seen(first[1].uid)
    with open_folder(dovecot.server(folder=folder)) as box:
        assert [m.uid for m in unseen(box)] == [first[0].uid, first[2].uid]
    assert ["\\Seen" in f for f in dovecot.flags(folder)] == [False, True, False]


def test_no_more_than_the_limit_of_a_message_is_downloaded(dovecot: Dovecot, folder: str) -> None:
    big = raw(1) + b"x" * (MAX_MESSAGE_BYTES + 1000) + b"\n"
    dovecot.deliver(big, raw(2), folder=folder)
    with open_folder(dovecot.server(folder=folder)) as box:
        first, second = unseen(box)
    assert len(first.raw) == MAX_MESSAGE_BYTES + 1  # the rest stays on the server
    assert b"Subject: orders 1" in first.raw
    assert b"Subject: orders 2" in second.raw
    assert not any("\\Seen" in f for f in dovecot.flags(folder))


def test_a_wrong_password_is_refused_with_the_reason(dovecot: Dovecot) -> None:
    server = replace(dovecot.server(), ask=lambda: "wrong")
    with pytest.raises(ImapError, match="refused the login of moderator"), open_folder(server):
        pass


def test_the_password_comes_from_the_environment(
    dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "correct horse")
    with open_folder(replace(dovecot.server(), ask=None)) as box:
        assert unseen(box) == []


def test_without_a_password_it_says_where_to_put_one(
    dovecot: Dovecot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PBEM_IMAP_PASSWORD", raising=False)
    server = replace(dovecot.server(), ask=None)
    with pytest.raises(PbemError, match="set PBEM_IMAP_PASSWORD"), open_folder(server):
        pass


def test_a_folder_that_does_not_exist_is_named(dovecot: Dovecot) -> None:
    server = dovecot.server(folder="Nowhere")
    with pytest.raises(ImapError, match="there is no folder 'Nowhere'"), open_folder(server):
        pass


def test_a_server_that_is_not_trusted_is_not_used(dovecot: Dovecot) -> None:
    server = replace(dovecot.server(), tls_context=ssl.create_default_context())
    with pytest.raises(ImapError, match="cannot connect to the IMAP server"), open_folder(server):
        pass


def test_a_server_that_does_not_answer_is_named(dovecot: Dovecot) -> None:
    server = replace(dovecot.server(), port=free_port())
    with (
        pytest.raises(
            ImapError, match=f"cannot connect to the IMAP server 127.0.0.1:{server.port}"
        ),
        open_folder(server),
    ):
        pass


@pytest.mark.parametrize(
    ("spec", "security", "port"),
    [("imap.example.org", Security.SSL, 993), ("imap.example.org", Security.STARTTLS, 143),
     ("imap.example.org:1143", Security.NONE, 1143), ("[::1]:993", Security.SSL, 993)],
)  # fmt: skip
def test_host_and_port(spec: str, security: Security, port: int) -> None:
    server = imap_server(spec, security, "u")
    assert (server.port, server.folder) == (port, "INBOX")
    assert server.host in ("imap.example.org", "::1")


@pytest.mark.parametrize("spec", ["", "host:0", "host:x", ":993"])
def test_a_bad_server_is_refused(spec: str) -> None:
    with pytest.raises(ImapError, match="--imap must be HOST"):
        imap_server(spec, Security.SSL, "u")


def test_a_login_is_required() -> None:
    with pytest.raises(ImapError, match="--user"):
        imap_server("imap.example.org", Security.SSL, None)


def test_the_mail_lives_under_the_tests_own_folder(dovecot: Dovecot) -> None:
    assert Path(dovecot.folder / "mail").is_dir()
