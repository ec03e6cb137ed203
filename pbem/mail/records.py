"""The mail folders and state files of a game directory, and the messages pbem writes.

Everything pbem mails goes through DIR/outbox/ first, as one .eml file per message. The state
lives in DIR/mail/, recorded after every message so that an interrupted run can simply be
run again:

- ledger.sqlite (pbem.records.mailstate): every incoming Message-ID processed (a second copy is
  skipped), per pending resolution and player the date and Message-ID of the orders accepted;
  which reports were built into the outbox, and per outbox file the addresses it was
  delivered to and those refused, so a failed send retries only what did not go;
- rejected/: each message rejected, kept with a .txt file giving the reason (the first
  KEPT_BYTES of it; removed by the first fetch REJECTED_DAYS after it was read).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from datetime import datetime
from email import policy, quoprimime
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage
from email.policy import Policy
from email.utils import format_datetime, parseaddr
from pathlib import Path
from typing import Any

from pbem.errors import DiskError, GameFileError, PbemError
from pbem.mail.machine import LOOP_HEADER
from pbem.present.text import wrapped_message
from pbem.records.disk import write, written
from pbem.records.history import ORDERS
from pbem.records.mailstate import OUTBOX
from pbem.records.settings import one_address

DEFAULT_FROM = "pbem@localhost"
MAIL = "mail"
REJECTED = "rejected"
SENT_FOLDER = "sent"
FAILED_FOLDER = "failed"
REPLACED = "replaced"
KEPT_BYTES = 1024 * 1024
"""The most of a rejected message kept in mail/rejected/ (1 MiB): the rest is cut off."""
REJECTED_DAYS = 90
"""How long a rejected message is kept: a fetch removes those read longer ago than that."""
_READ = re.compile(r"^Read: (\S+)$", re.MULTILINE)


def keep_rejected(directory: Path, key: str, raw: bytes | None, about: str) -> str:
    """Keep a rejected message in DIR/mail/rejected/ as KEY's digest: its bytes (at most
    KEPT_BYTES) as .eml and `about` as .txt, which must hold its `Read:` time, for
    `prune_rejected`. The name to show: the .eml, or the .txt when there are no bytes."""
    name = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]
    folder = directory / MAIL / REJECTED
    if raw is not None:
        if len(raw) > KEPT_BYTES:
            about += f"Kept: the first {KEPT_BYTES} bytes of {len(raw)} or more\n"
        write(folder / f"{name}.eml", raw[:KEPT_BYTES])
    write(folder / f"{name}.txt", about)
    return f"{MAIL}/{REJECTED}/{name}." + ("eml" if raw is not None else "txt")


def prune_rejected(directory: Path, now: datetime) -> list[str]:
    """Remove the rejected messages of DIR/mail/rejected/ read more than REJECTED_DAYS before
    `now` (by the `Read:` time of their .txt: the time of the fetch that read them, which
    `--now` sets); what cannot be read, and anything not a plain file, is left alone. The
    names removed."""
    folder = directory / MAIL / REJECTED
    if folder.is_symlink() or not folder.is_dir():
        return []
    removed: list[str] = []
    for about in sorted(folder.glob("*.txt")):
        try:
            if not stat.S_ISREG(os.lstat(about).st_mode) or os.lstat(about).st_size > 64 * 1024:
                continue
            found = _READ.search(about.read_text(encoding="utf-8", errors="replace"))
            read = datetime.fromisoformat(found.group(1)) if found else None
        except (OSError, ValueError):
            continue
        if read is None or read.tzinfo is None or (now - read).days <= REJECTED_DAYS:
            continue
        for path in (about.with_suffix(".eml"), about):
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    path.unlink()
                    removed.append(path.name)
            except OSError:
                continue
    return removed


def address(value: object) -> str:
    """The address in a header value we wrote ourselves (or the moderator gave), or "" when
    it is not exactly one address: a player's address hand-edited to `a@x, b@y` (which would
    mail their report and secret to both) or holding a line break is no address at all, as
    it would be refused when set (a line break at its end too: it would end the headers of
    every message to it)."""
    return _address(str(value or ""))


@functools.lru_cache(maxsize=4096)
def _address(text: str) -> str:
    """`address` of a text (the same few addresses come again and again in a fetch)."""
    if not text.strip() or any(c in text for c in "\r\n\0") or not one_address(text.strip()):
        return ""
    return parseaddr(text)[1].strip()


def domain(sender: str) -> str:
    return address(sender).rpartition("@")[2] or "localhost"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "game"


def outgoing(
    sender: str, to: str, subject: str, game: str, auto: str, now: datetime
) -> EmailMessage:
    """A message from pbem, marked so that no machine answers it and pbem skips it."""
    out = EmailMessage(policy=POLICY)
    out["From"] = header("From", sender)
    out["To"] = header("To", to)
    out["Subject"] = header("Subject", subject)
    out["Date"] = header("Date", format_datetime(now))
    out["Auto-Submitted"] = header("Auto-Submitted", auto)
    out[LOOP_HEADER] = header(LOOP_HEADER, game)
    return out


class _FoldedOnce:
    """A header that keeps what it folds to, for each way of folding: a header made once
    (`header`) is folded once, not again for every message that carries it. The standard
    folding reads three things of the policy (`email._header_value_parser`): the key here."""

    def fold(self, *, policy: Policy) -> str:
        key = (policy.linesep, policy.max_line_length, bool(getattr(policy, "utf8", False)))
        folds: dict[tuple[str, int | None, bool], str] = self.__dict__.setdefault("_folds", {})
        folded = folds.get(key)
        if folded is None:
            folded = folds[key] = super().fold(policy=policy)  # type: ignore[misc]
        return folded


class _Registry(HeaderRegistry):
    """The standard header classes, each made once (the standard registry makes a new class
    for every header set or parsed: a tenth of what building an answer costs), each folding
    once (`_FoldedOnce`)."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        made = self._made.get(name.lower())
        if made is None:
            standard = super().__getitem__(name)
            made = type(standard.__name__, (_FoldedOnce, standard), {})
            self._made[name.lower()] = made
        return made


