"""The rules of classic Risk as pure functions: values, legality, battles, reinforcements."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pbem.core import fog
from pbem.core.board import WILD, Board, CardKind
from pbem.core.orders import ALL, BEST, REST, CardSet, Orders, Place
from pbem.core.state import NEUTRAL, CardRule, FortifyMode, GameState, Phase, TwoPlayer
from pbem.errors import Problem
from pbem.terminal import quoted

MIN_PLAYERS = 2
MAX_PLAYERS = 6
SET_VALUES = (4, 6, 8, 10, 12, 15)
FORCED_TRADE_HAND = 5
ELIMINATION_TRADE_HAND = 6
ELIMINATION_TRADE_DOWN_TO = 4
CARD_TERRITORY_BONUS = 2


class _Fail(Protocol):
    """Records a problem: a message and its line, or a Problem made with Problem.of."""

    def __call__(self, message: str | Problem, line: int | None = None, /) -> None: ...


def starting_armies(players: int, two_player: TwoPlayer = TwoPlayer.NEUTRAL) -> int:
    """Armies each player starts with: 35/30/25/20 for 3-6; 40 (with neutral) or 50 for two."""
    if players == 2:
        return 40 if two_player is TwoPlayer.NEUTRAL else 50
    table = {3: 35, 4: 30, 5: 25, 6: 20}
    if players not in table:
        raise ValueError(f"Risk is played by {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players}")
    return table[players]


def set_value(sets_traded: int) -> int:
    """The armies the next set gives when `sets_traded` sets were traded before in the game."""
    if sets_traded < len(SET_VALUES):
        return SET_VALUES[sets_traded]
    return SET_VALUES[-1] + 5 * (sets_traded - len(SET_VALUES) + 1)


FLAT_VALUES = {CardKind.INFANTRY: 4, CardKind.CAVALRY: 6, CardKind.ARTILLERY: 8}
"""A set of three alike, in a game of flat spoils (`--cards flat`)."""
FLAT_ONE_OF_EACH = 10


def flat_value(board: Board, cards: Sequence[str]) -> int:
    """What a set is worth in a game of flat spoils: three alike by their kind, one of each 10;
    a wild card stands for whatever makes the set worth most (with two cards of different
    kinds, or with the other wild card: one of each)."""
    kinds = [k for k in (board.card_kind(c) for c in cards) if k is not None]
    if len(set(kinds)) == len(kinds) and len(kinds) < 3 or len(set(kinds)) == 3:
        return FLAT_ONE_OF_EACH
    return FLAT_VALUES[kinds[0]]


def trade_value(state: GameState, cards: Sequence[str], sets_traded: int) -> int:
    """The armies a set gives when `sets_traded` sets were traded before in the game: by the
    count in a classic game, by what it shows in a game of flat spoils."""
    if state.options.cards is CardRule.FLAT:
        return flat_value(state.board, cards)
    return set_value(sets_traded)


def is_set(board: Board, cards: Sequence[str]) -> bool:
    """Three alike, one of each, or any two with a wild."""
    if len(cards) != 3:
        return False
    if WILD in cards:
        return True
    kinds = {board.card_kind(c) for c in cards}
    return len(kinds) in (1, 3)


def sets_in(board: Board, hand: Sequence[str]) -> tuple[CardSet, ...]:
    """Every distinct set the hand can trade, in hand order."""
    found: list[CardSet] = []
    for combo in itertools.combinations(hand, 3):
        key = (combo[0], combo[1], combo[2])
        if is_set(board, combo) and key not in found:
            found.append(key)
    return tuple(found)


def best_set(
    board: Board, hand: Sequence[str], owned: Iterable[str], *, rule: CardRule
) -> CardSet | None:
    """The set to trade when asked for "best": in a classic game every set is worth the same,
    so prefer one that shows a territory you hold (+2), then one that keeps your wild cards;
    in a game of flat spoils (`rule`), the set worth most first."""
    mine = set(owned)
    choices = sets_in(board, hand)
    if not choices:
        return None
    flat = rule is CardRule.FLAT
    return min(
        choices,
        key=lambda s: (
            -flat_value(board, s) if flat else 0,
            not any(c in mine for c in s),
            sum(c == WILD for c in s),
        ),
    )


def card_bonus_territory(
    sets: Iterable[CardSet], owned: Iterable[str], *, allowed: bool
) -> str | None:
    """The territory that gets the +2 of a turn's trades: the first traded card, in the order
    traded, that shows a territory the trader holds (once per turn); None in a game without
    the bonus (`allowed`: `Options.territory_bonus`)."""
    if not allowed:
        return None
    mine = set(owned)
    return next((c for cards in sets for c in cards if c in mine), None)


def sets_to_trade(
    state: GameState, player: str, trade: tuple[CardSet, ...] | Literal["best"]
) -> tuple[CardSet, ...]:
    """The sets an order file trades: those listed, or for "best" the best set held, if any."""
    if isinstance(trade, tuple):
        return trade
    hand = state.player(player).hand
    chosen = best_set(state.board, hand, state.owned(player), rule=state.options.cards)
    return (chosen,) if chosen else ()


def forced_trade(
    state: GameState, player: str, trade: tuple[CardSet, ...] | Literal["best"]
) -> CardSet | None:
    """The set pbem trades for a player who must trade (FORCED_TRADE_HAND or more cards at the
    start of a play turn) and whose orders trade none: the best one, as `trade = "best"` and
    the autopilot choose it. None when the orders trade, or need not."""
    if state.phase is not Phase.PLAY or trade != ():
        return None
    hand = state.player(player).hand
    if len(hand) < FORCED_TRADE_HAND:
        return None
    return best_set(state.board, hand, state.owned(player), rule=state.options.cards)


def placement_amounts(places: Sequence[Place], armies: int) -> tuple[tuple[str, int], ...]:
    """Each placement's territory and armies, "rest" being what the others leave of `armies`.
    Without "rest", what the placements leave (the armies of a forced trade pbem made for the
    player: validation allows nothing else) goes with the last placement."""
    fixed = sum(int(p.armies) for p in places if p.armies != REST)
    out = [(p.territory, armies - fixed if p.armies == REST else int(p.armies)) for p in places]
    if out and fixed < armies and all(p.armies != REST for p in places):
        territory, amount = out[-1]
        out[-1] = (territory, amount + armies - fixed)
    return tuple(out)


def remove_cards(hand: Sequence[str], cards: Iterable[str]) -> tuple[str, ...] | None:
    """The hand without `cards` (wild counted as often as named), or None if it lacks one."""
    rest = list(hand)
    for card in cards:
        if card not in rest:
            return None
        rest.remove(card)
    return tuple(rest)


@dataclass(frozen=True)
class Reinforcement:
    """The armies a turn gives before trading: territories // 3 (at least 3) and continents."""

    territories: int
    from_territories: int
    continents: tuple[str, ...]
    from_continents: int

    @property
    def total(self) -> int:
        return self.from_territories + self.from_continents


