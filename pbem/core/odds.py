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

The decision aids of every report print only the chance of taking a territory, to one decimal of
a percent, for many attacks: :func:`win_chance` gives it in floating point from one table of
every (attackers, defenders) state, shared by all the attacks asked about, and
:func:`printed_win` hands the aids either that float or, when it lies too close to where a
printed digit changes, the exact fraction; either way the percentage printed is the exact one's.
"""

from __future__ import annotations

import itertools
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from pbem.core.rules import attack_dice_kept, battle, defence_dice

__all__ = ["Forecast", "forecast", "percent", "printed_win", "roll_outcomes", "win_chance"]

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


def _check(attackers: int, defenders: int, stop_at: int, dice: int | None) -> None:
    if attackers < 1:
        raise ValueError(f"the attacking territory holds at least 1 army, not {attackers}")
    if defenders < 1:
        raise ValueError(f"the defending territory holds at least 1 army, not {defenders}")
    if stop_at < 1:
        raise ValueError(f"stop_at is at least 1, not {stop_at}")
    if dice is not None and not 1 <= dice <= _MAX_ATTACK_DICE:
        raise ValueError(f"dice is 1, 2 or 3 (or left out for as many as allowed), not {dice}")


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
    _check(attackers, defenders, stop_at, dice)
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


# --- the chance of winning in floating point ---------------------------------------------

FLUSH = 1e-16
"""A chance in the float table closer than this to 0 (or to 1) is kept as 0 (or 1): every
state is a weighted mean of the states a roll leads to, so the error this makes in any chance
is at most FLUSH for every roll that can still come (below 3e-14 for the largest battles)."""

NEAR = 1e-9
"""How close the float chance may come to a place where a percentage printed to one decimal
changes (x.x5%, 0.05% and 99.95%) before `printed_win` takes the exact fraction instead. The
float table is within 1e-12 of the exact chance for every battle of up to `LARGEST` armies
(tests/test_odds.py measures it), far inside this."""


@cache
def _float_outcomes(attacker_dice: int, defender_dice: int) -> tuple[tuple[int, int, float], ...]:
    """:func:`roll_outcomes` as (attacker losses, defender losses, probability) in floats."""
    return tuple(
        (a, d, float(p)) for (a, d), p in roll_outcomes(attacker_dice, defender_dice).items()
    )


class _Chances:
    """The chance of winning from every state (attackers, defenders) of one way of attacking
    (stop at, dice, promised), by totals of armies: ``diagonals[t][a]`` is the chance from
    ``a`` attackers against ``t - a`` defenders. A roll removes one or two armies, so a total's
    chances follow from the two totals below it; far from the line where the battle is even
    the chances are 0 or 1 (to within FLUSH), so only a band around it is worked out, each total
    at once from the one two below (one below with one die) where both sides roll the most dice
    they can, and state by state along the edges where they roll fewer."""

    def __init__(self, stop_at: int, dice: int | None, promised: bool) -> None:
        self.floor = max(1, stop_at)
        self.dice = dice
        self.promised = promised
        most = attack_dice_kept(10**6, dice, stop_at, promised)
        # the fewest attackers that roll the most dice (and so do all more)
        self.full = next(
            a
            for a in range(self.floor + 1, self.floor + 5)
            if attack_dice_kept(a, dice, stop_at, promised) == most
        )
        self.removed = min(most, 2)
        # the chance that a roll of both sides' most dice costs the attacker 0, 1 or 2 armies
        self.lost = {lost_a: p for lost_a, _, p in _float_outcomes(most, 2)}
        self.diagonals: list[list[float]] = [[0.0]]
        # the leading zeros and the first of the trailing ones of each total's chances
        self.bands: list[tuple[int, int]] = [(1, 1)]

    def chance(self, attackers: int, defenders: int) -> float:
        total = attackers + defenders
        while len(self.diagonals) <= total:
            self._extend()
        return self.diagonals[total][attackers]

    def _cell(self, a: int, t: int) -> float:
        """The chance from `a` attackers against `t - a` defenders, roll by roll."""
        d = t - a
        rolled = attack_dice_kept(a, self.dice, self.floor, self.promised)
        x = 0.0
        for lost_a, lost_d, p in _float_outcomes(rolled, defence_dice(d)):
            x += p * self.diagonals[t - lost_a - lost_d][a - lost_a]
        return x if x >= FLUSH else 0.0

    def _extend(self) -> None:
        t = len(self.diagonals)
        # a <= floor: stopped (0); a = t: won (1); between them the rolls
        row = [0.0] * (t + 1)
        row[t] = 1.0
        top = t - 2  # the most attackers that face 2 defenders
        low = max(self.full, self.floor + 1)
        edge = range(self.floor + 1, min(low, t - 1))  # fewer dice near the floor
        for a in edge:
            row[a] = self._cell(a, t)
        if t - 1 > self.floor:  # one defender: one die
            row[t - 1] = self._cell(t - 1, t)
        if low > top:  # no state where both roll the most dice
            zeros = next((a for a in range(t + 1) if row[a]), t)
            ones = next((a for a in range(t, -1, -1) if row[a] < 1.0), -1) + 1
        else:
            zeros_before, ones_before = self.bands[t - self.removed]
            start = max(low, zeros_before)
            # from `ones_before + removed` on, every state a roll leads to is won
            end = min(top, ones_before + self.removed - 1)
            if start <= end:
                row[start : end + 1] = self._band(self.diagonals[t - self.removed], start, end)
            won = max(low, end + 1)
            row[won : top + 1] = [1.0] * (top + 1 - won)
            # the rest of [low, top] is 0: look only where a chance was worked out
            band = range(start, end + 1)
            zeros = next((a for a in itertools.chain(edge, band, (won, t - 1)) if row[a]), t)
            lost = range(start - 1, start - 2 if start > low else start - 1, -1)
            behind = itertools.chain((t - 1,), reversed(band), lost, reversed(edge))
            ones = next((a for a in behind if row[a] < 1.0), self.floor) + 1
        self.diagonals.append(row)
        self.bands.append((zeros, ones))

    def _band(self, source: list[float], start: int, end: int) -> list[float]:
        """The chances of the states `start` to `end` attackers where both sides roll the most
        dice, each from the states its roll leads to (in `source`), nearly won ones rounded to
        1 and nearly lost ones to 0."""
        p1 = self.lost[1]
        if self.removed == 2:  # (2, 0), (1, 1), (0, 2): 2, 1 or 0 attackers lost
            p2 = self.lost[2]
            values = [
                z + p2 * (x - z) + p1 * (y - z)
                for x, y, z in zip(
                    source[start - 2 : end - 1],
                    source[start - 1 : end],
                    source[start : end + 1],
                    strict=True,
                )
            ]
        else:  # one die against two: (1, 0) or (0, 1)
            values = [
                y + p1 * (x - y)
                for x, y in zip(source[start - 1 : end], source[start : end + 1], strict=True)
            ]
        low = next((i for i, v in enumerate(values) if v >= FLUSH), len(values))
        values[:low] = [0.0] * low
        high = next(
            (i for i in range(len(values) - 1, low - 1, -1) if values[i] <= 1 - FLUSH), low - 1
        )
        values[high + 1 :] = [1.0] * (len(values) - high - 1)
        return values


@cache
def _chances(stop_at: int, dice: int | None, promised: bool) -> _Chances:
    return _Chances(stop_at, dice, promised)


def win_chance(
    attackers: int,
    defenders: int,
    stop_at: int = 1,
    dice: int | None = None,
    promised: bool = True,
) -> float:
    """The chance of winning of :func:`forecast` (``.win``), in floating point: within 1e-12 of
    the exact fraction for up to `LARGEST` armies. The table it is read from grows to the
    largest battle asked about and is kept, one per way of attacking: a few milliseconds for
    every battle of up to 600 armies at once."""
    _check(attackers, defenders, stop_at, dice)
    return _chances(stop_at, dice, promised).chance(attackers, defenders)


def _near_a_step(x: float) -> bool:
    """Whether `x` is within NEAR of a place where its percentage to one decimal changes: an
    odd number of 2000ths (0.05%, 0.15%, ..., 99.95%)."""
    scaled = x * 2000
    nearest = round(scaled)
    return nearest % 2 == 1 and abs(scaled - nearest) < NEAR * 2000


def printed_win(
    attackers: int,
    defenders: int,
    stop_at: int = 1,
    dice: int | None = None,
    promised: bool = True,
) -> float | Fraction:
    """The chance of winning to print as a percentage to one decimal: the float of
    :func:`win_chance`, or the exact fraction when the float is too near a place where a
    printed digit changes to be sure of the side it falls on. A battle that can be fought can
    be won and lost, so its float is kept strictly between 0 and 1 (a percentage of a float
    at 1 reads as certain)."""
    x = win_chance(attackers, defenders, stop_at, dice, promised)
    if attackers <= max(1, stop_at):
        return x  # no roll: 0, exactly
    if _near_a_step(x):
        return forecast(attackers, defenders, stop_at, dice, promised).win
    return min(max(x, sys.float_info.min), 1 - NEAR)
