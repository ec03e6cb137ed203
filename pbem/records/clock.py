"""Deadlines: durations, the time of day a turn is due, time zones, and how they print.

Pure functions: the time "now" is always an argument (the command line reads the system clock,
or takes `--now`), so a game replays the same on any day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Any

from pbem.errors import PbemError

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

UTC = "UTC"
_DURATION = re.compile(r"(\d+)\s*([dhm])")
_UNITS = {"d": timedelta(days=1), "h": timedelta(hours=1), "m": timedelta(minutes=1)}
_TIME_OF_DAY = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def parse_duration(text: str) -> timedelta:
    """`36h`, `2d`, `90m` or a sum such as `1d12h`; raises PbemError on anything else."""
    cleaned = text.strip().lower()
    parts = _DURATION.findall(cleaned)
    if not parts or _DURATION.sub("", cleaned).strip():
        raise PbemError(
            f"'{text}' is not a duration: write a number and d, h or m, e.g. 48h, 2d, 90m or 1d12h"
        )
    total = sum((int(n) * _UNITS[unit] for n, unit in parts), timedelta())
    if total <= timedelta():
        raise PbemError(f"'{text}' is no time at all: a duration must be longer than 0")
    return total


def format_duration(delta: timedelta) -> str:
    """A duration as `parse_duration` reads it: `2d`, `36h`, `90m`, `1d12h`."""
    minutes = int(delta.total_seconds()) // 60
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    text = (
        (f"{days}d" if days else "") + (f"{hours}h" if hours else "") + (f"{mins}m" if mins else "")
    )
    return text or "0m"


def parse_time_of_day(text: str) -> time:
    """`20:00` (24-hour clock); raises PbemError on anything else."""
    match = _TIME_OF_DAY.match(text.strip())
    if not match:
        raise PbemError(
            f"'{text}' is not a time of day: write HH:MM on the 24-hour clock, e.g. 20:00"
        )
    return time(int(match.group(1)), int(match.group(2)))


def zone(name: str) -> ZoneInfo:
    """An IANA time zone (`Europe/Rome`); raises PbemError naming the problem."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only for games with deadlines

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise PbemError(
            f"'{name}' is not a time zone known here: use an IANA name such as "
            "Europe/Rome, America/New_York or UTC"
        ) from None


def parse_instant(text: str, what: str = "--now") -> datetime:
    """An ISO 8601 time with its offset (`2026-12-03T20:00+01:00`, or `Z` for UTC)."""
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise PbemError(
            f"{what} '{text}' is not an ISO 8601 time: write e.g. 2026-12-03T20:00+01:00"
        ) from None
    if value.tzinfo is None:
        raise PbemError(f"{what} '{text}' has no offset: add one, e.g. {text}+01:00, or Z for UTC")
    return value


def iso(moment: datetime, where: ZoneInfo | None = None) -> str:
    """ISO 8601 with the offset, to the second (in `where`, else as given)."""
    value = moment.astimezone(where) if where is not None else moment
    return value.replace(microsecond=0).isoformat()


def parse_date(text: str, what: str = "date") -> date:
    """A calendar day, YYYY-MM-DD; raises PbemError otherwise."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise PbemError(f"{what} must be a day written YYYY-MM-DD, not '{text}'") from None


def parse_allowance(text: str) -> tuple[int, str]:
    """`14d` (days for the game), `14d/year` (for each calendar year) or `0` (none)."""
    value, _, per = text.strip().partition("/")
    per = per.strip() or "game"
    days = value.strip().removesuffix("d")
    if (
        not (days.isascii() and days.isdigit())
        or per not in VACATION_PER
        or int(days) > MAX_VACATION
    ):
        raise PbemError(
            f"--vacation must be days for the game (14d), for each year (14d/year) or 0, up to "
            f"{MAX_VACATION} days, not '{text}'"
        )
    return int(days), per


DEFAULT_VACATION_DAYS = 14
"""Each player's vacation days for a game, unless it was made with others (--vacation)."""
MAX_VACATION = 366
VACATION_PER = ("game", "year")
VACATION_MODES = ("wait", "autopilot")
DEFAULT_SUBSTITUTE_WITHIN = 6
"""How many turns after a seat is dropped `pbem substitute` may still hand it to a new player,
unless the game was made with another number (--substitute-within; 0: never)."""
MAX_SUBSTITUTE_WITHIN = 1000


