"""Self-play bots: legal, purposeful order files for any pending turn.

A bot plays to end the game: it trades sets, gives each of its best fronts the armies it needs to
take a weak neighbour (one that finishes a continent, or belongs to a weak player, so that players
are eliminated and games end), attacks from there and on from what it expects to conquer, and
fortifies forward or from the interior toward a border. In a game with missions it plays towards
its own: the territories of its mission's continents and of the player it is to destroy are worth
more. In a draft it ranks its mission's continents first (or a favourite continent), now and then
ending the list with "rest". Its random choices (a `random.Random` the
caller seeds) vary every feature of an order file: "best" and explicit trades, numbers and "rest",
`dice`, `stop_at`, `move`, chained attacks, forward fortifications. `orders_for` checks each file
with `validation.validate` and round-trips it through `Orders.to_toml` and `parse_orders`, so
self-play also exercises the parser.
"""

from __future__ import annotations

import functools
import math
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

from pbem.core import missions, rules, validation
from pbem.core.board import Board, Continent
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import (
    ALL,
    BEST,
    MIN,
    REST,
    Attack,
    CardSet,
    Fortify,
    FortifyAmount,
    MoveRule,
    Orders,
    Place,
)
from pbem.core.state import NEUTRAL, FortifyMode, GameState, Phase

SECRET = "x"


class BotError(AssertionError):
    """A bot wrote orders that the rules reject or that do not survive a parse round trip."""


def orders_for(state: GameState, name: str, rng: random.Random) -> Orders:
    """Legal orders from `name` for the pending turn of `state` (checked and round-tripped)."""
    if state.phase is Phase.DRAFT:
        orders = draft_orders(state, name, rng)
    elif state.phase is Phase.SETUP:
        orders = setup_orders(state, name, rng)
    elif state.phase is Phase.PLAY:
        orders = turn_orders(state, name, rng)
    else:
        raise ValueError(f"game {state.game} is over: no orders to write")
    check_orders(state, orders)
    return orders


def check_orders(state: GameState, orders: Orders) -> Orders:
    """Assert that `orders` are valid now and that their TOML parses back to equal orders."""
    problems = validation.validate(state, orders)
    if problems:
        listing = "\n".join(p.format() for p in problems)
        raise BotError(f"bot orders rejected:\n{listing}\n--- orders ---\n{orders.to_toml()}")
    text = orders.to_toml()
    parsed = parse_orders(text, state.board)
    if parsed != orders:
        raise BotError(f"orders do not round-trip:\n{text}\n{orders!r}\n!=\n{parsed!r}")
    return parsed


def _header(state: GameState, name: str) -> dict[str, object]:
    return {"game": state.game, "turn": state.turn, "player": name, "secret": SECRET}


def split(total: int, parts: int, rng: random.Random) -> list[int]:
    """`parts` whole numbers of at least 1 adding up to `total` (parts <= total), largest first."""
    parts = max(1, min(parts, total))
    cuts = sorted(rng.sample(range(1, total), parts - 1)) if parts > 1 else []
    bounds = [0, *cuts, total]
    return sorted((b - a for a, b in zip(bounds, bounds[1:], strict=False)), reverse=True)


def placements(
    amounts: Sequence[tuple[str, int]], rng: random.Random, rest_chance: float = 0.6
) -> tuple[Place, ...]:
    """Place orders for (territory, armies); one of them may say "rest" instead of its number."""
    out = [Place(t, a) for t, a in amounts]
    if out and rng.random() < rest_chance:
        i = rng.randrange(len(out))
        out[i] = Place(out[i].territory, REST)
    return tuple(out)


