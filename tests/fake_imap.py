"""A small IMAP server for the tests, speaking just enough IMAP4rev1 for imaplib (CAPABILITY,
LOGIN, SELECT, UID SEARCH, UID FETCH, UID STORE, LOGOUT), that can misbehave the ways a real
one does: drop the connection at the Nth FETCH, stall there past the client's timeout, or
name messages by UIDs that are not numbers. What it was asked is kept, to assert on."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from pbem.mail.imap import ImapServer
from pbem.records.settings import Security

USER = "moderator"
PASSWORD = "secret"


@dataclass
class Folder:
    """The server's one folder: messages by UID, the seen flags, what happened."""

    messages: dict[str, bytes]
    seen: set[str] = field(default_factory=set)
    fetched: list[str] = field(default_factory=list)
    """Every UID whose FETCH was answered, in order (over every connection)."""
    drop_at: int | None = None
    """Close the connection instead of answering this FETCH of a connection (1-based)."""
    stall_at: int | None = None
    """Answer nothing to this FETCH of a connection, until the client gives up."""
    odd_uids: Sequence[str] = ()
    """Tokens the SEARCH answer names besides the UIDs (a misbehaving server)."""
    refused: set[str] = field(default_factory=set)
    """The UIDs whose FETCH is answered NO (a message the server cannot give)."""
    connections: int = 0


class FakeImap:
    """The server, on a free loopback port, each connection in a thread of its own."""

    def __init__(self, folder: Folder) -> None:
        self.folder = folder
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.sock.getsockname()[1])
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def server(self, timeout: float = 5.0) -> ImapServer:
        return ImapServer(
            "127.0.0.1", self.port, Security.NONE, USER, "INBOX", lambda: PASSWORD, None, timeout
        )

    def close(self) -> None:
        self.stop.set()
        self.sock.close()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        box = self.folder
        box.connections += 1
        reader = conn.makefile("rb")
        fetches = 0

        def send(data: bytes) -> None:
            conn.sendall(data)

        try:
            send(b"* OK [CAPABILITY IMAP4rev1] fake ready\r\n")
            for line in reader:
                tag, _, rest = line.decode().rstrip("\r\n").partition(" ")
                command, _, args = rest.partition(" ")
                command = command.upper()
                if command == "CAPABILITY":
                    send(b"* CAPABILITY IMAP4rev1\r\n" + f"{tag} OK done\r\n".encode())
                elif command == "LOGIN":
                    ok = args.split() == [USER, f'"{PASSWORD}"'] or args.split() == [USER, PASSWORD]
                    send(f"{tag} {'OK' if ok else 'NO'} login\r\n".encode())
                elif command == "SELECT":
                    send(f"* {len(box.messages)} EXISTS\r\n{tag} OK [READ-WRITE] done\r\n".encode())
                elif command == "UID" and args.upper().startswith("SEARCH"):
                    uids = [u for u in box.messages if u not in box.seen]
                    found = " ".join([*uids, *box.odd_uids])
                    send(f"* SEARCH {found}\r\n{tag} OK done\r\n".encode())
                elif command == "UID" and args.upper().startswith("FETCH"):
                    fetches += 1
                    uid = args.split()[1]
                    if fetches == box.drop_at:
                        return  # the connection closes with no answer
                    if fetches == box.stall_at:
                        self.stop.wait(60)  # until the test ends: the client times out
                        return
                    if uid in box.refused:
                        send(f"{tag} NO [SERVERBUG] cannot read it\r\n".encode())
                        continue
                    want = re.search(r"<0\.(\d+)>", args)
                    data = box.messages[uid][: int(want.group(1)) if want else None]
                    n = list(box.messages).index(uid) + 1
                    send(f"* {n} FETCH (UID {uid} BODY[]<0> {{{len(data)}}}\r\n".encode())
                    send(data + b")\r\n" + f"{tag} OK done\r\n".encode())
                    box.fetched.append(uid)
                elif command == "UID" and args.upper().startswith("STORE"):
                    uid = args.split()[1]
                    box.seen.add(uid)
                    n = list(box.messages).index(uid) + 1
                    send(f"* {n} FETCH (UID {uid} FLAGS (\\Seen))\r\n{tag} OK done\r\n".encode())
                elif command == "LOGOUT":
                    send(f"* BYE bye\r\n{tag} OK done\r\n".encode())
                    return
                else:
                    send(f"{tag} BAD unknown\r\n".encode())
        except OSError:
            return
        finally:
            reader.close()
            conn.close()


@contextmanager
def fake_imap(messages: Sequence[bytes], **behaviour: object) -> Iterator[FakeImap]:
    """A fake server holding `messages` (UIDs 1, 2, ...), misbehaving as told."""
    folder = Folder({str(n): raw for n, raw in enumerate(messages, 1)}, **behaviour)  # type: ignore[arg-type]
    server = FakeImap(folder)
    try:
        yield server
    finally:
        server.close()
