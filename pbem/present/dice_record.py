"""What a dice check is given, read into a `DiceRecord`: the keys and rolls of the command line,
a report's view file (its "dice" section), or a report's text (its dice check, as any of the
languages writes it); every value checked, and anything that cannot be read a `VerifyError`.

Checking the record, and saying what was found, is `verify`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pbem.core import dice
from pbem.errors import PbemError
from pbem.languages.i18n import LANGUAGES, builtin_catalogue
from pbem.present import view
from pbem.terminal import quoted

Roll = tuple[tuple[int, ...], tuple[int, ...]]
"""One roll: the attacker's dice then the defender's, as rolled (a lone die: defender ())."""


class VerifyError(PbemError):
    """The values to verify cannot be read (bad hex, bad dice, not a report)."""


@dataclass(frozen=True)
class DiceRecord:
    """What a resolution's dice check needs: its key, the previous key and the rolls."""

    key: bytes
    previous: bytes
    rolls: tuple[Roll, ...]
    resolution: int | None = None
    commitment: bytes | None = None
    played: str | None = None
    """What the resolution played, as players name it ("turn 13"), when the report says."""
    orders: tuple[tuple[str, bytes], ...] | None = None
    """In a game whose dice follow the orders: each order file's player and digest."""
    again: bytes | None = None
    """The salt of a resolution played again after an undo with other orders."""
    dice_key: bytes | None = None
    """The dice key the report gives (from the key and the orders), to be checked."""

    @property
    def stream_key(self) -> bytes:
        """The key the dice come from: the resolution's key, or the dice key the key and the
        order files give (never the one the report claims)."""
        if self.orders is None:
            return self.key
        digest = dice.orders_digest([d for _, d in self.orders])
        return dice.dice_key(self.key, digest, self.again)


def parse_hex_key(text: str, what: str) -> bytes:
    """A 32-byte key written as 64 hex digits."""
    try:
        raw = bytes.fromhex(text.strip())
    except ValueError:
        raise VerifyError(f"the {what} must be 64 hexadecimal digits, not '{text}'") from None
    if len(raw) != 32:
        raise VerifyError(f"the {what} must be 64 hexadecimal digits (32 bytes), not {len(raw)}")
    return raw


def _dice_of(text: str, roll: str) -> tuple[int, ...]:
    values = text.replace(",", " ").split()
    if not all(v.isdigit() and 1 <= int(v) <= 6 for v in values):
        raise VerifyError(f"'{roll}' is not a roll: write dice 1-6, like \"6 3 1/5 2\"")
    if len(values) > 3:
        raise VerifyError(f"'{roll}' has more than 3 dice on one side")
    return tuple(int(v) for v in values)


def parse_roll(text: str) -> Roll:
    """'6 3 1/5 2' (attacker/defender, as rolled) into a roll; a lone '4' is one die."""
    attacker, _, defender = text.partition("/")
    roll = (_dice_of(attacker, text), _dice_of(defender, text))
    if not roll[0]:
        raise VerifyError(f"'{text}' has no attacker's dice")
    return roll


def format_roll(roll: Roll) -> str:
    attacker, defender = roll
    a = " ".join(map(str, attacker))
    return f"{a}/{' '.join(map(str, defender))}" if defender else a


def record_from_arguments(key: str, previous: str, rolls: Sequence[str]) -> DiceRecord:
    """The record from the command line: two hex keys and the rolls as written."""
    return DiceRecord(
        parse_hex_key(key, "key"),
        parse_hex_key(previous, "previous key"),
        tuple(parse_roll(r) for r in rolls),
    )


