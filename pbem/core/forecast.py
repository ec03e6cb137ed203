"""The forecast of a whole order file: what each step will do, followed in order as the engine
plays it, over the joint distribution of the armies (and owners) of the territories it names.

The placements and trades are certain. Each attack then starts from whatever earlier attacks
left: the source may have been emptied by a move-in, lost to nobody (an attack from a
territory an earlier attack failed to take) or worn down; the target may already be taken. For
every such world the battle's Markov chain (`pbem.core.odds`) gives the exact distribution of
its end; the move-in follows `rules.move_in` with the dice of the last roll (a winning roll
costs the attacker nothing, so its dice follow from the armies left). Territories no later step
names are summed out as the plan goes on, which keeps the distribution small: ten attacks from
50-army stacks take a few milliseconds each.

`forecast_plan(exact=True)` computes with fractions (exact, slow for big stacks: for tests and
small cases); by default it computes with floats from the same chain (rounding error only, no
sampling). Pure: no file, clock or print, and no sentence: `pbem.present.plan` tells a
forecast in the reader's language.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from typing import Any, Generic, TypeVar

from pbem.core import rules
from pbem.core.odds import LARGEST, roll_outcomes
from pbem.core.orders import Attack, Fortify, Orders
from pbem.core.state import NEUTRAL, FortifyMode, GameState, Holding, Phase

__all__ = [
    "AttackForecast",
    "FortifyForecast",
    "PlanForecast",
    "forecast_plan",
]

P = TypeVar("P", float, Fraction)

Cell = tuple[bool, int | None]
"""One territory in a world: whether the player holds it, and its armies (None: summed out)."""
World = tuple[Cell, ...]


@dataclass(frozen=True)
class Distribution(Generic[P]):
    """A distribution of army counts: (armies, probability) pairs, sorted, summing to 1."""

    values: tuple[tuple[int, P], ...]

    @property
    def mean(self) -> float:
        return float(sum(float(n) * float(p) for n, p in self.values))

    @property
    def variance(self) -> float:
        mean = self.mean
        return float(sum(float(p) * (n - mean) ** 2 for n, p in self.values))

    @property
    def low(self) -> int:
        return self.values[0][0]

    @property
    def high(self) -> int:
        return self.values[-1][0]

    def probability(self, armies: int) -> P | int:
        return next((p for n, p in self.values if n == armies), 0)

    @property
    def likely(self) -> int:
        """The most likely number of armies."""
        return max(self.values, key=lambda v: v[1])[0]


def _distribution(weights: Mapping[int, P], total: P) -> Distribution[P]:
    return Distribution(tuple((n, weights[n] / total) for n in sorted(weights)))


@dataclass(frozen=True)
class AttackForecast(Generic[P]):
    """One attack of the plan. `happens` and `takes` are unconditional; the distributions are
    those of the worlds where the attack happens: the armies on each side when it starts, and
    after it (the source after any move-in; the target holding the defender's survivors, or the
    armies moved in when taken). `skipped` gives the engine's reason and its probability."""

    attack: Attack
    happens: P
    takes: P
    skipped: tuple[tuple[str, P], ...]
    attackers: Distribution[P] | None
    defenders: Distribution[P] | None
    source_after: Distribution[P] | None
    target_after: Distribution[P] | None
    may_eliminate: str | None = None
    too_large: bool = False
    unseen: bool = False
    """Under fog: the armies on the target are not known to the player (no forecast)."""


@dataclass(frozen=True)
class FortifyForecast(Generic[P]):
    """The fortification: its probability, the armies it moves when it happens, why not."""

    fortify: Fortify
    happens: P
    moved: Distribution[P] | None
    skipped: tuple[tuple[str, P], ...]
    cut: P


