"""The history of a game and the folders of its resolutions: a history file per resolution,
the order files waiting and used, the reports and the moderator's changes."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pbem.core.state import SetupMode
from pbem.errors import GameFileError
from pbem.files import ORDER_FILE_LIMIT, FileProblem, disk_error, read_text, refuse_links_in
from pbem.records.disk import GAME_FILE, atomic_write
from pbem.records.store import Game, _load_toml

if TYPE_CHECKING:
    from pbem.core.events import Event
    from pbem.languages.numbering import Played

# The events and the turns' numbering are imported where they are used: checking orders reads
# the head of a game's history without them.

HISTORY = "history"
ORDERS = "orders"
REPORTS = "reports"


_CHANGE_FILE = re.compile(r"^(\d{4})-(\d+)\.toml$")


def change_files(folder: Path, resolution: int | None = None) -> list[Path]:
    """The files of a folder of the moderator's changes, `NNNN-k.toml` (change k while
    resolution NNNN was pending), in the order made; only those of `resolution` if given."""
    if not folder.is_dir():
        return []
    found: list[tuple[int, int, Path]] = []
    for path in folder.iterdir():
        match = _CHANGE_FILE.match(path.name)
        if match and resolution in (None, int(match.group(1))):
            found.append((int(match.group(1)), int(match.group(2)), path))
    return [path for _, _, path in sorted(found)]


def history_path(directory: Path, resolution: int) -> Path:
    return directory / HISTORY / f"{resolution:04d}.toml"


@dataclass(frozen=True)
class OrderRecord:
    """An order file as it was received."""

    player: str
    file: str
    text: str
    autopilot: bool = False
    away: str | None = None
    """For the autopilot's orders of a player away on a vacation (in a game whose autopilot
    plays for them): the vacation's last day. Their turn is not missed."""


@dataclass(frozen=True)
class HistoryRecord:
    """One resolution as the history keeps it."""

    resolution: int
    turn: int
    players: tuple[str, ...]
    key: str
    orders: tuple[OrderRecord, ...]
    events: tuple[Event, ...]
    state_digest: str
    setup: Mapping[str, Any] | None = None
    time: str | None = None

    def rolls(self) -> list[dict[str, Any]]:
        """The battle rolls of this resolution, as the dice list of docs/views.md gives them."""
        from pbem.core.events import Rolled

        return [
            {
                "from": e.source,
                "to": e.target,
                "attacker": list(e.attacker),
                "defender": list(e.defender),
                "by": e.player,
                "against": e.defender_name,
            }
            for e in self.events
            if isinstance(e, Rolled)
        ]

    def first_player_rolls(self) -> list[dict[str, Any]]:
        """The setup's dice for the first player, in the order rolled."""
        from pbem.core.events import RolledForFirst

        return [
            {"player": e.player, "die": e.die} for e in self.events if isinstance(e, RolledForFirst)
        ]


def write_history(directory: Path, record: HistoryRecord) -> None:
    """Write a resolution's history file; it is never rewritten once there."""
    atomic_write(history_path(directory, record.resolution), history_text(record))


def history_text(record: HistoryRecord) -> str:
    """A history file's content (docs/history.md)."""
    doc: dict[str, Any] = {
        "resolution": record.resolution,
        "turn": record.turn,
        "players": list(record.players),
        "key": record.key,
        "state": record.state_digest,
    }
    if record.time is not None:
        doc["time"] = record.time
    if record.setup is not None:
        doc["setup"] = dict(record.setup)
    doc["orders"] = [
        {
            "player": o.player,
            "file": o.file,
            "text": o.text,
            **({"autopilot": True} if o.autopilot else {}),
            **({"away": o.away} if o.away is not None else {}),
        }
        for o in record.orders
    ]
    doc["events"] = [e.to_dict() for e in record.events]
    import tomli_w

    return tomli_w.dumps(doc, multiline_strings=True)


def read_history(directory: Path, resolution: int, *, events: bool = True) -> HistoryRecord:
    return read_history_file(history_path(directory, resolution), events=events)


def read_history_file(path: Path, *, events: bool = True) -> HistoryRecord:
    """A history file wherever it is (history/NNNN.toml, or an undone one).

    With `events` false the record's events are left out (an empty tuple), for what needs only
    its key, state digest and setup: the check of game.toml against the history that every
    command reading a game makes, which then decodes (and imports) no event."""
    data = _load_toml(path)
    try:
        decoded: tuple[Event, ...] = ()
        if events:
            from pbem.core.events import event_from_dict

            decoded = tuple(event_from_dict(e) for e in data.get("events", []))
        return HistoryRecord(
            resolution=int(data["resolution"]),
            turn=int(data["turn"]),
            players=tuple(data["players"]),
            key=str(data["key"]),
            orders=tuple(
                OrderRecord(
                    str(o["player"]),
                    str(o["file"]),
                    str(o["text"]),
                    bool(o.get("autopilot")),
                    str(o["away"]) if "away" in o else None,
                )
                for o in data.get("orders", [])
            ),
            events=decoded,
            state_digest=str(data["state"]),
            setup=data.get("setup"),
            time=str(data["time"]) if "time" in data else None,
        )
    except (KeyError, ValueError, TypeError) as err:
        raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None


