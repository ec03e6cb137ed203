"""The history checked against itself and against the game file.

`audit_game` replays every resolution from history/0000 and compares every event, key, die and
state digest with what was recorded (undone resolutions and the autopilot's turns too).
`history_problem` is the cheap check every command makes before it trusts game.toml: the seed
must be the one the game was created with (its key for resolution 0 is recorded in
history/0000.toml) and the state must be the one the last history file recorded. Only when
that fails is the history replayed, to name what differs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.core import dice
from pbem.core.autopilot import autopilot_orders
from pbem.core.orders import Orders
from pbem.core.state import GameState, Phase, state_digest, state_to_dict
from pbem.errors import AuditError, OrderError, PbemError
from pbem.present.text import plural
from pbem.records import clock
from pbem.records.disk import RECORD_FILE
from pbem.records.history import (
    HistoryRecord,
    history_count,
    history_path,
    plain_file_name,
    played_in,
    read_history,
    read_history_file,
)
from pbem.records.store import Game, load_game
from pbem.terminal import quoted

if TYPE_CHECKING:
    from pbem.core.events import Event, Rolled
    from pbem.game.undo import UndoRecord

# The audit's replay, events, deadlines, addresses and undo are imported where they are used:
# every command that reads a game checks it against its history (`history_problem`), and loads
# only what that takes.

SHOWN_DIFFERENCES = 6
"""How many differences a refusal lists before it says how many more there are."""


@dataclass(frozen=True)
class AuditSummary:
    resolutions: int
    rolls: int
    final_digest: str
    last: str = "the deal"
    """What the last resolution played, as players name it ("turn 13")."""
    file: str = "game.toml"
    """The file holding the state audited: record.toml in a game's public record."""
    game: str = ""
    """A public record's game."""
    commitment: str = ""
    """A public record's commitment, where its key chain ends."""

    def passed(self) -> str:
        """What `pbem audit` says when all is well."""
        span = "the deal" if self.resolutions == 1 else f"the deal to {self.last}"
        files = "history/0000.toml" + (
            f" to {self.resolutions - 1:04d}.toml" if self.resolutions > 1 else ""
        )
        if not self.commitment:
            return (
                f"audit passed: {span} replayed ({plural(self.resolutions, 'resolution')}, "
                f"{files}), {plural(self.rolls, 'roll')} and every key checked, game.toml "
                "matches"
            )
        return (
            f"audit of the public record of {self.game} passed: {span} replayed "
            f"({plural(self.resolutions, 'resolution')}, {files}), every key checked down to "
            f"the commitment {self.commitment}, every card and mission from the card key, and "
            f"{plural(self.rolls, 'roll')} from the keys and the order files' digests the record "
            f"holds; {self.file} and view.json match.\n"
            "That the record is this game's is for its players to see: the commitment must be "
            "the one of their first report, and each report they kept must agree with the "
            "record ('pbem audit RECORD --report NAME.view.json')"
        )


def audit_game(directory: Path) -> AuditSummary:
    """Replay every resolution from history/0000 and compare everything with what was recorded:
    keys, events, dice and states; the undone resolutions too (against the state before them);
    that the autopilot played only after a deadline; and that game.toml is where it all ends.
    A history (or a public record, which may come from anyone) holding a value pbem never
    writes fails with a sentence."""
    try:
        return _audit_game(directory)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as err:
        what = "the record" if (directory / RECORD_FILE).is_file() else "the history"
        raise AuditError(
            f"{what} holds a value pbem never writes, so it cannot be replayed ({err!r}): it was "
            "changed after pbem wrote it"
        ) from None


