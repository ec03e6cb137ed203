"""Changing the settings (`pbem config`): in a game's file, under the game's lock, or in the
pbem.toml of a folder of games (pbem.records.settings holds what they are and how they are
stored)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from pbem.records.disk import GAME_FILE, locked
from pbem.records.opening import read_game
from pbem.records.settings import (
    ROOT_FILE,
    Settings,
    SettingsError,
    changed,
    in_force,
    root_table,
    write_root_table,
)
from pbem.records.store import write_game


def configure(directory: Path, assignments: Mapping[str, str]) -> tuple[Path, Settings]:
    """Change settings in a game's file (when `directory` is a game) or in the pbem.toml of a
    folder of games; return the file changed and the settings now in force there."""
    if (directory / GAME_FILE).is_file():
        with locked(directory):
            game = read_game(directory)
            if assignments:
                game = replace(game, mail=changed(game.mail, assignments))
                write_game(game)
        return directory / GAME_FILE, in_force(directory, game.mail)
    if not directory.is_dir():
        raise SettingsError(f"{directory} is neither a game nor a folder of games")
    path = directory / ROOT_FILE
    if assignments:
        path = write_root_table(directory, changed(root_table(directory), assignments))
    return path, in_force(directory)
