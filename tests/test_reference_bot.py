"""The reference bot (pbem.core.reference_bot): legal orders, the same for the same position,
from what its seat may see only, and clearly stronger than the autopilot."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pbem.core.autopilot import autopilot_orders
from pbem.core.board import load_board
from pbem.core.engine import Randomness, new_game, resolve
from pbem.core.reference_bot import reference_orders, win_chance
from pbem.core.state import GameState, Options, Phase

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bot_games  # noqa: E402 (benchmarks/bot_games.py: one game played by the engine)


@pytest.mark.parametrize("game", range(6))
def test_the_bot_beats_the_autopilot_with_legal_orders(game: int) -> None:
    count = 2 + game % 3
    seats = [autopilot_orders] * count
    seats[game % count] = reference_orders
    winner, _, turns = bot_games.play(game, seats)  # every order file is checked by the rules
    assert winner == bot_games.NAMES[game % count]
    assert turns > 0


def test_bots_against_each_other_play_legal_games_to_an_end() -> None:
    winners = [bot_games.play(100 + i, [reference_orders] * 3)[0] for i in range(3)]
    assert all(w in bot_games.NAMES[:3] for w in winners), winners


def first_play_state() -> GameState:
    """A position of play: the deal, then the setup turn played by the bot."""
    keys = Randomness(b"k" * 32, b"h" * 32)
    state, _ = new_game("g", ["ann", "bob", "cy"], load_board("classic"), Options(), keys)
    orders = [reference_orders(state, p, "s") for p in state.awaiting()]
    state, _ = resolve(state, orders, Randomness(b"j" * 32, b"h" * 32))
    assert state.phase is Phase.PLAY
    return state


def test_the_same_position_gives_the_same_orders_and_hidden_things_change_nothing() -> None:
    state = first_play_state()
    me = state.current_player.name
    orders = reference_orders(state, me, "s")
    assert reference_orders(state, me, "s") == orders
    others = tuple(
        p if p.name == me else replace(p, hand=("Alaska", "Peru", "Siam")) for p in state.players
    )
    hidden = replace(state, players=others, deck=tuple(reversed(state.deck)))
    assert reference_orders(hidden, me, "s") == orders
    assert orders.place and sum(p.armies for p in orders.place) > 0


def test_the_odds_are_pbems_and_large_stacks_are_scaled() -> None:
    from pbem.core import odds

    assert win_chance(10, 4) == odds.forecast(10, 4).win
    assert win_chance(1, 1) == 0
    assert win_chance(400, 100) == odds.forecast(40, 10).win
