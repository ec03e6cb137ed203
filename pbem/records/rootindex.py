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

`names.json` keeps every game's name (as `game_name` reads it) by the look of its game file,
for the check that names are unique (`pbem new`, every tick); `status.json` (`status-K-of-N.json`
for shard K of N) keeps what the status of each game is made of.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
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
MAIL = "mail"

Look = tuple[int, int, int, int]
"""A file as the index compares it: inode, size, modification and change time (nanoseconds)."""


def look(st: os.stat_result) -> Look:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class Found:
    """A game directory of a root: its path, its key (the path inside the root) and the look
    of its game file (None when the root is itself the game)."""

    path: Path
    key: str
    game_file: Look | None


def walk(root: Path) -> list[Found]:
    """Every game directory of `root`, the same and in the same order as
    `pbem.records.root.find_games` gives them; a folder is a game by its game.toml, looked at
    with one `stat` rather than by listing the folder."""
    if (root / GAME_FILE).is_file():
        return [Found(root, ".", None)]
    if not root.is_dir():
        raise PbemError(f"{root} is not a folder of games: it does not exist or is a file")
    found: list[Found] = []
    _walk(root, "", found)
    return sorted(found, key=lambda f: f.path)


def _walk(folder: Path, prefix: str, found: list[Found]) -> None:
    try:
        with os.scandir(folder) as entries:
            subfolders = [
                e.name
                for e in entries
                if not e.name.startswith(".") and e.is_dir(follow_symlinks=False)
            ]
    except OSError:
        return
    for name in subfolders:
        path = folder / name
        key = prefix + name
        mark = _game_file(path)
        if mark is not None:
            found.append(Found(path, key, mark))
        else:
            _walk(path, key + "/", found)


def _game_file(folder: Path) -> Look | None:
    """The look of a folder's game.toml when the folder is a game (as `os.walk` lists it: any
    entry that is not a folder, or a link to one), else None."""
    try:
        st = os.lstat(folder / GAME_FILE)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.stat(folder / GAME_FILE)
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
        self.now_ns = time.time_ns()

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
                newest = max(newest, setting[2])
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
    """When a file last changed, as the guard for files changed just now counts it: its
    modification time (its change time is in the fingerprint, not in this guard)."""
    return st.st_mtime_ns


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


def load(root: Path, name: str) -> dict[str, Any]:
    """The entries of one file of the index; none when it is missing, damaged (its digest
    does not match what it holds) or of another version: it is then rebuilt."""
    try:
        head, _, body = (root / INDEX_FOLDER / name).read_bytes().partition(b"\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("version") != VERSION:
            return {}
        if header.get("digest") != hashlib.blake2b(body, digest_size=16).hexdigest():
            return {}
        entries = json.loads(body)
    except (OSError, ValueError, RecursionError):
        return {}
    return entries if isinstance(entries, dict) else {}


def save(root: Path, name: str, entries: Mapping[str, Any]) -> None:
    """Write one file of the index whole: a line with its version and the digest of the rest,
    then the entries. A root that cannot be written to (a moderator's `pbem status` on a
    folder they may only read) keeps no index, and loses only time."""
    body = json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode()
    head = json.dumps(
        {"version": VERSION, "digest": hashlib.blake2b(body, digest_size=16).hexdigest()}
    ).encode()
    try:
        (root / INDEX_FOLDER).mkdir(exist_ok=True)
        atomic_write(root / INDEX_FOLDER / name, head + b"\n" + body)
    except (PbemError, OSError):
        return


def known_names(root: Path, games: Iterable[Found]) -> tuple[dict[str, str], dict[str, Any]]:
    """Each game's name as the index has it, for the games whose game file looks as it did
    when the name was read; and the entries to keep of the index of names."""
    entries = load(root, NAMES)
    names: dict[str, str] = {}
    for game in games:
        entry = entries.get(game.key)
        if (
            game.game_file is not None
            and isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[1], str)
            and tuple(entry[0]) == game.game_file
        ):
            names[game.key] = entry[1]
    return names, entries


def settled_look(mark: Look | None, now_ns: int) -> bool:
    return mark is not None and now_ns - mark[2] > RACY_NS


def game_names(
    root: Path, games: Sequence[Found], read: Any, keep: bool = False
) -> list[tuple[str, Path]]:
    """(name, path) of every game, from the index where the game file is as it was, else read
    with `read(path)`; with `keep`, the index of names is brought up to date."""
    names, entries = known_names(root, games)
    now_ns = time.time_ns()
    fresh: dict[str, Any] = {}
    out = []
    for game in games:
        name = names.get(game.key)
        if name is None:
            name = read(game.path)
        if settled_look(game.game_file, now_ns):
            fresh[game.key] = [list(game.game_file or ()), name]
        out.append((name, game.path))
    if keep and fresh != entries and keeps_index(games):
        save(root, NAMES, fresh)
    return out


def keeps_index(games: Sequence[Found]) -> bool:
    """A root keeps an index; a single game given as the root does not (it is one game)."""
    return not (len(games) == 1 and games[0].key == ".")
