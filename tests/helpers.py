"""Small builders for the rules, engine and order tests.

`make_state` builds a GameState on the classic board from a compact description; `orders` and
`order_text` write a player's orders for the pending turn; `key_where` finds a dice key whose
public stream rolls what a test needs, so engine tests can assert exact outcomes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from pbem.core import validation
from pbem.core.board import load_board
from pbem.core.dice import Stream, hidden_key
from pbem.core.engine import Randomness, resolve
from pbem.core.events import Event
from pbem.core.orders import Attack, CardSet, Fortify, Orders, Place, PlaceAmount
from pbem.core.state import NEUTRAL, DiceRule, GameState, Holding, Options, Phase, Player

BOARD = load_board("classic")
GAME = "test-game"
SECRET = "s3cret"
HIDDEN = hidden_key(bytes(32))
"""The hidden key (card draws) every test resolution uses."""

HEADER_LINES = 4
"""`order_text` writes the header on lines 1-4, so the body's first line is line 5."""


def make_state(
    owners: Mapping[str, str | tuple[str, int]] | None = None,
    *,
    default: str | tuple[str, int] = "bob",
    players: Sequence[str] | None = None,
    hands: Mapping[str, Sequence[str]] | None = None,
    deck: Sequence[str] | None = None,
    discards: Sequence[str] = (),
    dead: Iterable[str] = (),
    to_place: Mapping[str, int] | None = None,
    options: Options | None = None,
    dice: DiceRule = DiceRule.KEY,
    phase: Phase = Phase.PLAY,
    turn: int = 1,
    resolution: int = 1,
    current: int = 0,
    sets_traded: int = 0,
    winner: str | None = None,
) -> GameState:
    """A state on the classic board.

    `owners` maps a territory to its owner (1 army) or to (owner, armies); every territory not
    mentioned goes to `default` (1 army, or (owner, armies)). The seats are `players` in order,
    or else the owners in order of first mention with the default owner last (the neutral is
    never a player). The deck (draw pile) is the full deck without the cards in hands and
    `discards`, unless given.

    The dice come from the key alone (`dice`) unless told otherwise, whatever `options` say:
    then `key_where` can choose a test's dice. The rule of the orders has tests of its own
    (test_dice_orders.py) and plays every self-played game but one in four.
    """
    options = replace(options or Options(), dice=dice)
    default_owner, default_armies = (default, 1) if isinstance(default, str) else default
    given: dict[str, Holding] = {}
    for name, value in (owners or {}).items():
        canonical = BOARD.lookup(name)
        assert canonical == name, f"write the canonical name {canonical!r}, not {name!r}"
        owner, armies = (value, 1) if isinstance(value, str) else value
        given[name] = Holding(owner, armies)
    territories = {t: given.get(t, Holding(default_owner, default_armies)) for t in BOARD.names}
    if players is None:
        seen = [h.owner for h in given.values()] + [default_owner]
        players = [p for i, p in enumerate(seen) if p != NEUTRAL and p not in seen[:i]]
    hands = dict(hands or {})
    dead = set(dead)
    to_place = dict(to_place or {})
    seats = tuple(
        Player(
            name,
            seat,
            alive=name not in dead,
            hand=tuple(hands.get(name, ())),
            to_place=to_place.get(name, 0),
        )
        for seat, name in enumerate(players)
    )
    if deck is None:
        remaining = list(BOARD.cards())
        for hand in (*hands.values(), discards):
            for card in hand:
                remaining.remove(card)
        deck = remaining
    return GameState(
        game=GAME,
        board=BOARD,
        options=options,
        players=seats,
        territories=territories,
        deck=tuple(deck),
        discards=tuple(discards),
        phase=phase,
        turn=turn,
        resolution=resolution,
        current=current,
        sets_traded=sets_traded,
        winner=winner,
    )


def orders(
    state: GameState,
    player: str | None = None,
    *,
    trade: Sequence[CardSet] | str = (),
    place: Sequence[tuple[str, PlaceAmount]] = (),
    attack: Sequence[Attack] = (),
    fortify: Fortify | None = None,
) -> Orders:
    """Orders for the pending turn of `state` (from the current player unless named)."""
    return Orders(
        game=state.game,
        turn=state.turn,
        player=player if player is not None else state.current_player.name,
        secret=SECRET,
        trade=trade if isinstance(trade, str) else tuple(trade),  # type: ignore[arg-type]
        place=tuple(Place(t, a) for t, a in place),
        attack=tuple(attack),
        fortify=fortify,
    )


def order_text(
    body: str = "",
    *,
    game: str = GAME,
    turn: int = 1,
    player: str = "alice",
    secret: str = SECRET,
) -> str:
    """An order file: the header on lines 1-4, then `body` from line 5 on."""
    header = f'game = "{game}"\nturn = {turn}\nplayer = "{player}"\nsecret = "{secret}"\n'
    return header + body


def key(n: int) -> bytes:
    """The n-th test key: SHA-256 of the counter in ASCII."""
    return hashlib.sha256(b"test-key/%d" % n).digest()


def key_where(wanted: Callable[[Stream], bool], limit: int = 100_000) -> bytes:
    """The first test key whose public stream satisfies `wanted` (which draws from it)."""
    for n in range(limit):
        candidate = key(n)
        if wanted(Stream.public(candidate)):
            return candidate
    raise AssertionError("no key found: is the wanted outcome possible?")


def randomness(public: bytes | None = None) -> Randomness:
    return Randomness(public=public if public is not None else key(0), hidden=HIDDEN)


def play(
    state: GameState, turn_orders: Orders, public: bytes | None = None, *, check: bool = True
) -> tuple[GameState, tuple[Event, ...]]:
    """Resolve one turn; first assert that `validation.validate` accepts the orders (unless told not
    to), since the engine only ever sees accepted orders."""
    if check:
        assert validation.validate(state, turn_orders) == []
    return resolve(state, [turn_orders], randomness(public))


E = TypeVar("E", bound=Event)


def only(events: Iterable[Event], kind: type[E]) -> list[E]:
    """The events of one kind, in order."""
    return [e for e in events if isinstance(e, kind)]
