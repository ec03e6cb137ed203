"""Plays a game of pbem from the outside: only the command line, order files and JSON views.

It imports nothing from pbem, as a player's or moderator's own script would not. It checks,
turn by turn, what a careful player could check: the reinforcements and set values the views
report follow the rules, every key hashes to the one before it back to the commitment, and
every die equals the published stream of that resolution's key.

Usage: python external_driver.py GAME_DIR [MAX_RESOLUTIONS]
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import subprocess
import sys
from pathlib import Path

from pbem.records.history import report_dir

CONTINENT_BONUS = {
    "North America": 5,
    "South America": 2,
    "Europe": 5,
    "Africa": 3,
    "Asia": 7,
    "Australia": 2,
}


def pbem(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "pbem", *args], capture_output=True, text=True, check=False
    )
    if check and result.returncode != 0:
        raise AssertionError(f"pbem {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result


def stream_dice(key: bytes, count: int) -> list[int]:
    """The first `count` dice of a public stream, from DESIGN §6 alone."""
    out: list[int] = []
    block = 0
    while len(out) < count:
        for b in hmac.new(key, b"pbem/dice/%d" % block, hashlib.sha256).digest():
            if b < 252 and len(out) < count:
                out.append(b % 6 + 1)
        block += 1
    return out


def dice_key(key: bytes, entry: dict) -> bytes:
    """The key a resolution's dice come from: its key, or in a game whose dice follow the
    orders HMAC-SHA256(key, "pbem/orders/" || hex(D) [|| "/" || salt]), D the SHA-256 of the
    order files' digests (docs/dice.md)."""
    if "orders" not in entry:
        return key
    files = b"".join(bytes.fromhex(f["digest"]) for f in entry["orders"])
    label = b"pbem/orders/" + hashlib.sha256(files).hexdigest().encode()
    if "again" in entry:
        label += b"/" + entry["again"].encode()
    assert hmac.new(key, label, hashlib.sha256).hexdigest() == entry["dice_key"]
    return hmac.new(key, label, hashlib.sha256).digest()


def set_value(traded: int) -> int:
    values = [4, 6, 8, 10, 12, 15]
    return values[traded] if traded < 6 else 15 + 5 * (traded - 5)


def secret_of(game_dir: Path, player: str, resolution: int) -> str:
    text = (report_dir(game_dir, resolution) / f"{player}.txt").read_text()
    for line in text.splitlines():
        if line.startswith("secret = "):
            return line.split('"')[1]
    raise AssertionError(f"no secret in {player}'s report")


def orders_for(view: dict, board: dict, player: str, secret: str, rng: random.Random) -> str:
    mine = [t for t, h in view["territories"].items() if h["owner"] == player]
    me = next(p for p in view["players"] if p["name"] == player)
    lines = [
        f'game = "{view["game"]}"',
        f"turn = {view['turn']}",
        f'player = "{player}"',
        f'secret = "{secret}"',
    ]
    if view["phase"] == "play" and me["cards"] >= 5:
        lines.append('trade = "best"')

    def enemies(t: str) -> list[str]:
        return [
            n
            for n in board["territories"][t]["neighbours"]
            if view["territories"][n]["owner"] != player
        ]

    borders = [t for t in mine if enemies(t)] or mine
    front = max(borders, key=lambda t: (view["territories"][t]["armies"], rng.random()))
    lines += ["", "[[place]]", f'territory = "{front}"', 'armies = "rest"']
    if view["phase"] == "play":
        # A chain of attacks: each from the territory the previous one is to take.
        source, taken = front, {front}
        for _ in range(6):
            options = [t for t in enemies(source) if t not in taken]
            if not options:
                break
            target = min(options, key=lambda t: (view["territories"][t]["armies"], t))
            lines += ["", "[[attack]]", f'from = "{source}"', f'to = "{target}"']
            source = target
            taken.add(target)
    return "\n".join(lines) + "\n"


def main(game_dir: Path, max_resolutions: int) -> dict:
    board = json.loads(pbem("map", "--json").stdout)
    view = json.loads(pbem("show", str(game_dir), "--json").stdout)
    commitment = bytes.fromhex(view["commitment"])
    rng = random.Random(7)
    resolutions = 0
    while view["phase"] != "over" and resolutions < max_resolutions:
        r = view["resolution"]
        files = []
        for player in view["awaiting"]:
            pview = json.loads(pbem("show", str(game_dir), "--json", "--player", player).stdout)
            assert all("hand" not in p for p in pview["players"] if p["name"] != player)
            me = next(p for p in pview["players"] if p["name"] == player)
            if pview["phase"] == "play":
                count = me["territories"]
                held = [
                    c
                    for c, info in board["continents"].items()
                    if all(pview["territories"][t]["owner"] == player for t in info["territories"])
                ]
                expected = max(3, count // 3) + sum(CONTINENT_BONUS[c] for c in held)
                assert me["reinforcements"] == expected, (player, me, expected)
            assert pview["next_set_value"] == set_value(pview["sets_traded"])
            path = game_dir / "orders" / f"{player}.toml"
            path.write_text(
                orders_for(pview, board, player, secret_of(game_dir, player, r - 1), rng)
            )
            files.append(str(path))
        pbem("check", str(game_dir), *files)
        pbem("resolve", str(game_dir))
        view = json.loads(pbem("show", str(game_dir), "--json").stdout)
        resolutions += 1

    history = json.loads(pbem("dice", str(game_dir), "--json").stdout)
    previous = commitment
    rolls = 0
    for entry in history:
        key = bytes.fromhex(entry["key"])
        assert hashlib.sha256(key).digest() == previous, f"key of resolution {entry['resolution']}"
        previous = key
        if entry["resolution"] == 0:
            continue
        flat = [d for roll in entry["rolls"] for d in (*roll["attacker"], *roll["defender"])]
        assert flat == stream_dice(dice_key(key, entry), len(flat)), (
            f"dice of resolution {entry['resolution']}"
        )
        rolls += len(entry["rolls"])
    pbem("audit", str(game_dir))
    return {"resolutions": len(history), "rolls": rolls, "phase": view["phase"]}


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 60)))
