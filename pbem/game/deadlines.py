"""Deadlines of a game directory: the schedule a new game takes, the moderator's changes to the
pending turn's deadline, the autopilot for players who missed it, and the outage guard. How
the deadline of each resolution derives from the history is pbem.records.deadline_changes'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w

from pbem.core.autopilot import AUTOPILOT_FILE, autopilot_text
from pbem.errors import GameFileError, PbemError
from pbem.records import away, clock
from pbem.records.deadline_changes import (
    MAX_TOLERANCE,
    DeadlineChange,
    changes_folder,
    deadline_changes,
    pending_deadline,
)
from pbem.records.disk import atomic_write, locked
from pbem.records.history import (
    HistoryRecord,
    OrderRecord,
    history_count,
)
from pbem.records.opening import read_game
from pbem.records.store import Game, write_game
from pbem.records.undone import check_not_interrupted

if TYPE_CHECKING:
    pass


class NeedsForce(PbemError):
    """More than half of the players would be played by the autopilot: an outage, perhaps."""


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

    schedule = game.schedule
    if schedule is None or schedule.vacation_mode != "autopilot" or deadline is None:
        return {}
    found = away.in_force(game.path, game, game.state.resolution)
    out = {}
    for name in players:
        on = away.away_at(found, name, deadline, schedule.timezone)
        if on is not None:
            out[name] = on.end.isoformat()
    return out


def away_unfounded(directory: Path, game: Game, record: HistoryRecord) -> str | None:
    """For the audit: an autopilot turn recorded as a vacation's that no vacation declared
    before it covers at the turn's deadline, in a game whose autopilot plays for players
    away."""

    marked = [o for o in record.orders if o.away is not None]
    if not marked:
        return None
    schedule = game.schedule
    if schedule is None or schedule.vacation_mode != "autopilot":
        return "an autopilot turn recorded as a vacation's in a game that waits for players away"
    deadline = pending_deadline(directory, game, record.resolution)
    found = away.in_force(directory, game, record.resolution)
    for o in marked:
        on = away.away_at(found, o.player, deadline, schedule.timezone) if deadline else None
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
