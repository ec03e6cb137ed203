"""Seats played by a program: `pbem seat DIR PLAYER --bot reference` (the bot pbem ships,
pbem.core.reference_bot) or `--bot "COMMAND ARGS"` (a club's own), and `--person` to give the
seat back to a person.

A bot answers as soon as the seat is awaited: when `pbem seat` gives it the seat, and right
after each resolution that makes it the seat's turn (and, should a run have stopped before it
answered, at the next `pbem resolve`). It is given the seat's view file from its latest report,
the same file its player would check their orders with (nothing else: no other player's hand,
secret or mission), on standard input, with PBEM_VIEW its path and PBEM_SECRET the seat's
secret in its environment, and has BOT_SECONDS to write an order file on standard output. pbem
checks that file as it checks a person's and puts it in orders/, headed by a comment naming the
bot and the SHA-256 of the view it was given; from there it is an order file like any other:
the history keeps its text, so the audit replays the turn without running the bot. A bot that
fails (it cannot be started, exits with an error, takes too long, writes too much or writes
orders the check refuses) gets the autopilot's orders instead, headed by a comment saying why;
the moderator is told.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.core.autopilot import autopilot_orders
from pbem.errors import PbemError
from pbem.game.disk import atomic_write, locked
from pbem.game.history import ORDERS, history_count, order_files, report_dir
from pbem.game.safety import ORDER_FILE_LIMIT
from pbem.game.store import Game, Registration, read_game, write_game
from pbem.terminal import printable, quoted

if TYPE_CHECKING:
    from pbem.core.orders import Orders
    from pbem.core.state import GameState

REFERENCE = "reference"
"""The name of the bot pbem ships."""
ENTRY_POINTS = "pbem.bots"
"""The group of entry points by which an installed package names its bots: each a function
(state, player, secret) -> Orders, given the state read back from the seat's view file."""
BOT_SECONDS = 10.0
"""How long a bot's program may take to answer."""


@dataclass(frozen=True)
class Answer:
    """What a bot did for its seat: the order file written, and why the autopilot's were
    written instead (None: the bot's own were)."""

    seat: str
    file: Path
    failed: str | None = None

    def describe(self) -> str:
        if self.failed is None:
            return f"{self.seat}'s bot wrote {ORDERS}/{self.file.name}"
        return (
            f"{self.seat}'s bot failed ({self.failed}): the autopilot's orders are in "
            f"{ORDERS}/{self.file.name}"
        )


def set_bot(directory: Path, seat: str, bot: str | None) -> tuple[Game, list[Answer]]:
    """Give `seat` to the bot `bot` ("reference", or a command line), or back to a person
    (None); a bot answers at once if the seat is awaited."""
    from pbem.game.undo import check_not_interrupted

    if bot is not None:
        bot = bot.strip()
        if not bot:
            raise PbemError('name the bot: --bot reference, or --bot "COMMAND ARGS"')
        if installed(bot) is None:
            try:
                shlex.split(bot)
            except ValueError as err:
                raise PbemError(
                    f"the bot's command '{quoted(bot)}' cannot be read: {err}"
                ) from None
    with locked(directory):
        check_not_interrupted(directory)
        game = read_game(directory)
        reg = game.registration(seat)
        if reg is None:
            names = ", ".join(r.name for r in game.registrations)
            raise PbemError(
                f"there is no seat '{quoted(seat)}' in this game: its seats are {names}"
            )
        if reg.bot == bot:
            who = f"the bot {bot}" if bot else "a person"
            raise PbemError(f"{seat}'s seat is played by {who} already: nothing to change")
        registrations = tuple(
            replace(r, bot=bot) if r.name == seat else r for r in game.registrations
        )
        game = replace(game, registrations=registrations)
        write_game(game)
        return game, answer(game)


