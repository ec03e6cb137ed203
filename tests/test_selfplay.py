"""Self-play: hundreds of whole games between bots, with the rules' invariants checked after
every resolution by replaying its events, as an auditor would (OpenSpiel's random_sim_test).

Every game has a fixed seed, sha256(b"selfplay/<i>"), and draws its keys as DESIGN §6 says:
resolution r uses k[r + 1] of the seed's hash chain, card draws the hidden key h.

Games 200 on are Secret Mission Risk (3 to 6 players; dealt, random and drafted setups): the
deal, the draft, each mission won and each "destroy" mission fallen back are checked against
the rules written out again here, and no resolution may end with a mission done and the game
going on.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import zip_longest

import pytest
from bots import BotError, features, orders_for

from pbem.core import dice, rules, validation
from pbem.core.board import WILD, Board, load_board
from pbem.core.engine import Randomness, new_game, resolve
from pbem.core.events import (
    AttackStopped,
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
    MissionCompleted,
    MissionDealt,
    MissionFellBack,
    Placed,
    Reinforced,
    Reshuffled,
    Rolled,
    RolledForFirst,
    RoundsOver,
    SeatsDecided,
    Skipped,
    Traded,
    Won,
    event_from_dict,
)
from pbem.core.orders import ALL, BEST, MIN, REST, Attack, Fortify, Orders
from pbem.core.state import (
    NEUTRAL,
    CardRule,
    DiceRule,
    FogLevel,
    FortifyMode,
    GameState,
    Options,
    Phase,
    SetupMode,
    StopAt,
    TradedCards,
    TwoPlayer,
)

GAMES = 200
MISSION_GAMES = 100
MAX_RESOLUTIONS = 300
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")
BOARD = load_board("classic")
DECK = Counter(BOARD.cards())
CARD_ORDER = {c: i for i, c in enumerate(BOARD.cards())}


@dataclass(frozen=True)
class Case:
    """One self-played game: its number, players and options."""

    index: int
    players: int
    options: Options
    board: str = "classic"

    @property
    def the_board(self) -> Board:
        return load_board(self.board)

    @property
    def seed(self) -> bytes:
        return hashlib.sha256(b"selfplay/%d" % self.index).digest()

    @property
    def names(self) -> tuple[str, ...]:
        """The players in the order they sit: in a team game one of each team in turn."""
        teams = self.options.teams
        if teams:
            return tuple(n for row in zip_longest(*teams) for n in row if n is not None)
        return NAMES[: self.players]

    @property
    def id(self) -> str:
        o = self.options
        extra = f"-{o.two_player.value}" if self.players == 2 else ""
        return (
            f"game{self.index:03d}-{self.players}p{extra}-{o.setup.value}-{o.fortify.value}"
            f"-{o.traded_cards.value}"
            + ("-missions" if o.missions else "")
            + (f"-{self.board}" if self.board != "classic" else "")
            + ("-nocards" if o.cards is CardRule.NONE else "")
            + ("-flat" if o.cards is CardRule.FLAT else "")
            + ("-nobonus" if not o.territory_bonus else "")
            + (f"-rounds{o.rounds}" if o.rounds else "")
            + (f"-fortifies{o.fortifies}" if o.fortifies > 1 else "")
            + ("-teams" + "v".join(str(len(t)) for t in o.teams) if o.teams else "")
            + ("-teamfortify" if o.team_fortify else "")
            + ("-teamcards" if o.team_cards else "")
            + (f"-fog{o.fog.value}" if o.fog is not FogLevel.NONE else "")
        )


def make_case(i: int) -> Case:
    """Cycle through 2-6 players, both setups, both fortify rules, both two-player rules and
    both rules for traded cards (set aside in three games of four) and both meanings of stop_at
    (a threshold in one game of three, as in older games)."""
    options = Options(
        setup=(SetupMode.DEAL, SetupMode.RANDOM)[(i // 5) % 2],
        two_player=(TwoPlayer.NEUTRAL, TwoPlayer.CLASSIC)[(i // 20) % 2],
        fortify=(FortifyMode.ADJACENT, FortifyMode.CONNECTED)[(i // 10) % 2],
        traded_cards=TradedCards.DECK if (i // 40) % 4 == 1 else TradedCards.ASIDE,
        stop_at=StopAt.THRESHOLD if (i // 7) % 3 == 1 else StopAt.PROMISE,
        dice=DiceRule.KEY if (i // 3) % 4 == 2 else DiceRule.ORDERS,
    )
    return Case(i, 2 + i % 5, options)


def make_mission_case(i: int) -> Case:
    """Secret Mission Risk: 3-6 players, dealt, random and drafted setups, both fortify rules."""
    options = Options(
        setup=(SetupMode.DEAL, SetupMode.RANDOM, SetupMode.DRAFT)[i % 3],
        fortify=(FortifyMode.ADJACENT, FortifyMode.CONNECTED)[(i // 4) % 2],
        missions=True,
    )
    return Case(GAMES + i, 3 + i % 4, options)


VARIANT_GAMES = 100
"""Games of each variant value (issue of the clubs' variants), on top of the classic ones."""


def make_variant_case(i: int) -> Case:
    """The variants, 100 games of each value that is not classic Risk's: no cards (games
    0-99), no territory bonus (100-199), fortify between any two territories (200-299), no
    fortification (300-399), a limit of 2 to 10 rounds (400-499), flat spoils (500-599), two
    or three fortifications a turn (600-699), the islands board (700-799, 2 to 4 players,
    the other variants mixed in as in the rest), teams (800-999: 2x2, 2x3, 3x2 and three
    against two; fortification into team-mates' territories in two games of three, then in
    all; a round limit every fourth game); 2 to 6 players, both
    setups, missions in one game of five; the other variants mixed in every fourth game, so
    that they also meet."""
    kind, n = divmod(i, VARIANT_GAMES)
    mixed = n % 4 == 3
    fortify = (FortifyMode.ADJACENT, FortifyMode.CONNECTED)[n % 2]
    if kind == 2 or (mixed and kind == 0):
        fortify = FortifyMode.UNLIMITED
    if kind == 3 or (mixed and kind == 1):
        fortify = FortifyMode.NONE
    options = Options(
        setup=(SetupMode.DEAL, SetupMode.RANDOM)[(n // 5) % 2],
        fortify=fortify,
        cards=CardRule.NONE if kind == 0 or (mixed and kind == 3) else CardRule.ESCALATING,
        territory_bonus=not (kind == 1 or (mixed and kind == 2)),
        missions=n % 5 == 4,
        rounds=2 + n % 9 if kind == 4 or (mixed and kind == 0) else 0,
    )
    if kind == 5:
        options = replace(options, cards=CardRule.FLAT, territory_bonus=not mixed)
    if kind == 6:
        modes = (FortifyMode.ADJACENT, FortifyMode.CONNECTED, FortifyMode.UNLIMITED)
        options = replace(options, fortify=modes[n % 3], fortifies=2 + n % 2)
    if kind == 10:  # fog: light and heavy, teams in one game of four
        fog = (FogLevel.LIGHT, FogLevel.HEAVY)[n % 2]
        options = replace(options, fog=fog, dice=DiceRule.ORDERS)
        if n % 4 == 3:
            teams = (("alice", "carol"), ("bob", "dave"))
            return Case(GAMES + MISSION_GAMES + i, 4, replace(options, teams=teams))
        return Case(GAMES + MISSION_GAMES + i, 2 + n % 5, options)
    if kind in (8, 9):  # teams: two of two, two of three, three of two, three against two
        shapes = (((0, 2), (1, 3)), ((0, 2, 4), (1, 3, 5)), ((0, 3), (1, 4), (2, 5)))
        shapes += (((0, 2, 4), (1, 3)),)
        shape = shapes[n % 4]
        teams = tuple(tuple(NAMES[i] for i in team) for team in shape)
        options = replace(
            options,
            teams=teams,
            team_fortify=kind == 9 or n % 3 != 2,  # (games 900-999: all with it)
            team_cards=n % 2 == 0,
            fortify=(FortifyMode.ADJACENT, FortifyMode.CONNECTED, FortifyMode.UNLIMITED)[n % 3],
            rounds=3 + n % 8 if mixed else 0,
        )
        players = sum(len(t) for t in teams)
        return Case(GAMES + MISSION_GAMES + i, players, options)
    if kind == 7:  # the second board, for two to four players; no missions (classic only)
        setups = (SetupMode.DEAL, SetupMode.RANDOM, SetupMode.DRAFT)
        options = replace(options, setup=setups[n % 3], missions=False)
        return Case(GAMES + MISSION_GAMES + i, 2 + n % 3, options, "islands")
    return Case(GAMES + MISSION_GAMES + i, 2 + n % 5, options)


CASES = (
    [make_case(i) for i in range(GAMES)]
    + [make_mission_case(i) for i in range(MISSION_GAMES)]
    + [make_variant_case(i) for i in range(11 * VARIANT_GAMES)]
)
MISSION_CASES = CASES[GAMES : GAMES + MISSION_GAMES]
VARIANT_CASES = CASES[GAMES + MISSION_GAMES :]


# --- missions, written out again from the README -------------------------------------------


def mission_deck(seats: Sequence[str]) -> list[str]:
    return [
        "continents:North America,Africa",
        "continents:North America,Australia",
        "continents:Asia,South America",
        "continents:Asia,Africa",
        "continents:Europe,South America,+1",
        "continents:Europe,Australia,+1",
        "territories:24",
        "territories:18,2",
        *(f"destroy:{name}" for name in seats),
    ]


def goal(card: str, name: str, fallback: bool, team: Sequence[str] = ()) -> str:
    """What a card asks of its holder now: a "destroy" card aimed at its holder (or, in a team
    game, at anyone of their `team`), or fallen back, asks for 24 territories."""
    if card.startswith("destroy:") and (
        card == f"destroy:{name}" or card[len("destroy:") :] in team or fallback
    ):
        return "territories:24"
    return card


def team_of(state: GameState, name: str) -> tuple[str, ...]:
    """`name`'s team in a team game (the README: team-mates win together), else `name`."""
    return next((t for t in state.options.teams if name in t), (name,))


def won(state: GameState, name: str) -> Won:
    """The event of `name`'s win: with their whole team in a team game."""
    return Won(name, team_of(state, name) if state.options.teams else None)


def mission_done(
    card: str, name: str, owner: dict[str, str], armies: dict[str, int], alive: dict[str, bool]
) -> bool:
    kind, _, rest = card.partition(":")
    if kind == "destroy":
        return not alive[rest]
    if kind == "territories":
        count, _, each = rest.partition(",")
        held = [t for t, o in owner.items() if o == name and armies[t] >= int(each or 1)]
        return len(held) >= int(count)
    wanted = rest.split(",")
    held = [
        c.name for c in BOARD.continents.values() if all(owner[t] == name for t in c.territories)
    ]
    if wanted[-1] == "+1":
        wanted = wanted[:-1]
        return set(wanted) <= set(held) and len(held) > len(wanted)
    return set(wanted) <= set(held)


def done_in(state: GameState, name: str) -> bool:
    p = state.player(name)
    assert p.mission is not None
    owner = {t: h.owner for t, h in state.territories.items()}
    armies = {t: h.armies for t, h in state.territories.items()}
    alive = {q.name: q.alive for q in state.players}
    card = goal(p.mission, name, p.mission_fallback, team_of(state, name))
    return mission_done(card, name, owner, armies, alive)


def check_missions(before: GameState, events: Sequence[Event], after: GameState) -> None:
    """Missions never change but by a fallback (with its event, its target gone and not by the
    holder's hand); a game that goes on has no mission done; one won by a mission ends with
    that mission done."""
    gone = {e.player: e.by for e in events if isinstance(e, Eliminated)}
    dropped = {e.player for e in events if isinstance(e, Dropped)}
    fell = {e.player: e for e in events if isinstance(e, MissionFellBack)}
    for b, a in zip(before.players, after.players, strict=True):
        need(a.mission == b.mission, "a mission changed")
        if a.mission_fallback != b.mission_fallback:
            need(
                a.name in fell and not b.mission_fallback, f"{a.name}'s mission fell back silently"
            )
            target = fell[a.name].target
            need(a.mission == f"destroy:{target}", "a mission fell back that aims at no one gone")
            need(target in dropped or gone.get(target) not in (None, a.name), "fell back wrongly")
        else:
            need(a.name not in fell, "a fallback event without a fallback")
    done = [e for e in events if isinstance(e, MissionCompleted)]
    if after.phase is Phase.OVER and done:
        need(
            len(done) == 1 and events[-1] == won(after, done[0].player),
            "a mission won, not the game",
        )
        winner = after.player(done[0].player)
        need(winner.alive and done_in(after, winner.name), "the winner's mission is not done")
        need(done[0].card == winner.mission, "the mission told is not the card dealt")
    elif after.phase is not Phase.OVER and after.phase is not Phase.DRAFT:
        for p in after.players:
            if p.alive and done_in(after, p.name):
                fail(f"{p.name}'s mission {p.mission} is done, yet the game goes on")


def orders_keyed(
    before: GameState, orders: Sequence[Orders], events: Sequence[Event], key: bytes
) -> tuple[bytes, bytes | None, Sequence[Event]]:
    """In a game whose dice follow the orders (docs/dice.md, written out again here): the first
    event names each order file with the SHA-256 of the file as pbem writes it back, and the
    dice key is HMAC-SHA256(key, "pbem/orders/" || hex(D)), D the SHA-256 of those digests in
    seat order. Returns the key the dice come from, D (None under the old rule) and the events
    after that first one."""
    if not before.options.dice_by_orders:
        need(not any(isinstance(e, DiceKeyed) for e in events), "orders keyed under the old rule")
        return key, None, events
    seated = {o.player: o for o in orders}
    files = [
        hashlib.sha256(seated[p.name].to_toml().encode()).digest()
        for p in before.players
        if p.name in seated
    ]
    expected = DiceKeyed(
        tuple(p.name for p in before.players if p.name in seated), tuple(f.hex() for f in files)
    )
    need(
        bool(events) and events[0] == expected, f"the dice are not keyed by the orders: {expected}"
    )
    digest = hashlib.sha256(b"".join(files)).digest()
    keyed = hmac.new(key, b"pbem/orders/" + digest.hex().encode(), hashlib.sha256).digest()
    return keyed, digest, events[1:]


def audit_draft(
    before: GameState, orders: Sequence[Orders], events: Sequence[Event], after: GameState
) -> None:
    """Round by round in seat order, each player takes their highest-ranked free territory, or
    by the fill-in rule (most held in its continent, then board order) after "rest"."""
    _, _, events = orders_keyed(before, orders, events, b"")
    owner: dict[str, str | None] = dict.fromkeys(before.board.names)
    lists = {o.player: list(o.draft) for o in orders}
    expected: list[Event] = []
    round_number = 0
    while any(o is None for o in owner.values()):
        round_number += 1
        for p in before.players:
            if all(o is not None for o in owner.values()):
                break
            free = [t for t in lists[p.name] if t != REST and owner.get(t, "") is None]
            rest_at = lists[p.name].index(REST) if REST in lists[p.name] else None
            first_free = next(
                (i for i, t in enumerate(lists[p.name]) if t != REST and owner[t] is None), None
            )
            if free and (rest_at is None or (first_free is not None and first_free < rest_at)):
                pick, by = free[0], "list"
            else:
                count = Counter(
                    before.board.territories[t].continent for t, o in owner.items() if o == p.name
                )
                candidates = [t for t in before.board.names if owner[t] is None]
                best = max(count[before.board.territories[t].continent] for t in candidates)
                pick = next(
                    t for t in candidates if count[before.board.territories[t].continent] == best
                )
                by = "rest"
            owner[pick] = p.name
            expected.append(Drafted(p.name, pick, round_number, by))
    need(list(events) == expected, "the draft does not follow the lists")
    start = STARTING_ARMIES[len(before.players)]
    for p in after.players:
        need(p.to_place == start - len(after.owned(p.name)), "armies to place after the draft")
    need(after.phase is Phase.SETUP and after.turn == 0, "the setup turn follows the draft")
    need(all(h.armies == 1 for h in after.territories.values()), "one army on each drafted")


def key_chain(seed: bytes, length: int = dice.DEFAULT_CHAIN_LENGTH) -> list[bytes]:
    """k[0..L] at once (one hash a link), so that a game need not walk the chain each turn."""
    keys = [b""] * (length + 1)
    key = dice.chain_end(seed)
    keys[length] = key
    for i in range(length, 0, -1):
        key = hashlib.sha256(key).digest()
        keys[i - 1] = key
    return keys


def fingerprint(state: GameState) -> int:
    """A hash of everything in a state, to compare two runs without keeping every state."""
    return hash(
        (
            state.game,
            state.phase,
            state.turn,
            state.resolution,
            state.current,
            state.sets_traded,
            state.winner,
            state.players,
            state.deck,
            state.discards,
            tuple(state.territories.items()),
        )
    )


@dataclass
class Played:
    """What a game left behind: the orders given, one fingerprint per resolution, the end."""

    case: Case
    final: GameState
    orders: list[tuple[Orders, ...]] = field(default_factory=list)
    prints: list[tuple[int, int]] = field(default_factory=list)  # (state, events) per resolution
    wins: int = 0
    features: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def ended(self) -> bool:
        return self.final.phase is Phase.OVER

    @property
    def resolutions(self) -> int:
        return self.final.resolution


class AuditFailure(AssertionError):
    pass


def need(condition: object, message: str) -> None:
    if not condition:
        raise AuditFailure(message)


def fail(message: str) -> None:
    """Where a message takes work to format, checks say `if not ...: fail(...)` (hot loops)."""
    raise AuditFailure(message)


# --- the audit of one resolution -----------------------------------------------------------


# The rules' numbers, written out again (DESIGN section 5) rather than taken from pbem.rules.
def set_value(sets_traded: int) -> int:
    """4, 6, 8, 10, 12, 15, then 5 more a set: the value of the game's next set."""
    return (4, 6, 8, 10, 12, 15)[sets_traded] if sets_traded < 6 else 15 + 5 * (sets_traded - 5)


def flat_value(cards: Sequence[str], board: Board = BOARD) -> int:
    """Flat spoils, from the README: three infantry 4, three cavalry 6, three artillery 8, one
    of each 10; a wild card stands for whatever makes the set worth most."""
    kinds = [board.card_kind(c) for c in cards if c != WILD]
    worth = {"infantry": 4, "cavalry": 6, "artillery": 8}
    if len(set(kinds)) == len(kinds):  # all different (wild cards make up one of each)
        return 10
    return worth[str(kinds[0].value)]  # type: ignore[union-attr]


def is_set(cards: Sequence[str], board: Board = BOARD) -> bool:
    """Three alike, one of each, or two and a wild."""
    if len(cards) != 3:
        return False
    if "wild" in cards:
        return True
    return len({board.territories[c].card for c in cards}) in (1, 3)


STARTING_ARMIES = {3: 35, 4: 30, 5: 25, 6: 20}
ELIMINATION_TRADE_AT = 6  # cards taken that make 6 or more are traded at once ...
ELIMINATION_TRADE_TO = 4  # ... until 4 or fewer remain


def compare_dice(attacker: Sequence[int], defender: Sequence[int]) -> tuple[int, int]:
    """Highest against highest, then second against second; ties go to the defender."""
    lost_a = lost_d = 0
    for a, d in zip(sorted(attacker, reverse=True), sorted(defender, reverse=True), strict=False):
        if a > d:
            lost_d += 1
        else:
            lost_a += 1
    return lost_a, lost_d


def check_invariants(
    case: Case, before: GameState, events: Sequence[Event], after: GameState
) -> None:
    """What must hold after any resolution, looking only at the states and the events."""
    neutral = case.players == 2 and case.options.two_player is TwoPlayer.NEUTRAL
    alive = {p.name for p in after.players if p.alive}
    need(list(after.territories) == list(before.board.names), "territories out of board order")
    for t, h in after.territories.items():
        if h.armies < 1:
            fail(f"{t} holds {h.armies} armies")
        if h.owner not in alive and not (neutral and h.owner == NEUTRAL):
            fail(f"{t} is held by {h.owner}, who is neither alive nor the neutral")
    cards = Counter(after.deck) + Counter(after.discards)
    if after.discards and case.options.traded_cards is TradedCards.DECK:
        fail(f"cards set aside in a game that puts them back into the deck: {after.discards}")
    for p in after.players:
        cards.update(p.hand)
        # The winner keeps the loser's cards untraded; otherwise no hand grows beyond 6.
        if after.phase is not Phase.OVER and len(p.hand) > 6:
            fail(f"{p.name} holds {len(p.hand)} cards")
        if not p.alive:
            if p.hand:
                fail(f"{p.name} is out but holds cards {p.hand}")
            if after.owned(p.name):
                fail(f"{p.name} is out but holds territories")
    if cards != Counter(
        before.board.cards()
    ):  # each of the 44 cards in the draw pile, the discards or a hand
        deck = Counter(before.board.cards())
        fail(f"cards lost or made up: {cards - deck} / {deck - cards}")
    placed = sum(e.armies for e in events if isinstance(e, Placed))
    placed += sum(isinstance(e, Drafted) for e in events)  # one army on each drafted
    lost = sum(e.attacker_losses + e.defender_losses for e in events if isinstance(e, Rolled))
    total_before = sum(h.armies for h in before.territories.values())
    total_after = sum(h.armies for h in after.territories.values())
    need(
        total_after == total_before + placed - lost,
        f"armies {total_before} + placed {placed} - lost {lost} != {total_after}",
    )
    draws = [e for e in events if isinstance(e, (DrewCard, DrewNoCard))]
    if len(draws) > 1:
        fail(f"{len(draws)} cards drawn in one resolution")
    if draws:
        need(any(isinstance(e, Conquered) for e in events), "a card drawn without a conquest")
    reshuffles = [e for e in events if isinstance(e, Reshuffled)]
    need(len(reshuffles) <= len(draws), "a reshuffle without a draw")
    if reshuffles and not (case.options.sets_aside and not before.deck):
        fail("the discards were reshuffled though the draw pile held cards")
    drawn = [e.card for e in draws if isinstance(e, DrewCard)]
    if drawn and case.options.sets_aside and not reshuffles and drawn[0] not in before.deck:
        fail(f"drew {drawn[0]}, not in the draw pile: a traded card drawn back")
    wins = [e for e in events if isinstance(e, Won)]
    need(len(wins) <= 1, "two Won events")
    for e in events:
        if isinstance(e, (Conquered, Rolled)):
            loser = e.loser if isinstance(e, Conquered) else e.defender_name
            if loser != e.player and loser in team_of(before, e.player):
                fail(f"{e}: a team-mate attacked")
    if case.options.missions:
        check_missions(before, events, after)
    limit = check_rounds(case, before, events, after)
    mission = any(isinstance(e, MissionCompleted) for e in events)
    if after.phase is Phase.OVER and (mission or limit):
        need(len(wins) == 1 and after.winner == wins[0].player, "winner differs from Won")
    elif after.phase is Phase.OVER:
        need(len(wins) == 1, "the game is over without a Won event")
        need(after.winner == wins[0].player, "winner differs from the Won event")
        need(wins[0] == won(after, after.winner), f"{wins[0]}: not the winner's team")
        team = set(team_of(after, after.winner))
        if not (after.winner in alive and alive <= team):
            fail(f"winner {after.winner} but alive: {alive}")
        owners = {h.owner for h in after.territories.values()}
        if not (owners <= team | {NEUTRAL}):
            fail(f"over, yet territories held by {owners}")
        if not neutral and not owners <= team:
            fail("a game without neutral ends with all 42 held by the winners")
    else:
        need(not wins and after.winner is None, "a Won event but the game goes on")
    need(after.resolution == before.resolution + 1, "the resolution number did not move on")


def check_rounds(case: Case, before: GameState, events: Sequence[Event], after: GameState) -> bool:
    """A game with a round limit, written out again from the README: a round begins with the
    seat that played first (or the next one still in), the play turn whose next player goes
    back round the table ends it, and when that is the last round, the player still in with
    the most territories wins, then the most armies, then the earliest in the round. Whether
    the resolution ended the game at its round limit."""
    limit = [e for e in events if isinstance(e, RoundsOver)]
    rounds = case.options.rounds
    if not rounds:
        need(not limit and after.round == 0, "a round counted in a game without a limit")
        return False
    if before.phase is not Phase.PLAY:
        need(not limit, "a round limit reached before play")
        if after.phase is Phase.PLAY:
            need(after.round == 1 and after.first_seat == after.current, "the first round")
        return False
    n = len(before.players)

    def place(seat: int) -> int:
        return (seat - before.first_seat) % n

    won_otherwise = any(isinstance(e, (Won, MissionCompleted)) for e in events) and not limit
    if won_otherwise:
        return False
    alive = [p for p in after.players if p.alive]
    following = next(
        (p.seat for k in range(1, n + 1) for p in alive if p.seat == (before.current + k) % n),
        before.current,
    )
    ends = place(following) <= place(before.current)
    need(after.first_seat == before.first_seat, "the first seat changed")
    if ends and before.round >= rounds:
        need(len(limit) == 1 and after.phase is Phase.OVER, "the last round ended, the game not")
        # In a team game the teams still in the game compare, each by its players still in.
        sides = {team_of(after, p.name) for p in alive}
        seat = {p.name: p.seat for p in alive}
        held = {
            side: [t for t, h in after.territories.items() if h.owner in side] for side in sides
        }

        def first(side: tuple[str, ...]) -> str:
            return min((n for n in side if n in seat), key=lambda n: place(seat[n]))

        best = min(
            sides,
            key=lambda side: (
                -len(held[side]),
                -sum(after.armies(t) for t in held[side]),
                place(seat[first(side)]),
            ),
        )
        winner = first(best)
        need(
            limit[0]
            == RoundsOver(
                rounds,
                winner,
                len(held[best]),
                sum(after.armies(t) for t in held[best]),
                best if after.options.teams else None,
            )
            and events[-1] == won(after, winner)
            and after.winner == winner,
            f"{limit[0]} at the round limit: {winner} holds the most",
        )
        return True
    need(not limit, "the game ended before its last round was over")
    if after.phase is Phase.PLAY:
        need(after.round == before.round + (1 if ends else 0), "the rounds miscounted")
        need(after.round <= rounds, "a round past the limit")
    return False


class Replay:
    """Re-applies a play resolution's events to the state before it, checking each against the
    rules and the orders, then compares the result with the engine's state."""

    def __init__(
        self,
        case: Case,
        before: GameState,
        orders: Orders,
        events: Sequence[Event],
        key: bytes,
        hidden: bytes,
    ) -> None:
        self.case = case
        self.before = before
        self.board = before.board
        self.card_order = {c: i for i, c in enumerate(self.board.cards())}
        self.orders = orders
        self.key, self.digest, rest = orders_keyed(before, [orders], events, key)
        self.events = list(rest)
        self.hidden = hidden
        self.i = 0
        self.name = before.current_player.name
        self.owner = {t: h.owner for t, h in before.territories.items()}
        self.armies = {t: h.armies for t, h in before.territories.items()}
        self.hands = {p.name: list(p.hand) for p in before.players}
        self.alive = {p.name: p.alive for p in before.players}
        self.deck = list(before.deck)
        self.discards = list(before.discards)
        self.sets = before.sets_traded
        self.bonus_used = False
        self.won: str | None = None
        self.fallback: set[str] = set()
        self.rolls: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        self.outcomes: Counter[str] = Counter()
        # Under fog each battle rolls from a key of its own (docs/fog.md, written out again
        # here): its label is its pair and its number among the turn's attacks on the pair.
        self.raw_key = key
        self.fogged = case.options.fog is not FogLevel.NONE
        self.pair_count: Counter[tuple[str, str]] = Counter()
        self.battles: list[tuple[str, list[tuple[tuple[int, ...], tuple[int, ...]]]]] = []

    # the event cursor
    def peek(self) -> Event | None:
        while self.i < len(self.events) and isinstance(
            self.events[self.i], (MissionFellBack, MissionCompleted)
        ):
            self.mission_event(self.events[self.i])
        return self.events[self.i] if self.i < len(self.events) else None

    def over(self) -> bool:
        """Whether the game has ended (a mission done is seen by looking at what comes next)."""
        self.peek()
        return self.won is not None

    def mission_event(self, event: Event) -> None:
        """A mission fallen back (its target just gone) or done (the game ends with it)."""
        self.i += 1
        seat = self.before.player(event.player)  # type: ignore[attr-defined]
        if isinstance(event, MissionFellBack):
            need(seat.mission == f"destroy:{event.target}", f"{event} for {seat.mission}")
            need(not self.alive[event.target], f"{event}, yet the target is in the game")
            self.fallback.add(event.player)
            self.outcomes["mission fell back"] += 1
            return
        assert isinstance(event, MissionCompleted) and seat.mission is not None
        fallen = seat.mission_fallback or seat.name in self.fallback
        now = goal(seat.mission, seat.name, fallen, team_of(self.before, seat.name))
        need(event.mission == now, f"{event}: the mission is {now}")
        if not mission_done(now, seat.name, self.owner, self.armies, self.alive):
            fail(f"{event}, yet the mission is not done")
        event_won = self.take(Won, "the mission's winner")
        need(event_won == won(self.before, seat.name), f"{event_won} after {event}")
        self.won = seat.name
        self.outcomes["mission won"] += 1
        if seat.name != self.name:
            self.outcomes["mission won on another's turn"] += 1

    def take(self, kind: type, what: str) -> Event:
        event = self.peek()
        if not isinstance(event, kind):
            fail(f"expected {kind.__name__} ({what}), got {event!r}")
        self.i += 1
        assert event is not None
        return event

    def trade(self, forced: bool) -> int:
        """A traded set, then its armies: the +2 of a card showing a territory the trader
        holds (once a turn) and, for a trade forced by an elimination, the set's value."""
        event = self.take(Traded, "a trade")
        assert isinstance(event, Traded)
        if not (event.player == self.name and event.forced == forced):
            fail(f"odd trade {event}")
        if not is_set(event.cards, self.board):
            fail(f"{event.cards} is not a set")
        left = rules.remove_cards(self.hands[self.name], event.cards)
        if left is None:
            fail(f"{self.name} traded {event.cards} without holding them")
        flat = self.case.options.cards is CardRule.FLAT
        if event.value != (flat_value(event.cards, self.board) if flat else set_value(self.sets)):
            fail(f"set valued {event.value}")
        if flat:
            self.outcomes[f"flat {event.value}"] += 1
        need(event.set_number == self.sets + 1, "set numbers do not count the game's sets")
        for card in event.cards:
            self.hands[self.name].remove(card)
        if self.case.options.traded_cards is TradedCards.ASIDE:
            self.discards.extend(event.cards)  # face up beside the board, in the order traded
        else:
            self.deck.extend(event.cards)
            self.deck.sort(key=self.card_order.__getitem__)  # the deck is kept in board order
        self.sets += 1
        mine = [c for c in event.cards if self.owner.get(c) == self.name]
        bonus = placed = False
        while True:
            nxt = self.peek()
            if not isinstance(nxt, Placed):
                break
            if nxt.why == "card" and not bonus:
                need(not self.bonus_used, "the +2 of a traded card given twice in one turn")
                need(self.case.options.territory_bonus, "a +2 in a game without it")
                if not (nxt.territory in mine and nxt.armies == 2):
                    fail(f"bad card bonus {nxt}")
                self.bonus_used = bonus = True
                self.outcomes["card bonus"] += 1
            elif nxt.why == "elimination" and forced and not placed:
                if nxt.armies != event.value:
                    fail(f"{nxt} for a set worth {event.value}")
                need(self.owner[nxt.territory] == self.name, "forced-trade armies on another's")
                placed = True
            else:
                break
            if nxt.player != self.name:
                fail(f"{nxt} placed for another player")
            self.armies[nxt.territory] += nxt.armies
            self.i += 1
        if not (bonus or self.bonus_used or not mine or not self.case.options.territory_bonus):
            fail(f"no +2 for {mine} in {event.cards}")
        if mine and not self.case.options.territory_bonus:
            self.outcomes["bonus withheld"] += 1
        if placed != forced:
            fail(f"forced trade {event} without its armies placed")
        return event.value

    def run(self) -> None:
        before, orders, name = self.before, self.orders, self.name
        reinforced = self.take(Reinforced, "the turn's reinforcements")
        assert isinstance(reinforced, Reinforced)
        count = len(before.owned(name))
        held = before.continents_held(name)
        need(
            (reinforced.player, reinforced.turn) == (name, before.turn)
            and reinforced.territories == count
            and reinforced.from_territories == max(3, count // 3)
            and reinforced.continents == held
            and reinforced.from_continents == sum(self.board.continents[c].bonus for c in held),
            f"reinforcements wrong: {reinforced} for {count} territories and {held}",
        )
        armies = reinforced.from_territories + reinforced.from_continents

        traded: list[tuple[str, ...]] = []
        while isinstance(self.peek(), Traded):
            start = self.i
            armies += self.trade(forced=False)
            traded.append(tuple(sorted(self.events[start].cards)))  # type: ignore[attr-defined]
        if self.over():
            pass  # a mission done by a card's +2 ends the turn before its other trades
        elif orders.trade == BEST:
            hand, mine = before.player(name).hand, before.owned(name)
            best = rules.best_set(self.board, hand, mine, rule=self.case.options.cards)
            need(
                best is not None and traded == [tuple(sorted(best))], f"traded {traded}, not {best}"
            )
        else:
            need(
                traded == [tuple(sorted(s)) for s in orders.trade],
                f"traded {traded}, ordered {orders.trade}",
            )

        fixed = sum(int(p.armies) for p in orders.place if p.armies != REST)
        for place in orders.place:
            if self.over():
                break
            event = self.take(Placed, place.describe())
            amount = armies - fixed if place.armies == REST else place.armies
            if event != Placed(name, place.territory, amount, "orders"):
                fail(f"{event} for {place.describe()}")
            if self.owner[place.territory] != name:
                fail(f"placed on {place.territory}: not yours")
            self.armies[place.territory] += amount  # type: ignore[operator]

        for attack in orders.attack:
            if self.over():
                break
            self.attack(attack)

        for fortify in orders.fortifications:
            if self.over():
                break
            self.fortify(fortify)
        if len(orders.fortifications) > 1:
            self.outcomes["fortified twice"] += 1
        conquered = any(isinstance(e, Conquered) for e in self.events)
        if not self.over() and conquered and self.case.options.cards is not CardRule.NONE:
            self.draw()  # (in a game without cards, a card drawn is an unexpected event)
        if isinstance(self.peek(), RoundsOver):  # (checked by check_rounds)
            self.i += 1
            won = self.take(Won, "the winner at the round limit")
            self.won = won.player  # type: ignore[attr-defined]
            self.outcomes["rounds over"] += 1
        if self.i != len(self.events):
            fail(f"unexpected events: {self.events[self.i :]}")
        if not self.fogged:
            need(dice.check_rolls(self.key, self.rolls) is None, "dice differ from the stream")
            return
        assert self.digest is not None  # (fog games key their dice by the orders)
        for label, rolls in self.battles:
            battle = hmac.new(self.raw_key, b"pbem/fog/" + label.encode(), hashlib.sha256).digest()
            keyed = hmac.new(battle, b"pbem/orders/" + self.digest.hex().encode(), hashlib.sha256)
            if dice.check_rolls(keyed.digest(), rolls) is not None:
                fail(f"the dice of battle {label} are not its own key's")
        self.outcomes["fog battles"] += len([b for b in self.battles if b[1]])

    def draw(self) -> None:
        """The card for a conquest: from the draw pile only; an empty pile first takes the
        discards (once), then card number randbelow(pile) of the pile in board order."""
        name = self.name
        if not self.deck and self.discards:
            shuffled = self.take(Reshuffled, "the discards shuffled into a new draw pile")
            if shuffled != Reshuffled(name, len(self.discards)):
                fail(f"{shuffled} for {len(self.discards)} cards set aside")
            self.deck = sorted(self.discards, key=self.card_order.__getitem__)
            self.discards = []
            self.outcomes["reshuffled"] += 1
        if not self.deck:
            nothing = self.take(DrewNoCard, "no card left to draw")
            need(nothing.player == name, f"{nothing} for {name}")  # type: ignore[attr-defined]
            return
        drew = self.take(DrewCard, "the card for a conquest")
        assert isinstance(drew, DrewCard)
        stream = dice.Stream.hidden(self.hidden, self.before.resolution, self.digest)
        expected = self.deck[stream.randbelow(len(self.deck))]
        if drew != DrewCard(name, expected):
            fail(f"drew {drew.card}, the stream says {expected}")
        self.deck.remove(expected)
        self.hands[name].append(expected)

    def attack(self, attack: Attack) -> None:
        name = self.name
        source, target, stop = attack.source, attack.target, max(1, attack.stop_at)
        event = self.peek()
        if isinstance(event, Skipped):
            self.i += 1
            if event.order != attack.describe():
                fail(f"skipped {event.order}")
            need(
                self.owner[source] != name
                or self.owner[target] in team_of(self.before, name)
                or self.armies[source] <= stop,
                f"attack skipped though possible: {event}",
            )
            self.outcomes["attack skipped"] += 1
            return
        if self.owner[source] != name:
            fail(f"attack from {source}, not {name}'s")
        if self.owner[target] in team_of(self.before, name):
            fail(f"attack on {target}, {self.owner[target]}'s, of {name}'s own team")
        if self.armies[source] <= stop:
            fail(f"attack from {source} with {self.armies[source]}")
        # (a battle fought: under fog its number among the turn's battles on its pair)
        self.pair_count[source, target] += 1
        number = self.pair_count[source, target] if self.fogged else None
        if self.fogged:
            self.battles.append((f"{source}|{target}|{number}", []))
        defender = self.owner[target]
        last = 0
        while isinstance(self.peek(), Rolled):
            roll = self.peek()
            assert isinstance(roll, Rolled)
            self.i += 1
            if (roll.player, roll.source, roll.target, roll.defender_name) != (
                name,
                source,
                target,
                defender,
            ):
                fail(f"roll {roll} in attack {attack.describe()}")
            if self.armies[source] <= stop or self.armies[target] <= 0:
                fail("rolled past the end")
            a, d = len(roll.attacker), len(roll.defender)
            if a > min(3, self.armies[source] - 1):  # one more army than dice, at most 3
                fail(f"attacker rolled {a} dice")
            allowed = min(3, self.armies[source] - 1, attack.dice or 3)
            if self.case.options.stop_at is StopAt.PROMISE:  # never below stop_at
                allowed = min(allowed, self.armies[source] - stop)
            if a != allowed:
                fail(f"attacker rolled {a} dice, allowed {allowed}")
            if d != min(2, self.armies[target]):
                fail(f"defender rolled {d} dice")
            if not all(1 <= x <= 6 for x in (*roll.attacker, *roll.defender)):
                fail(f"not a die in {roll}")
            if (roll.attacker_losses, roll.defender_losses) != compare_dice(
                roll.attacker, roll.defender
            ):
                fail(f"losses wrong in {roll}")
            self.armies[source] -= roll.attacker_losses
            self.armies[target] -= roll.defender_losses
            self.rolls.append((roll.attacker, roll.defender))
            if self.fogged:
                self.battles[-1][1].append((roll.attacker, roll.defender))
            last = a
        if last <= 0:
            fail(f"attack {attack.describe()} rolled no dice")
        end = self.peek()
        if isinstance(end, (AttackStopped, Conquered)) and end.battle != number:
            fail(f"{end} is not battle {number} of its pair")
        if isinstance(end, AttackStopped):
            self.i += 1
            need(self.armies[target] > 0, "attack stopped, but the target is empty")
            need(self.armies[source] <= stop, "attack stopped early")
            self.outcomes["attack stopped"] += 1
            return
        conquered = self.take(Conquered, "the conquest")
        assert isinstance(conquered, Conquered)
        need(self.armies[target] == 0, "conquered a territory with armies left")
        most = self.armies[source] - 1
        need(last <= most, "cannot move the dice of the last roll in")
        if attack.move == ALL:
            moved = most
        elif attack.move == MIN:
            moved = last
        else:
            moved = max(last, min(int(attack.move), most))
        need(
            (conquered.player, conquered.source, conquered.target, conquered.loser)
            == (name, source, target, defender)
            and conquered.moved == moved
            and (conquered.note is not None) == (attack.move not in (ALL, MIN, moved)),
            f"{conquered} for {attack}",
        )
        if conquered.note:
            self.outcomes["move changed"] += 1
        self.owner[target] = name
        self.armies[source] -= moved
        self.armies[target] = moved
        self.outcomes["conquered"] += 1
        if defender == NEUTRAL or defender in self.owner.values():
            return
        out = self.take(Eliminated, f"{defender} lost their last territory")
        assert isinstance(out, Eliminated)
        need(
            out == Eliminated(defender, name, len(self.hands[defender])),
            f"{out}: {defender} held {self.hands[defender]}",
        )
        self.outcomes["eliminated"] += 1
        self.hands[name].extend(self.hands[defender])
        self.hands[defender] = []
        self.alive[defender] = False
        living = {p for p, a in self.alive.items() if a}
        if living <= set(team_of(self.before, name)):  # (in a team game, the last team)
            last = self.take(Won, "the last player standing")
            if last != won(self.before, name):
                fail(f"{last}, yet {name} is the last one")
            self.won = name
            return
        if len(self.hands[name]) < ELIMINATION_TRADE_AT:
            need(not isinstance(self.peek(), Traded), "forced trade with fewer than 6 cards")
            return
        while len(self.hands[name]) > ELIMINATION_TRADE_TO and not self.over():
            self.trade(forced=True)
            self.outcomes["forced trade"] += 1
        need(self.won or not isinstance(self.peek(), Traded), "forced trades below 4 cards")

    def fortify(self, fortify: Fortify) -> None:
        name, source, target = self.name, fortify.source, fortify.target
        options = self.case.options
        partners = set(team_of(self.before, name)) if options.team_fortify else {name}
        possible = (
            source != target
            and self.owner[source] == name
            and self.owner[target] in partners
            and self.armies[source] >= 2
            and {
                FortifyMode.ADJACENT: self.board.adjacent(source, target),
                FortifyMode.CONNECTED: target in self.connected(source),
                FortifyMode.UNLIMITED: True,
                FortifyMode.NONE: False,
            }[self.case.options.fortify]
        )
        event = self.peek()
        if isinstance(event, Skipped):
            self.i += 1
            if possible or event.order != fortify.describe():
                fail(f"{event} though possible")
            self.outcomes["fortify skipped"] += 1
            return
        done = self.take(Fortified, fortify.describe())
        assert isinstance(done, Fortified)
        if not possible:
            fail(f"{done} is not a legal fortification")
        most = self.armies[source] - 1
        moved = most if fortify.armies == ALL else min(int(fortify.armies), most)
        need(
            (done.player, done.source, done.target, done.armies) == (name, source, target, moved)
            and (done.note is not None) == (fortify.armies not in (ALL, moved)),
            f"{done} for {fortify}",
        )
        if done.note:
            self.outcomes["fortify cut"] += 1
        if self.owner[target] != name:
            self.outcomes["fortify to a team-mate"] += 1
        if target not in self.connected(source):
            self.outcomes["fortify unlimited"] += 1
        self.armies[source] -= moved
        self.armies[target] += moved

    def connected(self, source: str) -> set[str]:
        """Where a chain leads from `source`: through the player's territories and, in a team
        game with team fortification, their team-mates'."""
        through = set(team_of(self.before, self.name)) if self.case.options.team_fortify else set()
        through.add(self.name)
        seen = {source}
        todo = [source]
        while todo:
            for n in self.board.neighbours(todo.pop()):
                if n not in seen and self.owner[n] in through:
                    seen.add(n)
                    todo.append(n)
        return seen

    def compare(self, after: GameState) -> None:
        """The replayed state must be the engine's."""
        for t, h in after.territories.items():
            if (h.owner, h.armies) != (self.owner[t], self.armies[t]):
                fail(f"{t}: engine {h}, replay {self.owner[t]} {self.armies[t]}")
        for p in after.players:
            if sorted(p.hand) != sorted(self.hands[p.name]):
                fail(f"{p.name}'s hand differs")
            if p.alive != self.alive[p.name]:
                fail(f"{p.name} alive={p.alive}")
        need(after.deck == tuple(self.deck), "deck differs (or is not in board order)")
        need(after.discards == tuple(self.discards), "discards differ (or not in order traded)")
        need(after.sets_traded == self.sets, "sets traded differs")
        if self.won:
            need(after.phase is Phase.OVER and after.winner == self.won, "the game goes on")
            need(after.turn == self.before.turn, "the turn moved on after the game ended")
        else:
            if after.phase is not Phase.PLAY:
                fail(f"phase {after.phase}")
            need(after.turn == self.before.turn + 1, "the turn did not move on")
            seats = len(after.players)
            nxt = next(
                (self.before.current + k) % seats
                for k in range(1, seats + 1)
                if after.players[(self.before.current + k) % seats].alive
            )
            if after.current != nxt:
                fail(f"next player {after.current}, expected seat {nxt}")


def audit_setup(case: Case, state: GameState, events: Sequence[Event], key: bytes) -> None:
    """Resolution 0: first-player dice from the public stream, a fair deal, the armies."""
    stream = dice.Stream.public(key)
    i = 0
    contenders = list(case.names)
    while len(contenders) > 1:
        rolls = []
        for name in contenders:
            event = events[i]
            i += 1
            if event != RolledForFirst(name, stream.die()):
                fail(f"first-player roll {event}")
            assert isinstance(event, RolledForFirst)
            rolls.append((name, event.die))
        best = max(d for _, d in rolls)
        contenders = [n for n, d in rolls if d == best]
    first = case.names.index(contenders[0])
    order = case.names[first:] + case.names[:first]
    if events[i] != SeatsDecided(order):
        fail(f"seats {events[i]}, expected {order}")
    i += 1
    if case.options.missions:
        cards = mission_deck(order)
        deal = dice.Stream.missions(dice.hidden_key(case.seed))
        dealt_missions = [cards.pop(deal.randbelow(len(cards))) for _ in order]
        told = [e for e in events if isinstance(e, MissionDealt)]
        need(
            told == [MissionDealt(n, m) for n, m in zip(order, dealt_missions, strict=True)], "deal"
        )
        need([p.mission for p in state.players] == dealt_missions, "missions in the seats")
        events = [e for e in events if not isinstance(e, MissionDealt)]
    if case.options.setup is SetupMode.DRAFT:
        need(len(events) == i, f"draft setup events {events[i:]}")
        need(state.phase is Phase.DRAFT and state.turn == 0, "a drafted game starts with the draft")
        need(
            all((h.owner, h.armies) == (NEUTRAL, 0) for h in state.territories.values()),
            "territories claimed before the draft",
        )
        return
    if state.phase is Phase.OVER:  # a random setup that did a mission at once
        events = events[:-2]
    neutral = case.players == 2 and case.options.two_player is TwoPlayer.NEUTRAL
    owners = order + ((NEUTRAL,) if neutral else ())
    shuffled = stream.shuffle(state.board.names)
    dealt: dict[str, list[str]] = {o: [] for o in owners}
    for j, t in enumerate(shuffled):
        dealt[owners[j % len(owners)]].append(t)
    for o in owners:
        expected = Dealt(o, tuple(t for t in state.board.names if t in dealt[o]))
        if events[i] != expected:
            fail(f"deal {events[i]}, expected {expected}")
        i += 1
    sizes = {len(v) for v in dealt.values()}
    need(max(sizes) - min(sizes) <= 1, "an unfair deal")
    for event in events[i:]:
        if not (isinstance(event, Placed) and event.why == "random"):
            fail(f"setup event {event}")
        assert isinstance(event, Placed)
        need(state.owner(event.territory) == event.player, "placed on another's territory")
    if case.players == 2:
        start = 40 if case.options.two_player is TwoPlayer.NEUTRAL else 50
    else:
        start = STARTING_ARMIES[case.players]
    for o in owners:
        player = state.player(o) if o != NEUTRAL else None
        have = state.total_armies(o) + (player.to_place if player else 0)
        if have != start:
            fail(f"{o} starts with {have} armies, not {start}")
    need([p.name for p in state.players] == list(order), "seats out of order")
    if state.phase is Phase.OVER:
        return
    if case.options.setup is SetupMode.DEAL:
        need(state.phase is Phase.SETUP and state.turn == 0, "a dealt game starts with setup")
        need(all(p.to_place > 0 for p in state.players), "nothing left to place at setup")
    else:
        need(state.phase is Phase.PLAY and state.turn == 1, "a random game starts at once")
        need(all(p.to_place == 0 for p in state.players), "armies left to place")
    need(
        Counter(state.deck) == Counter(state.board.cards())
        and not any(p.hand for p in state.players),
        "deck at start",
    )
    need(state.discards == () and state.options == case.options, "discards or options at start")


def audit_setup_turn(
    before: GameState, orders: Sequence[Orders], events: Sequence[Event], after: GameState
) -> None:
    """The setup turn places exactly each player's remaining armies, and play begins."""
    placed: Counter[str] = Counter()
    if after.phase is Phase.OVER:  # a mission done by the setup's armies: checked elsewhere
        events = [e for e in events if not isinstance(e, (MissionCompleted, Won))]
    for event in events:
        if not (isinstance(event, Placed) and event.why == "setup"):
            fail(f"setup turn event {event}")
        assert isinstance(event, Placed)
        need(before.owner(event.territory) == event.player, "setup armies on another's land")
        placed[event.player] += event.armies
    for p in before.players:
        if placed[p.name] != p.to_place:
            fail(f"{p.name} placed {placed[p.name]} of {p.to_place}")
    if after.phase is not Phase.OVER:
        need(after.phase is Phase.PLAY and after.turn == 1 and after.current == 0, "play begins")
    need(all(q.to_place == 0 for q in after.players), "armies still to place")
    for t, h in after.territories.items():
        need(h.owner == before.owner(t), "the setup turn changed an owner")


# --- playing -------------------------------------------------------------------------------


@functools.cache
def play(case: Case) -> Played:
    """Self-play one game to its end (or MAX_RESOLUTIONS), auditing every resolution."""
    seed = case.seed
    keys = key_chain(seed)
    need(keys[1] == dice.resolution_key(seed, 0), "the chain disagrees with pbem.dice")
    need(keys[0] == dice.commitment(seed), "the commitment is not k[0]")
    hidden = dice.hidden_key(seed)
    rng = random.Random(seed)
    state, events = new_game(
        case.id, case.names, case.the_board, case.options, Randomness(keys[1], hidden)
    )
    audit_setup(case, state, events, keys[1])
    played = Played(case, state)
    played.prints.append((fingerprint(state), hash(events)))
    while state.phase is not Phase.OVER and state.resolution < MAX_RESOLUTIONS:
        r = state.resolution
        key = keys[r + 1]
        need(dice.key_follows(key, keys[r]), "a key that does not follow the last one")
        try:
            orders = tuple(orders_for(state, name, rng) for name in state.awaiting())
        except BotError as error:
            raise BotError(f"{case.id}, resolution {r} (turn {state.turn}): {error}") from None
        for o in orders:
            played.features.update(features(o))
        new, events = resolve(state, orders, Randomness(key, hidden))
        try:
            check_invariants(case, state, events, new)
            if state.phase is Phase.DRAFT:
                audit_draft(state, orders, events, new)
            elif state.phase is Phase.SETUP:
                audit_setup_turn(state, orders, events, new)
            else:
                replay = Replay(case, state, orders[0], events, key, hidden)
                replay.run()
                replay.compare(new)
                played.outcomes.update(replay.outcomes)
        except AuditFailure as failure:
            raise AuditFailure(
                f"{case.id}, resolution {r} (turn {state.turn}, {state.awaiting()}): {failure}\n"
                + "\n".join(o.to_toml() for o in orders)
                + "\nevents:\n"
                + "\n".join(repr(e) for e in events)
            ) from None
        played.wins += sum(isinstance(e, Won) for e in events)
        played.orders.append(orders)
        played.prints.append((fingerprint(new), hash(events)))
        state = new
    r = state.resolution - 1
    need(keys[r + 1] == dice.resolution_key(seed, r), "the chain disagrees with pbem.dice")
    played.final = state
    return played


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_selfplay_game_keeps_the_rules(case: Case) -> None:
    played = play(case)
    final = played.final
    if played.wins != (1 if played.ended else 0):
        fail(f"{played.wins} Won events")
    if played.ended and played.outcomes["mission won"]:
        assert final.player(final.winner or "").alive
        assert done_in(final, final.winner or "")
    elif played.ended and played.outcomes["rounds over"]:
        assert final.round == case.options.rounds and final.player(final.winner or "").alive
    elif played.ended:
        alive = {p.name for p in final.players if p.alive}
        assert final.winner in alive and alive <= set(team_of(final, final.winner or ""))
    if played.ended:
        assert validation.validate(final, played.orders[-1][0])  # no orders after the end


def test_most_selfplay_games_end() -> None:
    games = [play(c) for c in CASES]
    ended = sum(g.ended for g in games)
    assert len(games) >= 200
    assert ended / len(games) > 0.8, f"only {ended} of {len(games)} games ended"
    for players in range(2, 7):
        some = [g for g in games if g.case.players == players]
        assert sum(g.ended for g in some) > len(some) // 2, f"{players}-player games stall"


def test_selfplay_exercises_every_order_feature_and_outcome() -> None:
    seen: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for c in CASES:
        seen.update(play(c).features)
        outcomes.update(play(c).outcomes)
    wanted = {
        "trade best",
        "trade 1 explicit",
        "trade 2 explicit",
        "trade wild",
        "place rest",
        "place number",
        "place twice",
        "dice None",
        "dice 1",
        "dice 2",
        "dice 3",
        "stop_at",
        "move all",
        "move min",
        "move number",
        "chained attack",
        "second try",
        "fortify all",
        "fortify number",
        "fortify forward",
    }
    assert wanted <= set(seen), f"never written: {wanted - set(seen)}"
    happened = {
        "conquered",
        "attack stopped",
        "attack skipped",
        "move changed",
        "card bonus",
        "eliminated",
        "forced trade",
        "fortify skipped",
        "fortify cut",
        "reshuffled",
    }
    assert happened <= set(outcomes), f"never happened: {happened - set(outcomes)}"


def test_each_variant_plays_as_it_says() -> None:
    """Over the variant games: without cards no card is drawn, held or traded; without the
    territory bonus no traded card gives +2; without fortification no army is fortified; with
    unlimited fortification armies go where no chain of one's own leads; and most games end."""
    by_kind: dict[str, list[Played]] = {}
    for case in VARIANT_CASES:
        o = case.options
        game = play(case)
        if o.cards is CardRule.NONE:
            by_kind.setdefault("no cards", []).append(game)
            assert all(not p.hand for p in game.final.players)
            assert not set(game.features) & {"trade best", "trade 1 explicit", "trade 2 explicit"}
            assert game.final.sets_traded == 0
        if not o.territory_bonus:
            by_kind.setdefault("no bonus", []).append(game)
            assert game.outcomes["card bonus"] == 0
        if o.fortify is FortifyMode.NONE:
            by_kind.setdefault("no fortify", []).append(game)
            assert not any(f.startswith("fortify") for f in game.features)
        if o.fortify is FortifyMode.UNLIMITED:
            by_kind.setdefault("unlimited", []).append(game)
        if o.cards is CardRule.FLAT:
            by_kind.setdefault("flat", []).append(game)
        if o.fortifies > 1:
            by_kind.setdefault("fortifies", []).append(game)
        if case.board != "classic":
            by_kind.setdefault("islands", []).append(game)
        if o.teams:
            by_kind.setdefault("teams", []).append(game)
        if o.team_fortify:
            by_kind.setdefault("team fortify", []).append(game)
        if o.fog is not FogLevel.NONE:
            by_kind.setdefault("fog", []).append(game)
        if o.rounds:
            by_kind.setdefault("rounds", []).append(game)
            assert game.ended, f"{case.id} went past its {o.rounds} rounds"
            assert game.final.round <= o.rounds
    assert {k: len(v) >= VARIANT_GAMES for k, v in by_kind.items()} == dict.fromkeys(
        (
            "no cards",
            "no bonus",
            "no fortify",
            "unlimited",
            "rounds",
            "flat",
            "fortifies",
            "islands",
            "teams",
            "team fortify",
            "fog",
        ),
        True,
    )
    teams = by_kind["teams"]
    assert sum(g.outcomes["fortify to a team-mate"] for g in teams) > VARIANT_GAMES
    won_by_team = [g for g in teams if g.ended and not g.outcomes["rounds over"]]
    # (won by a team of several players still in the game, not by one left alone)
    assert (
        sum(len({p.name for p in g.final.players if p.alive}) > 1 for g in won_by_team)
        > len(won_by_team) // 4
    )
    assert sum(g.outcomes["mission won"] for g in teams) > 0
    assert sum(g.outcomes["fog battles"] for g in by_kind["fog"]) > 1000
    assert sum(g.outcomes["fortified twice"] for g in by_kind["fortifies"]) > VARIANT_GAMES
    flat = Counter(
        v for g in by_kind["flat"] for v in g.outcomes.elements() if v.startswith("flat ")
    )
    assert {"flat 4", "flat 6", "flat 8", "flat 10"} <= set(flat), flat
    assert sum(g.outcomes["rounds over"] for g in by_kind["rounds"]) > VARIANT_GAMES // 2
    assert sum(g.outcomes["fortify unlimited"] for g in by_kind["unlimited"]) > 0
    assert sum(g.outcomes["bonus withheld"] for g in by_kind["no bonus"]) > 0
    for kind, games in by_kind.items():
        assert sum(g.ended for g in games) > 0.8 * len(games), f"{kind}: games stall"


REPLAYED = CASES[::7]


@pytest.mark.parametrize("case", REPLAYED, ids=[c.id for c in REPLAYED])
def test_replaying_seed_and_orders_gives_the_same_game(case: Case) -> None:
    played = play(case)
    keys = key_chain(case.seed)
    hidden = dice.hidden_key(case.seed)
    state, events = new_game(
        case.id, case.names, case.the_board, case.options, Randomness(keys[1], hidden)
    )
    prints = [(fingerprint(state), hash(events))]
    for orders in played.orders:
        state, events = resolve(state, orders, Randomness(keys[state.resolution + 1], hidden))
        prints.append((fingerprint(state), hash(events)))
        # Events survive their file form.
        assert tuple(event_from_dict(e.to_dict()) for e in events) == events
    assert prints == played.prints
    assert state == played.final


def test_mission_games_end_by_a_mission_or_the_last_player_standing() -> None:
    games = [play(c) for c in MISSION_CASES]
    assert len(games) >= 100
    assert all(g.case.options.missions for g in games)
    ended = [g for g in games if g.ended]
    assert len(ended) == len(games), [g.case.id for g in games if not g.ended]
    by_mission = [g for g in ended if g.outcomes["mission won"]]
    assert len(by_mission) > len(games) // 2
    for g in by_mission:
        assert done_in(g.final, g.final.winner or "")
    kinds = Counter(
        (g.final.player(g.final.winner or "").mission or "").split(":")[0] for g in by_mission
    )
    assert set(kinds) == {"continents", "territories", "destroy"}, kinds
    outcomes: Counter[str] = Counter()
    for g in games:
        outcomes.update(g.outcomes)
    assert outcomes["mission fell back"] and outcomes["mission won on another's turn"], outcomes
    drafted = [g for g in games if g.case.options.setup is SetupMode.DRAFT]
    assert len(drafted) >= 30 and all(g.ended for g in drafted)
