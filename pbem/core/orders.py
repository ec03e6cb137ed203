"""Order files: TOML text to typed orders (with the line each came from), and back.

Parsing checks the shape of a file: types, known keys, territory names. Whether the orders are
legal in the current state is `rules.validate`'s question.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import tomli as tomllib  # the compiled parser: a third of the time of the standard library's

from pbem.core.board import Board
from pbem.core.order_text import key_lines, read_plain
from pbem.errors import OrderError, Problem, UnknownTerritory
from pbem.terminal import quoted

REST: Literal["rest"] = "rest"
ALL: Literal["all"] = "all"
MIN: Literal["min"] = "min"
BEST: Literal["best"] = "best"

TABLE_LIMIT = 100
"""The most [[place]] or [[attack]] tables one file may hold (a board has 42 territories)."""
DEPTH_LIMIT = 8
"""The deepest nesting of tables and arrays read; an order file needs 2 (trade = [[...]])."""

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


class _Reader:
    """Collects every problem of a file while building its orders."""

    def __init__(self, board: Board, lines: dict[str, int]) -> None:
        self.board = board
        self.lines = lines
        self.problems: list[Problem] = []
        self.dropped_attack = False

    def line(self, *paths: str) -> int | None:
        for path in paths:
            while path:
                if path in self.lines:
                    return self.lines[path]
                path = path.rpartition(".")[0]
        return None

    def fail(self, problem: Problem, *paths: str) -> None:
        """Record `problem` (made with Problem.of, no line) at the line of the first path."""
        self.problems.append(
            Problem(problem.message, self.line(*paths), problem.template, problem.values)
        )

    def territory(self, value: object, path: str) -> str | None:
        if not isinstance(value, str):
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be a territory name in quotes",
                    self.line(path),
                    key=path.rsplit(".", 1)[-1],
                )
            )
            return None
        try:
            return self.board.lookup(value)
        except UnknownTerritory as err:
            self.problems.append(err.problem(self.line(path)))
            return None

    def integer(self, value: object, path: str, low: int, high: int | None = None) -> int | None:
        if type(value) is int and value >= low and (high is None or value <= high):
            return value  # the usual case, first
        name = path.rsplit(".", 1)[-1]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be a whole number, not %(value)s",
                    self.line(path),
                    key=name,
                    value=quoted(repr(value), 40),
                )
            )
            return None
        if value < low or (high is not None and value > high):
            values: dict[str, str | int] = {
                "key": name,
                "low": low,
                "value": value,
                "high": high or 0,
            }
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be between %(low)s and %(high)s, not %(value)s",
                    self.line(path),
                    **values,
                )
                if high is not None
                else Problem.of(
                    "'%(key)s' must be at least %(low)s, not %(value)s", self.line(path), **values
                )
            )
            return None
        return value

    def unknown_keys(self, table: Mapping[str, Any], allowed: set[str], path: str) -> None:
        if table.keys() <= allowed:
            return  # the usual case, at once
        for key in table:
            if key not in allowed:
                where = f"{path}.{key}" if path else key
                if path and key == "vacation":  # written at the end, inside the last table
                    self.problems.append(
                        Problem.of(
                            "vacation = ... belongs at the top of the file, with game, turn, "
                            "player and secret: after a %(table)s line it is read as part "
                            "of that table",
                            self.line(where),
                            table=(
                                f"[[{path.split('[')[0]}]]"
                                if "[" in path
                                else f"[{path.split('.')[0]}]"
                            ),
                        )
                    )
                    continue
                known = ", ".join(sorted(allowed))
                self.problems.append(
                    Problem.of(
                        "unknown key '%(key)s' (known keys here: %(known)s)",
                        self.line(where),
                        key=quoted(key),
                        known=known,
                    )
                )

    def tables(self, data: Mapping[str, Any], name: str) -> list[tuple[str, Mapping[str, Any]]]:
        value = data.get(name, [])
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(Problem.of("'%(key)s' must be written as [[%(key)s]] tables", key=name), name)
            return []
        if len(value) > TABLE_LIMIT:
            self.fail(
                Problem.of(
                    "%(count)s [[%(key)s]] tables: an order file may hold at most %(most)s",
                    count=len(value),
                    key=name,
                    most=TABLE_LIMIT,
                ),
                name,
            )
            return []
        return [(f"{name}.{i}", v) for i, v in enumerate(value)]


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
    if data is None or _too_deep(data):
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
    reader = _Reader(board, lines)
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


def _too_deep(data: Mapping[str, Any]) -> bool:
    """Whether tables and arrays nest deeper than DEPTH_LIMIT (without recursing): whether a
    table or array DEPTH_LIMIT levels down holds anything. Only tables and arrays are visited."""
    level: list[Any] = [data]
    for _ in range(DEPTH_LIMIT):
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return any(level)


def _parse_trade(reader: _Reader, value: object) -> tuple[CardSet, ...] | Literal["best"]:
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


def _parse_place(reader: _Reader, data: Mapping[str, Any]) -> tuple[Place, ...]:
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


def _parse_attack(reader: _Reader, data: Mapping[str, Any]) -> tuple[Attack, ...]:
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


def _parse_fortify(reader: _Reader, data: Mapping[str, Any]) -> tuple[Fortify, ...]:
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


def _parse_one_fortify(reader: _Reader, path: str, value: Mapping[str, Any]) -> Fortify | None:
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


def _parse_vacation(reader: _Reader, value: object) -> tuple[str, str] | None:
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


def _parse_draft(reader: _Reader, value: object) -> tuple[str, ...]:
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
