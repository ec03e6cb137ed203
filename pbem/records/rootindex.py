"""What a folder of games keeps of itself between ticks, so that a tick costs what is due.

`pbem status` and `pbem run` look at every game of a root; most of them have not changed since
the last tick. The index, `.pbem-tick/` in the root, keeps for each game what its status was
made of together with the fingerprint of the files it was made from: the look of each of the
game's files and folders that the status reads (inode, size, modification and change times),
and of every `pbem.toml` above it. A game whose fingerprint is the same is not read again;
anything else is (docs/batch.md tells what counts). The index is never trusted over the files:

- a game is read again when anything in its fingerprint changed, and a game whose files
  changed in the last few seconds is not kept (a change within the file system's clock tick
  could otherwise go unseen: the "racy" files of git's index);
- the index is rebuilt when it is missing, damaged, or of another version;
- it is written whole (atomically), by each run, and its loss costs only time;
- nothing in it depends on the clock: what the time decides (a deadline passing) is decided
  afresh by every tick from the times it keeps.

`names.json` keeps every game's name (as `game_name` reads it, and folded) by the look of its
game file, under the folder it is in, with the look of every folder walked that is no game (the
root among them); `status.json` (`status-K-of-N.json` for shard K of N) keeps what the status of
each game is made of. Names are checked to be unique by every tick, from the look of every game
file (a name taken from the index only while its game file looks as it did), and by `pbem new`,
which looks only at the folders: a folder that looks as it did (and had settled) holds the same
subfolders, and its games' names are taken from the index unlooked at; the rest is listed again
(`games_named`; docs/batch.md tells what this trusts, and what it does not see).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pbem.errors import PbemError
from pbem.records.disk import GAME_FILE, LOCK_FILE, atomic_write
from pbem.records.history import HISTORY, ORDERS
from pbem.records.settings import ROOT_FILE

INDEX_FOLDER = ".pbem-tick"
VERSION = 1
"""Raised whenever what an entry holds changes: an index of another version is rebuilt."""
RACY_NS = 3_000_000_000
"""A game with a file changed this recently (against the machine's clock) is read again at the
next tick rather than kept: its file system may not have told that change from the next."""


def now_ns() -> int:
    """The machine's clock, as the guard against files changed just now reads it (RACY_NS): a
    seam, so that a test may move this clock on instead of ageing files, whose change times
    cannot be set back."""
    return time.time_ns()


MAIL = "mail"

Look = tuple[int, int, int, int]
"""A file as the index compares it: inode, size, modification and change time (nanoseconds)."""


def look(st: os.stat_result) -> Look:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


FolderLook = tuple[int, int, int, int, int]
"""A folder as the index compares it: device, inode, size, modification and change time."""


def folder_look(st: os.stat_result) -> FolderLook:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class Found:
    """A game directory of a root: its path, its key (the path inside the root) and the look
    of its game file (None when the root is itself the game)."""

    path: Path
    key: str
    game_file: Look | None


@dataclass(frozen=True)
class Folder:
    """A folder of a root that is no game (the root among them) as a walk found it: its look,
    taken before it was listed (None when it could not be looked at or listed), and its
    subfolders in order, each with whether it is a game."""

    look: FolderLook | None
    children: tuple[tuple[str, bool], ...]


@dataclass(frozen=True)
class Survey:
    """What a walk of a root found: its games, in order; every folder of it that is no game,
    by key (the root's is ""); when the walk began."""

    games: list[Found]
    folders: dict[str, Folder]
    started_ns: int


def walk(root: Path) -> list[Found]:
    """Every game directory of `root`, the same and in the same order as
    `pbem.records.root.find_games` gives them; a folder is a game by its game.toml, looked at
    with one `stat` rather than by listing the folder."""
    return survey(root).games


def survey(root: Path) -> Survey:
    """The games of `root` (as `walk`), with the look of every folder walked that is no game,
    for the index (`pbem new` trusts a folder that looks as it did: `games_named`)."""
    started = now_ns()
    if (root / GAME_FILE).is_file():
        return Survey([Found(root, ".", None)], {}, started)
    base = os.fspath(root)
    try:
        st = os.stat(base)
    except OSError:
        st = None
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise PbemError(f"{root} is not a folder of games: it does not exist or is a file")
    games: list[tuple[str, Look]] = []
    folders: dict[str, Folder] = {}
    _survey(base, "", st, games, folders)
    return Survey([Found(root / key, key, mark) for key, mark in games], folders, started)


def _survey(
    path: str,
    key: str,
    st: os.stat_result | None,
    games: list[tuple[str, Look]],
    folders: dict[str, Folder],
) -> None:
    """Walk one folder that is no game, depth first, its subfolders in the order of their
    names: the games come out in the order of their paths, as `find_games` sorts them."""
    names = _subfolders(path)
    children: list[tuple[str, bool]] = []
    for name in names or ():
        child, child_key = _join(path, name), _key(key, name)
        mark = _game_file(child)
        children.append((name, mark is not None))
        if mark is not None:
            games.append((child_key, mark))
            continue
        _survey(child, child_key, _lstat(child), games, folders)
    seen = folder_look(st) if st is not None and names is not None else None
    folders[key] = Folder(seen, tuple(children))


def _subfolders(path: str) -> list[str] | None:
    """The names of a folder's subfolders that are not hidden (links to folders left out, as
    `os.walk` leaves them), sorted; None when it cannot be listed."""
    try:
        with os.scandir(path) as entries:
            names = [
                e.name
                for e in entries
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return None
    names.sort()
    return names


def _join(path: str, name: str) -> str:
    return f"{path}{name}" if path.endswith("/") else f"{path}/{name}"


def _key(key: str, name: str) -> str:
    return f"{key}/{name}" if key else name


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _game_file(folder: str) -> Look | None:
    """The look of a folder's game.toml when the folder is a game (as `os.walk` lists it: any
    entry that is not a folder, or a link to one), else None."""
    path = f"{folder}/{GAME_FILE}"
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            return look(st)
        if stat.S_ISDIR(target.st_mode):
            return None
        return look(target)  # (a game file behind a link: what is read is the file linked to)
    return look(st)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """`--shard K/N`: shard K of N, K from 1 to N; None when not given."""
    if text is None:
        return None
    k, slash, n = text.strip().partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise PbemError(
            f"--shard {text!r} is not a shard: write K/N, the shard K of N machines, K from 1 "
            "to N (--shard 1/4, --shard 4/4)"
        )
    return int(k), int(n)


def in_shard(key: str, shard: tuple[int, int] | None) -> bool:
    """Whether the game at `key` (its path inside the root) belongs to shard K of N: the
    first 8 bytes of the SHA-256 of its path, as a number, modulo N, is K - 1."""
    if shard is None:
        return True
    k, n = shard
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n == k - 1


# ---------------------------------------------------------------------------------------------
# Fingerprints


class Fingerprints:
    """The fingerprints of a root's games, each `pbem.toml` above them looked at once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.resolved = root.resolve()
        self._settings: dict[Path, Look | None] = {}
        self.now_ns = now_ns()

    def of(self, game: Found) -> tuple[str, bool]:
        """A game's fingerprint, and whether it may be kept (no file of it changed in the last
        RACY_NS)."""
        parts: list[object] = []
        newest = _scan(game.path, parts)
        folder = self.resolved if game.key == "." else self.resolved / game.key
        for above in folder.parents:
            setting = self._setting(above)
            parts.append(setting)
            if setting is not None:
                newest = max(newest, setting[2], setting[3])
        digest = hashlib.blake2b(repr(parts).encode("utf-8", "surrogateescape"), digest_size=16)
        settled = self.now_ns - newest > RACY_NS
        return digest.hexdigest(), settled

    def _setting(self, folder: Path) -> Look | None:
        if folder not in self._settings:
            try:
                self._settings[folder] = look(os.stat(folder / ROOT_FILE))
            except OSError:
                self._settings[folder] = None
        return self._settings[folder]


_NUMBERED = 9  # "0012.toml"


def _scan(directory: Path, parts: list[object]) -> int:
    """Add the look of what a game's status reads to `parts`; when the newest of them changed
    (`_changed`).

    Every entry of the game folder (its .lock aside; an entry that is a link, the file linked
    to as well) and of `orders/` and `mail/`; of `history/`, every name, the look of the first
    history file and the last two (the pending resolution's, if interrupted, and the last
    one's) and of every other entry and what it holds (the deadline changes, vacations, seat
    changes, undos and holds). Of `mail/`, not its own look, which changes whenever its mail
    state is read (SQLite's journal files come and go): what it holds is looked at entry by
    entry."""
    newest = 0
    for name, st, sub in _entries(directory):
        if name == LOCK_FILE:
            continue
        if name == MAIL and sub:
            parts.append((name, "folder"))
        else:
            parts.append((name, look(st)))
            newest = max(newest, _changed(st))
        if stat.S_ISLNK(st.st_mode):  # (a game's own pbem.toml or game.toml behind a link)
            try:
                target = os.stat(directory / name)
            except OSError:
                parts.append((name, None))
            else:
                parts.append((name, look(target)))
                newest = max(newest, _changed(target))
        if not sub:
            continue
        if name in (ORDERS, MAIL):
            for inner, ist, _ in _entries(directory / name):
                parts.append((name, inner, look(ist)))
                newest = max(newest, _changed(ist))
        elif name == HISTORY:
            newest = max(newest, _scan_history(directory / name, parts))
    return newest


def _scan_history(folder: Path, parts: list[object]) -> int:
    newest = 0
    numbered: list[str] = []
    others: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                if len(e.name) == _NUMBERED and e.name[:4].isdigit() and e.name[4:] == ".toml":
                    numbered.append(e.name)
                else:
                    others.append(e.name)
    except OSError as err:
        parts.append(("history", repr(err)))
        return 0
    numbered.sort()
    parts.append(("history", tuple(numbered)))
    # the first history file (its key is checked against the seed) and the last two
    for name in sorted({*numbered[:1], *numbered[-2:]}) + sorted(others):
        try:
            st = os.lstat(folder / name)
        except OSError:
            parts.append(("history", name, None))
            continue
        parts.append(("history", name, look(st)))
        newest = max(newest, _changed(st))
        if stat.S_ISDIR(st.st_mode):
            for inner, ist, _ in _entries(folder / name):
                parts.append(("history", name, inner, look(ist)))
                newest = max(newest, _changed(ist))
    return newest


def _changed(st: os.stat_result) -> int:
    """When a file last changed, as the guard for files changed just now counts it: the later
    of its modification and change times (a file copied in with its old modification time,
    `cp -p`, changed when it was copied)."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def _entries(folder: Path) -> list[tuple[str, os.stat_result, bool]]:
    """A folder's entries, sorted by name: name, look (not following links), whether a
    folder; nothing when it cannot be listed."""
    out = []
    try:
        with os.scandir(folder) as entries:
            for e in entries:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                out.append((e.name, st, stat.S_ISDIR(st.st_mode)))
    except OSError:
        return []
    return sorted(out, key=lambda x: x[0])


# ---------------------------------------------------------------------------------------------
# The files


def shard_file(shard: tuple[int, int] | None) -> str:
    return "status.json" if shard is None else f"status-{shard[0]}-of-{shard[1]}.json"


NAMES = "names.json"
NAMES_VERSION = 2
"""The version of the index of names alone (its folders were added in 2): raising it rebuilds
that file, and leaves what the status index keeps."""


def load(root: Path, name: str, version: int = VERSION) -> dict[str, Any]:
    """The entries of one file of the index; none when it is missing, damaged (its digest
    does not match what it holds) or of another version: it is then rebuilt."""
    try:
        head, _, body = (root / INDEX_FOLDER / name).read_bytes().partition(b"\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("version") != version:
            return {}
        if header.get("digest") != hashlib.blake2b(body, digest_size=16).hexdigest():
            return {}
        entries = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return {}
    return entries if isinstance(entries, dict) else {}


def save(root: Path, name: str, entries: Mapping[str, Any], version: int = VERSION) -> None:
    """Write one file of the index whole: a line with its version and the digest of the rest,
    then the entries. A root that cannot be written to (a moderator's `pbem status` on a
    folder they may only read) keeps no index, and loses only time."""
    body = json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode()
    head = json.dumps(
        {"version": version, "digest": hashlib.blake2b(body, digest_size=16).hexdigest()}
    ).encode()
    try:
        (root / INDEX_FOLDER).mkdir(exist_ok=True)
        atomic_write(root / INDEX_FOLDER / name, head + b"\n" + body)
    except (PbemError, OSError):
        return


def settled_look(mark: Look | None, now: int) -> bool:
    """Whether a file's look had settled at `now`: no change (of its modification or change
    time) in the RACY_NS before."""
    return mark is not None and now - max(mark[2], mark[3]) > RACY_NS


def _settled_folder(seen: FolderLook, now: int) -> bool:
    return now - max(seen[3], seen[4]) > RACY_NS


Entry = list[Any]
"""A game as the index of names keeps it: the look of its game file (a list), its name, and
its name folded (as `pbem.records.root.fold` folds it)."""


class _Names:
    """The index of names as read: for each folder of the root that is no game (by key, the
    root's ""), its look when it may be trusted (else None), and its subfolders in order,
    each None (no game) or the entry of a game.

    A folder's look is kept only when the folder had settled (no change in the last RACY_NS)
    and each of its games was kept; a game whose file had not settled is left out."""

    def __init__(self, entries: Mapping[str, Any], fold: Callable[[str], str]) -> None:
        folders = entries.get("folders")
        self._folders: dict[str, Any] = folders if isinstance(folders, dict) else {}
        self._refold = entries.get("unicode") != unicodedata.unidata_version
        self._fold = fold

    def _entry(self, value: Any) -> Entry | None:
        if not (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], list)
            and isinstance(value[1], str)
            and isinstance(value[2], str)
        ):
            return None
        if self._refold:  # (folded by another version of Unicode than this Python's)
            return [value[0], value[1], self._fold(value[1])]
        return value

    def children(self, key: str) -> dict[str, Entry | None]:
        """The subfolders the index has for a folder, whether or not it may be trusted; an
        entry that is not one is left out."""
        record = self._folders.get(key)
        if not (isinstance(record, list) and len(record) == 2 and isinstance(record[1], dict)):
            return {}
        out: dict[str, Entry | None] = {}
        for name, value in record[1].items():
            out[name] = None if value is None else self._entry(value)
            if value is not None and out[name] is None:
                del out[name]
        return out

    def trusted(self, key: str, st: os.stat_result | None, now_ns: int) -> dict[str, Any] | None:
        """A folder's subfolders from the index when the folder looks as the index saw it
        (and had settled then); None when it must be listed again."""
        record = self._folders.get(key)
        if (
            st is None
            or not isinstance(record, list)
            or len(record) != 2
            or not isinstance(record[1], dict)
            or record[0] != list(folder_look(st))
            or not _settled_folder(folder_look(st), now_ns)
        ):
            return None
        children: dict[str, Any] = record[1]
        for value in children.values():
            if value is not None and not (
                type(value) is list and len(value) == 3 and type(value[1]) is type(value[2]) is str
            ):
                return None  # (an entry that is not one: the folder is listed)
        return self.children(key) if self._refold else children

    def games(self) -> dict[str, Entry]:
        """Every game the index has, by key."""
        out: dict[str, Entry] = {}
        for key in self._folders:
            for name, entry in self.children(key).items():
                if entry is not None:
                    out[_key(key, name)] = entry
        return out


def game_names(
    root: Path,
    found: Survey,
    read: Callable[[Path], str],
    fold: Callable[[str], str],
    keep: bool = False,
) -> list[tuple[str, Path]]:
    """(name, path) of every game, from the index where the game file is as it was, else read
    with `read(path)`; with `keep`, the index of names is brought up to date (`fold` folds the
    names it keeps, for `games_named`). Every game file is looked at: a tick never takes a
    name on trust."""
    entries = load(root, NAMES, NAMES_VERSION)
    known = _Names(entries, fold).games()
    out = []
    folded: dict[str, str] = {}
    for game in found.games:
        entry = known.get(game.key)
        if entry is not None and game.game_file is not None and tuple(entry[0]) == game.game_file:
            name: str = entry[1]
            folded[game.key] = entry[2]
        else:
            name = read(game.path)
        out.append((name, game.path))
    if keep and keeps_index(found.games):
        fresh = _names_entries(found, out, folded, fold, trusting=True)
        if fresh != entries:
            if not _folders_tell(root):
                fresh = _names_entries(found, out, folded, fold, trusting=False)
            save(root, NAMES, fresh, NAMES_VERSION)
    return out


def _names_entries(
    found: Survey,
    names: Sequence[tuple[str, Path]],
    folded: Mapping[str, str],
    fold: Callable[[str], str],
    trusting: bool,
) -> dict[str, Any]:
    """The index of names for what a walk found: every game whose file had settled, under its
    folder; the look of every folder that may be trusted (settled, on the root's file system,
    every game of it kept), when `trusting`."""
    now = found.started_ns
    kept: dict[str, Entry] = {}
    for game, (name, _) in zip(found.games, names, strict=True):
        if game.game_file is not None and settled_look(game.game_file, now):
            kept[game.key] = [list(game.game_file), name, folded.get(game.key) or fold(name)]
    top = found.folders.get("")
    device = top.look[0] if top is not None and top.look is not None else None
    folders: dict[str, Any] = {}
    for key, folder in found.folders.items():
        children: dict[str, Entry | None] = {}
        whole = True
        for name, is_game in folder.children:
            entry = kept.get(_key(key, name)) if is_game else None
            if is_game and entry is None:
                whole = False
                continue
            children[name] = entry
        seen = folder.look
        trusted = (
            trusting
            and whole
            and seen is not None
            and seen[0] == device
            and _settled_folder(seen, now)
        )
        folders[key] = [list(seen) if trusted and seen is not None else None, children]
    return {"unicode": unicodedata.unidata_version, "folders": folders}


PROBE = "probe"
_LONG_AGO_NS = 946_684_800 * 10**9
"""2000-01-01: the time the probe sets the index's folder to (nothing reads that folder's
times)."""


def _folders_tell(root: Path) -> bool:
    """Whether the file system the root is on marks a folder changed when an entry is added to
    it, in a way that setting the folder's modification time back does not hide (its change
    time moves, and cannot be set): what trusting a folder's look rests on (a FUSE mount may
    keep a folder's times still; some file systems keep no change time). Tried on the index's
    own folder: its times set to long ago, a file made and removed in it, its times set back
    again. A doubt (the folder made just now, or that cannot be written to) is a no, asked
    again at the next save."""
    folder = root / INDEX_FOLDER
    probe = folder / f"{PROBE}-{os.getpid()}"
    old = (_LONG_AGO_NS, _LONG_AGO_NS)
    try:
        if not folder.is_dir():
            folder.mkdir()
            return False  # (its change time would be the making's)
        start = time.time_ns()
        os.utime(folder, ns=old)
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
        added = os.lstat(folder)
        os.utime(folder, ns=old)
        back = os.lstat(folder)
        device = os.stat(root).st_dev
    except OSError:
        return False
    return (
        added.st_mtime_ns != _LONG_AGO_NS
        and back.st_mtime_ns == _LONG_AGO_NS
        and back.st_ctime_ns > start - RACY_NS
        and back.st_dev == device
    )


def games_named(
    root: Path,
    wanted: str,
    read: Callable[[Path], str],
    fold: Callable[[str], str],
) -> list[Path]:
    """The games of `root` whose name folds to `wanted`, in the order `walk` gives them: the
    check of a new game's name (`pbem new`).

    A folder that looks as the index saw it (inode, size, modification and change times, on
    the same device), when it had settled, holds the same subfolders: its games' names are
    taken from the index without a look at their files; every other folder is listed again,
    and its games' files looked at (docs/batch.md, "The index"). A folder inside the root
    that has an index of its own (a root a tick is run over) is searched with it."""
    if (root / GAME_FILE).is_file():
        return [root] if fold(read(root)) == wanted else []
    base = os.fspath(root)
    search = _Search(_Names(load(root, NAMES, NAMES_VERSION), fold), wanted, read, fold)
    search.folder(base, "", _stat(base))
    return [root / key for key in search.found]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


@dataclass
class _Search:
    """A search of a root for the games of a name (`games_named`)."""

    index: _Names
    wanted: str
    read: Callable[[Path], str]
    fold: Callable[[str], str]
    now_ns: int = field(default_factory=lambda: now_ns())  # (the seam, looked up when called)
    found: list[str] = field(default_factory=list)

    def folder(self, path: str, key: str, st: os.stat_result | None) -> None:
        """A folder that is no game: its subfolders from the index when it looks as it did,
        else listed."""
        children = self.index.trusted(key, st, self.now_ns)
        if children is not None:
            self._kept(path, key, children)
        else:
            self._unknown(path, key, st)

    def _unknown(self, path: str, key: str, st: os.stat_result | None) -> None:
        if key and os.path.isdir(_join(path, INDEX_FOLDER)):  # a root with an index of its own
            inner = _Search(
                _Names(load(Path(path), NAMES, NAMES_VERSION), self.fold),
                self.wanted,
                self.read,
                self.fold,
                self.now_ns,
            )
            inner.folder(path, "", st)
            self.found += [_key(key, k) for k in inner.found]
        else:
            self._listed(path, key)

    def _kept(self, path: str, key: str, children: Mapping[str, Entry | None]) -> None:
        for name, entry in children.items():
            if entry is not None:
                if entry[2] == self.wanted:
                    self.found.append(_key(key, name))
                continue
            child, child_key = _join(path, name), _key(key, name)
            st = _lstat(child)
            inner = self.index.trusted(child_key, st, self.now_ns)
            if inner is not None:
                self._kept(child, child_key, inner)
                continue
            mark = _game_file(child)  # (a game file put in a folder changes its look)
            if mark is not None:
                self._game(child, child_key, mark, None)
            else:
                self._unknown(child, child_key, st)

    def _listed(self, path: str, key: str) -> None:
        kept = self.index.children(key)
        for name in _subfolders(path) or ():
            child, child_key = _join(path, name), _key(key, name)
            mark = _game_file(child)
            if mark is not None:
                self._game(child, child_key, mark, kept.get(name))
            else:
                self.folder(child, child_key, _lstat(child))

    def _game(self, path: str, key: str, mark: Look, entry: Entry | None) -> None:
        if entry is not None and tuple(entry[0]) == mark:
            folded: str = entry[2]
        else:
            folded = self.fold(self.read(Path(path)))
        if folded == self.wanted:
            self.found.append(key)


def keeps_index(games: Sequence[Found]) -> bool:
    """A root keeps an index; a single game given as the root does not (it is one game)."""
    return not (len(games) == 1 and games[0].key == ".")