def reinforcement(state: GameState, player: str) -> Reinforcement:
    """What `player`'s next turn gives before any card trade."""
    owned = state.owned(player)
    count = len(owned)
    held = state.board.continents_within(owned)
    bonus = sum(state.board.continents[c].bonus for c in held)
    return Reinforcement(count, max(3, count // 3), held, bonus)


def attack_dice(armies: int, wanted: int | None = None) -> int:
    """Dice the attacker rolls: at most 3, one fewer than the armies, at most what was asked."""
    return max(0, min(3, armies - 1, wanted if wanted is not None else 3))


def attack_dice_kept(armies: int, wanted: int | None, stop_at: int, promised: bool) -> int:
    """Dice the attacker rolls with `stop_at`: when it is a promise, never so many that losing
    them all would take the territory below it (fewer dice when needed)."""
    rolled = attack_dice(armies, wanted)
    if promised:
        rolled = min(rolled, armies - max(1, stop_at))
    return max(0, rolled)


def defence_dice(armies: int) -> int:
    """The defender always rolls as many as allowed: 2 with two or more armies."""
    return min(2, armies)


def battle(attacker: Sequence[int], defender: Sequence[int]) -> tuple[int, int]:
    """Losses (attacker, defender): highest against highest, then second; ties to the defender."""
    a = sorted(attacker, reverse=True)
    d = sorted(defender, reverse=True)
    compared = min(len(a), len(d))
    if compared == 0:
        return 0, 0
    lost_d = (a[0] > d[0]) + (compared > 1 and a[1] > d[1])
    return compared - lost_d, lost_d


def move_in(armies: int, last_dice: int, rule: int | str) -> tuple[int, str | None]:
    """Armies moved into a conquered territory from one holding `armies`, and a note if the
    number asked for was changed: at least the dice of the last roll, one left behind."""
    most = armies - 1
    if rule == ALL:
        return most, None
    if rule == "min":
        return min(last_dice, most), None
    asked = int(rule)
    if asked < last_dice:
        return last_dice, f"asked to move {asked}, raised to {last_dice}: the dice of the last roll"
    if asked > most:
        return most, f"asked to move {asked}, cut to {most}: one army stays behind"
    return asked, None


def attack_dice_note(armies: int, wanted: int | None) -> str | None:
    """Why an attack from a territory with `armies` rolls fewer dice than its order's `dice`,
    or None when it rolls what was asked (or the order asked for as many as allowed)."""
    rolled = attack_dice(armies, wanted)
    if wanted is None or rolled >= wanted:
        return None
    return (
        f"{rolled} {'die' if rolled == 1 else 'dice'}, not the {wanted} asked: with {armies} "
        f"{'army' if armies == 1 else 'armies'} there, one must stay behind"
    )


def fortify_move(armies: int, asked: int | str) -> tuple[int, str | None]:
    """Armies a fortification moves from a territory holding `armies`, and a note if the number
    asked for was cut: all but one at most."""
    most = armies - 1
    if asked == ALL:
        return most, None
    if int(asked) > most:
        return most, f"asked to move {asked}, cut to {most}: one army stays behind"
    return int(asked), None


def connected(
    state: GameState, player: str, source: str, target: str, through: Collection[str] = ()
) -> bool:
    """Whether a chain of `player`'s territories (and of the owners `through` names, a team's)
    leads from source to target."""
    owners = {player, *through}
    seen = {source}
    frontier = [source]
    while frontier:
        here = frontier.pop()
        if here == target:
            return True
        for n in state.board.neighbours(here):
            if n not in seen and state.owner(n) in owners:
                seen.add(n)
                frontier.append(n)
    return False


def fortify_partners(state: GameState, player: str) -> tuple[str, ...]:
    """Whose territories, besides their own, `player` may fortify into and through: their
    team-mates in a team game with team fortification, else no one."""
    return state.mates(player) if state.options.team_fortify else ()


def can_fortify(state: GameState, player: str, source: str, target: str) -> str | None:
    """None when the fortification is legal now, else the reason it is not."""
    if source == target:
        return "fortify needs two different territories"
    if state.owner(source) != player:
        return f"you do not hold {source}"
    partners = fortify_partners(state, player)
    if state.owner(target) != player and state.owner(target) not in partners:
        if partners:
            return f"neither you nor a team-mate holds {target}"
        return f"you do not hold {target}"
    if state.armies(source) < 2:
        return f"{source} has only 1 army: one must stay behind"
    mode = state.options.fortify
    if mode is FortifyMode.NONE:
        return "this game has no fortification"
    if mode is FortifyMode.CONNECTED:
        if not connected(state, player, source, target, partners):
            if partners:
                return f"no chain of your team's territories leads from {source} to {target}"
            return f"no chain of your territories leads from {source} to {target}"
    elif mode is FortifyMode.ADJACENT and not state.board.adjacent(source, target):
        return f"{source} and {target} are not adjacent"
    return None


def last_team(
    alive: Mapping[str, bool], teams: Sequence[tuple[str, ...]]
) -> tuple[str, ...] | None:
    """In a team game, the one team that still has players in the game, when only one has
    (None while two or more have, and in a game without teams)."""
    left = [team for team in teams if any(alive.get(n, False) for n in team)]
    return left[0] if len(left) == 1 else None


def place_in_round(state: GameState, seat: int) -> int:
    """Where `seat` plays in a round: 0 for the seat that played first, and so on round the
    table (a game with a round limit, `Options.rounds`)."""
    return (seat - state.first_seat) % len(state.players)


def round_ends(state: GameState, following: int) -> bool:
    """Whether the play turn pending in `state` ends its round, `following` being the seat
    that plays next: the next turn goes back round the table (always False in a game without
    a round limit)."""
    if not state.options.rounds or state.phase is not Phase.PLAY:
        return False
    return place_in_round(state, following) <= place_in_round(state, state.current)


def next_seat(state: GameState, seat: int) -> int:
    """The next living player after `seat`, round the table."""
    return next_alive([p.alive for p in state.players], seat)


def next_alive(alive: Sequence[bool], seat: int) -> int:
    """The next seat after `seat` whose `alive` is true, round the table (`seat` if none)."""
    n = len(alive)
    for step in range(1, n + 1):
        candidate = (seat + step) % n
        if alive[candidate]:
            return candidate
    return seat


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
