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
from pbem.records import clock, deadline_changes, rootindex, undone
from pbem.records.deadline_changes import deadline_of
from pbem.records.disk import held_by_another
from pbem.records.history import history_path, played_in, read_history
from pbem.records.opening import read_game
from pbem.records.root import Root, fold, game_name
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


def due(ready: bool, deadline: datetime | None, interrupted: bool, now: datetime) -> State:
    """Whether a game that is neither over nor damaged is to be resolved now: READY when every
    awaited player has a valid order file (`ready`; or a resolution was interrupted and is to
    be completed), OVERDUE when its `deadline` has passed, else WAITING."""
    if interrupted or ready:
        return State.READY
    if deadline is not None and now >= deadline:
        return State.OVERDUE
    return State.WAITING


# ---------------------------------------------------------------------------------------------
# Reading


def status_of(directory: Path, now: datetime, root: Root | None = None) -> GameStatus:
    """Where one game stands; a damaged game is reported with the reason, never raised."""
    locked = held_by_another(directory)
    duplicate = root.duplicate_reason(directory) if root is not None else None
    return judge(read_facts(directory), now, locked, duplicate)


@dataclass(frozen=True)
class Facts:
    """What a game's status is made of that its files alone decide: not the clock, nor its
    lock, nor the other games of its root. The index of a root keeps them
    (pbem.records.rootindex); `judge` makes the status of them at a time."""

    name: str
    path: Path
    damaged: str | None = None
    """Why the game cannot be read (it is then listed as damaged, with nothing else)."""
    turn: int | None = None
    phase: str | None = None
    resolution: int | None = None
    last_resolved: datetime | None = None
    last_played: str | None = None
    deadline: datetime | None = None
    missed: tuple[tuple[str, int], ...] | None = None
    zone: str | None = None
    over: str | None = None
    """Who won, when the game is over."""
    awaited: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    bots: tuple[str, ...] = ()
    interrupted: str | None = None
    """The reason, when a resolution was interrupted and is to be completed."""
    held: str | None = None
    """Why the game waits for the moderator after an undo."""
    ready: bool = False
    doubled: str = ""
    at_deadline: bool = False
    """The setting `resolve = "at-deadline"`."""
    grace_until: datetime | None = None
    """The end of the grace after the last awaited orders came in (the setting `grace`)."""
    grace: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if key == "path" or (key in _DEFAULTS and value == _DEFAULTS[key]):
                continue
            out[key] = value.isoformat() if isinstance(value, datetime) else value
        return out

    @classmethod
    def from_json(cls, path: Path, data: dict[str, Any]) -> Facts:
        """Facts as `to_json` wrote them; raises ValueError (or KeyError, TypeError) when they
        are not (an index written by hand, or damaged)."""
        values: dict[str, Any] = {"path": path}
        for key, value in data.items():
            kind = _KINDS[key]
            if value is None:
                values[key] = None
            elif kind == "datetime":
                values[key] = datetime.fromisoformat(value)
            elif kind == "tuple":
                values[key] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            else:
                values[key] = value
        facts = cls(**values)
        if not isinstance(facts.name, str):
            raise ValueError("a game's name is not text")
        return facts


_DEFAULTS: dict[str, Any] = {
    "damaged": None,
    "turn": None,
    "phase": None,
    "resolution": None,
    "last_resolved": None,
    "last_played": None,
    "deadline": None,
    "missed": None,
    "zone": None,
    "over": None,
    "awaited": (),
    "valid": (),
    "rejected": (),
    "bots": (),
    "interrupted": None,
    "held": None,
    "ready": False,
    "doubled": "",
    "at_deadline": False,
    "grace_until": None,
    "grace": "",
}
_KINDS: dict[str, str] = {
    **{k: "value" for k in _DEFAULTS},
    "name": "value",
    **{k: "datetime" for k in ("last_resolved", "deadline", "grace_until")},
    **{k: "tuple" for k in ("missed", "awaited", "valid", "rejected", "bots")},
}


def read_facts(directory: Path) -> Facts:
    """What one game's status is made of, read from its files; a damaged game with the
    reason, never raised."""
    try:
        return _read_facts(directory)
    except PbemError as err:
        return Facts(game_name(directory), directory, damaged=str(err))


