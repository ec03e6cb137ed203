"""Facts of the classic board, and the loader's checks on inconsistent boards."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import pytest

from pbem.core.board import (
    WILD,
    Board,
    CardKind,
    Continent,
    Territory,
    board_names,
    load_board,
    validate_board,
)
from pbem.errors import BoardError, UnknownTerritory

CANONICAL_NAMES = (
    "Alaska",
    "Northwest Territory",
    "Greenland",
    "Alberta",
    "Ontario",
    "Quebec",
    "Western United States",
    "Eastern United States",
    "Central America",
    "Venezuela",
    "Peru",
    "Brazil",
    "Argentina",
    "Iceland",
    "Scandinavia",
    "Ukraine",
    "Great Britain",
    "Northern Europe",
    "Western Europe",
    "Southern Europe",
    "North Africa",
    "Egypt",
    "East Africa",
    "Congo",
    "South Africa",
    "Madagascar",
    "Siberia",
    "Ural",
    "China",
    "Afghanistan",
    "Middle East",
    "India",
    "Siam",
    "Yakutsk",
    "Irkutsk",
    "Mongolia",
    "Japan",
    "Kamchatka",
    "Indonesia",
    "New Guinea",
    "Western Australia",
    "Eastern Australia",
)


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("classic")


def with_territory(board: Board, name: str, **changes: object) -> Board:
    """A copy of `board` with territory `name` altered."""
    territories = dict(board.territories)
    territories[name] = dataclasses.replace(territories[name], **changes)  # type: ignore[arg-type]
    return dataclasses.replace(board, territories=territories)


def test_classic_is_the_default_and_a_known_board() -> None:
    assert "classic" in board_names()
    assert load_board() is load_board("classic")


def test_42_territories_with_the_canonical_names_in_order(board: Board) -> None:
    assert board.names == CANONICAL_NAMES
    assert len(board.territories) == 42


def test_83_borders(board: Board) -> None:
    borders = board.borders()
    assert len(borders) == 83
    assert len({frozenset(b) for b in borders}) == 83


def test_borders_are_in_board_order_and_listed_once(board: Board) -> None:
    order = {name: i for i, name in enumerate(board.names)}
    keys = [(order[a], order[b]) for a, b in board.borders()]
    assert all(i < j for i, j in keys)
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Alaska", "Kamchatka"),
        ("Greenland", "Iceland"),
        ("Brazil", "North Africa"),
        ("Southern Europe", "Egypt"),
        ("Siam", "Indonesia"),
        ("Central America", "Venezuela"),
        ("Middle East", "Ukraine"),
        ("East Africa", "Middle East"),
        ("Egypt", "Middle East"),
        ("Southern Europe", "Middle East"),
        ("Western Europe", "North Africa"),
        ("Kamchatka", "Japan"),
        ("Mongolia", "Japan"),
        ("Ural", "China"),
        ("Ukraine", "Afghanistan"),
        ("Irkutsk", "Kamchatka"),
        ("Greenland", "Northwest Territory"),
        ("Greenland", "Ontario"),
        ("Greenland", "Quebec"),
        ("New Guinea", "Western Australia"),
    ],
)
def test_famous_borders_exist_both_ways(board: Board, a: str, b: str) -> None:
    assert board.adjacent(a, b)
    assert board.adjacent(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Brazil", "Congo"),
        ("Iceland", "Northern Europe"),
        ("Japan", "China"),
        ("Greenland", "Alberta"),
        ("Alaska", "Yakutsk"),
        ("Egypt", "Ukraine"),
        ("Western Europe", "Egypt"),
        ("Indonesia", "India"),
        ("Eastern Australia", "Indonesia"),
        ("Madagascar", "Congo"),
        ("Siberia", "Kamchatka"),
        ("Alberta", "Eastern United States"),
        ("Quebec", "Northwest Territory"),
    ],
)
def test_famous_non_borders_do_not_exist(board: Board, a: str, b: str) -> None:
    assert not board.adjacent(a, b)
    assert not board.adjacent(b, a)


def test_brazils_only_african_neighbour_is_north_africa(board: Board) -> None:
    assert "West Africa" not in board.territories
    african = [n for n in board.neighbours("Brazil") if board.territories[n].continent == "Africa"]
    assert african == ["North Africa"]


def test_wrap_around_border_is_alaska_kamchatka(board: Board) -> None:
    assert board.wraps == frozenset({frozenset({"Alaska", "Kamchatka"})})


def test_neighbours_are_symmetric_and_never_self(board: Board) -> None:
    for name in board.names:
        assert name not in board.neighbours(name)
        for other in board.neighbours(name):
            assert name in board.neighbours(other)


@pytest.mark.parametrize(
    ("continent", "size", "bonus"),
    [
        ("North America", 9, 5),
        ("South America", 4, 2),
        ("Europe", 7, 5),
        ("Africa", 6, 3),
        ("Asia", 12, 7),
        ("Australia", 4, 2),
    ],
)
def test_continent_sizes_and_bonuses(board: Board, continent: str, size: int, bonus: int) -> None:
    c = board.continents[continent]
    assert len(c.territories) == size
    assert c.bonus == bonus
    assert all(board.territories[t].continent == continent for t in c.territories)


def test_six_continents_cover_every_territory_once(board: Board) -> None:
    assert len(board.continents) == 6
    members = [t for c in board.continents.values() for t in c.territories]
    assert sorted(members) == sorted(board.names)


def test_14_cards_of_each_kind_plus_2_wild(board: Board) -> None:
    cards = board.cards()
    assert len(cards) == 44
    assert cards[:42] == board.names
    assert cards[42:] == (WILD, WILD)
    kinds = [board.card_kind(c) for c in cards]
    for kind in CardKind:
        assert kinds.count(kind) == 14
    assert kinds.count(None) == 2


def test_card_kind_of_an_unknown_card_raises(board: Board) -> None:
    with pytest.raises(UnknownTerritory):
        board.card_kind("Atlantis")


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("northwest territory", "Northwest Territory"),
        ("North-West Territory", "Northwest Territory"),
        ("NORTHWESTTERRITORY", "Northwest Territory"),
        ("N.W. Territory", "Northwest Territory"),
        ("  alaska ", "Alaska"),
        ("eastern canada", "Quebec"),
        ("yakutia", "Yakutsk"),
        ("Western U.S.", "Western United States"),
        ("western-us", "Western United States"),
        ("E. Australia", "Eastern Australia"),
        ("east australia", "Eastern Australia"),
        ("England", "Great Britain"),
        ("great britain", "Great Britain"),
        ("Thailand", "Siam"),
        ("Central Africa", "Congo"),
        ("Mid-East", "Middle East"),
        ("Urals", "Ural"),
        ("Kamchatka Peninsula", "Kamchatka"),
        ("middle east", "Middle East"),
    ],
)
def test_lookup_ignores_case_spaces_hyphens_dots(
    board: Board, written: str, canonical: str
) -> None:
    assert board.lookup(written) == canonical


def test_lookup_of_every_canonical_name_and_alias(board: Board) -> None:
    for territory in board.territories.values():
        assert board.lookup(territory.name) == territory.name
        for alias in territory.aliases:
            assert board.lookup(alias) == territory.name


def test_unknown_name_suggests_the_nearest(board: Board) -> None:
    with pytest.raises(UnknownTerritory) as info:
        board.lookup("Ukrane")
    assert info.value.text == "Ukrane"
    assert info.value.suggestion == "Ukraine"
    assert "Ukraine" in str(info.value)


def test_misspelt_alias_suggests_its_canonical_name(board: Board) -> None:
    with pytest.raises(UnknownTerritory) as info:
        board.lookup("Yakutya")
    assert info.value.suggestion == "Yakutsk"


def test_nonsense_name_suggests_nothing(board: Board) -> None:
    with pytest.raises(UnknownTerritory) as info:
        board.lookup("Zzqxv")
    assert info.value.suggestion is None


def test_unknown_names_raise_in_adjacent_and_neighbours(board: Board) -> None:
    with pytest.raises(UnknownTerritory):
        board.adjacent("Alaska", "Atlantis")
    with pytest.raises(UnknownTerritory):
        board.neighbours("alaska")


def test_unknown_board_name_lists_the_known_ones() -> None:
    with pytest.raises(BoardError, match="classic"):
        load_board("no-such-board")


def test_the_classic_board_validates(board: Board) -> None:
    validate_board(board)


def test_board_is_read_only(board: Board) -> None:
    with pytest.raises(TypeError):
        board.territories["Atlantis"] = board.territories["Alaska"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        board.wild_cards = 3  # type: ignore[misc]


def test_validate_rejects_a_one_way_border(board: Board) -> None:
    broken = with_territory(board, "Brazil", neighbours=("Venezuela", "Peru", "Argentina"))
    with pytest.raises(BoardError, match="North Africa"):
        validate_board(broken)


def test_validate_rejects_a_border_to_an_unknown_territory(board: Board) -> None:
    broken = with_territory(board, "Peru", neighbours=("Venezuela", "Brazil", "Argentina", "Chile"))
    with pytest.raises(BoardError, match="Peru.*Chile"):
        validate_board(broken)


def test_validate_rejects_a_self_border(board: Board) -> None:
    broken = with_territory(board, "Japan", neighbours=(*board.neighbours("Japan"), "Japan"))
    with pytest.raises(BoardError, match="Japan"):
        validate_board(broken)


def test_validate_rejects_a_disconnected_territory(board: Board) -> None:
    territories = dict(board.territories)
    for name in board.neighbours("Madagascar"):
        others = tuple(n for n in territories[name].neighbours if n != "Madagascar")
        territories[name] = dataclasses.replace(territories[name], neighbours=others)
    territories["Madagascar"] = dataclasses.replace(territories["Madagascar"], neighbours=())
    broken = dataclasses.replace(board, territories=territories)
    with pytest.raises(BoardError, match="Madagascar"):
        validate_board(broken)


def test_validate_rejects_a_territory_in_no_continent(board: Board) -> None:
    continents = dict(board.continents)
    africa = continents["Africa"]
    continents["Africa"] = dataclasses.replace(
        africa, territories=tuple(t for t in africa.territories if t != "Egypt")
    )
    broken = dataclasses.replace(board, continents=continents)
    with pytest.raises(BoardError, match="Egypt"):
        validate_board(broken)


def test_validate_rejects_a_continent_listing_an_unknown_territory(board: Board) -> None:
    continents = dict(board.continents)
    continents["Europe"] = Continent("Europe", 5, (*continents["Europe"].territories, "Atlantis"))
    with pytest.raises(BoardError, match="Atlantis"):
        validate_board(dataclasses.replace(board, continents=continents))


def test_validate_rejects_a_territory_in_two_continents(board: Board) -> None:
    continents = dict(board.continents)
    continents["Asia"] = Continent("Asia", 7, (*continents["Asia"].territories, "Egypt"))
    with pytest.raises(BoardError, match="Egypt"):
        validate_board(dataclasses.replace(board, continents=continents))


def test_validate_rejects_a_territory_without_card_kind(board: Board) -> None:
    broken = with_territory(board, "Siam", card="elephant")
    with pytest.raises(BoardError, match="Siam"):
        validate_board(broken)


def test_validate_rejects_an_alias_clashing_with_a_canonical_name(board: Board) -> None:
    broken = with_territory(board, "Egypt", aliases=("Middle-East",))
    with pytest.raises(BoardError, match="Egypt"):
        validate_board(broken)


def test_validate_rejects_aliases_clashing_with_each_other(board: Board) -> None:
    broken = with_territory(board, "Quebec", aliases=("Eastern Canada", "eastern-canada"))
    with pytest.raises(BoardError, match="Quebec"):
        validate_board(broken)


def test_positions_are_distinct_and_within_the_canvas(board: Board) -> None:
    assert (board.width, board.height) == (1000, 620)
    positions = [t.position for t in board.territories.values()]
    assert len(set(positions)) == 42
    for x, y in positions:
        assert 0 <= x <= board.width
        assert 0 <= y <= board.height


def test_positions_are_far_enough_apart_for_labels(board: Board) -> None:
    for a, b in itertools.combinations(board.territories.values(), 2):
        assert math.dist(a.position, b.position) >= 45, (a.name, b.name)


def test_positions_read_like_the_printed_map(board: Board) -> None:
    def centre(continent: str) -> tuple[float, float]:
        names = board.continents[continent].territories
        xs = [board.territories[n].position[0] for n in names]
        ys = [board.territories[n].position[1] for n in names]
        return sum(xs) / len(xs), sum(ys) / len(ys)

    na, sa, eu = centre("North America"), centre("South America"), centre("Europe")
    af, asia, au = centre("Africa"), centre("Asia"), centre("Australia")
    assert sa[1] > na[1]  # South America below North America
    assert af[1] > eu[1]  # Africa below Europe
    assert na[0] < eu[0] < asia[0]  # west to east
    assert au[0] > af[0] and au[1] > asia[1]  # Australia bottom right


def test_to_json_has_the_design_shape_and_agrees_with_the_board(board: Board) -> None:
    data = board.to_json()
    assert json.loads(json.dumps(data)) == data
    assert set(data) == {"name", "continents", "territories", "wild_cards"}
    assert data["name"] == "classic"
    assert data["wild_cards"] == 2
    continents = data["continents"]
    territories = data["territories"]
    assert isinstance(continents, dict) and isinstance(territories, dict)
    assert continents["Asia"] == {
        "bonus": 7,
        "territories": list(board.continents["Asia"].territories),
    }
    assert list(continents) == list(board.continents)
    assert list(territories) == list(board.names)
    for name, entry in territories.items():
        t: Territory = board.territories[name]
        assert entry == {
            "continent": t.continent,
            "neighbours": list(t.neighbours),
            "card": t.card.value,
            "aliases": list(t.aliases),
            "position": list(t.position),
        }
    assert territories["Alaska"]["card"] in {"infantry", "cavalry", "artillery"}
