"""A game opened for work: its file read (pbem.records.store.load_game) and checked against its
history (pbem.records.agreement.history_problem), which every command does before it trusts the
game file; only the audit, which replays and compares everything, reads it unchecked."""

from __future__ import annotations

from pathlib import Path

from pbem.errors import GameFileError
from pbem.records.agreement import history_problem
from pbem.records.disk import GAME_FILE, RECORD_FILE
from pbem.records.store import Game, load_game


def read_game(directory: Path, *, record: bool = False) -> Game:
    """Load a game directory (pbem.records.store.load_game: `record` reads a public record too)
    and check its game file against its history; raises GameFileError if it is not a game, is
    damaged or disagrees with its history."""
    game = load_game(directory, record=record)
    problem = history_problem(game)
    if problem:
        path = directory / (RECORD_FILE if game.public is not None else GAME_FILE)
        raise GameFileError(f"{path} does not match the history: {problem}")
    return game
