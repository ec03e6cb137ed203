"""The charts of a game's story (territories and armies over the turns) draw the same line
however long the game, with a number of points that does not grow past two a pixel."""

from __future__ import annotations

import random

from pbem.present.charts import CHART_WIDTH, line_chart


def points(chart: dict[str, object], player: str) -> list[tuple[float, float]]:
    (line,) = [x for x in chart["lines"] if x["player"] == player]  # type: ignore[attr-defined]
    return [tuple(map(float, p.split(","))) for p in line["points"].split()]  # type: ignore[misc]


def test_a_game_of_up_to_two_points_a_pixel_draws_every_point() -> None:
    turns = list(range(2 * CHART_WIDTH + 1))
    values = [random.Random(1).randint(0, 40) for _ in turns]
    assert len(points(line_chart("T", turns, {"ann": values}, {}), "ann")) == len(turns)


def test_a_longer_game_keeps_each_pixels_lowest_and_highest_and_its_ends() -> None:
    rng = random.Random(2)
    turns = list(range(5000))
    values = [rng.randint(0, 400) for _ in turns]
    values[2345] = 1000  # a peak of one turn stays on the chart
    drawn = points(line_chart("T", turns, {"ann": values}, {}), "ann")
    assert len(drawn) <= 2 * CHART_WIDTH + 2
    step = CHART_WIDTH / (len(turns) - 1)
    assert drawn[0] == (0.0, round(150 - values[0] * 150 / 1000, 1))
    assert drawn[-1][0] == round((len(turns) - 1) * step, 1)
    assert min(y for _x, y in drawn) == 0.0  # the peak (the top of the chart)
    assert [x for x, _y in drawn] == sorted(x for x, _y in drawn)  # left to right
    every = points(line_chart("T", turns[:1000], {"ann": values[:1000]}, {}), "ann")
    assert len(every) == 1000  # (below two points a pixel, nothing is left out)
