"""A fetch costs the new mail: 10 new messages fetched over many handled, against over 100.

Usage: python benchmarks/scale_fetch.py [--quick]   (prints its rows and the machine; nothing is
asserted)

A folder of 10 games (4 players each) reads a Maildir, then an mbox, that holds `handled` order
mails already handled by an earlier fetch (made once, untimed) and 10 new ones. Each run adds
10 new order mails (each player's orders, accepted and answered) and times `pbem mail fetch
ROOT --maildir BOX` (or `--mbox`): the CPU time of the child process and of the helper it may
start (user + system), the median of the runs. The baseline is the same fetch over 100 handled
messages, measured in the same run: the aim is at most 2x it over 20,000 (`--quick`: 2,000, and
fewer runs).

`rows(work, quick)` gives the rows for `benchmarks/all.py`: (name, figure with its ratio, aim,
met).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)
from mail_state import PLAYERS, compiled, make_games, order_mail  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
NOW = "2027-03-02T12:00:00+00:00"
GAMES = 10
NEW = 10
BASE = 100


def child_cpu(args: list[str], cwd: Path) -> float:
    """CPU seconds of one `python -m pbem ARGS` run of this tree's pbem (the child and the
    helper it waits for), which must succeed."""
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode `compiled` wrote is read
    proc = subprocess.Popen(
        [sys.executable, "-m", "pbem", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"pbem {' '.join(args[:2])} failed: {err}")
    return usage.ru_utime + usage.ru_stime


class Club:
    """A folder of games and its mailbox (a Maildir or an mbox) with messages handled."""

    def __init__(self, folder: Path, games: list[Path], kind: str) -> None:
        self.folder, self.games, self.kind = folder, games, kind
        self.box = folder / ("Maildir" if kind == "maildir" else "mbox")
        self.sent = 0

    def add(self, count: int) -> None:
        """`count` more order mails in the mailbox, delivered after the others."""
        messages = []
        for n in range(self.sent, self.sent + count):
            game = self.games[n % len(self.games)]
            player = PLAYERS[(n // len(self.games)) % len(PLAYERS)]
            messages.append((n, order_mail(game, player, n)))
        self.sent += count
        if self.kind == "maildir":
            for sub in ("new", "cur", "tmp"):
                (self.box / sub).mkdir(parents=True, exist_ok=True)
            for n, raw in messages:
                (self.box / "new" / f"{1_800_000_000 + n}.M{n}P1.bench").write_bytes(raw)
        else:
            with self.box.open("ab") as handle:
                for _, raw in messages:
                    handle.write(b"From bench@example.org Sat Mar  1 09:00:00 2027\n")
                    handle.write(raw.replace(b"\nFrom ", b"\n>From ").rstrip(b"\n") + b"\n\n")

    def fetch(self) -> float:
        flag = "--maildir" if self.kind == "maildir" else "--mbox"
        root = self.folder / "root"
        return child_cpu(["mail", "fetch", str(root), flag, str(self.box), "--now", NOW], root)


def club(work: Path, name: str, handled: int, kind: str) -> Club:
    """A folder of GAMES games whose mailbox holds `handled` messages, all handled."""
    folder = work / name
    games = [folder / "root" / f"game-{i:04d}" for i in range(GAMES)]
    make_games(games, HERE)
    made = Club(folder, games, kind)
    made.add(handled)
    made.fetch()
    return made


def measure(made: Club) -> float:
    """The CPU seconds of fetching NEW new messages."""
    made.add(NEW)
    return made.fetch()


def rows(work: Path, quick: bool) -> list[tuple[str, str, str, bool | None]]:
    compiled(HERE)
    handled = 2_000 if quick else 20_000
    runs = 3 if quick else 5
    out: list[tuple[str, str, str, bool | None]] = []
    for kind in ("maildir", "mbox"):
        small = club(work, f"{kind}-{BASE}", BASE, kind)
        large = club(work, f"{kind}-{handled}", handled, kind)
        base, large_s = [], []
        for _ in range(runs):  # in turn, so that both meet the same load
            base.append(measure(small))
            large_s.append(measure(large))
        b, big = statistics.median(base), statistics.median(large_s)
        ratio = big / b
        out.append(
            (
                f"fetch {kind}",
                f"{NEW} new over {handled:,} handled {big:.2f} s CPU, over {BASE} {b:.2f} s: "
                f"{ratio:.2f}x",
                "at most 2x",
                ratio <= 2.0,
            )
        )
        for made in (small, large):
            shutil.rmtree(made.folder)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"machine: {cpu()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; load average {load}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, figure, aim, met in rows(Path(tmp), args.quick):
            verdict = "met" if met else "NOT met"
            print(f"{name:<14} {figure:<70} aim: {aim:<12} {verdict}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
