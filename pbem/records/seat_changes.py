"""The changes of a seat's player a game keeps (history/seats/NNNN-k.toml, each written once):
who held each seat for each resolution and the secret that signed its orders then, the seats a
resolution tells as taken, and a change half made. Handing a seat over is pbem.game.seats'."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.errors import GameFileError
from pbem.records.history import HISTORY, change_files
from pbem.records.store import (
    Game,
    _load_toml,
)

if TYPE_CHECKING:
    from pbem.core.events import SeatTaken


SEATS = "seats"


def seats_folder(directory: Path) -> Path:
    return directory / HISTORY / SEATS


@dataclass(frozen=True)
class SeatChange:
    """The moderator gave the seat `seat` to `holder` while `resolution` was pending."""

    resolution: int
    number: int
    time: str
    turn: int
    seat: str
    holder: str
    previous: str
    email: str
    previous_email: str
    holders: int
    """How many players held the seat before `holder` (1 for its first substitute)."""
    previous_secret: str
    """The secret that signed the seat's orders until this change."""
    why: str = ""
    language: str | None = None
    attempt: int = 0
    """How many attempts at `resolution` had been undone when the change was made: it holds
    for the attempts after those."""
    returned: tuple[str, ...] = ()
    """A dropped seat handed over: the territories it comes back with (`returned_to`)."""

    def before(self, resolution: int, attempt: int | None = None) -> bool:
        """Whether the change was made before `resolution` was resolved (`attempt`: its
        attempt that an undo took back, None: the live one)."""
        if self.resolution != resolution:
            return self.resolution < resolution
        return attempt is None or self.attempt < attempt

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "resolution": self.resolution,
            "number": self.number,
            "time": self.time,
            "turn": self.turn,
            "seat": self.seat,
            "holder": self.holder,
            "previous": self.previous,
            "email": self.email,
            "previous_email": self.previous_email,
            "holders": self.holders,
            "previous_secret": self.previous_secret,
            "why": self.why,
        }
        if self.language is not None:
            out["language"] = self.language
        if self.attempt:
            out["attempt"] = self.attempt
        if self.returned:
            out["returned"] = list(self.returned)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SeatChange:
        language = data.get("language")
        return cls(
            resolution=int(data["resolution"]),
            number=int(data["number"]),
            time=str(data["time"]),
            turn=int(data["turn"]),
            seat=str(data["seat"]),
            holder=str(data["holder"]),
            previous=str(data["previous"]),
            email=str(data["email"]),
            previous_email=str(data["previous_email"]),
            holders=int(data["holders"]),
            previous_secret=str(data["previous_secret"]),
            why=str(data.get("why", "")),
            language=None if language is None else str(language),
            attempt=int(data.get("attempt", 0)),
            returned=tuple(str(t) for t in data.get("returned", ())),
        )

    @property
    def event(self) -> SeatTaken:
        from pbem.core.events import SeatTaken

        return SeatTaken(self.seat, self.holder, self.previous, self.turn, self.returned or None)

    def describe(self) -> str:
        seat = (
            f"{self.seat}'s seat"
            if self.previous == self.seat
            else f"the seat {self.seat} from {self.previous}"
        )
        back = (
            f", back in the game with {len(self.returned)} "
            f"territor{'y' if len(self.returned) == 1 else 'ies'}"
            if self.returned
            else ""
        )
        return f"{self.holder} took over {seat} before turn {self.turn}{back}" + (
            f" ({self.why})" if self.why else ""
        )


def seat_changes(directory: Path) -> list[SeatChange]:
    """Every recorded change of a seat's player, in the order made."""
    out = []
    for path in change_files(seats_folder(directory)):
        try:
            out.append(SeatChange.from_dict(_load_toml(path)))
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
    return out


def taken(directory: Path, resolution: int, attempt: int | None = None) -> tuple[SeatTaken, ...]:
    """The seats that changed hands while `resolution` was pending, as that resolution tells
    them first (`attempt`: its attempt that an undo took back; None: the live one)."""
    return tuple(
        c.event
        for c in seat_changes(directory)
        if c.resolution == resolution and c.before(resolution, attempt)
    )


def secret_at(
    game: Game,
    changes: Sequence[SeatChange],
    seat: str,
    resolution: int,
    attempt: int | None = None,
) -> str:
    """The secret that signed the orders of `seat` for `resolution` (`attempt`: its attempt
    that an undo took back): its holder's then."""
    later = next((c for c in changes if c.seat == seat and not c.before(resolution, attempt)), None)
    if later is not None:
        return later.previous_secret
    reg = game.registration(seat)
    return reg.secret if reg is not None else ""


def at_resolution(game: Game, resolution: int, attempt: int | None = None) -> Game:
    """The game with each seat's secret the one that signed its orders for `resolution`."""
    changes = seat_changes(game.path)
    if not changes:
        return game
    registrations = tuple(
        replace(r, secret=secret_at(game, changes, r.name, resolution, attempt))
        for r in game.registrations
    )
    return replace(game, registrations=registrations)


def handed_over(directory: Path, seat: str, secret: str) -> SeatChange | None:
    """When `secret` was a previous holder's of `seat`, the seat's latest change (who plays
    it now): their orders are refused ("this seat has a new player")."""
    changes = [c for c in seat_changes(directory) if c.seat == seat]
    if any(hmac.compare_digest(c.previous_secret, secret) for c in changes):
        return changes[-1]
    return None


def holder_at(changes: Sequence[SeatChange], seat: str, resolution: int) -> str:
    """Who played `seat` for `resolution`: the holder of its last change before it, or the
    seat's first player."""
    holder = seat
    for c in changes:
        if c.seat == seat and c.before(resolution):
            holder = c.holder
    return holder


def changed_after(directory: Path, resolution: int) -> SeatChange | None:
    """The first seat change made after `resolution` was resolved (an undo of it is refused)."""
    return next((c for c in seat_changes(directory) if c.resolution > resolution), None)


def unfinished(game: Game) -> SeatChange | None:
    """A change of seat recorded in the history that game.toml does not have yet (the run
    that recorded it stopped): the seat's secret is not the one the change gives."""
    last: dict[str, SeatChange] = {}
    for change in seat_changes(game.path):
        last[change.seat] = change
    for seat, change in last.items():
        reg = game.registration(seat)
        secret = game.holder_secret(seat, change.holders, change.holder)
        if reg is not None and not hmac.compare_digest(reg.secret, secret):
            return change
    return None


def unfinished_words(change: SeatChange) -> str:
    return (
        f"the handing of the seat {change.seat} to {change.holder} was interrupted: run "
        f"'pbem substitute DIR {change.seat} --to {change.holder}={change.email}' again to "
        "finish it"
    )


def unfinished_problem(game: Game) -> str | None:
    """For every command that reads the game: a change of seat half made."""
    change = unfinished(game)
    return unfinished_words(change) if change is not None else None
