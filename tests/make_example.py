"""Regenerates games/example: three players, bots' orders, stopped mid-game with the pending
player's order file waiting in games/example/orders/.

Usage: python tests/make_example.py [DIRECTORY]   (default: games/example, replaced)
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bots import orders_for  # noqa: E402

from pbem.core.state import Options  # noqa: E402
from pbem.game import processor  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402

SEED = bytes.fromhex("5eed" * 16)
PLAYERS = ["alice=alice@example.org", "bob=bob@example.org", "carol=carol@example.org"]
RESOLUTIONS = 10


def write_orders(directory: Path, rng: random.Random) -> None:
    game = read_game(directory)
    for name in game.state.awaiting():
        reg = game.registration(name)
        assert reg is not None
        orders = dataclasses.replace(
            orders_for(game.state, name, rng), game=game.name, secret=reg.secret
        )
        (directory / "orders" / f"{name}.toml").write_text(orders.to_toml())


def main(directory: Path) -> None:
    if directory.exists():
        shutil.rmtree(directory)
    processor.new_game(
        directory, processor.parse_player_list(PLAYERS), Options(), seed=SEED, name="example"
    )
    rng = random.Random(2027)
    for _ in range(RESOLUTIONS):
        write_orders(directory, rng)
        processor.resolve_game(directory)
    write_orders(directory, rng)
    (directory / ".lock").unlink(missing_ok=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("games/example"))
