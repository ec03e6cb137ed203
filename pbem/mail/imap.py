"""Reading orders from an IMAP folder, through the standard library's imaplib.

Only unseen messages are read, without marking them (BODY.PEEK), one at a time and no more
than a limit of each; a message is marked seen once it has been handled, so a run that stops
half way (the server dropped, stalled) reads the rest next time, and no message is handled
twice (pbem also remembers every Message-ID it has handled).
"""

from __future__ import annotations

import contextlib
import imaplib
import ssl
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from pbem.errors import PbemError
from pbem.records.settings import DEFAULT_PORTS, Security, password
from pbem.terminal import printable


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
    """One unseen message: its UID in the folder and its bytes (at most `limit` bytes and
    one: a longer message is cut there, and known to be too large)."""

    uid: str
    raw: bytes


class ImapFolder:
    """An open, selected IMAP folder: its unseen messages, and marking one seen. Every
    answer the server gives, or fails to give (a dropped connection, a timeout, nonsense), is
    an ImapError saying what was being done."""

    def __init__(self, client: imaplib.IMAP4, server: ImapServer) -> None:
        self.client = client
        self.server = server
        self.broken = False
        """Whether the connection failed (it is then closed, not logged out of)."""
        self.uidvalidity: str | None = None
        """The folder's UIDVALIDITY, as the server said when it was opened (None when it did
        not): while it stays the same, a UID names the same message."""

    @property
    def name(self) -> str:
        """The folder, as the mail state records where a message was found."""
        s = self.server
        return f"imap:{s.user}@{s.host}:{s.port}/{s.folder}"

    def unseen_uids(self) -> tuple[list[str], list[str]]:
        """The UIDs of the messages not yet seen, oldest first, and the tokens of the
        server's answer that are no UID (a misbehaving server: those are not read)."""
        found = self._ok(lambda: self.client.uid("SEARCH", "UNSEEN"), "search the folder")
        first = found[0] if found else b""
        tokens = [
            t.decode("ascii", "replace")
            for t in (first if isinstance(first, bytes) else b"").split()
        ]
        uids = [t for t in tokens if t.isascii() and t.isdigit() and len(t) <= 10]
        return sorted(set(uids), key=int), [t for t in tokens if t not in uids]

    def message(self, uid: str, limit: int) -> ImapMessage | None:
        """One message, read without marking it seen (its first `limit` + 1 bytes at most);
        None when it is gone (removed by another client since the search)."""
        data = self._ok(
            lambda: self.client.uid("FETCH", uid, f"(BODY.PEEK[]<0.{limit + 1}>)"),
            f"read message {uid}",
        )
        raw = next((part[1] for part in data if isinstance(part, tuple)), None)
        return ImapMessage(uid, raw) if isinstance(raw, bytes) else None

    def mark_seen(self, uid: str) -> None:
        self._ok(
            lambda: self.client.uid("STORE", uid, "+FLAGS", "(\\Seen)"), f"mark message {uid} seen"
        )

    def _ok(
        self,
        ask: Callable[[], tuple[str, Sequence[object]]],
        what: str,
        refused: Callable[[str], str] | None = None,
    ) -> Sequence[object]:
        """The data of the server's OK answer to `ask`; else an ImapError: `refused(reason)`
        (or "would not `what`") for a NO or BAD, a broken connection for the rest."""
        try:
            kind, data = ask()
        except imaplib.IMAP4.abort as err:
            self.broken = True
            raise ImapError(
                f"the IMAP server {self.server} broke off the connection when asked to "
                f"{what}: {_reason(err)}"
            ) from None
        except imaplib.IMAP4.error as err:  # a NO or BAD answer
            kind, data = "NO", [str(err)]
        except (OSError, ValueError, IndexError, TypeError) as err:
            # OSError: a timeout, a reset; the rest: an answer imaplib cannot make sense of
            self.broken = True
            raise ImapError(
                f"the IMAP server {self.server} failed when asked to {what}: {_reason(err)}"
            ) from None
        if kind != "OK":
            reason = printable(_text(data)[:300])
            raise ImapError(
                refused(reason)
                if refused
                else f"the IMAP server {self.server} would not {what}: {reason}"
            )
        return data


def _reason(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    if isinstance(err, TimeoutError) or text == "timed out":
        return "no answer within the timeout (timed out)"
    return printable(text[:200])


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
            f"{_reason(err)}; nothing was read"
        ) from None
    folder = ImapFolder(client, server)
    try:
        secret = password("imap", server.user, server.ask)
        try:
            folder._ok(
                lambda: client.login(server.user, secret),
                "log in",
                lambda why: (
                    f"the IMAP server {server} refused the login of {server.user}: "
                    f"{why}; check the user and PBEM_IMAP_PASSWORD"
                ),
            )
            folder._ok(
                lambda: client.select(_quoted(server.folder)),
                "open the folder",
                lambda why: (
                    f"there is no folder '{server.folder}' on {server} for {server.user}: {why}"
                ),
            )
        except ImapError as err:
            if folder.broken:
                raise ImapError(f"{err}; nothing was read") from None
            raise
        folder.uidvalidity = _validity(client)
        yield folder
    finally:
        with contextlib.suppress(OSError, imaplib.IMAP4.error, ValueError):
            if folder.broken:
                client.shutdown()  # no LOGOUT to a server that stalled or broke off
            else:
                client.logout()


def _validity(client: imaplib.IMAP4) -> str | None:
    """The UIDVALIDITY the server gave when the folder was selected: a number, or None."""
    _, data = client.response("UIDVALIDITY")
    value = data[-1] if data else None
    text = value.decode("ascii", "replace") if isinstance(value, bytes) else ""
    return text if text.isdigit() and len(text) <= 10 else None


def _quoted(folder: str) -> str:
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'
