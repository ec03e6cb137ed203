"""The autopilot's orders, missed turns and dropped players, in the engine (no files)."""

from __future__ import annotations

from dataclasses import replace

from helpers import BOARD, SECRET, make_state, only, orders, play, randomness

from pbem.core import rules, validation
from pbem.core.autopilot import autopilot_orders, autopilot_text, borders, front, spread
from pbem.core.engine import resolve
from pbem.core.events import Conquered, Dropped, MissedTurn, Placed, Rolled, Traded, Won
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Attack
from pbem.core.state import (
    NEUTRAL,
    AutopilotRule,
    Options,
    Phase,
    TradedCards,
    state_from_dict,
    state_to_dict,
)

WEST = {"Alaska": ("alice", 3), "Northwest Territory": ("alice", 1), "Alberta": ("alice", 2)}


def test_the_autopilot_places_beside_the_largest_enemy_stack() -> None:
    state = make_state(
        {**WEST, "Kamchatka": ("bob", 9), "Ontario": ("carol", 5), "Greenland": ("bob", 2)},
        default=("carol", 1),
    )
    assert front(state, "alice") == ("Alaska",)
    got = autopilot_orders(state, "alice", SECRET)
    assert [(p.territory, p.armies) for p in got.place] == [("Alaska", 3)]
    assert got.attack == () and got.fortify is None and got.trade == ()
    assert validation.validate(state, got) == []


def test_the_autopilot_spreads_one_army_at_a_time_on_the_weakest_next_to_it() -> None:
    state = make_state(
        {**WEST, "Ontario": ("bob", 8)},
        default=("carol", 1),
    )
    # Ontario borders Northwest Territory (1) and Alberta (2): 3 armies go 2 and 1.
    assert front(state, "alice") == ("Northwest Territory", "Alberta")
    placed = spread(state, front(state, "alice"), 3)
    assert [(p.territory, p.armies) for p in placed] == [
        ("Northwest Territory", 2),
        ("Alberta", 1),
    ]


def test_equal_stacks_are_broken_by_board_order() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 4), "Ontario": ("bob", 4)})
    # Ontario comes before Kamchatka on the board (North America is listed first).
    assert front(state, "alice") == ("Northwest Territory", "Alberta")


def test_the_neutral_counts_only_when_no_player_borders() -> None:
    state = make_state(
        {**WEST, "Kamchatka": (NEUTRAL, 9), "Ontario": ("bob", 2)},
        default=(NEUTRAL, 1),
        players=["alice", "bob"],
    )
    assert front(state, "alice") == ("Northwest Territory", "Alberta")


def test_the_autopilot_trades_when_five_cards_force_it() -> None:
    hand = ("Peru", "Brazil", "Iceland", "Egypt", "Siam")
    state = make_state({**WEST, "Kamchatka": ("bob", 9)}, hands={"alice": hand})
    got = autopilot_orders(state, "alice", SECRET)
    assert got.trade == "best"
    assert validation.validate(state, got) == []
    total = rules.reinforcement(state, "alice").total + rules.set_value(0)
    assert sum(int(p.armies) for p in got.place) == total
    _, events = play(state, got, check=False)
    assert only(events, Traded)


def test_the_autopilot_in_the_setup_turn_places_the_rest() -> None:
    state = make_state(
        {**WEST, "Kamchatka": ("bob", 2)},
        phase=Phase.SETUP,
        turn=0,
        to_place={"alice": 7, "bob": 5},
    )
    got = autopilot_orders(state, "alice", SECRET)
    assert sum(int(p.armies) for p in got.place) == 7
    assert validation.validate(state, got) == []


DEALT = {t: ("alice", 1) for t in ("Alaska", "Northwest Territory", "Alberta", "Ontario",
                                   "Western United States")}  # fmt: skip
"""A dealt setup's corner: Alberta inside (every neighbour alice's), the four others borders."""


def test_in_a_dealt_setup_the_autopilot_spreads_over_every_border_fewest_first() -> None:
    state = make_state(DEALT, default=("bob", 1), phase=Phase.SETUP, turn=0,
                       to_place={"alice": 7, "bob": 7})  # fmt: skip
    assert state.options.autopilot is AutopilotRule.BORDERS  # a new game's rule
    got = {p.territory: int(p.armies) for p in autopilot_orders(state, "alice", SECRET).place}
    edge = [t for t in BOARD.names if t in DEALT and t != "Alberta"]
    assert borders(state, "alice") == tuple(edge)
    # one each, then the other three one more each in board order (all at 2 then)
    assert got == {edge[0]: 2, edge[1]: 2, edge[2]: 2, edge[3]: 1}
    assert "Alberta" not in got
    assert validation.validate(state, autopilot_orders(state, "alice", SECRET)) == []


