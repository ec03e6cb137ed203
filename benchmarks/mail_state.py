"""The mail state before and after it moved into SQLite, side by side in one run.

Usage: python benchmarks/mail_state.py [--games 100] [--fetch 2000] [--send 3000] [--old 7c47fca]
       [--rounds 3]

Two workloads, each run as the moderator runs it (`python -m pbem ...`, a child process) on a
fresh copy of the same folder, once with the pbem of commit `--old` (the mail state in
`mail/seen.json` and `mail/sent.json`, rewritten and synced after every message: its package
is taken from git with `git archive`, nothing of it is kept in this tree) and once with this
tree's pbem (`mail/ledger.sqlite`; a fetch commits its messages a group at a time, writing its
answers in the background, and reads the messages ahead in a second process), old and new in
turn `--rounds` times, the median of each taken. Every copy is made before the first run and
removed after the last, and each run starts once the disk is synced and `--settle` seconds have
passed, so that no run is timed while the file system still pays for the files the one before
deleted:

- fetch: `pbem mail fetch ROOT --maildir BOX` of `--fetch` order mails (each player of each
  game of the root attaching their ready order file, a few times), so that the root's state
  records every message and each game's its own;
- send: `pbem mail send GAME --smtp` of `--send` messages waiting in one game's outbox, to an
  SMTP server on loopback (aiosmtpd, in this process), so that the delivery ledger grows to
  that many records.

Then the mail state alone, in this process: `--fetch` message records (and `--send` delivery
records) written one by one, each made durable before the next, by a copy of the old code's
save (the whole file dumped as JSON and written atomically, synced) and by `MailState` (one
transaction a record), with the time of the first and of the last hundred.

Prints the wall time of each, old and new, and their ratio, with the machine. Nothing is
asserted; the two are measured in turn in the same run so that the machine's load bears on
both.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from machine import cpu  # noqa: E402 (benchmarks/, beside this script)

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))

from aiosmtpd.controller import Controller  # noqa: E402
from dovecot import free_port  # noqa: E402

from pbem.present import report  # noqa: E402
from pbem.records.disk import atomic_write  # noqa: E402
from pbem.records.mailstate import MailState  # noqa: E402
from pbem.records.opening import read_game  # noqa: E402

PLAYERS = ["ann", "ben", "cy", "dee"]
_games: dict[Path, Any] = {}
NOW = "2027-03-02T12:00:00+00:00"


def old_pbem(commit: str, into: Path) -> Path:
    """The `pbem` package of `commit`, unpacked into `into` (for PYTHONPATH)."""
    data = subprocess.run(
        ["git", "-C", str(HERE), "archive", "--format=tar", commit, "pbem", "templates"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


_MAKE = """
import sys
from pathlib import Path
from pbem.core.state import Options
from pbem.game import processor
for d in map(Path, sys.argv[2:]):
    players = [(p, f"{p}@{d.name}.example") for p in sys.argv[1].split(",")]
    seed = int(d.name.rsplit("-", 1)[1]).to_bytes(32, "big")
    processor.new_game(d, players, Options(), seed=seed, name=d.name)
