"""What a game keeps of its public record: published.toml (when it was first published, and how
many resolutions the record holds), and the name of the record's view of the end of the game.
Writing a record is pbem.game.record's."""

from __future__ import annotations

import contextlib
from pathlib import Path

from pbem.errors import GameFileError
from pbem.records.store import (
    _load_toml,
)

PUBLISHED = "published.toml"
"""In a game's folder once its record is out: when, and how many resolutions it holds."""


def published_when(directory: Path) -> str | None:
    """When the game's public record was published (ISO 8601), or None if it never was."""
    path = directory / PUBLISHED
    if not path.is_file():
        return None
    with contextlib.suppress(GameFileError):
        return str(_load_toml(path).get("published", "?"))
    return "?"


VIEW_FILE = "view.json"
"""The record's view of the end of the game, for the kit's and pbem's `verify --report`."""
