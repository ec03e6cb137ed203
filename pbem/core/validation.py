"""Whether a player's orders are legal in the current state: every problem of an order file
that could be read, each with its line and what to do (`validate`), by the rules of
pbem.core.rules."""

from __future__ import annotations

from typing import Protocol

from pbem.core import fog
from pbem.core.orders import BEST, REST, CardSet, Orders
from pbem.core.rules import (
    CARD_TERRITORY_BONUS,
    best_set,
    card_bonus_territory,
    forced_trade,
    fortify_partners,
    is_set,
    reinforcement,
    remove_cards,
    trade_value,
)
from pbem.core.state import NEUTRAL, FortifyMode, GameState, Phase
from pbem.errors import Problem
from pbem.terminal import quoted


class _Fail(Protocol):
    """Records a problem: a message and its line, or a Problem made with Problem.of."""

    def __call__(self, message: str | Problem, line: int | None = None, /) -> None: ...


def validate(state: GameState, orders: Orders) -> list[Problem]:
    """Every reason these orders cannot be accepted for the pending turn (empty when valid).

    The secret is the shell's to check; this looks at game, turn, player and the orders.
    """
    problems: list[Problem] = []

    def fail(message: str | Problem, line: int | None = None) -> None:
        problems.append(message if isinstance(message, Problem) else Problem(message, line))

    if orders.game != state.game:
        fail(
            Problem.of(
                "these orders are for game '%(wrong)s', not '%(game)s'",
                orders.line_of("game"),
                wrong=quoted(orders.game),
                game=state.game,
            )
        )
    if state.phase is Phase.OVER:
        fail(
            Problem.of(
                "game '%(game)s' is over: no more orders are taken",
                orders.line_of("game"),
                game=state.game,
            )
        )
        return problems
    if orders.turn != state.turn:
        if orders.turn < state.turn:
            fail(
                Problem.of(
                    "these orders are for turn %(turn)s, an earlier turn; the pending turn is "
                    "%(pending)s: start from the order file in your latest report",
                    orders.line_of("turn"),
                    turn=orders.turn,
                    pending=state.turn,
                )
            )
        else:
            fail(
                Problem.of(
                    "these orders are for turn %(turn)s, a later turn; the pending turn is "
                    "%(pending)s: start from the order file in your latest report",
                    orders.line_of("turn"),
                    turn=orders.turn,
                    pending=state.turn,
                )
            )
    if not state.has_player(orders.player) or orders.player == NEUTRAL:
        fail(
            Problem.of(
                "there is no player '%(player)s' in this game",
                orders.line_of("player"),
                player=quoted(orders.player),
            )
        )
        return problems
    if orders.player not in state.awaiting():
        awaited = ", ".join(state.awaiting())
        fail(
            Problem.of(
                "it is not %(player)s's turn: the game awaits %(awaited)s; your order file will "
                "come with the report that makes it your turn",
                orders.line_of("player"),
                player=orders.player,
                awaited=awaited,
            )
            if awaited
            else Problem.of(
                "it is not %(player)s's turn: the game awaits nobody",
                orders.line_of("player"),
                player=orders.player,
            )
        )
        return problems
    if state.phase is Phase.DRAFT:
        _validate_draft(state, orders, fail)
        return problems
    if orders.draft:
        fail(
            Problem.of(
                "the draft is over: remove 'draft' (this turn places your setup armies)",
                orders.line_of("draft"),
            )
            if state.phase is Phase.SETUP
            else Problem.of(
                "the draft is over: remove 'draft' (this turn is a play turn)",
                orders.line_of("draft"),
            )
        )
    if state.phase is Phase.SETUP:
        _validate_setup(state, orders, fail)
    else:
        _validate_turn(state, orders, fail)
    return problems


def _validate_draft(state: GameState, orders: Orders, fail: _Fail) -> None:
    """The draft turn takes one ranked list naming every territory, or ending with "rest"."""
    for key in ("trade", "place", "attack", "fortify"):
        if getattr(orders, key):
            fail(
                Problem.of(
                    "the draft turn only takes your ranked list of territories: remove "
                    "'%(key)s' (you place armies in the setup turn after the draft)",
                    orders.line_of(key),
                    key=key,
                )
            )
    if not orders.draft:
        fail(
            Problem.of(
                'the draft turn needs your ranked list: draft = ["Iceland", "Greenland", ..., '
                '"rest"] (best first; "rest" lets pbem choose the others by its fill-in rule)',
                orders.line_of("player"),
            )
        )
        return
    if orders.draft[-1] == REST:
        return
    missing = [t for t in state.board.names if t not in orders.draft]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        fail(
            Problem.of(
                "your draft list names %(listed)s of the %(total)s territories: add the other "
                '%(missing)s (%(shown)s) or end the list with "rest"',
                orders.line_of("draft"),
                listed=len(orders.draft),
                total=len(state.board.names),
                missing=len(missing),
                shown=shown,
            )
        )


