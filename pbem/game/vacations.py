"""Vacations: a player says when they are away, and the game's deadlines wait for them (or, in a
game that says so, the autopilot plays their turns without counting them as missed).

A vacation is a span of whole days in the game's time zone, its first and last day included:
from 00:00 of `start` to 00:00 of the day after `end`. It counts from when it was declared on
(a vacation declared today counts from now, not from this morning), and only in a game with
deadlines. Each is recorded once, `history/vacations/NNNN-k.toml` (the k-th declared while
resolution NNNN was pending), and never changed: the deadlines of every turn are derived from
the history, vacations included (pbem.game.deadlines).

In a game that waits (`vacation_mode = "wait"`, the default), a turn due while a player it
awaits is away is due again after the vacation's end, with the time that was left of the turn
when the vacation began. In a game that plays on (`"autopilot"`), the turn is due as always;
at the deadline the autopilot plays for the player away, and the turn is not a missed one.

Each player has an allowance of days (`vacation_days`, default 14) for the whole game, or for
each calendar year (`vacation_per = "year"`, counted by the year a vacation begins in); 0 allows
none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import tomli_w

from pbem.core.state import Phase
from pbem.errors import GameFileError, PbemError
from pbem.records import clock, deadline_changes
from pbem.records.away import VACATIONS, Vacation, used_days, vacations, vacations_folder
from pbem.records.disk import atomic_write, locked
from pbem.records.history import change_files
from pbem.records.opening import read_game
from pbem.records.store import Game, write_game
from pbem.terminal import quoted

LONGEST = 365
"""The most days one vacation may last."""
AHEAD = 366
"""How many days ahead a vacation may begin."""


class VacationRefused(PbemError):
    """A vacation that may not be: `why`, as `problem` says it (in English; a player's answer
    tells it in their language, pbem.languages.reasons)."""

    def __init__(self, player: str, why: str) -> None:
        super().__init__(f"no vacation for {player}: {why}")
        self.why = why


def problem(
    game: Game, earlier: Sequence[Vacation], player: str, start: date, end: date, now: datetime
) -> str | None:
    """Why `player` may not be away from `start` to `end`, declared at `now` with the
    vacations `earlier` already declared; None when they may."""
    schedule = game.schedule
    if schedule is None:
        return (
            f"game '{game.name}' has no deadlines: no turn is ever played for anyone, and there "
            "is nothing to wait for"
        )
    if game.state.phase is Phase.OVER:
        return f"game '{game.name}' is over"
    seat = next((p for p in game.state.players if p.name == player), None)
    if seat is None:
        names = ", ".join(p.name for p in game.state.players)
        return f"there is no player '{quoted(player)}' in this game: it has {names}"
    if not seat.alive:
        return f"{player} is out of the game"
    reg = game.registration(player)
    who = reg.played_by if reg is not None else player
    return span_problem(schedule, [v for v in earlier if v.who == who], player, start, end, now)


def span_problem(
    schedule: clock.Schedule,
    earlier: Sequence[Vacation],
    player: str,
    start: date,
    end: date,
    now: datetime,
) -> str | None:
    """Why the days from `start` to `end` cannot be `player`'s vacation, declared at `now`:
    the allowance, the dates, another vacation of theirs; None when they can."""
    if schedule.vacation_days == 0:
        return "this game allows no vacations"
    today = now.astimezone(schedule.zone).date()
    if end < start:
        return f"the vacation ends ({end.isoformat()}) before it begins ({start.isoformat()})"
    if end < today:
        return f"the vacation ended already ({end.isoformat()}; today is {today.isoformat()})"
    if end.year >= date.max.year:
        return f"the vacation ends too far ahead ({end.isoformat()})"
    start = max(start, today)  # a vacation under way counts from today (its days too)
    if (start - today).days > AHEAD:
        return f"the vacation begins more than {AHEAD} days ahead: declare it nearer the time"
    days = (end - start).days + 1
    if days > LONGEST:
        return f"a vacation lasts at most {LONGEST} days, not {days}"
    for v in earlier:
        if v.player == player and v.start <= end and start <= v.end:
            return (
                f"{player} is away from {v.start.isoformat()} to {v.end.isoformat()} already: "
                "a vacation may not overlap another"
            )
    per = schedule.vacation_per
    used = used_days(earlier, player, per, start.year)
    if used + days > schedule.vacation_days:
        left = schedule.vacation_days - used
        span = "in this game" if per == "game" else f"in {start.year}"
        return (
            f"{days} days are more than {player}'s allowance left {span}: {max(left, 0)} of "
            f"{schedule.vacation_days} days"
        )
    return None


def declare(
    directory: Path, player: str, start: date, end: date, now: datetime, by: str = "moderator"
) -> tuple[Vacation, Game, bool]:
    """Record that `player` is away from `start` to `end` (both included; a vacation under way
    counts from today), within their allowance; the game file's deadline follows (True as
    the third value when it moved). Run again after it was interrupted, it completes the
    vacation it recorded."""
    from pbem.records.undone import check_not_interrupted

    with locked(directory):
        check_not_interrupted(directory)
        return record(read_game(directory), player, start, end, now, by)


def record(
    game: Game, player: str, start: date, end: date, now: datetime, by: str = "moderator"
) -> tuple[Vacation, Game, bool]:
    """`declare` for a game read under its lock (a fetch of its mail holds it)."""
    from pbem.records.history import history_count, read_history

    directory = game.path
    r = game.state.resolution
    if history_count(directory) != r:
        raise GameFileError("a resolution was interrupted: run 'pbem resolve' to finish it")
    earlier = vacations(directory)
    deadline = deadline_changes.pending_deadline(directory, game, r)
    unfinished = game.deadline != deadline
    if unfinished:  # a run stopped before it wrote game.toml
        game = replace(game, deadline=deadline)
        write_game(game)
    reg = game.registration(player)
    who = (reg.holder or "") if reg is not None else ""
    today = now.astimezone(game.schedule.zone).date() if game.schedule else start
    for v in earlier:  # the same vacation again: a run stopped, or a message read twice
        if (v.player, v.who, v.end, v.start) == (player, who or player, end, max(start, today)):
            # whether it moved the deadline, as the first run found: a run stopped before
            # the players were told tells them (the notice is the same, under the same name)
            without = deadline_changes.pending_deadline(
                directory, game, r, [e for e in earlier if e is not v]
            )
            return v, game, unfinished or without != game.deadline
    last = read_history(directory, r - 1, events=False).time if r else None
    if last is not None and now < clock.parse_instant(last, "time"):
        raise PbemError(
            f"the time given ({clock.iso(now)}) is before the last resolution's ({last}): "
            "give a --now at or after it"
        )
    why = problem(game, earlier, player, start, end, now)
    if why is not None:
        raise VacationRefused(player, why)
    assert game.schedule is not None
    start = max(start, now.astimezone(game.schedule.zone).date())
    number = len(change_files(vacations_folder(directory), r)) + 1
    vacation = Vacation(r, number, clock.iso(now), player, start, end, by, who)
    path = vacations_folder(directory) / f"{r:04d}-{number}.toml"
    atomic_write(path, tomli_w.dumps(vacation.to_dict()))
    moved = replace(game, deadline=deadline_changes.pending_deadline(directory, game, r))
    write_game(moved)
    return vacation, moved, moved.deadline != game.deadline


def allowance_problem(game: Game) -> str | None:
    """For the audit: a recorded vacation that was not allowed when it was declared (beyond
    the allowance, overlapping another, in the past), or in a game without deadlines."""
    earlier: list[Vacation] = []
    for v in vacations(game.path):
        where = f"history/{VACATIONS}/{v.resolution:04d}-{v.number}.toml"
        if game.schedule is None:
            return f"{where}: a vacation in a game without deadlines"
        declared = clock.parse_instant(v.time, "time")
        theirs = [e for e in earlier if e.who == v.who]
        why = span_problem(game.schedule, theirs, v.player, v.start, v.end, declared)
        if why is None and v.start < declared.astimezone(game.schedule.zone).date():
            why = "it begins before the day it was declared"
        if why is not None:
            return f"{where}: {why}"
        earlier.append(v)
    return None
