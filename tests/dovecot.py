"""A real IMAP server for the tests: Dovecot, started in the foreground on loopback ports with a
throwaway configuration, certificate, user and mail location in a folder of its own (the
test's; run as root, one in /tmp that no pytest session changes, see `start`).

Without Dovecot (Debian's dovecot-imapd) the tests that need it are skipped, saying why; with
PBEM_REQUIRE_DOVECOT=1 in the environment (as .ci/run sets) they fail instead.

The server is in use only once it is the tests' own and ready: its master process is running,
and a real LOGIN succeeds on both ports through TLS checked against its own certificate (a
server of another test run that took the port in between fails that check, and the ports are
drawn again). Logins that fail on purpose cost the next ones nothing: the authentication
penalty (up to 15 s for every login from loopback after a failed one) and the failure delay
are off, so no test depends on which ran before it or on how busy the machine is.
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import pwd
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pbem.mail.imap import ImapServer
from pbem.records.settings import Security

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
        """Stop the server (its master process and every child): both ports refuse, and
        its master is gone, so that it can start again on them."""
        pid = int((self.folder / "run" / "master.pid").read_text().split()[0])
        os.kill(pid, signal.SIGTERM)
        _wait(
            lambda: not _alive(pid) and not _open(self.port) and not _open(self.ssl_port),
            "Dovecot did not stop",
        )

    def start_again(self) -> None:
        """Start a stopped server again on the same ports (it runs in the background until
        `stop` or the end of the tests' own server), ready as `start` leaves it."""
        binary = shutil.which("dovecot") or "/usr/sbin/dovecot"
        subprocess.run([binary, "-c", str(self.folder / "dovecot.conf")], check=True)
        _wait(lambda: self.ready() is None, "Dovecot did not start again", READY_SECONDS)

    def ready(self) -> str | None:
        """None once a real LOGIN succeeds on both ports (TLS checked against this server's
        own certificate), else what went wrong."""
        try:
            self.client().logout()
            plain = imaplib.IMAP4("127.0.0.1", self.port, timeout=5)
            try:
                plain.starttls(ssl_context=self.context)
                plain.login(USER, PASSWORD)
            finally:
                with contextlib.suppress(OSError, imaplib.IMAP4.error):
                    plain.logout()
        except (OSError, imaplib.IMAP4.error) as err:
            return f"{type(err).__name__}: {err}"
        return None

    def client(self) -> imaplib.IMAP4_SSL:
        client = imaplib.IMAP4_SSL("127.0.0.1", self.ssl_port, ssl_context=self.context, timeout=30)
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


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, exited but not yet waited for, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


READY_SECONDS = 60
"""The longest a server may take to start and answer a login (a busy machine's first start of
the auth and imap processes takes seconds; a server that is not ready by then is broken)."""

ATTEMPTS = 5
"""How many times `start` draws new ports when another server took one of them first."""


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
    """A running Dovecot with its files in `folder` (run as root: in a folder of its own in
    /tmp, see below), stopped at the end."""
    binary = shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if Path("/usr/sbin/dovecot").exists() else None
    )
    if binary is None:
        _skip_or_fail("Dovecot is not installed: apt-get install dovecot-imapd to run these tests")
    if shutil.which("openssl") is None:
        _skip_or_fail("openssl is not installed: it makes the test server's certificate")
    assert binary is not None
    own: Path | None = None
    if os.geteuid() == 0:
        # Dovecot's processes then run as its own users, which must reach the mail and the
        # users file. Not through pytest's folder: any pytest session that starts (a second
        # suite beside this one, someone else's run) sets /tmp/pytest-of-root back to 0700,
        # and the server answers "Temporary authentication failure" and "Internal error" from
        # then on. A folder of the server's own in /tmp keeps its mode.
        own = folder = Path(tempfile.mkdtemp(prefix="pbem-dovecot-"))
        own.chmod(0o711)
    try:
        yield from _start(binary, folder)
    finally:
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)


def _start(binary: str, folder: Path) -> Iterator[Dovecot]:
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
    else:
        uid, gid = os.geteuid(), os.getegid()
        login_user = internal_user = pwd.getpwuid(uid).pw_name
    context = ssl.create_default_context(cafile=str(folder / "cert.pem"))
    failures: list[str] = []
    for _ in range(ATTEMPTS):
        port, ssl_port = free_port(), free_port()
        while ssl_port == port:
            ssl_port = free_port()
        process = _launch(binary, folder, port, ssl_port, mail, uid, gid, login_user, internal_user)
        server = Dovecot(folder, port, ssl_port, context)
        try:
            why = _until_ready(process, server)
            if why is None:
                yield server
                return
            failures.append(why)
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    log = folder / "dovecot.log"
    _skip_or_fail(
        f"Dovecot did not start in {ATTEMPTS} attempts: "
        + " | ".join(f[-300:] for f in failures)
        + (" | log: " + log.read_text()[-500:] if log.exists() else "")
    )


def _launch(
    binary: str,
    folder: Path,
    port: int,
    ssl_port: int,
    mail: Path,
    uid: int,
    gid: int,
    login_user: str,
    internal_user: str,
) -> subprocess.Popen[bytes]:
    """Dovecot in the foreground on these ports, with a configuration written for them."""
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
auth_failure_delay = 0
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
  # no authentication penalty: a test's wrong password must not slow the next test's login
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
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
    return subprocess.Popen(
        [binary, "-F", "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _until_ready(process: subprocess.Popen[bytes], server: Dovecot) -> str | None:
    """Wait until `server` answers a real login on both ports (None), or its master process
    ends (another server took a port first: why, to draw other ports); fail the test when it
    is still not ready after READY_SECONDS."""
    deadline = time.monotonic() + READY_SECONDS
    last = "no answer yet"
    while True:
        if process.poll() is not None:
            errors = process.stderr.read().decode() if process.stderr else ""
            return f"exit code {process.returncode}: {errors.strip()}"
        if _open(server.ssl_port) and _open(server.port):
            why = server.ready()
            if why is None:
                return None
            last = why
        if time.monotonic() > deadline:
            log = server.folder / "dovecot.log"
            _skip_or_fail(
                f"Dovecot on ports {server.port} and {server.ssl_port} was not ready within "
                f"{READY_SECONDS} s (last: {last}); its log ends: "
                + (log.read_text()[-500:] if log.exists() else "(none)")
            )
        time.sleep(0.1)
