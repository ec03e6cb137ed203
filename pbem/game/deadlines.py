"""Deadlines of a game directory: the pending turn's deadline, the moderator's changes to it,
the autopilot for players who missed it, and the outage guard.

The deadline of resolution r is derived from the history alone: `Schedule` applied to the time
of resolution r-1, then the moderator's changes for r (history/deadlines/NNNN-K.toml, written
once, never changed) in order, the last one winning. The game file holds a copy for readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

from pbem.core.autopilot import AUTOPILOT_FILE, autopilot_text
from pbem.errors import GameFileError, PbemError
from pbem.game.opening import read_game
from pbem.game.undo import check_not_interrupted
from pbem.records import clock
from pbem.records.disk import atomic_write, locked
from pbem.records.history import (
    HISTORY,
    HistoryRecord,
    OrderRecord,
    change_files,
    history_count,
    read_history,
)
from pbem.records.store import Game, _load_toml, write_game

if TYPE_CHECKING:
    from pbem.game.vacations import Vacation

DEADLINES = "deadlines"


class NeedsForce(PbemError):
    """More than half of the players would be played by the autopilot: an outage, perhaps."""


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


def schedule_from_options(
    turn_time: str | None,
    due_at: str | None,
    zone: str = clock.UTC,
    vacation: str | None = None,
    vacation_mode: str = "wait",
    substitute_within: int | None = None,
) -> clock.Schedule | None:
    """The deadlines of `pbem new --turn-time --due-at --timezone --vacation --vacation-mode
    --substitute-within` (None: no deadlines)."""
    if turn_time is None:
        if due_at is not None or zone != clock.UTC:
            raise PbemError("--due-at and --timezone need --turn-time (how long a turn lasts)")
        if vacation is not None or vacation_mode != "wait":
            raise PbemError(
                "--vacation and --vacation-mode need --turn-time: a game without deadlines "
                "waits for everyone anyway"
            )
        if substitute_within is not None:
            raise PbemError(
                "--substitute-within needs --turn-time: only a game with deadlines drops a "
                "player who misses turns"
            )
        return None
    within = (
        clock.DEFAULT_SUBSTITUTE_WITHIN
        if substitute_within is None
        else clock.substitute_within(substitute_within, "--substitute-within")
    )
    days, per = (
        clock.parse_allowance(vacation)
        if vacation is not None
        else (
            clock.DEFAULT_VACATION_DAYS,
            "game",
        )
    )
    clock.zone(zone)
    length = clock.parse_duration(turn_time)
    return clock.Schedule(
        length,
        clock.parse_time_of_day(due_at) if due_at else None,
        zone,
        min(length / 4, MAX_TOLERANCE) if due_at else timedelta(0),
        days,
        per,
        vacation_mode,
        within,
    )


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
    from pbem.game import vacations

    if deadline is None or game.schedule is None or game.schedule.vacation_mode != "wait":
        return deadline
    counted = vacations.in_force(directory, game, resolution, found)
    return vacations.waited(counted, awaited, deadline, began, game.schedule.timezone)


def change_deadline(
    directory: Path,
    now: datetime,
    why: str,
    extend: str | None = None,
    set_to: str | None = None,
) -> tuple[Game, DeadlineChange, bool]:
    """Move the pending turn's deadline by `extend` (a duration) or to `set_to` (ISO 8601),
    recording the change with its reason in the history.

    The change is recorded first, then the game file follows. When an earlier run stopped
    between the two, this one only brings the game file up to the recorded change and says so
    (True as the third value): running the same command again never moves the deadline twice."""
    if (extend is None) == (set_to is None):
        raise PbemError("give either --extend DURATION or --set TIME")
    if not why.strip():
        raise PbemError('say why the deadline moves: --why "alice is on holiday"')
    with locked(directory):
        check_not_interrupted(directory)
        game = read_game(directory)
        if game.schedule is None:
            raise PbemError(
                f"game '{game.name}' has no deadlines (it was created without --turn-time)"
            )
        if game.state.phase.value == "over":
            raise PbemError(f"game '{game.name}' is over: there is no deadline to move")
        r = game.state.resolution
        if history_count(directory) != r:
            raise GameFileError("a resolution was interrupted: run 'pbem resolve' first")
        current = pending_deadline(directory, game, r)
        made = deadline_changes(directory, r)
        if made and game.deadline != current:
            finished = replace(game, deadline=current)
            write_game(finished)
            return finished, made[-1], True
        if extend is not None:
            if current is None:
                raise PbemError("this turn has no deadline yet to extend: use --set")
            new = current + clock.parse_duration(extend)
        else:
            assert set_to is not None
            new = clock.parse_instant(set_to, "--set")
        where = game.schedule.zone
        number = len(deadline_changes(directory, r)) + 1
        change = DeadlineChange(
            r,
            number,
            clock.iso(now),
            clock.iso(new, where),
            clock.iso(current, where) if current else None,
            why.strip(),
            clock.format_duration(clock.parse_duration(extend)) if extend else None,
        )
        path = changes_folder(directory) / f"{r:04d}-{number}.toml"
        atomic_write(path, tomli_w.dumps(change.to_dict()))
        moved = replace(game, deadline=pending_deadline(directory, game, r))  # vacations too
        write_game(moved)
        return moved, change, False


def missed_orders(
    game: Game, missing: Sequence[str], deadline: datetime | None, now: datetime | None
) -> str | None:
    """Why the players in `missing` cannot get autopilot orders yet (None when they can; ""
    in a game without deadlines, where nothing needs saying)."""
    turn = game.state.turn
    if game.schedule is None:
        return ""
    if deadline is None or now is None:
        return "the deadline is not known: give the time with --now"
    if now < deadline:
        when = clock.describe(deadline, game.schedule.zone, now)
        return (
            f"turn {turn} is due by {when}; after that the autopilot plays for {', '.join(missing)}"
        )
    return None


def outage_guard(
    game: Game, missing: Sequence[str], deadline: datetime | None = None
) -> str | None:
    """The reason to refuse when more than half of the players awaited this turn (two or more:
    the setup, a draft) would be played by the autopilot at once: a mail outage, perhaps.

    In sequential play one player is awaited at a time; a run of misses there is told by the
    mail itself: `pbem run` holds a game whose mailbox could not be read since the deadline
    (pbem.records.mailbox_state). Counting the players who missed their last turn made two misses
    in a row by two players refuse in a game of three, though nothing was down."""
    living = {p.name for p in game.state.players if p.alive}
    awaited = [name for name in game.state.awaiting() if name in living]
    gone = away_players(game, missing, deadline)  # known to be away: no sign of an outage
    silent = sorted(set(missing) & set(awaited) - set(gone))
    if len(awaited) < 2 or len(silent) * 2 <= len(awaited):
        return None
    return (
        f"{len(silent)} of the {len(awaited)} players would be played by the autopilot "
        f"({', '.join(silent)}): if mail was down, fetch it and resolve again; to let "
        "the autopilot play, resolve with --force"
    )


def autopilot_records(
    game: Game, missing: Sequence[str], deadline: datetime | None = None
) -> list[OrderRecord]:
    """The autopilot's order files for the players who missed the deadline; in a game whose
    autopilot plays for players away, those away at `deadline` are marked with their
    vacation's last day (their turn is not missed)."""

    gone = away_players(game, missing, deadline)
    out = []
    for name in missing:
        reg = game.registration(name)
        text = autopilot_text(game.state, name, reg.secret if reg else "")
        out.append(OrderRecord(name, AUTOPILOT_FILE, text, autopilot=True, away=gone.get(name)))
    return out


