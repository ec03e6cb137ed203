"""A long fuzz run of the files pbem reads from strangers: order files and view files.

Each try takes a real order file or view file from a game and breaks it in one of several
ways (random bytes flipped, cut, repeated, nested deep, control characters, huge, values
replaced by others of any type), then gives it to `check` (the moderator's), `check --view`
(the player's) and `verify`. Each must accept it or refuse it with pbem's own error; anything
else is a failure, saved under the output folder with the exception.

Usage: python benchmarks/fuzz_files.py [TRIES] [--seed N] [--keep DIR]
Prints what it tried (by kind of damage) and what came of it.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import new_game, skeleton, write_skeletons  # noqa: E402

from pbem.errors import PbemError  # noqa: E402
from pbem.game import processor  # noqa: E402
from pbem.present import verify  # noqa: E402
from pbem.records.history import report_dir  # noqa: E402

CONTROL = ["\x1b[2J", "\r", "\x00", "\u202e", "\x85", "\x07", "\n"]


def flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def cut(data: bytes, rng: random.Random) -> bytes:
    a, b = sorted(rng.randrange(len(data) + 1) for _ in range(2))
    return data[:a] + data[b:]


def repeat(data: bytes, rng: random.Random) -> bytes:
    a, b = sorted(rng.randrange(len(data) + 1) for _ in range(2))
    return data[:b] + data[a:b] * rng.choice([2, 10, 100, 5000]) + data[b:]


def nest(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([9, 50, 300, 1000, 20000])
    opener, closer = rng.choice([("[", "]"), ("{", "}"), ("{a=", "}")])
    at = rng.randrange(len(data) + 1)
    if data.lstrip().startswith(b"{"):
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        deep = ('"x": ' + opener * depth + closer * depth + ",").encode()
        return data.replace(b"{", b"{" + deep, 1)
    return data[:at] + ("\nx = " + opener * depth + closer * depth + "\n").encode() + data[at:]


def control(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", "replace")
    at = rng.randrange(len(text) + 1)
    return (text[:at] + rng.choice(CONTROL) * rng.randint(1, 3) + text[at:]).encode()


def huge(data: bytes, rng: random.Random) -> bytes:
    return data + b"#" * rng.choice([60_000, 70_000, 2_000_000])


def tables(data: bytes, rng: random.Random) -> bytes:
    table = rng.choice(
        [b'\n[[attack]]\nfrom = "Peru"\nto = "Brazil"\n', b'\n[[place]]\nterritory = "Peru"\n']
    )
    return data + table * rng.choice([99, 101, 1000])


def _any_value(rng: random.Random, depth: int = 0) -> Any:
    kinds: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.randint(-(10**30), 10**30),
        lambda: rng.randint(-3, 10),
        lambda: rng.uniform(-1e9, 1e9),
        lambda: rng.choice(["", "alice", "neutral", "Peru", "play", "setup", "x" * 10_000]),
        lambda: rng.choice(CONTROL),
    ]
    if depth < 3:
        kinds += [
            lambda: [_any_value(rng, depth + 1) for _ in range(rng.randint(0, 4))],
            lambda: {rng.choice(["a", "owner", "armies"]): _any_value(rng, depth + 1)},
        ]
    return rng.choice(kinds)()


def replace_value(data: bytes, rng: random.Random) -> bytes:
    """A JSON view with a value somewhere replaced by one of any type (else: flip)."""
    try:
        view = json.loads(data)
    except ValueError:
        return flip(data, rng)
    node = view
    for _ in range(rng.randint(1, 4)):
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            if rng.random() < 0.4 or not isinstance(node[key], (dict, list)):
                node[key] = _any_value(rng)
                break
            node = node[key]
        elif isinstance(node, list) and node:
            i = rng.randrange(len(node))
            if rng.random() < 0.4 or not isinstance(node[i], (dict, list)):
                node[i] = _any_value(rng)
                break
            node = node[i]
    text = json.dumps(view)
    if rng.random() < 0.1:
        text = text.replace("1", rng.choice(["NaN", "Infinity", "1e400", "9" * 5000]), 1)
    return text.encode()


DAMAGE = {
    "flip": flip,
    "cut": cut,
    "repeat": repeat,
    "nest": nest,
    "control": control,
    "huge": huge,
    "tables": tables,
    "replace value": replace_value,
}


def outcome(call: Callable[[], object]) -> str:
    """ "accepted", or "refused" (pbem's own error, or an order file with problems)."""
    try:
        result = call()
    except PbemError:
        return "refused"
    if isinstance(result, list) and not all(s.accepted for s, _ in result):
        return "refused"
    return "accepted"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tries", type=int, nargs="?", default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="where to save failing inputs")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        directory = new_game(Path(tmp) / "game")
        write_skeletons(directory)
        processor.resolve_game(directory)
        player = processor.read_game(directory).state.awaiting()[0]
        order = skeleton(directory, player).encode()
        attacking = order + b'\n[[attack]]\nfrom = "Peru"\nto = "Brazil"\n'
        view = (report_dir(directory, 1) / f"{player}.view.json").read_bytes()
        report = (report_dir(directory, 1) / f"{player}.txt").read_bytes()
        seen: collections.Counter[tuple[str, str, str]] = collections.Counter()
        failures = 0
        started = time.perf_counter()
        target = Path(tmp) / "fuzz.file"
        for i in range(args.tries):
            kind = rng.choice(["order", "view", "report"])
            base = {"order": rng.choice([order, attacking]), "view": view, "report": report}[kind]
            damage = rng.choice(list(DAMAGE))
            data = DAMAGE[damage](base, rng)
            target.write_bytes(data)
            checks: dict[str, Callable[[], object]] = {
                "order": lambda: (
                    processor.check_files(directory, [target])[1]
                    + processor.check_with_view(
                        report_dir(directory, 1) / f"{player}.view.json", [target]
                    )
                ),
                "view": lambda: processor.check_with_view(target, [directory / "fuzz.toml"]),
                "report": lambda: verify.verify(verify.read_record(target)),
            }
            (directory / "fuzz.toml").write_bytes(order)
            try:
                result = outcome(checks[kind])
                if kind == "view":
                    outcome(lambda: verify.verify(verify.read_record(target)))
            except Exception:  # noqa: BLE001 - that is what the run looks for
                result = "FAILED"
                failures += 1
                print(f"try {i}: {kind} with {damage}: {traceback.format_exc(limit=3)}")
                if args.keep:
                    args.keep.mkdir(parents=True, exist_ok=True)
                    (args.keep / f"failure-{i}.{kind}").write_bytes(data)
            seen[(kind, damage, result)] += 1
        elapsed = time.perf_counter() - started
    print(f"{args.tries} tries in {elapsed:.1f} s (seed {args.seed}); {failures} failures")
    print(f"{'file':<8} {'damage':<14} {'accepted':>9} {'refused':>9} {'FAILED':>7}")
    for kind in ("order", "view", "report"):
        for damage in DAMAGE:
            row = [seen[(kind, damage, r)] for r in ("accepted", "refused", "FAILED")]
            if any(row):
                print(f"{kind:<8} {damage:<14} {row[0]:>9} {row[1]:>9} {row[2]:>7}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
