"""Durable writing and the game's lock.

Every write goes to a temporary file that is flushed, synced and renamed over the target, so a
reader sees the old file or the new one, never half of one. The lock keeps a second run off a
game directory while one works in it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.errors import GameFileError, LockedError
from pbem.game.safety import disk_error, lock_error, remove_temporaries

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

GAME_FILE = "game.toml"
LOCK_FILE = ".lock"


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write a file so that it is either wholly old or wholly new, even after a crash.

    A write the disk refuses (full, read-only, no permission) raises DiskError naming the path;
    the temporary file is removed and the old file, if any, is left as it was."""
    atomic_write_all({path: data})


def atomic_write_all(files: Mapping[Path, bytes | str]) -> None:
    """Write several files, each wholly old or wholly new even after a crash (as
    `atomic_write`). Every file is synced before it replaces its target; the syncs run side by
    side (the file system commits them together) and each folder is synced once, after all its
    files: a report folder of twenty files costs one folder sync. A folder made for the files is
    synced in its parent after them, so that it is not lost while the files in it are kept. The
    threads that run the syncs are made once in a process and kept."""
    written: list[tuple[Path, str]] = []
    made: list[Path] = []  # the folders made here, each to be synced in its parent
    current: Path | None = None
    try:
        for folder in dict.fromkeys(path.parent for path in files):
            current = folder
            missing = folder
            while not missing.exists() and missing.parent != missing:
                made.append(missing)
                missing = missing.parent
            folder.mkdir(parents=True, exist_ok=True)
        for current, data in files.items():
            raw = data.encode() if isinstance(data, str) else data
            fd, tmp = tempfile.mkstemp(
                prefix=f".{current.name}.", suffix=".tmp", dir=current.parent
            )
            written.append((current, tmp))
            with os.fdopen(fd, "wb") as handle:
                handle.write(raw)
        if len(written) > 1:
            list(_syncing().map(_sync, (tmp for _, tmp in written)))
        else:
            for _, tmp in written:
                _sync(tmp)
        for current, tmp in written:
            os.replace(tmp, current)
        synced = [path.parent for path, _ in written] + [folder.parent for folder in made]
        for folder in dict.fromkeys(synced):
            current = folder
            _sync(folder)
    except BaseException as err:
        for _, tmp in written:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(err, OSError) and current is not None:
            raise disk_error(err, current) from None
        raise


_SYNCING: tuple[int, ThreadPoolExecutor] | None = None


def _syncing() -> ThreadPoolExecutor:
    """The threads that sync files side by side: made once in each process (a process forked
    from one that had them has none of its threads) and kept for its later writes."""
    global _SYNCING
    if _SYNCING is None or _SYNCING[0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor  # (and logging) when writing

        _SYNCING = (os.getpid(), ThreadPoolExecutor(8, thread_name_prefix="pbem-sync"))
    return _SYNCING[1]


def _sync(path: str | Path) -> None:
    """Sync a file's data, or a folder's entries, to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_files(folder: Path, files: Mapping[str, str]) -> tuple[Path, ...]:
    """Write rendered files (name: text) into `folder`, each atomically; the paths written."""
    paths = {folder / name: text for name, text in files.items()}
    atomic_write_all(paths)
    return tuple(paths)


@contextlib.contextmanager
def locked(directory: Path, *, creating: bool = False) -> Iterator[None]:
    """Hold the game's lock; a second run on the same game fails at once.

    Once the lock is held, the temporary files a killed run left are removed (not when
    creating: the directory may be any folder the moderator named)."""
    if not creating and not (directory / GAME_FILE).is_file():
        raise GameFileError(f"{directory} is not a game directory: it has no {GAME_FILE}")
    path = directory / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as err:
        raise lock_error(err, path) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockedError(
                f"{directory} is being resolved by another run; wait for it to finish"
            ) from None
        if not creating:
            remove_temporaries(directory)
        yield
    finally:
        os.close(fd)


def held_by_another(directory: Path) -> bool:
    """Whether another run holds the game's lock right now (the lock is not kept)."""
    path = directory / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