@dataclass
class _Map:
    """A scratch copy of who holds what, for planning one player's turn."""

    board: Board
    name: str
    owner: dict[str, str]
    armies: dict[str, int]
    friends: frozenset[str]
    """The player and their team-mates: never attacked."""

    @classmethod
    def of(cls, state: GameState, name: str) -> _Map:
        owner, armies = {}, {}
        for t, h in state.territories.items():
            owner[t] = h.owner
            armies[t] = h.armies
        return cls(state.board, name, owner, armies, frozenset(state.team(name)))

    def enemies(self, territory: str) -> list[str]:
        friends = self.friends
        return [n for n in self.board.neighbours(territory) if self.owner[n] not in friends]

    def mine(self) -> list[str]:
        return [t for t, o in self.owner.items() if o == self.name]

    def borders(self) -> list[str]:
        owner, friends, neighbours = self.owner, self.friends, self.board.neighbours
        return [t for t in self.mine() if any(owner[n] not in friends for n in neighbours(t))]


def mission_goals(state: GameState, name: str) -> tuple[tuple[str, ...], str | None]:
    """The continents `name`'s mission asks for and the player it is to destroy (if any)."""
    mission = missions.current(state.player(name))
    if mission is None:
        return (), None
    return mission.continents, mission.target


def draft_orders(state: GameState, name: str, rng: random.Random) -> Orders:
    """A ranked list: the mission's continents (or a favourite one) first, the rest shuffled;
    now and then cut short with "rest"."""
    wanted, _ = mission_goals(state, name)
    if not wanted:
        wanted = (rng.choice(list(state.board.continents)),)
    first = [t for c in wanted for t in state.board.continents[c].territories]
    rng.shuffle(first)
    others = [t for t in state.board.names if t not in first]
    rng.shuffle(others)
    ranked: list[str] = first + others
    if rng.random() < 0.4:
        ranked = ranked[: rng.randint(0, 20)] + [REST]
    return Orders(**_header(state, name), draft=tuple(ranked))  # type: ignore[arg-type]


def setup_orders(state: GameState, name: str, rng: random.Random) -> Orders:
    """Setup: spread the armies to place over a few border territories, mostly in the continent
    where the player holds the most."""
    m = _Map.of(state, name)
    total = state.player(name).to_place
    borders = m.borders() or m.mine()
    held: dict[str, int] = {}
    for t in m.mine():
        c = state.board.territories[t].continent
        held[c] = held.get(c, 0) + 1
    borders.sort(key=lambda t: (-held[state.board.territories[t].continent], rng.random()))
    chosen = borders[: rng.randint(1, min(4, len(borders)))]
    amounts = list(zip(chosen, split(total, len(chosen), rng), strict=False))
    if amounts[0][1] > 1 and rng.random() < 0.15:  # the same territory twice is allowed
        first, armies = amounts[0]
        moved = rng.randint(1, armies - 1)
        amounts[0] = (first, armies - moved)
        amounts.append((first, moved))
    return Orders(**_header(state, name), place=placements(amounts, rng))  # type: ignore[arg-type]


def _choose_trade(
    state: GameState, name: str, rng: random.Random
) -> tuple[tuple[CardSet, ...] | str, int]:
    """The trade to write and the armies it gives: "best", one or two explicit sets, or none."""
    board, hand = state.board, state.player(name).hand
    sets = rules.sets_in(board, hand)
    if not sets:
        return (), 0
    if len(hand) < rules.FORCED_TRADE_HAND and rng.random() < 0.2:
        return (), 0  # hold the set for later
    if rng.random() < 0.4:
        (best,) = rules.sets_to_trade(state, name, BEST)
        return BEST, rules.trade_value(state, best, state.sets_traded)
    chosen: list[CardSet] = []
    left: tuple[str, ...] | None = hand
    for _ in range(2):
        assert left is not None
        options = rules.sets_in(board, left)
        if not options or (chosen and rng.random() < 0.3):
            break
        cards = list(rng.choice(options))
        rng.shuffle(cards)  # the order of a set's cards does not matter
        chosen.append((cards[0], cards[1], cards[2]))
        left = rules.remove_cards(left, cards)
    value = sum(rules.trade_value(state, s, state.sets_traded + i) for i, s in enumerate(chosen))
    return tuple(chosen), value