def _read_facts(directory: Path) -> Facts:
    name: str | None = None
    try:
        game = read_game(directory)
        name = game.name
        count = processor.checked_history(game)
    except PbemError as err:
        named = name if name is not None else game_name(directory)
        return Facts(named, directory, damaged=str(err))
    state = game.state
    r = state.resolution
    deadline = deadline_of(game)
    common: dict[str, Any] = {
        "turn": state.turn,
        "phase": state.phase.value,
        "resolution": r,
        "last_resolved": _resolved_at(directory, r - 1),
        "last_played": _last_played(game, r - 1),
        "deadline": deadline.at,
        "missed": deadline.missed,
        "zone": game.schedule.timezone if game.schedule else None,
    }
    if state.phase is Phase.OVER:
        return Facts(name, directory, over=f"{state.won_by} won", **common)
    found = processor.readiness(game)
    interrupted = count == r + 1
    at_deadline, grace_until, grace = (
        _settings(game, found) if found.ready and not interrupted else (False, None, "")
    )
    return Facts(
        name,
        directory,
        awaited=tuple(state.awaiting()),
        valid=tuple(s.player or "" for s in found.used),
        rejected=tuple(s.path.name for s in found.rejected),
        bots=tuple(
            n for n in state.awaiting() if (reg := game.registration(n)) is not None and reg.bot
        ),
        interrupted=(
            f"{played_in(game, r, state.turn).words()} was interrupted and is to be completed"
            if interrupted
            else None
        ),
        held=undone.held(directory),
        ready=found.ready,
        doubled="; ".join(found.doubled),
        at_deadline=at_deadline,
        grace_until=grace_until,
        grace=grace,
        **common,
    )


def judge(facts: Facts, now: datetime, locked: bool, duplicate: str | None) -> GameStatus:
    """A game's status at `now` from its facts, whether another run holds its lock, and why
    its name cannot be told from another game's (None when it can)."""
    name, directory = facts.name, facts.path
    if facts.damaged is not None:
        return GameStatus(name, directory, State.DAMAGED, facts.damaged)
    deadline = facts.deadline
    common: dict[str, Any] = {
        "turn": facts.turn,
        "phase": facts.phase,
        "resolution": facts.resolution,
        "last_resolved": facts.last_resolved,
        "last_played": facts.last_played,
        "deadline": deadline,
        "seconds_left": (deadline - now).total_seconds() if deadline else None,
        "missed": facts.missed,
        "zone": facts.zone,
    }
    if facts.over is not None:
        return GameStatus(name, directory, State.OVER, facts.over, **common)
    common.update(
        awaited=facts.awaited, valid=facts.valid, rejected=facts.rejected, bots=facts.bots
    )
    if duplicate is not None:
        return GameStatus(name, directory, State.DAMAGED, duplicate, **common)
    if locked:
        return GameStatus(name, directory, State.LOCKED, "another run holds its lock", **common)
    interrupted = facts.interrupted is not None
    if facts.held is not None and not interrupted:
        reason = f"held: {facts.held}; resolve by hand or release"
        return GameStatus(name, directory, State.HELD, reason, **common)
    verdict = due(facts.ready, deadline, interrupted, now)
    if verdict is State.READY and not interrupted:
        waits = _not_yet(facts, now)
        if waits is not None:
            return GameStatus(name, directory, State.WAITING, waits, **common)
    reason = facts.interrupted if facts.interrupted is not None else facts.doubled
    return GameStatus(name, directory, verdict, reason, **common)


def _not_yet(facts: Facts, now: datetime) -> str | None:
    """Why a turn whose orders are all in is not resolved yet by its `resolve` and `grace`
    settings (at the deadline; a while after the last orders, for a correction), or None."""
    deadline = facts.deadline
    if facts.at_deadline and deadline is not None and now < deadline:
        return (
            f"all orders are in; resolved at the deadline, {_iso(deadline)} (resolve = at-deadline)"
        )
    if facts.grace_until is not None and now < facts.grace_until:
        return (
            f"all orders are in; resolved from {_iso(facts.grace_until)}, in case a correction "
            f"comes (grace = {facts.grace})"
        )
    return None