def test_an_older_games_setup_autopilot_still_stacks_next_to_the_first_enemy() -> None:
    """Games made before format 7 record `autopilot = "front"`: their setup turns replay as
    they were played."""
    state = make_state(DEALT, default=("bob", 1), phase=Phase.SETUP, turn=0,
                       to_place={"alice": 7, "bob": 7},
                       options=Options(autopilot=AutopilotRule.FRONT))  # fmt: skip
    got = autopilot_orders(state, "alice", SECRET).place
    assert got == spread(state, front(state, "alice"), 7)
    assert len(front(state, "alice")) < len(borders(state, "alice"))  # the rules differ here


def test_a_turns_autopilot_is_the_same_under_both_rules() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)})
    older = replace(state, options=replace(state.options, autopilot=AutopilotRule.FRONT))
    assert autopilot_orders(state, "alice", SECRET) == autopilot_orders(older, "alice", SECRET)


def test_a_setup_holding_no_border_spreads_over_all_it_holds() -> None:
    state = make_state({}, default=("alice", 1), players=["alice", "bob"], phase=Phase.SETUP,
                       turn=0, to_place={"alice": 3, "bob": 0})  # fmt: skip
    assert borders(state, "alice") == state.owned("alice")


def test_the_autopilot_file_is_text_that_parses_to_its_orders() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)})
    text = autopilot_text(state, "alice", SECRET)
    assert text.startswith("# Written by the autopilot")
    assert parse_orders(text, BOARD) == autopilot_orders(state, "alice", SECRET)


def _missed_turn(state, player="alice"):  # type: ignore[no-untyped-def]
    return resolve(state, [autopilot_orders(state, player, SECRET)], randomness(), {player})


def test_a_missed_turn_is_counted_and_told() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)})
    after, events = _missed_turn(state)
    assert only(events, MissedTurn) == [MissedTurn("alice", 1, 1)]
    assert {p.why for p in only(events, Placed)} == {"autopilot"}
    assert not only(events, Rolled)
    assert after.player("alice").missed == 1


def test_valid_orders_reset_the_count() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)})
    missed = replace(state, players=tuple(replace(p, missed=2) for p in state.players))
    after, _ = play(missed, orders(missed, place=[("Alaska", 3)]))
    assert after.player("alice").missed == 0


def test_a_player_who_misses_drop_after_turns_leaves_as_neutral_armies() -> None:
    hand = ("Peru", "Brazil")
    state = make_state(
        {**WEST, "Kamchatka": ("bob", 9)},
        default=("carol", 1),
        players=["alice", "bob", "carol"],
        hands={"alice": hand},
    )
    state = replace(state, players=tuple(replace(p, missed=2) for p in state.players))
    after, events = _missed_turn(state)
    dropped = only(events, Dropped)
    assert dropped == [Dropped("alice", 3, 3, 6 + 3, 2)]
    assert after.owned("alice") == ()
    assert all(after.owner(t) == NEUTRAL for t in WEST)
    assert after.player("alice").dropped and not after.player("alice").alive
    assert after.player("alice").hand == ()
    assert set(hand) <= set(after.discards)  # where traded cards go, by default
    assert after.current_player.name == "bob"


def test_a_dropped_players_cards_go_back_into_the_deck_under_that_rule() -> None:
    hand = ("Peru", "Brazil")
    state = make_state(
        {**WEST, "Kamchatka": ("bob", 9)},
        default=("carol", 1),
        players=["alice", "bob", "carol"],
        hands={"alice": hand},
        options=Options(traded_cards=TradedCards.DECK),
    )
    state = replace(state, players=tuple(replace(p, missed=2) for p in state.players))
    after, _ = _missed_turn(state)
    assert set(hand) <= set(after.deck) and not after.discards
    assert list(after.deck) == [c for c in BOARD.cards() if c in after.deck]


def test_drop_after_zero_never_drops() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)}, options=Options(drop_after=0))
    state = replace(state, players=tuple(replace(p, missed=9) for p in state.players))
    after, events = _missed_turn(state)
    assert not only(events, Dropped)
    assert after.player("alice").missed == 10


def test_the_last_player_left_wins_when_the_other_is_dropped() -> None:
    state = make_state({**WEST, "Kamchatka": ("bob", 9)}, options=Options(drop_after=1))
    after, events = _missed_turn(state)
    assert only(events, Won) == [Won("bob")]
    assert after.phase is Phase.OVER and after.winner == "bob"


def test_a_dropped_players_territory_can_be_conquered_and_eliminates_no_one() -> None:
    state = make_state(
        {"Alaska": (NEUTRAL, 1), "Kamchatka": ("bob", 30)},
        default=("carol", 1),
        players=["bob", "carol", "alice"],
        dead=["alice"],
    )
    state = replace(
        state,
        players=tuple(replace(p, dropped=p.name == "alice") for p in state.players),
    )
    after, events = play(
        state,
        orders(
            state,
            place=[("Kamchatka", rules.reinforcement(state, "bob").total)],
            attack=[Attack("Kamchatka", "Alaska")],
        ),
    )
    assert only(events, Conquered)[0].loser == NEUTRAL
    assert after.owner("Alaska") == "bob"
    assert after.phase is Phase.PLAY


