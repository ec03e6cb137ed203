"""What the moderator reads of a game at the terminal: the table as text (`pbem show`), and
every die rolled with its key (`pbem dice`: a list, as docs/views.md gives it, and its lines).

Read-only: nothing here writes to the game directory.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pbem.core.state import NEUTRAL, GameState
from pbem.errors import PbemError
from pbem.languages.numbering import Played
from pbem.present.missions import UNCLAIMED, mission_lines, owner_shown
from pbem.records import undone as undos
from pbem.records.history import (
    HISTORY,
    HistoryRecord,
    drafted,
    history_count,
    played_in,
    read_history,
    read_history_file,
)
from pbem.records.opening import read_game
from pbem.records.store import Game


def show_table(state: GameState, view: dict[str, Any], deadline: str | None = None) -> str:
    """The readable state: territories by continent, the players, the cards beside the board;
    when the pending turn is due, if the game has deadlines."""
    out = [
        f"{state.game}: {state.phase.value}, turn {state.turn}, awaiting "
        f"{', '.join(state.awaiting()) or 'nobody'}"
    ]
    if deadline:
        out.append(f"due by {deadline}")
    from pbem.present.context import piles_context, variants

    rules_played = variants(state)
    if rules_played:
        out.append("rules: " + "; ".join(rules_played))
    land = view["territories"]  # (under fog, as the reader may know it: null where hidden)

    def owner(t: str) -> str:
        return "?" if land[t]["owner"] is None else owner_shown(state, t)

    for c in state.board.continents.values():
        holders = {owner(t) for t in c.territories}
        held = (
            f", held by {holders.pop()}"
            if len(holders) == 1 and not holders & {UNCLAIMED, "?"}
            else ""
        )
        out.append(f"\n{c.name} (+{c.bonus}){held}")
        for t in c.territories:
            armies = "?" if land[t]["armies"] is None else land[t]["armies"]
            out.append(f"  {t:<24} {owner(t):<12} {armies:>4}")
    out.append("\nplayer        territories armies cards reinforcements")
    for p in view["players"]:
        hand = f"  hand: {', '.join(p['hand'])}" if p.get("hand") else ""
        if p.get("dropped"):
            hand += "  (dropped)"
        elif p.get("missed"):
            hand += f"  (missed {p['missed']} in a row)"
        counts = [
            "?" if p[k] is None else p[k]
            for k in ("territories", "armies", "cards", "reinforcements")
        ]
        out.append(
            f"{p['name']:<13} {counts[0]:>11} {counts[1]:>6} {counts[2]:>5} "
            f"{counts[3] if p['alive'] else 'out':>14}{hand}"
        )
    if "neutral" in view:
        neutral = view["neutral"]
        shown = ["?" if neutral[k] is None else neutral[k] for k in ("territories", "armies")]
        out.append(f"{NEUTRAL:<13} {shown[0]:>11} {shown[1]:>6}")
    out += ["", *piles_context(view["piles"])["lines"]]
    shown = mission_lines(view["players"], view.get("player"))
    if shown:
        out += ["", *shown]
    return "\n".join(out) + "\n"


def dice_history(
    directory: Path, resolution: int | None = None, turn: int | None = None
) -> list[dict[str, object]]:
    """The dice list of docs/views.md: every resolution's key and rolls, in order; only those
    of `resolution`, or of the resolution that played `turn` (the turn players name)."""
    return list(dice_entries(directory, resolution, turn))


def dice_entries(
    directory: Path, resolution: int | None = None, turn: int | None = None
) -> Iterator[dict[str, object]]:
    """The entries of `dice_history` one at a time, each history file read as its entry is
    wanted, so that a long game's list is never held whole. A wrong `resolution` is refused
    at once; a `turn` not played when the history has been read through, before any entry."""
    game = read_game(directory)
    count = history_count(directory)
    undone = undos.undo_records(directory)
    last = count if any(u.resolution == count for u in undone) else count - 1
    if resolution is not None and turn is not None:
        raise PbemError("give --turn or --resolution, not both")
    if resolution is not None and not 0 <= resolution <= last:
        raise PbemError(f"there is no resolution {resolution}: this game has 0 to {last}")
    wanted = range(last + 1) if resolution is None else range(resolution, resolution + 1)
    entries = _entries(game, directory, wanted, undone, count)
    if turn is None:
        return entries
    return _of_turn(game, entries, turn)


def _entries(
    game: Game,
    directory: Path,
    resolutions: range,
    undone: Sequence[undos.UndoRecord],
    count: int,
) -> Iterator[dict[str, object]]:
    """The entries of `resolutions`, an undone resolution's before the one that replaced it."""
    for r in resolutions:
        for u in undone:
            if u.resolution == r:
                kept = read_history_file(undos.undone_folder(directory, u) / f"{r:04d}.toml")
                note = u.note(drafted(game))
                yield {**_dice_entry(game, kept), "undone": u.to_dict(), "note": note}
        if r < count:
            yield _dice_entry(game, read_history(directory, r))


