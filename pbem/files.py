"""Defences against files that are not what they claim: bounded reads that never block, links
that would lead out of a game folder, the sentence a disk fault deserves, and the temporary
files a killed run leaves behind.

A moderator runs pbem unattended on files from strangers, so no single file may stop it: a FIFO
named `alice.toml` must not hang a resolution, a 2 GB "order file" must not be read into
memory, and a full disk must end in a sentence that says what to do, not a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import heapq
import io
import os
import re
import stat
from collections.abc import Container, Iterator
from pathlib import Path

from pbem.errors import DiskError, GameFileError

ORDER_FILE_LIMIT = 64 * 1024
"""The largest order file read, in bytes (mail refuses larger ones too)."""
VIEW_FILE_LIMIT = 4 * 1024 * 1024
"""The largest view file or report read by `check --view` and `verify` (a real one is ~10 to 50
KiB; a resolution of tens of thousands of rolls, a line each, makes one of a few MiB)."""
GAME_FILE_LIMIT = 16 * 1024 * 1024
"""The largest game.toml read."""

TEMPORARY = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
"""The name `atomic_write` gives its temporary files: `.<name>.<8 random characters>.tmp`."""


GAME_FOLDERS = ("history", "reports", "orders", "mail", "outbox", "press", "templates", "locale")
"""The folders of a game (and of a folder of games) that pbem reads, writes or mails from: none
of them, and nothing in them, may be a symbolic link (`refuse_links`)."""


class FileProblem(Exception):
    """Why a file cannot be read, in words for the person who gave it (not a PbemError: the
    caller decides whether it stops a command or only refuses that one file)."""


PER_RESOLUTION = ("reports", os.path.join("orders", "done"))
"""The folders of a game holding a folder per resolution; a run writes only in the newest."""
NEWEST = 2
"""How many of the newest resolutions' folders the link check and the sweep of temporaries
look into (by their numbers; every command may read or write in those)."""


def first_link(directory: Path, folders: tuple[str, ...] = GAME_FOLDERS) -> Path | None:
    """The first symbolic link among `folders` of `directory` and what is in them, or None.

    Nothing is followed: each folder is looked at with lstat and walked entry by entry (the
    listing gives each entry's kind), so a link is found wherever it is looked for (a folder
    that is a link, a link to a folder outside, a file that is a link to the game file) and
    nothing it points to is read. Everything is walked but the older folders of `reports/` and
    `orders/done/` (PER_RESOLUTION: a folder per resolution, thousands in a long game): each of
    their entries is looked at, so an older resolution's folder that is itself a link is found,
    but only the NEWEST (by their numbers) and any folder not named so are walked inside. What
    is inside an older one is looked at by the code that goes there, on its way in
    (`refuse_links_in` or `files_in`: pbem.records.history.report_dir, new_report_dir and
    done_dir go through it; `link_named` for a file named on the command line): however long
    the game, the check costs what a command touches. A link among the order files waiting in
    orders/ is left to the reading of orders, which refuses it alone."""
    orders = str(directory / "orders")
    per_resolution = {str(directory / name) for name in PER_RESOLUTION}
    for name in folders:
        top = directory / name
        try:
            if stat.S_ISLNK(os.lstat(top).st_mode):
                return top
        except OSError:
            continue  # missing: pbem makes it when it needs it
        link = _link_below(str(top), orders, per_resolution)
        if link is not None:
            return link
    return None


def _link_below(
    top: str,
    orders: str | None = None,
    per_resolution: Container[str] = (),
    files: list[str] | None = None,
) -> Path | None:
    """The first symbolic link in the folder `top` or below it, nothing followed; in the
    folders named in `per_resolution`, only the NEWEST folders are walked inside (every entry
    is looked at); a link to a file among the entries of `orders` is left (see first_link).
    The other entries that are not folders are added to `files`, when given."""
    waiting = [top]
    while waiting:
        folder = waiting.pop()
        inner: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_symlink() and not (folder == orders and not entry.is_dir()):
                        return Path(entry.path)
                    if entry.is_dir(follow_symlinks=False):
                        inner.append(entry.name)
                    elif files is not None:
                        files.append(entry.path)
        except OSError:
            continue  # not a folder, or unreadable: the code that needs it says so
        if folder in per_resolution:
            inner = _newest(inner)
        waiting += [os.path.join(folder, name) for name in inner]
    return None


def refuse_links_in(directory: Path, folder: Path) -> None:
    """Raise GameFileError naming a symbolic link on the way from the game in `directory` down
    to `folder` (`folder` included) or anywhere below it, nothing followed; a folder missing
    holds none. What reads, removes or mails anything in a resolution's folder goes through
    here first (`first_link` walks only the newest of them)."""
    files_in(directory, folder)


def files_in(directory: Path, folder: Path) -> list[Path]:
    """Everything below `folder`, a folder of the game in `directory`, that is not a folder (a
    FIFO as well as a file: the reader refuses it), once no symbolic link is on the way down
    to it or anywhere below it (see `refuse_links_in`); nothing for a folder missing."""
    found: list[str] = []
    link = link_on_the_way(directory, folder) or _link_below(str(folder), files=found)
    if link is not None:
        raise GameFileError(link_sentence(link))
    return [Path(path) for path in found]


def link_sentence(link: Path) -> str:
    """What to do about a symbolic link found in a game folder."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    kind = "folder" if link.is_dir() else "file"
    return (
        f"{link} is a symbolic link (to {target}): pbem follows no link in a game's folders, "
        f"so that nothing outside the game is read, written or mailed; replace the link by a "
        f"real {kind} (a copy of what it points to) and run the command again"
    )


