"""How a player's view file and `pbem dice --json` scale with the length of a game.

Usage: python benchmarks/scale_views.py [--quick]   (prints its rows and the machine; nothing
is asserted)

Rows (each against a baseline of the same run):
- view N: the size of a player's view file (NAME.view.json, as a report writes it) of a game of
  three N resolutions long, as a share of 1 MiB (what `pbem check --view`, `pbem verify` and
  the player's kit read was 1 MiB until a resolution's rolls were written a line each; it is
  pbem.files.VIEW_FILE_LIMIT, 4 MiB, now); aim: under a quarter of 1 MiB.
- view growth: the view file at the longest game against the one at 1,000 resolutions; aim: at
  most 1.1x (what grows with the game is bounded, docs/views.md, and 1,000 resolutions are past
  every bound; a game of 50 has a shorter story, so its view file is smaller).
- dice --json: the largest resident memory of `pbem dice DIR --json` (the child process's
  maximum RSS, median of several runs) at the longest game against 50 resolutions; aim: about
  flat, at most 1.25x.

The games are the benchmarks' long game of three (tests/long_game.py, `three_player_game`),
5,000 resolutions at the longest (2,000 with --quick).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from long_game import three_player_game  # noqa: E402

from pbem.present.report import view_file  # noqa: E402
from pbem.records.history import read_history  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402

Rows = list[tuple[str, str, str, bool | None]]

SHORT = 50

MIB = 1024 * 1024
"""The measure of the aim: a view file of any length of game under a quarter of it."""


def view_bytes(directory: Path) -> int:
    """The size of the view file the report of the game's last resolution sends its first
    player (as `pbem resolve` writes it: the view, the dice check, the story, the secret's
    hash)."""
    game = read_game(directory)
    last = game.state.resolution - 1
    text = view_file(game, last, read_history(directory, last).events, game.state.players[0].name)
    return len(text.encode("utf-8"))


def max_rss(argv: list[str], runs: int = 3) -> float:
    """The median of the child's largest resident memory, in MiB, over `runs` runs."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    sizes = []
    for _ in range(runs):
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"{' '.join(argv)} failed: {err}")
        if proc.stderr:
            proc.stderr.close()
        sizes.append(usage.ru_maxrss / 1024)  # (KiB on Linux)
    return statistics.median(sizes)


def rows(work: Path, quick: bool) -> Rows:
    lengths = (SHORT, 1000, 2000) if quick else (SHORT, 1000, 5000)
    out: Rows = []
    size: dict[int, int] = {}
    for n in lengths:
        directory = work / f"views{n}"
        three_player_game(directory, n)
        size[n] = view_bytes(directory)
        share = size[n] / MIB
        out.append(
            (
                f"view {n:,}",
                f"{size[n] / 1024:6.1f} KiB, {share:.3f}x 1 MiB",
                "under 0.25x 1 MiB",
                share < 0.25,
            )
        )
    longest = lengths[-1]
    growth = size[longest] / size[1000]
    out.append(
        (
            "view growth",
            f"{growth:4.2f}x: {longest:,} resolutions against 1,000",
            "at most 1.1x",
            growth <= 1.1,
        )
    )
    pbem = [sys.executable, "-m", "pbem", "dice", "--json"]
    rss = {n: max_rss([*pbem, str(work / f"views{n}")]) for n in (SHORT, longest)}
    ratio = rss[longest] / rss[SHORT]
    out.append(
        (
            "dice --json",
            f"{ratio:4.2f}x max RSS: {rss[longest]:.0f} MiB at {longest:,} resolutions, "
            f"{rss[SHORT]:.0f} MiB at {SHORT}",
            "about flat: at most 1.25x",
            ratio <= 1.25,
        )
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="games of 50, 1,000 and 2,000")
    args = parser.parse_args()
    print(f"machine: {cpu()}, {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, figure, aim, met in rows(Path(tmp), args.quick):
            mark = "-" if met is None else ("met" if met else "NOT met")
            print(f"{name:<14} {figure:<58} {aim:<28} {mark}")


if __name__ == "__main__":
    main()