def _audit_game(directory: Path) -> AuditSummary:
    from pbem.game import deadlines, players, seats, undo, vacations
    from pbem.game.replay import replay_setup

    game = load_game(directory, record=True)
    undo.check_not_interrupted(directory)
    half = seats.unfinished_problem(game)
    if half is not None:
        raise AuditError(half)
    count = history_count(directory)
    if count == 0:
        raise AuditError("the history is empty: history/0000.toml is missing")
    setup_record = read_history(directory, 0)
    if setup_record.setup is None:
        raise AuditError("history/0000.toml has no [setup] section")
    setup = dict(setup_record.setup)
    schedule = clock.Schedule.from_dict(setup) if "turn_time" in setup else None
    if schedule != game.schedule:
        raise AuditError("game.toml's deadlines differ from those the game was created with")
    undone = undo.undo_records(directory)
    previous = bytes.fromhex(game.commitment)
    rolls = 0
    state: GameState | None = None
    for r in range(count):
        record = setup_record if r == 0 else read_history(directory, r)
        where = _resolution_words(game, r, record, f"history/{r:04d}.toml")
        key = _audit_key(game, where, record, r)
        if not dice.key_follows(key, previous):
            raise AuditError(f"{where}: SHA-256 of its key is not the previous key")
        previous = key
        if r == 0:
            state, events = replay_setup(setup, game.randomness(0), game.state.board)
            _compare(where, record, state, events)
        else:
            assert state is not None
            rolls += _audit_undone(game, [u for u in undone if u.resolution == r], state)
            early = deadlines.autopilot_too_early(
                directory, game, record
            ) or deadlines.away_unfounded(directory, game, record)
            if early:
                raise AuditError(f"{where}: {early}")
            state = _replay_checked(game, where, state, record)
        rolls += len(record.rolls())
    assert state is not None
    rolls += _audit_undone(game, [u for u in undone if u.resolution == count], state)
    if state_digest(state) != state_digest(game.state):
        raise AuditError(
            "game.toml differs from the state the history replays to: "
            + describe(differences(game.state, state))
        )
    allowance = vacations.allowance_problem(game)
    if allowance:
        raise AuditError(allowance)
    if state.phase is not Phase.OVER and game.deadline != deadlines.pending_deadline(
        directory, game, count
    ):
        raise AuditError(
            "game.toml's deadline differs from the one the history gives "
            f"({deadlines.pending_deadline(directory, game, count)}); if a 'pbem deadline' or "
            "'pbem vacation' run was interrupted, run it again: it completes the change it "
            "recorded"
        )
    address = seats.seat_problem(game) or players.address_problem(game)
    if address:
        raise AuditError(address)
    last = played_in(game, count - 1, record.turn).label
    if game.public is not None:
        from pbem.game.record import check_record_end

        check_record_end(game, count - 1)
        return AuditSummary(
            count, rolls, state_digest(state), last, RECORD_FILE, game.name, game.commitment
        )
    return AuditSummary(count, rolls, state_digest(state), last)


def _audit_key(game: Game, where: str, record: HistoryRecord, r: int) -> bytes:
    key = bytes.fromhex(record.key)
    if key != game.key(r):
        source = "the seed's" if game.public is None else "the record's chain's"
        raise AuditError(f"{where}: its key is not {source} key for resolution {r}")
    return key


def _audit_undone(game: Game, undone: Sequence[UndoRecord], state: GameState) -> int:
    """Check undone resolutions: their keys, and their dice and events from the state before
    them; returns how many rolls they hold."""
    from pbem.game import undo

    rolls = 0
    for u in undone:
        path = undo.undone_folder(game.path, u) / f"{u.resolution:04d}.toml"
        record = read_history_file(path)
        where = "undone " + _resolution_words(game, u.resolution, record, str(path))
        _audit_key(game, where, record, u.resolution)
        if record.key != u.key:
            raise AuditError(f"{where}: its key differs from the one its undo.toml records")
        _replay_checked(game, where, state, record, u.attempt)
        rolls += len(record.rolls())
    return rolls


def _replay_checked(
    game: Game, where: str, state: GameState, record: HistoryRecord, attempt: int | None = None
) -> GameState:
    """The resolution replayed from the state before it and compared with its record;
    `attempt`: it is the how-many-th undone resolution of its number (None: the live one)."""
    from pbem.game.replay import randomness, replay_orders
    from pbem.game.seats import taken

    orders = _check_recorded_orders(game, where, state, record, attempt)
    try:
        after, events = replay_orders(
            state,
            record.orders,
            randomness(game, record.resolution, attempt, record),
            orders,
            taken(game.path, record.resolution, attempt),
        )
    except (OrderError, ValueError) as err:
        raise AuditError(f"{where}: its orders do not replay ({err})") from None
    _compare(where, record, after, events)
    return after


