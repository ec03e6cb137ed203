"""The history checked against itself and against the game file.

`audit_game` replays every resolution from history/0000 and compares every event, key, die and
state digest with what was recorded (undone resolutions and the autopilot's turns too), and
the game's tallies (history/tallies.json) with those its history gives.
A public record is checked to its end (`check_record_end`). The cheap check every command makes
before it trusts game.toml is pbem.records.agreement's.
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
from pbem.core.state import GameState, Phase, state_digest
from pbem.errors import AuditError, OrderError
from pbem.present.text import plural
from pbem.records import clock, deadline_changes, seat_changes
from pbem.records import undone as undos
from pbem.records.agreement import describe, differences
from pbem.records.disk import RECORD_FILE
from pbem.records.history import (
    HISTORY,
    HistoryRecord,
    history_count,
    plain_file_name,
    played_in,
    read_history,
    read_history_file,
)
from pbem.records.published import VIEW_FILE
from pbem.records.store import (
    Game,
    load_game,
)
from pbem.terminal import quoted

if TYPE_CHECKING:
    from pbem.core.events import Event, Rolled
    from pbem.core.tallies import Tallies
    from pbem.records.undone import UndoRecord

# The audit's replay, events, deadlines, addresses and undo are imported where they are used:
# every command that reads a game checks it against its history (`history_problem`), and loads
# only what that takes.


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
    from pbem.game import deadlines, players, seats, vacations
    from pbem.records.replay import replay_setup

    game = load_game(directory, record=True)
    undos.check_not_interrupted(directory)
    half = seat_changes.unfinished_problem(game)
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
    undone = undos.undo_records(directory)
    previous = bytes.fromhex(game.commitment)
    rolls = 0
    state: GameState | None = None
    from pbem.core.tallies import Tallies

    kept = _kept_tallies(directory, count)
    counted: Tallies | None = None  # (of the players in the seats the deal gives)
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
        if isinstance(kept, tuple) and r <= kept[0].resolution:
            counted = counted or Tallies([p.name for p in state.players])
            counted.fold(r, record.turn, record.events)
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
    if state.phase is not Phase.OVER:
        deadline = deadline_changes.pending_deadline(directory, game, count)
        if game.deadline != deadline:
            raise AuditError(
                "game.toml's deadline differs from the one the history gives "
                f"({deadline}); if a 'pbem deadline' or 'pbem vacation' run was interrupted, run "
                "it again: it completes the change it recorded"
            )
    address = seats.seat_problem(game) or players.address_problem(game)
    if address:
        raise AuditError(address)
    if isinstance(kept, str):  # (after the history's and the game file's own faults)
        raise AuditError(kept)
    if kept is not None and counted is not None:
        _check_tallies(kept, counted)
    last = played_in(game, count - 1, record.turn).label
    if game.public is not None:
        check_record_end(game, count - 1)
        return AuditSummary(
            count, rolls, state_digest(state), last, RECORD_FILE, game.name, game.commitment
        )
    return AuditSummary(count, rolls, state_digest(state), last)


def _kept_tallies(directory: Path, count: int) -> tuple[Tallies, dict[str, Any]] | str | None:
    """The tallies the game keeps and the values their file holds, checked to be after one
    of its resolutions as its history file is now, or what is wrong with them (said once the
    history is replayed); None when it keeps none (a game made before pbem kept them, a public
    record)."""
    from pbem.records.tallies import (
        TALLIES,
        TalliesProblem,
        history_digest,
        stored_tallies,
        tallies_path,
    )

    where = f"{HISTORY}/{TALLIES}"
    try:
        stored = stored_tallies(directory)
    except TalliesProblem as err:
        return f"{where}: {err}; {_AGAIN}"
    if stored is None:
        return None
    tallies, digest = stored
    if not 0 <= tallies.resolution < count:
        return (
            f"{where} holds the tallies after resolution {tallies.resolution}, which the history "
            f"does not hold; {_AGAIN}"
        )
    if history_digest(directory, tallies.resolution) != digest:
        return (
            f"{where} holds the tallies after another history/{tallies.resolution:04d}.toml "
            f"than the one there; {_AGAIN}"
        )
    return tallies, json.loads(tallies_path(directory).read_bytes())


_AGAIN = (
    "remove it, and the next resolution counts the tallies again from the history (they hold "
    "nothing the history does not)"
)


def _check_tallies(kept: tuple[Tallies, dict[str, Any]], counted: Tallies) -> None:
    """The tallies kept must be those the history gives, number for number."""
    from pbem.records.tallies import TALLIES, tallies_difference

    tallies, values = kept
    values.pop("history", None)
    found = tallies_difference(values, counted.to_dict())
    if found:
        raise AuditError(
            f"{HISTORY}/{TALLIES} does not hold the tallies the history gives after resolution "
            f"{tallies.resolution}: {found}; {_AGAIN}"
        )


def _audit_key(game: Game, where: str, record: HistoryRecord, r: int) -> bytes:
    key = bytes.fromhex(record.key)
    if key != game.key(r):
        source = "the seed's" if game.public is None else "the record's chain's"
        raise AuditError(f"{where}: its key is not {source} key for resolution {r}")
    return key


def _audit_undone(game: Game, undone: Sequence[UndoRecord], state: GameState) -> int:
    """Check undone resolutions: their keys, and their dice and events from the state before
    them; returns how many rolls they hold."""

    rolls = 0
    for u in undone:
        path = undos.undone_folder(game.path, u) / f"{u.resolution:04d}.toml"
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
    from pbem.records.replay import randomness, replay_orders
    from pbem.records.seat_changes import taken

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
    from pbem.game.check import check_submission
    from pbem.records.seat_changes import at_resolution

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


def final_view(game: Game, last: int) -> str:
    """The view of the end of the game, every hand and mission shown, with the last
    resolution's dice check and the revealed card key: what `verify --report` checks."""
    from pbem.present.context import dice_section
    from pbem.present.view import game_view

    events = read_history(game.path, last).events
    view = game_view(game.state, None, game.commitment)
    view["dice"] = dice_section(game, last, events, None)
    return json.dumps(view, indent=1, ensure_ascii=False) + "\n"


def check_record_end(game: Game, last: int) -> None:
    """What the audit of a public record checks after the replay: that the game is over (a
    record is only ever of a finished game) and that its view.json is the view of the end the
    record replays to."""
    from pbem.errors import AuditError

    if game.state.phase is not Phase.OVER:
        raise AuditError(
            f"{RECORD_FILE} holds a game that is not over: pbem publishes only finished games, "
            "so this is not a record pbem wrote"
        )
    path = game.path / VIEW_FILE
    try:
        found = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise AuditError(f"cannot read {VIEW_FILE} of the record ({err})") from None
    if found != final_view(game, last):
        raise AuditError(
            f"{VIEW_FILE} is not the view of the end of the game that the record replays to: "
            "it was changed after the record was written"
        )
