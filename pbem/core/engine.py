"""Turn resolution: a pure fold of (state, accepted orders, keys) into (new state, events).

Orders reaching the engine were accepted by `rules.validate`; what became impossible since
(an attack from a territory an earlier attack failed to take) is skipped with an event.
No file, clock or print in here: the same inputs give the same outputs, byte for byte.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from pbem.core import rules
from pbem.core.board import Board
from pbem.core.dice import Stream
from pbem.core.events import (
    AttackStopped,
    Conquered,
    Dealt,
    DrewCard,
    DrewNoCard,
    Dropped,
    Eliminated,
    Event,
    Fortified,
    MissedTurn,
    Placed,
    Reinforced,
    Reshuffled,
    Rolled,
    RolledForFirst,
    SeatsDecided,
    Skipped,
    Traded,
    Won,
)
from pbem.core.orders import Attack, CardSet, Fortify, Orders
from pbem.core.state import (
    NEUTRAL,
    GameState,
    Holding,
    Options,
    Phase,
    Player,
    SetupMode,
    TwoPlayer,
)


@dataclass(frozen=True)
class Randomness:
    """The keys a resolution draws from: its public key k[r+1] and the hidden key h."""

    public: bytes
    hidden: bytes


class _Table:
    """A mutable working copy of the state, used only inside one resolution."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.board = state.board
        self.owner = {t: h.owner for t, h in state.territories.items()}
        self.armies = {t: h.armies for t, h in state.territories.items()}
        self.hands = {p.name: list(p.hand) for p in state.players}
        self.alive = {p.name: p.alive for p in state.players}
        self.to_place = {p.name: p.to_place for p in state.players}
        self.missed = {p.name: p.missed for p in state.players}
        self.dropped = {p.name: p.dropped for p in state.players}
        self.deck = list(state.deck)
        self.discards = list(state.discards)
        self.sets_traded = state.sets_traded
        self.winner = state.winner
        self.events: list[Event] = []
        self._card_order = {c: i for i, c in enumerate(self.board.cards())}

    def owned(self, player: str) -> list[str]:
        return [t for t, o in self.owner.items() if o == player]

    def place(self, player: str, territory: str, armies: int, why: str) -> None:
        self.armies[territory] += armies
        self.events.append(Placed(player, territory, armies, why))

    def trade(
        self, player: str, cards: CardSet, *, forced: bool, bonus_used: bool
    ) -> tuple[int, str | None]:
        """Trade a set: its cards go onto the discard pile (or, by the old rule, back into the
        deck). Returns its value and the territory that gets the +2 (if a card shows one the
        player holds and the +2 was not yet given)."""
        hand = self.hands[player]
        for card in cards:
            hand.remove(card)
        self.to_pile(cards)
        value = rules.set_value(self.sets_traded)
        self.sets_traded += 1
        self.events.append(Traded(player, tuple(cards), value, self.sets_traded, forced))
        bonus = None
        if not bonus_used:
            bonus = rules.card_bonus_territory([cards], self.owned(player))
        return value, bonus

    def to_pile(self, cards: Sequence[str]) -> None:
        """Cards that leave a hand (a traded set, a dropped player's hand) go where traded
        cards go: the discard pile (rule "aside"), or back into the deck in board order."""
        if self.state.options.sets_aside:
            self.discards.extend(cards)
        else:
            self.deck.extend(cards)
            self.deck.sort(key=self._card_order.__getitem__)

    def living(self) -> list[str]:
        return [p for p, alive in self.alive.items() if alive]

    def draw(self, player: str, hidden: Stream) -> None:
        """The card earned by a conquest: card number randbelow(cards in the pile) of the draw
        pile in board order, from the resolution's hidden stream. An empty pile first takes the
        discards (the reshuffle: the draw itself is the shuffle, docs/dice.md)."""
        if not self.deck and self.discards:
            self.events.append(Reshuffled(player, len(self.discards)))
            self.deck = sorted(self.discards, key=self._card_order.__getitem__)
            self.discards = []
        if not self.deck:
            self.events.append(
                DrewNoCard(
                    player, "the draw pile and the discard pile are empty: every card is in a hand"
                )
            )
            return
        card = self.deck.pop(hidden.randbelow(len(self.deck)))
        self.hands[player].append(card)
        self.events.append(DrewCard(player, card))

    def view(self) -> GameState:
        """The state with the table's territories, for a rules question asked mid-resolution;
        cheaper than `freeze` (nothing is copied), valid only until the table changes."""
        return replace(self.state, territories=_Holdings(self))

    def freeze(self, **changes: object) -> GameState:
        players = tuple(
            replace(
                p,
                alive=self.alive[p.name],
                hand=tuple(self.hands[p.name]),
                to_place=self.to_place[p.name],
                missed=self.missed[p.name],
                dropped=self.dropped[p.name],
            )
            for p in self.state.players
        )
        territories = {t: Holding(self.owner[t], self.armies[t]) for t in self.board.names}
        return replace(
            self.state,
            players=players,
            territories=territories,
            deck=tuple(self.deck),
            discards=tuple(self.discards),
            sets_traded=self.sets_traded,
            winner=self.winner,
            **changes,  # type: ignore[arg-type]
        )


