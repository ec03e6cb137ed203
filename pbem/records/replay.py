"""Replaying the history: the setup from its record, a resolution from its order files.

The audit, the recovery of an interrupted resolution and the undo all replay through here, so
that they cannot disagree about what a history file means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbem.core import engine
from pbem.core.board import Board
from pbem.core.events import DiceKeyed, Event, SeatTaken
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Orders
from pbem.core.state import GameState, Options
from pbem.errors import GameFileError
from pbem.records import seat_changes
from pbem.records.history import HistoryRecord, OrderRecord, history_count, read_history
from pbem.records.store import Game


def randomness(
    game: Game,
    resolution: int,
    attempt: int | None = None,
    record: HistoryRecord | None = None,
) -> engine.Randomness:
    """What resolution `resolution` draws from: the live one, or (`attempt`) the one an undo
    took back as its how-many-th. Every resolution of a number after the first is keyed
    against the orders of the first (pbem.game.undo.first_orders). In a game's public record,
    whose order files lack their secrets, the digests of the files are the ones `record`, the
    resolution's history, recorded."""
    from pbem.records.undone import first_orders

    first = None if attempt == 1 or resolution == 0 else first_orders(game.path, resolution)
    keys = game.randomness(resolution, first)
    if game.public is not None and record is not None:
        keyed = next((e for e in record.events if isinstance(e, DiceKeyed)), None)
        if keyed is not None:
            keys = replace(keys, digests=tuple(bytes.fromhex(d) for d in keyed.digests))
    return keys


def replay_setup(
    setup: Mapping[str, Any], randomness: engine.Randomness, board: Board
) -> tuple[GameState, tuple[Event, ...]]:
    """Resolution 0 again, from the [setup] section of history/0000.toml, on the game's board
    (`board`: the one the setup names, pbem's own or the game's copy of a club's)."""
    if str(setup["board"]) != board.name:
        raise GameFileError(
            f"history/0000.toml sets the game up on the board '{setup['board']}', but the game "
            f"is on '{board.name}': restore the game from a backup"
        )
    try:
        return engine.new_game(
            str(setup["game"]),
            list(setup["players"]),
            board,
            Options.from_dict(setup),
            randomness,
        )
    except ValueError as err:  # (a history edited by hand: its players, teams or options)
        raise GameFileError(
            f"history/0000.toml cannot set the game up again ({err}): restore the game from a "
            "backup"
        ) from None


def recorded_orders(state: GameState, records: Sequence[OrderRecord]) -> list[Orders]:
    """The orders of order files as the history keeps them, parsed again."""
    return [parse_orders(o.text, state.board) for o in records]


def replay_orders(
    state: GameState,
    records: Sequence[OrderRecord],
    randomness: engine.Randomness,
    orders: Sequence[Orders] | None = None,
    taken: Sequence[SeatTaken] = (),
) -> tuple[GameState, tuple[Event, ...]]:
    """A resolution again from its order files as the history keeps them (the autopilot's
    among them, which count as missed turns); `orders`: the same, already parsed; `taken`:
    the seats that changed hands before it (pbem.game.seats.taken)."""
    if orders is None:
        orders = recorded_orders(state, records)
    autopilot = {o.player for o in records if o.autopilot}
    away = {o.player: o.away for o in records if o.autopilot and o.away is not None}
    return engine.resolve(state, orders, randomness, autopilot, taken, away)


def state_after(game: Game, resolution: int) -> GameState:
    """The state after `resolution`, replayed from history/0000.toml, checked against the
    digest each history file records."""
    if resolution >= history_count(game.path):
        raise GameFileError(f"history/{resolution:04d}.toml is missing")
    return replayed(game, resolution + 1)[-1][1]


def replayed(game: Game, count: int | None = None) -> list[tuple[HistoryRecord, GameState]]:
    """Every resolution of the game's history (the first `count`) with the state after it,
    replayed from history/0000.toml and checked against the digest each history file records
    (the club's pages show the board after every turn)."""
    from pbem.core.state import state_digest

    out: list[tuple[HistoryRecord, GameState]] = []
    state: GameState | None = None
    for r in range(history_count(game.path) if count is None else count):
        record = read_history(game.path, r)
        if r == 0:
            if record.setup is None:
                raise GameFileError("history/0000.toml has no [setup] section")
            state, _ = replay_setup(record.setup, game.randomness(0), game.state.board)
        else:
            assert state is not None
            state, _ = replay_orders(
                state,
                record.orders,
                randomness(game, r, record=record),
                taken=seat_changes.taken(game.path, r),
            )
        if state_digest(state) != record.state_digest:
            raise GameFileError(
                f"history/{r:04d}.toml does not replay to the state it records: run 'pbem audit'"
            )
        out.append((record, state))
    return out
