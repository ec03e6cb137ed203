"""Where incoming mail is read from: a Maildir, an mbox file, single .eml files.

The mailboxes are only read, never changed (no message is marked read or removed). An entry
that cannot be read is handed on with the reason, so that one bad entry never stops a fetch.
Messages are read one at a time, as the fetch asks for them, and never more than
MAX_MESSAGE_BYTES of one: a longer message is handed on as its head, known to be too large.
"""

from __future__ import annotations

import itertools
import mailbox
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pbem.errors import PbemError
from pbem.files import not_regular
from pbem.mail.message import HEAD_BYTES, MAX_MESSAGE_BYTES


@dataclass(frozen=True)
class Sources:
    """Where incoming mail is read from: a Maildir, an mbox file, single .eml files."""

    maildir: Path | None = None
    mbox: Path | None = None
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One message as found in a mailbox: its bytes, or why they cannot be read."""

    where: str
    raw: bytes | None = None
    error: str | None = None
    key: str | None = None
    """For an entry that cannot be read: the key to record it under as seen (a Maildir
    entry's name), or None when it is to be reported again on every fetch."""
    cut: bool = False
    """The message is larger than MAX_MESSAGE_BYTES: `raw` is only its head (HEAD_BYTES)."""
    uid: str | None = None
    """Its UID in an IMAP folder (to mark it seen once handled)."""


def entry_of(where: str, data: bytes, uid: str | None = None) -> Entry:
    """The entry of a message read up to MAX_MESSAGE_BYTES and one byte more: a longer one
    keeps only its head, and is known to be too large."""
    if len(data) > MAX_MESSAGE_BYTES:
        return Entry(where, raw=data[:HEAD_BYTES], cut=True, uid=uid)
    return Entry(where, raw=data, uid=uid)


def _read(handle: Any) -> bytes:
    """A message's bytes, no more than one past the limit (the rest is never read)."""
    return bytes(handle.read(MAX_MESSAGE_BYTES + 1))


class _Dated:
    """A Maildir entry's delivery time (the file's time, which `Maildir.get_message` stamps
    on what its factory returns), without reading it."""

    def __init__(self, handle: IO[Any]) -> None:
        self.date = 0.0

    def set_subdir(self, subdir: str) -> None:
        pass

    def set_info(self, info: str) -> None:
        pass

    def set_date(self, date: float) -> None:
        self.date = date


def read_entries(sources: Sources) -> Iterator[Entry]:
    """Every message in the sources, in order of arrival, each read when it is asked for (a
    mailbox that cannot be opened at all is a PbemError at once)."""
    if sources.maildir is None and sources.mbox is None and not sources.files:
        raise PbemError("give a mailbox to read: --maildir PATH, --mbox PATH or .eml files")
    maildir = _maildir(sources.maildir) if sources.maildir is not None else iter(())
    mbox = _mbox(sources.mbox) if sources.mbox is not None else iter(())
    return itertools.chain(maildir, mbox, _files(sources.files))


def _files(paths: Sequence[Path]) -> Iterator[Entry]:
    for path in paths:
        kind = not_regular(path)
        if kind is not None:  # a FIFO would block the opening for ever
            yield Entry(
                f"file {path}", error=f"cannot read {path}: this is {kind}, not a regular file"
            )
            continue
        try:
            with path.open("rb") as handle:
                yield entry_of(f"file {path}", _read(handle))
        except OSError as err:
            yield Entry(f"file {path}", error=f"cannot read {path}: {err.strerror or err}")


def _odd_entries(path: Path, colon: str) -> dict[str, str]:
    """The Maildir entries (by key) that are not regular files, and what they are: a FIFO
    there would block the reading of it for ever."""
    odd: dict[str, str] = {}
    for sub in ("new", "cur"):
        try:
            names = os.listdir(path / sub)
        except OSError:
            continue
        for name in names:
            kind = not_regular(path / sub / name)
            if kind is not None and not name.startswith("."):
                odd[name.split(colon)[0]] = kind
    return odd


def _maildir(path: Path) -> Iterator[Entry]:
    try:
        box = mailbox.Maildir(path, factory=_Dated, create=False)  # type: ignore[arg-type]
        keys = sorted(k for k in box.iterkeys() if not k.startswith("."))  # dot files: no mail
    except (OSError, mailbox.Error) as err:
        raise PbemError(f"cannot read the Maildir {path}: {err}") from None
    order: list[tuple[float, str, str | None]] = []
    odd = _odd_entries(path, box.colon)
    for key in keys:
        if key in odd:
            order.append((float("inf"), key, f"it is {odd[key]}, not a regular file"))
            continue
        try:
            dated: Any = box.get_message(key)
            order.append((dated.date, key, None))
        except (OSError, KeyError, mailbox.Error) as err:
            order.append((float("inf"), key, str(getattr(err, "strerror", None) or err)))
    return _maildir_entries(box, path, sorted(order))


def _maildir_entries(
    box: mailbox.Maildir, path: Path, order: Sequence[tuple[float, str, str | None]]
) -> Iterator[Entry]:
    for _, key, error in order:
        where = f"Maildir entry {key}"
        if error is None:
            try:
                with box.get_file(key) as handle:
                    yield entry_of(where, _read(handle))
                continue
            except (OSError, KeyError, mailbox.Error) as err:
                error = str(getattr(err, "strerror", None) or err)
        reason = f"cannot read {where} in {path}: {error}"
        yield Entry(where, error=reason, key=f"maildir:{key}")


def _mbox(path: Path) -> Iterator[Entry]:
    try:
        if not path.is_file():
            raise mailbox.NoSuchMailboxError(str(path))
        box = mailbox.mbox(path, create=False)
        keys = list(box.iterkeys())
    except (OSError, mailbox.Error) as err:
        raise PbemError(f"cannot read the mbox {path}: {err}") from None
    return _mbox_entries(box, path, keys)


def _mbox_entries(box: mailbox.mbox, path: Path, keys: Sequence[str]) -> Iterator[Entry]:
    for n, key in enumerate(keys, 1):
        where = f"mbox message {n}"
        try:
            with box.get_file(key) as handle:
                yield entry_of(where, _read(handle))
        except (OSError, KeyError, mailbox.Error) as err:
            yield Entry(where, error=f"cannot read {where} in {path}: {err}")
