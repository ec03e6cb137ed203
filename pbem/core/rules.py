"""The rules of classic Risk as pure functions: values, legality, battles, reinforcements."""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from pbem.core.board import WILD, Board, CardKind
from pbem.core.orders import ALL, REST, CardSet, Place
from pbem.core.state import CardRule, FortifyMode, GameState, Phase, TwoPlayer

MIN_PLAYERS = 2
MAX_PLAYERS = 6
SET_VALUES = (4, 6, 8, 10, 12, 15)
FORCED_TRADE_HAND = 5
ELIMINATION_TRADE_HAND = 6
ELIMINATION_TRADE_DOWN_TO = 4
CARD_TERRITORY_BONUS = 2


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
