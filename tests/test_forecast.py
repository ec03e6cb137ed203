"""The checker's forecast says what an accepted order file will do, including what the engine
will change: an attack that cannot roll the dice it asks for, a fortification that is cut."""

from __future__ import annotations

from helpers import make_state, orders

from pbem.core import validation
from pbem.core.orders import Attack, Fortify
from pbem.game.processor import forecast


def test_the_forecast_says_an_attack_rolls_fewer_dice_than_asked() -> None:
    state = make_state({"Ukraine": ("alice", 2), "Siam": "alice", "Ural": "bob"})
    place = [("Ukraine", 1), ("Siam", "rest")]  # 3 armies on Ukraine: 2 dice, not 3
    turn = orders(state, place=place, attack=[Attack("Ukraine", "Ural", dice=3)])
    assert validation.validate(state, turn) == []
    line = forecast(state, turn)[-1]
    assert line.startswith("attack Ural from Ukraine: 3 against 1")
    assert line.endswith(
        "(first roll: 2 dice, not the 3 asked: with 3 armies there, one must stay behind)"
    )
    as_allowed = orders(state, place=place, attack=[Attack("Ukraine", "Ural")])
    assert "not the" not in forecast(state, as_allowed)[-1]


def test_the_forecast_says_a_fortification_will_be_cut() -> None:
    state = make_state({"Ukraine": ("alice", 2), "Siam": "alice", "Ural": ("alice", 5)})
    turn = orders(state, place=[("Siam", "rest")], fortify=Fortify("Ural", "Ukraine", 999))
    assert validation.validate(state, turn) == []
    assert forecast(state, turn)[-1] == (
        "fortify Ukraine from Ural with 999 (asked to move 999, cut to 4: one army stays behind)"
    )
    fits = orders(state, place=[("Siam", "rest")], fortify=Fortify("Ural", "Ukraine", 4))
    assert forecast(state, fits)[-1] == "fortify Ukraine from Ural with 4"


def test_the_forecast_of_a_fortification_after_attacks_says_they_may_change_it() -> None:
    owners = {"Ukraine": ("alice", 9), "Siam": "alice", "Ural": "bob", "Afghanistan": ("alice", 3)}
    state = make_state(owners)
    turn = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("Ukraine", "Ural")],
        fortify=Fortify("Afghanistan", "Ukraine", 5),
    )
    assert validation.validate(state, turn) == []
    assert forecast(state, turn)[-1] == (
        "fortify Ukraine from Afghanistan with 5 (asked to move 5, cut to 2: one army stays behind)"
    )
