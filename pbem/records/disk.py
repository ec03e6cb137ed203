"""Durable writing and the game's lock.

Every write goes to a temporary file that is flushed, synced and renamed over the target, so a
reader sees the old file or the new one, never half of one. The lock keeps a second run off a
game directory while one works in it.

Inside `grouped()`, the folders written in are synced together when `settle()` is called (the
mail state calls it, for its own folder, before each commit) rather than after each file, and
the files given to `write_later` (the answers a fetch writes) are written, synced and renamed
in the background meanwhile: a fetch of a hundred messages writes two hundred files and syncs
each of its folders once, while it reads the next messages. Every file is still whole; what
waits for `settle` is that it is in place and on the disk, and nothing counts it as written
before then.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import os
import tempfile
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.errors import DiskError, GameFileError, LockedError, PbemError
from pbem.files import disk_error, known_clean, lock_error, swept

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

GAME_FILE = "game.toml"
RECORD_FILE = "record.toml"
"""A game's public record holds this file in the place of the game file (docs/publish.md)."""


def not_a_game(directory: Path) -> str:
    """What a command that plays says of a game's public record."""
    return (
        f"{directory} is the public record of a game, not a game: nothing can be played in it; "
        f"'pbem audit {directory}' checks it"
    )


LOCK_FILE = ".lock"


@dataclass
class _Group:
    """The writes of a `grouped` block not yet settled."""

    writes: dict[Path, Future[None]] = field(default_factory=dict)
    """Files written in the background (`write_later`), by their paths."""
    folders: dict[Path, None] = field(default_factory=dict)
    """Folders written in, to be synced."""
    made: set[Path] = field(default_factory=set)
    """Folders known to be there (made or found by an earlier `write_later`)."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held to change `writes` and `folders` (settled side by side, `side_by_side`)."""
    real: dict[Path, Path] = field(default_factory=dict)
    """Each folder as named, as the system finds it (`key`)."""
    keys: dict[Path, Path] = field(default_factory=dict)
    """Each file's path as named, and its `key` (a file written again, read, waited for)."""

    def key(self, path: Path) -> Path:
        """The path the system writes for `path` (its folder's links followed, then `..`):
        what the writes are known and made by, and settled under."""
        known = self.keys.get(path)
        if known is None:
            folder = Path(path).parent
            real = self.real.get(folder)
            if real is None:
                real = self.real[folder] = Path(os.path.realpath(folder))
            known = self.keys[path] = real / Path(path).name
        return known


_GROUP: ContextVar[_Group | None] = ContextVar("pbem_group", default=None)


@contextlib.contextmanager
def grouped() -> Iterator[None]:
    """Writes settled together (`settle`, and at the end whatever happens): the folders
    written in are synced then rather than after each file, and `write_later` writes in the
    background until then."""
    token = _GROUP.set(_Group())
    try:
        yield
        settle()
    except BaseException:
        with contextlib.suppress(PbemError):
            settle()  # what was written is synced all the same; the first error is told
        raise
    finally:
        _GROUP.reset(token)


def write_later(path: Path, data: bytes | str) -> None:
    """`atomic_write`, in the background inside `grouped` (at once outside it): the file is in
    place, whole and synced, by the next `settle` that covers it, and not seen before."""
    group = _GROUP.get()
    if group is None:
        atomic_write(path, data)
        return
    key = group.key(path)
    with group.lock:
        earlier = group.writes.pop(key, None)
    if earlier is not None:  # the same file again: the first write ends before the second
        _waited(group, key, earlier)
    raw = data.encode() if isinstance(data, str) else data
    made = [] if key.parent in group.made else _make_folder(key.parent)
    folders = [key.parent, *(m.parent for m in made)]
    with group.lock:
        group.made.add(key.parent)
        group.folders.update(dict.fromkeys(folders))
        group.writes[key] = _pool("write").submit(_write_one, key, raw)


def written(path: Path) -> None:
    """Wait for a `write_later` of `path` under way, if any: it is then in place (a DiskError
    if it failed). Call it before reading or moving a file written that way."""
    group = _GROUP.get()
    if group is None:
        return
    key = group.key(path)
    with group.lock:
        write = group.writes.pop(key, None)
    if write is not None:
        _waited(group, key, write)


def under_way(path: Path) -> bool:
    """Whether `path` was given to `write_later` since the last `settle` that covers it (it is
    written in the current group of a fetch, not yet committed)."""
    group = _GROUP.get()
    if group is None:
        return False
    with group.lock:
        return group.key(path) in group.writes


