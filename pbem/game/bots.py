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

import contextlib
import hashlib
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pbem.core.autopilot import autopilot_orders
from pbem.errors import PbemError
from pbem.files import ORDER_FILE_LIMIT
from pbem.records.disk import atomic_write, locked
from pbem.records.history import ORDERS, history_count, report_dir
from pbem.records.opening import read_game
from pbem.records.store import Game, Registration, write_game
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
    from pbem.records.undone import check_not_interrupted

    if bot is not None:
        bot = bot.strip()
        if not bot:
            raise PbemError('name the bot: --bot reference, or --bot "COMMAND ARGS"')
        if not bot.isprintable() or len(bot) > 1000:
            raise PbemError("the bot's command must be one line of printable text")
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
    """Every bot seat the pending turn awaits writes its order file, unless it has one already
    that is valid and was written from the seat's present view (call it under the game's
    lock)."""
    from pbem.core.state import Phase
    from pbem.game.readiness import readiness

    if game.state.phase is Phase.OVER:
        return []
    seats = [
        reg
        for name in game.state.awaiting()
        if (reg := game.registration(name)) is not None
        and reg.bot
        and game.state.player(name).alive
    ]
    if not seats or history_count(game.path) != game.state.resolution:
        return []
    valid = {s.player: s for s in readiness(game).used}
    out = []
    for reg in seats:
        kept = valid.get(reg.name)
        if kept is not None and not _stale(game, reg, kept.text):
            continue
        out.append(_ask(game, reg))
    return out


def catch_up(directory: Path) -> list[Answer]:
    """The bots a stopped run left unanswered answer now (`pbem run`, before it tells a game
    waiting for them)."""
    with locked(directory):
        return answer(read_game(directory))


_HEAD = re.compile(r"^# Written by the bot .* \(SHA-256 ([0-9a-f]{64})\)\.\n")


def _view(game: Game, reg: Registration) -> Path:
    return report_dir(game.path, game.state.resolution - 1) / f"{reg.name}.view.json"


def _stale(game: Game, reg: Registration, text: str) -> bool:
    """Whether an order file a bot wrote was written from another view than the seat's
    present one (a turn undone and played again differently)."""
    found = _HEAD.match(text)
    if found is None:
        return False  # a person's, or the moderator's: it stands
    try:
        return hashlib.sha256(_view(game, reg).read_bytes()).hexdigest() != found.group(1)
    except OSError:
        return True


def _ask(game: Game, reg: Registration) -> Answer:
    from pbem.game.check import check_submission

    view = _view(game, reg)
    path = game.path / ORDERS / f"{reg.name}.toml"
    try:
        given = view.read_bytes()
    except OSError as err:
        return _fallback(game, reg, path, f"its view file cannot be read: {err.strerror or err}")
    digest = hashlib.sha256(given).hexdigest()
    text, failed = _run(reg, view, given)
    if failed is None:
        assert text is not None
        text = text.removeprefix("\ufeff")
        head = (
            f"# Written by the bot '{printable(reg.bot or '')}' for turn {game.state.turn}, "
            f"from {view.parent.name}/{view.name} (SHA-256 {digest}).\n"
        )
        checked = check_submission(game, path, head + text)
        if len((head + text).encode()) > ORDER_FILE_LIMIT:
            failed = f"it wrote more than an order file may hold ({ORDER_FILE_LIMIT // 1024} KiB)"
        elif checked.accepted and checked.player == reg.name:
            atomic_write(path, head + text)
            return Answer(reg.name, path)
        elif checked.accepted:
            failed = f"its orders are for {checked.player}, not for the seat {reg.name}"
        else:
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
    try:
        command = shlex.split(reg.bot)
    except ValueError as err:
        return None, f"its command cannot be read: {err}"
    with tempfile.TemporaryDirectory(prefix="pbem-bot-") as folder:
        # an empty folder holding the seat's view only: no other player's file in reach
        copy = Path(folder) / "view.json"
        copy.write_bytes(given)
        environment = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": folder,
            "LANG": "C.UTF-8",
            "PBEM_VIEW": str(copy),
            "PBEM_SECRET": reg.secret,
        }
        return _talk(command, given, environment, folder)


def _talk(
    command: list[str], given: bytes, environment: dict[str, str], folder: str
) -> tuple[str | None, str | None]:
    """Run a bot's program in its own session: `given` on its standard input; at most
    ORDER_FILE_LIMIT bytes of its standard output kept, and the end of its standard error;
    the whole session killed once it has answered or after BOT_SECONDS."""
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            cwd=folder,
            start_new_session=True,
        )
    except (OSError, ValueError) as err:
        return None, f"it cannot be started: {getattr(err, 'strerror', None) or err}"
    out, err_tail = bytearray(), bytearray()

    def read_out() -> None:
        assert process.stdout is not None
        while chunk := os.read(process.stdout.fileno(), 65536):
            if len(out) <= ORDER_FILE_LIMIT:
                out.extend(chunk[: ORDER_FILE_LIMIT + 1 - len(out)])

    def read_err() -> None:
        assert process.stderr is not None
        while chunk := os.read(process.stderr.fileno(), 65536):
            err_tail.extend(chunk)
            del err_tail[:-4096]

    readers = [threading.Thread(target=read_out), threading.Thread(target=read_err)]
    for reader in readers:
        reader.start()
    late = False
    try:
        assert process.stdin is not None
        with contextlib.suppress(OSError):  # a bot that reads nothing
            process.stdin.write(given)
            process.stdin.close()
        process.wait(timeout=BOT_SECONDS)
    except subprocess.TimeoutExpired:
        late = True
    finally:
        with contextlib.suppress(OSError):  # its children too: none outlives its answer
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for reader in readers:
            reader.join()
    if late:
        return None, f"it gave no answer within {BOT_SECONDS:g} seconds"
    if process.returncode != 0:
        said = err_tail.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        told = printable(said[0][:200])
        return None, f"it stopped with exit code {process.returncode}" + (
            f": {told}" if told else ""
        )
    if len(out) > ORDER_FILE_LIMIT:
        return None, f"it wrote more than {ORDER_FILE_LIMIT // 1024} KiB"
    try:
        return out.decode("utf-8"), None
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