def answer(game: Game) -> list[Answer]:
    """Every bot seat the pending turn awaits and that has no order file yet writes one (call
    it under the game's lock)."""
    from pbem.core.state import Phase

    if game.state.phase is Phase.OVER or history_count(game.path) != game.state.resolution:
        return []
    have = {p.stem for p in order_files(game.path)}
    out = []
    for name in game.state.awaiting():
        reg = game.registration(name)
        if reg is not None and reg.bot and name not in have and game.state.player(name).alive:
            out.append(_ask(game, reg))
    return out


def _ask(game: Game, reg: Registration) -> Answer:
    from pbem.game.check import check_submission

    view = report_dir(game.path, game.state.resolution - 1) / f"{reg.name}.view.json"
    path = game.path / ORDERS / f"{reg.name}.toml"
    try:
        given = view.read_bytes()
    except OSError as err:
        return _fallback(game, reg, path, f"its view file cannot be read: {err.strerror or err}")
    digest = hashlib.sha256(given).hexdigest()
    text, failed = _run(reg, view, given)
    if failed is None:
        assert text is not None
        checked = check_submission(game, path, text)
        if checked.accepted:
            head = (
                f"# Written by the bot '{printable(reg.bot or '')}' for turn {game.state.turn}, "
                f"from {view.parent.name}/{view.name} (SHA-256 {digest}).\n"
            )
            atomic_write(path, head + text)
            return Answer(reg.name, path)
        failed = "its orders were refused: " + "; ".join(checked.messages())[:300]
    return _fallback(game, reg, path, failed)


def installed(name: str) -> Callable[[GameState, str, str], Orders] | None:
    """The bot an entry point of ENTRY_POINTS names `name` (the reference bot for REFERENCE,
    installed or not), or None."""
    if name == REFERENCE:
        from pbem.core.reference_bot import reference_orders

        return reference_orders
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group=ENTRY_POINTS) if e.name == name]
    if not found:
        return None
    loaded = found[0].load()
    return loaded if callable(loaded) else None


def _run(reg: Registration, view: Path, given: bytes) -> tuple[str | None, str | None]:
    """The bot's order file, or why there is none."""
    assert reg.bot is not None
    try:
        play = installed(reg.bot)
    except Exception as err:  # noqa: BLE001 (an installed bot that cannot be loaded)
        return None, f"it cannot be loaded: {type(err).__name__}: {err}"[:300]
    if play is not None:
        from pbem.present.view import read_view

        try:
            state = read_view(view)  # the view, as a person's own check reads it
        except PbemError as err:
            return None, f"its view file cannot be read: {err}"
        try:
            orders = play(state, reg.name, reg.secret)
            return orders.to_toml(), None
        except Exception as err:  # noqa: BLE001 (a bot's failure is told, never a stop)
            return None, f"it failed: {type(err).__name__}: {err}"[:300]
    environment = {**os.environ, "PBEM_VIEW": str(view), "PBEM_SECRET": reg.secret}
    try:
        done = subprocess.run(
            shlex.split(reg.bot),
            input=given,
            capture_output=True,
            timeout=BOT_SECONDS,
            env=environment,
            cwd=view.parent,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"it gave no answer within {BOT_SECONDS:g} seconds"
    except OSError as err:
        return None, f"it cannot be started: {err.strerror or err}"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        told = printable(said[0][:200])
        return None, f"it stopped with exit code {done.returncode}" + (f": {told}" if told else "")
    if len(done.stdout) > ORDER_FILE_LIMIT:
        return None, f"it wrote more than {ORDER_FILE_LIMIT // 1024} KiB"
    try:
        return done.stdout.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "what it wrote is not UTF-8 text"


def _fallback(game: Game, reg: Registration, path: Path, why: str) -> Answer:
    text = autopilot_orders(game.state, reg.name, reg.secret).to_toml()
    head = (
        f"# The bot '{printable(reg.bot or '')}' failed for turn {game.state.turn} "
        f"({printable(why)}): the autopilot's orders instead.\n"
    )
    atomic_write(path, head + text)
    return Answer(reg.name, path, why)
