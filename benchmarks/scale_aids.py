"""What the decision aids (the odds of each attack a player might make, in every report) cost as
a share of a resolve, at small stacks and at stacks of a few hundred armies; and how often the
float chance prints as the exact fraction does over a table of battles.

Usage: python benchmarks/scale_aids.py [--quick]   (prints its rows and the machine; nothing is
asserted)

Rows:
- aids small / aids large: `pbem resolve` of a 6-player play turn (every file written, CPU time
  of the command, run from this checkout), and the decision aids of every living player of the
  state it resolves to, worked out as that command does, from cold tables (the cache of a fresh
  process): their CPU time as a share of the resolve's. Large: the same game with 20 to 300
  armies on each territory (drawn), so that the aids ask of battles of up to 600 armies. The
  figure also gives what the same aids cost with exact fractions (`odds.forecast`), the way
  they were worked out before.
- aids agreement: the battles of the table (every way of attacking up to 20 against 20, and
  large battles of up to 600 armies), each printed from `odds.printed_win` and from the exact
  fraction; how many print the same, and the largest distance of the float from the exact.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from machine import cpu  # (benchmarks/, beside this script)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from pbem.core import fog, odds  # noqa: E402
from pbem.core.state import Phase  # noqa: E402
from pbem.present import aids  # noqa: E402
from pbem.present.plan import percent  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402

AIM = 0.10
"""The aids' share of a resolve, at most, at any size of stacks."""

LARGE = (20, 300)
"""The large game: the small one with between this many armies on each territory (drawn)."""

WAYS = [
    (stop_at, dice, promised)
    for stop_at in (1, 2, 3, 5)
    for dice in (None, 1, 2, 3)
    for promised in (True, False)
]
LARGE_BATTLES = [(300, 290), (250, 300), (280, 280), (560, 40), (40, 560), (150, 160), (599, 1)]


def _aids_cpu(directory: Path, exact: bool) -> float:
    """CPU seconds of the decision aids of every living player of the game's state, from cold
    tables; with `exact`, from the exact fractions instead."""
    state = read_game(directory).state
    players = [p.name for p in state.players if p.alive] if state.phase is Phase.PLAY else []
    odds._chances.cache_clear()
    odds.forecast.cache_clear()
    chance = odds.printed_win
    if exact:
        odds.printed_win = lambda a, d: odds.forecast(a, d).win  # type: ignore[assignment]
    try:
        started = time.process_time()
        for player in players:
            aids.decision_aids(fog.as_known(state, player)[0], player)
        return time.process_time() - started
    finally:
        odds.printed_win = chance  # type: ignore[assignment]


def _resolve_cpu(template: Path, work: Path, runs: int) -> tuple[float, Path]:
    """The median CPU seconds of `pbem resolve` of copies of `template` (this checkout's pbem),
    and one resolved copy."""
    from all import child_cpu, median

    times = []
    for i in range(runs):
        copy = Path(shutil.copytree(template, work / f"{template.name}-{i}"))
        times.append(child_cpu([sys.executable, "-m", "pbem", "resolve", str(copy)], cwd=ROOT)[0])
    return median(times), copy


def _large(small: Path, large: Path) -> None:
    from conftest import force_state, write_skeletons

    shutil.copytree(small, large)
    state = read_game(large).state
    draw = random.Random(1)
    bigger = {
        n: replace(h, armies=draw.randint(*LARGE)) for n, h in sorted(state.territories.items())
    }
    force_state(large, replace(state, territories=bigger))
    write_skeletons(large)


def share_rows(work: Path, quick: bool) -> list[tuple[str, str, str, bool | None]]:
    from all import median, play_turn_game

    runs = 3 if quick else 7
    small = work / "small"
    play_turn_game(small)
    large = work / "large"
    _large(small, large)
    rows = []
    for name, template in (("aids small", small), ("aids large", large)):
        resolve, resolved = _resolve_cpu(template, work, runs)
        spent = median([_aids_cpu(resolved, exact=False) for _ in range(runs)])
        exact = median([_aids_cpu(resolved, exact=True) for _ in range(1 if quick else 3)])
        share = spent / resolve
        rows.append(
            (
                name,
                f"{share:5.1%} of resolve ({spent * 1000:.1f} of {resolve * 1000:.0f} ms CPU; "
                f"exact fractions {exact * 1000:.0f} ms, {exact / resolve:.0%})",
                f"at most {AIM:.0%}",
                share <= AIM,
            )
        )
    return rows


def agreement_row(quick: bool) -> tuple[str, str, str, bool | None]:
    size = 12 if quick else 20
    cases = [(a, d, *way) for way in WAYS for a in range(1, size + 1) for d in range(1, size + 1)]
    cases += [(a, d, 1, None, True) for a, d in LARGE_BATTLES[: 3 if quick else None]]
    same = 0
    worst = 0.0
    for a, d, stop_at, dice, promised in cases:
        exact: Fraction = odds.forecast(a, d, stop_at, dice, promised).win
        worst = max(worst, abs(odds.win_chance(a, d, stop_at, dice, promised) - float(exact)))
        same += percent(odds.printed_win(a, d, stop_at, dice, promised)) == percent(exact)
    return (
        "aids agreement",
        f"{same} of {len(cases)} battles print as the exact fraction (float within {worst:.0e})",
        "all of them",
        same == len(cases),
    )


def rows(work: Path, quick: bool) -> list[tuple[str, str, str, bool | None]]:
    return [*share_rows(work, quick), agreement_row(quick)]


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs and battles")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"machine: {cpu()}, {os.cpu_count()} cores; load average {load}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, figure, aim, met in rows(Path(tmp), args.quick):
            verdict = "" if met is None else ("met" if met else "NOT met")
            print(f"{name:<15} {figure:<80} aim: {aim:<14} {verdict}", flush=True)


if __name__ == "__main__":
    main()
