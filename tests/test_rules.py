"""The rules of classic Risk (DESIGN section 5) as pure functions, one test per rule."""

from __future__ import annotations

import itertools

import pytest
from helpers import BOARD, make_state, orders

from pbem.core import rules, validation
from pbem.core.board import WILD
from pbem.core.orders import ALL, MIN
from pbem.core.state import CardRule, FortifyMode, Options, TwoPlayer

CLASSIC = CardRule.ESCALATING

# Cards by the unit they show on the classic board.
INFANTRY = ("Alaska", "Venezuela", "Peru")
CAVALRY = ("Greenland", "Alberta", "Ontario")
ARTILLERY = ("Northwest Territory", "Brazil", "Japan")


# --- starting armies ---------------------------------------------------------------------------


def test_starting_armies_35_30_25_20() -> None:
    assert [rules.starting_armies(n) for n in (3, 4, 5, 6)] == [35, 30, 25, 20]


def test_two_player_default_40_each() -> None:
    assert rules.starting_armies(2) == 40
    assert rules.starting_armies(2, TwoPlayer.NEUTRAL) == 40


def test_two_player_classic_50_each() -> None:
    assert rules.starting_armies(2, TwoPlayer.CLASSIC) == 50


@pytest.mark.parametrize("players", [0, 1, 7])
def test_two_to_six_players(players: int) -> None:
    with pytest.raises(ValueError, match="2 to 6 players"):
        rules.starting_armies(players)


# --- card sets ---------------------------------------------------------------------------------


def test_the_cards_show_the_units_these_tests_assume() -> None:
    assert {BOARD.card_kind(c).value for c in INFANTRY} == {"infantry"}  # type: ignore[union-attr]
    assert {BOARD.card_kind(c).value for c in CAVALRY} == {"cavalry"}  # type: ignore[union-attr]
    assert {BOARD.card_kind(c).value for c in ARTILLERY} == {"artillery"}  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", [INFANTRY, CAVALRY, ARTILLERY])
def test_set_of_three_alike(kind: tuple[str, str, str]) -> None:
    assert rules.is_set(BOARD, kind)


def test_set_one_of_each() -> None:
    for cards in itertools.product(INFANTRY, CAVALRY, ARTILLERY):
        assert rules.is_set(BOARD, cards)


def test_set_two_plus_wild() -> None:
    assert rules.is_set(BOARD, ("Alaska", "Greenland", WILD))
    assert rules.is_set(BOARD, ("Alaska", "Peru", WILD))
    assert rules.is_set(BOARD, (WILD, "Japan", "Brazil"))
    assert rules.is_set(BOARD, (WILD, WILD, "Japan"))


def test_two_alike_and_another_is_not_a_set() -> None:
    assert not rules.is_set(BOARD, ("Alaska", "Peru", "Greenland"))
    assert not rules.is_set(BOARD, ("Japan", "Brazil", "Alberta"))


def test_a_set_is_three_cards() -> None:
    assert not rules.is_set(BOARD, ("Alaska", "Peru"))
    assert not rules.is_set(BOARD, ("Alaska", "Peru", "Venezuela", "Greenland"))
    assert not rules.is_set(BOARD, (WILD, WILD))


def test_set_values_rise_4_6_8_10_12_15_then_by_5() -> None:
    values = [rules.set_value(n) for n in range(10)]
    assert values == [4, 6, 8, 10, 12, 15, 20, 25, 30, 35]


def test_sets_in_a_hand_each_listed_once() -> None:
    hand = ("Alaska", "Peru", "Venezuela", "Greenland")
    assert rules.sets_in(BOARD, hand) == (("Alaska", "Peru", "Venezuela"),)
    assert rules.sets_in(BOARD, ("Alaska", "Greenland")) == ()
    two_wilds = rules.sets_in(BOARD, ("Alaska", WILD, WILD))
    assert two_wilds == (("Alaska", WILD, WILD),)


def test_five_cards_always_hold_a_set() -> None:
    deck = [*INFANTRY[:2], *CAVALRY[:2], *ARTILLERY[:2], WILD]
    for hand in itertools.combinations(deck, 5):
        assert rules.sets_in(BOARD, hand), hand


