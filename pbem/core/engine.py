"""Turn resolution: a pure fold of (state, accepted orders, keys) into (new state, events).

Orders reaching the engine were accepted by `rules.validate`; what became impossible since
(an attack from a territory an earlier attack failed to take) is skipped with an event.
No file, clock or print in here: the same inputs give the same outputs, byte for byte.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass

from pbem.core import dice, draft, fog, missions, rules, teams
from pbem.core.battle import battle
from pbem.core.board import Board
from pbem.core.dice import Stream
from pbem.core.events import (
    AttackStopped,
    Away,
    Conquered,
    Dealt,
    DiceKeyed,
    Drafted,
    DrewCard,
    DrewNoCard,
    Dropped,
    Eliminated,
    Event,
    Fortified,
    MissedTurn,
    MissionCompleted,
    MissionDealt,
    MissionFellBack,
    Placed,
    Reinforced,
    Reshuffled,
    RolledForFirst,
    RoundsOver,
    SeatsDecided,
    SeatTaken,
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
    replaced,
)


@dataclass(frozen=True)
class Randomness:
    """The keys a resolution draws from: its public key k[r+1] and the hidden key h.

    In a game whose dice follow the orders, `first` is the digest of the orders the first
    resolution of this number resolved, when it was undone and is being played again; the
    engine then keys the dice by the orders (`by_orders`), which sets `orders`."""

    public: bytes
    hidden: bytes
    first: bytes | None = None
    orders: bytes | None = None
    key: bytes | None = None
    """Once keyed by the orders: the resolution's own key k[r+1] (a fog game keys each battle
    from it, docs/fog.md)."""
    again: bytes | None = None
    """Once keyed by the orders: the salt of a resolution played again with other orders."""
    digests: tuple[bytes, ...] | None = None
    """The order files' digests as the history recorded them, taken instead of the digests of
    the orders given: a game's public record holds its order files without their players'
    secrets, which are part of what each digest is of (docs/publish.md)."""


def by_orders(
    state: GameState, resolving: Sequence[Orders], randomness: Randomness
) -> tuple[Randomness, tuple[Event, ...]]:
    """The randomness of a resolution keyed by the orders it resolves (docs/dice.md), and the
    event that records them; in a game whose dice come from the key alone, unchanged."""
    if not state.options.dice_by_orders:
        return randomness, ()
    files = (
        list(randomness.digests)
        if randomness.digests is not None
        else [dice.order_file_digest(o.canonical()) for o in resolving]
    )
    if len(files) != len(resolving):
        raise ValueError(
            f"{len(files)} order file digests recorded for {len(resolving)} order files"
        )
    digest = dice.orders_digest(files)
    again = None
    if randomness.first is not None and randomness.first != digest:
        again = dice.again_salt(randomness.hidden, state.resolution, digest)
    keyed = Randomness(
        dice.dice_key(randomness.public, digest, again),
        randomness.hidden,
        orders=digest,
        key=randomness.public,
        again=again,
    )
    event = DiceKeyed(
        tuple(o.player for o in resolving),
        tuple(f.hex() for f in files),
        again.hex() if again is not None else None,
    )
    return keyed, (event,)


class _Table:
    """A mutable working copy of the state, used only inside one resolution."""

    def __init__(self, state: GameState, away: Mapping[str, str] | None = None) -> None:
        self.state = state
        self.away = away or {}
        self.board = state.board
        self.owner: dict[str, str] = {}
        self.armies: dict[str, int] = {}
        for t, h in state.territories.items():
            self.owner[t] = h.owner
            self.armies[t] = h.armies
        self.hands = {p.name: list(p.hand) for p in state.players}
        self.alive = {p.name: p.alive for p in state.players}
        self.to_place = {p.name: p.to_place for p in state.players}
        self.missed = {p.name: p.missed for p in state.players}
        self.dropped = {p.name: p.dropped for p in state.players}
        self.fallback = {p.name: p.mission_fallback for p in state.players}
        # Missions are checked after each placement of a play turn; a setup turn's placements
        # are simultaneous, so its missions are checked once, when all are placed.
        self.missions = state.options.missions
        self.check_on_place = self.missions and state.phase is Phase.PLAY
        self.promised = state.options.stop_at_promised
        self.deck = list(state.deck)
        self.discards = list(state.discards)
        self.sets_traded = state.sets_traded
        self.winner = state.winner
        self.events: list[Event] = []
        self._card_order = _card_order(self.board)

    def owned(self, player: str) -> list[str]:
        return [t for t, o in self.owner.items() if o == player]

    def place(self, player: str, territory: str, armies: int, why: str) -> None:
        self.armies[territory] += armies
        self.events.append(Placed(player, territory, armies, why))
        if self.check_on_place:
            self.check_missions(player)

    def seat_of(self, name: str) -> Player:
        return replaced(
            self.state.player(name), alive=self.alive[name], mission_fallback=self.fallback[name]
        )

    def check_missions(self, first: str) -> None:
        """In a game with missions: the first player (from `first`, who acts, then round the
        table) whose mission is done wins at once."""
        if not self.missions or self.winner:
            return
        for name in missions.check_order([p.name for p in self.state.players], first):
            if not self.alive[name]:
                continue
            seat = self.seat_of(name)
            mission = missions.current(seat, self.state.mates(name))
            if mission is not None and missions.complete(
                mission, name, self.board, self.owner, self.armies, self.alive
            ):
                assert seat.mission is not None
                self.events.append(MissionCompleted(name, mission.card, seat.mission))
                _win(self, name)
                return

    def missions_fall_back(self, gone: str, reason: str, victor: str | None = None) -> None:
        """`gone` left the game, eliminated by `victor` or dropped: every other player's
        "destroy" mission aimed at them becomes "occupy 24 territories"."""
        for p in self.state.players:
            seat = self.seat_of(p.name)
            mates = self.state.mates(p.name)
            if seat.alive and p.name != victor and missions.falls_back(seat, gone, mates):
                self.fallback[p.name] = True
                self.events.append(MissionFellBack(p.name, gone, reason))

    def trade(
        self,
        player: str,
        cards: CardSet,
        *,
        forced: bool,
        bonus_used: bool,
        unwritten: bool = False,
    ) -> tuple[int, str | None]:
        """Trade a set: its cards go onto the discard pile (or, by the old rule, back into the
        deck). Returns its value and the territory that gets the +2 (if a card shows one the
        player holds and the +2 was not yet given)."""
        hand = self.hands[player]
        for card in cards:
            hand.remove(card)
        self.to_pile(cards)
        value = rules.trade_value(self.state, cards, self.sets_traded)
        self.sets_traded += 1
        self.events.append(
            Traded(player, tuple(cards), value, self.sets_traded, forced, unwritten or None)
        )
        bonus = None
        if not bonus_used:
            allowed = self.state.options.territory_bonus
            bonus = rules.card_bonus_territory([cards], self.owned(player), allowed=allowed)
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

    def last_standing(self, prefer: str | None = None) -> str | None:
        """Who wins because no one else is left: the last player in the game; in a team game,
        once one team alone is left, `prefer` (who ended it) when they are of that team and in
        the game, else its first player still in the game in seat order (the order of play
        from the player who played first)."""
        teams = self.state.options.teams
        if not teams:
            living = self.living()
            return living[0] if len(living) == 1 else None
        team = rules.last_team(self.alive, teams)
        if team is None:
            return None
        if prefer in team and self.alive[prefer]:
            return prefer
        return next(p.name for p in self.state.players if p.name in team and self.alive[p.name])

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
        return replaced(self.state, territories=_Holdings(self))

    def freeze(self, **changes: object) -> GameState:
        """The state as the table has it now, with `changes` (fields of GameState) made. What
        did not change is kept: the same Player and Holding objects (they are frozen)."""
        players = tuple(self._seat(p) for p in self.state.players)
        owner, armies = self.owner, self.armies
        old = self.state.territories
        territories = {}
        for t in self.board.names:
            held = old[t]
            o, a = owner[t], armies[t]
            territories[t] = held if held.armies == a and held.owner == o else Holding(o, a)
        return replaced(
            self.state,
            players=players,
            territories=territories,
            deck=tuple(self.deck),
            discards=tuple(self.discards),
            sets_traded=self.sets_traded,
            winner=self.winner,
            **changes,
        )

    def _seat(self, p: Player) -> Player:
        """Player `p` as the table has them now (`p` itself when nothing changed)."""
        name = p.name
        alive, hand, to_place = self.alive[name], self.hands[name], self.to_place[name]
        missed, dropped, fallback = self.missed[name], self.dropped[name], self.fallback[name]
        if (
            alive == p.alive
            and to_place == p.to_place
            and missed == p.missed
            and dropped == p.dropped
            and fallback == p.mission_fallback
            and len(hand) == len(p.hand)
            and tuple(hand) == p.hand
        ):
            return p
        return replaced(
            p,
            alive=alive,
            hand=tuple(hand),
            to_place=to_place,
            missed=missed,
            dropped=dropped,
            mission_fallback=fallback,
        )


@functools.lru_cache(maxsize=8)
def _card_order(board: Board) -> Mapping[str, int]:
    """Each card's place in the board's deck order (territories, then the wild cards)."""
    return {c: i for i, c in enumerate(board.cards())}


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
    the seats (the neutral last), each on randbelow(its territory count) in board order.
    A drafted game stops after the dice: its territories are chosen in the draft turn. In a
    game with missions, each seat is then dealt its mission from the card key's mission stream
    (`missions.deal`)."""
    if not rules.MIN_PLAYERS <= len(names) <= rules.MAX_PLAYERS:
        raise ValueError(f"Risk is played by 2 to 6 players, not {len(names)}")
    if len(set(names)) != len(names) or NEUTRAL in names:
        raise ValueError(f"player names must differ and none may be '{NEUTRAL}': {list(names)}")
    if options.missions and not missions.MIN_PLAYERS <= len(names) <= missions.MAX_PLAYERS:
        raise ValueError(
            f"Secret Mission Risk is played by {missions.MIN_PLAYERS} to "
            f"{missions.MAX_PLAYERS} players, not {len(names)}"
        )
    if options.teams:
        teams.check_teams(options.teams, names)
    if options.fogged and not options.dice_by_orders:
        raise ValueError("a game with fog rolls its dice from the key and the orders")
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

    start = rules.starting_armies(len(names), options.two_player)
    owners = _owners(order, options)
    dealt_missions = (
        missions.deal(order, randomness.hidden) if options.missions else (None,) * len(order)
    )
    drafted = options.setup is SetupMode.DRAFT
    if drafted:
        owner = dict.fromkeys(board.names, NEUTRAL)
        armies = dict.fromkeys(board.names, 0)
        left = dict.fromkeys(owners, start)
    else:
        shuffled = stream.shuffle(board.names)
        owner = {t: owners[i % len(owners)] for i, t in enumerate(shuffled)}
        armies = dict.fromkeys(board.names, 1)
        for name in owners:
            events.append(Dealt(name, tuple(t for t in board.names if owner[t] == name)))
        left = {name: start - sum(1 for o in owner.values() if o == name) for name in owners}
        random_owners = owners if options.setup is SetupMode.RANDOM else owners[len(order) :]
        events += _place_at_random(board, stream, random_owners, owner, armies, left)

    for name, mission in zip(order, dealt_missions, strict=True):
        if mission is not None:
            events.append(MissionDealt(name, mission))
    waits = options.setup is not SetupMode.RANDOM
    players = tuple(
        Player(name, seat, to_place=left[name] if waits else 0, mission=mission)
        for seat, (name, mission) in enumerate(zip(order, dealt_missions, strict=True))
    )
    state = GameState(
        game=game,
        board=board,
        options=options,
        players=players,
        territories={t: Holding(owner[t], armies[t]) for t in board.names},
        deck=board.cards(),
        phase=Phase.DRAFT if drafted else Phase.SETUP if waits else Phase.PLAY,
        turn=0 if waits else 1,
        resolution=1,
        current=0,
        round=1 if options.rounds and not waits else 0,
    )
    if not waits and options.missions:
        table = _Table(state)
        table.check_missions(order[0])
        if table.winner:
            return table.freeze(phase=Phase.OVER), (*events, *table.events)
    return state, tuple(events)


