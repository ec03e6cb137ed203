"""Fixtures shared by the tests of the turn processor and the command line."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from pbem.core.state import GameState, Options, state_digest
from pbem.game import processor
from pbem.present import report
from pbem.records.disk import LOCK_FILE, atomic_write
from pbem.records.history import history_path
from pbem.records.opening import read_game
from pbem.records.store import _load_toml, write_game

SEED = bytes(range(32))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Make the run's temporary folder before the first test: pytest removes what an earlier
    run left there (a --basetemp given again, or its older numbered folders), which on a busy
    disk can take longer than a test's time limit, and must not count against the first test
    that asks for a temporary folder."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is not None:
        factory.getbasetemp()


def new_game(directory: Path, players: str = "alice,bob,carol", **options: object) -> Path:
    processor.new_game(
        directory,
        processor.parse_player_list(players.split(",")),
        Options(**options),  # type: ignore[arg-type]
        seed=SEED,
        name="test-game",
    )
    return directory


def games_of_a_root(root: Path, *names: str) -> list[Path]:
    """Games of two players named `names` in `root`, each with its order files written."""
    games = [root / name for name in names]
    for directory in games:
        processor.new_game(
            directory, processor.parse_player_list(["a", "b"]), Options(), name=directory.name
        )
        write_skeletons(directory)
    return games


def skeleton(directory: Path, player: str) -> str:
    """The ready order file a player's latest report holds (valid as it is)."""
    game = read_game(directory)
    reg = game.registration(player)
    assert reg is not None
    return report.order_skeleton(game.state, player, reg.secret)


def attacking(text: str) -> str:
    """A skeleton with its commented attack example turned into an order."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("# [[attack]]"):
            inside = True
        elif not line.startswith("# "):
            inside = False
        out.append(line[2:] if inside else line)
    return "\n".join(out) + "\n"


def write_skeletons(directory: Path) -> list[Path]:
    """Ready (valid) order files in orders/ for every awaited player, attacking in play."""
    game = read_game(directory)
    paths = []
    for player in game.state.awaiting():
        path = directory / "orders" / f"{player}.toml"
        path.write_text(attacking(skeleton(directory, player)))
        paths.append(path)
    return paths


def write_bot_orders(directory: Path, rng: Any) -> dict[str, str]:
    """The test bots' orders (tests/bots.py) for every player the pending turn awaits, signed
    with each seat's secret and written into orders/; their texts, by player."""
    from bots import orders_for

    game = read_game(directory)
    written = {}
    for name in game.state.awaiting():
        reg = game.registration(name)
        assert reg is not None
        text = replace(orders_for(game.state, name, rng), secret=reg.secret).to_toml()
        (directory / "orders" / f"{name}.toml").write_text(text, "utf-8")
        written[name] = text
    return written


def force_state(directory: Path, state: GameState) -> None:
    """Put a game in `state` as if its last resolution had led there: the game file and the
    digest its last history file records (so the game file still matches the history)."""
    game = read_game(directory)
    write_game(replace(game, state=state))
    path = history_path(directory, game.state.resolution - 1)
    data = _load_toml(path)
    data["state"] = state_digest(state)
    atomic_write(path, tomli_w.dumps(data, multiline_strings=True))


@pytest.fixture
def game_dir(tmp_path: Path) -> Path:
    return new_game(tmp_path / "game")


@pytest.fixture
def playing_dir(game_dir: Path) -> Path:
    """A game past its setup turn: the first player's turn 1 is pending."""
    write_skeletons(game_dir)
    processor.resolve_game(game_dir)
    return game_dir


def stopped_after_the_history(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resolve the pending turn in a run stopped after writing its history (the game file, the
    reports and the used orders not yet): an interrupted resolution."""

    def stop(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(processor, "archive_orders", stop)
        with pytest.raises(KeyboardInterrupt):
            processor.resolve_game(directory)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file of a game directory (but the lock), for byte-for-byte comparisons."""
    return {
        str(p.relative_to(directory)): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


@pytest.fixture(autouse=True)
def never_the_ready_file_over_written_orders(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """In every test: no message is accepted with the ready order file pbem mailed when the
    player wrote other orders in it (the worst misreading: the answer says "accepted" and the
    turn plays the template). Checked at each acceptance, failed at the end of the test (an
    error inside the fetch would only reject that message)."""
    from pbem.mail import fetch

    real = fetch._Fetcher.accept
    wrong: list[str] = []

    def checked(self: Any, letter: Any, me: Any, submission: Any, choice: Any) -> Any:
        written = [f for f in letter.reading.found if self.ready(f) is None]
        if self.ready(choice.found) is not None and written:
            wrong.append(f"{letter.message_id}: {choice.found.name or choice.found.where.value}")
        return real(self, letter, me, submission, choice)

    monkeypatch.setattr(fetch._Fetcher, "accept", checked)
    yield
    assert not wrong, f"accepted the ready order file over orders the player wrote: {wrong}"


@contextlib.contextmanager
def held_lock(folder: Path) -> Iterator[None]:
    """`folder`'s lock held by another process (another run of pbem, as cron may start)."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(120)\n",
            str(folder / LOCK_FILE),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.kill()
        holder.wait()


def refused_with_option(directory: Path, key: str, value: str | None, said: str) -> None:
    """The game's file with its option `key` left out (None) or set to `value` is refused by
    pbem with a sentence matching `said`."""
    from pbem.errors import GameFileError
    from pbem.records import opening, store

    data = store._load_toml(directory / "game.toml")
    if value is None:
        del data["options"][key]
    else:
        data["options"][key] = value
    (directory / "game.toml").write_text(tomli_w.dumps(data))
    with pytest.raises(GameFileError, match=said):
        opening.read_game(directory)


def flat(text: str) -> str:
    """`text` with every run of spaces and line ends one space: what a sentence says, however
    the mail wrapped it."""
    return " ".join(text.split())