class _Holdings(Mapping[str, Holding]):
    """A read-only view of a table's territories as holdings, built on demand."""

    def __init__(self, table: _Table) -> None:
        self._table = table

    def __getitem__(self, territory: str) -> Holding:
        return Holding(self._table.owner[territory], self._table.armies[territory])

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.owner)

    def __len__(self) -> int:
        return len(self._table.owner)


def new_game(
    game: str,
    names: Sequence[str],
    board: Board,
    options: Options,
    randomness: Randomness,
) -> tuple[GameState, tuple[Event, ...]]:
    """Resolution 0, the setup, drawn from the public stream in this order: the dice for the
    first player (ties roll again), the shuffle of the territories (Fisher-Yates over the board
    order, from the last position down), then any random placement, one army at a time round
    the seats (the neutral last), each on randbelow(its territory count) in board order."""
    if not rules.MIN_PLAYERS <= len(names) <= rules.MAX_PLAYERS:
        raise ValueError(f"Risk is played by 2 to 6 players, not {len(names)}")
    if len(set(names)) != len(names) or NEUTRAL in names:
        raise ValueError(f"player names must differ and none may be '{NEUTRAL}': {list(names)}")
    stream = Stream.public(randomness.public)
    events: list[Event] = []

    contenders = list(names)
    while len(contenders) > 1:
        rolls = [(name, stream.die()) for name in contenders]
        events.extend(RolledForFirst(name, die) for name, die in rolls)
        best = max(die for _, die in rolls)
        contenders = [name for name, die in rolls if die == best]
    first = names.index(contenders[0])
    order = tuple(names[first:]) + tuple(names[:first])
    events.append(SeatsDecided(order))

    neutral = len(names) == 2 and options.two_player is TwoPlayer.NEUTRAL
    start = rules.starting_armies(len(names), options.two_player)
    owners = order + ((NEUTRAL,) if neutral else ())
    shuffled = stream.shuffle(board.names)
    owner = {t: owners[i % len(owners)] for i, t in enumerate(shuffled)}
    armies = dict.fromkeys(board.names, 1)
    for name in owners:
        events.append(Dealt(name, tuple(t for t in board.names if owner[t] == name)))
    left = {name: start - sum(1 for o in owner.values() if o == name) for name in owners}

    random_owners = owners if options.setup is SetupMode.RANDOM else owners[len(order) :]
    placed = {t: 0 for t in board.names}
    while any(left[name] > 0 for name in random_owners):
        for name in random_owners:
            if left[name] > 0:
                own = [t for t in board.names if owner[t] == name]
                placed[own[stream.randbelow(len(own))]] += 1
                left[name] -= 1
    for name in random_owners:
        for t in board.names:
            if owner[t] == name and placed[t]:
                armies[t] += placed[t]
                events.append(Placed(name, t, placed[t], "random"))

    dealt = options.setup is SetupMode.DEAL
    players = tuple(
        Player(name, seat, to_place=left[name] if dealt else 0) for seat, name in enumerate(order)
    )
    state = GameState(
        game=game,
        board=board,
        options=options,
        players=players,
        territories={t: Holding(owner[t], armies[t]) for t in board.names},
        deck=board.cards(),
        phase=Phase.SETUP if dealt else Phase.PLAY,
        turn=0 if dealt else 1,
        resolution=1,
        current=0,
    )
    return state, tuple(events)