def _owners(order: Sequence[str], options: Options) -> tuple[str, ...]:
    """Who gets territories at setup, in seat order: the players, then the neutral of a
    two-player game with neutral armies."""
    neutral = len(order) == 2 and options.two_player is TwoPlayer.NEUTRAL
    return tuple(order) + ((NEUTRAL,) if neutral else ())


def _place_at_random(
    board: Board,
    stream: Stream,
    owners: Sequence[str],
    owner: Mapping[str, str],
    armies: dict[str, int],
    left: dict[str, int],
) -> list[Event]:
    """Random placement: one army at a time round `owners`, each on randbelow(its territory
    count) of its territories in board order, until none is left; the Placed events."""
    placed = dict.fromkeys(board.names, 0)
    while any(left[name] > 0 for name in owners):
        for name in owners:
            if left[name] > 0:
                own = [t for t in board.names if owner[t] == name]
                placed[own[stream.randbelow(len(own))]] += 1
                left[name] -= 1
    events: list[Event] = []
    for name in owners:
        for t in board.names:
            if owner[t] == name and placed[t]:
                armies[t] += placed[t]
                events.append(Placed(name, t, placed[t], "random"))
    return events


def resolve(
    state: GameState,
    orders: Sequence[Orders],
    randomness: Randomness,
    autopilot: Collection[str] = (),
    taken: Sequence[SeatTaken] = (),
    away: Mapping[str, str] | None = None,
) -> tuple[GameState, tuple[Event, ...]]:
    """Resolve the pending turn from accepted orders: the setup placements of every player, or
    the current player's turn. `autopilot` names the players whose orders the autopilot wrote
    because they sent none by the deadline: their turn counts as missed. `taken`: the seats
    that changed hands since the last resolution (pbem.game.seats), told first; each one's
    count of turns missed in a row starts again from none. `away`: those of `autopilot` who
    are away on a vacation (each with its last day), in a game whose autopilot plays for them:
    their turn is not missed."""
    if not taken:
        return _resolve(state, orders, randomness, autopilot, away or {})
    for change in taken:
        state = seat_taken(state, change)
    new, events = _resolve(state, orders, randomness, autopilot, away or {})
    return new, (*taken, *events)


