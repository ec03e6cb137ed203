"""The map's shapes for the classic board, as they were drawn and looked at in the reports'
screenshots: continents, their names' places, borders, the names at the map's edges and each
territory's name on one or two lines, in every language."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

import pytest

from pbem.core.board import Board, _parse, load_board
from pbem.languages import i18n
from pbem.present import svgmap

SHAPES = {
    "en": "df38b85795c2ffce",
    "id": "0ba9717cf186e678",
    "sv": "43cf9ec4c9cfe4e5",
    "it": "471be107fa011405",
    "nl": "4275bc0f78738c41",
    "gu": "175bbb6d5a4dc927",
}
"""A digest of the classic map's shapes in each language (`shapes` below)."""


def shapes(code: str) -> dict[str, object]:
    board = load_board("classic")
    lang = i18n.language(code, "classic")
    with i18n.speaking(lang):
        continents, lines, edges = svgmap._make_board_shapes(board)
        labels = [svgmap._label_lines(lang.place(t)) for t in board.names]
    return {
        "continents": [asdict(c) for c in continents],
        "lines": [asdict(line) for line in lines],
        "edges": [asdict(e) for e in edges],
        "labels": labels,
    }


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_the_classic_maps_shapes_are_those_looked_at(code: str) -> None:
    data = json.dumps(shapes(code), sort_keys=True, ensure_ascii=False)
    assert hashlib.sha256(data.encode()).hexdigest()[:16] == SHAPES[code]


def test_the_continents_names_go_above_or_below_them_where_they_are_clear() -> None:
    places = {c["name"]: (c["label_x"], c["label_y"]) for c in shapes("en")["continents"]}  # type: ignore[attr-defined]
    assert places == {
        "North America": (195.0, 16),  # above
        "South America": (267.5, 557),  # below: above it is North America
        "Europe": (500.0, 46),
        "Africa": (527.5, 552),
        "Asia": (762.5, 26),
        "Australia": (847.5, 381),
    }


def test_a_long_territory_name_is_split_where_its_two_lines_are_most_alike() -> None:
    assert svgmap._label_lines("Northwest Territory") == ("Northwest", "Territory")
    assert svgmap._label_lines("Western United States") == ("Western", "United States")
    assert svgmap._label_lines("Great Britain") == ("Great Britain",)  # short enough
    assert svgmap._label_lines("Kamtschatkahalvön") == ("Kamtschatkahalvön",)  # one word
    assert svgmap._label_lines("a bb ccccccccccccc") == ("a bb", "ccccccccccccc")


def _board(spots: dict[str, tuple[str, tuple[int, int]]]) -> Board:
    """A board 600 by 300 of these territories (name: continent, position), all neighbours."""
    territories = {
        name: {
            "continent": continent,
            "card": "infantry",
            "neighbours": [other for other in spots if other != name],
            "position": list(position),
        }
        for name, (continent, position) in spots.items()
    }
    continents = {continent: {"bonus": 1} for continent, _ in spots.values()}
    data = {"name": "test", "wild_cards": 0, "width": 600, "height": 300}
    return _parse({**data, "territories": territories, "continents": continents}, "test")


def test_a_continents_name_goes_beside_it_when_above_and_below_are_off_the_map() -> None:
    board = _board(
        {
            "W1": ("West", (40, 20)),
            "W2": ("West", (40, 280)),
            "E1": ("East", (560, 20)),
            "E2": ("East", (560, 280)),
            "M1": ("Middle", (300, 20)),
            "M2": ("Middle", (300, 290)),
        }
    )
    # Left of West is off the map: to its right. East: to its left. The middle: left first.
    assert svgmap._label_place(board, "West", 8) == (40 + 31 + 8 * 3.8, 150.0)
    assert svgmap._label_place(board, "East", 8) == (560 - 31 - 8 * 3.8, 150.0)
    assert svgmap._label_place(board, "Middle", 8) == (300 - 31 - 8 * 3.8, 155.0)


def test_a_continents_name_with_no_clear_side_goes_above_it() -> None:
    board = _board({"A": ("Everywhere", (20, 20)), "B": ("Everywhere", (580, 280))})
    assert svgmap._label_place(board, "Everywhere", 6) == (300.0, 20 - 31 + 2)


def test_the_outline_of_a_continent_keeps_a_corner_one_step_off_the_line() -> None:
    points = [(4, 5), (3, 5), (6, 3), (3, 5), (6, 4)]
    assert svgmap._hull(points) == [(3, 5), (6, 3), (6, 4), (4, 5)]
    assert svgmap._hull([(0, 0), (10, 0), (10, 10), (0, 10), (5, 5)]) == [
        (0, 0),
        (10, 0),
        (10, 10),
        (0, 10),
    ]
