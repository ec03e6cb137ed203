"""Table talk ("press"): messages between players, relayed by the game and kept in its record.

Every message relayed is one file, `press/NNNN-<digest>.toml` (NNNN its number in the game, the
digest that of the mail it came in, so that a fetch run again finds it): when it was sent, while
which resolution was pending, by which seat, to which seats (or to everyone), whether its
sender was named, and its text. A file is written once and never changed. A player sees the
press they sent or were sent (`seen_by`); the whole record is the moderator's, and the club's
once the game is over.

The rules of a game (`pbem.records.settings.PressRules`) come from its mail settings: which press it
allows, whether senders are named, the size of a message and how many a player may send in a
turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbem.errors import GameFileError
from pbem.records.store import _load_toml

PRESS = "press"
EVERYONE = "all"
"""The recipients of public press, as recorded."""
_FILE = re.compile(r"^(\d{4,})-([0-9a-f]{16})\.toml$")


@dataclass(frozen=True)
class Press:
    """One message of table talk, as recorded."""

    number: int
    digest: str
    """What it came in: the hash of the mail's Message-ID and contents (16 hex digits)."""
    resolution: int
    """The resolution pending when it was sent: the report of that resolution lists it."""
    turn: int
    time: str
    sender: str
    """The seat that sent it."""
    to: tuple[str, ...]
    """The seats it was sent to, or (`EVERYONE`,)."""
    anonymous: bool
    text: str
    holder: str = ""
    """Who played the seat that sent it, when a substitute did ("": its first player)."""
    written: tuple[str, ...] = ()
    """Whom it is for as its sender wrote it, when that is not `to`: a seat written to as
    `#N`, the unnamed sender of message N, stays `#N` to everyone but itself and the moderator
    (each name and `#N` once, in the order written)."""

    @property
    def public(self) -> bool:
        return self.to == (EVERYONE,)

    @property
    def file_name(self) -> str:
        return f"{self.number:04d}-{self.digest}.toml"

    def seen_by(self, seat: str) -> bool:
        """Whether the player of `seat` may read it: they sent it or were sent it."""
        return self.public or seat == self.sender or seat in self.to

    def readers_for(self, seat: str | None) -> tuple[str, ...]:
        """The seats it went to as `seat` may be told (None: the moderator, every one named;
        the others: as its sender wrote them)."""
        return self.to if seat is None or not self.written else self.written

    def sender_for(self, seat: str | None) -> str | None:
        """The sender as `seat` is told (None: the moderator, who knows): None when unnamed."""
        if self.anonymous and seat is not None and seat != self.sender:
            return None
        return self.sender

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "resolution": self.resolution,
            "turn": self.turn,
            "time": self.time,
            "from": self.sender,
            "to": list(self.to),
            "anonymous": self.anonymous,
            "text": self.text,
        }
        if self.holder:
            out["holder"] = self.holder
        if self.written:
            out["written"] = list(self.written)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], digest: str) -> Press:
        to = data["to"]
        if not isinstance(to, list) or not all(isinstance(t, str) for t in to) or not to:
            raise ValueError("'to' must be a list of seats")
        written = data.get("written", [])
        if not isinstance(written, list) or not all(isinstance(w, str) for w in written):
            raise ValueError("'written' must be a list of names and #N")
        return cls(
            number=int(data["number"]),
            digest=digest,
            resolution=int(data["resolution"]),
            turn=int(data["turn"]),
            time=str(data["time"]),
            sender=str(data["from"]),
            to=tuple(to),
            anonymous=bool(data["anonymous"]),
            text=str(data["text"]),
            holder=str(data.get("holder", "")),
            written=tuple(written),
        )


def press_folder(directory: Path) -> Path:
    return directory / PRESS


def press_records(directory: Path) -> list[Press]:
    """Every message of table talk the game relayed, in order; a damaged file is named."""
    folder = press_folder(directory)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.iterdir()):
        match = _FILE.match(path.name)
        if match is None:
            continue  # a temporary file of a write under way, or the moderator's own notes
        try:
            press = Press.from_dict(_load_toml(path), match.group(2))
        except (KeyError, ValueError, TypeError) as err:
            raise GameFileError(f"{path} is damaged or incomplete ({err!r})") from None
        if press.number != int(match.group(1)):
            raise GameFileError(f"{path} holds message {press.number}: its name says otherwise")
        out.append(press)
    return out


def of_resolution(records: Sequence[Press], resolution: int) -> list[Press]:
    """The press sent while `resolution` was pending (what its reports list)."""
    return [p for p in records if p.resolution == resolution]


def press_text(press: Press) -> str:
    """A message's record as the file holds it."""
    import tomli_w

    return tomli_w.dumps(press.to_dict(), multiline_strings=True)
