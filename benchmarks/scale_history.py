"""Whether a resolve grows with the history: `pbem resolve` of the same kind of game at 50 and
at 5,000 resolutions (`--quick`: 1,000), CPU time of the child process and its memory (max
RSS), medians of several runs, the long game's figure as a ratio of the short one's.

Usage: python benchmarks/scale_history.py [--quick] [--runs N]   (prints its rows and the
machine; nothing is asserted)

Both games are built as benchmarks/all.py's `long_game` builds them (the test bots' orders, 3
players, random setup), as one game cut at each length, on a key chain of 5,001 keys (a game
of 5,000 resolutions needs more than the default 4,096; with this chain and name no player
wins before), with the tallies a game keeps written as a resolve would have left them, and
with what a game played that long has on disk beside its history: a report folder per
resolution (12 files, hard links to the deal's) and the order files each resolution used in
orders/done/NNNN/; the pending turn's orders are in orders/. Each run resolves a fresh copy
(the files of the report folders and of orders/done/ hard links to the built game's: a resolve
writes new files there, never into one it finds).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from all import long_game, machine  # noqa: E402
from conftest import skeleton  # noqa: E402

from pbem.records.opening import read_game  # noqa: E402
from pbem.records.tallies import tallies_before, write_tallies  # noqa: E402

CHAIN = 5001
NAME = "long5000"
"""The game's name: with this chain, the game goes on to 5,000 resolutions and beyond (each
shorter game is its beginning)."""
SHORT, LONG, QUICK_LONG = 50, 5000, 1000
AIM = 1.2
"""A resolve at the long game takes at most this multiple of the short game's CPU time."""


def built(work: Path, resolutions: int) -> Path:
    """The game `resolutions` long, its tallies kept and the pending turn's orders waiting."""
    directory = work / f"long{resolutions}" / "game"  # (a folder each: game names are unique)
    if (directory / "game.toml").is_file():
        return directory
    long_game(directory, resolutions, CHAIN, NAME, folders=True)
    game = read_game(directory)
    players = [p.name for p in game.state.players]
    write_tallies(directory, tallies_before(directory, players, resolutions))
    # The pending turn's orders place the reinforcements and attack nowhere, at both lengths: a
    # battle costs the dice it rolls (a stack grown over 5,000 turns rolls thousands), not the
    # history, and the rows measure what the history costs.
    for player in game.state.awaiting():
        (directory / "orders" / f"{player}.toml").write_text(skeleton(directory, player))
    return directory


_LINKED = (f"{os.sep}reports{os.sep}", f"{os.sep}orders{os.sep}done{os.sep}")


def _linked(source: str, target: str) -> None:
    """A file of the copy: a hard link for those of the report folders and of orders/done/ (tens
    of thousands in the long game), a copy for the rest."""
    if any(part in source for part in _LINKED):
        os.link(source, target)
    else:
        shutil.copy2(source, target)


def resolved(game: Path, copy: Path) -> tuple[float, float]:
    """(CPU seconds, max RSS in MiB) of one `pbem resolve` of a fresh copy of `game`."""
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(game, copy, copy_function=_linked)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # (this checkout's pbem)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbem", "resolve", str(copy)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,  # `-m` looks in the current folder first: another checkout's pbem there won
    )
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pbem resolve {copy} failed: {err}")
    shutil.rmtree(copy)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def rows(work: Path, quick: bool, runs: int = 5) -> list[tuple[str, str, str, bool | None]]:
    """(row, figure with its ratio, aim, met) for a resolve at SHORT and at LONG resolutions."""
    long = QUICK_LONG if quick else LONG
    games = {n: built(work, n) for n in (SHORT, long)}
    resolved(games[SHORT], work / "warm")  # (the bytecode written once)
    measured: dict[int, list[tuple[float, float]]] = {SHORT: [], long: []}
    for _ in range(runs):  # alternated, so that a busy spell of the machine hits both
        for n, game in games.items():
            measured[n].append(resolved(game, work / "copy"))
    cpu_of = {n: statistics.median(c for c, _ in m) for n, m in measured.items()}
    rss_of = {n: statistics.median(r for _, r in m) for n, m in measured.items()}
    ratio = cpu_of[long] / cpu_of[SHORT]
    grown = rss_of[long] / rss_of[SHORT]
    return [
        (
            f"resolve at {SHORT}",
            f"{cpu_of[SHORT] * 1000:.0f} ms CPU (1.00x, the baseline)",
            "the baseline",
            None,
        ),
        (
            f"resolve at {long:,}",
            f"{cpu_of[long] * 1000:.0f} ms CPU ({ratio:.2f}x the resolve at {SHORT})",
            f"at most {AIM}x",
            ratio <= AIM,
        ),
        (
            f"memory at {SHORT}",
            f"{rss_of[SHORT]:.0f} MiB max RSS (1.00x, the baseline)",
            "the baseline",
            None,
        ),
        (
            f"memory at {long:,}",
            f"{rss_of[long]:.0f} MiB max RSS ({grown:.2f}x the resolve at {SHORT})",
            f"at most {AIM}x",
            grown <= AIM,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_LONG:,} resolutions, not {LONG:,}"
    )
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (the median counts)")
    args = parser.parse_args()
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        for name, figure, aim, met in rows(Path(tmp), args.quick, args.runs):
            verdict = "" if met is None else ("met" if met else "NOT met")
            print(f"{name:<20} {figure:<52} aim: {aim:<14} {verdict}")


if __name__ == "__main__":
    main()
