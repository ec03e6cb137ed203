"""Exact odds of a Risk battle: an absorbing Markov chain over dice outcomes, no simulation.

An attack from a territory holding ``attackers`` armies against ``defenders`` armies goes on,
roll after roll, while the attacking territory holds more than ``max(1, stop_at)`` armies and the
defender has armies left. Each roll uses ``rules.attack_dice_kept(attacker armies, dice, stop_at,
promised)`` (fewer dice near ``stop_at`` when it is a promise) against
``rules.defence_dice(defender armies)`` and ``rules.battle`` decides the losses, so these odds
follow exactly the rules the engine plays by.

Every roll removes at least one army, so the states can be swept in order of decreasing total
armies (no recursion, no linear solve). Probabilities are carried as integers over a common
denominator of 6^5 per army removed, which keeps the arithmetic exact and fast; they are turned
into :class:`fractions.Fraction` only at the end.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from pbem.core.rules import attack_dice_kept, battle, defence_dice

__all__ = ["Forecast", "forecast", "percent", "roll_outcomes"]

_SIDES = 6
_MAX_ATTACK_DICE = 3
_MAX_DEFENCE_DICE = 2
# Every one-roll probability is a multiple of 1 / 6^5 (6^(a+d) outcomes, a + d <= 5).
_UNIT = _SIDES ** (_MAX_ATTACK_DICE + _MAX_DEFENCE_DICE)

LARGEST = 600
"""The most armies in all (attackers and defenders) that odds are computed for: about a
second; past it the exact sums grow too slow for a command that must answer at once."""


@cache
def roll_outcomes(attacker_dice: int, defender_dice: int) -> dict[tuple[int, int], Fraction]:
    """Exact probability of each (attacker losses, defender losses) for one roll.

    Counts all 6^(attacker_dice + defender_dice) throws through :func:`pbem.rules.battle`,
    which compares the dice highest against highest whatever order they were thrown in: so each
    side's throws are taken up to order (56 throws of three dice stand for 216), each counted
    as many times as it can be thrown. The returned dict is cached and shared: do not modify it.
    """
    if not 1 <= attacker_dice <= _MAX_ATTACK_DICE:
        raise ValueError(f"the attacker rolls 1 to 3 dice, not {attacker_dice}")
    if not 1 <= defender_dice <= _MAX_DEFENCE_DICE:
        raise ValueError(f"the defender rolls 1 or 2 dice, not {defender_dice}")
    counts: defaultdict[tuple[int, int], int] = defaultdict(int)
    for attack, ways_a in _throws(attacker_dice):
        for defence, ways_d in _throws(defender_dice):
            counts[battle(attack, defence)] += ways_a * ways_d
    total = _SIDES ** (attacker_dice + defender_dice)
    return {losses: Fraction(n, total) for losses, n in sorted(counts.items())}


@cache
def _throws(dice: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Every throw of `dice` dice up to order (highest first), with how many of the 6^dice
    ordered throws give it."""
    faces = range(1, _SIDES + 1)
    ordered = (tuple(sorted(t, reverse=True)) for t in itertools.product(faces, repeat=dice))
    return tuple(sorted(Counter(ordered).items()))


@cache
def _scaled_transitions(attacker_dice: int, defender_dice: int) -> tuple[tuple[int, int, int], ...]:
    """(attacker losses, defender losses, weight) where weight = p * UNIT^(armies removed).

    A state that lost ``r`` armies in all carries its probability over UNIT^r, so following a
    roll that removes ``k`` armies multiplies the numerator by this integer weight.
    """
    result = []
    for (lost_a, lost_d), p in roll_outcomes(attacker_dice, defender_dice).items():
        weight = p * _UNIT ** (lost_a + lost_d)
        assert weight.denominator == 1, "roll probabilities are multiples of 1/6^5"
        result.append((lost_a, lost_d, weight.numerator))
    return tuple(result)


def percent(p: Fraction) -> str:
    """A probability as a percentage to one decimal, never rounding a chance to certainty."""
    if 0 < p < Fraction(1, 1000):
        return "<0.1%"
    if Fraction(999, 1000) < p < 1:
        return ">99.9%"
    return f"{float(p) * 100:.1f}%"


@dataclass(frozen=True)
class Forecast:
    """Exact odds of one attack, carried on until it is won or has to stop.

    ``outcomes`` lists the final (attacker armies, defender armies) with their probability,
    sorted; attacker armies are those left in the attacking territory before any move-in.
    """

    attackers: int
    defenders: int
    stop_at: int
    dice: int | None
    promised: bool
    win: Fraction
    expected_attackers_left: Fraction
    expected_defenders_left: Fraction
    outcomes: tuple[tuple[int, int, Fraction], ...]


@cache
def forecast(
    attackers: int,
    defenders: int,
    stop_at: int = 1,
    dice: int | None = None,
    promised: bool = True,
) -> Forecast:
    """Exact odds of attacking ``defenders`` armies from a territory holding ``attackers``.

    ``attackers`` counts every army on the attacking territory, including the one that must
    stay behind. The attack goes on while that territory holds more than ``max(1, stop_at)``
    armies; ``dice`` caps the attacker's dice (None: as many as allowed, up to 3). When
    ``promised`` (the rule of new games), no roll takes the attacker below ``stop_at``: fewer
    dice near it; otherwise (older games) the last roll may.
    """
    if attackers < 1:
        raise ValueError(f"the attacking territory holds at least 1 army, not {attackers}")
    if defenders < 1:
        raise ValueError(f"the defending territory holds at least 1 army, not {defenders}")
    if stop_at < 1:
        raise ValueError(f"stop_at is at least 1, not {stop_at}")
    if dice is not None and not 1 <= dice <= _MAX_ATTACK_DICE:
        raise ValueError(f"dice is 1, 2 or 3 (or left out for as many as allowed), not {dice}")

    floor = max(1, stop_at)
    start_total = attackers + defenders
    # Numerator of the probability of each live state, over UNIT^(armies removed so far).
    live: dict[tuple[int, int], int] = {(attackers, defenders): 1}
    final: dict[tuple[int, int], int] = {}
    for total in range(start_total, 0, -1):
        for a in range(min(attackers, total), 0, -1):
            d = total - a
            if d > defenders:
                break
            weight = live.pop((a, d), 0)
            if not weight:
                continue
            if a <= floor or d == 0:
                final[(a, d)] = weight
                continue
            rolled = attack_dice_kept(a, dice, stop_at, promised)
            for lost_a, lost_d, w in _scaled_transitions(rolled, defence_dice(d)):
                key = (a - lost_a, d - lost_d)
                live[key] = live.get(key, 0) + weight * w
    assert not live, "every state is swept before the totals run out"

    denominator = _UNIT**start_total
    outcomes = tuple(
        (a, d, Fraction(n * _UNIT ** (a + d), denominator)) for (a, d), n in sorted(final.items())
    )
    win = sum((p for _, d, p in outcomes if d == 0), Fraction(0))
    expected_a = sum((a * p for a, _, p in outcomes), Fraction(0))
    expected_d = sum((d * p for _, d, p in outcomes), Fraction(0))
    return Forecast(
        attackers=attackers,
        defenders=defenders,
        stop_at=stop_at,
        dice=dice,
        promised=promised,
        win=win,
        expected_attackers_left=expected_a,
        expected_defenders_left=expected_d,
        outcomes=outcomes,
    )
