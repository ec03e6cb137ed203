"""The tallies a game keeps (history/tallies.json, docs/history.md): its story in running
numbers after its last resolution (pbem.core.tallies), so that a resolution's reports read
them and the new events rather than the whole history.

They are only ever a shortcut: whatever they hold is what the history gives. Each file names
the resolution it is after and the SHA-256 of that resolution's history file; tallies that do
not match the history (an undo took the resolution back, a run stopped before writing them, a
file damaged or of another version) are counted again from the history files, and a game
without any (made before pbem kept them) has them counted once, from its history, and written
by its next resolution. `pbem audit` counts them from the history and names any number that
differs (`tallies_difference`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pbem.core.tallies import Tallies
from pbem.files import FileProblem, read_bounded
from pbem.records.disk import atomic_write
from pbem.records.history import HISTORY, history_path, read_history
from pbem.records.store import FILE_LIMIT

TALLIES = "tallies.json"


class TalliesProblem(Exception):
    """Why the tallies kept cannot be used, in words (they are counted again from the history)."""


def tallies_path(directory: Path) -> Path:
    return directory / HISTORY / TALLIES


def history_digest(directory: Path, resolution: int) -> str | None:
    """SHA-256 of history/NNNN.toml as it is on the disk, or None when it cannot be read."""
    try:
        return hashlib.sha256(
            read_bounded(history_path(directory, resolution), FILE_LIMIT)
        ).hexdigest()
    except FileProblem:
        return None


def stored_tallies(directory: Path) -> tuple[Tallies, str] | None:
    """The tallies kept and the digest of the history file they are after; None when the game
    keeps none; TalliesProblem when the file is not tallies pbem writes."""
    path = tallies_path(directory)
    try:
        raw = read_bounded(path, FILE_LIMIT, follow=False)
    except FileProblem as err:
        if not path.exists() and not path.is_symlink():
            return None
        raise TalliesProblem(f"cannot read it: {err}") from None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("it holds no table")
        digest = data.get("history")
        if not isinstance(digest, str):
            raise ValueError("it names no history file's digest")
        return Tallies.from_dict(data), digest
    except (ValueError, RecursionError) as err:  # (json's errors are ValueErrors)
        raise TalliesProblem(f"it is damaged ({err})") from None


def kept_tallies(directory: Path, players: Sequence[str], before: int) -> Tallies | None:
    """The tallies kept, when they can be brought up to just before resolution `before`: of
    these players, after an earlier resolution, and after that resolution's history file as
    it is now. None when none can."""
    try:
        stored = stored_tallies(directory)
    except TalliesProblem:
        return None
    if stored is None:
        return None
    tallies, digest = stored
    if tallies.players != tuple(players) or not 0 <= tallies.resolution < before:
        return None
    if history_digest(directory, tallies.resolution) != digest:
        return None
    return tallies


def tallies_before(directory: Path, players: Sequence[str], before: int) -> Tallies:
    """The tallies after resolutions 0 to `before` - 1 (those the history holds): those kept,
    with any history file after them folded in (a run that stopped before writing them), or
    else counted from the whole history."""
    tallies = kept_tallies(directory, players, before) or Tallies(players)
    for r in range(tallies.resolution + 1, before):
        if not history_path(directory, r).is_file():  # (as far as the history goes)
            break
        record = read_history(directory, r)
        tallies.fold(r, record.turn, record.events)
    return tallies


def tallies_text(tallies: Tallies, digest: str) -> str:
    """The file's content: the tallies, then the digest of the history file they are after."""
    return json.dumps({**tallies.to_dict(), "history": digest}, separators=(",", ":")) + "\n"


def write_tallies(directory: Path, tallies: Tallies) -> None:
    """Keep `tallies`, after the history file of their resolution as it is now."""
    digest = history_digest(directory, tallies.resolution)
    if digest is None:  # (the history file is gone: nothing they could be checked against)
        return
    atomic_write(tallies_path(directory), tallies_text(tallies, digest))


def tallies_difference(kept: Any, counted: Any) -> str | None:
    """The first value that differs between the tallies kept and those counted from the
    history (their `to_dict`), named by its place: "luck, alice, attack, expected_losses: kept
    55/6, the history gives 61/6", "timeline, after resolution 12, armies, bob: kept 30, the
    history gives 31"; None when they agree."""
    found = _difference(kept, counted)
    if found is None:
        return None
    place, what = found
    if len(place) >= 2 and place[0] == "timeline" and isinstance(place[1], int):
        entry = counted["timeline"][min(place[1], len(counted["timeline"]) - 1)]
        named: list[Any] = ["timeline", f"after resolution {entry[0]}"]
        if len(place) >= 3:
            named.append(("resolution", "turn", "territories", "armies")[place[2]])
        if len(place) >= 4:
            named.append(counted["players"][place[3]])
        place = named
    return f"{', '.join(map(str, place))}: {what}"


def _difference(kept: Any, counted: Any) -> tuple[list[Any], str] | None:
    """Where the first difference is (the keys and places down to it), and what it is."""
    if isinstance(kept, dict) and isinstance(counted, dict):
        for key in [*counted, *(k for k in kept if k not in counted)]:
            if key not in kept:
                return [key], f"missing, the history gives {_shown(counted[key])}"
            if key not in counted:
                return [key], f"kept {_shown(kept[key])}, which the history does not give"
            found = _difference(kept[key], counted[key])
            if found:
                return [key, *found[0]], found[1]
        return None
    if isinstance(kept, list | tuple) and isinstance(counted, list | tuple):  # (as JSON has it)
        for i, (a, b) in enumerate(zip(kept, counted, strict=False)):
            found = _difference(a, b)
            if found:
                return [i, *found[0]], found[1]
        if len(kept) != len(counted):
            return [], f"{len(kept)} kept, the history gives {len(counted)}"
        return None
    if kept != counted or type(kept) is not type(counted):
        return [], f"kept {_shown(kept)}, the history gives {_shown(counted)}"
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