def refuse_links(directory: Path, folders: tuple[str, ...] = GAME_FOLDERS) -> None:
    """Raise GameFileError naming the first symbolic link in `directory`'s `folders` (see
    `first_link`); every command that opens a game calls it before it reads or writes any.
    Under the game's lock, whose sweep looked at the same folders (`swept`), a game found to
    hold no link is not walked again."""
    if folders == GAME_FOLDERS and os.path.abspath(directory) in _clean:
        return
    link = first_link(directory, folders)
    if link is not None:
        raise GameFileError(link_sentence(link))


def link_on_the_way(top: Path, path: Path) -> Path | None:
    """The first symbolic link on the way from `top` down to `path` (`path` included, `top`
    not: the game's folder may be reached through a link of the moderator's), each part looked
    at with lstat and nothing followed, or None; the way stops at the first part missing.
    `path` lies inside `top` (ValueError otherwise), named without '..'."""
    parts = path.relative_to(top).parts
    if ".." in parts:
        raise ValueError(f"{path} is named with '..'")
    current = top
    for part in parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except OSError:
            return None
    return None


def link_named(directory: Path, path: Path) -> Path | None:
    """The first symbolic link in the folders of the game in `directory` (GAME_FOLDERS) on the
    way the system takes to `path`, a file named on the command line, or None: each part of
    `path` as named (`..` and all) is placed where the system finds it, and looked at with
    lstat if that is in one of the game's folders. A file named outside them, or reached
    through links outside them, is the moderator's to name."""
    game = os.path.realpath(directory)
    named = path if path.is_absolute() else Path.cwd() / path
    current = Path(named.anchor)
    for part in named.parts[1:]:
        where = os.path.join(os.path.realpath(current), part)
        current = current / part
        if part in (".", ".."):
            continue
        inside = os.path.relpath(where, game).split(os.sep)
        if inside[0] in GAME_FOLDERS and os.path.islink(where):
            return current
    return None


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bounded(path: Path, limit: int, *, follow: bool = True) -> bytes:
    """A regular file's bytes, at most `limit` of them; raises FileProblem otherwise.

    The file is looked at before it is opened and opened without blocking, so a FIFO, a device
    or a directory is refused at once instead of hanging or being read forever. With `follow`
    false a symbolic link is refused too (it is opened with O_NOFOLLOW)."""
    fd = _open_regular(path, limit, follow)
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as err:
        raise FileProblem(f"cannot read this file: {err.strerror or err}") from None
    finally:
        os.close(fd)
    if size > limit:
        raise FileProblem(_too_big(size, limit))
    return b"".join(chunks)