def _check_recorded_orders(
    game: Game, where: str, state: GameState, record: HistoryRecord, attempt: int | None = None
) -> list[Orders]:
    """Every order file the resolution used (the autopilot's too) must have been valid for the
    state before it, as resolve checks it: game, turn, player, secret and the orders. Returns
    them parsed, for the replay."""
    from pbem.game.processor import check_submission
    from pbem.game.seats import at_resolution

    before = replace(at_resolution(game, record.resolution, attempt), state=state)
    parsed: list[Orders] = []
    for o in record.orders:
        if not plain_file_name(o.file):
            raise AuditError(
                f"{where}: it names the order file {quoted(o.file[:100])!r}, which is not a "
                "plain file name"
            )
        submission = check_submission(before, Path(o.file), o.text)
        what = "the autopilot's order file" if o.autopilot else "an order file"
        if submission.problems:
            raise AuditError(
                f"{where}: {what} it used does not pass the checks resolve makes: "
                + "; ".join(submission.messages())
            )
        if submission.player != o.player:
            raise AuditError(
                f"{where}: {what} it used ({quoted(o.file)}) is recorded as "
                f"{quoted(o.player)}'s but holds {quoted(submission.player or '')}'s orders"
            )
        assert submission.orders is not None  # no problems: they parsed
        if o.autopilot:
            reg = before.registration(o.player)
            wrote = autopilot_orders(state, o.player, reg.secret if reg else "")
            if submission.orders != wrote:
                raise AuditError(
                    f"{where}: the order file recorded as the autopilot's for "
                    f"{quoted(o.player)} is not what the autopilot writes for that turn (its "
                    f"rule: {state.options.autopilot.value}): it was not the autopilot's"
                )
        parsed.append(submission.orders)
    return parsed


def _compare(where: str, record: HistoryRecord, state: GameState, events: Sequence[Event]) -> None:
    _compare_events(where, record.events, events)
    if state_digest(state) != record.state_digest:
        raise AuditError(f"{where}: the state after it differs from the one recorded")


def _resolution_words(game: Game, r: int, record: HistoryRecord, file: str) -> str:
    """`turn 4, alice's turn (resolution 5, history/0005.toml)`."""
    played = played_in(game, r, record.turn)
    if played.kind == "deal":
        whose = ""
    elif len(record.players) == 1:
        whose = f"{record.players[0]}'s turn"
    else:
        whose = f"the orders of {', '.join(record.players)}"
    return played.words(whose, file)


def _dice_words(dice: Sequence[int]) -> str:
    return " ".join(map(str, dice)) or "no dice"


def event_difference(recorded: Sequence[Event], i: int, replayed: Event) -> str:
    """Recorded event `i` and what the replay gives instead, in words."""
    from pbem.core.events import Rolled, RolledForFirst

    a, b = recorded[i], replayed
    if isinstance(a, Rolled) and isinstance(b, Rolled) and _attack(a) == _attack(b):
        number = 1 + sum(
            1 for e in recorded[:i] if isinstance(e, Rolled) and _attack(e) == _attack(a)
        )
        what = f"{a.player}'s attack on {a.target} from {a.source}, roll {number}"
        if (a.attacker, a.defender) != (b.attacker, b.defender):
            return (
                f"{what}: recorded {_dice_words(a.attacker)} against {_dice_words(a.defender)}, "
                f"the dice give {_dice_words(b.attacker)} against {_dice_words(b.defender)}"
            )
        return (
            f"{what}: recorded losses {a.attacker_losses} and {a.defender_losses}, the rules "
            f"give {b.attacker_losses} and {b.defender_losses}"
        )
    if isinstance(a, RolledForFirst) and isinstance(b, RolledForFirst) and a.player == b.player:
        return f"{a.player}'s roll for first player: recorded {a.die}, the dice give {b.die}"
    from pbem.present.report import narrate

    return f"event {i + 1}: recorded '{narrate(a, None)}' but the replay gives '{narrate(b, None)}'"


def _attack(event: Rolled) -> tuple[str, str, str]:
    return event.player, event.source, event.target


def _compare_events(where: str, recorded: Sequence[Event], replayed: Sequence[Event]) -> None:
    for i, (a, b) in enumerate(zip(recorded, replayed, strict=False)):
        if a != b:
            raise AuditError(f"{where}: {event_difference(recorded, i, b)}")
    if len(recorded) != len(replayed):
        raise AuditError(
            f"{where}: {len(recorded)} events recorded but the replay gives {len(replayed)}"
        )


