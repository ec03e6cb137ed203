"""Reading orders from an IMAP folder, through the standard library's imaplib.

Only unseen messages are read, without marking them (BODY.PEEK); a message is marked seen
once it has been handled, so a run that stops half way reads the rest next time, and no
message is handled twice (pbem also remembers every Message-ID it has handled).
"""

from __future__ import annotations

import contextlib
import imaplib
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pbem.errors import PbemError
from pbem.game.settings import DEFAULT_PORTS, Security, password


class ImapError(PbemError):
    """The IMAP server cannot be reached, refuses the login or has no such folder."""


@dataclass(frozen=True)
class ImapServer:
    """Where to read: host, port, protection, login, folder (the password asked for only when
    the connection is made: PBEM_IMAP_PASSWORD, else a prompt)."""

    host: str
    port: int
    security: Security = Security.SSL
    user: str = ""
    folder: str = "INBOX"
    ask: Callable[[], str] | None = field(default=None, compare=False)
    tls_context: ssl.SSLContext | None = field(default=None, compare=False)
    timeout: float = 30.0

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def imap_server(
    spec: str,
    security: Security = Security.SSL,
    user: str | None = None,
    folder: str | None = None,
    ask: Callable[[], str] | None = None,
) -> ImapServer:
    """`HOST[:PORT]` (993 with SSL, else 143 when left out) into a server to read."""
    host, colon, port_text = spec.strip().rpartition(":")
    if not colon:
        host, port_text = port_text, str(DEFAULT_PORTS["imap"][security])
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ImapError(
            f"--imap must be HOST or HOST:PORT, e.g. imap.example.org:993; got '{spec}'"
        )
    if not user:
        raise ImapError("give the IMAP login with --user (the password: PBEM_IMAP_PASSWORD)")
    return ImapServer(host, int(port_text), security, user, folder or "INBOX", ask)


@dataclass(frozen=True)
class ImapMessage:
    """One unseen message: its UID in the folder and its bytes."""

    uid: str
    raw: bytes


class ImapFolder:
    """An open, selected IMAP folder: its unseen messages, and marking one seen."""

    def __init__(self, client: imaplib.IMAP4, server: ImapServer) -> None:
        self.client = client
        self.server = server

    def unseen(self) -> list[ImapMessage]:
        """Every message not yet seen, oldest first, read without marking it seen."""
        found = self._ok(self.client.uid("SEARCH", "UNSEEN"), "search the folder")
        first = found[0] if found else b""
        uids = [u.decode() for u in (first if isinstance(first, bytes) else b"").split()]
        out: list[ImapMessage] = []
        for uid in sorted(uids, key=int):
            data = self._ok(self.client.uid("FETCH", uid, "(BODY.PEEK[])"), f"read message {uid}")
            raw = next((part[1] for part in data if isinstance(part, tuple)), None)
            if isinstance(raw, bytes):
                out.append(ImapMessage(uid, raw))
        return out

    def mark_seen(self, uid: str) -> None:
        self._ok(self.client.uid("STORE", uid, "+FLAGS", "(\\Seen)"), f"mark message {uid} seen")

    def _ok(self, answer: tuple[str, list[object]], what: str) -> list[object]:
        kind, data = answer
        if kind != "OK":
            raise ImapError(f"the IMAP server {self.server} would not {what}: {_text(data)}")
        return data


def _text(data: object) -> str:
    if isinstance(data, list) and data:
        data = data[0]
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)


@contextlib.contextmanager
def open_folder(server: ImapServer) -> Iterator[ImapFolder]:
    """Connect, log in and select the folder; log out at the end, whatever happens."""
    context = server.tls_context or ssl.create_default_context()
    try:
        if server.security is Security.SSL:
            client: imaplib.IMAP4 = imaplib.IMAP4_SSL(
                server.host, server.port, ssl_context=context, timeout=server.timeout
            )
        else:
            client = imaplib.IMAP4(server.host, server.port, timeout=server.timeout)
            if server.security is Security.STARTTLS:
                client.starttls(ssl_context=context)
    except (OSError, imaplib.IMAP4.error) as err:
        raise ImapError(
            f"cannot connect to the IMAP server {server} ({server.security.value}): "
            f"{err or type(err).__name__}; nothing was read"
        ) from None
    try:
        secret = password("imap", server.user, server.ask)
        try:
            client.login(server.user, secret)
        except imaplib.IMAP4.error as err:
            raise ImapError(
                f"the IMAP server {server} refused the login of {server.user}: {err}; "
                "check the user and PBEM_IMAP_PASSWORD"
            ) from None
        try:
            kind, data = client.select(_quoted(server.folder))
        except imaplib.IMAP4.error as err:
            kind, data = "NO", [str(err).encode()]
        if kind != "OK":
            raise ImapError(
                f"there is no folder '{server.folder}' on {server} for {server.user}: {_text(data)}"
            )
        yield ImapFolder(client, server)
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error):
            client.logout()


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
