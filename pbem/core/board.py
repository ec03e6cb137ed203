"""Boards as data: territories, borders, continents and the card deck, loaded from TOML.

A board lives in `pbem/core/boards/NAME.toml` (see `classic.toml`). `load_board` reads and checks it
once per process; the `Board` it returns is immutable and answers the rules engine's questions
(who borders whom, which continent, which card) and turns what a player wrote into a canonical
territory name (`Board.lookup`).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import tomli as tomllib  # the compiled parser: a third of the time of the standard library's

from pbem.errors import BoardError, UnknownTerritory

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = [
    "WILD",
    "Board",
    "CardKind",
    "Continent",
    "Territory",
    "board_names",
    "load_board",
    "normalise",
    "validate_board",
]

WILD = "wild"
"""The name of a wild card in a hand or in the deck."""

_IGNORED = str.maketrans("", "", " \t\r\n-.'\u2019_")


class CardKind(str, enum.Enum):
    """The unit pictured on a territory card."""

    INFANTRY = "infantry"
    CAVALRY = "cavalry"
    ARTILLERY = "artillery"


@dataclass(frozen=True)
class Territory:
    """One territory: its continent, neighbours, card, other names and place on the map."""

    name: str
    continent: str
    neighbours: tuple[str, ...]
    card: CardKind
    aliases: tuple[str, ...]
    position: tuple[int, int]


@dataclass(frozen=True)
class Continent:
    """A continent: the bonus for holding all of it and its territories in board order."""

    name: str
    bonus: int
    territories: tuple[str, ...]


def normalise(text: str) -> str:
    """Return the form names are compared in: lower case without spaces, hyphens, dots, quotes."""
    return unicodedata.normalize("NFC", text).casefold().translate(_IGNORED)


@dataclass(frozen=True)
class Board:
    """A whole board; `territories` and `continents` are read-only and in board order."""

    name: str
    territories: Mapping[str, Territory] = field(hash=False)
    continents: Mapping[str, Continent] = field(hash=False)
    wild_cards: int
    width: int
    height: int
    wraps: frozenset[frozenset[str]] = frozenset()
    text: str = field(default="", compare=False, hash=False, repr=False)
    """The file a board of a club's own was read from, as written (`board_from_text`); "" for
    the boards pbem ships, which are known by their name alone."""
    translated: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    """The territories' names in other languages (classic.<lang>.toml), each to its own name:
    accepted in orders like aliases, but not part of the board's data."""
    _index: Mapping[str, str] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )
    _exact: Mapping[str, str] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False, hash=False, default=())
    _adjacency: Mapping[str, tuple[str, ...]] = field(
        init=False, repr=False, compare=False, hash=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "territories", MappingProxyType(dict(self.territories)))
        object.__setattr__(self, "continents", MappingProxyType(dict(self.continents)))
        index: dict[str, str] = {}
        for territory in self.territories.values():
            index.setdefault(normalise(territory.name), territory.name)
        for territory in self.territories.values():
            for alias in territory.aliases:
                index.setdefault(normalise(alias), territory.name)
        for other, name in self.translated.items():
            index.setdefault(normalise(other), name)
        object.__setattr__(self, "_index", MappingProxyType(index))
        # What `lookup` answers for a name written exactly as the board spells it (or one of
        # its aliases or translations), without normalising it.
        spelt = [*self.territories, *(a for t in self.territories.values() for a in t.aliases)]
        exact = {text: index[normalise(text)] for text in [*spelt, *self.translated]}
        object.__setattr__(self, "_exact", exact)
        object.__setattr__(self, "_names", tuple(self.territories))
        adjacency = {t.name: t.neighbours for t in self.territories.values()}
        object.__setattr__(self, "_adjacency", adjacency)

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical territory names in board order."""
        return self._names

    def continents_within(self, territories: Iterable[str]) -> tuple[str, ...]:
        """The continents every territory of which is among `territories`, in board order."""
        held = set(territories)
        return tuple(c.name for c in self.continents.values() if held.issuperset(c.territories))

    def _territory(self, name: str) -> Territory:
        try:
            return self.territories[name]
        except KeyError:
            raise UnknownTerritory(name, self._suggest(name)) from None

    def adjacent(self, a: str, b: str) -> bool:
        """Whether territories `a` and `b` share a border; UnknownTerritory for a bad name."""
        self._territory(b)
        return b in self._territory(a).neighbours

    def neighbours(self, name: str) -> tuple[str, ...]:
        """The canonical names bordering territory `name`."""
        found = self._adjacency.get(name)
        return self._territory(name).neighbours if found is None else found  # or UnknownTerritory

    def borders(self) -> tuple[tuple[str, str], ...]:
        """Every border once, as (earlier, later) pairs sorted by board order."""
        order = {name: i for i, name in enumerate(self.territories)}
        pairs = {
            (a, b) if order[a] < order[b] else (b, a)
            for a, territory in self.territories.items()
            for b in territory.neighbours
            if b in order and b != a
        }
        return tuple(sorted(pairs, key=lambda p: (order[p[0]], order[p[1]])))

    def lookup(self, text: str) -> str:
        """The canonical name for what a player wrote; raises UnknownTerritory with a suggestion."""
        found = self._exact.get(text)
        if found is None:
            found = self._index.get(normalise(text))
        if found is None:
            raise UnknownTerritory(text, self._suggest(text))
        return found

    def alternatives(self, name: str) -> tuple[str, ...]:
        """The other names orders accept for territory `name` (its aliases no other owns)."""
        return tuple(
            alias
            for alias in self._territory(name).aliases
            if self._index.get(normalise(alias)) == name
        )

    def _suggest(self, text: str) -> str | None:
        import difflib  # only for a name that is not on the board

        close = difflib.get_close_matches(normalise(text), list(self._index), n=1)
        return self._index[close[0]] if close else None

    def cards(self) -> tuple[str, ...]:
        """The full deck: every territory in board order, then WILD `wild_cards` times."""
        return (*self.territories, *([WILD] * self.wild_cards))

    def card_kind(self, card: str) -> CardKind | None:
        """The unit on a card (None for WILD); UnknownTerritory for anything else."""
        if card == WILD:
            return None
        return self._territory(card).card

    def to_json(self) -> dict[str, object]:
        """The board as `pbem map --json` prints it (docs/views.md)."""
        return {
            "name": self.name,
            "continents": {
                c.name: {"bonus": c.bonus, "territories": list(c.territories)}
                for c in self.continents.values()
            },
            "territories": {
                t.name: {
                    "continent": t.continent,
                    "neighbours": list(t.neighbours),
                    "card": t.card.value,
                    "aliases": list(t.aliases),
                    "position": list(t.position),
                }
                for t in self.territories.values()
            },
            "wild_cards": self.wild_cards,
        }


@functools.cache
def _boards_dir() -> Traversable:
    """The boards' folder: on disk when pbem is installed as files (read directly, without the
    imports of importlib.resources), else (the player's kit, a zip file) as a package
    resource."""
    here = Path(__file__).parent / "boards"
    if here.is_dir():
        return here
    from importlib import resources

    return resources.files("pbem.core") / "boards"


def board_names() -> tuple[str, ...]:
    """The names of the boards shipped with pbem, sorted."""
    return tuple(
        sorted(
            entry.name[: -len(".toml")]
            for entry in _boards_dir().iterdir()
            if entry.name.endswith(".toml") and entry.is_file() and entry.name.count(".") == 1
        )
    )


def load_board(name: str = "classic") -> Board:
    """Read, check and return the board called `name`; BoardError if unknown or inconsistent."""
    return _load_board(name)


@functools.cache
def _load_board(name: str) -> Board:
    known = board_names()
    if name not in known:
        raise BoardError(f"unknown board '{name}'; known boards: {', '.join(known)}")
    source = f"board '{name}'"
    try:
        data = tomllib.loads((_boards_dir() / f"{name}.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BoardError(f"{source}: cannot read: {exc}") from exc
    board = _parse(data, source)
    validate_board(board)
    return dataclasses.replace(board, translated=_translated(board))


def _translated(board: Board) -> dict[str, str]:
    """The names of `board`'s territories in every language it has a names file for
    (`<board>.<language>.toml`); BoardError if one names a territory the board lacks or
    gives one the name (or alias) of another."""
    out: dict[str, str] = {}
    taken = {normalise(n): n for n in board.names}
    for t in board.territories.values():
        taken.update({normalise(a): t.name for a in t.aliases})
    for entry in sorted(_boards_dir().iterdir(), key=lambda e: e.name):
        if not (entry.name.startswith(f"{board.name}.") and entry.name.endswith(".toml")):
            continue
        if entry.name.count(".") != 2:
            continue
        where = f"names file {entry.name}"
        try:
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise BoardError(f"{where}: cannot read: {exc}") from exc
        for name, other in _get(data, "territories", dict, where).items():
            if name not in board.territories or not isinstance(other, str) or not other:
                raise BoardError(f"{where}: '{name}' is not a territory of board '{board.name}'")
            owner = taken.setdefault(normalise(other), name)
            if owner != name:
                raise BoardError(f"{where}: '{other}' for '{name}' is already a name of '{owner}'")
            out.setdefault(other, name)
    return out


def _get(table: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in table:
        raise BoardError(f"{where}: missing '{key}'")
    value = table[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise BoardError(f"{where}: '{key}' should be of type {kind.__name__}")
    return value


def _strings(table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    values = _get(table, key, list, where)
    if not all(isinstance(v, str) for v in values):
        raise BoardError(f"{where}: '{key}' should be a list of names")
    return tuple(values)


def _parse(data: Mapping[str, Any], source: str) -> Board:
    raw_territories = _get(data, "territories", dict, source)
    raw_continents = _get(data, "continents", dict, source)
    territories: dict[str, Territory] = {}
    members: dict[str, list[str]] = {c: [] for c in raw_continents}
    for tname, raw in raw_territories.items():
        where = f"{source}: territory '{tname}'"
        if not isinstance(raw, dict):
            raise BoardError(f"{where}: should be a table")
        card = _get(raw, "card", str, where)
        try:
            kind = CardKind(card)
        except ValueError:
            raise BoardError(f"{where}: unknown card kind '{card}'") from None
        position = _get(raw, "position", list, where)
        if len(position) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in position
        ):
            raise BoardError(f"{where}: 'position' should be [x, y] in whole numbers")
        continent = _get(raw, "continent", str, where)
        territories[tname] = Territory(
            name=tname,
            continent=continent,
            neighbours=_strings(raw, "neighbours", where),
            card=kind,
            aliases=_strings(raw, "aliases", where) if "aliases" in raw else (),
            position=(position[0], position[1]),
        )
        members.setdefault(continent, []).append(tname)
    continents: dict[str, Continent] = {}
    for cname, raw in raw_continents.items():
        where = f"{source}: continent '{cname}'"
        if not isinstance(raw, dict):
            raise BoardError(f"{where}: should be a table")
        listed = _strings(raw, "territories", where) if "territories" in raw else None
        continents[cname] = Continent(
            name=cname,
            bonus=_get(raw, "bonus", int, where),
            territories=listed if listed is not None else tuple(members[cname]),
        )
    wraps: set[frozenset[str]] = set()
    for pair in data.get("wraps", []):
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(p, str) for p in pair)
        ):
            raise BoardError(f"{source}: each entry of 'wraps' should be a pair of names")
        wraps.add(frozenset(pair))
    return Board(
        name=_get(data, "name", str, source),
        territories=territories,
        continents=continents,
        wild_cards=_get(data, "wild_cards", int, source),
        width=_get(data, "width", int, source),
        height=_get(data, "height", int, source),
        wraps=frozenset(wraps),
    )


MOST_TERRITORIES = 100
"""(Each seat is then dealt fewer territories than it has armies, for every number of players.)"""
MOST_CONTINENTS = 50
FEWEST_TERRITORIES = 6
LONGEST_NAME = 40
LARGEST_CANVAS = 5000
SAME_KIND = 3
"""The fewest territory cards of each kind a board has: three alike must be possible."""
BOARD_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def board_from_text(text: str, source: str) -> Board:
    """A board of a club's own, from the text of its file (the format of the boards pbem
    ships, docs/boards.md), checked; BoardError naming the first problem found."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BoardError(f"{source} is not valid TOML: {exc}") from None
    except RecursionError:
        raise BoardError(f"{source} nests tables too deeply") from None
    board = _parse(data, source)
    if not BOARD_NAME.match(board.name):
        raise BoardError(
            f"{source}: the board's name '{board.name[:60]}' must be lower-case letters, digits, "
            "'-' or '_' (at most 40)"
        )
    validate_board(board)
    return dataclasses.replace(board, text=text)