@dataclass(frozen=True)
class PlanForecast(Generic[P]):
    trades: tuple[tuple[tuple[str, str, str], int], ...]
    placements: tuple[tuple[str, int], ...]
    card_bonus: str | None
    attacks: tuple[AttackForecast[P], ...]
    fortify: FortifyForecast[P] | None
    stopped: bool = False
    """Whether an attack had too many armies to follow: later steps are not forecast."""
    forced: bool = False
    """Whether the trade is the forced one pbem makes for orders that trade none."""
    more_fortify: tuple[FortifyForecast[P], ...] = ()
    """The fortifications after the first, each after those before it (a game that allows
    more than one a turn)."""
    fortify_unknown: bool = False
    """Whether a fortification depends on too many attacks to forecast (`MOST_WORLDS`): it and
    those after it are not forecast."""

    @property
    def fortifications(self) -> tuple[FortifyForecast[P], ...]:
        return ((self.fortify,) if self.fortify else ()) + self.more_fortify


class _TooLarge(Exception):
    pass


MOST_WORLDS = 50_000
"""The most worlds the forecast joins into one distribution: a fortification through chains of
territories (`--fortify connected`) depends on the owner of every territory the plan names, and
each independent attack doubles the ways they may fall (2^19 for 19 attacks): past this, the
fortification is not forecast, and the orders are still checked."""


@cache
def _transitions(
    attacker_dice: int, defender_dice: int, exact: bool
) -> tuple[tuple[int, int, Any], ...]:
    return tuple(
        (la, ld, p if exact else float(p))
        for (la, ld), p in roll_outcomes(attacker_dice, defender_dice).items()
    )


def _battle(
    start: Mapping[tuple[int, int], P],
    attack: Attack,
    promised: bool,
    exact: bool,
) -> dict[tuple[int, int], P]:
    """Push a distribution of (attacker, defender) armies through the battle's chain to its
    end, as `odds.forecast` does for one start; every roll removes an army, so the states are
    swept by decreasing total."""
    floor = max(1, attack.stop_at)
    buckets: defaultdict[int, dict[tuple[int, int], P]] = defaultdict(dict)
    for (a, d), w in start.items():
        if a + d > LARGEST:
            raise _TooLarge
        bucket = buckets[a + d]
        bucket[(a, d)] = bucket.get((a, d), 0) + w
    final: dict[tuple[int, int], P] = {}
    for total in range(max(buckets), 0, -1):
        bucket = buckets.pop(total, {})
        if not bucket:
            continue
        for (a, d), w in bucket.items():
            if a <= floor or d == 0:
                final[(a, d)] = final.get((a, d), 0) + w
                continue
            dice = rules.attack_dice_kept(a, attack.dice, attack.stop_at, promised)
            for la, ld, p in _transitions(dice, rules.defence_dice(d), exact):
                nxt = buckets[total - la - ld]
                key = (a - la, d - ld)
                nxt[key] = nxt.get(key, 0) + w * p
    return final


@cache
def _battle_from(
    a: int, d: int, stop_at: int, dice: int | None, promised: bool, exact: bool
) -> tuple[tuple[tuple[int, int], Any], ...]:
    """The end of one battle from (a, d), with probability 1 at the start (cached: the same
    start comes back in many worlds of a plan)."""
    attack = Attack("", "", dice, stop_at)
    one: Any = Fraction(1) if exact else 1.0
    return tuple(_battle({(a, d): one}, attack, promised, exact).items())


