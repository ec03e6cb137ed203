"""A long self-played game through the game directory: six players with long names (one in
Cyrillic, one with accents), bots' orders mailed in as files, resolved to the end."""

from __future__ import annotations

import random
from pathlib import Path

from conftest import write_bot_orders

from pbem.core.state import Options, Phase, StopAt
from pbem.game import processor
from pbem.records.opening import read_game

LONG_NAMES = (
    "Maximiliana-Wolkenstein-Trostbe",
    "Ангелина-Владимировна-Соколова",
    "José-María_de-la-Concepción",
    "Bartholomew_Featherstonehaugh",
    "Zoë-Åsa-Øverby-Çelik-Ñúñez-Ünal",
    "q",
)
MOST_RESOLUTIONS = 160


def play_long_game(directory: Path, seed: int = 12, options: Options | None = None) -> Path:
    """A six-player game, resolved until it is over (or MOST_RESOLUTIONS)."""
    processor.new_game(
        directory,
        processor.parse_player_list(list(LONG_NAMES)),
        options or Options(stop_at=StopAt.THRESHOLD),  # as played before stop_at was a promise
        seed=bytes([seed]) * 32,
        name="long-game",
    )
    rng = random.Random(seed)
    for _ in range(MOST_RESOLUTIONS):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            break
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    return directory