def _of_turn(
    game: Game, entries: Iterator[dict[str, object]], turn: int
) -> Iterator[dict[str, object]]:
    """The entries that played `turn`; when there are none, a PbemError naming the turns
    played, raised before the first entry is given."""
    wanted = Played.of(2, turn).label
    found = False
    first = latest = None  # (the turns played, for the refusal)
    for entry in entries:
        if entry["played"] == wanted:
            found = True
            yield entry
        elif not found and entry["played"] not in ("the deal", "the draft"):
            first = entry["turn"] if first is None else first
            latest = entry["turn"]
    if found:
        return
    so_far = f"turns {first} to {latest}" if first is not None else "only the deal"
    raise PbemError(
        f"there is no turn {turn} in the history: this game has played {so_far}, and "
        f"turn {game.state.turn} is pending ('pbem dice DIR' lists every turn)"
    )


def _dice_entry(game: Game, record: HistoryRecord) -> dict[str, object]:
    from pbem.present.context import orders_section

    r = record.resolution
    return {
        "resolution": r,
        "turn": record.turn,
        "played": played_in(game, r, record.turn).label,
        "history": f"{HISTORY}/{r:04d}.toml",
        "player": record.players[0] if len(record.players) == 1 else None,
        "key": record.key,
        **orders_section(bytes.fromhex(record.key), record.events),
        "rolls": record.rolls(),
        **({"first_player": record.first_player_rolls()} if r == 0 else {}),
    }


def dice_lines(history: Sequence[Mapping[str, Any]]) -> list[str]:
    """`pbem dice` as text: each resolution's turn with its resolution and key, its rolls."""
    out: list[str] = []
    for entry in history:
        played = Played.of(entry["resolution"], entry["turn"], draft=entry["played"] == "the draft")
        who = f"{entry['player']}'s turn" if entry["player"] else ""
        undone = " UNDONE" if "undone" in entry else ""
        out.append(f"{played.words(who)}{undone}: key {entry['key']}")
        if undone:
            out.append(f"  {entry['note']}")
        if "dice_key" in entry:
            files = ", ".join(f"{f['player']} {f['digest']}" for f in entry["orders"])
            again = (
                " (played again with other orders: salt " + entry["again"] + ")"
                if "again" in entry
                else ""
            )
            out.append(f"  dice key {entry['dice_key']}{again}")
            out.append(f"  from the order files of {files}")
        for roll in entry.get("first_player", []):
            out.append(f"  first player: {roll['player']} rolled {roll['die']}")
        for roll in entry["rolls"]:
            a = " ".join(map(str, roll["attacker"]))
            d = " ".join(map(str, roll["defender"]))
            out.append(f"  {roll['from']} -> {roll['to']}: {a} against {d}")
    return out