class _Plan(Generic[P]):
    """The working distribution, kept as independent factors: each a joint distribution of
    worlds over some of the plan's territories. A step joins the factors of the territories it
    names (attacks from different stacks stay independent, which keeps every factor small);
    the step then works on that factor (`names`, `index`, `worlds`)."""

    def __init__(self, state: GameState, player: str, start: Mapping[str, Cell], exact: bool):
        self.state = state
        self.player = player
        self.exact = exact
        self.one: P = Fraction(1) if exact else 1.0  # type: ignore[assignment]
        self.zero: P = Fraction(0) if exact else 0.0  # type: ignore[assignment]
        self.all_names = set(start)
        self.factors: list[tuple[list[str], dict[World, P]]] = [
            ([name], {(cell,): self.one}) for name, cell in start.items()
        ]
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.worlds: dict[World, P] = {}

    def add(self, into: dict[World, P], world: World, w: P) -> None:
        into[world] = into.get(world, self.zero) + w

    def focus(self, names: Iterable[str], bounded: bool = False) -> None:
        """Join the factors that hold any of `names` into the working one; `bounded`: _TooLarge
        instead when that would make more than MOST_WORLDS worlds."""
        wanted = set(names)
        size = 1
        for factor_names, factor_worlds in self.factors if bounded else ():
            if not wanted.isdisjoint(factor_names):
                size *= len(factor_worlds)
                if size > MOST_WORLDS:
                    raise _TooLarge
        joined: list[str] = []
        worlds: dict[World, P] = {(): self.one}
        rest: list[tuple[list[str], dict[World, P]]] = []
        for factor_names, factor_worlds in self.factors:
            if wanted.isdisjoint(factor_names):
                rest.append((factor_names, factor_worlds))
                continue
            joined += factor_names
            worlds = {a + b: wa * wb for a, wa in worlds.items() for b, wb in factor_worlds.items()}
        rest.append((joined, worlds))
        self.factors = rest
        self.names, self.worlds = joined, worlds
        self.index = {t: i for i, t in enumerate(joined)}

    def store(self) -> None:
        """Put the working factor back (it is the last one)."""
        self.factors[-1] = (self.names, self.worlds)

    def forget(self, keep: set[str], keep_owners: bool) -> None:
        """Sum out the territories no later step names (keeping their owner when a connected
        fortification needs to know who holds what)."""
        factors = []
        for names, worlds in self.factors:
            if keep_owners:
                merged: dict[World, P] = {}
                for world, w in worlds.items():
                    cells = tuple(
                        cell if names[i] in keep else (cell[0], None)
                        for i, cell in enumerate(world)
                    )
                    self.add(merged, cells, w)
                factors.append((names, merged))
                continue
            kept = [i for i, name in enumerate(names) if name in keep]
            if not kept:
                continue
            summed: dict[World, P] = {}
            for world, w in worlds.items():
                self.add(summed, tuple(world[i] for i in kept), w)
            factors.append(([names[i] for i in kept], summed))
        self.factors = factors

    def attack(self, attack: Attack) -> AttackForecast[P]:
        self.focus((attack.source, attack.target))
        s, t = self.index[attack.source], self.index[attack.target]
        promised = self.state.options.stop_at_promised
        skipped: dict[str, P] = {}
        groups: defaultdict[World, dict[tuple[int, int], P]] = defaultdict(dict)
        after: dict[World, P] = {}
        attackers: dict[int, P] = {}
        defenders: dict[int, P] = {}
        for world, w in self.worlds.items():
            (mine_s, a), (mine_t, d) = world[s], world[t]
            assert a is not None and d is not None, "the territories of a step are kept"
            reason = None
            if not mine_s:
                reason = f"you do not hold {attack.source}"
            elif mine_t:
                reason = f"you already hold {attack.target}"
            elif a < 2 or a <= attack.stop_at:
                reason = (
                    f"{attack.source} has only 1 army: an attack needs 2"
                    if a < 2
                    else f"{attack.source} has {a} armies (stop at {attack.stop_at})"
                )
            if reason is not None:
                skipped[reason] = skipped.get(reason, self.zero) + w
                self.add(after, world, w)
                continue
            attackers[a] = attackers.get(a, self.zero) + w
            defenders[d] = defenders.get(d, self.zero) + w
            rest = tuple((False, None) if i in (s, t) else cell for i, cell in enumerate(world))
            group = groups[rest]
            group[(a, d)] = group.get((a, d), self.zero) + w
        happens = sum(attackers.values(), self.zero)
        takes = self.zero
        source_after: dict[int, P] = {}
        target_after: dict[int, P] = {}
        for rest, start in groups.items():
            for (a, d), w in self._ends(start, attack, promised):
                if d == 0:
                    dice = rules.attack_dice_kept(a, attack.dice, attack.stop_at, promised)
                    moved, _ = rules.move_in(a, dice, attack.move)
                    left, target = a - moved, (True, moved)
                    takes += w
                else:
                    left, target = a, (False, d)
                cells = list(rest)
                cells[s] = (True, left)
                cells[t] = target
                self.add(after, tuple(cells), w)
                source_after[left] = source_after.get(left, self.zero) + w
                target_after[target[1]] = target_after.get(target[1], self.zero) + w
        self.worlds = after
        self.store()
        return AttackForecast(
            attack=attack,
            happens=happens,
            takes=takes,
            skipped=tuple(sorted(skipped.items(), key=lambda r: -r[1])),
            attackers=_distribution(attackers, happens) if happens else None,
            defenders=_distribution(defenders, happens) if happens else None,
            source_after=_distribution(source_after, happens) if happens else None,
            target_after=_distribution(target_after, happens) if happens else None,
            may_eliminate=self.eliminated_by(attack),
        )

    def _ends(
        self, start: Mapping[tuple[int, int], P], attack: Attack, promised: bool
    ) -> list[tuple[tuple[int, int], P]]:
        """Where the battle ends from each start, weighted: one start is looked up in a cache,
        several are swept together."""
        if len(start) > 1:
            return list(_battle(start, attack, promised, self.exact).items())
        ((a, d), w) = next(iter(start.items()))
        if a + d > LARGEST:
            raise _TooLarge
        ends = _battle_from(a, d, attack.stop_at, attack.dice, promised, self.exact)
        return [(end, w * p) for end, p in ends]

    def eliminated_by(self, attack: Attack) -> str | None:
        """The player this attack may knock out (their last territory, once the plan's
        earlier targets fall): the forecast does not follow the cards taken then."""
        defender = self.state.owner(attack.target)
        if defender in (NEUTRAL, self.player):
            return None
        if all(t in self.all_names for t in self.state.owned(defender)):
            return defender
        return None

    def fortify(self, fortify: Fortify) -> FortifyForecast[P]:
        connected = self.state.options.fortify is FortifyMode.CONNECTED
        self.focus(self.all_names if connected else (fortify.source, fortify.target), True)
        skipped: dict[str, P] = {}
        moved: dict[int, P] = {}
        cut = self.zero
        s, t = self.index[fortify.source], self.index[fortify.target]
        after: dict[World, P] = {}
        for world, w in self.worlds.items():
            view = self.overlay(world)
            reason = rules.can_fortify(view, self.player, fortify.source, fortify.target)
            if reason:
                skipped[reason] = skipped.get(reason, self.zero) + w
                self.add(after, world, w)
                continue
            armies, there = world[s][1], world[t][1]
            assert armies is not None and there is not None
            n, note = rules.fortify_move(armies, fortify.armies)
            moved[n] = moved.get(n, self.zero) + w
            if note:
                cut += w
            cells = list(world)
            # (the target stays its owner's: a team-mate's, where the game allows it)
            cells[s], cells[t] = (True, armies - n), (world[t][0], there + n)
            self.add(after, tuple(cells), w)  # (a later fortification starts from here)
        self.worlds = after
        self.store()
        happens = sum(moved.values(), self.zero)
        return FortifyForecast(
            fortify=fortify,
            happens=happens,
            moved=_distribution(moved, happens) if happens else None,
            skipped=tuple(sorted(skipped.items(), key=lambda r: -r[1])),
            cut=cut,
        )

    def overlay(self, world: World) -> GameState:
        """The state with this world's owners and armies on the plan's territories."""
        territories = dict(self.state.territories)
        for name, (mine, armies) in zip(self.names, world, strict=True):
            old = territories[name]
            owner = self.player if mine else old.owner
            territories[name] = Holding(owner, armies if armies is not None else old.armies)
        return replace(self.state, territories=territories)