def _die(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        raise VerifyError(f"{quoted(repr(value), 40)} is not a die: dice show 1 to 6")
    return value


def _dice_list(value: object, most: int, least: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not least <= len(value) <= most:
        raise VerifyError(
            f"a roll has {least} to {most} dice on a side, not {quoted(repr(value), 40)}"
        )
    return tuple(_die(d) for d in value)


def record_from_view(data: Mapping[str, Any]) -> DiceRecord:
    """The record from a report's view file (its "dice" section); every value is checked."""
    section = data.get("dice")
    if not isinstance(section, Mapping):
        raise VerifyError("this view file has no dice section: use the one sent with a report")
    try:
        first = section.get("first_player", [])
        rolled = section["rolls"]
        if not isinstance(first, list) or not isinstance(rolled, list):
            raise TypeError("the dice are not listed")
        rolls: list[Roll] = [((_die(r["die"]),), ()) for r in first]
        rolls += [
            (_dice_list(r["attacker"], 3, 1), _dice_list(r["defender"], 2, 1)) for r in rolled
        ]
        resolution = section["resolution"]
        if isinstance(resolution, bool) or not isinstance(resolution, int) or resolution < 0:
            raise TypeError("the resolution is not a number")
        resolution = in_chain(resolution)
        commitment = data.get("commitment")
        return DiceRecord(
            parse_hex_key(hex_text(section["key"]), "key"),
            parse_hex_key(hex_text(section["previous_key"]), "previous key"),
            tuple(rolls),
            resolution,
            parse_hex_key(commitment, "commitment") if isinstance(commitment, str) else None,
            _played(section.get("played")),
            *_orders_of_view(section),
        )
    except (KeyError, TypeError, ValueError) as err:
        raise VerifyError(
            f"the view file's dice section is incomplete ({quoted(repr(err), 80)})"
        ) from None


MAX_ORDER_FILES = 6
"""A resolution resolves at most one order file a seat."""


def _orders_of_view(
    section: Mapping[str, Any],
) -> tuple[tuple[tuple[str, bytes], ...] | None, bytes | None, bytes | None]:
    """The order files' digests, the salt and the dice key of a view file's dice section (all
    None for a resolution whose dice come from the key alone)."""
    if "orders" not in section:
        return None, None, None
    files = section["orders"]
    if not isinstance(files, list) or not 1 <= len(files) <= MAX_ORDER_FILES:
        raise TypeError("the order files are not listed")
    orders = tuple(
        (str(f["player"]), parse_hex_key(hex_text(f["digest"]), "order file digest")) for f in files
    )
    again = section.get("again")
    return (
        orders,
        parse_hex_key(hex_text(again), "salt") if again is not None else None,
        parse_hex_key(hex_text(section["dice_key"]), "dice key"),
    )


def in_chain(resolution: int | str) -> int:
    """A resolution number as a report gives it, refused when no game's key chain reaches it
    (following the chain from it would hash that many times)."""
    digits = str(resolution)
    if len(digits) > len(str(dice.MAX_CHAIN_LENGTH)) or int(digits) >= dice.MAX_CHAIN_LENGTH:
        raise VerifyError(
            f"the report gives resolution {quoted(digits, 20)}, beyond the key chain of any "
            f"game (at most {dice.MAX_CHAIN_LENGTH} keys): this is not a report pbem wrote; "
            "give the report's .txt or .view.json file as it was sent"
        )
    return int(digits)


def hex_text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("a key is not text")
    return value


_PLAYED = re.compile(r"^(turn \d{1,6}|the setup turn|the draft|the deal)$")
_PLAYED_LINE = re.compile(r"^\s*\((.{1,40}) is resolution \d+ of the game's history\.\)\s*$")


def _played(value: object) -> str | None:
    """What a report says its resolution played ("turn 13"), if it is one of pbem's names."""
    if not isinstance(value, str) or not value:
        return None
    said = value[0].lower() + value[1:]
    return said if _PLAYED.match(said) else None


def _heading(message: str, *groups: tuple[str, str]) -> re.Pattern[str]:
    """A line of the dice check as any of the languages writes it: the catalogue's sentence of
    `message` in each language, each placeholder `%(name)s` read by the given pattern, and
    after it, on the same line, a 64-digit key or nothing (the key then goes below)."""
    shapes = []
    for code in LANGUAGES:
        said = builtin_catalogue(code).gettext(message)
        shape = re.escape(said)
        for name, pattern in groups:
            shape = shape.replace(re.escape(f"%({name})s"), f"({pattern})")
        shapes.append(shape)
    ways = "|".join(dict.fromkeys(shapes))
    return re.compile(rf"^\s*(?:{ways})\s*(.*?)\s*$")


_KEY_LINE = _heading("Key of resolution %(resolution)s:", ("resolution", r"\d+"))
_PREVIOUS_LINE = _heading("Previous key:")
_COMMITMENT_LINE = _heading("Commitment (first key):")
_HEX_LINE = re.compile(r"^\s*([0-9a-fA-F]{64})\s*$")
_FIRST_LINE = _heading("First-player dice, as rolled:")
_ROLLS_LINE = _heading("Rolls, attacker/defender as rolled (%(count)s):", ("count", r"\d+"))
_ORDERS_LINE = _heading("Order files, SHA-256 of each as pbem writes it back:")
_AGAIN_LINE = _heading("Played again after an undo with other orders; salt from the card key:")
_DICE_KEY_LINE = _heading("Dice key, from the key and the order files:")


def _found(m: re.Match[str]) -> tuple[str | None, str]:
    """The number a heading gives (of whichever language matched) and what follows it."""
    numbers = [g for g in m.groups()[:-1] if g is not None]
    return (numbers[0] if numbers else None), m.groups()[-1]


def _key_after(rest: str, lines: list[str], i: int) -> str | None:
    """The key after a heading on its line, or on the line below (as the text reports put it
    to fit 78 columns)."""
    if _HEX_LINE.match(rest):
        return rest
    return _key_below(lines, i) if not rest else None


def record_from_report(text: str) -> DiceRecord:
    """The record from a text report; a fog game's report is refused, saying to give its view
    file (its dice check gives each battle's dice as "HMAC-SHA256(HMAC-SHA256(battle key, ...",
    in every language, and ended its sentences with "(docs/fog.md)." before; table talk lines,
    marked "| ", are not looked at)."""
    if any(
        ("HMAC-SHA256(HMAC-SHA256(" in line or line.rstrip().endswith("(docs/fog.md)."))
        and "| " not in line
        for line in text.splitlines()
    ):
        raise VerifyError(
            "this is the report of a game with fog of war: its battles are checked from its "
            "view file, which holds each battle's path to the commitment (give NAME.view.json)"
        )
    return _record_from_text(text)


def _record_from_text(text: str) -> DiceRecord:
    """The record from a text report's dice check section (as the built-in template writes)."""
    try:
        return _record_from_report(text)
    except (ValueError, IndexError):
        raise VerifyError(
            "the report's dice check cannot be read: give it as it was sent"
        ) from None


def _key_below(lines: list[str], i: int) -> str | None:
    """The key on the line below a heading (the text reports put it there to fit 78 columns)."""
    m = _HEX_LINE.match(lines[i + 1]) if i + 1 < len(lines) else None
    return m.group(1) if m else None


def _indented_below(lines: list[str], i: int) -> list[str]:
    """The lines below `i` indented by four spaces (a wrapped value), stripped."""
    body = []
    for more in lines[i + 1 :]:
        if not more.startswith("    ") or not more.strip():
            break
        body.append(more.strip())
    return body


def _record_from_report(text: str) -> DiceRecord:
    lines = text.splitlines()
    key = previous = commitment = None
    resolution: int | None = None
    played: str | None = None
    rolls: list[Roll] = []
    orders: list[tuple[str, bytes]] | None = None
    again = dice_key = None
    for i, line in enumerate(lines):
        if m := _ORDERS_LINE.match(line):
            body = _indented_below(lines, i)
            if len(body) % 2 or not 2 <= len(body) <= 2 * MAX_ORDER_FILES:
                raise VerifyError("the report's order files cannot be read: give it as it was sent")
            orders = [
                (name, parse_hex_key(digest, "order file digest"))
                for name, digest in zip(body[::2], body[1::2], strict=True)
            ]
        elif m := _AGAIN_LINE.match(line):
            again = parse_hex_key(_key_after(_found(m)[1], lines, i) or "", "salt")
        elif m := _DICE_KEY_LINE.match(line):
            dice_key = parse_hex_key(_key_after(_found(m)[1], lines, i) or "", "dice key")
        elif m := _PLAYED_LINE.match(line):
            played = _played(m.group(1))
        elif m := _KEY_LINE.match(line):
            number, rest = _found(m)
            resolution, key = in_chain(number or ""), _key_after(rest, lines, i)
        elif m := _PREVIOUS_LINE.match(line):
            previous = _key_after(_found(m)[1], lines, i)
        elif m := _COMMITMENT_LINE.match(line):
            commitment = parse_hex_key(_key_after(_found(m)[1], lines, i) or "", "commitment")
        elif m := _FIRST_LINE.match(line):
            told = " ".join([_found(m)[1], *_indented_below(lines, i)])
            for entry in told.split(","):
                rolls.append((_dice_of(entry.split()[-1], entry), ()))
        elif m := _ROLLS_LINE.match(line):
            count, rest = _found(m)
            if rest:
                continue
            body = _indented_below(lines, i)
            written = [r for r in " ".join(body).split(";") if r.strip()]
            rolls += [parse_roll(r) for r in written]
            if len(written) != int(count or ""):
                raise VerifyError(
                    f"the report lists {count} rolls but {len(written)} could be read"
                )
    if key is None or previous is None:
        raise VerifyError(
            "no dice check found: give a report's .txt or .view.json file, as it was sent"
        )
    return DiceRecord(
        parse_hex_key(key, "key"),
        parse_hex_key(previous, "previous key"),
        tuple(rolls),
        resolution,
        commitment,
        played,
        tuple(orders) if orders is not None else None,
        again,
        dice_key,
    )


def read_record(path: Path) -> DiceRecord:
    """The record from a saved report: its view file (.json) or its text."""
    text = view.read_text(path)
    if text.lstrip().startswith(("{", "[")):
        data = view.parse_json(text, path)
        if not isinstance(data, Mapping):
            raise VerifyError(f"{path} is not a view file: it is not a JSON object")
        return record_from_view(data)
    return record_from_report(text)
