"""Where incoming mail is read from: a Maildir, an mbox file, single .eml files.

The mailboxes are only read, never changed (no message is marked read or removed). An entry
that cannot be read is handed on with the reason, so that one bad entry never stops a fetch.
"""

from __future__ import annotations

import mailbox
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pbem.errors import PbemError
from pbem.game.safety import FileProblem, not_regular, read_regular


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


class _Delivered:
    """A Maildir entry as bytes with its delivery time (the file's time, which
    `Maildir.get_message` stamps on what its factory returns), without parsing it."""

    def __init__(self, handle: IO[Any]) -> None:
        self.raw: bytes = handle.read()
        self.date = 0.0

    def set_subdir(self, subdir: str) -> None:
        pass

    def set_info(self, info: str) -> None:
        pass

    def set_date(self, date: float) -> None:
        self.date = date


def read_entries(sources: Sources) -> list[Entry]:
    """Every message in the sources, in order of arrival."""
    if sources.maildir is None and sources.mbox is None and not sources.files:
        raise PbemError("give a mailbox to read: --maildir PATH, --mbox PATH or .eml files")
    out: list[Entry] = []
    if sources.maildir is not None:
        out += _maildir(sources.maildir)
    if sources.mbox is not None:
        out += _mbox(sources.mbox)
    for path in sources.files:
        try:
            out.append(Entry(f"file {path}", raw=read_regular(path)))
        except FileProblem as err:
            out.append(Entry(f"file {path}", error=f"cannot read {path}: {err}"))
    return out


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


def _maildir(path: Path) -> list[Entry]:
    try:
        box = mailbox.Maildir(path, factory=_Delivered, create=False)  # type: ignore[arg-type]
        keys = sorted(box.keys())
    except (OSError, mailbox.Error) as err:
        raise PbemError(f"cannot read the Maildir {path}: {err}") from None
    found: list[tuple[float, str, Entry]] = []
    odd = _odd_entries(path, box.colon)
    for key in keys:
        where = f"Maildir entry {key}"
        if key in odd:
            reason = f"cannot read {where} in {path}: it is {odd[key]}, not a regular file"
            found.append((float("inf"), key, Entry(where, error=reason, key=f"maildir:{key}")))
            continue
        try:
            entry: Any = box.get_message(key)
            found.append((entry.date, key, Entry(where, raw=entry.raw)))
        except (OSError, KeyError, mailbox.Error) as err:
            reason = f"cannot read {where} in {path}: {getattr(err, 'strerror', None) or err}"
            found.append((float("inf"), key, Entry(where, error=reason, key=f"maildir:{key}")))
    return [entry for _, _, entry in sorted(found, key=lambda f: (f[0], f[1]))]


def _mbox(path: Path) -> list[Entry]:
    try:
        if not path.is_file():
            raise mailbox.NoSuchMailboxError(str(path))
        box = mailbox.mbox(path, create=False)
        keys = list(box.iterkeys())
    except (OSError, mailbox.Error) as err:
        raise PbemError(f"cannot read the mbox {path}: {err}") from None
    out: list[Entry] = []
    for n, key in enumerate(keys, 1):
        where = f"mbox message {n}"
        try:
            out.append(Entry(where, raw=box.get_bytes(key)))
        except (OSError, KeyError, mailbox.Error) as err:
            out.append(Entry(where, error=f"cannot read {where} in {path}: {err}"))
    return out
