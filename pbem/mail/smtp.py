"""Delivering over SMTP: where to send (`SmtpServer`, its password asked for only when the
connection is made), and one session delivering the messages waiting in an outbox one by one.

Each message is delivered on its own and recorded (synced) as soon as the server takes it, so a
run killed half way repeats at most the one message in flight. A server's answer decides what
becomes of a message: accepted, it goes to outbox/sent/; refused for good (a 5xx, or an address
the server cannot take), it goes to outbox/failed/ with the reason and the rest are sent; refused
for now (a 4xx) or a connection lost, it waits in the outbox for the next run.

What waits in the outbox, and in what order, is `send`'s.
"""

from __future__ import annotations

import contextlib
import os
import smtplib
import ssl
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from email import policy
from email.message import Message
from email.parser import BytesParser
from email.utils import getaddresses
from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.mail.records import FAILED_FOLDER, SENT_FOLDER
from pbem.records.disk import write
from pbem.records.mailstate import OUTBOX, MailState
from pbem.terminal import printable

PASSWORD_ENV = "PBEM_SMTP_PASSWORD"
_PARSER = BytesParser(policy=policy.compat32)
_SESSION_CODES = (421, 530)
"""Refusals of the session, not of one message: the server is closing (421), or wants
STARTTLS or a login first (530). Nothing more is sent this run; the messages wait."""


@dataclass(frozen=True)
class SmtpServer:
    """Where and how to send: host, port, STARTTLS, login (the password asked for only when
    the connection is made)."""

    host: str
    port: int = 25
    starttls: bool = False
    user: str | None = None
    password: Callable[[], str | None] = field(default=lambda: None, compare=False)
    tls_context: ssl.SSLContext | None = field(default=None, compare=False)
    timeout: float = 30.0
    ssl: bool = False
    """Connect with SSL from the start (SMTPS, usually port 465) instead of STARTTLS."""

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def smtp_server(
    spec: str,
    starttls: bool = False,
    user: str | None = None,
    ask: Callable[[], str] | None = None,
) -> SmtpServer:
    """`HOST:PORT` (port 25 when left out) into a server; the password comes from the
    PBEM_SMTP_PASSWORD environment variable, or else `ask()` (a prompt), never an argument."""
    host, colon, port_text = spec.strip().rpartition(":")
    if not colon:
        host, port_text = port_text, "25"
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise PbemError(f"--smtp must be HOST:PORT, e.g. smtp.example.org:587; got '{spec}'")

    def password() -> str | None:
        if user is None:
            return None
        value = os.environ.get(PASSWORD_ENV)
        if value is None and ask is not None:
            value = ask()
        return value

    return SmtpServer(host, int(port_text), starttls, user, password)


class _Permanent(Exception):
    """The message cannot be delivered as it is: it goes to outbox/failed/."""


class _ConnectionLost(Exception):
    """The server went away: this message and the rest wait for the next run."""


@dataclass(frozen=True)
class _Outgoing:
    """A message read back from the outbox: the bytes to send and its envelope."""

    data: bytes
    sender: str
    recipients: tuple[str, ...]
    message_id: str


def read_outgoing(path: Path) -> _Outgoing:
    """An outbox file as a message to send; _Permanent when it is not one."""
    if path.suffix != ".eml" or not path.is_file():
        raise _Permanent("not a message: only .eml files are sent from the outbox")
    if path.is_symlink():
        raise _Permanent("a symbolic link: pbem sends no file found through a link")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise _Permanent(f"cannot be read: {err.strerror or err}") from None
    msg = _PARSER.parsebytes(raw)
    senders = _addresses(msg, ("From",))
    recipients = _addresses(msg, ("To", "Cc", "Bcc"))
    if len(senders) != 1 or not recipients:
        raise _Permanent("not a message: it needs one From and at least one To address")
    for header in ("Bcc", "Resent-Bcc"):
        del msg[header]
    data = msg.as_bytes(policy=policy.compat32.clone(linesep="\r\n"))
    mid = " ".join(_text(v) for name, v in msg.raw_items() if name.lower() == "message-id")
    return _Outgoing(data, senders[0], tuple(recipients), mid)


def _text(value: Any) -> str:
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _addresses(msg: Message, headers: Sequence[str]) -> list[str]:
    wanted = {h.lower() for h in headers}
    values = [_text(v) for name, v in msg.raw_items() if name.lower() in wanted]
    out: list[str] = []
    for _, found in getaddresses(values):
        if found and "@" in found and found not in out:
            out.append(found)
    return out


