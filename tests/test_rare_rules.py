"""Two rules that whole self-played games used to be the only guard of: trading down to four
cards after an elimination, and moving in at least the dice of the last roll when a player asks
for one fewer."""

from __future__ import annotations

import pytest
from helpers import key_where, make_state, only, orders, play

from pbem.core import rules
from pbem.core.dice import Stream
from pbem.core.events import Conquered, DrewCard, Eliminated, Placed, Rolled, Traded
from pbem.core.orders import Attack


def _first_roll_wins(attacker: int, defender: int = 1) -> bytes:
    def wins(stream: Stream) -> bool:
        return max(stream.dice(attacker)) > max(stream.dice(defender))

    return key_where(wins)


WIN_3_VS_1 = _first_roll_wins(3)
WIN_2_VS_1 = _first_roll_wins(2)

ALICE = ("Alaska", "Greenland", "Ontario", "Peru")  # infantry, cavalry, cavalry, infantry
BOB = ("Ural", "Siam", "Brazil", "Egypt")  # cavalry, infantry, artillery, infantry


def _take_bobs_last_territory(
    alice: tuple[str, ...], bob: tuple[str, ...], sets_traded: int = 0
) -> tuple[list[Traded], list[Placed], tuple[str, ...], int]:
    state = make_state(
        {"Japan": ("alice", 10), "Argentina": "alice", "Kamchatka": "bob"},
        default="carol",
        hands={"alice": alice, "bob": bob},
        sets_traded=sets_traded,
    )
    new, events = play(
        state,
        orders(state, place=[("Argentina", "rest")], attack=[Attack("Japan", "Kamchatka")]),
        WIN_3_VS_1,
    )
    assert only(events, Eliminated) == [Eliminated("bob", "alice", len(bob))]
    drawn = only(events, DrewCard)[0].card
    hand = new.player("alice").hand
    assert hand[-1] == drawn
    return only(events, Traded), only(events, Placed), hand[:-1], new.armies("Kamchatka")


def test_eight_cards_after_an_elimination_are_traded_down_to_four_or_fewer() -> None:
    traded, placed, kept, armies = _take_bobs_last_territory(ALICE, BOB)
    # Eight cards: one set leaves five, more than four, so a second set is traded at once.
    assert len(traded) == 2
    assert all(t.forced and t.player == "alice" for t in traded)
    assert [(t.value, t.set_number) for t in traded] == [(4, 1), (6, 2)]
    assert len(kept) == 2
    assert sorted(kept + tuple(c for t in traded for c in t.cards)) == sorted(ALICE + BOB)
    assert [p for p in placed if p.why == "elimination"] == [
        Placed("alice", "Kamchatka", 4, "elimination"),
        Placed("alice", "Kamchatka", 6, "elimination"),
    ]
    assert armies == 9 + 4 + 6


def test_nine_cards_after_an_elimination_leave_three() -> None:
    traded, _, kept, _ = _take_bobs_last_territory(ALICE, BOB + ("Alberta",))
    assert len(traded) == 2 and len(kept) == 3


def test_seven_cards_after_an_elimination_leave_exactly_four() -> None:
    traded, _, kept, _ = _take_bobs_last_territory(ALICE, BOB[:3], sets_traded=5)
    assert [(t.value, t.set_number) for t in traded] == [(15, 6)]
    assert len(kept) == 4


def test_the_limit_is_four_cards() -> None:
    assert rules.ELIMINATION_TRADE_DOWN_TO == 4
    assert rules.ELIMINATION_TRADE_HAND == 6


# --- moving in ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("last_dice", "asked"), [(3, 2), (2, 1)])
def test_asking_one_fewer_than_the_last_rolls_dice_is_raised_to_them(
    last_dice: int, asked: int
) -> None:
    assert rules.move_in(10, last_dice, asked) == (
        last_dice,
        f"asked to move {asked}, raised to {last_dice}: the dice of the last roll",
    )
    assert rules.move_in(10, last_dice, last_dice) == (last_dice, None)


@pytest.mark.parametrize(
    ("dice", "key", "asked", "moved", "note"),
    [
        (3, WIN_3_VS_1, 2, 3, "asked to move 2, raised to 3: the dice of the last roll"),
        (3, WIN_3_VS_1, 3, 3, None),
        (2, WIN_2_VS_1, 1, 2, "asked to move 1, raised to 2: the dice of the last roll"),
        (2, WIN_2_VS_1, 2, 2, None),
    ],
    ids=["3-dice-asked-2", "3-dice-asked-3", "2-dice-asked-1", "2-dice-asked-2"],
)
def test_a_conquest_moves_in_at_least_the_last_rolls_dice(
    dice: int, key: bytes, asked: int, moved: int, note: str | None
) -> None:
    state = make_state({"Ukraine": ("alice", 10), "Siam": "alice", "Ural": "bob"})
    attack = Attack("Ukraine", "Ural", dice=dice, move=asked)
    new, events = play(state, orders(state, place=[("Siam", "rest")], attack=[attack]), key)
    assert [len(e.attacker) for e in only(events, Rolled)] == [dice]
    assert only(events, Conquered) == [Conquered("alice", "Ukraine", "Ural", "bob", moved, note)]
    assert (new.armies("Ukraine"), new.armies("Ural")) == (10 - moved, moved)
