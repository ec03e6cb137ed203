"""Every speed figure of the moderator's commands, each against a baseline measured in the same run.

Usage: python benchmarks/all.py [--runs N] [--quick] [--only ROW ...]   (prints figures; nothing
is asserted)

A busy machine makes absolute times drift, so each figure is set against a baseline taken in
the same run: the bare interpreter (`python -c pass`, in this same environment) for the
commands, the raw HMAC stream of the dice (DESIGN section 6) for the battle dice. Every figure
is the median of several runs and, where it says so, counts CPU time (user + system, of the
child process for a command), not wall time. The last column says whether the aim is met.

Rows:
- resolve: `pbem resolve` of a 6-player play turn, every file written (history, game file,
  the reports), CPU time as a multiple of `python -c pass`.
- check: `pbem check` of 6 order files, the same way.
- batch: `pbem run` over a folder of 200 games, each with one pending turn (every file
  written): games per CPU-second with one job, games per wall second with two.
- self-play: 3 players, random setup, the test bots' orders round-tripped through TOML.
- battle dice: one attack of 3,000 armies against 3,000 inside the engine, dice per CPU-second
  as a share of the raw stream's bytes per CPU-second.
- audit: `audit_game` of a game of 1,000 resolutions (and of its first 500, to see that the time
  grows linearly with the history).
- floor: what the commands cannot go below, measured the same way as they are: importing the
  standard library modules every command needs, click, Jinja2, and all that `check` and
  `resolve` import (no work done), each as a multiple of `python -c pass`. No aim: they say
  how far the commands' aims can be reached with Python, click and Jinja2.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bots import orders_for  # noqa: E402
from conftest import SEED, write_skeletons  # noqa: E402

from pbem.core import dice  # noqa: E402
from pbem.core.board import load_board  # noqa: E402
from pbem.core.engine import Randomness, new_game, resolve  # noqa: E402
from pbem.core.events import Event, Rolled  # noqa: E402
from pbem.core.orders import Attack, Orders  # noqa: E402
from pbem.core.state import Holding, Options, Phase, SetupMode, state_digest  # noqa: E402
from pbem.game import audit, processor  # noqa: E402
from pbem.records import history, store  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402
from pbem.records.replay import replay_orders  # noqa: E402

# The groups of rows, in the order they are measured (--only picks some).
GROUPS = ("commands", "floor", "batch", "selfplay", "dice", "audit")

PLAYERS6 = ["alice", "bob", "carol", "dave", "erin", "frank"]


# --- the machine ---------------------------------------------------------------------------------


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"machine: {cpu()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()} "
        f"({platform.python_implementation()}); load average {load}"
    )


# --- timing --------------------------------------------------------------------------------------


def child_cpu(argv: Sequence[str], cwd: Path | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of a command; it must succeed."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env()
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err}")
    if proc.stderr:
        proc.stderr.close()
    return usage.ru_utime + usage.ru_stime, wall


def _env() -> dict[str, str]:
    """The environment of a measured command: bytecode kept (as an installed pbem has it, pip
    compiles it on install), whatever this shell says."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cpu_of(action: Callable[[], object]) -> float:
    started = time.process_time()
    action()
    return time.process_time() - started


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def pbem_command() -> list[str]:
    script = Path(sys.executable).parent / "pbem"
    return [str(script)] if script.exists() else [sys.executable, "-m", "pbem"]


# --- games to measure on -------------------------------------------------------------------------


def play_turn_game(directory: Path) -> None:
    """A 6-player game past its setup turn: a play turn pending, every player's orders in
    orders/ (attacking)."""
    processor.new_game(
        directory, processor.parse_player_list(PLAYERS6), Options(), seed=SEED, name="bench"
    )
    while read_game(directory).state.phase is not Phase.PLAY:
        write_skeletons(directory)
        processor.resolve_game(directory)
    write_skeletons(directory)