def away_players(game: Game, players: Sequence[str], deadline: datetime | None) -> dict[str, str]:
    """In a game whose autopilot plays for players away: those of `players` away at the
    pending turn's `deadline`, each with their vacation's last day."""
    from pbem.game import vacations

    schedule = game.schedule
    if schedule is None or schedule.vacation_mode != "autopilot" or deadline is None:
        return {}
    found = vacations.in_force(game.path, game, game.state.resolution)
    out = {}
    for name in players:
        on = vacations.away_at(found, name, deadline, schedule.timezone)
        if on is not None:
            out[name] = on.end.isoformat()
    return out


def away_unfounded(directory: Path, game: Game, record: HistoryRecord) -> str | None:
    """For the audit: an autopilot turn recorded as a vacation's that no vacation declared
    before it covers at the turn's deadline, in a game whose autopilot plays for players
    away."""
    from pbem.game import vacations

    marked = [o for o in record.orders if o.away is not None]
    if not marked:
        return None
    schedule = game.schedule
    if schedule is None or schedule.vacation_mode != "autopilot":
        return "an autopilot turn recorded as a vacation's in a game that waits for players away"
    deadline = pending_deadline(directory, game, record.resolution)
    found = vacations.in_force(directory, game, record.resolution)
    for o in marked:
        on = vacations.away_at(found, o.player, deadline, schedule.timezone) if deadline else None
        if on is None or on.end.isoformat() != o.away or not o.autopilot:
            return (
                f"the autopilot's turn for {o.player} is recorded as a vacation's, but no "
                f"vacation of theirs declared before it covers the deadline"
            )
    return None


def autopilot_too_early(directory: Path, game: Game, record: HistoryRecord) -> str | None:
    """For the audit: why the autopilot may not have played in this resolution (it may only
    at or after the deadline of its turn), or None."""
    if not any(o.autopilot for o in record.orders):
        return None
    deadline = pending_deadline(directory, game, record.resolution)
    if deadline is None or record.time is None:
        return "autopilot orders in a turn without a known deadline"
    if clock.parse_instant(record.time, "time") < deadline:
        return f"the autopilot played at {record.time}, before the deadline {clock.iso(deadline)}"
    return None


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