def substitute_within(value: object, what: str) -> int:
    """`value` as the turns after a drop in which a seat may be handed over (`what`: where it
    was given); raises PbemError when it is not a number of turns from 0 to the most."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_SUBSTITUTE_WITHIN
    ):
        raise PbemError(
            f"{what} must be a number of turns from 0 to {MAX_SUBSTITUTE_WITHIN}, not {value!r}"
        )
    return value


@dataclass(frozen=True)
class Schedule:
    """When turns are due: `turn_time` after the previous resolution, moved forward to the next
    `due_at` (if set) in `timezone`."""

    turn_time: timedelta
    due_at: time | None = None
    timezone: str = UTC
    tolerance: timedelta = timedelta(0)
    """With `due_at`: how much sooner than `turn_time` after a resolution the next `due_at`
    may be, so that a daily 20:00 game stays daily when the turn is resolved a little after
    20:00 (by cron, by the autopilot at the deadline, by hand that evening). Games made before
    it have none (their deadlines are counted as they always were)."""
    vacation_days: int = DEFAULT_VACATION_DAYS
    """Each player's allowance of vacation days (pbem.game.vacations); 0: none."""
    vacation_per: str = "game"
    """What the allowance is for: the whole `game`, or each calendar `year`."""
    vacation_mode: str = "wait"
    """While a player is away: the turns they are awaited in `wait` for them, or the
    `autopilot` plays for them without counting a missed turn."""
    substitute_within: int = DEFAULT_SUBSTITUTE_WITHIN
    """How many turns after a seat is dropped it may be handed to a new player (0: never)."""

    @property
    def zone(self) -> ZoneInfo:
        return zone(self.timezone)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"turn_time": format_duration(self.turn_time)}
        if self.due_at is not None:
            out["due_at"] = self.due_at.strftime("%H:%M")
        out["timezone"] = self.timezone
        if self.tolerance:
            out["tolerance"] = format_duration(self.tolerance)
        if self.vacation_days != DEFAULT_VACATION_DAYS:
            out["vacation_days"] = self.vacation_days
        if self.vacation_per != "game":
            out["vacation_per"] = self.vacation_per
        if self.vacation_mode != "wait":
            out["vacation_mode"] = self.vacation_mode
        if self.substitute_within != DEFAULT_SUBSTITUTE_WITHIN:
            out["substitute_within"] = self.substitute_within
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Schedule:
        """A schedule from `to_dict` output; raises PbemError on bad values."""
        due = data.get("due_at")
        name = str(data.get("timezone", UTC))
        zone(name)
        tolerance = data.get("tolerance")
        days = data.get("vacation_days", DEFAULT_VACATION_DAYS)
        if isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= MAX_VACATION:
            raise PbemError(
                f"vacation_days must be a number of days from 0 to {MAX_VACATION}, not {days!r}"
            )
        per, mode = data.get("vacation_per", "game"), data.get("vacation_mode", "wait")
        if per not in VACATION_PER:
            raise PbemError(f"vacation_per must be 'game' or 'year', not {per!r}")
        if mode not in VACATION_MODES:
            raise PbemError(f"vacation_mode must be 'wait' or 'autopilot', not {mode!r}")
        within = substitute_within(
            data.get("substitute_within", DEFAULT_SUBSTITUTE_WITHIN), "substitute_within"
        )
        return cls(
            parse_duration(str(data["turn_time"])),
            parse_time_of_day(str(due)) if due is not None else None,
            name,
            parse_duration(str(tolerance)) if tolerance is not None else timedelta(0),
            days,
            str(per),
            str(mode),
            within,
        )


def next_deadline(previous: datetime, schedule: Schedule) -> datetime:
    """The deadline of the turn after a resolution at `previous`: `turn_time` later, moved
    forward to the next `due_at` in the schedule's zone (the same time if it is one); with a
    `tolerance`, the first `due_at` at least `turn_time - tolerance` later (a daily 20:00 game
    resolved at 19:59, 20:00:03 or 23:10 is next due at 20:00 the next day).

    `turn_time` counts on the wall clock of the zone, so `24h` from 20:00 is 20:00 the next
    day even across a daylight-saving change (23 or 25 hours then). A due time that the change
    skips on that day (02:30 in spring) means the same moment as the wall clock read before
    the change; an hour the change repeats (in autumn) means its first occurrence."""
    where = schedule.zone
    # Aware arithmetic within one zone is wall-clock arithmetic; the UTC round trip then
    # settles a wall time that the change skips or repeats.
    early = schedule.tolerance if schedule.due_at is not None else timedelta(0)
    wall = previous.astimezone(where) + schedule.turn_time - early
    earliest = wall.astimezone(timezone.utc).astimezone(where)
    if schedule.due_at is None:
        return earliest
    day = earliest.date()
    while True:
        candidate = datetime.combine(day, schedule.due_at, tzinfo=where)
        candidate = candidate.astimezone(timezone.utc).astimezone(where)
        if candidate >= earliest:
            return candidate
        day += timedelta(days=1)


def _relative(deadline: datetime, now: datetime) -> str:
    seconds = (deadline - now).total_seconds()
    ahead = seconds >= 0
    minutes = int(abs(seconds)) // 60
    if minutes < 120:
        amount = f"{minutes} minute" + ("" if minutes == 1 else "s")
    elif minutes < 72 * 60:
        amount = f"{minutes // 60} hours"
    else:
        amount = f"{minutes // (24 * 60)} days"
    return f"in {amount}" if ahead else f"{amount} ago"


def describe(deadline: datetime, where: tzinfo | None = None, now: datetime | None = None) -> str:
    """`Tue 2 Dec 2026, 20:00 CET, in 47 hours` (without the last part when `now` is None);
    in the zone `where`, or in the time's own offset."""
    local = deadline.astimezone(where) if where is not None else deadline
    text = (
        f"{_WEEKDAYS[local.weekday()]} {local.day} {_MONTHS[local.month - 1]} {local.year}, "
        f"{local.strftime('%H:%M')} {local.tzname()}"
    )
    return text if now is None else f"{text}, {_relative(deadline, now)}"