def _waited(group: _Group, key: Path, write: Future[None]) -> None:
    """Wait for a background write taken out of the group; one that failed is put back, so
    that the `settle` covering it fails too (what its commit would record is not on the
    disk), not only the call that found it."""
    try:
        _wait(key, write)
    except DiskError:
        with group.lock:
            group.writes.setdefault(key, write)
        raise


def settle(under: Path | None = None) -> None:
    """Finish the `grouped` writes under way (nothing outside them) in `under` (all of them
    when None): every `write_later` file in place, every folder written in synced. The first
    failure is raised (DiskError) once all are finished; those writes are not tried again."""
    group = _GROUP.get()
    if group is None:
        return
    top = os.path.realpath(under) if under is not None else None

    def mine(path: Path) -> bool:
        return top is None or str(path) == top or str(path).startswith(top + os.sep)

    with group.lock:
        writes = {p: group.writes.pop(p) for p in [p for p in group.writes if mine(p)]}
        folders = [f for f in group.folders if mine(f)]
        for folder in folders:
            del group.folders[folder]
    failed: DiskError | None = None
    for path, write in writes.items():
        try:
            _wait(path, write)
        except DiskError as err:
            failed = failed or err
    for folder in folders:
        try:
            _sync(folder)
        except OSError as err:
            failed = failed or disk_error(err, folder)
    if failed is not None:
        raise failed


def side_by_side(calls: Sequence[Callable[[], None]]) -> list[PbemError | None]:
    """Run `calls` side by side (each in threads of its own, with the `grouped` writes under
    way: the commits of a fetch's games, whose syncs the file system then makes together);
    the PbemError each raised, or None. Any other error is raised once all have ended."""
    if len(calls) < 2:
        return [_outcome(call) for call in calls]
    from concurrent.futures import wait

    pool = _pool("commit")
    futures = [pool.submit(contextvars.copy_context().run, _outcome, call) for call in calls]
    try:
        wait(futures)
    except BaseException:  # stopped (Ctrl-C): the calls under way end before the caller goes on
        wait(futures)
        raise
    return [future.result() for future in futures]


def _outcome(call: Callable[[], None]) -> PbemError | None:
    try:
        call()
    except PbemError as err:
        return err
    return None


def _wait(path: Path, write: Future[None]) -> None:
    try:
        write.result()
    except OSError as err:
        raise disk_error(err, path) from None


