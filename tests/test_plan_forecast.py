"""The forecast follows the whole plan in order, as the engine plays it: exact fractions for
small cases worked by hand, and agreement with the engine itself over many resolutions."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest
from forecast_plans import PLANS, Plan, compare, fifty_army_plans
from helpers import make_state, orders

from pbem.core import forecast as forecast_module
from pbem.core import validation
from pbem.core.forecast import forecast_plan
from pbem.core.orders import Attack, Fortify
from pbem.core.state import Options, StopAt
from pbem.present.plan import forecast_lines

RUNS = 1000
"""Resolutions per plan here (about 3 seconds in all); benchmarks/forecast_vs_engine.py runs
20,000 per plan. The tolerance is in standard errors of `RUNS` samples, so it widens as
1/sqrt(RUNS)."""


@pytest.mark.parametrize("plan", PLANS, ids=[p.name for p in PLANS])
def test_the_forecast_of_a_plan_agrees_with_the_engine(plan: Plan) -> None:
    assert compare(plan, RUNS) == []


def test_the_comparison_with_the_engine_catches_a_wrong_forecast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A forecast that took stop_at for a threshold in a game where it is a promise.
    battle = forecast_module._battle
    monkeypatch.setattr(
        forecast_module,
        "_battle",
        lambda start, attack, promised, exact: battle(start, attack, not promised, exact),
    )
    forecast_module._battle_from.cache_clear()  # its battles come from the patched sweep
    plan = next(p for p in PLANS if p.name == "small stacks stop_at 2")
    try:
        assert any("attack 2 happens" in line for line in compare(plan, RUNS))
    finally:
        forecast_module._battle_from.cache_clear()


def test_at_least_twenty_plans_with_chains_and_every_move_form() -> None:
    assert len(PLANS) >= 20
    attacks = [a for p in PLANS for a in p.attacks]
    assert {"all", "min"} <= {a.move for a in attacks if isinstance(a.move, str)}
    assert any(isinstance(a.move, int) for a in attacks)
    assert any(a.stop_at > 1 for a in attacks)
    chained = [p for p in PLANS if any(a.source == b.target for a in p.attacks for b in p.attacks)]
    assert len(chained) >= 5


# --- exact, by hand ----------------------------------------------------------------------------


def test_an_attack_from_a_source_emptied_by_a_move_in_happens_only_if_enough_stay() -> None:
    # The reported case: 11 on China take India (2) moving 8; China can attack Afghanistan
    # next only if it still holds 2, that is if it lost at most one army taking India:
    # 0 lost in the first roll (2890/7776), or 1 and 1 (2611/7776) then 0 against 1 (855/1296).
    state = make_state(
        {"China": ("alice", 8), "Siam": "alice", "India": ("bob", 2), "Afghanistan": ("bob", 2)}
    )
    turn = orders(
        state,
        place=[("China", 3)],
        attack=[Attack("China", "India", move=8), Attack("China", "Afghanistan")],
    )
    assert validation.validate(state, turn) == []
    plan = forecast_plan(state, turn, exact=True)
    second = plan.attacks[1]
    assert second.happens == Fraction(2890, 7776) + Fraction(2611, 7776) * Fraction(855, 1296)
    assert second.happens == Fraction(664205, 1119744)
    assert second.attackers is not None and second.attackers.values == (
        (2, Fraction(2611 * 855, 7776 * 1296) / second.happens),
        (3, Fraction(2890, 7776) / second.happens),
    )
    line = forecast_lines(state, turn)[-1]
    assert line.startswith(
        "attack Afghanistan from China: 2 to 3 (most likely 3) against 2: happens 59.3% "
        "(skipped 40.7%: China has only 1 army: an attack needs 2); takes it "
    )


def test_an_attack_from_a_newly_taken_territory_uses_the_armies_moved_in() -> None:
    # 3 against 1: two dice win at once 125/216 (3 left, 2 move in), else 2 against 1 with
    # one die, 15/36 (2 left, 1 moves in). Ural can attack on only with 2 moved in.
    state = make_state({"Ukraine": ("alice", 3), "Siam": "alice", "Ural": "bob", "Siberia": "bob"})
    turn = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("Ukraine", "Ural"), Attack("Ural", "Siberia")],
    )
    plan = forecast_plan(state, turn, exact=True)
    first, second = plan.attacks
    assert first.takes == Fraction(125, 216) + Fraction(91, 216) * Fraction(15, 36)
    assert second.happens == Fraction(125, 216)
    assert dict(second.skipped) == {
        "you do not hold Ural": Fraction(91, 216) * Fraction(21, 36),
        "Ural has only 1 army: an attack needs 2": Fraction(91, 216) * Fraction(15, 36),
    }
    # From 2 on Ural against 1: one die, 15/36.
    assert second.takes == Fraction(125, 216) * Fraction(15, 36)


def test_a_later_attack_on_a_territory_already_taken_is_skipped() -> None:
    state = make_state(
        {"Ukraine": ("alice", 3), "China": ("alice", 5), "Siam": "alice", "Ural": "bob"}
    )
    turn = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("Ukraine", "Ural"), Attack("China", "Ural")],
    )
    plan = forecast_plan(state, turn, exact=True)
    assert plan.attacks[1].happens == 1 - plan.attacks[0].takes
    assert dict(plan.attacks[1].skipped) == {"you already hold Ural": plan.attacks[0].takes}


def test_stop_at_two_with_three_armies_rolls_one_die_and_never_ends_on_one() -> None:
    state = make_state({"Ukraine": ("alice", 3), "Siam": "alice", "Ural": ("bob", 2)})
    turn = orders(state, place=[("Siam", "rest")], attack=[Attack("Ukraine", "Ural", stop_at=2)])
    (f,) = forecast_plan(state, turn, exact=True).attacks
    # One die against two wins a roll 55/216 of the time; then one die against one, 15/36.
    # A lost roll leaves 2: the attack stops there. Only a conquest (moving 2 in) leaves 1.
    assert f.takes == Fraction(55, 216) * Fraction(15, 36)
    assert f.source_after is not None
    assert f.source_after.values == ((1, f.takes), (2, 1 - f.takes))
    old = make_state(
        {"Ukraine": ("alice", 3), "Siam": "alice", "Ural": ("bob", 2)},
        options=Options(stop_at=StopAt.THRESHOLD),
    )
    (threshold,) = forecast_plan(
        old, orders(old, place=[("Siam", "rest")], attack=turn.attack)
    ).attacks
    assert threshold.source_after is not None
    assert threshold.source_after.probability(1) > threshold.takes  # two dice lost: down to 1


def test_the_fortification_follows_what_the_attacks_left() -> None:
    state = make_state({"Ukraine": ("alice", 3), "Siam": "alice", "Ural": "bob"})
    turn = orders(
        state,
        place=[("Siam", "rest")],
        attack=[Attack("Ukraine", "Ural")],
        fortify=Fortify("Ural", "Ukraine", "all"),
    )
    plan = forecast_plan(state, turn, exact=True)
    assert plan.fortify is not None
    assert plan.fortify.happens == Fraction(125, 216)  # only with 2 moved into Ural
    assert plan.fortify.moved is not None and plan.fortify.moved.values == ((1, Fraction(1)),)


def test_every_distribution_sums_to_one() -> None:
    for plan in PLANS:
        state = plan.state()
        for f in forecast_plan(state, plan.orders(state), exact=True).attacks:
            assert f.happens + sum(p for _, p in f.skipped) == 1
            for d in (f.attackers, f.defenders, f.source_after, f.target_after):
                assert d is None or sum(p for _, p in d.values) == 1


def test_the_float_forecast_is_the_exact_one_rounded() -> None:
    plan = PLANS[4]
    state = plan.state()
    exact = forecast_plan(state, plan.orders(state), exact=True)
    fast = forecast_plan(state, plan.orders(state))
    for e, f in zip(exact.attacks, fast.attacks, strict=True):
        assert abs(float(e.takes) - f.takes) < 1e-12
        assert abs(float(e.happens) - f.happens) < 1e-12


def test_ten_attacks_from_fifty_army_stacks_take_well_under_a_second() -> None:
    for _, state, turn in fifty_army_plans():
        assert validation.validate(state, turn) == []
        start = time.perf_counter()
        lines = forecast_lines(state, turn)
        assert time.perf_counter() - start < 0.5
        assert len([line for line in lines if line.startswith("attack")]) == 10
