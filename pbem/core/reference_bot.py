"""The reference bot: a sensible player that pbem ships, to play a seat or to play against.

It sees only what the seat's player sees (the board, every territory's owner and armies, its
own hand, the sets traded so far), and plays by one plain plan, the same every time for the
same position:

- **Trade** a set whenever it holds one (set values only grow).
- **Aim** at one continent: the one it holds the largest share of, counting its bonus, among
  those it does not hold yet; once it holds one, at the next. Held continents are guarded.
- **Place** every army on one territory: its territory next to the weakest enemy territory of
  the continent it aims at (or, holding them all, the border facing the largest enemy stack).
- **Attack** from there in a chain, each attack from the territory the last one takes, while
  pbem's exact odds give at least 60% to take the next one (weaker first, the aimed continent
  first); then, from any other territory of its own, single attacks at 75% or better.
- **Fortify** once: the largest stack on a territory with no enemy next to it moves, all but
  one army, to a neighbouring territory of its own that has an enemy next to it.

In a draft it ranks the territories of Australia and South America first; in the setup turn it
places as in play. Pure: the orders are a function of the position alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from pbem.core import odds, rules
from pbem.core.orders import ALL, BEST, REST, Attack, Fortify, Orders, Place
from pbem.core.state import FortifyMode, GameState, Phase

CHAIN_ODDS = Fraction(3, 5)
"""The least chance of taking a territory for which the chain of attacks goes on."""
SINGLE_ODDS = Fraction(3, 4)
"""The least chance of taking a territory for a single attack from elsewhere."""
CHAIN_LENGTH = 8
EXACT = 40
"""The largest stacks whose odds are computed as they are; larger ones are scaled down to it."""
DRAFT_FIRST = ("Australia", "South America")


def win_chance(attackers: int, defenders: int) -> Fraction:
    """The chance that `attackers` armies on a territory (one stays behind) take `defenders`,
    by pbem's exact odds (stacks over EXACT scaled down in proportion)."""
    if attackers < 2:
        return Fraction(0)
    largest = max(attackers, defenders)
    if largest > EXACT:
        attackers = max(2, attackers * EXACT // largest)
        defenders = max(1, defenders * EXACT // largest)
    return odds.forecast(attackers, defenders).win


def reference_orders(state: GameState, player: str, secret: str) -> Orders:
    """The reference bot's orders for `player` in the pending turn (see the module's plan)."""
    if state.phase is Phase.DRAFT:
        first = [
            t for c in DRAFT_FIRST if c in state.board.continents
            for t in state.board.continents[c].territories
        ]  # fmt: skip
        return Orders(state.game, state.turn, player, secret, draft=(*first, REST))
    me = state.player(player)
    trade: str | tuple[()] = ()
    if state.phase is Phase.SETUP:
        armies = me.to_place
    else:
        armies = rules.reinforcement(state, player).total
        chosen = rules.sets_to_trade(state, player, BEST)
        if chosen:
            trade = BEST
            armies += rules.trade_value(state, chosen[0], state.sets_traded)
    stack = _stack(state, player)
    place = (Place(stack, armies),) if armies else ()
    attacks: tuple[Attack, ...] = ()
    fortify = None
    if state.phase is Phase.PLAY:
        attacks = _attacks(state, player, stack, state.armies(stack) + armies)
        if state.options.fortify is not FortifyMode.NONE:
            fortify = _fortify(state, player, {a.target for a in attacks} | {stack})
    return Orders(
        game=state.game,
        turn=state.turn,
        player=player,
        secret=secret,
        trade=trade,  # type: ignore[arg-type]
        place=place,
        attack=attacks,
        fortify=fortify,
    )


def _enemies(state: GameState, player: str, territory: str) -> list[str]:
    """The territories next to `territory` of another owner (never a team-mate's)."""
    team = state.team(player)
    return [n for n in state.board.neighbours(territory) if state.owner(n) not in team]


def _aim(state: GameState, player: str) -> str | None:
    """The continent it aims at: the largest share held, with its bonus, of those not held."""
    best: tuple[float, str] | None = None
    for name, continent in state.board.continents.items():
        mine = sum(1 for t in continent.territories if state.owner(t) == player)
        size = len(continent.territories)
        if mine == size:
            continue
        score = (mine / size) * 2 + continent.bonus / size - 0.01 * size
        if best is None or score > best[0]:
            best = (score, name)
    return best[1] if best else None


def _stack(state: GameState, player: str) -> str:
    """Where every army goes: next to the weakest enemy territory of the continent aimed at,
    else on the border facing the largest enemy stack."""
    owned = state.owned(player)
    aim = _aim(state, player)
    wanted = set(state.board.continents[aim].territories) if aim else set()
    options = [
        (state.armies(e), -state.armies(t), t)
        for t in owned
        for e in _enemies(state, player, t)
        if e in wanted
    ]
    if options:
        return min(options)[2]
    edge = [t for t in owned if _enemies(state, player, t)]
    if not edge:
        return owned[0]
    return max(edge, key=lambda t: (max(state.armies(e) for e in _enemies(state, player, t)), t))


def _attacks(state: GameState, player: str, stack: str, armies: int) -> tuple[Attack, ...]:
    aim = _aim(state, player)
    wanted = set(state.board.continents[aim].territories) if aim else set()
    out: list[Attack] = []
    taken: set[str] = set()
    source, here = stack, armies
    for _ in range(CHAIN_LENGTH):
        # (under fog a territory whose armies the view does not show reads as 0: not attacked)
        targets = [
            e for e in _enemies(state, player, source) if e not in taken and state.armies(e) > 0
        ]
        scored = sorted(
            targets, key=lambda e: (e not in wanted, state.armies(e), e)
        )  # the aimed continent, then the weakest
        target = next((e for e in scored if win_chance(here, state.armies(e)) >= CHAIN_ODDS), None)
        if target is None:
            break
        out.append(Attack(source, target, move=ALL))
        taken.add(target)
        here = max(1, here - state.armies(target) - 1)  # about what moves in, all but one
        source = target
    for t in state.owned(player):
        if t == stack or t in taken or state.armies(t) < 3:
            continue
        for e in sorted(_enemies(state, player, t), key=lambda e: (state.armies(e), e)):
            if e in taken or not state.armies(e):
                continue
            if win_chance(state.armies(t), state.armies(e)) >= SINGLE_ODDS:
                out.append(Attack(t, e, move=ALL))
                taken.add(e)
                break
    return tuple(out)


def _fortify(state: GameState, player: str, busy: Iterable[str]) -> Fortify | None:
    """All but one army of the largest interior stack to a neighbouring border of its own."""
    skip = set(busy)
    interior = [
        t
        for t in state.owned(player)
        if t not in skip and state.armies(t) > 1 and not _enemies(state, player, t)
    ]
    for source in sorted(interior, key=lambda t: (-state.armies(t), t)):
        borders = [
            n
            for n in state.board.neighbours(source)
            if state.owner(n) == player and n not in skip and _enemies(state, player, n)
        ]
        if borders:
            return Fortify(source, min(borders), state.armies(source) - 1)
    return None
