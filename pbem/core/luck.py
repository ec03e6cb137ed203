"""Luck with numbers: each roll's losses against what its exact distribution expects.

For one roll of `a` attacking against `d` defending dice, `odds.roll_outcomes(a, d)` gives the
exact probability of each (attacker losses, defender losses). A side's expected losses are the
mean of that distribution, and the variance of its losses is known too. Over many rolls, luck
is the armies a side lost fewer than expected (positive: lucky), and the z-score divides that
by the standard deviation of the sum (the rolls are independent). Attack and defence are
counted apart: a player attacks on their own turn and defends on the others'.

A losing streak is a run of a player's rolls, one after the other in the game, in each of which
they lost armies and the other side lost none. Pure arithmetic on recorded rolls: anyone can
check it against `pbem dice`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache

from pbem.core.events import Rolled
from pbem.core.odds import roll_outcomes

__all__ = ["BattleLuck", "LuckCount", "PlayerLuck", "SideLuck", "expected_losses", "tally"]


@cache
def expected_losses(attacker_dice: int, defender_dice: int) -> tuple[Fraction, Fraction, Fraction]:
    """(expected attacker losses, expected defender losses, variance of either) for one roll.

    In a roll the two sides lose min(a, d) armies between them, so the defender's losses are
    that number less the attacker's, and the two have the same variance."""
    outcomes = roll_outcomes(attacker_dice, defender_dice)
    mean_a = sum((p * la for (la, _), p in outcomes.items()), Fraction(0))
    mean_d = sum((p * ld for (_, ld), p in outcomes.items()), Fraction(0))
    square = sum((p * la * la for (la, _), p in outcomes.items()), Fraction(0))
    return mean_a, mean_d, square - mean_a * mean_a


@dataclass(frozen=True)
class SideLuck:
    """One player's rolls on one side (attack or defence): what they lost against expectation."""

    rolls: int = 0
    expected: Fraction = Fraction(0)
    lost: int = 0
    variance: Fraction = Fraction(0)

    def add(self, expected: Fraction, lost: int, variance: Fraction) -> SideLuck:
        return SideLuck(
            self.rolls + 1, self.expected + expected, self.lost + lost, self.variance + variance
        )

    def __add__(self, other: SideLuck) -> SideLuck:
        return SideLuck(
            self.rolls + other.rolls,
            self.expected + other.expected,
            self.lost + other.lost,
            self.variance + other.variance,
        )

    @property
    def luck(self) -> float:
        """Armies lost fewer than expected (negative: more than expected)."""
        return float(self.expected - self.lost)

    @property
    def z(self) -> float:
        """The luck in standard deviations of the sum of the rolls (0 with no rolls)."""
        return self.luck / math.sqrt(self.variance) if self.variance else 0.0


@dataclass(frozen=True)
class BattleLuck:
    """One battle (consecutive rolls of one attack) as the attacker and defender saw it."""

    attacker: str
    defender: str
    source: str
    target: str
    rolls: int
    attacker_expected: Fraction
    attacker_lost: int
    defender_expected: Fraction
    defender_lost: int


@dataclass(frozen=True)
class PlayerLuck:
    """A player's luck in all their rolls: attack and defence apart, and their battles."""

    player: str
    attack: SideLuck = SideLuck()
    defence: SideLuck = SideLuck()
    longest_losing_streak: int = 0
    battles: tuple[BattleLuck, ...] = field(default=())

    @property
    def total(self) -> SideLuck:
        return self.attack + self.defence


def _battles(rolls: Sequence[Rolled]) -> list[list[Rolled]]:
    """Consecutive rolls of the same attack (same player, from, to) as one battle."""
    out: list[list[Rolled]] = []
    for r in rolls:
        last = out[-1][-1] if out else None
        if last is not None and (last.player, last.source, last.target) == (
            r.player,
            r.source,
            r.target,
        ):
            out[-1].append(r)
        else:
            out.append([r])
    return out


