"""Where every game of a root stands, and which of them are due to be resolved.

`status_of` reads one game and never changes it; `due` is the one place that decides whether a
game is to be resolved now (every awaited player has a valid order file; later also: its
deadline has passed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any

from pbem.core.state import Phase
from pbem.errors import PbemError
from pbem.game import processor
from pbem.records import clock, deadline_changes, undone
from pbem.records.deadline_changes import deadline_of
from pbem.records.disk import held_by_another
from pbem.records.history import history_path, played_in, read_history
from pbem.records.opening import read_game
from pbem.records.root import Root, game_name, open_root
from pbem.records.store import Game


class State(Enum):
    """Where a game stands, in the order the moderator should look at them."""

    DAMAGED = "damaged"
    HELD = "held"
    """Undone: waits for the moderator to resolve it by hand or release it."""
    OVERDUE = "overdue"
    READY = "ready"
    LOCKED = "locked"
    WAITING = "waiting"
    OVER = "over"


DUE = (State.READY, State.OVERDUE)
"""The states in which `pbem run` resolves a game."""


@dataclass(frozen=True)
class GameStatus:
    """One game as `pbem status` lists it."""

    name: str
    path: Path
    state: State
    reason: str = ""
    turn: int | None = None
    phase: str | None = None
    resolution: int | None = None
    awaited: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    deadline: datetime | None = None
    seconds_left: float | None = None
    missed: tuple[tuple[str, int], ...] | None = None
    last_resolved: datetime | None = None
    last_played: str | None = None
    """What the last resolution played, as players name it: "turn 12", "the deal"."""
    zone: str | None = None
    """The time zone of the game's deadlines (the table shows the deadline in it)."""
    bots: tuple[str, ...] = ()
    """The awaited seats a bot plays (pbem.game.bots): `pbem run` lets them answer."""

    @property
    def sort_key(self) -> tuple[int, str, str]:
        return (list(State).index(self.state), self.name, str(self.path))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "state": self.state.value,
            "reason": self.reason or None,
            "turn": self.turn,
            "phase": self.phase,
            "resolution": self.resolution,
            "awaiting": list(self.awaited),
            "bots": list(self.bots),
            "valid": list(self.valid),
            "rejected": list(self.rejected),
            "deadline": _iso(self.deadline),
            "seconds_left": self.seconds_left,
            "missed_turns": None if self.missed is None else dict(self.missed),
            "last_resolution": (self.resolution - 1) if self.resolution else None,
            "last_resolved": _iso(self.last_resolved),
            "last_played": self.last_played,
        }

    def cells(self) -> list[str]:
        orders = (
            f"{len(self.valid)}/{len(self.awaited)} valid"
            + (f", {len(self.rejected)} rejected" if self.rejected else "")
            if self.turn is not None and self.state is not State.OVER
            else "-"
        )
        last = (
            f"{self.last_played or self.resolution - 1} {_iso(self.last_resolved) or ''}".strip()
            if self.resolution
            else "-"
        )
        return [
            self.state.value,
            self.name,
            "-" if self.turn is None else str(self.turn),
            self.phase or "-",
            ", ".join(f"{n} (bot)" if n in self.bots else n for n in self.awaited) or "-",
            orders,
            _local(self.deadline, self.zone) or "-",
            "-" if self.seconds_left is None else _duration(self.seconds_left),
            "-" if not self.missed else ", ".join(f"{n} {c}" for n, c in self.missed),
            last,
            self.reason,
        ]


HEADINGS = [
    "STATE",
    "GAME",
    "TURN",
    "PHASE",
    "AWAITING",
    "ORDERS",
    "DEADLINE",
    "LEFT",
    "MISSED",
    "LAST RESOLVED",
    "",
]


def moment(text: str | None) -> datetime:
    """`--now`: an ISO time with its offset, or the clock when not given."""
    return datetime.now(timezone.utc) if text is None else clock.parse_instant(text)


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def _local(when: datetime | None, zone: str | None) -> str | None:
    """A deadline as the game's players read it: in its time zone with the zone's name
    (`2027-02-27 20:00 CET`); in UTC as `2027-02-27T12:00Z`."""
    if when is None or zone in (None, clock.UTC):
        return _iso(when)
    local = when.astimezone(clock.zone(zone))
    return f"{local.strftime('%Y-%m-%d %H:%M')} {local.tzname()}"


