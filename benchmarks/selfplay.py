"""How fast the engine plays whole games: bots write the orders, the engine resolves them.

Usage: python benchmarks/selfplay.py [GAMES]   (default 50; prints figures, asserts nothing)

Two figures: self-play (the bots' orders checked, round-tripped through TOML and resolved) and
the engine alone (the same games resolved again from the recorded orders). Games cycle through
2-6 players and the setup and fortify options; each stops at its end or at 300 resolutions.
"""

from __future__ import annotations

import hashlib
import os
import platform
import random
import sys
import time
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bots import orders_for  # noqa: E402

from pbem.core import dice  # noqa: E402
from pbem.core.board import load_board  # noqa: E402
from pbem.core.engine import Randomness, new_game, resolve  # noqa: E402
from pbem.core.orders import Orders  # noqa: E402
from pbem.core.state import FortifyMode, Options, Phase, SetupMode, TwoPlayer  # noqa: E402

MAX_RESOLUTIONS = 300
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")


def key_chain(seed: bytes, length: int = dice.DEFAULT_CHAIN_LENGTH) -> list[bytes]:
    """k[0..L] in one pass: k[r + 1] is resolution r's key (DESIGN section 6)."""
    keys = [b""] * (length + 1)
    key = dice.chain_end(seed)
    keys[length] = key
    for i in range(length, 0, -1):
        key = hashlib.sha256(key).digest()
        keys[i - 1] = key
    return keys


def game_setup(i: int) -> tuple[bytes, tuple[str, ...], Options]:
    options = Options(
        setup=(SetupMode.DEAL, SetupMode.RANDOM)[(i // 5) % 2],
        two_player=(TwoPlayer.NEUTRAL, TwoPlayer.CLASSIC)[(i // 20) % 2],
        fortify=(FortifyMode.ADJACENT, FortifyMode.CONNECTED)[(i // 10) % 2],
    )
    return hashlib.sha256(b"selfplay-bench/%d" % i).digest(), NAMES[: 2 + i % 5], options


def main(games: int) -> None:
    board = load_board("classic")
    setups = [game_setup(i) for i in range(games)]
    chains = [key_chain(seed) for seed, _, _ in setups]  # not timed: a game computes it once

    recorded: list[list[tuple[Orders, ...]]] = []
    resolutions = ended = 0
    started = time.perf_counter()
    for i, ((seed, names, options), keys) in enumerate(zip(setups, chains, strict=True)):
        hidden = dice.hidden_key(seed)
        rng = random.Random(seed)
        state, _ = new_game(f"bench-{i}", names, board, options, Randomness(keys[1], hidden))
        log: list[tuple[Orders, ...]] = []
        while state.phase is not Phase.OVER and state.resolution < MAX_RESOLUTIONS:
            orders = tuple(orders_for(state, name, rng) for name in state.awaiting())
            state, _ = resolve(state, orders, Randomness(keys[state.resolution + 1], hidden))
            log.append(orders)
        recorded.append(log)
        resolutions += state.resolution
        ended += state.phase is Phase.OVER
    selfplay = time.perf_counter() - started

    started = time.perf_counter()
    for i, ((seed, names, options), keys, log) in enumerate(
        zip(setups, chains, recorded, strict=True)
    ):
        hidden = dice.hidden_key(seed)
        state, _ = new_game(f"bench-{i}", names, board, options, Randomness(keys[1], hidden))
        for orders in log:
            state, _ = resolve(state, orders, Randomness(keys[state.resolution + 1], hidden))
    engine = time.perf_counter() - started

    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    print(
        f"machine: {platform.machine()} {cpu()}, "
        f"{os.cpu_count()} CPUs, {platform.system()} {platform.release()}"
    )
    print(f"games: {games}, ended: {ended}, resolutions (setup included): {resolutions}")
    for label, seconds in (("self-play (bots + engine)", selfplay), ("engine alone", engine)):
        print(
            f"{label:27} {seconds:7.2f} s  {resolutions / seconds:8.0f} resolutions/s  "
            f"{games / seconds:7.2f} games/s"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