UNIT = Fraction(1, 6**10)
"""Every roll's expected losses and their variance are whole numbers of this (6^(a+d) throws,
a + d at most 5, squared for the variance): a count adds whole numbers, exactly."""


@cache
def _in_units(attacker_dice: int, defender_dice: int) -> tuple[int, int, int]:
    mean_a, mean_d, variance = expected_losses(attacker_dice, defender_dice)
    return units(mean_a), units(mean_d), units(variance)


def units(x: Fraction) -> int:
    """`x` as a whole number of UNIT; ValueError when it is not one."""
    whole = x / UNIT
    if whole.denominator != 1:
        raise ValueError(f"{x} is not a sum of expected losses")
    return whole.numerator


class LuckCount:
    """Each player's luck so far, roll by roll: their sides' sums and their losing streaks (the
    running tallies a game keeps between resolutions, and `tally`'s count)."""

    def __init__(self, players: Sequence[str]) -> None:
        # attack: rolls, expected losses and variance (in UNIT), losses; then defence's
        self.sums = {p: [0] * 8 for p in players}
        self.streak = dict.fromkeys(players, 0)
        self.longest = dict.fromkeys(players, 0)

    def copy(self) -> LuckCount:
        out = LuckCount(())
        out.sums = {p: list(s) for p, s in self.sums.items()}
        out.streak, out.longest = dict(self.streak), dict(self.longest)
        return out

    def side(self, player: str, defence: bool = False) -> SideLuck:
        """A player's luck in attack (in defence with `defence`)."""
        rolls, expected, variance, lost = self.sums[player][4 * defence : 4 * defence + 4]
        return SideLuck(rolls, expected * UNIT, lost, variance * UNIT)

    def set_side(self, player: str, side: SideLuck, defence: bool = False) -> None:
        """Set a player's luck in attack (defence) as it was counted before; ValueError for
        sums no rolls give."""
        values = [side.rolls, units(side.expected), units(side.variance), side.lost]
        self.sums[player][4 * defence : 4 * defence + 4] = values

    def roll(self, r: Rolled) -> tuple[Fraction, Fraction]:
        """Count one roll; the attacker's and the defender's expected losses in it."""
        mean_a, mean_d, variance = _in_units(len(r.attacker), len(r.defender))
        for who, lost, won, at, mean in (
            (r.player, r.attacker_losses, r.defender_losses, 0, mean_a),
            (r.defender_name, r.defender_losses, r.attacker_losses, 4, mean_d),
        ):
            sums = self.sums.get(who)
            if sums is None:
                continue
            sums[at] += 1
            sums[at + 1] += mean
            sums[at + 2] += variance
            sums[at + 3] += lost
            self.streak[who] = self.streak[who] + 1 if lost and not won else 0
            self.longest[who] = max(self.longest[who], self.streak[who])
        exact = expected_losses(len(r.attacker), len(r.defender))
        return exact[0], exact[1]


def tally(rolls: Iterable[Rolled], players: Sequence[str]) -> dict[str, PlayerLuck]:
    """The luck of each of `players` over `rolls` (in the order rolled); rolls against anyone
    else (the neutral armies) count only for the player on the other side."""
    rolls = list(rolls)
    count = LuckCount(players)
    battles: dict[str, list[BattleLuck]] = {p: [] for p in players}
    for battle in _battles(rolls):
        expected_a, expected_d = Fraction(0), Fraction(0)
        for r in battle:
            mean_a, mean_d = count.roll(r)
            expected_a += mean_a
            expected_d += mean_d
        first = battle[0]
        told = BattleLuck(
            first.player,
            first.defender_name,
            first.source,
            first.target,
            len(battle),
            expected_a,
            sum(r.attacker_losses for r in battle),
            expected_d,
            sum(r.defender_losses for r in battle),
        )
        for who in {first.player, first.defender_name}:
            if who in battles:
                battles[who].append(told)
    return {
        p: PlayerLuck(
            p, count.side(p), count.side(p, defence=True), count.longest[p], tuple(battles[p])
        )
        for p in players
    }
