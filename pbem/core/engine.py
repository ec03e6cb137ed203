"""Turn resolution: a pure fold of (state, accepted orders, keys) into (new state, events).

Orders reaching the engine were accepted by `validation.validate`; what became impossible since
(an attack from a territory an earlier attack failed to take) is skipped with an event.
No file, clock or print in here: the same inputs give the same outputs, byte for byte.

This module is the sequence: the keys a resolution draws from, the new game, and each kind of
turn (draft, setup, play) step by step. The working copy it changes is `table`; a turn's
attacks and fortifications are carried out by `moves`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from pbem.core import dice, draft, fog, missions, moves, rules, teams
from pbem.core.board import Board
from pbem.core.dice import Stream
from pbem.core.events import (
    Dealt,
    DiceKeyed,
    Drafted,
    Event,
    MissionDealt,
    Placed,
    Reinforced,
    RolledForFirst,
    SeatsDecided,
    SeatTaken,
)
from pbem.core.orders import Attack, Orders
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
from pbem.core.table import Table, count_turn, drop_if_due, rounds_over, win


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
        table = Table(state)
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
    table = Table(state, away)
    by_player = {o.player: o for o in orders}
    for player in state.players:
        if not player.alive:
            continue
        order = by_player.get(player.name)
        if order is None:
            raise ValueError(f"the setup turn needs orders from {player.name}")
        missed = player.name in autopilot
        count_turn(table, player.name, state.turn, missed)
        _place_all(table, player.name, order, player.to_place, "autopilot" if missed else "setup")
        table.to_place[player.name] = 0
    for player in state.players:
        if player.name in autopilot:
            drop_if_due(table, player.name)
    standing = table.last_standing()
    if standing:
        win(table, standing)
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
    table = Table(state, away)
    by_player = {o.player: o for o in orders}
    seated = [p.name for p in state.players if p.alive]
    for name in seated:
        if name not in by_player:
            raise ValueError(f"the draft turn needs orders from {name}")
    randomness, keyed = by_orders(state, [by_player[n] for n in seated], randomness)
    table.events.extend(keyed)
    for name in seated:
        count_turn(table, name, state.turn, name in autopilot)
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
            drop_if_due(table, name)
    standing = table.last_standing()
    if standing:
        win(table, standing)
        return table.freeze(phase=Phase.OVER, resolution=state.resolution + 1), tuple(table.events)
    new = table.freeze(phase=Phase.SETUP, resolution=state.resolution + 1)
    return new, tuple(table.events)


def _place_all(table: Table, player: str, orders: Orders, armies: int, why: str) -> None:
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
    table = Table(state, away)
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
    count_turn(table, name, state.turn, missed)
    _place_all(table, name, orders, armies, "autopilot" if missed else "orders")

    streams = _Streams(state, randomness)
    conquests = 0
    for attack in orders.attack:
        if table.winner:
            break
        result = moves.attack(table, name, attack, streams.next, bonus_used)
        conquests += result[0]
        bonus_used = result[1]

    if not table.winner:
        for fortify in orders.fortifications[: state.options.fortifies]:
            if table.winner:  # (a mission done by a fortification)
                break
            moves.fortify(table, name, fortify)
        if conquests and not table.winner and state.options.with_cards:
            # (a mission done by the fortification ends the game first)
            table.draw(name, Stream.hidden(randomness.hidden, state.resolution, randomness.orders))
    if missed and not table.winner:
        drop_if_due(table, name)
        standing = table.last_standing()
        if standing:
            win(table, standing)

    seat = state.current
    if not table.winner:
        seat = rules.next_alive([table.alive[p.name] for p in state.players], state.current)
    rounds: dict[str, int] = {}
    if not table.winner and rules.round_ends(state, seat):
        if state.round >= state.options.rounds:
            rounds_over(table)
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