def test_best_set_prefers_a_territory_you_hold_then_keeps_wilds() -> None:
    hand = ("Alaska", "Peru", "Venezuela", "Greenland", "Japan", WILD)
    assert rules.best_set(BOARD, hand, owned=(), rule=CLASSIC) == ("Alaska", "Peru", "Venezuela")
    assert rules.best_set(BOARD, hand, owned=("Japan",), rule=CLASSIC) == (
        "Alaska",
        "Greenland",
        "Japan",
    )
    assert rules.best_set(BOARD, ("Alaska", "Greenland", WILD), owned=(), rule=CLASSIC) == (
        "Alaska",
        "Greenland",
        WILD,
    )
    assert rules.best_set(BOARD, ("Alaska", "Greenland"), owned=("Alaska",), rule=CLASSIC) is None


def test_best_set_shows_a_territory_you_hold_even_if_it_spends_a_wild() -> None:
    # The only sets showing Japan need the wild; the set that keeps it shows nothing held.
    hand = ("Alaska", "Peru", "Venezuela", "Japan", WILD)
    assert rules.best_set(BOARD, hand, owned=("Japan",), rule=CLASSIC) == ("Alaska", "Japan", WILD)
    state = make_state({"Japan": "alice"}, players=["alice", "bob"], hands={"alice": hand})
    assert rules.sets_to_trade(state, "alice", "best") == (("Alaska", "Japan", WILD),)


def test_remove_cards_counts_each_card_named() -> None:
    assert rules.remove_cards(("Alaska", WILD, WILD), (WILD, "Alaska")) == (WILD,)
    assert rules.remove_cards(("Alaska", WILD), (WILD, WILD)) is None
    assert rules.remove_cards(("Alaska", "Peru", "Japan"), ("Alaska", "Peru", "Japan")) == ()


def test_trade_forced_with_five_cards() -> None:
    four = ("Alaska", "Peru", "Venezuela", "Greenland")
    five = (*four, "Japan")
    owners = {"Ukraine": ("alice", 5)}
    rest = [("Ukraine", "rest")]

    state = make_state(owners, hands={"alice": four})
    assert validation.validate(state, orders(state, place=rest)) == []

    state = make_state(owners, hands={"alice": five})
    assert validation.validate(state, orders(state, place=rest)) == []  # pbem trades for them
    assert rules.forced_trade(state, "alice", ()) == rules.best_set(
        BOARD, five, ["Ukraine"], rule=CLASSIC
    )
    assert rules.forced_trade(state, "alice", "best") is None
    assert validation.validate(state, orders(state, trade="best", place=rest)) == []
    assert (
        validation.validate(
            state, orders(state, trade=[("Alaska", "Peru", "Venezuela")], place=rest)
        )
        == []
    )


def test_card_trade_adds_its_value_to_the_armies_to_place() -> None:
    state = make_state(
        {"Ukraine": ("alice", 5)}, hands={"alice": INFANTRY}, sets_traded=6
    )  # the 7th set is worth 20
    three = rules.reinforcement(state, "alice").total
    good = orders(state, trade="best", place=[("Ukraine", three + 20)])
    assert validation.validate(state, good) == []
    short = orders(state, trade="best", place=[("Ukraine", three + 19)])
    assert [p.message for p in validation.validate(state, short)] == [
        f"{three + 19} armies placed, but your reinforcements are {three + 20}: place 1 more "
        '(armies = "rest" places whatever is left)'
    ]


def test_two_sets_traded_in_one_turn_give_the_next_two_values() -> None:
    # Six cards at the start of a turn: one set must go, and the second may go too.
    state = make_state(
        {"Ukraine": ("alice", 5)}, hands={"alice": INFANTRY + CAVALRY}, sets_traded=4
    )  # the 5th and 6th sets of the game: 12 and 15
    three = rules.reinforcement(state, "alice").total
    both = orders(state, trade=[INFANTRY, CAVALRY], place=[("Ukraine", three + 12 + 15)])
    assert validation.validate(state, both) == []
    short = orders(state, trade=[INFANTRY, CAVALRY], place=[("Ukraine", three + 12 + 14)])
    assert [p.message for p in validation.validate(state, short)] == [
        f"{three + 26} armies placed, but your reinforcements are {three + 27}: place 1 more "
        '(armies = "rest" places whatever is left)'
    ]