def history_problem(game: Game) -> str | None:
    """What makes game.toml disagree with the history, or None (see the module's docstring).

    The state of game.toml at resolution r is the one history/(r-1).toml recorded; a
    history/r.toml written by an interrupted run is the resolve command's to complete."""
    directory = game.path
    last = game.state.resolution - 1
    for r in sorted({0, last}):
        if not history_path(directory, r).is_file():
            return (
                f"game.toml is at resolution {last + 1} but history/{r:04d}.toml is missing: "
                "restore the history from a backup"
            )
    setup = read_history(directory, 0, events=False)
    if setup.key != game.key(0).hex():
        other = (setup.setup or {}).get("game")
        if other is not None and str(other) != game.name:
            return (
                f"history/0000.toml belongs to another game ('{quoted(str(other))}', not "
                f"'{game.name}'): restore this game's history from a backup"
            )
        return (
            "the seed (or chain_length) in game.toml is not the one this game was created with: "
            "the key history/0000.toml recorded for resolution 0 is not its key; restore "
            "game.toml from a backup"
        )
    record = setup if last == 0 else read_history(directory, last, events=False)
    if record.resolution != last or record.key != game.key(last).hex():
        return (
            f"history/{last:04d}.toml belongs to another game: its key is not this game's key "
            f"for resolution {last}; restore it from a backup"
        )
    from pbem.game.seats import unfinished_problem

    if record.state_digest == state_digest(game.state):
        return unfinished_problem(game)
    where = f"history/{last:04d}.toml"
    from pbem.game.replay import state_after

    try:
        recorded = state_after(game, last)
    except (PbemError, ValueError, KeyError, TypeError) as err:
        return (
            f"game.toml is not the state {where} recorded, and the history does not replay to "
            f"show what differs ({err}); restore game.toml from a backup"
        )
    if state_digest(recorded) != record.state_digest:
        return f"game.toml is not the state {where} recorded; run 'pbem audit'"
    return (
        f"game.toml is not the state {where} recorded: "
        f"{describe(differences(game.state, recorded))}; restore game.toml from a backup "
        "(or undo the edit)"
    )


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return f"'{quoted(value)}'"
    return quoted(json.dumps(value, ensure_ascii=False), 80)


def differences(found: GameState, recorded: GameState) -> list[str]:
    """What differs between the game file's state (`found`) and the history's (`recorded`),
    field by field: "Alberta: game file 40 armies, history 14"."""
    a, b = state_to_dict(found), state_to_dict(recorded)
    out: list[str] = []
    for key in [*b, *(k for k in a if k not in b)]:
        if key == "players" and len(a[key]) == len(b[key]):
            for pa, pb in zip(a[key], b[key], strict=True):
                for field, value in pb.items():
                    if pa.get(field) != value:
                        out.append(
                            f"{pb.get('name')}'s {field}: game file {_shown(pa.get(field))}, "
                            f"history {_shown(value)}"
                        )
        elif key == "territories" and isinstance(a.get(key), dict):
            for t, held in b[key].items():
                if a[key].get(t) != held:
                    out.append(f"{t}: {_holding_difference(a[key].get(t), held)}")
        elif a.get(key) != b.get(key):
            out.append(f"{key}: game file {_shown(a.get(key))}, history {_shown(b.get(key))}")
    return out


def _holding_difference(found: Any, recorded: Sequence[Any]) -> str:
    """`game file 40 armies, history 14`, naming the owners when they differ."""
    if not isinstance(found, list) or len(found) != 2:
        return f"game file {_shown(found)}, history {recorded[0]} with {_armies(recorded[1])}"
    if found[0] == recorded[0]:
        return f"game file {_armies(found[1])}, history {recorded[1]}"
    return (
        f"game file {found[0]} with {_armies(found[1])}, "
        f"history {recorded[0]} with {_armies(recorded[1])}"
    )


def _armies(count: Any) -> str:
    return f"{count} {'army' if count == 1 else 'armies'}"


def describe(found: Sequence[str]) -> str:
    """The first differences, and how many more there are."""
    if not found:
        return "no field differs (the digests do)"
    shown = "; ".join(found[:SHOWN_DIFFERENCES])
    more = len(found) - SHOWN_DIFFERENCES
    return shown + (f"; and {more} more difference{'s' * (more > 1)}" if more > 0 else "")
