"""What a player's view file carries of the past, bounded, so that no view file passes the size
pbem's own commands read (`pbem.files.VIEW_FILE_LIMIT`, 4 MiB), however long the game
(docs/views.md, "How much of the past a view file carries").

A view file is sent with every report. What it says of the resolution just played (its dice,
its keys, its table talk) does not grow with the game; what it says of the game so far would,
were it not bounded here: the story's timeline (one entry a resolution), its cards traded, and
a finished fog game's list of every battle. Each is cut to a fixed number of entries; the
totals of the story (luck, who fell, the biggest battles) are over the whole game as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

TIMELINE_POINTS = 101
"""The most entries of the story's timeline a view file holds (of the resolutions in which the
reader's side held land, and as many of the others): the first, the last and the middle one,
which `pbem stats --view` tells, and the rest evenly between; 101 points draw a chart 600
pixels wide, a point every 6 pixels."""

TRADES_KEPT = 50
"""The most cards traded a view file's story lists: the latest, with how many came before
(`trades_before`): the text of `pbem stats --view` lists each, and fifty lines are as many
as a story in a mail should hold; `pbem stats DIR` lists them all."""

FOG_RESOLUTIONS = 100
"""The most resolutions whose battles a finished fog game's last view file lists (`dice.game`,
docs/fog.md): the latest, from `game_from`. A hundred resolutions are the whole of a game of
three or four players (a fog game of the test bots, three players, ended in 74) and the last
twenty rounds of a game of five or six; a player checks the battles they were told of before
with the view files of those reports, and every battle of the game with the audit of its
public record."""

T = TypeVar("T")


def evenly(items: Sequence[T], most: int) -> list[T]:
    """At most `most` (odd) of `items`, evenly spread: the first, the last, and the middle one,
    `items[len(items) // 2]`, which is the middle of the result too (for `pbem stats --view`,
    which tells the first, middle and last entry of the timeline)."""
    count = len(items)
    if count <= most:
        return list(items)
    steps = most - 1
    return [items[(2 * i * (count - 1) + steps) // (2 * steps)] for i in range(most)]


def kept_points(held: Sequence[bool]) -> list[int]:
    """Which entries of a timeline a view file keeps, by whether the reader's side held land
    after each: those in which it did and the others each cut to TIMELINE_POINTS (`evenly`),
    in the order of the game."""
    where = [i for i, h in enumerate(held) if h]
    others = [i for i, h in enumerate(held) if not h]
    return sorted(evenly(where, TIMELINE_POINTS) + evenly(others, TIMELINE_POINTS))


def bounded_timeline(timeline: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The story's timeline as a view file holds it: the resolutions in which the reader's
    side held land and the others (before the draft's first pick, or once the reader's side
    is out under fog) each cut to TIMELINE_POINTS, in the order of the game (`kept_points`)."""
    kept = kept_points([any(t["territories"].values()) for t in timeline])
    return [timeline[i] for i in kept]


def bounded_story(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The story of the game as a view file holds it: its timeline cut (`bounded_timeline`)
    and its trades the latest TRADES_KEPT, with `trades_before`, how many came before them,
    when there were more; everything else as it is."""
    trades = list(stats["trades"])
    out = {**stats, "timeline": bounded_timeline(stats["timeline"])}
    if len(trades) > TRADES_KEPT:
        out["trades"] = trades[-TRADES_KEPT:]
        out["trades_before"] = len(trades) - TRADES_KEPT
    return out


def fog_window(resolution: int) -> int:
    """The first resolution whose battles the view file of `resolution`, at the end of a fog
    game, lists (`dice.game`; 1 when it lists them all)."""
    return max(1, resolution - FOG_RESOLUTIONS + 1)