"""


def make_games(games: list[Path], pythonpath: Path) -> None:
    """The games, made by the pbem at `pythonpath` (the old one: its game file format is one
    that both read; today's pbem reads every older format)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    halves = [games[: len(games) // 2], games[len(games) // 2 :]]
    makers = [
        subprocess.Popen(
            [sys.executable, "-c", _MAKE, ",".join(PLAYERS), *map(str, half)],
            env=env,
            cwd=pythonpath.parent,
        )
        for half in halves
        if half
    ]
    if any(maker.wait() != 0 for maker in makers):
        raise SystemExit("the old pbem could not make the games")


def order_mail(game: Path, player: str, n: int) -> bytes:
    state = _games.get(game) or _games.setdefault(game, read_game(game))
    reg = state.registration(player)
    assert reg is not None
    msg = EmailMessage()
    msg["From"] = f"{player}@{game.name}.example"
    msg["To"] = "pbem@example.org"
    msg["Subject"] = f"[{game.name}] my orders"
    msg["Date"] = format_datetime(processor_time(n))
    msg["Message-ID"] = f"<o{n}.{player}.{game.name}@example.net>"
    msg.set_content("my orders\n")
    skeleton = report.order_skeleton(state.state, player, reg.secret)
    msg.add_attachment(
        skeleton.encode(), maintype="application", subtype="toml", filename="orders.toml"
    )
    return msg.as_bytes()


def processor_time(n: int) -> object:
    from datetime import datetime, timedelta, timezone

    return datetime(2027, 3, 1, 9, 0, tzinfo=timezone.utc) + timedelta(seconds=n)


def maildir(box: Path, games: list[Path], count: int) -> None:
    for sub in ("new", "cur", "tmp"):
        (box / sub).mkdir(parents=True, exist_ok=True)
    for n in range(count):
        game = games[n % len(games)]
        player = PLAYERS[(n // len(games)) % len(PLAYERS)]
        (box / "new" / f"{1_800_000_000 + n}.M{n}P1.bench").write_bytes(order_mail(game, player, n))


def queue(game: Path, count: int) -> None:
    outbox = game / "outbox"
    outbox.mkdir(exist_ok=True)
    for n in range(count):
        msg = EmailMessage()
        msg["From"] = "pbem@example.org"
        msg["To"] = f"{PLAYERS[n % len(PLAYERS)]}@{game.name}.example"
        msg["Subject"] = f"[{game.name}] note {n}"
        msg["Message-ID"] = f"<note.{n}@example.org>"
        msg.set_content(f"note {n}\n")
        (outbox / f"m{n:05d}.eml").write_bytes(msg.as_bytes())


class Sink:
    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:  # noqa: N802
        return "250 OK"


def compiled(pythonpath: Path) -> Path:
    """`pythonpath`'s pbem with its bytecode written, as an installed pbem has it (pip compiles
    what it installs): a run then pays for reading its modules, not for compiling them."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(pythonpath / "pbem")],
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )
    return pythonpath


def pbem(args: list[str], pythonpath: Path) -> float:
    """The wall time of one pbem command, run by the pbem at `pythonpath`."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode `compiled` wrote is read
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pbem", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=pythonpath.parent,  # not this tree, which `-m` would put first on the path
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"pbem {' '.join(args[:2])} failed: {done.stdout[-500:]}{done.stderr}")
    print("   ", done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "")
    return elapsed


def old_save(path: Path, data: dict[str, Any]) -> None:
    """The old code's `records.save` (7c47fca), kept here only to be measured."""
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def record(n: int, what: str) -> tuple[str, dict[str, Any]]:
    if what == "seen":
        return f"<o{n}.ann.game-{n % 100:04d}@example.net> {n:064x}", {
            "game": f"game-{n % 100:04d}",
            "read": NOW,
        }
    return f"m{n:05d}.eml", {
        "delivered": [f"ann@game-{n % 100:04d}.example"],
        "refused": {},
        "message_id": f"<note.{n}@example.org>",
    }


def state_alone(folder: Path, count: int, what: str) -> dict[str, tuple[float, float, float]]:
    """Seconds for `count` records, and for the first and the last hundred of them."""
    out: dict[str, tuple[float, float, float]] = {}
    for name in ("old", "new"):
        times: list[float] = []
        directory = folder / f"{what}-{name}"
        (directory / "mail").mkdir(parents=True)
        data: dict[str, Any] = {"messages": {}}
        with MailState.open(directory) as state:
            for n in range(count):
                key, value = record(n, what)
                started = time.perf_counter()
                if name == "old":
                    data["messages"][key] = value
                    old_save(directory / "mail" / f"{what}.json", data)
                else:
                    state.put(what, "messages", key, value)
                    state.commit()
                times.append(time.perf_counter() - started)
        out[name] = (sum(times), sum(times[:100]), sum(times[-100:]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--fetch", type=int, default=2000)
    parser.add_argument("--send", type=int, default=3000)
    parser.add_argument("--old", default="7c47fca")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--settle", type=float, default=65.0, help="seconds to wait before each run"
    )
    args = parser.parse_args()
    print(f"machine: {cpu()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old = compiled(old_pbem(args.old, work / "old"))
        new = compiled(HERE)
        pristine = work / "pristine"
        games = [pristine / f"game-{i:04d}" for i in range(args.games)]
        alone = work / "alone"
        make_games([*games, alone / "game-9999"], old)
        box = work / "Maildir"
        maildir(box, games, args.fetch)
        queue(alone / "game-9999", args.send)
        port = free_port()
        controller = Controller(Sink(), hostname="127.0.0.1", port=port)
        controller.start()
        times: dict[str, dict[str, list[float]]] = {
            "fetch": {"old": [], "new": []},
            "send": {"old": [], "new": []},
        }
        # Every copy is made before the first is timed, and removed after the last, and each
        # run starts once the disk is synced and `--settle` seconds have passed: ext4 without a
        # journal skips, when it makes a file, every inode freed in the last minute (five while
        # its table is not yet written), so a run just after another that replaced thousands of
        # files (the old code's state, rewritten for every message) would pay for those.
        for n in range(args.rounds):
            for name in ("old", "new"):
                shutil.copytree(pristine, work / f"root-{name}-{n}")
                shutil.copytree(alone / "game-9999", work / f"send-{name}-{n}" / "game-9999")

        def settle() -> None:
            os.sync()
            time.sleep(args.settle)

        try:
            for n in range(args.rounds):  # old and new in turn, so that both meet the same load
                for name, path in (("old", old), ("new", new)):
                    root = work / f"root-{name}-{n}"
                    fetch = ["mail", "fetch", str(root), "--maildir", str(box), "--now", NOW]
                    settle()
                    times["fetch"][name].append(pbem(fetch, path))
                    kept = root / "mail" / ("seen.json" if name == "old" else "ledger.sqlite")
                    if not kept.exists():  # the pbem run was not the one meant
                        raise SystemExit(f"{name}: no {kept} after the fetch")
                    print(f"  fetch of {args.fetch}, {name}: {times['fetch'][name][-1]:.1f} s")
                    game = work / f"send-{name}-{n}" / "game-9999"
                    send = ["mail", "send", str(game), "--smtp", f"127.0.0.1:{port}", "--now", NOW]
                    settle()
                    times["send"][name].append(pbem(send, path))
                    print(f"  send of {args.send}, {name}: {times['send'][name][-1]:.1f} s")
                    left = list((game / "outbox").glob("*.eml"))
                    if left:
                        raise SystemExit(f"{name}: {len(left)} messages were not sent")
        finally:
            controller.stop()
        results = {
            what: {name: statistics.median(runs) for name, runs in by.items()}
            for what, by in times.items()
        }
        alone_figures = {
            "seen": state_alone(work / "alone-state", args.fetch, "seen"),
            "sent": state_alone(work / "alone-state", args.send, "sent"),
        }
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for what, count in (("fetch", args.fetch), ("send", args.send)):
        old_s, new_s = results[what]["old"], results[what]["new"]
        each = ", ".join(
            f"{o:.1f}/{w:.1f}" for o, w in zip(times[what]["old"], times[what]["new"], strict=True)
        )
        print(
            f"{what} {count} messages (median of {args.rounds}): before {old_s:.1f} s, now "
            f"{new_s:.1f} s: {old_s / new_s:.1f}x faster (aim: at least 5x); each round "
            f"before/now: {each}"
        )
    for what, count in (("seen", args.fetch), ("sent", args.send)):
        old_f, new_f = alone_figures[what]["old"], alone_figures[what]["new"]
        print(
            f"the state alone, {count} {what} records: JSON {old_f[0]:.1f} s (first 100 "
            f"{old_f[1] * 10:.1f} ms each, last 100 {old_f[2] * 10:.1f} ms each), SQLite "
            f"{new_f[0]:.1f} s (first 100 {new_f[1] * 10:.1f} ms, last 100 {new_f[2] * 10:.1f} "
            f"ms): {old_f[0] / new_f[0]:.1f}x faster"
        )


if __name__ == "__main__":
    main()
