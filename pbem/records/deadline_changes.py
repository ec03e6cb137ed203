"""The deadline of each resolution as the history gives it (docs/deadlines.md).

The deadline of resolution r is derived from the history alone: the game's schedule applied to
the time of resolution r-1, then the moderator's changes for r (history/deadlines/NNNN-K.toml,
written once, never changed) in order, the last one winning, moved past the vacations of the
players it awaits in a game that waits for them. The game file holds a copy for readers;
changing a deadline is pbem.game.deadlines'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.errors import GameFileError
from pbem.records import away, clock
from pbem.records.history import (
    HISTORY,
    change_files,
    history_count,
    read_history,
)
from pbem.records.store import Game, _load_toml

if TYPE_CHECKING:
    from pbem.records.away import Vacation
if TYPE_CHECKING:
    from pbem.records.away import Vacation


DEADLINES = "deadlines"


@dataclass(frozen=True)
class DeadlineChange:
    """The moderator moved the deadline of a pending resolution: when, to what, and why."""

    resolution: int
    number: int
    time: str
    deadline: str
    previous: str | None
    why: str
    extend: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "resolution": self.resolution,
            "number": self.number,
            "time": self.time,
            "deadline": self.deadline,
        }
        if self.previous is not None:
            out["previous"] = self.previous
        if self.extend is not None:
            out["extend"] = self.extend
        out["why"] = self.why
        return out


MAX_TOLERANCE = timedelta(hours=12)
"""The most a turn with a due time may be shortened to keep its rhythm (a quarter of the turn
time, at most this): less than the day between two due times, so no day is ever skipped."""


def changes_folder(directory: Path) -> Path:
    return directory / HISTORY / DEADLINES


def deadline_changes(directory: Path, resolution: int) -> list[DeadlineChange]:
    """The moderator's changes to the deadline of `resolution`, in the order made."""
    out = []
    for path in change_files(changes_folder(directory), resolution):
        data = _load_toml(path)
        try:
            out.append(
                DeadlineChange(
                    int(data["resolution"]),
                    int(data["number"]),
                    str(data["time"]),
                    str(data["deadline"]),
                    str(data["previous"]) if "previous" in data else None,
                    str(data.get("why", "")),
                    str(data["extend"]) if "extend" in data else None,
                )
            )
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
    return out


def resolution_time(directory: Path, resolution: int) -> datetime | None:
    """When a resolution was made, as its history file records (None if it does not)."""
    record = read_history(directory, resolution)
    return clock.parse_instant(record.time, "time") if record.time else None


def scheduled_deadline(
    game: Game, previous_time: datetime | None, previous: int
) -> datetime | None:
    """The deadline the schedule gives after resolution `previous`, made at `previous_time`.
    After the game's first resolution (the deal, or the draft's start), made when the game
    was, the whole turn time counts: its tolerance is for a turn resolved a little late."""
    if game.schedule is None or previous_time is None:
        return None
    schedule = game.schedule
    if previous < 1:
        schedule = replace(schedule, tolerance=timedelta(0))
    return clock.next_deadline(previous_time, schedule)


def pending_deadline(
    directory: Path, game: Game, resolution: int, found: Sequence[Vacation] | None = None
) -> datetime | None:
    """The deadline of `resolution` as the history gives it (see the module's docstring),
    waiting for the players it awaits while they are away (pbem.game.vacations; `found`:
    only these of the vacations recorded)."""
    if game.schedule is None or resolution < 1:
        return None
    began = resolution_time(directory, resolution - 1)
    deadline = scheduled_deadline(game, began, resolution - 1)
    for change in deadline_changes(directory, resolution):
        deadline = clock.parse_instant(change.deadline, "deadline")
    if resolution != game.state.resolution and resolution < history_count(directory):
        awaited: Sequence[str] = read_history(directory, resolution).players
    else:  # the pending turn (an undo's too, while its history file is still there)
        awaited = game.state.awaiting()
    return waiting(directory, game, resolution, awaited, deadline, began, found)


def waiting(
    directory: Path,
    game: Game,
    resolution: int,
    awaited: Sequence[str],
    deadline: datetime | None,
    began: datetime | None,
    found: Sequence[Vacation] | None = None,
) -> datetime | None:
    """`deadline`, the deadline of `resolution` (begun at `began`), moved past the vacations
    of the players it awaits, in a game that waits for them (`found`: only these of the
    vacations recorded)."""

    if deadline is None or game.schedule is None or game.schedule.vacation_mode != "wait":
        return deadline
    counted = away.in_force(directory, game, resolution, found)
    return away.waited(counted, awaited, deadline, began, game.schedule.timezone)


@dataclass(frozen=True)
class Deadline:
    """A game's deadline for the pending turn, and the turns its players missed in a row."""

    at: datetime | None = None
    missed: tuple[tuple[str, int], ...] | None = None


def deadline_of(game: Game) -> Deadline:
    """The pending turn's deadline (as the history and any change give it) and the missed
    turns; games without deadlines have neither."""
    if game.schedule is None:
        return Deadline()
    at = pending_deadline(game.path, game, game.state.resolution)
    return Deadline(
        at,
        tuple(
            (p.name, p.missed) for p in game.state.players if p.missed and not p.dropped
        ),  # a dropped player misses nothing any more
    )