def _settings(game: Game, found: processor.Readiness) -> tuple[bool, datetime | None, str]:
    """A ready turn's `resolve` and `grace` settings, as `_not_yet` weighs them: whether it
    waits for the deadline; until when, and how long, it waits after the last orders."""
    from pbem.records.settings import in_force

    try:
        settings = in_force(game.path, game.mail)
    except PbemError:  # damaged mail settings are told by the mail; the turn goes on
        return False, None, ""
    at_deadline = settings.resolve_when == "at-deadline"
    grace = settings.grace
    if not grace:
        return at_deadline, None, ""
    accepted = _accepted(game)
    arrived = [_arrival(game, s, accepted) for s in found.used]
    last = max((a for a in arrived if a is not None), default=None)
    if last is None:
        return at_deadline, None, ""
    return at_deadline, last + grace, clock.format_duration(grace)


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


def root_status(
    path: Path, now: datetime, shard: tuple[int, int] | None = None
) -> list[GameStatus]:
    """Every game of a root (or the one game `path` is), what needs the moderator first; with
    `shard` (K, N), only the games of shard K of N (pbem.records.rootindex.in_shard)."""
    statuses = [s for _, s in tick(path, now, shard).games if s is not None]
    return sorted(statuses, key=lambda s: s.sort_key)


@dataclass(frozen=True)
class Tick:
    """The games of a root by name, and the status of each game of the shard looked at."""

    root: Root
    games: list[tuple[Path, GameStatus | None]]


def tick(
    path: Path,
    now: datetime,
    shard: tuple[int, int] | None = None,
    *,
    careful: bool = False,
    keep: bool = False,
) -> Tick:
    """The status of every game of a root (of shard K of N), in the order of its folders: each
    game read again only when its files changed since the root's index last kept it
    (pbem.records.rootindex), the rest judged at `now` from what the index keeps. Unique names
    are checked once. With `keep` (`pbem run`), the index is brought up to date; `pbem status`
    reads it and writes nothing.

    A game whose files could not be read for a reason pbem does not foresee raises, or, when
    `careful`, is given as None (for `pbem run` to try it alone, and tell what went wrong)."""
    found = rootindex.survey(path)
    games = found.games
    if not games:
        raise PbemError(f"there is no game in {path}: no folder in it has a game.toml")
    root = Root(path, tuple(rootindex.game_names(path, found, game_name, fold, keep)))
    mine = [g for g in games if rootindex.in_shard(g.key, shard)]
    kept = rootindex.load(path, rootindex.shard_file(shard))
    prints = rootindex.Fingerprints(path)
    fresh: dict[str, Any] = {}
    out: list[tuple[Path, GameStatus | None]] = []
    for game in mine:
        locked = held_by_another(game.path)
        fingerprint, settled = prints.of(game)
        try:
            facts = _kept(kept.get(game.key), fingerprint, game.path)
            if facts is None:
                facts = read_facts(game.path)
        except Exception:
            if not careful:
                raise
            out.append((game.path, None))
            continue
        if settled:
            fresh[game.key] = [fingerprint, facts.to_json()]
        out.append((game.path, judge(facts, now, locked, root.duplicate_reason(game.path))))
    if keep and fresh != kept and rootindex.keeps_index(games):
        rootindex.save(path, rootindex.shard_file(shard), fresh)
    return Tick(root, out)


def _kept(entry: object, fingerprint: str, path: Path) -> Facts | None:
    """The facts the index keeps for a game whose files look as they did, else None."""
    if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == fingerprint):
        return None
    try:
        return Facts.from_json(path, entry[1])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def table(rows: Sequence[Sequence[str]], headings: Sequence[str]) -> list[str]:
    """Rows as aligned columns under their headings (an empty last column is left out)."""
    all_rows = [list(headings), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in all_rows) for i in range(len(headings))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in all_rows
    ]


def status_lines(statuses: Sequence[GameStatus]) -> list[str]:
    return table([s.cells() for s in statuses], HEADINGS)