def resolve(
    state: GameState,
    orders: Sequence[Orders],
    randomness: Randomness,
    autopilot: Collection[str] = (),
) -> tuple[GameState, tuple[Event, ...]]:
    """Resolve the pending turn from accepted orders: the setup placements of every player, or
    the current player's turn. `autopilot` names the players whose orders the autopilot wrote
    because they sent none by the deadline: their turn counts as missed."""
    if state.phase is Phase.SETUP:
        return _resolve_setup(state, orders, autopilot)
    if state.phase is Phase.OVER:
        raise ValueError(f"game {state.game} is over")
    mine = [o for o in orders if o.player == state.current_player.name]
    if len(mine) != 1:
        raise ValueError(f"resolve needs exactly one order file from {state.current_player.name}")
    return _resolve_turn(state, mine[0], randomness, mine[0].player in autopilot)


def _resolve_setup(
    state: GameState, orders: Sequence[Orders], autopilot: Collection[str]
) -> tuple[GameState, tuple[Event, ...]]:
    table = _Table(state)
    by_player = {o.player: o for o in orders}
    for player in state.players:
        if not player.alive:
            continue
        order = by_player.get(player.name)
        if order is None:
            raise ValueError(f"the setup turn needs orders from {player.name}")
        missed = player.name in autopilot
        _count_turn(table, player.name, state.turn, missed)
        _place_all(table, player.name, order, player.to_place, "autopilot" if missed else "setup")
        table.to_place[player.name] = 0
    for player in state.players:
        if player.name in autopilot:
            _drop_if_due(table, player.name)
    living = table.living()
    if len(living) == 1:
        _win(table, living[0])
        return table.freeze(phase=Phase.OVER, resolution=state.resolution + 1), tuple(table.events)
    first = next(p.seat for p in state.players if table.alive[p.name])
    new = table.freeze(phase=Phase.PLAY, turn=1, resolution=state.resolution + 1, current=first)
    return new, tuple(table.events)


def _count_turn(table: _Table, player: str, turn: int, missed: bool) -> None:
    """A missed turn adds one to the player's count (with an event); orders reset it."""
    if missed:
        table.missed[player] += 1
        table.events.append(MissedTurn(player, turn, table.missed[player]))
    else:
        table.missed[player] = 0


def _drop_if_due(table: _Table, player: str) -> None:
    """A player who missed `drop_after` turns in a row leaves: their armies stay as neutral
    armies that only defend, their cards go back to the pile, their seat is skipped. The last
    player in the game is never dropped (when every player of a setup turn is silent, they
    leave in seat order until one is left, who wins)."""
    limit = table.state.options.drop_after
    if not limit or table.missed[player] < limit or table.living() in ([], [player]):
        return
    held = table.owned(player)
    armies = sum(table.armies[t] for t in held)
    for territory in held:
        table.owner[territory] = NEUTRAL
    cards = table.hands[player]
    table.hands[player] = []
    table.to_pile(cards)
    table.alive[player] = False
    table.dropped[player] = True
    table.events.append(Dropped(player, table.missed[player], len(held), armies, len(cards)))


def _win(table: _Table, player: str) -> None:
    table.winner = player
    table.events.append(Won(player))


def _place_all(table: _Table, player: str, orders: Orders, armies: int, why: str) -> None:
    for territory, amount in rules.placement_amounts(orders.place, armies):
        table.place(player, territory, amount, why)


def _resolve_turn(
    state: GameState, orders: Orders, randomness: Randomness, missed: bool = False
) -> tuple[GameState, tuple[Event, ...]]:
    table = _Table(state)
    name = orders.player
    base = rules.reinforcement(state, name)
    table.events.append(
        Reinforced(
            name,
            state.turn,
            base.territories,
            base.from_territories,
            base.continents,
            base.from_continents,
        )
    )
    armies = base.total
    bonus_used = False
    for cards in rules.sets_to_trade(state, name, orders.trade):
        value, bonus = table.trade(name, cards, forced=False, bonus_used=bonus_used)
        armies += value
        if bonus:
            table.place(name, bonus, rules.CARD_TERRITORY_BONUS, "card")
            bonus_used = True
    _count_turn(table, name, state.turn, missed)
    _place_all(table, name, orders, armies, "autopilot" if missed else "orders")

    stream = Stream.public(randomness.public)
    conquests = 0
    for attack in orders.attack:
        if table.winner:
            break
        result = _attack(table, name, attack, stream, bonus_used)
        conquests += result[0]
        bonus_used = result[1]

    if not table.winner:
        if orders.fortify is not None:
            _fortify(table, name, orders.fortify)
        if conquests:
            table.draw(name, Stream.hidden(randomness.hidden, state.resolution))
    if missed and not table.winner:
        _drop_if_due(table, name)
        living = table.living()
        if len(living) == 1:
            _win(table, living[0])

    if table.winner:
        new = table.freeze(phase=Phase.OVER, resolution=state.resolution + 1)
    else:
        frozen = table.freeze()
        new = replace(
            frozen,
            turn=state.turn + 1,
            resolution=state.resolution + 1,
            current=rules.next_seat(frozen, state.current),
        )
    return new, tuple(table.events)


