"""What a tick costs in a big folder of games: `pbem status` and `pbem run` over 100, 1,000 and
10,000 games of which 100 are due, each against resolving those 100 alone in the same run;
`pbem run --send` over 1,000 and 10,000 games against resolving and mailing the 100 alone
(`pbem run --send` over a folder of just them); and `pbem new` in the 10,000-game folder against
`pbem new` in an empty one.

Usage: python benchmarks/scale_tick.py [--quick] [--only new]   (prints its rows and the
machine; nothing is asserted)

One idle game (4 players, dealt at random, no orders in: waiting) and one due game (the same,
every player's order file in: ready) are made with pbem; every other game is a copy of one of
them (`shutil.copytree`, renamed inside its game file, since names are unique in a folder of
games); the idle copies leave out the deal's reports, which no tick reads. The games sit in
folders of 100. Each figure is the median of several runs of the command line, counting the
CPU time of the child process (user + system). Each `pbem run` works on a fresh copy of the
folder's due games; the idle games are the same for every run, and the first tick over a
folder (which builds the folder's index, `.pbem-tick/`) is not counted: the figures are of
the ticks cron starts every few minutes. `--quick` leaves out the 10,000-game folder and
measures fewer runs. `--only new` measures `pbem new` alone, in a folder of 10,000 idle games
indexed by two ticks (the index trusts a folder's look from its second save on, docs/batch.md),
with 9 runs.

The mail goes to an SMTP server on loopback that the benchmark starts (the tests' aiosmtpd
server, in this process: its CPU time is not counted), named in each folder's `pbem.toml`;
every player has an address. A `--send` tick resolves the 100 due games and mails their
players' latest reports (400 messages, checked to arrive); the idle games have nothing to send.
The first `--send` tick over a folder, which builds its index of mail (`.pbem-tick/mail.json`),
is not counted either.
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from conftest import write_skeletons  # noqa: E402
from test_mail import Server  # noqa: E402

from pbem.core.state import Options, SetupMode, state_digest  # noqa: E402
from pbem.game import processor  # noqa: E402
from pbem.records.store import load_game  # noqa: E402

PLAYERS = ["alice", "bob", "carol", "dave"]
SEATS = [f"{p}={p}@example.org" for p in PLAYERS]
DUE = 100
AIM_TICK = 3.0
AIM_NEW = 1.2
NOW = "2027-03-01T18:00:00Z"

Row = tuple[str, str, str, bool | None]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def child_cpu(argv: Sequence[str]) -> float:
    """CPU seconds (user + system) of one run of a command, which must succeed."""
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env(), cwd=ROOT
    )
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err}")
    return usage.ru_utime + usage.ru_stime


def pbem(*args: str) -> list[str]:
    return [sys.executable, "-m", "pbem", *args]


def templates(work: Path) -> tuple[Path, Path]:
    """The idle game and the due game every folder is copied from."""
    idle, due = work / "template-idle", work / "template-due"
    for directory in (idle, due):
        processor.new_game(
            directory,
            processor.parse_player_list(SEATS),
            Options(setup=SetupMode.RANDOM),
            seed=bytes(32),
            name=directory.name,
        )
    write_skeletons(due)
    shutil.rmtree(idle / "reports")
    return idle, due


def copy_game(template: Path, directory: Path) -> None:
    """A copy of a game under another name: its folder's, and the name its game file, its
    history and its order files give (names are unique in a folder of games)."""
    shutil.copytree(template, directory, ignore=shutil.ignore_patterns(".lock"))
    old, new = f'game = "{template.name}"', f'game = "{directory.name}"'
    for path in [directory / "game.toml", *sorted((directory / "orders").glob("*.toml"))]:
        path.write_text(path.read_text().replace(old, new, 1))
    before = state_digest(load_game(template).state)  # the state holds the name: its digest
    after = state_digest(load_game(directory).state)  # in the history changes with it
    history = directory / "history" / "0000.toml"
    text = history.read_text().replace(old, new, 1)
    history.write_text(text.replace(f'state = "{before}"', f'state = "{after}"', 1))


def place(root: Path, index: int) -> Path:
    return root / f"group-{index // 100:03d}" / f"game-{index:05d}"


SMTP_PORT = 0
"""The port of the benchmark's SMTP server, once started; every folder's pbem.toml names it."""


def build(root: Path, idle: Path, due: Path, games: int) -> list[Path]:
    """A folder of `games` games, the first DUE of them due; the due games' folders."""
    root.mkdir(parents=True)
    (root / "pbem.toml").write_text(
        f'[mail]\nfrom = "club@example.org"\nsmtp_host = "127.0.0.1"\nsmtp_port = {SMTP_PORT}\n'
    )
    dues = []
    for i in range(games):
        copy_game(due if i < DUE else idle, place(root, i))
        if i < DUE:
            dues.append(place(root, i))
    return dues


def refresh(root: Path, due: Path) -> None:
    """The due games of a folder back as they were before a run resolved them."""
    for i in range(DUE):
        directory = place(root, i)
        shutil.rmtree(directory)
        copy_game(due, directory)


def measure(work: Path, quick: bool) -> list[Row]:
    """Every row, with an SMTP server on loopback for the ticks with --send (the tests' server:
    aiosmtpd, keeping what it is sent until `sending` counts it)."""
    global SMTP_PORT
    from test_mail import running_server

    serving = running_server()
    smtp = next(serving)
    SMTP_PORT = smtp.port
    try:
        return _measure(work, quick, smtp)
    finally:
        next(serving, None)


