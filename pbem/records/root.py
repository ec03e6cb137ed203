"""A games root: a folder whose subfolders, at any depth, are game directories.

A game directory is found by its game.toml; nothing inside a game directory is searched for
more games, nor are hidden folders. Game names are unique in a root, since mail is routed to a
game by its name. The root of a game is the nearest folder above it with a pbem.toml, or else
the folder it is in.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

import tomli as tomllib  # the compiled parser the game files are read with (pbem.records.store)

from pbem.errors import PbemError
from pbem.files import GAME_FILE_LIMIT, FileProblem, read_bounded
from pbem.records import rootindex
from pbem.records.disk import GAME_FILE, RECORD_FILE
from pbem.records.settings import ROOT_FILE


def find_games(root: Path, *, records: bool = False) -> list[Path]:
    """Every game directory in `root` (or `root` itself when it is one), sorted by path; with
    `records`, every game's public record too (for what reads the histories alone)."""
    marks = {GAME_FILE, RECORD_FILE} if records else {GAME_FILE}
    if any((root / mark).is_file() for mark in marks):
        return [root]
    if not root.is_dir():
        raise PbemError(f"{root} is not a folder of games: it does not exist or is a file")
    found: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        if marks.intersection(files) and Path(folder) != root:
            found.append(Path(folder))
            subfolders[:] = []
            continue
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
    return sorted(found)


def game_name(directory: Path) -> str:
    """A game's name as its game file gives it, or the folder's name when it cannot be read
    (a damaged game still has a name to be listed under)."""
    try:
        text = read_bounded(directory / GAME_FILE, GAME_FILE_LIMIT).decode("utf-8")
        name = tomllib.loads(text).get("game")
    except (FileProblem, tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError):
        return directory.name
    return name if isinstance(name, str) and name else directory.name


def root_of(directory: Path) -> Path:
    """The root a game directory belongs to: the nearest folder above with a pbem.toml, or
    else its parent folder."""
    folder = directory.resolve()
    for candidate in folder.parents:
        if (candidate / ROOT_FILE).is_file():
            return candidate
    return folder.parent


@dataclass(frozen=True)
class Root:
    """The games of a root by name; names given to more than one game are listed apart."""

    path: Path
    games: tuple[tuple[str, Path], ...]

    @cached_property
    def by_name(self) -> Mapping[str, Path]:
        """Every game whose name no other game shares (compared as `fold` compares)."""
        return MappingProxyType({n: p for n, p in self.games if len(self._groups[fold(n)]) == 1})

    @cached_property
    def duplicates(self) -> Mapping[str, list[Path]]:
        """Every name shared with another game (letters in any case and width: `friday` and
        `Friday` are one name), with the paths of all the games that share it."""
        groups = self._groups
        return MappingProxyType(
            {n: list(groups[fold(n)]) for n, _ in self.games if len(groups[fold(n)]) > 1}
        )

    @cached_property
    def _groups(self) -> dict[str, tuple[Path, ...]]:
        groups: dict[str, list[Path]] = {}
        for name, path in self.games:
            groups.setdefault(fold(name), []).append(path)
        return {k: tuple(v) for k, v in groups.items()}

    def duplicate_reason(self, path: Path) -> str | None:
        """Why the game at `path` cannot be told apart from another, or None."""
        for name, paths in self.duplicates.items():
            if path in paths:
                others = ", ".join(str(p) for p in paths if p != path)
                return f"the name '{name}' is also the name of {others}: rename one of them"
        return None


def fold(name: str) -> str:
    """A name as names are compared (a game's, a player's): `Friday`, `friday` and `ｆｒｉｄａｙ`
    are one."""
    return unicodedata.normalize("NFKC", name).casefold()


def indexed_root(path: Path) -> Root:
    """The games of a root by name as `open_root` finds them, each name read from the root's
    index of names where the game file is as it was when the name was read (a tick's fetch:
    no game file of 10,000 parsed for its name), else from the game file."""
    found = rootindex.survey(path)
    return Root(path, tuple(rootindex.game_names(path, found, game_name, fold)))


def open_root(path: Path, games: Sequence[Path] | None = None) -> Root:
    found = find_games(path) if games is None else games
    return Root(path, tuple((game_name(g), g) for g in found))


def names_root(directory: Path) -> Path:
    """The folder in which a game at `directory` must have a name of its own: the outermost of
    the roots a tick may be run over that would take it in. These are its root (`root_of`) and
    every folder above it with a pbem.toml, or with the index a `pbem run` over it keeps
    (`.pbem-tick/`): a tick over any of them finds every game below it, at any depth, and
    routes mail among them by name. Each is inside the next, so the outermost holds them all."""
    outer = root_of(directory)
    for candidate in directory.resolve().parents:
        if (candidate / ROOT_FILE).is_file() or (candidate / rootindex.INDEX_FOLDER).is_dir():
            outer = candidate  # (the folders above come nearest first: the last is the outermost)
    return outer


def refuse_duplicate(directory: Path, name: str) -> None:
    """Raise PbemError when a root a new game would join (`names_root`) already has a game
    called `name` (in any case or width of its letters)."""
    root = names_root(directory)
    if not root.is_dir():
        return
    target = directory.resolve()
    for other in rootindex.games_named(root, fold(name), game_name, fold):
        if other.resolve() != target:
            raise PbemError(
                f"{other} already holds a game called '{name}' in {root}: names are unique "
                "in a folder of games, so that mail reaches the right one; choose another "
                "with --name"
            )