def _make_folder(folder: Path) -> list[Path]:
    """Make `folder` (and its parents); the folders it made, each to be synced in its parent."""
    made: list[Path] = []
    missing = folder
    while not missing.exists() and missing.parent != missing:
        made.append(missing)
        missing = missing.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def _write_one(path: Path, raw: bytes) -> None:
    """One file written, synced and renamed over `path` (a background write): few calls, each
    of which lets the fetch's own thread run while it waits (`_temporary`)."""
    fd, tmp = _temporary(path)
    try:
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _temporary(path: Path) -> tuple[int, str]:
    """A new file beside `path`, named as `tempfile.mkstemp(prefix=f".{name}.",
    suffix=".tmp")` names it (`.<name>.<8 characters>.tmp`, which `remove_temporaries` knows),
    made only if no file or link has that name, readable by its owner alone: its descriptor
    and its path. In one system call, not the several of `mkstemp`: the threads that write in
    the background then hold the interpreter less often."""
    for _ in range(100):
        tmp = f"{path.parent}{os.sep}.{path.name}.{os.urandom(4).hex()}.tmp"
        try:
            return os.open(tmp, _FLAGS, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


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
            made.extend(_make_folder(folder))
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
        group = _GROUP.get()
        if group is not None:
            with group.lock:
                group.folders.update(dict.fromkeys(Path(os.path.realpath(f)) for f in synced))
            return
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


_POOLS: dict[str, tuple[int, ThreadPoolExecutor]] = {}
_THREADS = {"sync": 8, "commit": 8, "write": 2}
"""How many threads each kind of work has. Syncs and commits mostly wait for the disk, which
takes many at once. The background writes of a fetch (`write_later`) run beside its own
thread, which is busy reading messages, and each of their calls into the system hands the
interpreter back and forth with it: on a two-core machine a fetch of 2,000 messages for 100
games (benchmarks/mail_state.py) was no faster with eight such threads than with two, and
often slower; two still keep more than one sync in flight for a slow disk."""


def _pool(name: str) -> ThreadPoolExecutor:
    """Threads kept for one kind of work (`sync`: files synced side by side; `write`: files
    written in the background; `commit`: commits side by side, which wait for those): made
    once in each process (a process forked from one that had them has none of its threads)."""
    made = _POOLS.get(name)
    if made is None or made[0] != os.getpid():
        from concurrent.futures import ThreadPoolExecutor  # (and logging) when writing

        made = _POOLS[name] = (
            os.getpid(),
            ThreadPoolExecutor(_THREADS[name], thread_name_prefix=f"pbem-{name}"),
        )
    return made[1]


def _syncing() -> ThreadPoolExecutor:
    return _pool("sync")


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
        if (directory / RECORD_FILE).is_file():
            raise GameFileError(not_a_game(directory))
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
        if creating:
            yield
            return
        _, clean = swept(directory)
        with known_clean(directory, clean):  # (the read under this lock needs no second walk)
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


def replace_folder(
    out: Path,
    files: Mapping[str, str | bytes],
    ours: Callable[[Path], Collection[str] | None],
    what: str,
) -> None:
    """Write `files` (by path inside it) as the folder `out`, whole: into a new folder beside
    it, which then takes the place of `out`, so that a reader never finds half of it.

    `ours(out)` gives the paths an earlier run wrote into `out` (from the list it left there),
    or None when `out` is not such a folder. A folder that is not is refused unless empty,
    naming `what` was to be written. What else `out` holds (a web server's `.htaccess`, the
    moderator's own pages) is the moderator's and moves into the new folder as it is; a file of
    theirs where pbem now writes one is refused before anything is written. `out` inside a
    game's folder is refused. Files and folders are made readable by all (a web server serves
    them)."""
    import shutil

    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise PbemError(f"{out} is not a folder: give a folder for {what}")
    for folder in (out.resolve(), *out.resolve().parents):
        if (folder / GAME_FILE).is_file():
            raise PbemError(
                f"{out} is inside the game folder {folder}: give a folder outside every game "
                f"for {what}"
            )
    kept: list[str] = []
    if out.is_dir() and any(out.iterdir()):
        written = ours(out)
        if written is None:
            raise PbemError(
                f"{out} already holds files that are not {what}: give an empty or new folder"
            )
        kept = [path for path in files_in(out) if path not in written and not _temporary_name(path)]
        clash = next((path for path in kept if path in files), None)
        if clash is not None:
            raise PbemError(
                f"{out / clash} is not a file pbem wrote there, and {what} now needs that name: "
                "move it away and run the command again"
            )
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        new = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=parent))
    except OSError as err:
        raise disk_error(err, parent, "create") from None
    try:
        paths = {new / path: data for path, data in files.items()}
        atomic_write_all(paths)
        for path in paths:
            os.chmod(path, 0o644)
        for folder in {new, *(p.parent for p in paths)}:
            os.chmod(folder, 0o755)
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=parent))
            for name in kept:  # the moderator's own files go over as they are
                (new / name).parent.mkdir(parents=True, exist_ok=True)
                os.replace(out / name, new / name)
            os.replace(out, old / "previous")
        os.replace(new, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as err:
        shutil.rmtree(new, ignore_errors=True)
        raise disk_error(err, out) from None


def files_in(folder: Path) -> list[str]:
    """Every file (and link, not followed) below `folder`, by its path inside it."""
    found = []
    for where, folders, names in os.walk(folder):
        base = Path(where)
        found += [(base / n).relative_to(folder).as_posix() for n in names]
        found += [
            (base / d).relative_to(folder).as_posix() for d in folders if (base / d).is_symlink()
        ]
    return sorted(found)


def _temporary_name(path: str) -> bool:
    """A temporary file of an atomic write a killed run left (".NAME.XXXX.tmp")."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith(".") and name.endswith(".tmp")


def write(path: Path, data: bytes | str, later: bool = False) -> None:
    """Write a file atomically; a failure (disk full, read-only) is a sentence, not a crash.
    `later`: in the background in a fetch (`disk.write_later`), in place by its commit."""
    try:
        if later:
            write_later(path, data)
        else:
            atomic_write(path, data)
    except OSError as err:
        raise GameFileError(
            f"cannot write {path}: {err.strerror or err}; fix that and run the command again "
            "(nothing is lost: what was done so far is recorded)"
        ) from None