def forecast_plan(
    state: GameState, orders: Orders, exact: bool = False, unknown: frozenset[str] = frozenset()
) -> PlanForecast:  # type: ignore[type-arg]
    """What accepted `orders` will do for the pending turn: trades and placements (certain),
    then each attack and the fortification, followed in order over every way the dice fall.
    `unknown`: under fog, the territories whose armies the player does not know; an attack on
    one is not forecast, nor any step after it."""
    player = orders.player
    if state.phase is Phase.PLAY:
        armies = rules.reinforcement(state, player).total
    else:
        armies = state.player(player).to_place
    trades = []
    traded = state.sets_traded
    forced = rules.forced_trade(state, player, orders.trade)
    sets = rules.sets_to_trade(state, player, orders.trade) if state.phase is Phase.PLAY else ()
    sets = (forced,) if forced else sets
    for cards in sets:
        value = rules.trade_value(state, cards, traded)
        traded += 1
        armies += value
        trades.append((cards, value))
    allowed = state.options.territory_bonus
    bonus = rules.card_bonus_territory(sets, state.owned(player), allowed=allowed) if sets else None
    placements = rules.placement_amounts(orders.place, armies)
    placed: dict[str, int] = defaultdict(int)
    if bonus is not None:
        placed[bonus] += rules.CARD_TERRITORY_BONUS
    for territory, amount in placements:
        placed[territory] += amount

    fortifications = orders.fortifications[: state.options.fortifies]
    steps: list[Attack | Fortify] = [*orders.attack, *fortifications]
    names: list[str] = []
    for step in steps:
        for name in (step.source, step.target):
            if name not in names:
                names.append(name)
    start: dict[str, Cell] = {
        t: (state.owner(t) == player, state.armies(t) + placed.get(t, 0)) for t in names
    }
    plan: _Plan = _Plan(state, player, start, exact)  # type: ignore[type-arg]
    keep_owners = bool(fortifications) and state.options.fortify is FortifyMode.CONNECTED
    attacks: list[AttackForecast] = []  # type: ignore[type-arg]
    stopped = False
    for i, attack in enumerate(orders.attack):
        if attack.target in unknown:
            zero = plan.zero
            attacks.append(
                AttackForecast(attack, zero, zero, (), None, None, None, None, unseen=True)
            )
            stopped = i + 1 < len(orders.attack) or bool(fortifications)
            break
        try:
            attacks.append(plan.attack(attack))
        except _TooLarge:
            attacks.append(
                AttackForecast(attack, plan.zero, plan.zero, (), None, None, None, None, None, True)
            )
            stopped = i + 1 < len(orders.attack) or bool(fortifications)
            break
        plan.forget(_named(steps[i + 1 :]), keep_owners)
    fortified: list[FortifyForecast] = []  # type: ignore[type-arg]
    too_many = False
    if not stopped:
        for n, fortify in enumerate(fortifications):
            if n:
                plan.forget(_named(steps[len(orders.attack) + n :]), keep_owners)
            try:
                fortified.append(plan.fortify(fortify))
            except _TooLarge:
                too_many = True  # it and those after it
                break
    return PlanForecast(
        trades=tuple(trades),
        placements=tuple(placements),
        card_bonus=bonus,
        attacks=tuple(attacks),
        fortify=fortified[0] if fortified else None,
        stopped=stopped,
        forced=forced is not None,
        more_fortify=tuple(fortified[1:]),
        fortify_unknown=too_many,
    )


def _named(steps: Iterable[Attack | Fortify]) -> set[str]:
    return {name for step in steps for name in (step.source, step.target)}