def seat_taken(state: GameState, change: SeatTaken) -> GameState:
    """The state once a seat changed hands: its count of missed turns from none; a dropped
    seat back in the game with the territories it is given back (each must be neutral)."""
    seat = state.player(change.player)
    if change.returned is None:
        players = tuple(replaced(p, missed=0) if p is seat else p for p in state.players)
        return replaced(state, players=players)
    if not seat.dropped or not change.returned:
        raise ValueError(f"{change.player} was not dropped, or is given no territory back")
    territories = dict(state.territories)
    for name in change.returned:
        held = territories.get(name)
        if held is None or held.owner != NEUTRAL:
            raise ValueError(f"{name} is not a neutral territory to give back to {seat.name}")
        territories[name] = Holding(seat.name, held.armies)
    back = replaced(seat, missed=0, alive=True, dropped=False, to_place=0)
    players = tuple(back if p is seat else p for p in state.players)
    return replaced(state, players=players, territories=territories)


def _resolve(
    state: GameState,
    orders: Sequence[Orders],
    randomness: Randomness,
    autopilot: Collection[str],
    away: Mapping[str, str],
) -> tuple[GameState, tuple[Event, ...]]:
    if state.phase is Phase.DRAFT:
        return _resolve_draft(state, orders, randomness, autopilot, away)
    if state.phase is Phase.SETUP:
        return _resolve_setup(state, orders, autopilot, away)
    if state.phase is Phase.OVER:
        raise ValueError(f"game {state.game} is over")
    mine = [o for o in orders if o.player == state.current_player.name]
    if len(mine) != 1:
        raise ValueError(f"resolve needs exactly one order file from {state.current_player.name}")
    randomness, keyed = by_orders(state, mine, randomness)
    return _resolve_turn(state, mine[0], randomness, mine[0].player in autopilot, keyed, away)


