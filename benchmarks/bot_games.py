"""The reference bot against the autopilot, and against itself: how often it wins, how long a
bot turn takes.

Usage: python benchmarks/bot_games.py [GAMES]   (default 500; prints figures, asserts nothing)

Each game is played by the engine alone, every order file checked by the rules first: in the
first half, one seat is the reference bot (pbem.core.reference_bot) and the others the
autopilot (pbem.core.autopilot), the bot's seat going round the table; in the second half,
every seat is the bot. Games cycle through 2 to 4 players and the setup options; a game stops
at its end or after MAX_RESOLUTIONS (then nobody won it).
"""

from __future__ import annotations

import hashlib
import platform
import sys
import time
from collections.abc import Callable

from machine import cpu

from pbem.core import validation
from pbem.core.autopilot import autopilot_orders
from pbem.core.board import load_board
from pbem.core.engine import Randomness, new_game, resolve
from pbem.core.orders import Orders
from pbem.core.reference_bot import reference_orders
from pbem.core.state import GameState, Options, Phase, SetupMode

MAX_RESOLUTIONS = 400
NAMES = ("alice", "bob", "carol", "dave")
Player = Callable[[GameState, str, str], Orders]


def play(i: int, seats: list[Player]) -> tuple[str | None, float, int]:
    """One game: its winner (None: not over), the seconds the bot's orders took, and how many
    bot turns there were."""
    names = list(NAMES[: len(seats)])
    kinds = dict(zip(names, seats, strict=True))
    seed = hashlib.sha256(b"bots-bench/%d" % i).digest()
    options = Options(setup=(SetupMode.DEAL, SetupMode.RANDOM)[i % 2])
    board = load_board("classic")

    def randomness(r: int) -> Randomness:
        return Randomness(hashlib.sha256(seed + b"%d" % r).digest(), seed)

    state, _ = new_game("bench", names, board, options, randomness(0))
    spent, turns = 0.0, 0
    for r in range(1, MAX_RESOLUTIONS):
        if state.phase is Phase.OVER:
            return state.winner, spent, turns
        orders = []
        for name in state.awaiting():
            start = time.perf_counter()
            made = kinds[name](state, name, "s")
            if kinds[name] is reference_orders:
                spent += time.perf_counter() - start
                turns += 1
            problems = validation.validate(state, made)
            if problems:
                raise AssertionError(f"game {i}, {name}: {problems}")
            orders.append(made)
        state, _ = resolve(state, orders, randomness(r))
    return None, spent, turns


def main(games: int) -> None:
    half = games // 2
    won = unfinished = 0
    spent, turns = 0.0, 0
    for i in range(half):
        count = 2 + i % 3
        seat = i % count
        seats: list[Player] = [autopilot_orders] * count
        seats[seat] = reference_orders
        winner, s, t = play(i, seats)
        spent, turns = spent + s, turns + t
        won += winner == NAMES[seat]
        unfinished += winner is None
    among = {"won": 0, "unfinished": 0}
    for i in range(half, games):
        winner, s, t = play(i, [reference_orders] * (2 + i % 3))
        spent, turns = spent + s, turns + t
        among["won" if winner else "unfinished"] += 1
    print(f"machine: {cpu()}, Python {platform.python_version()}")
    print(
        f"against the autopilot: the bot won {won} of {half} games ({won / half:.0%}); "
        f"{unfinished} not over after {MAX_RESOLUTIONS} resolutions"
    )
    print(
        f"against itself: {among['won']} of {games - half} games won by someone, "
        f"{among['unfinished']} not over"
    )
    print(f"a bot turn: {spent / max(turns, 1) * 1000:.1f} ms on average ({turns} turns)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