@dataclass
class Delivery:
    """One SMTP session delivering the waiting messages one by one; what became of each is told
    in `delivered` and `failed` (those of a `send.SendResult`)."""

    directory: Path
    server: SmtpServer
    state: MailState
    delivered: list[str]
    failed: list[str]

    @property
    def sent(self) -> dict[str, Any]:
        return self.state.sent

    def run(self, pending: Sequence[Path]) -> None:
        try:
            client = _connect(self.server)
        except (OSError, smtplib.SMTPException) as err:
            self.failed.append(
                f"cannot connect to {self.server}: {_reason(err)}; "
                "nothing was sent, run 'pbem mail send' again later"
            )
            return
        try:
            for path in pending:
                try:
                    self.deliver(client, path)
                except _Permanent as err:
                    self.give_up(path, str(err))
                except _ConnectionLost as err:
                    self.failed.append(
                        f"{path.name}: not sent, {self.server} stopped taking mail ({err}); "
                        "it and the rest wait for the next 'pbem mail send'"
                    )
                    return
        finally:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                client.quit()

    def deliver(self, client: smtplib.SMTP, path: Path) -> None:
        message = read_outgoing(path)
        record = self.sent["messages"].setdefault(path.name, {"delivered": [], "refused": {}})
        if record.get("message_id", message.message_id) != message.message_id:
            # another message under a name delivered before: delivery is by message
            earlier = self.sent.setdefault("earlier", {}).get(path.name, [])
            self.state.put("sent", "earlier", path.name, [*earlier, record])
            record = {"delivered": [], "refused": {}}
            self.state.put("sent", "messages", path.name, record)
        record["message_id"] = message.message_id
        todo = [a for a in message.recipients if a not in record["delivered"]]
        permanent: dict[str, str] = {}
        if todo:
            refused = _send(client, message, todo)
            for recipient in todo:
                if recipient in refused:
                    code, reason = refused[recipient]
                    record["refused"][recipient] = reason
                    if 500 <= code < 600:
                        permanent[recipient] = reason
                    else:
                        self.failed.append(
                            f"{path.name}: {recipient} refused for now: {reason}; it waits"
                        )
                else:
                    record["delivered"].append(recipient)
                    record["refused"].pop(recipient, None)
                    self.delivered.append(f"{path.name} to {recipient}")
            # committed before the file moves to outbox/sent/: a run killed between the two
            # finds every recipient delivered and only moves it
            self.state.put("sent", "messages", path.name, record)
            self.state.commit()
        if permanent:
            raise _Permanent(
                "; ".join(f"{recipient} refused: {why}" for recipient, why in permanent.items())
            )
        if all(a in record["delivered"] for a in message.recipients):
            _move(path, self.directory / OUTBOX / SENT_FOLDER)

    def give_up(self, path: Path, reason: str) -> None:
        """Move a message that cannot be delivered to outbox/failed/, with the reason."""
        folder = self.directory / OUTBOX / FAILED_FOLDER
        write(folder / f"{path.name}.reason.txt", f"{printable(reason)}\n")
        record = self.sent["messages"].setdefault(path.name, {"delivered": [], "refused": {}})
        record["failed"] = reason
        self.state.put("sent", "messages", path.name, record)
        self.state.commit()
        _move(path, folder)
        self.failed.append(
            f"{path.name}: {reason}; moved to {OUTBOX}/{FAILED_FOLDER}/ (put it back in "
            f"{OUTBOX}/ to try again)"
        )


def _move(path: Path, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    os.replace(path, folder / path.name)


def _connect(server: SmtpServer) -> smtplib.SMTP:
    password = server.password() if server.user is not None else None
    if server.user is not None and password is None:
        raise PbemError(f"no SMTP password for {server.user}: set {PASSWORD_ENV}")
    if server.ssl:
        client: smtplib.SMTP = smtplib.SMTP_SSL(
            server.host,
            server.port,
            timeout=server.timeout,
            context=server.tls_context or ssl.create_default_context(),
        )
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=server.timeout)
    try:
        if server.starttls:
            client.ehlo()
            client.starttls(context=server.tls_context or ssl.create_default_context())
            client.ehlo()
        if server.user is not None and password is not None:
            client.login(server.user, password)
    except BaseException:
        with contextlib.suppress(Exception):
            client.close()
        raise
    return client


def _send(client: smtplib.SMTP, message: _Outgoing, to: list[str]) -> dict[str, tuple[int, str]]:
    """Send to `to`: the addresses refused, each with the server's code and reason. Raises
    _Permanent or _ConnectionLost when the message as a whole is refused or cannot go now."""
    options: list[str] = []
    if not all(a.isascii() for a in (message.sender, *to)):
        client.ehlo_or_helo_if_needed()
        if not client.has_extn("smtputf8"):
            raise _Permanent(
                "an address is not plain ASCII and the server does not offer SMTPUTF8 "
                "(internationalised mail)"
            )
        options = ["SMTPUTF8", "BODY=8BITMIME"]
    try:
        refused = client.sendmail(message.sender, to, message.data, mail_options=options)
    except smtplib.SMTPRecipientsRefused as err:
        refused = err.recipients
    except smtplib.SMTPNotSupportedError as err:
        raise _Permanent(f"the server cannot take it: {_reason(err)}") from None
    except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as err:
        if err.smtp_code in _SESSION_CODES:
            raise _ConnectionLost(_reason(err)) from None
        if 500 <= err.smtp_code < 600:
            raise _Permanent(f"the server refused it: {_reason(err)}") from None
        return {a: (err.smtp_code, _reason(err)) for a in to}
    except ValueError as err:  # smtplib's own refusal of what it cannot send
        raise _Permanent(f"it cannot be sent: {err}") from None
    except (OSError, smtplib.SMTPException) as err:
        raise _ConnectionLost(_reason(err)) from None
    return {a: (code, _reply_text(code, text)) for a, (code, text) in refused.items()}


def _reply_text(code: int, text: bytes | str) -> str:
    words = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return f"{code} {words}"


def _reason(err: BaseException) -> str:
    if isinstance(err, smtplib.SMTPResponseException):
        return _reply_text(err.smtp_code, err.smtp_error)
    return str(err) or type(err).__name__