def _open_regular(path: Path, limit: int | None, follow: bool = True) -> int:
    """A descriptor of a regular file opened for reading without blocking (no larger than
    `limit` bytes, when given; with `follow` false, not a symbolic link: O_NOFOLLOW); raises
    FileProblem otherwise."""
    try:
        before = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        raise FileProblem("no such file") from None
    except OSError as err:
        raise FileProblem(f"cannot read this file: {err.strerror or err}") from None
    if not stat.S_ISREG(before.st_mode):
        raise FileProblem(f"this is {_kind(before.st_mode)}, not a regular file: give a text file")
    if limit is not None and before.st_size > limit:
        raise FileProblem(_too_big(before.st_size, limit))
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        raise FileProblem(f"cannot read this file: {err.strerror or err}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as err:
        os.close(fd)
        raise FileProblem(f"cannot read this file: {err.strerror or err}") from None
    if not stat.S_ISREG(mode):  # replaced between the look and the open
        os.close(fd)
        raise FileProblem(f"this is {_kind(mode)}, not a regular file: give a text file")
    return fd


def read_regular(path: Path, *, follow: bool = True) -> bytes:
    """A regular file's bytes, whatever its size (a mailbox's message, a state file pbem
    wrote); raises FileProblem for a FIFO, a device or a directory, refused before it is
    opened the ordinary way (which would block on a FIFO); with `follow` false, for a
    symbolic link too (opened with O_NOFOLLOW)."""
    fd = _open_regular(path, None, follow)
    try:
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as err:
        raise FileProblem(f"cannot read this file: {err.strerror or err}") from None
    finally:
        os.close(fd)


def not_regular(path: Path) -> str | None:
    """What `path` is when it is not a regular file ("a named pipe (FIFO)"), or None (a
    regular file, or nothing there); looks without opening it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def read_text(path: Path, limit: int, *, follow: bool = True) -> str:
    """A regular file's UTF-8 text (see read_bounded), line ends read as Python reads text
    (CRLF becomes LF); raises FileProblem or UnicodeDecodeError."""
    raw = read_bounded(path, limit, follow=follow)
    return io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8").read()


def _too_big(size: int, limit: int) -> str:
    return f"this file is {size} bytes; at most {limit // 1024} KiB are read"


_WHAT_TO_DO = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EDQUOT: "the disk quota is used up: free some space or raise the quota",
    errno.EROFS: "the file system is read-only: make it writable (or copy the game elsewhere)",
    errno.EACCES: "permission denied: make it writable for this user",
    errno.EPERM: "the operation is not permitted: check the file's owner and permissions",
    errno.EMFILE: "too many files are open: close some programs",
}


def disk_error(err: OSError, path: Path, doing: str = "write") -> DiskError:
    """A write that failed, as a sentence naming the path and what to do about it."""
    advice = _WHAT_TO_DO.get(err.errno or 0, f"{err.strerror or err}: fix this")
    return DiskError(
        f"cannot {doing} {path}: {advice}, then run the command again "
        "(it completes the work from where it stopped)"
    )


def lock_error(err: OSError, path: Path) -> DiskError:
    """The lock file could not be opened: name what is in its place."""
    if path.is_symlink():
        target = os.readlink(path)
        return DiskError(
            f"{path} is a symbolic link (to {target}), not pbem's lock file: remove the link "
            "(pbem creates its lock itself) and run the command again"
        )
    if path.is_dir():
        return DiskError(
            f"{path} is a directory, not pbem's lock file: remove it (pbem creates its lock "
            "itself) and run the command again"
        )
    return disk_error(err, path, "create the lock file")


def remove_temporaries(directory: Path) -> list[Path]:
    """Remove the temporary files a killed run left in a game directory; call it under the lock.

    Only files named as `atomic_write` names its temporaries are removed, and links are not
    followed, so nothing a moderator put there can go. It looks where a run writes: everywhere
    but in the older folders of `reports/` and `orders/done/` (a folder per resolution), where
    it looks only into the NEWEST (by their numbers): a run writes only in those, and every run
    that takes the lock sweeps them, so an older folder holds none (however long the game, the
    sweep does not walk its every report)."""
    return swept(directory)[0]


def swept(directory: Path) -> tuple[list[Path], bool]:
    """`remove_temporaries`, and whether `first_link` would find no link in the game's folders:
    one walk for both, since the sweep lists every folder the link check does (and more)."""
    removed: list[Path] = []
    top = str(directory)
    orders = os.path.join(top, "orders")
    per_resolution = {os.path.join(top, name) for name in PER_RESOLUTION}
    clean = True
    waiting = [(top, False)]  # (a folder, whether it is in one of the game's folders)
    while waiting:
        folder, inside = waiting.pop()
        inner: list[str] = []
        links: list[os.DirEntry[str]] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:  # (thousands in a long game: as little as can be)
                    if entry.is_dir(follow_symlinks=False):
                        inner.append(entry.name)
                    elif entry.is_symlink():  # (never followed, never removed)
                        links.append(entry)
                    elif TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
                            removed.append(Path(entry.path))
        except OSError:
            continue  # not a folder, or unreadable: nothing of pbem's to sweep there
        for link in links:  # (one that first_link finds: see there)
            if (inside or link.name in GAME_FOLDERS and folder == top) and not (
                folder == orders and not link.is_dir()
            ):
                clean = False
        if folder in per_resolution:
            inner = _newest(inner)
        waiting += [
            (os.path.join(folder, name), inside or folder == top and name in GAME_FOLDERS)
            for name in sorted(inner)
        ]
    return removed, clean


_clean: dict[str, int] = {}
"""The games (by absolute path) whose folders the sweep under their lock, held now by this
process, found to hold no symbolic link (`refuse_links` does not walk them again), each with
how many times it is held (a lock taken again inside, by another file descriptor, counts)."""


@contextlib.contextmanager
def known_clean(directory: Path, clean: bool) -> Iterator[None]:
    """While the lock of the game in `directory` is held: what its sweep found (`swept`)."""
    if not clean:
        yield
        return
    key = os.path.abspath(directory)
    _clean[key] = _clean.get(key, 0) + 1
    try:
        yield
    finally:
        _clean[key] -= 1
        if not _clean[key]:
            del _clean[key]


def _newest(folders: list[str]) -> list[str]:
    """The NEWEST folders of resolutions (named by their number first: `0014-turn-13`, `0014`),
    and any folder not named so (not pbem's: looked into as before). One pass, no sorting of
    the thousands of a long game: every command's link check makes it."""
    numbered: list[tuple[int, str]] = []
    others: list[str] = []
    for name in folders:
        head = name.partition("-")[0]
        if head.isdecimal():  # (the digits a regular expression's \d takes)
            numbered.append((int(head), name))
        else:
            others.append(name)
    return others + [name for _, name in sorted(heapq.nlargest(NEWEST, numbered))]
