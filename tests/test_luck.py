"""Luck: each roll's losses against the exact expectation of its dice, attack and defence apart."""

from __future__ import annotations

import math
from fractions import Fraction

from pbem.core.events import Rolled
from pbem.core.luck import expected_losses, tally
from pbem.core.odds import roll_outcomes


def test_expected_losses_are_the_means_of_the_exact_roll_distributions() -> None:
    # 3 dice against 2: the attacker loses 2 with 2275/7776, 1 with 2611/7776, 0 with 2890/7776.
    mean_a, mean_d, variance = expected_losses(3, 2)
    assert mean_a == Fraction(2275 * 2 + 2611, 7776)
    assert mean_a + mean_d == 2
    square = sum(p * la * la for (la, _), p in roll_outcomes(3, 2).items())
    assert variance == square - mean_a**2
    # 1 die against 1: the defender wins ties, 21 of 36.
    assert expected_losses(1, 1)[0] == Fraction(21, 36)


def test_luck_is_expected_losses_less_actual_losses_attack_and_defence_apart() -> None:
    rolls = [
        Rolled("ann", "A", "B", "bob", (6, 6, 6), (1, 1), 0, 2),  # ann lucky
        Rolled("bob", "B", "A", "ann", (1,), (6,), 1, 0),  # ann defends, bob loses
    ]
    luck = tally(rolls, ["ann", "bob"])
    ann, bob = luck["ann"], luck["bob"]
    assert ann.attack.rolls == 1 and ann.defence.rolls == 1
    assert math.isclose(ann.attack.luck, float(expected_losses(3, 2)[0]))
    assert math.isclose(ann.defence.luck, float(expected_losses(1, 1)[1]))
    assert math.isclose(bob.defence.luck, float(expected_losses(3, 2)[1] - 2))
    assert math.isclose(ann.total.luck, ann.attack.luck + ann.defence.luck)
    assert ann.total.z > 0 > bob.total.z
    assert math.isclose(ann.attack.z, ann.attack.luck / math.sqrt(float(expected_losses(3, 2)[2])))


def test_the_longest_losing_streak_counts_rolls_lost_outright_in_a_row() -> None:
    lost = Rolled("ann", "A", "B", "bob", (1,), (6,), 1, 0)
    won = Rolled("ann", "A", "B", "bob", (6,), (1,), 0, 1)
    split = Rolled("ann", "A", "B", "bob", (6, 1), (5, 5), 1, 1)
    luck = tally([lost, lost, won, lost, lost, lost, split, lost], ["ann", "bob"])
    assert luck["ann"].longest_losing_streak == 3
    assert luck["bob"].longest_losing_streak == 1


def test_rolls_against_the_neutral_count_only_for_the_player() -> None:
    luck = tally([Rolled("ann", "A", "B", "neutral", (6,), (1,), 0, 1)], ["ann"])
    assert luck["ann"].attack.rolls == 1 and set(luck) == {"ann"}


def test_battles_are_consecutive_rolls_of_one_attack() -> None:
    a = Rolled("ann", "A", "B", "bob", (1,), (6,), 1, 0)
    b = Rolled("ann", "A", "C", "bob", (6,), (1,), 0, 1)
    battles = tally([a, a, b], ["ann", "bob"])["ann"].battles
    assert [(x.target, x.rolls, x.attacker_lost) for x in battles] == [("B", 2, 2), ("C", 1, 0)]