def _validate_setup(state: GameState, orders: Orders, fail: _Fail) -> None:
    for key in ("trade", "attack", "fortify"):
        if getattr(orders, key):
            fail(
                Problem.of(
                    "the setup turn only places armies: remove '%(key)s'",
                    orders.line_of(key),
                    key=key,
                )
            )
    player = state.player(orders.player)
    _validate_placement(state, orders, player.to_place, True, fail)


def _validate_turn(state: GameState, orders: Orders, fail: _Fail) -> None:
    player = state.player(orders.player)
    owned = set(state.owned(player.name))
    hand: tuple[str, ...] = player.hand
    armies = reinforcement(state, player.name).total
    traded = state.sets_traded
    trade_line = orders.line_of("trade")
    sets: list[CardSet] = []
    if orders.trade == BEST:
        chosen = best_set(state.board, hand, owned, rule=state.options.cards)
        if chosen is not None:  # with no set, "best" trades nothing (the check says so)
            armies += trade_value(state, chosen, traded)
            traded += 1
            hand = remove_cards(hand, chosen) or hand
            sets.append(chosen)
    elif orders.trade and not state.options.with_cards:
        fail(Problem.of("this game plays without cards: leave out trade", trade_line))
    else:
        for cards in orders.trade:
            left = remove_cards(hand, cards)
            if left is None:
                if hand:
                    fail(
                        Problem.of(
                            "you do not hold all of %(cards)s (your hand: %(hand)s)",
                            trade_line,
                            cards=", ".join(cards),
                            hand=", ".join(hand),
                        )
                    )
                else:
                    fail(
                        Problem.of(
                            "you do not hold all of %(cards)s (your hand: no cards)",
                            trade_line,
                            cards=", ".join(cards),
                        )
                    )
            elif not is_set(state.board, cards):
                fail(
                    Problem.of(
                        "%(cards)s is not a set: trade three alike, one of each, or two and a wild",
                        trade_line,
                        cards=", ".join(cards),
                    )
                )
            else:
                hand = left
                armies += trade_value(state, cards, traded)
                traded += 1
                sets.append(cards)
    forced = forced_trade(state, player.name, orders.trade)
    spare = 0
    if forced is not None:  # pbem trades it; placements may leave its armies out (a warning)
        spare = trade_value(state, forced, traded)
        armies += spare
        sets.append(forced)
    placed = _validate_placement(state, orders, armies, False, fail, spare)
    bonus = card_bonus_territory(sets, owned, allowed=state.options.territory_bonus)
    if bonus is not None:
        placed[bonus] = placed.get(bonus, 0) + CARD_TERRITORY_BONUS

    # Attacks: a later attack may start from a territory an earlier one is to conquer.
    reachable = set(owned)
    mates = state.mates(player.name)
    pairs: dict[tuple[str, str], int] = {}
    for attack in orders.attack:
        line = attack.line
        pair = (attack.source, attack.target)
        pairs[pair] = pairs.get(pair, 0) + 1
        if state.options.fogged and pairs[pair] == fog.MOST_ATTACKS_ON_A_PAIR + 1:
            fail(
                Problem.of(
                    "a game with fog allows %(most)s attacks on '%(target)s' from '%(source)s' "
                    "a turn",
                    line,
                    most=fog.MOST_ATTACKS_ON_A_PAIR,
                    target=attack.target,
                    source=attack.source,
                )
            )
        if not state.board.adjacent(attack.source, attack.target):
            fail(
                Problem.of(
                    "cannot attack '%(target)s' from '%(source)s': not adjacent",
                    line,
                    target=attack.target,
                    source=attack.source,
                )
            )
        if attack.source not in reachable:
            fail(
                Problem.of(
                    "cannot attack from '%(source)s': it is not yours "
                    "(and no earlier attack of yours takes it)",
                    line,
                    source=attack.source,
                )
            )
        elif attack.source in owned:
            after = state.armies(attack.source) + placed.get(attack.source, 0)
            if after < 2:
                fail(
                    Problem.of(
                        "cannot attack from '%(source)s': it will hold %(armies)s army, and an "
                        "attack needs at least 2",
                        line,
                        source=attack.source,
                        armies=after,
                    )
                )
        if attack.target in owned:
            fail(
                Problem.of(
                    "cannot attack '%(target)s': it is already yours", line, target=attack.target
                )
            )
        elif mates and state.owner(attack.target) in mates:
            fail(
                Problem.of(
                    "cannot attack '%(target)s': %(player)s, your team-mate, holds it",
                    line,
                    target=attack.target,
                    player=state.owner(attack.target),
                )
            )
        reachable.add(attack.target)
    _validate_fortify(state, orders, reachable, fail)