def long_game(
    directory: Path,
    resolutions: int,
    chain_length: int = dice.DEFAULT_CHAIN_LENGTH,
    name: str | None = None,
) -> None:
    """A 3-player game `resolutions` long, written as `pbem resolve` would write its history and
    game file (reports left out: the audit does not read them). Players place their armies and
    attack a little (stopping early), so no one is ever conquered out. The files are not
    synced to the disk while it is built (a thousand syncs of a busy disk take minutes). A game
    longer than the default key chain needs a longer `chain_length`. The game's `name` (and so
    its dice) is "long<resolutions>" unless given: games of one name and chain are the same
    game, the shorter ones its beginnings."""
    synced = os.fsync
    os.fsync = lambda fd: None
    try:
        _long_game(directory, resolutions, chain_length, name or f"long{resolutions}")
    finally:
        os.fsync = synced


def _long_game(directory: Path, resolutions: int, chain_length: int, name: str) -> None:
    processor.new_game(
        directory,
        processor.parse_player_list(["alice", "bob", "carol"]),
        Options(setup=SetupMode.RANDOM),
        seed=SEED,
        name=name,
        chain_length=chain_length,
    )
    game = read_game(directory)
    secrets = {r.name: r.secret for r in game.registrations}
    rng = random.Random(1)
    state = game.state
    for r in range(1, resolutions):
        records = []
        for name in state.awaiting():
            orders = orders_for(state, name, rng)
            attack = tuple(
                replace(a, stop_at=max(1, state.territories[a.source].armies - 3))
                for a in orders.attack[:1]
            )
            orders = replace(orders, secret=secrets[name], attack=attack, fortify=None)
            records.append(history.OrderRecord(name, f"{name}.toml", orders.to_toml()))
        after, events = replay_orders(state, records, game.randomness(r))
        history.write_history(
            directory,
            history.HistoryRecord(
                resolution=r,
                turn=state.turn,
                players=tuple(state.awaiting()),
                key=game.key(r).hex(),
                orders=tuple(records),
                events=events,
                state_digest=state_digest(after),
            ),
        )
        state = after
        if state.phase is Phase.OVER:
            raise SystemExit("the long game ended early: change its orders")
    store.write_game(replace(game, state=state))


# --- the figures ---------------------------------------------------------------------------------


class Row:
    def __init__(self, name: str, figure: str, aim: str, met: bool | None) -> None:
        self.name, self.figure, self.aim, self.met = name, figure, aim, met

    def show(self) -> str:
        if self.met is None:  # a figure without an aim: `aim` says what it is
            return f"{self.name:<14} {self.figure:<58} {self.aim}"
        verdict = "met" if self.met else "NOT met"
        return f"{self.name:<14} {self.figure:<58} aim: {self.aim:<34} {verdict}"


def interpreter(runs: int) -> float:
    return median([child_cpu([sys.executable, "-c", "pass"])[0] for _ in range(runs)])


def command_rows(work: Path, runs: int, bare: float) -> list[Row]:
    template = work / "turn"
    play_turn_game(template)
    orders = sorted((template / "orders").glob("*.toml"))
    pbem = pbem_command()
    child_cpu([*pbem, "check", str(template), *map(str, orders)])  # writes the bytecode once
    check = [child_cpu([*pbem, "check", str(template), *map(str, orders)]) for _ in range(runs)]
    resolved = []
    for i in range(runs):
        copy = Path(shutil.copytree(template, work / f"resolve{i}"))
        resolved.append(child_cpu([*pbem, "resolve", str(copy)]))
        shutil.rmtree(copy)
    rows = []
    for name, times, aim in (("resolve", resolved, 8.0), ("check", check, 4.0)):
        cpu = median([c for c, _ in times])
        wall = median([w for _, w in times])
        rows.append(
            Row(
                name,
                f"{cpu / bare:5.1f}x python -c pass ({cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} "
                "ms wall)",
                f"at most {aim:.0f}x",
                cpu / bare <= aim,
            )
        )
    return rows


FLOOR = (
    (
        "stdlib",
        "dataclasses, pathlib, re, typing, enum, hashlib (every command) and tomli",
        "import dataclasses, pathlib, re, typing, enum, hashlib, tomli",
    ),
    ("click", "click (the command line)", "import click"),
    ("jinja2", "Jinja2 (the reports)", "import jinja2"),
    ("check imports", "all that `pbem check` does", "import pbem.cli.turn, pbem.game.check"),
    (
        "resolve imports",
        "all that `pbem resolve` does",
        "import pbem.cli.turn, pbem.game.processor, pbem.present.report",
    ),
)
"""The floor's rows: name, what is imported, the code."""