def plain_file_name(name: str) -> bool:
    """Whether an order file's name, as a history records it, names a file of the game's own
    orders/ folder and nothing else (no folder, no `..`): only then may it be moved or read."""
    return name not in ("", ".", "..") and Path(name).name == name and "\\" not in name


def history_count(directory: Path) -> int:
    """How many history files there are, counting 0000, 0001, ... without a gap.

    The folder is listed once (one system call, however long the game) rather than each file
    looked up in turn."""
    try:
        names = set(os.listdir(directory / HISTORY))
    except OSError:
        return 0
    count = 0
    while f"{count:04d}.toml" in names:  # history_path(directory, count).name
        count += 1
    return count


def resolution_interrupted(directory: Path, resolution: int) -> bool:
    """Whether the history of `resolution` is written while game.toml has not moved on yet: a
    resolve stopped half way, which the next `pbem resolve` completes."""
    return history_path(directory, resolution).exists()


def recorded_order_files(directory: Path, orders: Sequence[OrderRecord]) -> list[Path]:
    """The files in orders/ that still hold exactly the text a resolution recorded for them
    (a file changed since is not the one used, and stays where it is)."""
    out: list[Path] = []
    for record in orders:
        path = directory / ORDERS / record.file
        try:
            if read_text(path, ORDER_FILE_LIMIT) == record.text:
                out.append(path)
        except (FileProblem, UnicodeDecodeError):
            continue
    return out


def report_dir(directory: Path, resolution: int) -> Path:
    """The folder of a resolution's reports: `reports/0014-turn-13/` as pbem names it from game
    file format 5 on, or `reports/0014/` as a game of an older format named it before
    (docs/game-directory.md). When neither is there, the older name (which does not exist).

    A folder that is a symbolic link or holds one is refused (GameFileError, see
    pbem.files.refuse_links_in): the check every command makes looks inside the newest
    resolutions' folders alone, so whatever reads, removes or mails a report of an older one
    (mail send, resend, undo) finds its folder here, checked."""
    folder = directory / REPORTS
    old = folder / f"{resolution:04d}"
    found = [old] if old.is_dir() else sorted(folder.glob(f"{resolution:04d}-*"))
    refuse_links_in(directory, found[0] if found else old)
    return found[0] if found else old


def drafted(game: Game) -> bool:
    """Whether the game was set up by a draft (its resolution 1 is the draft)."""
    return game.state.options.setup is SetupMode.DRAFT


def played_in(game: Game, resolution: int, turn: int) -> Played:
    """What `resolution` of `game` played, `turn` as its history records it."""
    from pbem.languages.numbering import Played  # (and the events) when a resolution is told

    return Played.of(resolution, turn, draft=resolution == 1 and drafted(game))


def new_report_dir(directory: Path, played: Played) -> Path:
    """Where the reports of a resolution being made go: `reports/0014-turn-13/` (refused, as
    by `report_dir`, when it is there already as a link or holding one)."""
    folder = directory / REPORTS / played.folder()
    refuse_links_in(directory, folder)
    return folder


def order_files(directory: Path) -> list[Path]:
    """The order files waiting in the game's orders/ folder, by name.

    Every `*.toml` entry is listed, even one that is not a regular file (a FIFO, a device, a
    folder), so that it is refused by name rather than passed over in silence."""
    folder = directory / ORDERS
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.toml"))


def archive_orders(directory: Path, resolution: int, files: Sequence[Path]) -> None:
    """Move used order files out of orders/ into orders/done/NNNN/ (their text is in history)."""
    done = done_dir(directory, resolution)
    for path in files:
        if path.parent.resolve() == (directory / ORDERS).resolve() and path.exists():
            try:
                done.mkdir(parents=True, exist_ok=True)
                os.replace(path, done / path.name)
            except OSError as err:
                raise disk_error(err, done / path.name, "move an order file to") from None


def make_orders_folder(directory: Path) -> None:
    """The orders/ folder where order files wait (mail fetch puts them there)."""
    try:
        (directory / ORDERS).mkdir(exist_ok=True)
    except OSError as err:
        raise disk_error(err, directory / ORDERS, "create") from None


def game_files(directory: Path) -> list[str]:
    """What in `directory` belongs to a game (so that a new game may not go there): the game
    file, a history or reports folder with anything in it, an orders folder holding files."""
    found = [GAME_FILE] if (directory / GAME_FILE).exists() else []
    for folder in (HISTORY, REPORTS):
        path = directory / folder
        if path.is_dir() and any(path.iterdir()):
            found.append(f"{folder}/")
        elif path.exists() and not path.is_dir():
            found.append(folder)
    orders = directory / ORDERS
    if orders.is_dir() and any(p.is_file() for p in orders.rglob("*")):
        found.append(f"{ORDERS}/ with files")
    return found


def done_dir(directory: Path, resolution: int) -> Path:
    """Where the order files a resolution used are kept: orders/done/NNNN/; refused, as by
    `report_dir`, when it is a symbolic link or holds one."""
    folder = directory / ORDERS / "done" / f"{resolution:04d}"
    refuse_links_in(directory, folder)
    return folder
