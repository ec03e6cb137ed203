"""Orders: what one player orders for one turn, typed (with the line each part came from), and
written back as the TOML a player would write (`to_toml`).

Reading an order file into these is `order_parsing`'s; whether the orders are legal in the
current state is `validation.validate`'s question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

REST: Literal["rest"] = "rest"
ALL: Literal["all"] = "all"
MIN: Literal["min"] = "min"
BEST: Literal["best"] = "best"

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

PlaceAmount = int | Literal["rest"]
MoveRule = int | Literal["all", "min"]
FortifyAmount = int | Literal["all"]


_ESCAPED = re.compile(r'[\\"\x00-\x08\x0a-\x1f\x7f]')
"""The characters a TOML basic string cannot hold as they are."""


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        if _ESCAPED.search(value) is None:
            return '"' + value + '"'  # nothing to escape (nearly always)
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        # TOML basic strings may not hold control characters other than tab: escape them.
        escaped = _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped)
        return '"' + escaped + '"'
    return str(value)


@dataclass(frozen=True)
class Place:
    """Put armies on one of your territories; "rest" takes what the other placements leave."""

    territory: str
    armies: PlaceAmount
    line: int | None = field(default=None, compare=False)

    def to_toml(self) -> str:
        return (
            f"[[place]]\nterritory = {_toml_value(self.territory)}\n"
            f"armies = {_toml_value(self.armies)}\n"
        )

    def describe(self) -> str:
        return f"place {self.armies} on {self.territory}"


@dataclass(frozen=True)
class Attack:
    """Attack `target` from `source` until it falls or `source` is down to `stop_at` armies."""

    source: str
    target: str
    dice: int | None = None
    stop_at: int = 1
    move: MoveRule = ALL
    line: int | None = field(default=None, compare=False)

    def to_toml(self) -> str:
        out = f"[[attack]]\nfrom = {_toml_value(self.source)}\nto = {_toml_value(self.target)}\n"
        if self.dice is not None:
            out += f"dice = {self.dice}\n"
        if self.stop_at != 1:
            out += f"stop_at = {self.stop_at}\n"
        if self.move != ALL:
            out += f"move = {_toml_value(self.move)}\n"
        return out

    def describe(self) -> str:
        return f"attack {self.target} from {self.source}"


@dataclass(frozen=True)
class Fortify:
    """Move armies once, at the end of the turn, between two of your territories."""

    source: str
    target: str
    armies: FortifyAmount
    line: int | None = field(default=None, compare=False)

    def to_toml(self, array: bool = False) -> str:
        """As a `[fortify]` table, or one of an array of `[[fortify]]` tables (`array`)."""
        head = "[[fortify]]" if array else "[fortify]"
        return (
            f"{head}\nfrom = {_toml_value(self.source)}\nto = {_toml_value(self.target)}\n"
            f"armies = {_toml_value(self.armies)}\n"
        )

    def describe(self) -> str:
        return f"fortify {self.target} from {self.source} with {self.armies}"


CardSet = tuple[str, str, str]


@dataclass(frozen=True)
class Orders:
    """One player's order file for one turn; `draft` is the ranked list of territories of a
    draft turn (its last entry may be "rest": the fill-in rule picks from there on)."""

    game: str
    turn: int
    player: str
    secret: str
    trade: tuple[CardSet, ...] | Literal["best"] = ()
    place: tuple[Place, ...] = ()
    attack: tuple[Attack, ...] = ()
    fortify: Fortify | None = None
    more_fortify: tuple[Fortify, ...] = ()
    """The fortifications after the first, in a game that allows more than one a turn (`pbem
    new --fortifies N`): the file then holds `[[fortify]]` tables."""
    draft: tuple[str, ...] = ()
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    vacation: tuple[str, str] | None = None
    """The days the player says they are away, first and last (YYYY-MM-DD), or None: not
    orders of a turn, the moderator's to record (pbem.game.vacations)."""

    @property
    def plays(self) -> bool:
        """Whether the file orders anything for the turn (a file may hold a vacation only)."""
        return bool(self.trade or self.place or self.attack or self.fortify or self.draft)

    @property
    def fortifications(self) -> tuple[Fortify, ...]:
        """Every fortification, in order."""
        return ((self.fortify,) if self.fortify else ()) + self.more_fortify

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)

    def canonical(self) -> str:
        """The form whose digest the dice follow (docs/dice.md): the orders as TOML, without a
        vacation (which orders nothing for the turn)."""
        return (replace(self, vacation=None) if self.vacation else self).to_toml()

    def to_toml(self) -> str:
        """The orders as the TOML a player would write; parsing it gives equal orders."""
        out = (
            f"game = {_toml_value(self.game)}\nturn = {self.turn}\n"
            f"player = {_toml_value(self.player)}\nsecret = {_toml_value(self.secret)}\n"
        )
        if self.vacation is not None:  # a top-level key: before any table
            out += f'vacation = {{ from = "{self.vacation[0]}", to = "{self.vacation[1]}" }}\n'
        if self.draft:
            out += "draft = [\n" + "".join(f"  {_toml_value(t)},\n" for t in self.draft) + "]\n"
        if self.trade == BEST:
            out += 'trade = "best"\n'
        elif self.trade:
            sets = ", ".join("[" + ", ".join(_toml_value(c) for c in s) + "]" for s in self.trade)
            out += f"trade = [{sets}]\n"
        parts: tuple[Place | Attack, ...] = (*self.place, *self.attack)
        for part in parts:
            out += "\n" + part.to_toml()
        for fortify in self.fortifications:  # `[fortify]` when there is one, as ever
            out += "\n" + fortify.to_toml(array=bool(self.more_fortify))
        return out