def _resolve_setup(
    state: GameState,
    orders: Sequence[Orders],
    autopilot: Collection[str],
    away: Mapping[str, str],
) -> tuple[GameState, tuple[Event, ...]]:
    table = _Table(state, away)
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
    standing = table.last_standing()
    if standing:
        _win(table, standing)
    first = next(p.seat for p in state.players if table.alive[p.name])
    table.check_missions(state.players[first].name)
    if table.winner:
        return table.freeze(phase=Phase.OVER, resolution=state.resolution + 1), tuple(table.events)
    rounds = {"round": 1, "first_seat": first} if state.options.rounds else {}
    new = table.freeze(
        phase=Phase.PLAY, turn=1, resolution=state.resolution + 1, current=first, **rounds
    )
    return new, tuple(table.events)


def _resolve_draft(
    state: GameState,
    orders: Sequence[Orders],
    randomness: Randomness,
    autopilot: Collection[str],
    away: Mapping[str, str],
) -> tuple[GameState, tuple[Event, ...]]:
    """The draft turn: every territory taken round by round from the ranked lists (draft.py),
    one army on each; the neutral's armies then go at random (from this resolution's public
    stream, as at a dealt setup); then the setup turn places the rest, as in a dealt game."""
    table = _Table(state, away)
    by_player = {o.player: o for o in orders}
    seated = [p.name for p in state.players if p.alive]
    for name in seated:
        if name not in by_player:
            raise ValueError(f"the draft turn needs orders from {name}")
    randomness, keyed = by_orders(state, [by_player[n] for n in seated], randomness)
    table.events.extend(keyed)
    for name in seated:
        _count_turn(table, name, state.turn, name in autopilot)
    owners = _owners([p.name for p in state.players], state.options)
    pickers = [n for n in owners if n == NEUTRAL or n in seated]
    lists = {name: by_player[name].draft for name in seated}
    for pick in draft.run(state.board, pickers, lists):
        table.owner[pick.territory] = pick.player
        table.armies[pick.territory] = 1
        table.events.append(Drafted(pick.player, pick.territory, pick.round, pick.by))
    start = rules.starting_armies(len(state.players), state.options.two_player)
    left = {n: start - len(table.owned(n)) for n in pickers}
    for name in seated:
        table.to_place[name] = left[name]
    if NEUTRAL in pickers:
        stream = Stream.public(randomness.public)
        table.events += _place_at_random(
            state.board, stream, [NEUTRAL], table.owner, table.armies, left
        )
    for name in seated:
        if name in autopilot:
            _drop_if_due(table, name)
    standing = table.last_standing()
    if standing:
        _win(table, standing)
        return table.freeze(phase=Phase.OVER, resolution=state.resolution + 1), tuple(table.events)
    new = table.freeze(phase=Phase.SETUP, resolution=state.resolution + 1)
    return new, tuple(table.events)


