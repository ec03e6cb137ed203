"""The vacations recorded in a game (history/vacations/NNNN-k.toml, each written once) and who
is away when: the ones that count for a resolution, and the deadline of a turn that waits for
its players while they are away. Declaring one is pbem.game.vacations'."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from pbem.errors import GameFileError
from pbem.records import clock
from pbem.records.history import HISTORY, change_files
from pbem.records.store import Game, _load_toml

VACATIONS = "vacations"


@dataclass(frozen=True)
class Vacation:
    """`player` is away from `start` to `end` (dates, both included), declared at `time` while
    `resolution` was pending, by the player (mailed) or the moderator."""

    resolution: int
    number: int
    time: str
    player: str
    start: date
    end: date
    by: str = "moderator"
    holder: str = ""
    """Who plays the seat when it was declared ("": its first player): a substitute who takes
    the seat over is not away, and has an allowance of their own (pbem.game.seats)."""

    @property
    def who(self) -> str:
        return self.holder or self.player

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def to_dict(self) -> dict[str, object]:
        return {
            "resolution": self.resolution,
            "number": self.number,
            "time": self.time,
            "player": self.player,
            "from": self.start.isoformat(),
            "to": self.end.isoformat(),
            "days": self.days,
            "by": self.by,
            **({"holder": self.holder} if self.holder else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vacation:
        return cls(
            int(data["resolution"]),
            int(data["number"]),
            str(data["time"]),
            str(data["player"]),
            date.fromisoformat(str(data["from"])),
            date.fromisoformat(str(data["to"])),
            str(data.get("by", "moderator")),
            str(data.get("holder", "")),
        )

    def bounds(self, zone: str) -> tuple[datetime, datetime]:
        """When it counts: from its declaration or its first day's 00:00, whichever is later,
        to 00:00 of the day after its last, in the game's zone `zone`."""
        where = clock.zone(zone)
        first = datetime.combine(self.start, time(0), where)
        last = datetime.combine(self.end + timedelta(days=1), time(0), where)
        return max(first, clock.parse_instant(self.time, "time")), last

    def describe(self) -> str:
        return f"{self.player} is away from {self.start.isoformat()} to {self.end.isoformat()}"


def vacations_folder(directory: Path) -> Path:
    return directory / HISTORY / VACATIONS


def vacations(directory: Path) -> list[Vacation]:
    """Every vacation declared in the game, in the order declared."""
    out = []
    for path in change_files(vacations_folder(directory)):
        try:
            out.append(Vacation.from_dict(_load_toml(path)))
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
    return out


def in_force(
    directory: Path, game: Game, resolution: int, found: Sequence[Vacation] | None = None
) -> list[Vacation]:
    """The vacations that count for the deadline of `resolution`: declared before it was
    resolved (all of them for the pending one), by whoever held the seat then."""
    from pbem.records.history import history_count, read_history
    from pbem.records.seat_changes import holder_at, seat_changes

    found = vacations(directory) if found is None else found
    if not found:
        return []
    if resolution != game.state.resolution and resolution < history_count(directory):
        resolved = read_history(directory, resolution, events=False).time
        if resolved is None:
            found = [v for v in found if v.resolution <= resolution]
        else:
            until = clock.parse_instant(resolved, "time")
            found = [v for v in found if clock.parse_instant(v.time, "time") < until]
    changes = seat_changes(directory)
    return [v for v in found if holder_at(changes, v.player, resolution) == v.who]


def away_at(
    all_vacations: Iterable[Vacation], player: str, at: datetime, zone: str
) -> Vacation | None:
    """The vacation `player` is on at the instant `at`, if any."""
    for v in all_vacations:
        start, end = v.bounds(zone)
        if v.player == player and start <= at < end:
            return v
    return None


def waited(
    found: Sequence[Vacation],
    awaited: Sequence[str],
    deadline: datetime,
    turn_began: datetime | None,
    zone: str,
) -> datetime:
    """The deadline of a turn that waits for the players it awaits while they are away: the
    turn's clock stops while any of them is away (counted in the zone's wall time, so that a
    turn begun during a vacation gets its whole turn time after it, whatever the clocks do)."""
    where = clock.zone(zone)

    def wall(moment: datetime) -> datetime:
        return moment.astimezone(where).replace(tzinfo=None)

    spans = sorted(
        (wall(start), wall(end))
        for v in found
        if v.player in awaited
        for start, end in [v.bounds(zone)]
    )
    if not spans:
        return deadline
    now = wall(turn_began) if turn_began is not None else min(wall(deadline), spans[0][0])
    left = wall(deadline) - now
    if left <= timedelta(0):
        return deadline
    for start, end in spans:
        if end <= now:
            continue
        if start >= now + left:
            break
        left -= max(start - now, timedelta(0))
        now = max(now, end)
    return (now + left).replace(tzinfo=where)


def upcoming(directory: Path, game: Game, now: datetime | None) -> list[dict[str, str]]:
    """The vacations not over at `now` (all of them without a time), for the reports: who is
    away, from when to when."""
    if game.schedule is None:
        return []
    today = now.astimezone(game.schedule.zone).date() if now is not None else None
    return [
        {"player": v.player, "from": v.start.isoformat(), "to": v.end.isoformat()}
        for v in sorted(vacations(directory), key=lambda v: (v.start, v.player))
        if today is None or v.end >= today
    ]


def used_days(all_vacations: Iterable[Vacation], player: str, per: str, year: int) -> int:
    """The days of `player`'s allowance that their vacations use (in `year`, per year)."""
    return sum(
        v.days
        for v in all_vacations
        if v.player == player and (per == "game" or v.start.year == year)
    )
