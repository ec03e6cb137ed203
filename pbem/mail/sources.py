"""Where incoming mail is read from: a Maildir, an mbox file, single .eml files.

The mailboxes are only read, never changed (no message is marked read or removed). An entry
that cannot be read is handed on with the reason, so that one bad entry never stops a fetch.
Messages are read one at a time, as the fetch asks for them, and never more than
MAX_MESSAGE_BYTES of one: a longer message is handed on as its head, known to be too large.
"""

from __future__ import annotations

import hashlib
import itertools
import mailbox
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pbem.errors import PbemError
from pbem.files import _kind, not_regular
from pbem.mail.handled import Known, Mark
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
    mark: Mark | None = None
    """Where it was found, recorded once it is handled (pbem.mail.handled): the next fetch
    skips it unread."""


def entry_of(where: str, data: bytes, uid: str | None = None, mark: Mark | None = None) -> Entry:
    """The entry of a message read up to MAX_MESSAGE_BYTES and one byte more: a longer one
    keeps only its head, and is known to be too large."""
    if len(data) > MAX_MESSAGE_BYTES:
        return Entry(where, raw=data[:HEAD_BYTES], cut=True, uid=uid, mark=mark)
    return Entry(where, raw=data, uid=uid, mark=mark)


def _read(handle: Any) -> bytes:
    """A message's bytes, no more than one past the limit (the rest is never read)."""
    return bytes(handle.read(MAX_MESSAGE_BYTES + 1))


def read_entries(sources: Sources, known: Known | None = None) -> Iterator[Entry]:
    """Every message in the sources, in order of arrival, each read when it is asked for (a
    mailbox that cannot be opened at all is a PbemError at once). `known`: the messages of the
    Maildir and the mbox handled before are skipped unread (counted in it) once it has the
    fetch's mail state, which it must have by the time the first entry is asked for."""
    if sources.maildir is None and sources.mbox is None and not sources.files:
        raise PbemError("give a mailbox to read: --maildir PATH, --mbox PATH or .eml files")
    known = known or Known()
    maildir = _maildir(sources.maildir, known) if sources.maildir is not None else iter(())
    mbox = _mbox(sources.mbox, known) if sources.mbox is not None else iter(())
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


def _maildir(path: Path, known: Known) -> Iterator[Entry]:
    """A Maildir's entries (its folders listed now, its files looked at when the first is
    asked for): a file whose name's unique part (before ':2,') was recorded as handled, with
    the same size and time, is skipped; any other is read (a name used again for another
    message, a file rewritten)."""
    found: dict[str, tuple[str, str]] = {}
    try:
        for sub in ("new", "cur"):
            with os.scandir(path / sub) as listing:
                for item in listing:
                    if item.name.startswith(".") or _folder(item):  # dot files: no mail
                        continue
                    found[item.name.split(mailbox.Maildir.colon)[0]] = (sub, item.name)
    except OSError as err:
        raise PbemError(f"cannot read the Maildir {path}: {err}") from None
    return _maildir_entries(path, found, known)


def _folder(item: os.DirEntry[str]) -> bool:
    try:
        return item.is_dir()
    except OSError:
        return False


def _maildir_entries(
    path: Path, found: dict[str, tuple[str, str]], known: Known
) -> Iterator[Entry]:
    name = f"maildir:{path.resolve()}"
    _, marks = known.marks(name)
    order: list[tuple[float, str, str | None, str]] = []
    for key in sorted(found):
        sub, file = found[key]
        try:
            info = os.stat(os.path.join(path, sub, file))
        except OSError as err:
            order.append((float("inf"), key, str(err.strerror or err), ""))
            continue
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block the reading of it for ever
            order.append(
                (float("inf"), key, f"it is {_kind(info.st_mode)}, not a regular file", "")
            )
            continue
        stamp = f"{info.st_size} {info.st_mtime_ns}"
        recorded = marks.get(key)
        if recorded is not None and recorded[0] == stamp:
            known.skip(recorded)
            continue
        order.append((info.st_mtime, key, None, stamp))
    for _, key, error, stamp in sorted(order):
        where = f"Maildir entry {key}"
        if error is None:
            try:
                with _maildir_file(path, found, key) as handle:
                    yield entry_of(where, _read(handle), mark=Mark(name, key, stamp))
                continue
            except OSError as err:
                error = str(err.strerror or err)
        reason = f"cannot read {where} in {path}: {error}"
        yield Entry(where, error=reason, key=f"maildir:{key}")


def _maildir_file(path: Path, found: dict[str, tuple[str, str]], key: str) -> IO[bytes]:
    """A Maildir entry opened, where it was listed or, moved since (from new/ to cur/, its
    flags changed), where it is now."""
    sub, file = found[key]
    try:
        return (path / sub / file).open("rb")
    except FileNotFoundError:
        for sub in ("cur", "new"):
            for other in os.listdir(path / sub):
                if other.split(mailbox.Maildir.colon)[0] == key and not other.startswith("."):
                    return (path / sub / other).open("rb")
        raise