def _attack(
    table: _Table, name: str, attack: Attack, stream: Stream, bonus_used: bool
) -> tuple[int, bool]:
    """Carry out one attack order; returns (territories conquered, whether the +2 is used)."""
    source, target = attack.source, attack.target
    if table.owner[source] != name:
        table.events.append(Skipped(name, attack.describe(), f"you do not hold {source}"))
        return 0, bonus_used
    if table.owner[target] == name:
        table.events.append(Skipped(name, attack.describe(), f"you already hold {target}"))
        return 0, bonus_used
    if table.armies[source] < 2 or table.armies[source] <= attack.stop_at:
        table.events.append(
            Skipped(
                name,
                attack.describe(),
                f"{source} has only 1 army: an attack needs 2"
                if table.armies[source] < 2
                else f"{source} has {table.armies[source]} armies (stop at {attack.stop_at})",
            )
        )
        return 0, bonus_used
    defender = table.owner[target]
    last = 0
    while table.armies[source] > max(1, attack.stop_at):
        a = rules.attack_dice_kept(
            table.armies[source], attack.dice, attack.stop_at, table.state.options.stop_at_promised
        )
        d = rules.defence_dice(table.armies[target])
        a_dice = stream.dice(a)
        d_dice = stream.dice(d)
        lost_a, lost_d = rules.battle(a_dice, d_dice)
        table.armies[source] -= lost_a
        table.armies[target] -= lost_d
        table.events.append(Rolled(name, source, target, defender, a_dice, d_dice, lost_a, lost_d))
        last = a
        if table.armies[target] == 0:
            break
    if table.armies[target] > 0:
        why = f"{source} is down to {table.armies[source]}" + (
            f" (stop at {attack.stop_at})" if attack.stop_at > 1 else ""
        )
        table.events.append(AttackStopped(name, source, target, why))
        return 0, bonus_used

    moved, note = rules.move_in(table.armies[source], last, attack.move)
    table.owner[target] = name
    table.armies[source] -= moved
    table.armies[target] = moved
    table.events.append(Conquered(name, source, target, defender, moved, note))
    if defender != NEUTRAL and not any(o == defender for o in table.owner.values()):
        bonus_used = _eliminate(table, name, defender, target, bonus_used)
    return 1, bonus_used


def _eliminate(table: _Table, victor: str, loser: str, where: str, bonus_used: bool) -> bool:
    """The loser is out; the victor takes their cards and, holding 6 or more, trades sets at
    once down to 4 or fewer, placing those armies on the territory just conquered."""
    taken = table.hands[loser]
    table.hands[loser] = []
    table.hands[victor].extend(taken)
    table.alive[loser] = False
    table.events.append(Eliminated(loser, victor, len(taken)))
    living = table.living()
    if len(living) == 1:
        _win(table, living[0])
        return bonus_used
    hand = table.hands[victor]
    if len(hand) >= rules.ELIMINATION_TRADE_HAND:
        while len(hand) > rules.ELIMINATION_TRADE_DOWN_TO:
            chosen = rules.best_set(table.board, hand, table.owned(victor))
            if chosen is None:  # cannot happen with 5 or more cards; kept for safety
                break
            value, bonus = table.trade(victor, chosen, forced=True, bonus_used=bonus_used)
            table.place(victor, where, value, "elimination")
            if bonus:
                table.place(victor, bonus, rules.CARD_TERRITORY_BONUS, "card")
                bonus_used = True
    return bonus_used


def _fortify(table: _Table, name: str, fortify: Fortify) -> None:
    reason = rules.can_fortify(table.view(), name, fortify.source, fortify.target)
    if reason:
        table.events.append(Skipped(name, fortify.describe(), reason))
        return
    moved, note = rules.fortify_move(table.armies[fortify.source], fortify.armies)
    table.armies[fortify.source] -= moved
    table.armies[fortify.target] += moved
    table.events.append(Fortified(name, fortify.source, fortify.target, moved, note))