def _count_turn(table: _Table, player: str, turn: int, missed: bool) -> None:
    """A missed turn adds one to the player's count (with an event); orders reset it. The
    turn of a player away on a vacation, which the autopilot played, leaves it as it was."""
    if missed and player in table.away:
        table.events.append(Away(player, turn, table.away[player]))
    elif missed:
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
    table.to_place[player] = 0
    table.events.append(Dropped(player, table.missed[player], len(held), armies, len(cards)))
    table.missions_fall_back(player, f"{player} left the game after missed turns")
    if table.state.phase is Phase.PLAY:
        table.check_missions(player)


def _win(table: _Table, player: str) -> None:
    """The game ends: `player` won (once; a mission done first has already ended it)."""
    if table.winner:
        return
    table.winner = player
    teams = table.state.options.teams
    table.events.append(Won(player, table.state.team(player) if teams else None))


def _place_all(table: _Table, player: str, orders: Orders, armies: int, why: str) -> None:
    for territory, amount in rules.placement_amounts(orders.place, armies):
        if table.winner:
            return
        table.place(player, territory, amount, why)


def _resolve_turn(
    state: GameState,
    orders: Orders,
    randomness: Randomness,
    missed: bool = False,
    keyed: tuple[Event, ...] = (),
    away: Mapping[str, str] | None = None,
) -> tuple[GameState, tuple[Event, ...]]:
    table = _Table(state, away)
    table.events.extend(keyed)
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
    forced = rules.forced_trade(state, name, orders.trade)  # the orders traded none: pbem does
    for cards in (forced,) if forced else rules.sets_to_trade(state, name, orders.trade):
        if table.winner:
            break
        value, bonus = table.trade(
            name,
            cards,
            forced=forced is not None,
            bonus_used=bonus_used,
            unwritten=forced is not None,
        )
        armies += value
        if bonus:
            table.place(name, bonus, rules.CARD_TERRITORY_BONUS, "card")
            bonus_used = True
    _count_turn(table, name, state.turn, missed)
    _place_all(table, name, orders, armies, "autopilot" if missed else "orders")

    streams = _Streams(state, randomness)
    conquests = 0
    for attack in orders.attack:
        if table.winner:
            break
        result = _attack(table, name, attack, streams, bonus_used)
        conquests += result[0]
        bonus_used = result[1]

    if not table.winner:
        for fortify in orders.fortifications[: state.options.fortifies]:
            if table.winner:  # (a mission done by a fortification)
                break
            _fortify(table, name, fortify)
        if conquests and not table.winner and state.options.with_cards:
            # (a mission done by the fortification ends the game first)
            table.draw(name, Stream.hidden(randomness.hidden, state.resolution, randomness.orders))
    if missed and not table.winner:
        _drop_if_due(table, name)
        standing = table.last_standing()
        if standing:
            _win(table, standing)

    seat = state.current
    if not table.winner:
        seat = rules.next_alive([table.alive[p.name] for p in state.players], state.current)
    rounds: dict[str, int] = {}
    if not table.winner and rules.round_ends(state, seat):
        if state.round >= state.options.rounds:
            _rounds_over(table)
        rounds["round"] = state.round + 1
    if table.winner:
        new = table.freeze(phase=Phase.OVER, resolution=state.resolution + 1)
    else:
        new = table.freeze(
            turn=state.turn + 1, resolution=state.resolution + 1, current=seat, **rounds
        )
    return new, tuple(table.events)


