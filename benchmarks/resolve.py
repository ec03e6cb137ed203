"""How fast the moderator's commands run: resolve (with every file written), check and audit.

Usage: python benchmarks/resolve.py [TURNS]   (prints figures; nothing is asserted)
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from conftest import SEED, write_skeletons  # noqa: E402

from pbem.core.state import Options  # noqa: E402
from pbem.game import processor  # noqa: E402


def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "bench"
        started = time.perf_counter()
        processor.new_game(
            directory,
            processor.parse_player_list(["alice", "bob", "carol", "dave"]),
            Options(),
            seed=SEED,
        )
        created = time.perf_counter() - started
        resolve_time = check_time = 0.0
        done = 0
        for _ in range(turns):
            paths = write_skeletons(directory)
            t0 = time.perf_counter()
            processor.check_files(directory, paths)
            t1 = time.perf_counter()
            outcome = processor.resolve_game(directory)
            t2 = time.perf_counter()
            check_time += t1 - t0
            resolve_time += t2 - t1
            done += 1
            if outcome.state.phase.value == "over":
                break
        t0 = time.perf_counter()
        summary = processor.audit_game(directory)
        audit_time = time.perf_counter() - t0
    print(
        f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print(f"new game (4 players, reports written): {created * 1000:.1f} ms")
    print(f"check: {check_time / done * 1000:.1f} ms per turn's files")
    print(
        f"resolve: {resolve_time / done * 1000:.1f} ms per turn ({done} turns, files and reports)"
    )
    print(
        f"audit: {audit_time * 1000:.0f} ms for {summary.resolutions} resolutions "
        f"({audit_time / summary.resolutions * 1000:.1f} ms each)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