def floor_rows(runs: int, bare: float) -> list[Row]:
    """The imports alone, in a fresh interpreter each time, as a multiple of `python -c pass`
    (which the interpreter's own start-up is: the multiple includes it)."""
    rows = []
    for name, what, code in FLOOR:
        cpu = median([child_cpu([sys.executable, "-c", code])[0] for _ in range(max(runs, 5))])
        rows.append(
            Row(
                name,
                f"{cpu / bare:5.1f}x python -c pass ({cpu * 1000:.0f} ms CPU)",
                f"imports: {what}",
                None,
            )
        )
    return rows


def games_root(root: Path, games: int) -> None:
    """`games` 6-player games in one folder, each with its setup turn pending and every
    player's orders in orders/ (`pbem run` resolves them all)."""
    for i in range(games):
        directory = root / f"g{i:03d}"
        processor.new_game(
            directory,
            processor.parse_player_list(PLAYERS6),
            Options(),
            seed=hashlib.sha256(b"batch/%d" % i).digest(),
            name=f"g{i:03d}",
        )
        write_skeletons(directory)


def batch_rows(work: Path, games: int, runs: int, bare: float) -> list[Row]:
    """`pbem run ROOT` over `games` games: CPU time with one job, wall time with two."""
    root = work / "root"
    games_root(root, games)
    pbem = pbem_command()
    timed: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for run in range(runs):
        for jobs in (1, 2):
            copy = Path(shutil.copytree(root, work / f"root{run}-{jobs}"))
            timed[jobs].append(child_cpu([*pbem, "run", str(copy), "--jobs", str(jobs)]))
            shutil.rmtree(copy)
    per_cpu = median([games / cpu for cpu, _ in timed[1]])
    per_wall = median([games / wall for _, wall in timed[2]])
    return [
        Row(
            "batch",
            f"{per_cpu:5.1f} games/CPU-s with 1 job ({1 / per_cpu / bare:.1f}x python -c pass "
            "per game)",
            "at least 25 games/CPU-s",
            per_cpu >= 25,
        ),
        Row(
            "batch 2 jobs",
            f"{per_wall:5.1f} games per wall second",
            "at least 40 games/wall-s",
            per_wall >= 40,
        ),
    ]


def selfplay_row(games: int, runs: int, bare: float) -> Row:
    board = load_board("classic")
    seeds = [hashlib.sha256(b"selfplay-bench/%d" % i).digest() for i in range(games)]
    # The key chains are computed once per game (4,096 hashes): keep that out of the figure.
    # (dice.py keeps the chains of 16 games, fewer than are played here.)
    keys = [[dice.resolution_key(seed, r) for r in range(300)] for seed in seeds]

    def play() -> None:
        for i, seed in enumerate(seeds):
            hidden = dice.hidden_key(seed)
            rng = random.Random(seed)
            options = Options(setup=SetupMode.RANDOM)
            state, _ = new_game(
                f"bench-{i}",
                ("alice", "bob", "carol"),
                board,
                options,
                Randomness(keys[i][0], hidden),
            )
            while state.phase is not Phase.OVER and state.resolution < 300:
                orders = tuple(orders_for(state, n, rng) for n in state.awaiting())
                state, _ = resolve(state, orders, Randomness(keys[i][state.resolution], hidden))

    play()
    rate = median([games / cpu_of(play) for _ in range(runs)])
    return Row(
        "self-play",
        f"{rate:5.1f} games/CPU-s ({1 / rate / bare:.2f}x python -c pass per game)",
        "at least 70 games/CPU-s",
        rate >= 70,
    )