class _Streams:
    """Where each attack of a turn rolls its dice: one stream for the whole turn, or in a fog
    game a stream of its own for each battle, keyed by its label (docs/fog.md)."""

    def __init__(self, state: GameState, randomness: Randomness) -> None:
        self.randomness = randomness
        self.fogged = state.options.fogged
        self.shared = None if self.fogged else Stream.public(randomness.public)
        self.count: dict[tuple[str, str], int] = {}

    def next(self, attack: Attack) -> tuple[Stream | None, int | None]:
        """The stream of `attack`, the next battle of the turn, and in a fog game its number
        among the turn's battles on its pair (its stream None: past the most a fog game allows
        on a pair)."""
        if self.shared is not None:
            return self.shared, None
        pair = (attack.source, attack.target)
        n = self.count[pair] = self.count.get(pair, 0) + 1
        if n > fog.MOST_ATTACKS_ON_A_PAIR:
            return None, n
        r = self.randomness
        if r.key is None or r.orders is None:
            raise ValueError("a fog game rolls its dice from the key and the orders")
        battle = fog.battle_key(r.key, fog.label(attack.source, attack.target, n))
        return Stream.public(fog.battle_dice_key(battle, r.orders, r.again)), n


def _rounds_over(table: _Table) -> None:
    """The last round is over: the player still in the game with the most territories wins,
    then the one with the most armies, then the earliest in the order of play. In a team game
    the team with the most territories together wins (then the most armies, then the one
    whose player still in the game plays earliest), told as won by that player."""
    state = table.state
    teams = state.options.teams or tuple((p,) for p in table.living())
    order = {p.name: rules.place_in_round(state, p.seat) for p in state.players}
    held = {
        team: [t for t, o in table.owner.items() if o in team]
        for team in teams
        if any(table.alive[n] for n in team)
    }

    def armies(team: tuple[str, ...]) -> int:
        return sum(table.armies[t] for t in held[team])

    def first(team: tuple[str, ...]) -> str:
        return min((n for n in team if table.alive[n]), key=order.__getitem__)

    best = min(held, key=lambda team: (-len(held[team]), -armies(team), order[first(team)]))
    winner = first(best)
    team = best if state.options.teams else None
    table.events.append(
        RoundsOver(state.options.rounds, winner, len(held[best]), armies(best), team)
    )
    _win(table, winner)


