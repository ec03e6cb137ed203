"""The charts of a game's story: territories and armies of each player over time as SVG
polylines (macros.html.j2, `game_story`), a point of each at most twice a pixel however long the
game (`pbem.present.stats` keeps the numbers they are drawn from)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from pbem.languages.i18n import _

CHART_WIDTH = 600
CHART_HEIGHT = 150


def charts(stats: Mapping[str, Any], colours: Mapping[str, str]) -> list[dict[str, Any]]:
    """Territories and armies of each player over time as polylines for the SVG charts."""
    timeline = stats["timeline"]
    if len(timeline) < 2:
        return []
    turns = [t["turn"] for t in timeline]
    return [
        line_chart(
            title, turns, {p: [t[key][p] for t in timeline] for p in stats["players"]}, colours
        )
        for key, title in zip(("territories", "armies"), chart_titles(), strict=True)
    ]


def chart_titles() -> tuple[str, str]:
    return _("Territories"), _("Armies")


def line_chart(
    title: str,
    turns: Sequence[int],
    series: Mapping[str, Sequence[float]],
    colours: Mapping[str, str],
) -> dict[str, Any]:
    """One SVG chart (macros.html.j2, `game_story`): a polyline a player, over `turns`, from
    the lowest value (0 unless one is below) to the highest."""
    step = CHART_WIDTH / (len(turns) - 1)
    top = max((max(values, default=0) for values in series.values()), default=0) or 1
    bottom = min(0, *(min(values, default=0) for values in series.values()))
    span = (top - bottom) or 1
    lines = [
        {
            "player": p,
            "colour": colours.get(p, "#888888"),
            "points": " ".join(
                f"{i * step:.1f},{CHART_HEIGHT - (v - bottom) * CHART_HEIGHT / span:.1f}"
                for i, v in _drawn(values, step)
            ),
        }
        for p, values in series.items()
    ]
    return {
        "title": title,
        "top": top,
        "bottom": bottom,
        "zero": round(CHART_HEIGHT + bottom * CHART_HEIGHT / span, 1),
        "note": "",
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "lines": lines,
        "first_turn": turns[0],
        "last_turn": turns[-1],
    }


def _drawn(values: Sequence[float], step: float) -> list[tuple[int, float]]:
    """The points of a polyline worth drawing: every one while two points are at least half a
    pixel apart; in a longer game (more than two points a pixel), in each pixel's column the
    lowest and the highest (in their order) and the first and last points of all, which draws
    the same line as every point would, at a cost that does not grow with the game."""
    if step >= 0.5:
        return list(enumerate(values))
    n = len(values)
    out: list[tuple[int, float]] = [(0, values[0])]
    start = 0
    while start < n:
        column = int(start * step)
        end = min(n, math.ceil((column + 1) / step))
        while end < n and int(end * step) == column:  # (the float's edge, either way)
            end += 1
        while int((end - 1) * step) > column:
            end -= 1
        part = values[start:end]
        low, high = start + part.index(min(part)), start + part.index(max(part))
        for i in sorted({low, high}):
            if i > out[-1][0]:
                out.append((i, values[i]))
        start = end
    if out[-1][0] != n - 1:
        out.append((n - 1, values[-1]))
    return out