def board_of(name: str, text: str | None, source: str) -> Board:
    """The board a game or a view names: its own (`text`, from its file), or else the shipped
    board called `name`; BoardError when the text is not a board of that name."""
    if not text:
        return load_board(name)
    board = board_from_text(text, source)
    if board.name != name:
        raise BoardError(f"{source} is the board '{board.name}', not '{name}'")
    return board


def _check_label(where: str, what: str, label: str) -> None:
    """A name a player writes and reads: printable, not too long, not a word pbem keeps."""
    if len(label) > LONGEST_NAME or any(not c.isprintable() for c in label):
        raise BoardError(
            f"{where}: {what} '{label[:LONGEST_NAME]}' must be at most {LONGEST_NAME} printable "
            "characters"
        )
    if normalise(label) in (normalise(WILD), "neutral", "rest", "best", "all", "min"):
        raise BoardError(
            f"{where}: {what} '{label}' is a word pbem keeps (the wild card, neutral, or a word "
            "of the order file: rest, best, all, min)"
        )
    if any(c in label for c in '"\\'):
        raise BoardError(f"{where}: {what} '{label}' holds a double quote or a backslash")


def validate_board(board: Board) -> None:
    """Check a board is consistent; raise BoardError naming the first problem found."""
    where = f"board '{board.name}'"
    if not board.territories:
        raise BoardError(f"{where}: has no territories")
    if not FEWEST_TERRITORIES <= len(board.territories) <= MOST_TERRITORIES:
        raise BoardError(
            f"{where}: has {len(board.territories)} territories; a board has "
            f"{FEWEST_TERRITORIES} to {MOST_TERRITORIES}"
        )
    if len(board.continents) > MOST_CONTINENTS:
        raise BoardError(f"{where}: has more than {MOST_CONTINENTS} continents")
    if board.width > LARGEST_CANVAS or board.height > LARGEST_CANVAS:
        raise BoardError(f"{where}: width and height must be at most {LARGEST_CANVAS}")
    for t in board.territories.values():
        for label in (t.name, *t.aliases):
            _check_label(where, "the name", label)
    for c in board.continents.values():
        _check_label(where, "the continent", c.name)
        if c.bonus > 100:
            raise BoardError(f"{where}: continent '{c.name}' has a bonus over 100")
    kinds = {k: sum(t.card is k for t in board.territories.values()) for k in CardKind}
    few = [k.value for k, n in kinds.items() if n < SAME_KIND]
    if few:
        raise BoardError(
            f"{where}: the cards show too few {', '.join(few)}: every kind is on at least "
            f"{SAME_KIND} territories, so that three alike can be traded"
        )
    if board.wild_cards > 10:
        raise BoardError(f"{where}: more than 10 wild cards")
    if board.wild_cards < 0:
        raise BoardError(f"{where}: wild_cards is negative")
    if board.width <= 0 or board.height <= 0:
        raise BoardError(f"{where}: width and height must be positive")

    for key, t in board.territories.items():
        if key != t.name:
            raise BoardError(f"{where}: territory '{t.name}' is filed under '{key}'")
        if not isinstance(t.card, CardKind):
            raise BoardError(f"{where}: territory '{t.name}' has no card kind")
        x, y = t.position
        if not (0 <= x <= board.width and 0 <= y <= board.height):
            raise BoardError(f"{where}: territory '{t.name}' is positioned off the map")
        if len(set(t.neighbours)) != len(t.neighbours):
            raise BoardError(f"{where}: territory '{t.name}' lists a neighbour twice")
        for n in t.neighbours:
            if n == t.name:
                raise BoardError(f"{where}: territory '{t.name}' borders itself")
            if n not in board.territories:
                raise BoardError(f"{where}: territory '{t.name}' borders unknown '{n}'")
            if t.name not in board.territories[n].neighbours:
                raise BoardError(
                    f"{where}: territory '{t.name}' borders '{n}' but '{n}' does not border it"
                )

    homes: dict[str, list[str]] = {name: [] for name in board.territories}
    for key, c in board.continents.items():
        if key != c.name:
            raise BoardError(f"{where}: continent '{c.name}' is filed under '{key}'")
        if c.bonus < 0:
            raise BoardError(f"{where}: continent '{c.name}' has a negative bonus")
        if not c.territories:
            raise BoardError(f"{where}: continent '{c.name}' has no territories")
        for tname in c.territories:
            if tname not in homes:
                raise BoardError(f"{where}: continent '{c.name}' lists unknown territory '{tname}'")
            homes[tname].append(c.name)
    for tname, found in homes.items():
        declared = board.territories[tname].continent
        if not found:
            raise BoardError(f"{where}: territory '{tname}' is in no continent")
        if len(found) > 1:
            raise BoardError(f"{where}: territory '{tname}' is in several continents: {found}")
        if found[0] != declared:
            raise BoardError(
                f"{where}: territory '{tname}' says continent '{declared}' but is in '{found[0]}'"
            )

    seen: dict[str, str] = {}
    for t in board.territories.values():
        for label in (t.name, *t.aliases):
            key = normalise(label)
            if not key:
                raise BoardError(f"{where}: territory '{t.name}' has an empty name or alias")
            if key in seen:
                raise BoardError(
                    f"{where}: territory '{t.name}': '{label}' clashes with {seen[key]}"
                )
            seen[key] = f"'{label}'" if label == t.name else f"'{label}' (alias of '{t.name}')"

    for pair in board.wraps:
        ends = sorted(pair)
        if len(ends) != 2 or not all(e in board.territories for e in ends):
            raise BoardError(f"{where}: wrap {ends} is not a pair of territories")
        if ends[1] not in board.territories[ends[0]].neighbours:
            raise BoardError(f"{where}: wrap between '{ends[0]}' and '{ends[1]}' is not a border")

    first = next(iter(board.territories))
    reached = {first}
    todo = [first]
    while todo:
        for n in board.territories[todo.pop()].neighbours:
            if n not in reached:
                reached.add(n)
                todo.append(n)
    stranded = [name for name in board.territories if name not in reached]
    if stranded:
        raise BoardError(
            f"{where}: territory '{stranded[0]}' cannot be reached from '{first}'"
            f" (unreachable: {', '.join(stranded)})"
        )
