"""A real IMAP server for the tests: Dovecot, started in the foreground on loopback ports with a
throwaway configuration, certificate, user and mail location under the test's own folder.

Without Dovecot (Debian's dovecot-imapd) the tests that need it are skipped, saying why; with
PBEM_REQUIRE_DOVECOT=1 in the environment (as .ci/run sets) they fail instead.
"""

from __future__ import annotations

import imaplib
import os
import pwd
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.game.settings import Security
from pbem.mail.imap import ImapServer

REQUIRE = "PBEM_REQUIRE_DOVECOT"
USER = "moderator"
PASSWORD = "correct horse"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Dovecot:
    """A running Dovecot: its plain (STARTTLS) and SSL ports, and the CA that signed it."""

    folder: Path
    port: int
    ssl_port: int
    context: ssl.SSLContext

    def server(self, security: Security = Security.SSL, folder: str = "INBOX") -> ImapServer:
        port = self.ssl_port if security is Security.SSL else self.port
        return ImapServer(
            "127.0.0.1", port, security, USER, folder, lambda: PASSWORD, self.context, 10.0
        )

    def spec(self, security: Security = Security.SSL) -> str:
        return f"127.0.0.1:{self.ssl_port if security is Security.SSL else self.port}"

    def stop(self) -> None:
        """Stop the server (its master process and every child); its ports refuse at once."""
        pid = int((self.folder / "run" / "master.pid").read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
        _wait(lambda: not _open(self.ssl_port), "Dovecot did not stop")

    def start_again(self) -> None:
        """Start a stopped server again on the same ports (it runs in the background until
        `stop` or the end of the tests' own server)."""
        binary = shutil.which("dovecot") or "/usr/sbin/dovecot"
        subprocess.run([binary, "-c", str(self.folder / "dovecot.conf")], check=True)
        _wait(lambda: _open(self.ssl_port), "Dovecot did not start again")

    def client(self) -> imaplib.IMAP4_SSL:
        client = imaplib.IMAP4_SSL("127.0.0.1", self.ssl_port, ssl_context=self.context)
        client.login(USER, PASSWORD)
        return client

    def deliver(self, *messages: bytes, folder: str = "INBOX") -> None:
        """Put messages into a folder as a mail server would (unseen)."""
        client = self.client()
        try:
            client.create(folder)
            for raw in messages:
                kind, data = client.append(folder, None, None, raw)
                assert kind == "OK", data
        finally:
            client.logout()

    def flags(self, folder: str = "INBOX") -> list[str]:
        """Each message's flags, in order."""
        client = self.client()
        try:
            client.select(folder)
            kind, data = client.fetch("1:*", "(FLAGS)")
            return [d.decode() for d in data if isinstance(d, bytes)]
        finally:
            client.logout()


def _open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _wait(done: Callable[[], bool], what: str, seconds: float = 15) -> None:
    """Wait until `done()`, at most `seconds`; then fail with `what`."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} within {seconds} s")
        time.sleep(0.05)


def _skip_or_fail(reason: str) -> None:
    if os.environ.get(REQUIRE):
        pytest.fail(f"{reason} ({REQUIRE} is set, so the IMAP tests must run)")
    pytest.skip(reason)


def start(folder: Path) -> Iterator[Dovecot]:
    binary = shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None
    )
    if binary is None:
        _skip_or_fail("Dovecot is not installed: apt-get install dovecot-imapd to run these tests")
    if shutil.which("openssl") is None:
        _skip_or_fail("openssl is not installed: it makes the test server's certificate")
    assert binary is not None
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem"),
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (folder / "users").write_text(f"{USER}:{{PLAIN}}{PASSWORD}\n")
    mail = folder / "mail"
    mail.mkdir()
    if os.geteuid() == 0:  # Dovecot never gives mail to root: it is the dovecot user's
        owner = pwd.getpwnam("dovecot")
        uid, gid = owner.pw_uid, owner.pw_gid
        login_user, internal_user = "dovenull", "dovecot"
        os.chown(mail, uid, gid)
        for parent in mail.parents:  # let it reach the mail folder, without listing the way
            if parent == Path("/tmp") or parent == parent.parent:
                break
            parent.chmod(parent.stat().st_mode | 0o001)
    else:
        uid, gid = os.geteuid(), os.getegid()
        login_user = internal_user = pwd.getpwuid(uid).pw_name
    port, ssl_port = free_port(), free_port()
    config = folder / "dovecot.conf"
    config.write_text(
        f"""base_dir = {folder}/run
state_dir = {folder}/state
log_path = {folder}/dovecot.log
instance_name = pbem-test-{port}
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <{folder}/cert.pem
ssl_key = <{folder}/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 1
default_login_user = {login_user}
default_internal_user = {internal_user}
service imap-login {{
  chroot =
  inet_listener imap {{
    port = {port}
  }}
  inet_listener imaps {{
    port = {ssl_port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {folder}/users
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={mail}/%u
}}
mail_location = maildir:{mail}/%u/Maildir
"""
    )
    process = subprocess.Popen(
        [binary, "-F", "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", ssl_port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = folder / "dovecot.log"
                    errors = process.stderr.read().decode() if process.stderr else ""
                    _skip_or_fail(
                        "Dovecot did not start: "
                        + (errors + (log.read_text() if log.exists() else "")).strip()[-500:]
                    )
                time.sleep(0.05)
        context = ssl.create_default_context(cafile=str(folder / "cert.pem"))
        yield Dovecot(folder, port, ssl_port, context)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