def sending(smtp: Server, root: Path) -> float:
    """The CPU time of a `pbem run --send` tick, which must mail the due games' reports."""
    smtp.recorder.received.clear()
    spent = child_cpu(pbem("run", str(root), "--send", "--now", NOW))
    count = len(smtp.recorder.received)
    if count != DUE * len(PLAYERS):
        raise SystemExit(f"a --send tick over {root} sent {count} messages")
    return spent


def _measure(work: Path, quick: bool, smtp: Server) -> list[Row]:
    runs = 3 if quick else 5
    sizes = [DUE, 1000] if quick else [DUE, 1000, 10000]
    mailed = [n for n in sizes if n >= 1000]
    idle, due = templates(work)
    alone = work / "alone"
    build(alone, idle, due, DUE)
    rows: list[Row] = []
    baseline: list[float] = []
    send_baseline: list[float] = []
    ticks: dict[int, tuple[list[float], list[float], list[float]]] = {}
    roots = {}
    for size in sizes:
        root = work / f"root-{size}"
        build(root, idle, due, size)
        child_cpu(pbem("run", str(root), "--now", NOW))  # the first tick builds the index
        if size in mailed:
            refresh(root, due)
            sending(smtp, root)  # and the first with --send, its index of mail
        roots[size] = root
        ticks[size] = ([], [], [])
    for _ in range(runs):  # interleaved, so that the machine's load weighs on all alike
        refresh(alone, due)
        baseline.append(child_cpu(pbem("run", str(alone), "--now", NOW)))
        refresh(alone, due)
        send_baseline.append(sending(smtp, alone))
        for size, root in roots.items():
            refresh(root, due)
            ticks[size][0].append(child_cpu(pbem("status", str(root), "--now", NOW)))
            ticks[size][1].append(child_cpu(pbem("run", str(root), "--now", NOW)))
            if size in mailed:
                refresh(root, due)
                ticks[size][2].append(sending(smtp, root))
    base = statistics.median(baseline)
    send_base = statistics.median(send_baseline)
    rows.append(
        (f"resolve {DUE} due games alone (pbem run)", f"{base:.2f} s CPU", "the baseline", None)
    )
    rows.append(
        (
            f"resolve and mail {DUE} due games alone (pbem run --send)",
            f"{send_base:.2f} s CPU",
            "the baseline of --send",
            None,
        )
    )
    for size in sizes:
        named = ("status", "run", "run --send")
        for what, values in zip(named, ticks[size], strict=True):
            if not values:
                continue
            figure = statistics.median(values)
            ratio = figure / (send_base if what == "run --send" else base)
            rows.append(
                (
                    f"pbem {what}: {size:,} games, {DUE} due",
                    f"{figure:.2f} s CPU, {ratio:.2f}x",
                    f"<= {AIM_TICK:g}x",
                    ratio <= AIM_TICK,
                )
            )
    rows += new_rows(work, roots[sizes[-1]], runs)
    return rows


def new_rows(work: Path, big: Path, runs: int) -> list[Row]:
    """`pbem new` in an empty folder and in the biggest one, each game made and removed, after
    a tick (not counted) over the biggest once its folders have settled, as cron's next tick
    leaves it: the last measured tick came seconds after 100 games were copied into one folder,
    which its index could not trust yet (`pbem new` would list that folder and read the 100
    names, docs/speed.md)."""
    time.sleep(3.5)  # (past the index's wait for files changed just now, rootindex.RACY_NS)
    child_cpu(pbem("run", str(big), "--now", NOW))
    empty = work / "empty"
    empty.mkdir()
    times: dict[Path, list[float]] = {empty: [], big: []}
    for n in range(runs):
        for root in (empty, big):
            target = root / f"new-{n}"
            argv = pbem("new", str(target), "--players", ",".join(PLAYERS), "--setup", "random")
            times[root].append(child_cpu(argv))
            shutil.rmtree(target)
    alone, inside = statistics.median(times[empty]), statistics.median(times[big])
    ratio = inside / alone
    count = sum(1 for _ in big.glob("group-*/game-*"))
    return [
        ("pbem new alone", f"{alone:.2f} s CPU", "the baseline", None),
        (
            f"pbem new in a folder of {count:,} games",
            f"{inside:.2f} s CPU, {ratio:.2f}x",
            f"<= {AIM_NEW:g}x",
            ratio <= AIM_NEW,
        ),
    ]


def new_only(work: Path, runs: int = 9) -> list[Row]:
    """`pbem new` alone: a folder of 10,000 idle games, indexed as cron leaves it."""
    idle, _ = templates(work)
    big = work / "root-10000"
    for i in range(10000):
        copy_game(idle, place(big, i))
    for _ in range(2):  # the first tick makes the index, the second trusts its folders
        child_cpu(pbem("run", str(big), "--now", NOW))
    return new_rows(work, big, runs)


def rows(work: Path, quick: bool) -> list[Row]:
    return measure(work, quick)


def machine() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"machine: {cpu()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}; load average {load}"
    )


def main() -> None:
    args = sys.argv[1:]
    quick = "--quick" in args
    only_new = "--only" in args and args[args.index("--only") + 1 :][:1] == ["new"]
    print(machine())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        found = new_only(Path(tmp)) if only_new else rows(Path(tmp), quick)
    width = max(len(r[0]) for r in found)
    for name, figure, aim, met in found:
        mark = "" if met is None else ("met" if met else "NOT MET")
        print(f"{name:<{width}}  {figure:<22} {aim:<14} {mark}")
    print(f"({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
