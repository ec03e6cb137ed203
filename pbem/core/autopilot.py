"""The autopilot: the orders a player gets who sent none by the deadline.

The rule, the same for every game and documented in docs/deadlines.md ("The autopilot"): trade
the best set when the hand forces a trade (5 or more cards); find the largest enemy stack that
borders the player's territories (another player's, never a team-mate's, the neutral's only if
no player's borders them; ties go to the first in board order); place every army, one at a time,
on the player's territory next to it that holds the fewest armies at that moment (ties: board
order). No attack, no fortify. In the setup turn the armies still to place go, one at a time, to
whichever of the player's territories that border another owner's (a player's, not a
team-mate's, or the neutral's) holds the fewest at that moment (ties: board order), so that the
borders are held rather than one territory; games made before format 7 (`autopilot = "front"`)
place the setup's armies as a turn's, which in a dealt setup puts them all next to the first
enemy territory in board order. In the draft turn the list is just "rest": every territory is
picked by the draft's fill-in rule (pbem/core/draft.py).

Pure: the orders are a function of the state alone, so the audit gets the same file again.
"""

from __future__ import annotations

from pbem.core import rules
from pbem.core.orders import BEST, REST, Orders, Place
from pbem.core.state import NEUTRAL, AutopilotRule, GameState, Phase

AUTOPILOT_FILE = "(autopilot)"
"""The file name the history gives an autopilot's order file: no received file has it."""


def front(state: GameState, player: str) -> tuple[str, ...]:
    """The player's territories that border the largest enemy stack next to them, in board
    order (every territory they hold when no enemy borders them)."""
    owned = state.owned(player)
    mine = set(owned)
    team = state.team(player)
    bordering = [
        t
        for t in state.board.names
        if state.owner(t) not in team and any(n in mine for n in state.board.neighbours(t))
    ]
    players = [t for t in bordering if state.owner(t) != NEUTRAL]
    candidates = players or bordering
    if not candidates:
        return owned
    # max() keeps the first of equal stacks: board order breaks ties.
    largest = max(candidates, key=state.armies)
    return tuple(t for t in owned if t in state.board.neighbours(largest))


def borders(state: GameState, player: str) -> tuple[str, ...]:
    """The player's territories that border another owner's (not a team-mate's), in board
    order (every territory they hold when none does)."""
    owned = state.owned(player)
    team = state.team(player)
    edge = tuple(
        t for t in owned if any(state.owner(n) not in team for n in state.board.neighbours(t))
    )
    return edge or owned


def spread(state: GameState, territories: tuple[str, ...], armies: int) -> tuple[Place, ...]:
    """`armies` placed one at a time on whichever of `territories` holds the fewest at that
    moment (the first in board order among equals), as one placement per territory."""
    held = {t: state.armies(t) for t in territories}
    placed = dict.fromkeys(territories, 0)
    for _ in range(armies):
        weakest = min(territories, key=lambda t: held[t])
        held[weakest] += 1
        placed[weakest] += 1
    return tuple(Place(t, n) for t, n in placed.items() if n)


def autopilot_orders(state: GameState, player: str, secret: str) -> Orders:
    """The autopilot's orders for `player` in the pending turn (see the module's rule)."""
    me = state.player(player)
    if state.phase is Phase.DRAFT:
        return Orders(state.game, state.turn, player, secret, draft=(REST,))
    trade: tuple[()] | str = ()
    where = front(state, player)
    if state.phase is Phase.SETUP:
        armies = me.to_place
        if state.options.autopilot is AutopilotRule.BORDERS:
            where = borders(state, player)
    else:
        armies = rules.reinforcement(state, player).total
        chosen = rules.forced_trade(state, player, ())
        if chosen is not None:
            trade = BEST
            armies += rules.trade_value(state, chosen, state.sets_traded)
    return Orders(
        game=state.game,
        turn=state.turn,
        player=player,
        secret=secret,
        trade=trade,  # type: ignore[arg-type]
        place=spread(state, where, armies),
    )


def autopilot_text(state: GameState, player: str, secret: str) -> str:
    """The autopilot's order file as text, with a comment saying what it is."""
    orders = autopilot_orders(state, player, secret)
    return (
        f"# Written by the autopilot: no valid orders from {player} for turn {state.turn} by "
        "the deadline.\n" + orders.to_toml()
    )