def _duration(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    minutes = int(abs(seconds)) // 60
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    return sign + (f"{days}d{hours:02d}h" if days else f"{hours}h{minutes:02d}m")


# ---------------------------------------------------------------------------------------------
# Deciding


def due(game: Game, readiness: processor.Readiness, interrupted: bool, now: datetime) -> State:
    """Whether a game that is neither over nor damaged is to be resolved now: READY when every
    awaited player has a valid order file (or a resolution was interrupted and is to be
    completed), OVERDUE when its deadline has passed, else WAITING."""
    if interrupted or readiness.ready:
        return State.READY
    deadline = deadline_of(game).at
    if deadline is not None and now >= deadline:
        return State.OVERDUE
    return State.WAITING


# ---------------------------------------------------------------------------------------------
# Reading


def status_of(directory: Path, now: datetime, root: Root | None = None) -> GameStatus:
    """Where one game stands; a damaged game is reported with the reason, never raised."""
    try:
        return _status_of(directory, now, root)
    except PbemError as err:
        return GameStatus(game_name(directory), directory, State.DAMAGED, str(err))


def _status_of(directory: Path, now: datetime, root: Root | None) -> GameStatus:
    duplicate = root.duplicate_reason(directory) if root is not None else None
    locked = held_by_another(directory)
    name: str | None = None
    try:
        game = read_game(directory)
        name = game.name
        count = processor.checked_history(game)
    except PbemError as err:
        named = name if name is not None else game_name(directory)
        return GameStatus(named, directory, State.DAMAGED, str(err))
    state = game.state
    r = state.resolution
    last = _resolved_at(directory, r - 1)
    deadline = deadline_of(game)
    common: dict[str, Any] = {
        "turn": state.turn,
        "phase": state.phase.value,
        "resolution": r,
        "last_resolved": last,
        "last_played": _last_played(game, r - 1),
        "deadline": deadline.at,
        "seconds_left": (deadline.at - now).total_seconds() if deadline.at else None,
        "missed": deadline.missed,
        "zone": game.schedule.timezone if game.schedule else None,
    }
    if state.phase is Phase.OVER:
        return GameStatus(name, directory, State.OVER, f"{state.won_by} won", **common)
    found = processor.readiness(game)
    common.update(
        awaited=tuple(state.awaiting()),
        valid=tuple(s.player or "" for s in found.used),
        rejected=tuple(s.path.name for s in found.rejected),
        bots=tuple(
            n for n in state.awaiting() if (reg := game.registration(n)) is not None and reg.bot
        ),
    )
    if duplicate is not None:
        return GameStatus(name, directory, State.DAMAGED, duplicate, **common)
    if locked:
        return GameStatus(name, directory, State.LOCKED, "another run holds its lock", **common)
    interrupted = count == r + 1
    why = undone.held(directory)
    if why is not None and not interrupted:
        reason = f"held: {why}; resolve by hand or release"
        return GameStatus(name, directory, State.HELD, reason, **common)
    verdict = due(game, found, interrupted, now)
    if verdict is State.READY and not interrupted:
        waits = _not_yet(game, found, now)
        if waits is not None:
            return GameStatus(name, directory, State.WAITING, waits, **common)
    reason = "; ".join(found.doubled)
    if interrupted:
        reason = f"{played_in(game, r, state.turn).words()} was interrupted and is to be completed"
    return GameStatus(name, directory, verdict, reason, **common)


def _not_yet(game: Game, found: processor.Readiness, now: datetime) -> str | None:
    """Why a turn whose orders are all in is not resolved yet by its `resolve` and `grace`
    settings (at the deadline; a while after the last orders, for a correction), or None."""
    from pbem.records.settings import in_force

    try:
        settings = in_force(game.path, game.mail)
    except PbemError:  # damaged mail settings are told by the mail; the turn goes on
        return None
    deadline = deadline_of(game).at
    if settings.resolve_when == "at-deadline" and deadline is not None and now < deadline:
        return (
            f"all orders are in; resolved at the deadline, {_iso(deadline)} (resolve = at-deadline)"
        )
    grace = settings.grace
    if not grace:
        return None
    accepted = _accepted(game)
    arrived = [_arrival(game, s, accepted) for s in found.used]
    last = max((a for a in arrived if a is not None), default=None)
    if last is not None and now < last + grace:
        return (
            f"all orders are in; resolved from {_iso(last + grace)}, in case a correction "
            f"comes (grace = {clock.format_duration(grace)})"
        )
    return None


def _accepted(game: Game) -> dict[str, object]:
    """The orders accepted by mail, as the mail state records them (none if it is damaged)."""
    from pbem.records.mailstate import MailState

    try:
        return dict(MailState.peek(game.path, "accepted").seen["accepted"])
    except PbemError:
        return {}


def _arrival(
    game: Game, submission: processor.Submission, accepted: dict[str, object]
) -> datetime | None:
    """When a player's order file came in: the date of the mail it came by (the mail state),
    or else the time the file was written (an order file saved by hand)."""
    try:
        record = accepted.get(f"{game.state.resolution}/{submission.player}")
        if isinstance(record, dict):
            return clock.parse_instant(str(record["date"]), "time")
    except (ValueError, KeyError, TypeError, PbemError):
        pass
    try:
        return datetime.fromtimestamp(submission.path.stat().st_mtime, timezone.utc)
    except OSError:
        return None


def _last_played(game: Game, resolution: int) -> str | None:
    """What `resolution` played, as its history records it (None if it cannot be read)."""
    try:
        return played_in(game, resolution, read_history(game.path, resolution).turn).label
    except PbemError:
        return None


def _resolved_at(directory: Path, resolution: int) -> datetime | None:
    """When a resolution was made: the time its history records, or else when its history
    file was written."""
    try:
        recorded = deadline_changes.resolution_time(directory, resolution)
    except PbemError:
        recorded = None
    if recorded is not None:
        return recorded
    try:
        stamp = history_path(directory, resolution).stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, timezone.utc)


def root_status(path: Path, now: datetime) -> list[GameStatus]:
    """Every game of a root (or the one game `path` is), what needs the moderator first."""
    root = open_root(path)
    if not root.games:
        raise PbemError(f"there is no game in {path}: no folder in it has a game.toml")
    return sorted((status_of(p, now, root) for _, p in root.games), key=lambda s: s.sort_key)


def table(rows: Sequence[Sequence[str]], headings: Sequence[str]) -> list[str]:
    """Rows as aligned columns under their headings (an empty last column is left out)."""
    all_rows = [list(headings), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(headings))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in all_rows
    ]


def status_lines(statuses: Sequence[GameStatus]) -> list[str]:
    return table([s.cells() for s in statuses], HEADINGS)