def _validate_fortify(state: GameState, orders: Orders, reachable: set[str], fail: _Fail) -> None:
    """The fortifications: as many as the game allows, each between two territories the
    player will hold (adjacent ones where the game says so). More armies than there will be
    are cut with a note when the turn is resolved, as after an attack (which may change what
    is there): `fortify_move`."""
    fortifications = orders.fortifications
    if not fortifications:
        return
    most = state.options.fortifies
    if state.options.fortify is FortifyMode.NONE:
        fail(
            Problem.of(
                "this game has no fortification: leave out the fortify table",
                fortifications[0].line,
            )
        )
        return
    if len(fortifications) > most:
        fail(
            Problem.of(
                "%(count)s fortifications: this game allows %(most)s a turn",
                fortifications[most].line,
                count=len(fortifications),
                most=most,
            )
        )
    partners = fortify_partners(state, orders.player)
    for fortify in fortifications:
        line = fortify.line
        if fortify.source == fortify.target:
            fail(Problem.of("fortify needs two different territories", line))
        if fortify.source not in reachable:
            fail(
                Problem.of(
                    "cannot fortify with '%(territory)s': it is not yours",
                    line,
                    territory=fortify.source,
                )
            )
        # (a team-mate's territory, where the game allows it: no attack changes its owner)
        if fortify.target not in reachable and not (
            partners and state.owner(fortify.target) in partners
        ):
            fail(
                Problem.of(
                    "cannot fortify '%(territory)s': neither you nor a team-mate holds it",
                    line,
                    territory=fortify.target,
                )
                if partners
                else Problem.of(
                    "cannot fortify with '%(territory)s': it is not yours",
                    line,
                    territory=fortify.target,
                )
            )
        if state.options.fortify is FortifyMode.ADJACENT and not state.board.adjacent(
            fortify.source, fortify.target
        ):
            fail(
                Problem.of(
                    "cannot fortify '%(target)s' from '%(source)s': not adjacent (this game "
                    "fortifies between adjacent territories only)",
                    line,
                    target=fortify.target,
                    source=fortify.source,
                )
            )


def _validate_placement(
    state: GameState, orders: Orders, armies: int, setup: bool, fail: _Fail, spare: int = 0
) -> dict[str, int]:
    """Check that placements add up to exactly `armies` (or to `armies - spare`: the armies of
    a forced trade pbem makes for the player, which then go with the last placement, as
    `placement_amounts` gives them); returns armies per territory."""
    placed: dict[str, int] = {}
    fixed = 0
    rest_line: int | None = None
    has_rest = False
    for place in orders.place:
        if place.territory not in state.territories:
            pass  # a misspelt name, already reported when the file was read
        elif state.owner(place.territory) != orders.player:
            fail(
                Problem.of(
                    "cannot place on '%(territory)s': it is not yours",
                    place.line,
                    territory=place.territory,
                )
            )
        if place.armies == REST:
            has_rest = True
            rest_line = place.line
        else:
            fixed += int(place.armies)
            placed[place.territory] = placed.get(place.territory, 0) + int(place.armies)
    values: dict[str, str | int] = {"fixed": fixed, "armies": armies, "more": armies - fixed}
    if has_rest:  # not `rest_line`: orders built in code carry no line numbers
        for place in orders.place:
            if place.armies == REST:
                if fixed >= armies:
                    fail(
                        Problem.of(
                            '"rest" leaves nothing: the other placements already use %(fixed)s '
                            "of your setup armies (%(armies)s)",
                            rest_line,
                            **values,
                        )
                        if setup
                        else Problem.of(
                            '"rest" leaves nothing: the other placements already use %(fixed)s '
                            "of your reinforcements (%(armies)s)",
                            rest_line,
                            **values,
                        )
                    )
                placed[place.territory] = placed.get(place.territory, 0) + armies - fixed
    elif spare and orders.place and fixed == armies - spare:
        where = orders.place[-1].territory
        placed[where] = placed.get(where, 0) + spare
    elif fixed != armies:
        last = len(orders.place) - 1
        line = (
            orders.line_of(f"place.{last}.armies") or orders.place[-1].line
            if orders.place
            else orders.line_of("player")
        )
        if fixed > armies:
            fail(
                Problem.of(
                    "too many armies placed: %(fixed)s, but your setup armies are %(armies)s",
                    line,
                    **values,
                )
                if setup
                else Problem.of(
                    "too many armies placed: %(fixed)s, but your reinforcements are %(armies)s",
                    line,
                    **values,
                )
            )
        else:
            fail(
                Problem.of(
                    "%(fixed)s armies placed, but your setup armies are %(armies)s: place "
                    '%(more)s more (armies = "rest" places whatever is left)',
                    line,
                    **values,
                )
                if setup
                else Problem.of(
                    "%(fixed)s armies placed, but your reinforcements are %(armies)s: place "
                    '%(more)s more (armies = "rest" places whatever is left)',
                    line,
                    **values,
                )
            )
    return placed