def dice_row(runs: int) -> Row:
    """The raw stream is the dice spec's reference implementation (as tests/test_dice.py writes
    it): HMAC-SHA256(K, "pbem/dice/" || i) block after block, with the standard hmac module."""
    key = bytes(range(32))

    def raw() -> int:
        n = 0
        for i in range(40_000):
            n += len(hmac.new(key, b"pbem/dice/%d" % i, hashlib.sha256).digest())
        return n

    raw_rate = median([40_000 * 32 / cpu_of(raw) for _ in range(runs)])
    state, _ = new_game(
        "dice", ("alice", "bob"), load_board("classic"), Options(), Randomness(key, key)
    )
    names = list(state.board.names)
    source = names[0]
    target = next(t for t in state.board.neighbours(source))
    territories = dict(state.territories)
    territories[source] = Holding("alice", 3001)
    territories[target] = Holding("bob", 3000)
    state = replace(state, territories=territories, phase=Phase.PLAY, turn=1, current=0)
    orders = Orders(state.game, 1, "alice", "x", attack=(Attack(source, target),))
    resolved: list[tuple[Event, ...]] = []

    def battle() -> None:
        resolved.append(resolve(state, (orders,), Randomness(key, key))[1])

    rates = []
    for _ in range(runs):
        seconds = cpu_of(battle)  # the engine's time; its dice are counted outside it
        events = resolved.pop()
        rolled = sum(len(e.attacker) + len(e.defender) for e in events if isinstance(e, Rolled))
        rates.append(rolled / seconds)
    rate = median(rates)
    share = rate / raw_rate
    return Row(
        "battle dice",
        f"{rate / 1e6:4.2f} M dice/s, {share:.1%} of the raw stream ({raw_rate / 1e6:.1f} M "
        "bytes/s)",
        "at least 1.2 M/s, 12% of the raw stream",
        share >= 0.12,
    )


def history_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in (directory / "history").glob("*.toml"))


def audit_rows(work: Path, runs: int, bare: float) -> list[Row]:
    full, half = work / "long1000", work / "long500"
    long_game(full, 1000)
    long_game(half, 500)
    t_full = median([cpu_of(lambda: audit.audit_game(full)) for _ in range(runs)])
    t_half = median([cpu_of(lambda: audit.audit_game(half)) for _ in range(runs)])
    grown = history_bytes(full) / history_bytes(half)  # later turns hold more battles
    return [
        Row(
            "audit 1000",
            f"{t_full:5.2f} s CPU ({t_full / bare:.0f}x python -c pass)",
            "at most 1 s",
            t_full <= 1.0,
        ),
        Row(
            "audit linear",
            f"1,000 resolutions take {t_full / t_half:.2f}x the time of 500, their history "
            f"{grown:.2f}x the bytes",
            "time grows as the history (10%)",
            t_full / t_half <= grown * 1.1,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median counts)")
    parser.add_argument("--quick", action="store_true", help="fewer games, for a first look")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=GROUPS,
        metavar="ROW",
        help=f"measure only these groups of rows, of {', '.join(GROUPS)} (default: all)",
    )
    args = parser.parse_args()
    only = set(args.only or GROUPS)
    runs = args.runs
    print(machine())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        bare = interpreter(max(runs, 5))
        print(f"baseline: python -c pass takes {bare * 1000:.1f} ms CPU (median of {max(runs, 5)})")
        measures: dict[str, Callable[[], list[Row]]] = {
            "commands": lambda: command_rows(work, runs, bare),
            "floor": lambda: floor_rows(runs, bare),
            "batch": lambda: batch_rows(work, 40 if args.quick else 200, max(1, runs // 3), bare),
            "selfplay": lambda: [selfplay_row(5 if args.quick else 20, runs, bare)],
            "dice": lambda: [dice_row(runs)],
            "audit": lambda: audit_rows(work, min(runs, 3), bare),
        }
        rows: list[Row] = []
        for group in GROUPS:
            if group not in only:
                continue
            for row in measures[group]():
                rows.append(row)
                print(row.show(), flush=True)
        bare_after = interpreter(max(runs, 5))
    print(
        f"baseline again at the end: {bare_after * 1000:.1f} ms CPU; "
        f"{sum(1 for r in rows if r.met)} of {sum(1 for r in rows if r.met is not None)} aims "
        "met; "
        f"{time.perf_counter() - started:.0f} s in all; load average "
        + ", ".join(f"{x:.1f}" for x in os.getloadavg())
    )


if __name__ == "__main__":
    main()
