"""Warnings: legal orders that are probably not what the player meant, each with its line,
never blocking."""

from __future__ import annotations

from helpers import make_state, orders

from pbem.core import validation
from pbem.core.advice import warnings
from pbem.core.forecast import forecast_plan
from pbem.core.orders import Attack, Fortify, Orders, Place
from pbem.core.state import GameState
from pbem.present.plan import advice_text, forecast_with_warnings


def warned(state: GameState, turn: Orders) -> list[str]:
    assert validation.validate(state, turn) == []  # never blocking: the orders are valid
    return [advice_text(p) for p in warnings(state, turn, forecast_plan(state, turn))]


def with_lines(turn: Orders) -> Orders:
    """The orders as if read from a file: attack i on line 10 + i, the fortify on line 30."""
    attacks = tuple(
        Attack(a.source, a.target, a.dice, a.stop_at, a.move, 10 + i)
        for i, a in enumerate(turn.attack)
    )
    fortify = turn.fortify
    if fortify is not None:
        fortify = Fortify(fortify.source, fortify.target, fortify.armies, 30)
    return Orders(
        turn.game, turn.turn, turn.player, turn.secret, turn.trade, turn.place, attacks, fortify
    )


def test_an_attack_whose_source_an_earlier_attack_empties_is_warned_about() -> None:
    state = make_state({"China": ("alice", 9), "Siam": "alice", "India": "bob", "Mongolia": "bob"})
    turn = with_lines(
        orders(
            state,
            place=[("Siam", "rest")],
            attack=[Attack("China", "India"), Attack("China", "Mongolia")],
        )
    )
    assert warned(state, turn) == [
        "this attack will never happen: by then, China has only 1 army: an attack needs 2 "
        "(an earlier attack takes its armies)"
    ]
    line = forecast_with_warnings(state, turn)[-1]
    assert line.startswith("warning: line 11: this attack will never happen")


def test_an_attack_that_may_find_its_source_too_thin_is_warned_about() -> None:
    state = make_state(
        {"China": ("alice", 8), "Siam": "alice", "India": ("bob", 3), "Mongolia": "bob"}
    )
    turn = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("China", "India", move="min"), Attack("China", "Mongolia")],
    )
    (message,) = warned(state, turn)
    assert message.startswith("China may be too thin to attack by then (")


def test_move_all_leaving_a_border_thin_next_to_a_large_stack_is_warned_about() -> None:
    owners = {"Ukraine": ("alice", 12), "Siam": "alice", "Ural": "bob"}
    owners |= {"Scandinavia": ("bob", 9)}
    state = make_state(owners)
    turn = orders(state, place=[("Siam", "rest")], attack=[Attack("Ukraine", "Ural")])
    (message,) = warned(state, turn)
    assert message.startswith(
        'move = "all" (the default) moves all but 1 army out of Ukraine when it takes Ural ('
    )
    assert message.endswith(
        'next to Scandinavia (bob, 9 armies); move = "min" or a number keeps more behind'
    )
    kept = orders(state, place=[("Siam", "rest")], attack=[Attack("Ukraine", "Ural", move=3)])
    assert warned(state, kept) == []
    small = make_state({**owners, "Scandinavia": ("bob", 2)})
    assert warned(small, orders(small, place=[("Siam", "rest")], attack=turn.attack)) == []


def test_a_fortification_leaving_one_army_next_to_a_large_stack_is_warned_about() -> None:
    state = make_state(
        {"Ukraine": ("alice", 6), "Ural": ("alice", 2), "Siam": "alice", "Scandinavia": ("bob", 7)}
    )
    turn = orders(state, place=[("Siam", "rest")], fortify=Fortify("Ukraine", "Ural", "all"))
    assert warned(state, turn) == [
        "the fortification leaves Ukraine with 1 army next to Scandinavia (bob, 7 armies)"
    ]
    turn = orders(state, place=[("Siam", "rest")], fortify=Fortify("Ukraine", "Ural", 3))
    assert warned(state, turn) == []


def test_orders_with_nothing_odd_have_no_warnings() -> None:
    state = make_state({"Ukraine": ("alice", 6), "Siam": "alice", "Ural": "bob"})
    turn = Orders(
        state.game,
        state.turn,
        "alice",
        "x",
        place=(Place("Siam", 3),),
        attack=(Attack("Ukraine", "Ural"),),
    )
    assert warned(state, turn) == []
