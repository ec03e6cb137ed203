"""How fast `pbem run` resolves a root of many games, with one and with two jobs.

Usage: python benchmarks/run.py [GAMES]   (default 1,000; prints figures; nothing is asserted)

Each game has 4 players, its armies placed at random, and one pending turn whose order file
(the ready skeleton of the report) is in orders/. The root is generated once and copied for
each run; each run is the `pbem` command line, as cron would start it.
"""

from __future__ import annotations

import multiprocessing
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import write_skeletons  # noqa: E402

from pbem.core.state import Options, SetupMode  # noqa: E402
from pbem.game import processor  # noqa: E402
from pbem.records.history import history_count  # noqa: E402

PLAYERS = ["alice", "bob", "carol", "dave"]


def make_game(directory: Path) -> None:
    processor.new_game(
        directory,
        processor.parse_player_list(PLAYERS),
        Options(setup=SetupMode.RANDOM),
        seed=int(directory.name.rsplit("-", 1)[1]).to_bytes(32, "big"),
    )
    write_skeletons(directory)


def run(root: Path, jobs: int) -> tuple[float, float]:
    """Wall time and CPU time (of every process of the run) of one `pbem run`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pbem", "run", str(root), "--jobs", str(jobs)],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_time = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    if done.returncode != 0 or "resolved" not in last:
        raise SystemExit(f"pbem run --jobs {jobs} failed: {last}")
    print(f"  --jobs {jobs}: {last}")
    return elapsed, cpu_time


def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pristine = Path(tmp) / "pristine"
        games = [pristine / f"group-{i % 10}" / f"game-{i:04d}" for i in range(count)]
        started = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
            pool.map(make_game, games, chunksize=8)
        made = time.perf_counter() - started
        print(
            f"machine: {cpu()}, {os.cpu_count()} cores, {platform.system()}, "
            f"Python {platform.python_version()}"
        )
        print(f"generated {count} games (4 players, one pending turn each) in {made:.0f} s")
        rates = {}
        for jobs in (1, 2):
            root = Path(tmp) / f"jobs-{jobs}"
            shutil.copytree(pristine, root)
            load = os.getloadavg()[0]
            elapsed, cpu_time = run(root, jobs)
            resolved = sum(history_count(root / g.relative_to(pristine)) == 2 for g in games)
            assert resolved == count, f"{resolved} of {count} games resolved"
            rates[jobs] = count / elapsed
            print(
                f"pbem run --jobs {jobs}: {elapsed:.1f} s, {rates[jobs]:.1f} games/s "
                f"({cpu_time / count * 1000:.0f} ms of CPU per game; load average {load:.1f} "
                "before the run)"
            )
            shutil.rmtree(root)
        print(f"two jobs against one: {rates[2] / rates[1]:.2f} times as fast")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