# --- reinforcements ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "armies"),
    [(1, 3), (8, 3), (11, 3), (12, 4), (14, 4), (15, 5), (20, 6), (21, 7), (36, 12)],
)
def test_reinforcements_territories_div_3_min_3(count: int, armies: int) -> None:
    # Alice takes territories in an order that completes no continent before 41.
    order = [t for c in reversed(BOARD.continents.values()) for t in c.territories[1:]]
    order += [c.territories[0] for c in BOARD.continents.values()]
    state = make_state(dict.fromkeys(order[:count], "alice"))
    got = rules.reinforcement(state, "alice")
    assert got.continents == ()
    assert (got.territories, got.from_territories, got.total) == (count, armies, armies)


@pytest.mark.parametrize(
    ("continent", "bonus"),
    [
        ("North America", 5),
        ("South America", 2),
        ("Europe", 5),
        ("Africa", 3),
        ("Asia", 7),
        ("Australia", 2),
    ],
)
def test_continent_bonus(continent: str, bonus: int) -> None:
    held = BOARD.continents[continent].territories
    state = make_state(dict.fromkeys(held, "alice"))
    got = rules.reinforcement(state, "alice")
    assert got.continents == (continent,)
    assert got.from_continents == bonus
    assert got.total == max(3, len(held) // 3) + bonus


def test_continent_bonuses_add_up() -> None:
    held = BOARD.continents["South America"].territories + BOARD.continents["Australia"].territories
    state = make_state(dict.fromkeys(held, "alice"))
    got = rules.reinforcement(state, "alice")
    assert got.continents == ("South America", "Australia")
    assert got.total == 3 + 2 + 2


def test_continent_bonus_needs_every_territory() -> None:
    held = BOARD.continents["Australia"].territories[:-1]
    state = make_state(dict.fromkeys(held, "alice"))
    assert rules.reinforcement(state, "alice").from_continents == 0


# --- battle ------------------------------------------------------------------------------------


def test_attack_needs_two_armies() -> None:
    assert rules.attack_dice(1) == 0
    assert rules.attack_dice(0) == 0


def test_attacker_keeps_one_more_army_than_dice() -> None:
    assert [rules.attack_dice(a) for a in range(1, 8)] == [0, 1, 2, 3, 3, 3, 3]


def test_attacker_may_roll_fewer_dice_than_allowed() -> None:
    assert rules.attack_dice(10, wanted=1) == 1
    assert rules.attack_dice(10, wanted=2) == 2
    assert rules.attack_dice(3, wanted=3) == 2


def test_fewer_dice_than_asked_are_told_and_as_many_as_asked_are_not() -> None:
    assert rules.attack_dice_note(3, 3) == (
        "2 dice, not the 3 asked: with 3 armies there, one must stay behind"
    )
    assert rules.attack_dice_note(2, 2) == (
        "1 die, not the 2 asked: with 2 armies there, one must stay behind"
    )
    assert [rules.attack_dice_note(a, d) for a, d in [(4, 3), (3, 2), (2, 1), (9, 1)]] == [None] * 4
    assert rules.attack_dice_note(2, None) is None  # no dice asked: as many as allowed


def test_defender_rolls_two_with_two_armies() -> None:
    assert [rules.defence_dice(a) for a in range(1, 6)] == [1, 2, 2, 2, 2]


def test_ties_go_to_defender() -> None:
    assert rules.battle((4,), (4,)) == (1, 0)
    assert rules.battle((6, 6, 1), (6, 6)) == (2, 0)
    assert rules.battle((5, 3), (5, 2)) == (1, 1)


def test_highest_against_highest_then_second_against_second() -> None:
    assert rules.battle((1, 6, 2), (5, 1)) == (0, 2)  # 6 > 5, 2 > 1
    assert rules.battle((6, 1, 1), (5, 5)) == (1, 1)  # 6 > 5, 1 < 5
    assert rules.battle((2, 3), (4, 1)) == (1, 1)  # 3 < 4, 2 > 1
    assert rules.battle((6, 6, 6), (1,)) == (0, 1)  # one pair only
    assert rules.battle((1,), (6, 6)) == (1, 0)


def test_battle_matches_the_rule_for_every_throw() -> None:
    for a in itertools.chain.from_iterable(
        itertools.product(range(1, 7), repeat=n) for n in (1, 2, 3)
    ):
        for d in itertools.chain.from_iterable(
            itertools.product(range(1, 7), repeat=n) for n in (1, 2)
        ):
            pairs = list(zip(sorted(a)[::-1], sorted(d)[::-1], strict=False))
            expected = (sum(x <= y for x, y in pairs), sum(x > y for x, y in pairs))
            assert rules.battle(a, d) == expected


# --- moving in after a conquest ----------------------------------------------------------------


def test_move_all_leaves_one_behind() -> None:
    assert rules.move_in(10, 3, ALL) == (9, None)
    assert rules.move_in(2, 1, ALL) == (1, None)


def test_move_min_is_the_dice_of_the_last_roll() -> None:
    assert rules.move_in(10, 3, MIN) == (3, None)
    assert rules.move_in(10, 1, MIN) == (1, None)


def test_move_min_never_leaves_the_source_empty() -> None:
    assert rules.move_in(3, 3, MIN) == (2, None)  # one army stays behind
    assert rules.move_in(2, 2, MIN) == (1, None)


def test_move_in_after_one_die_last_roll() -> None:
    assert rules.move_in(6, 1, 1) == (1, None)
    assert rules.move_in(6, 1, MIN) == (1, None)


def test_move_all_min_number_raised_and_cut_with_note() -> None:
    assert rules.move_in(10, 3, 5) == (5, None)
    assert rules.move_in(10, 3, 1) == (
        3,
        "asked to move 1, raised to 3: the dice of the last roll",
    )
    assert rules.move_in(10, 3, 12) == (9, "asked to move 12, cut to 9: one army stays behind")


# --- fortifying --------------------------------------------------------------------------------


def test_fortify_leaves_one_behind() -> None:
    state = make_state({"Ukraine": ("alice", 1), "Ural": ("alice", 4)})
    assert rules.can_fortify(state, "alice", "Ural", "Ukraine") is None
    assert (
        rules.can_fortify(state, "alice", "Ukraine", "Ural")
        == "Ukraine has only 1 army: one must stay behind"
    )


def test_fortify_between_adjacent_territories_by_default() -> None:
    state = make_state({"Ukraine": ("alice", 4), "Ural": ("alice", 1), "Siberia": "alice"})
    assert rules.can_fortify(state, "alice", "Ukraine", "Ural") is None
    assert (
        rules.can_fortify(state, "alice", "Ukraine", "Siberia")
        == "Ukraine and Siberia are not adjacent"
    )


def test_fortify_connected_option_through_own_chain() -> None:
    owners = {"Ukraine": ("alice", 4), "Ural": "alice", "Siberia": "alice", "Yakutsk": "alice"}
    state = make_state(owners, options=Options(fortify=FortifyMode.CONNECTED))
    assert rules.connected(state, "alice", "Ukraine", "Yakutsk")
    assert rules.can_fortify(state, "alice", "Ukraine", "Yakutsk") is None
    cut = make_state({**owners, "Siberia": "bob"}, options=Options(fortify=FortifyMode.CONNECTED))
    assert not rules.connected(cut, "alice", "Ukraine", "Yakutsk")
    assert (
        rules.can_fortify(cut, "alice", "Ukraine", "Yakutsk")
        == "no chain of your territories leads from Ukraine to Yakutsk"
    )


def test_fortify_between_two_of_your_own_territories() -> None:
    state = make_state({"Ukraine": ("alice", 4)})
    assert rules.can_fortify(state, "alice", "Ukraine", "Ural") == "you do not hold Ural"
    assert (
        rules.can_fortify(state, "alice", "Ukraine", "Ukraine")
        == "fortify needs two different territories"
    )


# --- turn order --------------------------------------------------------------------------------


def test_play_goes_round_the_seats_skipping_eliminated_players() -> None:
    state = make_state(
        {"Ukraine": "alice", "Ural": "bob", "China": "dave"},
        default="carol",
        players=("alice", "bob", "carol", "dave"),
        dead=("bob",),
    )
    assert rules.next_seat(state, 0) == 2
    assert rules.next_seat(state, 2) == 3
    assert rules.next_seat(state, 3) == 0