def _attack(
    table: _Table,
    name: str,
    attack: Attack,
    streams: _Streams,
    bonus_used: bool,
) -> tuple[int, bool]:
    """Carry out one attack order; returns (territories conquered, whether the +2 is used).
    Its dice come from `streams` once it is fought (in a fog game with its number among the
    turn's battles on its pair, recorded with its end)."""
    source, target = attack.source, attack.target
    if table.owner[source] != name:
        table.events.append(Skipped(name, attack.describe(), f"you do not hold {source}"))
        return 0, bonus_used
    if table.owner[target] == name:
        table.events.append(Skipped(name, attack.describe(), f"you already hold {target}"))
        return 0, bonus_used
    if table.owner[target] in table.state.mates(name):
        mate = table.owner[target]
        table.events.append(
            Skipped(name, attack.describe(), f"{mate}, your team-mate, holds {target}")
        )
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
    stream, number = streams.next(attack)
    if stream is None:
        limit = fog.MOST_ATTACKS_ON_A_PAIR
        why = f"a game with fog allows {limit} attacks on {target} from {source} a turn"
        table.events.append(Skipped(name, attack.describe(), why))
        return 0, bonus_used
    defender = table.owner[target]
    last = battle(table.armies, table.events, table.promised, name, attack, defender, stream)
    if table.armies[target] > 0:
        why = f"{source} is down to {table.armies[source]}" + (
            f" (stop at {attack.stop_at})" if attack.stop_at > 1 else ""
        )
        table.events.append(AttackStopped(name, source, target, why, number))
        return 0, bonus_used

    moved, note = rules.move_in(table.armies[source], last, attack.move)
    table.owner[target] = name
    table.armies[source] -= moved
    table.armies[target] = moved
    table.events.append(Conquered(name, source, target, defender, moved, note, number))
    if defender != NEUTRAL and defender not in table.owner.values():
        bonus_used = _eliminate(table, name, defender, target, bonus_used)
    table.check_missions(name)
    return 1, bonus_used


def _eliminate(table: _Table, victor: str, loser: str, where: str, bonus_used: bool) -> bool:
    """The loser is out; the victor takes their cards and, holding 6 or more, trades sets at
    once down to 4 or fewer, placing those armies on the territory just conquered."""
    taken = table.hands[loser]
    table.hands[loser] = []
    table.hands[victor].extend(taken)
    table.alive[loser] = False
    table.events.append(Eliminated(loser, victor, len(taken)))
    standing = table.last_standing(victor)
    if standing:
        _win(table, standing)
        return bonus_used
    table.missions_fall_back(loser, f"{loser} was eliminated by {victor}", victor)
    table.check_missions(victor)
    hand = table.hands[victor]
    if len(hand) >= rules.ELIMINATION_TRADE_HAND:
        while len(hand) > rules.ELIMINATION_TRADE_DOWN_TO and not table.winner:
            rule = table.state.options.cards
            chosen = rules.best_set(table.board, hand, table.owned(victor), rule=rule)
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
    table.check_missions(name)
