"""Whether game.toml agrees with the history: the cheap check every command makes before it
trusts the game file (pbem.records.opening.read_game). The seed must be the one the game was
created with (its key for resolution 0 is recorded in history/0000.toml) and the state must be
the one the last history file recorded. Only when that fails is the history replayed, to name
what differs, field by field."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pbem.core.state import GameState, state_digest, state_to_dict
from pbem.errors import PbemError
from pbem.records.history import (
    history_path,
    read_history,
)
from pbem.records.store import Game
from pbem.terminal import quoted

if TYPE_CHECKING:
    pass

if TYPE_CHECKING:
    pass

if TYPE_CHECKING:
    pass


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
    from pbem.records.seat_changes import unfinished_problem

    if record.state_digest == state_digest(game.state):
        return unfinished_problem(game)
    where = f"history/{last:04d}.toml"
    from pbem.records.replay import state_after

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


def describe(found: Sequence[str]) -> str:
    """The first differences, and how many more there are."""
    if not found:
        return "no field differs (the digests do)"
    shown = "; ".join(found[:SHOWN_DIFFERENCES])
    more = len(found) - SHOWN_DIFFERENCES
    return shown + (f"; and {more} more difference{'s' * (more > 1)}" if more > 0 else "")


SHOWN_DIFFERENCES = 6
"""How many differences a refusal lists before it says how many more there are."""


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