def test_a_state_without_missed_turns_serialises_as_before() -> None:
    state = make_state({**WEST})
    data = state_to_dict(state)
    assert set(data["players"][0]) == {"name", "seat", "alive", "hand", "to_place"}
    assert "drop_after" not in data["options"]
    marked = replace(
        state,
        options=Options(drop_after=2),
        players=tuple(replace(p, missed=1, dropped=True) for p in state.players),
    )
    again = state_from_dict(state_to_dict(marked), BOARD)
    assert again.player("alice").missed == 1 and again.player("alice").dropped
    assert again.options.drop_after == 2


def test_selfplay_with_silent_players_keeps_the_rules() -> None:
    """Bot games in which any awaited player may stay silent: the autopilot's orders are always
    valid, counts and drops follow the rule, no card or territory is lost, and games end."""
    import random

    from bots import orders_for

    from pbem.core import dice
    from pbem.core.engine import Randomness, new_game

    drops = wins_by_drop = ended = 0
    for i in range(40):
        rng = random.Random(i)
        names = [f"p{n}" for n in range(2 + i % 5)]
        seed = bytes([i]) * 32
        options = Options(drop_after=rng.choice([0, 1, 2, 3]))
        state, _ = new_game(
            "g", names, BOARD, options, Randomness(dice.resolution_key(seed, 0), seed)
        )
        for _ in range(400):
            if state.phase is Phase.OVER:
                ended += 1
                break
            silent = {n for n in state.awaiting() if rng.random() < 0.3}
            orders_list = []
            for name in state.awaiting():
                if name in silent:
                    got = autopilot_orders(state, name, SECRET)
                    assert validation.validate(state, got) == [], got.to_toml()
                    orders_list.append(got)
                else:
                    orders_list.append(orders_for(state, name, rng))
            key = dice.resolution_key(seed, state.resolution)
            new, events = resolve(state, orders_list, Randomness(key, seed), silent)
            held = [c for p in new.players for c in p.hand] + list(new.deck) + list(new.discards)
            assert sorted(held) == sorted(BOARD.cards())
            for p in new.players:
                owns = bool(new.owned(p.name))
                assert p.alive == owns or new.phase is Phase.OVER
                if p.dropped:
                    assert not owns and not p.hand
                if p.name in silent and not p.dropped:
                    assert p.missed == state.player(p.name).missed + 1
                elif p.name in state.awaiting() and p.name not in silent:
                    assert p.missed == 0
            assert state_from_dict(state_to_dict(new), BOARD) == new
            dropped = only(events, Dropped)
            drops += len(dropped)
            if dropped and only(events, Won):
                wins_by_drop += 1
            if new.phase is Phase.PLAY:
                assert new.current_player.alive
            state = new
    print(f"drops {drops}, wins by a drop {wins_by_drop}, games ended {ended} of 40")
    assert drops > 10 and wins_by_drop > 0 and ended > 30


def test_when_every_player_is_silent_in_setup_the_last_one_is_not_dropped() -> None:
    state = make_state(
        {**WEST, "Kamchatka": ("bob", 2)},
        default=("carol", 1),
        players=["alice", "bob", "carol"],
        phase=Phase.SETUP,
        turn=0,
        to_place={"alice": 3, "bob": 3, "carol": 3},
        options=Options(drop_after=1),
    )
    silent = [autopilot_orders(state, p, SECRET) for p in ("alice", "bob", "carol")]
    after, events = resolve(state, silent, randomness(), {"alice", "bob", "carol"})
    assert [e.player for e in only(events, Dropped)] == ["alice", "bob"]
    assert only(events, Won) == [Won("carol")]
    assert after.phase is Phase.OVER and after.player("carol").alive


def test_the_story_tells_the_autopilots_trade_and_placements_not_the_players() -> None:
    from pbem.present.report import armies_before, tell

    hand = ("Alaska", "Brazil", "Iceland", "Egypt", "Siam")
    state = make_state({**WEST, "Kamchatka": ("bob", 9)}, hands={"alice": hand})
    after, events = _missed_turn(state)
    story = [item.text for item in tell(events, "bob", armies_before(after, events))]
    assert any(t.startswith("The autopilot traded") and "for alice" in t for t in story)
    assert "2 placed on Alaska for alice's card." in story
    assert any(
        t.startswith("No orders from alice by the deadline: autopilot placed") for t in story
    )
    assert not any(t.startswith(("alice placed", "alice traded")) for t in story)
