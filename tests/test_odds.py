"""Exact battle odds: pbem.odds against hand-derived fractions, published tables and simulation."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.core.odds import Forecast, forecast, printed_win, roll_outcomes, win_chance
from pbem.core.rules import attack_dice, battle, defence_dice

# --- one roll -----------------------------------------------------------------------------------


def test_three_dice_against_two_known_fractions() -> None:
    outcomes = roll_outcomes(3, 2)
    assert outcomes[(0, 2)] == Fraction(2890, 7776)
    assert outcomes[(1, 1)] == Fraction(2611, 7776)
    assert outcomes[(2, 0)] == Fraction(2275, 7776)
    assert set(outcomes) == {(0, 2), (1, 1), (2, 0)}


@pytest.mark.parametrize("attacker_dice", [1, 2, 3])
@pytest.mark.parametrize("defender_dice", [1, 2])
def test_roll_outcomes_count_every_ordered_throw(attacker_dice: int, defender_dice: int) -> None:
    """Throws are taken up to order; the counts are those of all 6^n throws, one by one."""
    counts: dict[tuple[int, int], int] = {}
    for throw in itertools.product(range(1, 7), repeat=attacker_dice + defender_dice):
        losses = battle(throw[:attacker_dice], throw[attacker_dice:])
        counts[losses] = counts.get(losses, 0) + 1
    total = 6 ** (attacker_dice + defender_dice)
    expected = {losses: Fraction(n, total) for losses, n in sorted(counts.items())}
    outcomes = roll_outcomes(attacker_dice, defender_dice)
    assert list(outcomes.items()) == list(expected.items())


def test_one_die_against_one_attacker_wins_15_of_36() -> None:
    outcomes = roll_outcomes(1, 1)
    assert outcomes[(0, 1)] == Fraction(15, 36)
    assert outcomes[(1, 0)] == Fraction(21, 36)


def test_one_against_one_probabilities_sum_to_one() -> None:
    assert sum(roll_outcomes(1, 1).values()) == 1


@pytest.mark.parametrize("attacker_dice", [1, 2, 3])
@pytest.mark.parametrize("defender_dice", [1, 2])
def test_every_roll_distribution_sums_to_one_and_compares_min_dice(
    attacker_dice: int, defender_dice: int
) -> None:
    outcomes = roll_outcomes(attacker_dice, defender_dice)
    assert sum(outcomes.values()) == 1
    assert all(a + d == min(attacker_dice, defender_dice) for a, d in outcomes)


def test_two_dice_against_one_attacker_wins_125_of_216() -> None:
    # The attacker's best die beats one die: 1 - sum_k P(max of 2 <= k) / 6 = 125/216.
    assert roll_outcomes(2, 1)[(0, 1)] == Fraction(125, 216)


@pytest.mark.parametrize(("attacker_dice", "defender_dice"), [(0, 1), (4, 1), (1, 0), (1, 3)])
def test_roll_outcomes_rejects_impossible_dice(attacker_dice: int, defender_dice: int) -> None:
    with pytest.raises(ValueError):
        roll_outcomes(attacker_dice, defender_dice)


# --- whole battles: exact values ----------------------------------------------------------------


def test_two_attackers_against_one_defender_win_15_of_36() -> None:
    f = forecast(2, 1)
    assert f.win == Fraction(15, 36)
    assert f"{float(f.win) * 100:.2f}" == "41.67"
    assert f.outcomes == ((1, 1, Fraction(21, 36)), (2, 0, Fraction(15, 36)))


def test_three_attackers_against_one_defender_hand_derived() -> None:
    # Two dice against one (125/216); failing that, one die against one (15/36).
    assert forecast(3, 1).win == Fraction(125, 216) + Fraction(91, 216) * Fraction(15, 36)


# Osborne, "Markov Chains for the RISK Board Game Revisited" (Mathematics Magazine 76, 2003),
# counts attacking armies A *excluding* the one that must stay behind and fights until A = 0,
# so his (A, D) is our forecast(A + 1, D). Values from his table of P(attacker wins), 3 decimals.
OSBORNE = [
    (1, 1, "0.417"),
    (2, 1, "0.754"),
    (1, 2, "0.106"),
    (2, 2, "0.363"),
    (3, 3, "0.470"),
]


@pytest.mark.parametrize(("a", "d", "published"), OSBORNE)
def test_published_osborne_table_small_battles(a: int, d: int, published: str) -> None:
    assert f"{float(forecast(a + 1, d).win):.3f}" == published


def test_ten_armies_against_ten_matches_published_calculator() -> None:
    # recreationalmath.com/Risk (quoted in MATLAB Cody problem 1260's comments) gives
    # 0.47993525647768026 for a territory of 10 armies attacking 10, fought to the last army.
    f = forecast(10, 10)
    assert abs(float(f.win) - 0.47993525647768026) < 1e-15
    # Osborne's A = 10, D = 10 is one army more on the attacking territory.
    assert f"{float(forecast(11, 10).win):.3f}" == "0.568"


def test_no_roll_when_the_attacker_cannot_attack() -> None:
    for f in (forecast(1, 1), forecast(1, 5), forecast(3, 2, stop_at=3), forecast(4, 2, stop_at=9)):
        assert f.win == 0
        assert f.outcomes == ((f.attackers, f.defenders, Fraction(1)),)
        assert f.expected_attackers_left == f.attackers
        assert f.expected_defenders_left == f.defenders


def test_stop_at_is_a_promise_no_roll_goes_below_it() -> None:
    f = forecast(8, 6, stop_at=4)
    # From 5 armies the attacker rolls 1 die (losing 2 would break the promise), from 6 two.
    assert {a for a, d, _ in f.outcomes if d > 0} == {4}
    assert min(a for a, _, _ in f.outcomes) == 4
    assert f.win < forecast(8, 6).win
    # 3 armies with stop_at = 2: one die at a time, never two.
    assert forecast(3, 2, stop_at=2).outcomes[0][0] == 2


def test_stop_at_as_a_threshold_in_older_games_lets_the_last_roll_go_below() -> None:
    f = forecast(8, 6, stop_at=4, promised=False)
    # Rolling stops at 4 armies or fewer; the last roll, from 5 armies with 3 dice, can lose 2.
    assert {a for a, d, _ in f.outcomes if d > 0} == {3, 4}
    assert min(a for a, _, _ in f.outcomes) == 3
    assert f.win < forecast(8, 6).win


def test_dice_cap_limits_the_dice_rolled() -> None:
    # With one die a roll compares one pair, so a 3-vs-1 battle is two 1-vs-1 chances.
    p = Fraction(15, 36)
    assert forecast(3, 1, dice=1).win == p + (1 - p) * p


def test_every_forecast_outcomes_sum_to_exactly_one() -> None:
    for a in range(1, 13):
        for d in range(1, 13):
            for stop_at, dice in ((1, None), (3, None), (1, 2), (4, 1)):
                f = forecast(a, d, stop_at, dice)
                assert sum(p for _, _, p in f.outcomes) == 1
                assert list(f.outcomes) == sorted(f.outcomes)
                assert all(p > 0 for _, _, p in f.outcomes)


def test_expected_left_are_the_outcome_means() -> None:
    f = forecast(9, 7, stop_at=2, dice=2)
    assert f.expected_attackers_left == sum(a * p for a, _, p in f.outcomes)
    assert f.expected_defenders_left == sum(d * p for _, d, p in f.outcomes)
    assert f.win == sum(p for _, d, p in f.outcomes if d == 0)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ((0, 3), "attacking territory"),
        ((3, 0), "defending territory"),
        ((3, 3, 0), "stop_at"),
        ((3, 3, 1, 0), "dice"),
        ((3, 3, 1, 4), "dice"),
    ],
)
def test_forecast_rejects_bad_arguments_with_a_clear_message(
    args: tuple[int, ...], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        forecast(*args)


def test_summary_is_one_readable_line() -> None:
    from pbem.present.plan import odds_summary

    line = odds_summary(10, 10, 1, None)
    assert (
        line
        == "10 against 10: takes it 48.0% of the time; expected left: attacker 3.0, defender 2.3"
    )
    assert "\n" not in line
    capped = odds_summary(5, 3, 3, 2)
    assert capped.startswith("5 against 3 (stopping at 3, at most 2 dice): takes it ")
    assert odds_summary(1, 4, 1, None).startswith("1 against 4: takes it 0.0% of the time")
    assert ">99.9%" in odds_summary(60, 1, 1, None)
    assert "<0.1%" in odds_summary(3, 20, 1, None)


def test_the_kit_answers_the_odds_in_the_players_language() -> None:
    from pbem.kit import LANGUAGES, main
    from pbem.languages import i18n

    assert LANGUAGES == i18n.LANGUAGES
    assert main(["odds", "10", "10", "--lang", "sv"]) == 0


def test_hundred_against_hundred() -> None:
    f = forecast(100, 100)
    assert Fraction(8, 10) < f.win < Fraction(81, 100)
    assert sum(p for _, _, p in f.outcomes) == 1


# --- consistency properties ---------------------------------------------------------------------


def test_more_attackers_help_and_more_defenders_hurt_on_a_grid() -> None:
    for d in range(1, 15):
        wins = [forecast(a, d).win for a in range(1, 20)]
        assert wins == sorted(wins)
    for a in range(1, 15):
        wins = [forecast(a, d).win for d in range(1, 20)]
        assert wins == sorted(wins, reverse=True)


armies = st.integers(min_value=1, max_value=30)


@settings(max_examples=80, deadline=None)
@given(
    attackers=armies,
    defenders=armies,
    stop_at=st.integers(min_value=1, max_value=12),
    dice=st.sampled_from([None, 1, 2, 3]),
)
def test_forecast_properties(
    attackers: int, defenders: int, stop_at: int, dice: int | None
) -> None:
    f = forecast(attackers, defenders, stop_at, dice)
    assert 0 <= f.win <= 1
    assert forecast(attackers + 1, defenders, stop_at, dice).win >= f.win
    assert forecast(attackers, defenders + 1, stop_at, dice).win <= f.win
    # Stopping early never raises the odds of taking the territory.
    assert f.win <= forecast(attackers, defenders, 1, dice).win
    floor = max(1, stop_at)
    # A roll costs the attacker at most 2 armies, so it ends at most one below the floor.
    lowest = min(attackers, max(1, floor - 1))
    assert lowest <= f.expected_attackers_left <= attackers
    assert 0 <= f.expected_defenders_left <= defenders
    assert f.expected_defenders_left >= 1 - f.win  # a defender holding on keeps >= 1 army
    assert sum(p for _, _, p in f.outcomes) == 1
    for a, d, _ in f.outcomes:
        assert d == 0 or a <= floor
        assert 0 <= d <= defenders and lowest <= a <= attackers


# --- simulation cross-check ---------------------------------------------------------------------


def _simulate(attackers: int, defenders: int, rng: random.Random) -> bool:
    while attackers > 1 and defenders > 0:
        a_dice = attack_dice(attackers)
        d_dice = defence_dice(defenders)
        lost_a, lost_d = battle(
            [rng.randint(1, 6) for _ in range(a_dice)],
            [rng.randint(1, 6) for _ in range(d_dice)],
        )
        attackers -= lost_a
        defenders -= lost_d
    return defenders == 0


def test_simulated_five_against_three_agrees_with_exact_odds() -> None:
    rng = random.Random(1)
    n = 20_000
    wins = sum(_simulate(5, 3, rng) for _ in range(n))
    exact = float(forecast(5, 3).win)
    standard_error = math.sqrt(exact * (1 - exact) / n)
    assert abs(wins / n - exact) < 4 * standard_error


def test_forecast_is_a_frozen_value() -> None:
    f = forecast(4, 2)
    assert isinstance(f, Forecast)
    assert forecast(4, 2) is f  # memoised
    with pytest.raises(AttributeError):
        f.win = Fraction(1)  # type: ignore[misc]


def test_odds_agree_with_the_engines_own_battles() -> None:
    """Thousands of turns resolved by the engine, each with its own key: the share of attacks
    that take the territory, and the armies left, match the exact forecast."""
    from helpers import key, make_state, orders, play

    from pbem.core.events import Conquered
    from pbem.core.orders import Attack

    state = make_state({"Ukraine": ("alice", 6), "Ural": ("bob", 4), "Siam": "alice"})
    turn = orders(state, place=[("Siam", "rest")], attack=[Attack("Ukraine", "Ural", stop_at=2)])
    exact = forecast(6, 4, stop_at=2)
    runs = 4000
    wins = 0
    left = 0
    for n in range(runs):
        new, events = play(state, turn, key(n), check=n == 0)
        won = any(isinstance(e, Conquered) for e in events)
        wins += won
        left += new.armies("Ukraine") + (new.armies("Ural") if won else 0)
    p = float(exact.win)
    assert abs(wins / runs - p) < 4 * math.sqrt(p * (1 - p) / runs)
    assert abs(left / runs - float(exact.expected_attackers_left)) < 0.15


# --- the chance of winning in floating point: the decision aids' ---------------------------------

# (attackers, defenders) for every way of attacking, and large battles of the defaults
FLOAT_SMALL = [(a, d) for a in range(1, 21) for d in range(1, 21)]
FLOAT_LARGE = [(300, 290), (250, 300), (280, 280), (560, 40), (40, 560), (150, 160), (599, 1)]
WAYS = [
    (stop_at, dice, promised)
    for stop_at in (1, 2, 3, 5)
    for dice in (None, 1, 2, 3)
    for promised in (True, False)
]


def _printed(p: float | Fraction) -> str:
    from pbem.present.plan import percent

    return percent(p)


@pytest.mark.parametrize(("stop_at", "dice", "promised"), WAYS)
def test_the_float_chance_is_the_exact_one_for_every_way_of_attacking(
    stop_at: int, dice: int | None, promised: bool
) -> None:
    for a, d in FLOAT_SMALL:
        exact = forecast(a, d, stop_at, dice, promised).win
        assert abs(win_chance(a, d, stop_at, dice, promised) - float(exact)) < 1e-14, (a, d)
        shown = printed_win(a, d, stop_at, dice, promised)
        assert _printed(shown) == _printed(exact), (a, d)


@pytest.mark.parametrize(("attackers", "defenders"), FLOAT_LARGE)
def test_the_float_chance_of_large_battles_is_the_exact_one(attackers: int, defenders: int) -> None:
    exact = forecast(attackers, defenders).win
    assert abs(win_chance(attackers, defenders) - float(exact)) < 1e-12
    assert _printed(printed_win(attackers, defenders)) == _printed(exact)


@pytest.mark.parametrize(("stop_at", "dice", "promised"), [(7, 2, True), (4, 1, False)])
def test_the_float_chance_of_large_battles_keeps_the_stop_and_the_dice(
    stop_at: int, dice: int, promised: bool
) -> None:
    exact = forecast(200, 190, stop_at, dice, promised).win
    assert abs(win_chance(200, 190, stop_at, dice, promised) - float(exact)) < 1e-12


def test_a_battle_won_or_lost_all_but_surely_prints_as_the_exact_one() -> None:
    """The float of 500 against 10 is 1 and of 10 against 500 is 0; the exact chances are
    neither, and print as such."""
    assert win_chance(500, 10) == 1.0 and win_chance(10, 500) == 0.0
    assert _printed(printed_win(500, 10)) == _printed(forecast(500, 10).win) == ">99.9%"
    assert _printed(printed_win(10, 500)) == _printed(forecast(10, 500).win) == "<0.1%"
    assert printed_win(3, 5, stop_at=3) == 0 and _printed(printed_win(3, 5, stop_at=3)) == "0.0%"


@pytest.mark.parametrize("step", [0.0005, 0.0625, 0.5065, 0.9995])
def test_a_float_near_a_printed_step_is_seen(step: float) -> None:
    from pbem.core.odds import NEAR, _near_a_step

    assert _near_a_step(step) and _near_a_step(step + NEAR / 2) and _near_a_step(step - NEAR / 2)
    assert not _near_a_step(step + 2 * NEAR) and not _near_a_step(step - 2 * NEAR)
    assert not _near_a_step(step + 0.0005)  # (a tenth of a percent itself is no step)


def test_a_float_near_a_printed_step_gives_way_to_the_exact_fraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """37 against 13, stopping at 3 (an older game's rule): 99.950008%, just above the step to
    '>99.9%'. A float that erred by 1e-10 below the step would print '99.9%': the exact fraction
    is taken instead."""
    from pbem.core import odds

    exact = forecast(37, 13, 3, None, False).win
    assert _printed(exact) == ">99.9%" and abs(float(exact) - 0.9995) < 1e-7
    monkeypatch.setattr(odds, "win_chance", lambda *args: 0.9995 - 1e-10)
    assert _printed(0.9995 - 1e-10) == "99.9%"
    assert printed_win(37, 13, 3, None, False) == exact


def test_the_aids_odds_are_worked_out_for_the_rows_shown_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from helpers import make_state

    from pbem.core import odds
    from pbem.present import aids

    state = make_state({"Alaska": ("alice", 5), "Ukraine": ("alice", 9)}, default=("bob", 2))
    asked: list[tuple[int, int]] = []
    chance = odds.printed_win
    monkeypatch.setattr(odds, "printed_win", lambda a, d: asked.append((a, d)) or chance(a, d))
    candidates = sum(
        state.owner(n) == "bob" for t in ("Alaska", "Ukraine") for n in state.board.neighbours(t)
    )
    assert candidates == 9  # (more attacks than rows)
    rows = aids.decision_aids(state, "alice")["attacks"]
    assert isinstance(rows, list) and len(rows) == aids.ATTACKS
    shown = [(r.armies, r.defenders) for r in rows] + [
        (r.reinforced_armies, r.defenders) for r in rows
    ]
    assert sorted(asked) == sorted(shown)