def turn_orders(state: GameState, name: str, rng: random.Random) -> Orders:
    """A play turn: trade, place, attack, fortify."""
    board = state.board
    m = _Map.of(state, name)
    player = state.player(name)
    armies = rules.reinforcement(state, name).total
    trade, value = _choose_trade(state, player.name, rng)
    armies += value

    counts: dict[str, int] = {}
    for o in m.owner.values():
        counts[o] = counts.get(o, 0) + 1
    players_left = [p for p in counts if p not in m.friends and p != NEUTRAL]
    goal_continents, goal_target = mission_goals(state, name)

    # The territories `name` holds in each continent (the map does not change while worths
    # are worked out).
    held_in = {
        c.name: sum(m.owner[t] == name for t in c.territories) for c in board.continents.values()
    }

    continent_of = _continent_of(board)

    def continent_worth(continent: Continent) -> float:
        """What any territory of `continent` is worth, before its owner is counted."""
        held = held_in[continent.name]
        missing = len(continent.territories) - held
        value = 6.0 * held / len(continent.territories) + continent.bonus * 0.3
        if missing == 1:
            value += 5.0
        if continent.name in goal_continents:
            value += 8.0
        return value

    continent_worths = {c.name: continent_worth(c) for c in board.continents.values()}

    def worth(target: str) -> float:
        """How much taking `target` is worth, before counting the armies on it."""
        owner = m.owner[target]
        value = continent_worths[continent_of[target].name]
        if owner == goal_target:
            value += 10.0
        if owner == NEUTRAL:
            value -= 4.0 if players_left else 0.0
        else:
            value += 12.0 / counts[owner]  # weak players first: their cards, and the end
            if counts[owner] <= 6:
                value += 8.0 - counts[owner]
        return value

    worths = {t: worth(t) for t in board.names if m.owner[t] not in m.friends}

    # Fronts: the best attacks, each given the armies it needs, as far as the armies go; the
    # rest to the best of them (or, now and then, all on one base or spread at random).
    borders = m.borders()
    held_armies, random_ = m.armies, rng.random
    pairs = []
    for s in borders:
        for t in m.enemies(s):
            ratio = held_armies[s] / (held_armies[t] + 1)
            pairs.append((worths[t] + 2 * (ratio if ratio < 4 else 4) + 2 * random_(), s, t))
    pairs.sort(reverse=True)
    base = pairs[0][1] if pairs else rng.choice(m.mine())
    roll = rng.random()
    if roll < 0.6 and armies > 1:
        alloc: dict[str, int] = {}
        budget = armies
        fronts: set[str] = set()
        for _, s, t in pairs:
            if t in fronts:
                continue
            need = max(0, (m.armies[t] * 13 + 9) // 10 + 3 - m.armies[s] - alloc.get(s, 0))
            if need > budget:
                continue
            fronts.add(t)
            if need:
                alloc[s] = alloc.get(s, 0) + need
                budget -= need
            if budget == 0:
                break
        if budget:
            alloc[base] = alloc.get(base, 0) + budget
        amounts = list(alloc.items())
    elif roll < 0.8 or armies < 2:
        amounts = [(base, armies)]
    else:
        parts = split(armies, rng.randint(2, 4), rng)
        others = [t for t in borders if t != base] or [base]
        amounts = [(base, parts[0])] + [(rng.choice(others), p) for p in parts[1:]]
    place = placements(amounts, rng, rest_chance=0.5)
    placed: dict[str, int] = {}
    for t, a in amounts:
        placed[t] = placed.get(t, 0) + a
    for t, a in placed.items():
        m.armies[t] += a

    attacks = _plan_attacks(m, worths, rng)
    fortify = _plan_fortify(state, m, attacks, placed, worths, rng)
    more: tuple[Fortify, ...] = ()
    if fortify is not None and state.options.fortifies > 1 and rng.random() < 0.6:
        second = _plan_fortify(state, m, attacks, placed, worths, rng)
        if second is not None and (second.source, second.target) != (
            fortify.source,
            fortify.target,
        ):
            more = (second,)
    return Orders(
        **_header(state, name),  # type: ignore[arg-type]
        trade=trade,  # type: ignore[arg-type]
        place=place,
        attack=tuple(a for a, _ in attacks),
        fortify=fortify,
        more_fortify=more,
    )


@functools.lru_cache(maxsize=4)
def _adjacency(board: Board) -> dict[str, tuple[str, ...]]:
    """Each territory's neighbours."""
    return {t: board.neighbours(t) for t in board.names}


@functools.lru_cache(maxsize=4)
def _continent_of(board: Board) -> dict[str, Continent]:
    """Each territory's continent."""
    return {t.name: board.continents[t.continent] for t in board.territories.values()}


def _plan_attacks(
    m: _Map, worths: dict[str, float], rng: random.Random
) -> list[tuple[Attack, bool]]:
    """Attacks in order, each with whether the plan expects it to conquer. `m` is updated to
    the expected outcome, so a later attack may start from an expected conquest."""
    order = m.mine()  # a list, not a set: the same seed must give the same game in any process
    mine = set(order)
    out: list[tuple[Attack, bool]] = []
    # The loop below is most of a bot's time: its names are local, the territories that are
    # mine or already targeted are one set (`taken`), and the best score starts below any.
    armies, adjacency, random_ = m.armies, _adjacency(m.board), rng.random
    taken = {t for t, o in m.owner.items() if o in m.friends}  # (a team-mate's: never)
    for _ in range(rng.choice((4, 8, 12, 20, 42))):
        best: tuple[float, str, str] | None = None
        best_score = -math.inf
        for s in order:
            a = armies[s]
            if a < 3 and (a != 2 or random_() >= 0.05):  # a 2 attacks now and then
                continue
            for t in adjacency[s]:
                if t in taken:
                    continue
                d = armies[t]
                if a - 1 <= d and random_() > 0.05:  # now and then a long shot
                    continue
                ratio = a / (d + 1)
                score = 2 * (ratio if ratio < 4 else 4) + worths[t] + 2 * random_()  # min(.., 4)
                if score > best_score:
                    best, best_score = (score, s, t), score
        if best is None:
            break
        _, s, t = best
        a, d = m.armies[s], m.armies[t]
        dice = None if rng.random() < 0.7 else rng.randint(1, 3)
        stop_at = 1 if rng.random() < 0.75 else rng.randint(2, max(2, a // 2))
        roll = rng.random()
        move: MoveRule = ALL if roll < 0.6 else MIN if roll < 0.8 else rng.randint(1, a)
        out_attack = Attack(s, t, dice, stop_at, move)
        taken.add(t)
        left = a - (d * 85 + 99) // 100  # the attacker loses about 0.85 armies per defender
        if left <= max(1, stop_at):
            m.armies[s] = max(1, min(a, stop_at))
            out.append((out_attack, False))
            continue
        last = min(3, left - 1, dice or 3)
        most = left - 1
        if move == ALL:
            moved = most
        elif move == MIN:
            moved = min(last, most)
        else:
            moved = max(last, min(int(move), most))
        m.armies[s] = left - moved
        m.armies[t] = moved
        m.owner[t] = m.name
        mine.add(t)
        taken.add(t)
        order.append(t)
        out.append((out_attack, True))
        # Now and then a second try at the same target from another territory: skipped if the
        # first attack takes it.
        if rng.random() < 0.05:
            others = [x for x in m.board.neighbours(t) if x in mine and x != s and m.armies[x] > 2]
            if others:
                out.append((Attack(rng.choice(others), t), False))
    return out


def _plan_fortify(
    state: GameState,
    m: _Map,
    attacks: list[tuple[Attack, bool]],
    placed: dict[str, int],
    worths: dict[str, float],
    rng: random.Random,
) -> Fortify | None:
    """Forward the armies an attack left behind, or bring the biggest interior stack toward the
    border (the most promising border, where armies may travel through own territories)."""
    if rng.random() < 0.05 or state.options.fortify is FortifyMode.NONE:
        return None
    board, name = state.board, m.name
    forward = [(m.armies[a.source], a) for a, hoped in attacks if hoped and a.move != ALL]
    if forward and rng.random() < 0.6:
        attack = max(forward, key=lambda f: f[0])[1]
        return Fortify(attack.source, attack.target, ALL)
    owner = {t: h.owner for t, h in state.territories.items()}  # as the turn starts
    original = [t for t, o in owner.items() if o == name]
    neighbours = board.neighbours
    if state.options.team_fortify and rng.random() < 0.3:  # now and then, to a team-mate
        mates = set(state.mates(name))
        pairs = [
            (s, n)
            for s in original
            if m.owner[s] == name and m.armies[s] >= 2
            for n in neighbours(s)
            if owner[n] in mates
        ]
        if pairs:
            source, target = rng.choice(pairs)
            return Fortify(source, target, ALL if rng.random() < 0.5 else 1)
    # Distance of each own territory from the nearest enemy, through own territories.
    distance = {t: 0 for t in original if any(owner[n] not in m.friends for n in neighbours(t))}
    todo = deque(distance)
    while todo:
        here = todo.popleft()
        for n in neighbours(here):
            if n not in distance and owner[n] == name:
                distance[n] = distance[here] + 1
                todo.append(n)
    interior = [
        t for t in original if distance.get(t, 0) > 0 and state.armies(t) + placed.get(t, 0) >= 2
    ]
    if not interior:
        return None
    source = max(interior, key=lambda t: (state.armies(t), rng.random()))
    have = state.armies(source) + placed.get(source, 0)
    if state.options.fortify in (FortifyMode.CONNECTED, FortifyMode.UNLIMITED):
        unlimited = state.options.fortify is FortifyMode.UNLIMITED
        reach = set(original) if unlimited else _reachable_now(state, name, source)
        borders = [t for t in board.names if t in reach and distance.get(t) == 0]
        if not borders:
            return None

        def promise(t: str) -> float:
            return max(worths[n] for n in board.neighbours(t) if n in worths) + rng.random()

        target = max(borders, key=promise)
    else:
        near = [n for n in board.neighbours(source) if n in distance]
        target = min(near, key=lambda n: (distance[n], rng.random()))
    amount: FortifyAmount
    roll = rng.random()
    if roll < 0.6:
        amount = ALL
    elif roll < 0.9 or not attacks:
        amount = rng.randint(1, have - 1)
    else:
        amount = have + rng.randint(0, 3)  # more than it holds: cut, with a note
    return Fortify(source, target, amount)


def _reachable_now(state: GameState, name: str, source: str) -> set[str]:
    seen = {source}
    todo = [source]
    while todo:
        for n in state.board.neighbours(todo.pop()):
            if n not in seen and state.owner(n) == name:
                seen.add(n)
                todo.append(n)
    return seen


# The kinds of order a bot writes, for the test that checks every feature is exercised.
def features(orders: Orders) -> set[str]:
    """Names of the order features used in `orders`."""
    out: set[str] = set()
    if orders.trade == BEST:
        out.add("trade best")
    elif orders.trade:
        out.add(f"trade {len(orders.trade)} explicit")
        if any("wild" in s for s in orders.trade):
            out.add("trade wild")
    for p in orders.place:
        out.add("place rest" if p.armies == REST else "place number")
    if len({p.territory for p in orders.place}) < len(orders.place):
        out.add("place twice")
    targets: set[str] = set()
    for a in orders.attack:
        out.add("attack")
        out.add(f"dice {a.dice}")
        out.add("stop_at" if a.stop_at != 1 else "stop_at default")
        out.add(f"move {a.move if isinstance(a.move, str) else 'number'}")
        if a.source in targets:
            out.add("chained attack")
        if a.target in targets:
            out.add("second try")
        targets.add(a.target)
    if orders.fortify is not None:
        out.add("fortify " + ("all" if orders.fortify.armies == ALL else "number"))
        if orders.fortify.source in targets or orders.fortify.target in targets:
            out.add("fortify forward")
    return out


__all__ = [
    "SECRET",
    "BotError",
    "check_orders",
    "features",
    "orders_for",
    "placements",
    "setup_orders",
    "split",
    "turn_orders",
]
