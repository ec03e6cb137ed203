"""The undone resolutions a game keeps (history/undone/NNNN-n/, each with its undo.toml), an undo
half done (history/undo.toml) and a game held for the moderator after an undo
(history/held.toml): what every command reads of the moderator's undos. The undo itself is
pbem.game.undo's."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import tomli as tomllib

from pbem.errors import GameFileError, PbemError
from pbem.languages.numbering import Played, Undone
from pbem.records import clock
from pbem.records.history import (
    HISTORY,
    history_path,
    read_history_file,
)
from pbem.records.store import _load_toml

UNDONE = "undone"


PENDING = "undo.toml"


HELD = "held.toml"
"""Written by an undo: the game waits for the moderator (a resolution by hand, or `pbem
release`) and `pbem run` leaves it alone, so cron does not play the turn again by itself
before the moderator has done what the undo was for."""


RECORD = "undo.toml"


_FOLDER = re.compile(r"^(\d{4})-(\d+)$")


@dataclass(frozen=True)
class UndoRecord:
    """One undone resolution: which, the how-many-th undo of it, when, why, and its key."""

    resolution: int
    attempt: int
    time: str
    why: str
    key: str
    turn: int

    def to_dict(self) -> dict[str, object]:
        return {
            "resolution": self.resolution,
            "attempt": self.attempt,
            "turn": self.turn,
            "time": self.time,
            "key": self.key,
            "why": self.why,
        }

    @classmethod
    def from_file(cls, path: Path) -> UndoRecord:
        data = _load_toml(path)
        try:
            return cls(
                int(data["resolution"]),
                int(data["attempt"]),
                str(data["time"]),
                str(data["why"]),
                str(data["key"]),
                int(data["turn"]),
            )
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None

    @property
    def folder_name(self) -> str:
        return f"{self.resolution:04d}-{self.attempt}"

    def played(self, drafted: bool = False) -> Played:
        """The turn it took back; `drafted`: the game was set up by a draft."""
        return Played.of(self.resolution, self.turn, draft=drafted and self.resolution == 1)

    def note(self, drafted: bool = False) -> str:
        """One line for reports and `pbem dice`: "turn 13 (resolution 14, history/0014.toml)
        was undone on ..."."""
        try:
            when = clock.describe(clock.parse_instant(self.time, "time"))
        except PbemError:
            when = self.time
        return f"{self.played(drafted).words()} was undone on {when}: {self.why}" + (
            f" (undo number {self.attempt} of that turn)" if self.attempt > 1 else ""
        )


def undone_root(directory: Path) -> Path:
    return directory / HISTORY / UNDONE


def undone_folder(directory: Path, record: UndoRecord) -> Path:
    return undone_root(directory) / record.folder_name


def undo_records(directory: Path) -> list[UndoRecord]:
    """Every completed undo of the game, by resolution then attempt."""
    root = undone_root(directory)
    if not root.is_dir():
        return []
    out = []
    for folder in root.iterdir():
        if _FOLDER.match(folder.name) and (folder / RECORD).is_file():
            out.append(UndoRecord.from_file(folder / RECORD))
    pending = _pending(directory)
    return sorted(
        (r for r in out if pending is None or r != pending),
        key=lambda r: (r.resolution, r.attempt),
    )


def undone_notes(directory: Path, drafted: bool = False) -> list[str]:
    """What `pbem dice` says of the undone resolutions so far, for the moderator (`drafted`:
    in a game set up by a draft)."""
    return [r.note(drafted) for r in undo_records(directory)]


def undone_told(directory: Path, drafted: bool = False) -> list[Undone]:
    """The undone resolutions so far, for every report to tell in its reader's language."""
    return [Undone(r.played(drafted), r.time, r.why, r.attempt) for r in undo_records(directory)]


def first_orders(directory: Path, resolution: int) -> bytes | None:
    """The digest of the orders the first resolution numbered `resolution` resolved, when it
    was undone: a resolution played again with other orders adds a salt to its dice key, so
    that nobody can foresee them from the key the first one revealed (docs/dice.md). None when
    it was never undone, or its dice did not come from its orders."""
    from pbem.core.events import DiceKeyed

    first = next(
        (u for u in undo_records(directory) if u.resolution == resolution and u.attempt == 1),
        None,
    )
    if first is None:
        return None
    kept = undone_folder(directory, first) / history_path(directory, resolution).name
    keyed = [e for e in read_history_file(kept).events if isinstance(e, DiceKeyed)]
    return keyed[0].orders if keyed else None


def _pending(directory: Path) -> UndoRecord | None:
    path = directory / HISTORY / PENDING
    return UndoRecord.from_file(path) if path.is_file() else None


def check_not_interrupted(directory: Path) -> None:
    """Refuse to go on while an undo is half done."""
    pending = _pending(directory)
    if pending is not None:
        raise GameFileError(
            f"the undo of {pending.played().words()} was interrupted: run 'pbem undo' again to "
            "finish it"
        )


def held(directory: Path) -> str | None:
    """Why the game waits for the moderator after an undo ("undone: bob's orders came late"),
    or None when it does not."""
    path = directory / HISTORY / HELD
    if not path.is_file():
        return None
    try:
        why = tomllib.loads(path.read_text(encoding="utf-8")).get("why")
    except (OSError, UnicodeError, tomllib.TOMLDecodeError, RecursionError):
        why = None
    return str(why) if why else "undone"