MBOX_WINDOW = 64 * 1024
"""How much of an mbox's beginning, and of the end of what was read before, is compared with
what was recorded before its messages handled are skipped."""


def _mbox(path: Path, known: Known) -> Iterator[Entry]:
    try:
        if not path.is_file():
            raise mailbox.NoSuchMailboxError(str(path))
        handle = path.open("rb")
    except (OSError, mailbox.Error) as err:
        raise PbemError(f"cannot read the mbox {path}: {err}") from None
    return _mbox_entries(handle, path, known)


def _mbox_entries(handle: IO[bytes], path: Path, known: Known) -> Iterator[Entry]:
    """An mbox's messages: those recorded as handled skipped unread, when the file is as it was
    then (its beginning and the end of what was read then are the same bytes, and nothing but
    new messages follows); else every message is read, as before any was recorded."""
    name = f"mbox:{path.resolve()}"
    with handle:
        size = os.fstat(handle.fileno()).st_size
        check, marks = known.marks(name)
        toc = _known_toc(handle, check, marks, size) if check is not None else None
        known.renew(name, _mbox_check(handle, size), keep=toc is not None)
        if toc is None:
            toc = [(start, stop, None) for start, stop in _scan(handle, 0, size)[0]]
        for n, (start, stop, recorded) in enumerate(toc, 1):
            if recorded is not None:
                known.skip(recorded)
                continue
            where = f"mbox message {n}"
            try:
                handle.seek(start)
                handle.readline(stop - start)  # the "From " line
                data = handle.read(min(stop - handle.tell(), MAX_MESSAGE_BYTES + 1))
            except OSError as err:
                yield Entry(where, error=f"cannot read {where} in {path}: {err}")
                continue
            yield entry_of(where, data, mark=Mark(name, str(start), str(stop)))


def _mbox_check(handle: IO[bytes], end: int) -> str:
    """What an mbox read up to `end` is, to tell later whether it was rewritten since: `end`,
    and digests of its first and last MBOX_WINDOW bytes."""
    handle.seek(0)
    head = handle.read(min(end, MBOX_WINDOW))
    handle.seek(max(0, end - MBOX_WINDOW))
    tail = handle.read(end - max(0, end - MBOX_WINDOW))
    return f"{end} {hashlib.sha256(head).hexdigest()} {hashlib.sha256(tail).hexdigest()}"


def _known_toc(
    handle: IO[bytes],
    check: str,
    marks: dict[str, tuple[str, str, str]],
    size: int,
) -> list[tuple[int, int, tuple[str, str, str] | None]] | None:
    """The mbox's messages (start, stop, and the record of one handled before), those handled
    taken from the records and only the rest of the file scanned; None when the file is not as
    it was when they were recorded (rewritten, cut short, a message handled grown longer)."""
    end = int(check.split()[0]) if check.split()[0].isdigit() else -1
    if not 0 <= end <= size or _mbox_check(handle, end) != check:
        return None
    ranges: list[tuple[int, int, tuple[str, str, str] | None]] = []
    for key, record in marks.items():
        if not (key.isdigit() and record[0].isdigit()):
            return None
        ranges.append((int(key), int(record[0]), record))
    ranges.sort(key=lambda r: r[0])
    toc: list[tuple[int, int, tuple[str, str, str] | None]] = []
    at = 0
    for start, stop, recorded in [*ranges, (size, size, None)]:
        if start < at or stop < start or (recorded is not None and stop > end):
            return None
        found, lead = _scan(handle, at, start)
        if at > 0 and not _separator(handle, at, lead):  # the message before grew
            return None
        toc += [(a, b, None) for a, b in found]
        if recorded is not None:
            toc.append((start, stop, recorded))
        at = stop
    return toc


def _separator(handle: IO[bytes], at: int, lead: int) -> bool:
    """Whether the `lead` bytes at `at`, between a message and the next one (or the end of
    the file), are what the standard library's mbox leaves out of both: nothing, or an empty
    line."""
    if lead == 0:
        return True
    handle.seek(at)
    return lead == len(mailbox.linesep) and handle.read(lead) == mailbox.linesep


def _scan(handle: IO[bytes], start: int, stop: int) -> tuple[list[tuple[int, int]], int]:
    """The messages between `start` and `stop` (each message's "From " line and where it
    ends, as the standard library's mbox finds them), and how many bytes come before the first
    one. `start` and `stop` are where lines begin."""
    starts: list[int] = []
    stops: list[int] = []
    empty = False
    sep = mailbox.linesep
    handle.seek(start)
    at = start
    while True:
        line = handle.readline(stop - at) if at < stop else b""
        if line.startswith(b"From "):
            if len(stops) < len(starts):
                stops.append(at - len(sep) if empty else at)
            starts.append(at)
            empty = False
        elif not line:
            stops.append(at - len(sep) if empty else at)
            break
        else:
            empty = line == sep
        at += len(line)
    lead = (starts[0] if starts else stop) - start
    return list(zip(starts, stops, strict=False)), lead