POLICY = policy.default.clone(header_factory=_Registry())
"""The policy of every message pbem writes: the standard one (`email.policy.default`), with
the header classes made once."""


@functools.lru_cache(maxsize=4096)
def header(name: str, value: str) -> Any:
    """The header `name: value` as an EmailMessage makes it, made once for every message that
    carries it (a game's From, a player's To, the time of a fetch): parsing headers is much of
    what an answer costs. A value holding a line break is refused, as EmailMessage does."""
    if "\r" in value or "\n" in value:
        raise ValueError("Header values may not contain linefeed or carriage return characters")
    return POLICY.header_factory(name, value)


def set_text(msg: EmailMessage, text: str) -> None:
    """`msg.set_content(text, cte="quoted-printable")` for a message without a body yet, with
    its three headers made once (`header`): the same bytes (tests/test_mail_bytes.py)."""
    if msg.get_payload() or "Content-Type" in msg:
        raise ValueError("set_text is for a message without a body")
    lines = text.encode("utf-8").splitlines()
    width = msg.policy.max_line_length
    assert width is not None  # (pbem's policy: 78)
    msg["Content-Type"] = header("Content-Type", 'text/plain; charset="utf-8"')
    msg.set_payload(quoprimime.body_encode((b"\n".join(lines) + b"\n").decode("latin-1"), width))
    msg["Content-Transfer-Encoding"] = header("Content-Transfer-Encoding", "quoted-printable")
    if "MIME-Version" not in msg:
        msg["MIME-Version"] = header("MIME-Version", "1.0")


def fixed_boundaries(msg: EmailMessage) -> None:
    """Give every multipart of `msg` a boundary drawn from the message itself (its headers and
    parts) rather than at random, so the same message, built on any day, is the same bytes."""
    parts = [p for p in msg.walk() if p.is_multipart()]
    if not parts:
        return
    leaves = [p for p in msg.walk() if not p.is_multipart()]
    body = b"".join(p.as_bytes(policy=policy.default.clone(utf8=True)) for p in leaves)
    head = "".join(f"{k}: {v}\n" for k, v in msg.items()).encode("utf-8", "replace")
    digest = hashlib.sha256(head + body).hexdigest()
    for i, part in enumerate(parts):
        boundary = f"=={digest[:32]}.{i}=="
        while boundary.encode() in body:  # as good as never: a part that holds it
            digest = hashlib.sha256(digest.encode()).hexdigest()
            boundary = f"=={digest[:32]}.{i}=="
        part.set_boundary(boundary)


def write_eml(directory: Path, name: str, msg: EmailMessage) -> None:
    """Put a message in the outbox; an address outside ASCII is written as it is (RFC 6532),
    which only a server offering SMTPUTF8 takes. The same message gives the same bytes."""
    fixed_boundaries(msg)
    to = str(msg.get("To", ""))
    data = msg.as_bytes() if to.isascii() else msg.as_bytes(policy=policy.default.clone(utf8=True))
    write(directory / OUTBOX / name, data, later=True)


def queue(
    game_dir: Path,
    game: str,
    sender: str,
    to: str,
    kind: str,
    key: str,
    subject: str,
    body: str,
    now: datetime,
) -> str:
    """A message pbem writes of its own accord (a notice, a reminder) into a game's outbox,
    named and identified after `kind` and `key`: the same one written twice (a command run
    again after a crash) is the same file. Its outbox name."""
    digest = hashlib.sha256(f"{game}/{key}".encode()).hexdigest()[:16]
    msg = outgoing(sender, to, f"[{game}] {subject}", game, "auto-generated", now)
    msg["Message-ID"] = f"<pbem.{slug(game)}.{kind}.{digest}@{domain(sender)}>"
    set_text(msg, wrapped_message(body))  # (78 columns, as every answer)
    name = f"{kind}-{digest}.eml"
    write_eml(game_dir, name, msg)
    return name


class CannotStore(PbemError):
    """Accepted orders that cannot be written to orders/ (the file there is not a file)."""


def store_orders(directory: Path, player: str, text: str) -> str | None:
    """Write orders/<player>.toml (in the background in a fetch: in place by its commit); an
    earlier file there is kept in orders/replaced/."""
    target = directory / ORDERS / f"{player}.toml"
    try:
        written(target)  # the player's orders of an earlier message of this fetch
    except DiskError as err:
        raise GameFileError(str(err)) from None
    moved: str | None = None
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise CannotStore(f"cannot look at {target}: {err.strerror or err}") from None
    if mode is not None:
        if not stat.S_ISREG(mode):
            raise CannotStore(
                f"{target} is not a regular file: remove it, then fetch again to store the orders"
            )
        if target.read_bytes() == text.encode("utf-8"):
            return None  # the same orders again (a run repeated after a stop)
        folder = target.parent / REPLACED
        folder.mkdir(parents=True, exist_ok=True)
        n = 1
        while (folder / f"{player}-{n}.toml").exists():
            n += 1
        os.replace(target, folder / f"{player}-{n}.toml")
        moved = f"{ORDERS}/{REPLACED}/{player}-{n}.toml"
    write(target, text, later=True)
    return moved
