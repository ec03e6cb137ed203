"""Parsing an order file: TOML text (or a whole report sent back, between its cut lines) to
typed `orders.Orders`, with every problem of its shape found at once, each with its line.

Parsing checks the shape of a file: types, known keys, territory names. Whether the orders are
legal in the current state is `validation.validate`'s question.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from typing import Any, Literal

import tomli as tomllib  # the compiled parser: a third of the time of the standard library's

from pbem.core.board import Board
from pbem.core.order_reader import DEPTH_LIMIT, TABLE_LIMIT, Reader, too_deep
from pbem.core.order_text import key_lines, read_plain
from pbem.core.orders import (
    ALL,
    BEST,
    MIN,
    REST,
    Attack,
    CardSet,
    Fortify,
    FortifyAmount,
    MoveRule,
    Orders,
    Place,
    PlaceAmount,
)
from pbem.errors import OrderError, Problem, UnknownTerritory
from pbem.terminal import quoted

_TOP_KEYS = {
    "game",
    "turn",
    "player",
    "secret",
    "trade",
    "place",
    "attack",
    "fortify",
    "draft",
    "vacation",
}
_PLACE_KEYS = {"territory", "armies"}
_ATTACK_KEYS = {"from", "to", "dice", "stop_at", "move"}
_FORTIFY_KEYS = {"from", "to", "armies"}


CUT = "-- 8<"
"""How the cut lines around the order file in a report begin."""


def between_cuts(text: str) -> str:
    """The order file between pbem's two cut lines, when `text` holds them (a whole report
    sent back, orders edited in place); the lines outside are blanked, so that line numbers
    still count from the top of what the player has. Text without two cut lines is returned
    as it is."""
    lines = text.split("\n")
    cuts = [i for i, line in enumerate(lines) if line.lstrip().startswith(CUT)]
    if len(cuts) < 2:
        return text
    first, last = cuts[0], cuts[1]
    return "\n".join(line if first < i < last else "" for i, line in enumerate(lines))


def parse_orders(text: str, board: Board) -> Orders:
    """Parse an order file; raises OrderError listing every problem with its line."""
    text = text.removeprefix("\ufeff")  # the byte-order mark some editors put first
    plain = read_plain(text)
    if plain is not None:
        return _orders(plain[0], board, plain[1])
    data: dict[str, Any] | None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        match = re.search(r"line (\d+)", str(err))
        line = int(match.group(1)) if match else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err))
        raise OrderError(
            [
                Problem.of(
                    "this is not valid TOML (%(reason)s); check quotes, brackets and '='",
                    line,
                    reason=reason,
                )
            ]
        ) from None
    except RecursionError:
        data = None
    if data is None or too_deep(data):
        raise OrderError(
            [
                Problem.of(
                    "tables or arrays are nested more than %(depth)s deep; orders need 2 at "
                    "most: start from the order file in your latest report",
                    depth=DEPTH_LIMIT,
                )
            ]
        )
    return _orders(data, board, key_lines(text))


def _orders(data: dict[str, Any], board: Board, lines: dict[str, int]) -> Orders:
    """The orders of a file read as `data`, its keys on `lines`; raises OrderError listing
    every problem with its line."""
    reader = Reader(board, lines)
    reader.unknown_keys(data, _TOP_KEYS, "")

    header: dict[str, Any] = {}
    for key, kind in (("game", str), ("player", str), ("secret", str), ("turn", int)):
        value = data.get(key)
        if value is None:
            reader.problems.append(
                Problem.of(
                    "'%(key)s' is missing: copy it from your last report", reader.line(key), key=key
                )
            )
        elif not isinstance(value, kind) or isinstance(value, bool):
            reader.problems.append(
                Problem.of("'%(key)s' must be a number", reader.line(key), key=key)
                if kind is int
                else Problem.of("'%(key)s' must be text in quotes", reader.line(key), key=key)
            )
        else:
            header[key] = value

    trade = _parse_trade(reader, data.get("trade"))
    place = _parse_place(reader, data)
    attack = _parse_attack(reader, data)
    fortifications = _parse_fortify(reader, data)
    draft = _parse_draft(reader, data.get("draft"))
    vacation = _parse_vacation(reader, data.get("vacation"))

    if reader.problems and len(header) != 4:
        raise OrderError(reader.problems, partial=None, dropped_attack=reader.dropped_attack)
    built = Orders(
        game=header["game"],
        turn=header["turn"],
        player=header["player"],
        secret=header["secret"],
        trade=trade,
        place=place,
        attack=attack,
        fortify=fortifications[0] if fortifications else None,
        more_fortify=fortifications[1:],
        draft=draft,
        lines=reader.lines,
        vacation=vacation,
    )
    if reader.problems:  # what could be read, for the warnings that still apply
        raise OrderError(reader.problems, partial=built, dropped_attack=reader.dropped_attack)
    return built


def _parse_trade(reader: Reader, value: object) -> tuple[CardSet, ...] | Literal["best"]:
    if value is None:
        return ()
    if value == BEST:
        return BEST
    if not isinstance(value, list):
        reader.fail(
            Problem.of('trade must be "best" or a list of sets, e.g. [["Alaska", "Peru", "wild"]]'),
            "trade",
        )
        return ()
    sets: list[CardSet] = []
    if len(value) > TABLE_LIMIT:
        reader.fail(
            Problem.of(
                "%(count)s sets listed: a file may trade at most %(most)s",
                count=len(value),
                most=TABLE_LIMIT,
            ),
            "trade",
        )
        return ()
    if not all(isinstance(item, list) and len(item) == 3 for item in value):
        reader.fail(
            Problem.of(
                'each set traded is a list of three cards: trade must be "best" or a list of '
                'sets, e.g. [["Alaska", "Peru", "wild"]]'
            ),
            "trade",
        )
        return ()
    for item in value:
        cards: list[str] = []
        for card in item:
            if isinstance(card, str) and card.strip().lower() == "wild":
                cards.append("wild")
            else:
                name = reader.territory(card, "trade")
                if name is not None:
                    cards.append(name)
        if len(cards) == 3:
            sets.append((cards[0], cards[1], cards[2]))
    return tuple(sets)


def _parse_place(reader: Reader, data: Mapping[str, Any]) -> tuple[Place, ...]:
    out: list[Place] = []
    rests = 0
    for path, table in reader.tables(data, "place"):
        reader.unknown_keys(table, _PLACE_KEYS, path)
        territory = reader.territory(table.get("territory"), f"{path}.territory")
        raw = table.get("armies")
        armies: PlaceAmount | None
        if raw == REST:
            rests += 1
            armies = REST
            if rests > 1:
                reader.problems.append(
                    Problem.of('"rest" may be used once per file', reader.line(f"{path}.armies"))
                )
        elif raw is None:
            reader.problems.append(
                Problem.of("'armies' is missing: a number, or \"rest\"", reader.line(path))
            )
            armies = None
        else:
            armies = reader.integer(raw, f"{path}.armies", 1)
        written = table.get("territory")
        if territory is None and isinstance(written, str):
            # Only ever seen in the partial orders of a file with problems: the armies still
            # count towards the total, so that a misspelt name does not hide a count error.
            territory = written
        if territory is not None and armies is not None:
            out.append(Place(territory, armies, reader.line(path)))
    return tuple(out)


def _parse_attack(reader: Reader, data: Mapping[str, Any]) -> tuple[Attack, ...]:
    out: list[Attack] = []
    for path, table in reader.tables(data, "attack"):
        reader.unknown_keys(table, _ATTACK_KEYS, path)
        source = reader.territory(table.get("from"), f"{path}.from")
        target = reader.territory(table.get("to"), f"{path}.to")
        dice = None
        if "dice" in table:
            dice = reader.integer(table["dice"], f"{path}.dice", 1, 3)
        stop_at = reader.integer(table.get("stop_at", 1), f"{path}.stop_at", 1)
        raw_move = table.get("move", ALL)
        move: MoveRule | None
        if raw_move in (ALL, MIN):
            move = raw_move
        elif isinstance(raw_move, int) and not isinstance(raw_move, bool):
            move = reader.integer(raw_move, f"{path}.move", 1)
        else:
            reader.fail(
                Problem.of('\'move\' must be "all", "min" or a number of armies'), f"{path}.move"
            )
            move = None
        if source and target:
            # A bad dice, stop_at or move leaves an attack that is checked as if left out.
            out.append(Attack(source, target, dice, stop_at or 1, move or ALL, reader.line(path)))
        else:
            reader.dropped_attack = True
    return tuple(out)


def _parse_fortify(reader: Reader, data: Mapping[str, Any]) -> tuple[Fortify, ...]:
    """The fortifications: one `[fortify]` table, or `[[fortify]]` tables (how many a game
    allows is the rules' to check)."""
    value = data.get("fortify")
    if value is None:
        return ()
    if not isinstance(value, dict) and not (
        isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
    ):
        reader.problems.append(
            Problem.of(
                "fortify is one [fortify] table (or, where a game allows more, [[fortify]] tables)",
                reader.line("fortify"),
            )
        )
        return ()
    tables = [("fortify", value)] if isinstance(value, dict) else reader.tables(data, "fortify")
    out = []
    for path, table in tables:
        fortify = _parse_one_fortify(reader, path, table)
        if fortify is not None:
            out.append(fortify)
    return tuple(out)


def _parse_one_fortify(reader: Reader, path: str, value: Mapping[str, Any]) -> Fortify | None:
    reader.unknown_keys(value, _FORTIFY_KEYS, path)
    source = reader.territory(value.get("from"), f"{path}.from")
    target = reader.territory(value.get("to"), f"{path}.to")
    raw = value.get("armies")
    armies: FortifyAmount | None
    if raw == ALL:
        armies = ALL
    elif raw is None:
        reader.problems.append(
            Problem.of("'armies' is missing: a number, or \"all\"", reader.line(path))
        )
        armies = None
    else:
        armies = reader.integer(raw, f"{path}.armies", 1)
    if source and target and armies is not None:
        return Fortify(source, target, armies, reader.line(path))
    return None


def _parse_vacation(reader: Reader, value: object) -> tuple[str, str] | None:
    """`vacation = { from = 2027-03-12, to = 2027-03-19 }` (dates, or the same in quotes)."""
    import datetime

    if value is None:
        return None
    days: list[str] = []
    if isinstance(value, dict) and value.keys() == {"from", "to"}:
        for key in ("from", "to"):
            day = value[key]
            if isinstance(day, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", day.strip()):
                with contextlib.suppress(ValueError):  # YYYY-MM-DD only, as every Python reads
                    day = datetime.date.fromisoformat(day.strip())
            if type(day) is datetime.date:
                days.append(day.isoformat())
    if len(days) != 2:
        reader.fail(
            Problem.of(
                "vacation must name its first and last day, e.g. vacation = { from = "
                '"2027-03-12", to = "2027-03-19" }'
            ),
            "vacation",
        )
        return None
    return days[0], days[1]


def _parse_draft(reader: Reader, value: object) -> tuple[str, ...]:
    """A ranked list of territory names, each once; "rest" may end it."""
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        reader.fail(
            Problem.of(
                'draft must be a list of territories, best first, e.g. ["Iceland", "Peru", "rest"]'
            ),
            "draft",
        )
        return ()
    out: list[str] = []
    first: dict[str, int] = {}
    for place, item in enumerate(value, start=1):
        if isinstance(item, str) and item.strip().lower() == REST:
            if place != len(value):
                reader.fail(
                    Problem.of(
                        '"rest" is entry %(place)s of your draft list, not the last: it stands '
                        "for every territory not listed before it, so end the list with it",
                        place=place,
                    ),
                    "draft",
                )
            out.append(REST)
            continue
        if not isinstance(item, str):
            reader.fail(
                Problem.of("draft entry %(place)s must be a territory name in quotes", place=place),
                "draft",
            )
            continue
        try:
            name = reader.board.lookup(item)
        except UnknownTerritory as err:
            reader.fail(
                Problem.of(
                    "draft entry %(place)s: unknown territory '%(name)s'; did you mean "
                    "'%(territory)s'?",
                    place=place,
                    name=quoted(err.text),
                    territory=err.suggestion,
                )
                if err.suggestion
                else Problem.of(
                    "draft entry %(place)s: unknown territory '%(name)s'",
                    place=place,
                    name=quoted(err.text),
                ),
                "draft",
            )
            continue
        if name in first:
            reader.fail(
                Problem.of(
                    "%(territory)s is in your draft list twice (entries %(first)s and "
                    "%(place)s): list each territory once",
                    territory=name,
                    first=first[name],
                    place=place,
                ),
                "draft",
            )
            continue
        first[name] = place
        out.append(name)
    return tuple(out)
