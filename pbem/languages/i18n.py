"""The players' languages: gettext catalogues, names on the board, numbers and dates.

Every sentence a player reads goes through the catalogue of their language
(`pbem/locale/<lang>/LC_MESSAGES/pbem.po`, compiled to `.mo`, extracted with
`pybabel extract -F babel.cfg`). A game can override or add sentences with its own catalogue
in `<game>/locale/<lang>/LC_MESSAGES/pbem.mo`, looked up before the built-in one.

Messages use named placeholders, `%(player)s`, the form Jinja2's newstyle gettext uses, so a
sentence reads the same in a template and in Python. The language a report is rendered in is
held in a context variable for the length of the rendering (`speaking`), so that the story,
the map and the tables all speak it without every function passing it on.

Babel (numbers, dates) is imported only where it is used: the player's kit checks orders in
the player's language with the standard library alone.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import gettext
import io
import os
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import tomli as tomllib  # the compiled parser the boards are read with (bundled in the kit)

from pbem.errors import PbemError

LANGUAGES = ("en", "id", "sv", "it", "nl", "gu")
"""The languages pbem speaks, by their ISO 639-1 codes; English is the source language."""

LANGUAGE_NAMES = {
    "en": "English",
    "id": "Bahasa Indonesia",
    "sv": "svenska",
    "it": "italiano",
    "nl": "Nederlands",
    "gu": "ગુજરાતી",
}

"""The values of a problem that name a territory."""

DEFAULT = "en"
DOMAIN = "pbem"
MODERATOR_VARIABLE = "PBEM_LANG"


def check_language(code: str, where: str = "language") -> str:
    """`code` if pbem speaks it; PbemError naming the languages it does otherwise."""
    if code not in LANGUAGES:
        raise PbemError(
            f"{where} '{code}' is not one pbem speaks: use one of {', '.join(LANGUAGES)}"
        )
    return code


def moderator_language() -> str:
    """The moderator's language: PBEM_LANG (its first two letters, as in 'it_IT.UTF-8'), else en."""
    code = os.environ.get(MODERATOR_VARIABLE, "").strip()[:2].lower()
    return code if code in LANGUAGES else DEFAULT


def builtin_catalogue(code: str) -> gettext.NullTranslations:
    """The catalogue that ships with pbem for `code`, read through importlib.resources so that
    it is found in a checkout, an installed wheel and the player's kit (a zip) alike."""
    if code == DEFAULT:
        return gettext.NullTranslations()
    from importlib import resources  # (and zipfile...) only for a language with a catalogue

    mo = resources.files("pbem") / "locale" / code / "LC_MESSAGES" / f"{DOMAIN}.mo"
    return gettext.GNUTranslations(io.BytesIO(mo.read_bytes()))


def own_catalogues(game_dir: Path | None) -> Path | None:
    """`game_dir` when it has catalogues of its own (a locale/ folder), else None: the games
    without share the built-in catalogues and everything made from them."""
    if game_dir is not None and (game_dir / "locale").is_dir():
        return game_dir
    return None


@functools.lru_cache(maxsize=64)
def translations(code: str, game_dir: Path | None = None) -> gettext.NullTranslations:
    """The catalogue of language `code`: the game's own (if it has one) before the built-in."""
    return _translations(code, own_catalogues(game_dir))


@functools.lru_cache(maxsize=64)
def _translations(code: str, game_dir: Path | None) -> gettext.NullTranslations:
    builtin = builtin_catalogue(code)
    if game_dir is None:
        return builtin
    from pbem.languages.own_catalogue import own_catalogue  # read without following links

    own = own_catalogue(game_dir, code, DOMAIN)
    if own is None:
        return builtin
    own.add_fallback(builtin)
    return own


@dataclass(frozen=True)
class Names:
    """A board's territory and continent names in one language (English ones as keys)."""

    territories: Mapping[str, str] = field(default_factory=dict)
    continents: Mapping[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=64)
def board_names(board: str, code: str) -> Names:
    """The names of `board` in language `code` (empty: the board's own, English, names)."""
    if code == DEFAULT:
        return Names()
    from importlib import resources

    path = resources.files("pbem.core") / "boards" / f"{board}.{code}.toml"
    if not path.is_file():
        return Names()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return Names(dict(data.get("territories", {})), dict(data.get("continents", {})))


@dataclass(frozen=True)
class Language:
    """One language at work: its catalogue, the board's names in it, its number formats."""

    code: str
    catalogue: gettext.NullTranslations
    names: Names = Names()

    def _(self, message: str, /, **values: object) -> str:
        """`message` translated, with its %(name)s placeholders filled."""
        text = self.catalogue.gettext(message)
        return text % values if values else text

    def n_(self, singular: str, plural: str, n: int, /, **values: object) -> str:
        """The form of `singular`/`plural` this language uses for `n`; %(num)s is n."""
        return self.catalogue.ngettext(singular, plural, n) % {"num": self.number(n), **values}

    def place(self, name: str) -> str:
        """A territory's or continent's name as this language writes it."""
        return self.names.territories.get(name) or self.names.continents.get(name) or name

    def number(self, n: int) -> str:
        """`n` with this language's digit grouping (`GROUPING`; a number that is not whole
        by Babel, in plain digits where Babel is not installed, as in the player's kit)."""
        return _number(self.code, n)

    def when(self, moment: datetime) -> str:
        """A date and time the way this language writes them, with its zone's abbreviation as
        the English deadlines have it ("CET", "UTC"; a zone without one, its offset)."""
        from babel.dates import format_datetime

        day = str(format_datetime(moment, "EEEE d MMMM y, HH:mm", locale=self.code))
        return f"{day} {moment.tzname() or format_datetime(moment, 'ZZZZZ', locale=self.code)}"

    def day(self, day: date | str) -> str:
        """A day (or one written YYYY-MM-DD) the way this language writes it: "4 March 2027",
        "4 mars 2027"; text that is not a day stays as it is."""
        from babel.dates import format_date

        if isinstance(day, str):
            try:
                when = date.fromisoformat(day)
            except ValueError:
                return day
        else:
            when = day
        return str(format_date(when, "d MMMM y", locale=self.code))

    def deadline(self, moment: datetime, now: datetime | None) -> str:
        """A deadline with how far it is from `now` (when given), in brackets: '(in 2 days)',
        '(3 hours ago)', so that a language whose "by" follows the time ("... સુધીમાં") does
        not follow "in 20 hours"."""
        text = self.when(moment)
        if now is None:
            return text
        from babel.dates import format_timedelta

        ahead = format_timedelta(moment - now, threshold=2, add_direction=True, locale=self.code)
        return f"{text} ({ahead})"  # (in brackets: a language's "by" may follow the whole)

    def listing(self, items: list[str]) -> str:
        """'a', 'a and b', 'a, b and c' in this language."""
        if len(items) <= 1:
            return "".join(items)
        return self._("%(items)s and %(last)s", items=", ".join(items[:-1]), last=items[-1])


GROUPING: dict[str, tuple[str, int, int]] = {
    "en": (",", 3, 3),
    "id": (".", 3, 3),
    "sv": ("\xa0", 3, 3),
    "it": (".", 3, 3),
    "nl": (".", 3, 3),
    "gu": (",", 3, 2),
}
"""How each language pbem speaks groups the digits of a whole number, as Babel's locale data
has it (tests/test_languages.py holds every language to Babel over a table of numbers): the
separator, the size of the last group and of every group before it (Gujarati writes 1,23,45,678).
A report then needs neither Babel nor its locale data (a fifth of a resolution's time to load)
for its whole numbers, however big."""


@functools.lru_cache(maxsize=4096, typed=True)
def _number(code: str, n: int) -> str:
    """`n` as language `code` writes it, worked out once (a report writes hundreds): whole
    numbers by `GROUPING`, anything else by Babel."""
    if type(n) is int and 0 <= n < 1000:
        return str(n)
    grouping = GROUPING.get(code)
    if type(n) is int and grouping is not None:
        return _grouped(n, *grouping)
    try:
        from babel.numbers import format_decimal
    except ImportError:  # pragma: no cover - the kit
        return str(n)
    return str(format_decimal(n, locale=code))


def _grouped(n: int, separator: str, last: int, each: int) -> str:
    """The digits of `n` in groups: the last `last` long, every one before it `each` long."""
    digits = str(abs(n))
    groups = [digits[-last:]]
    rest = digits[:-last]
    while rest:
        groups.append(rest[-each:])
        rest = rest[:-each]
    return ("-" if n < 0 else "") + separator.join(reversed(groups))


@functools.lru_cache(maxsize=64)
def language(code: str = DEFAULT, board: str = "classic", game_dir: Path | None = None) -> Language:
    """The Language for `code` (checked), with the names of `board`."""
    return _language(code, board, own_catalogues(game_dir))


@functools.lru_cache(maxsize=64)
def _language(code: str, board: str, game_dir: Path | None) -> Language:
    check_language(code)
    return Language(code, translations(code, game_dir), board_names(board, code))


_current: contextvars.ContextVar[Language | None] = contextvars.ContextVar("pbem_language")


def current() -> Language:
    """The language being spoken now (English outside `speaking`)."""
    return _current.get(None) or language(DEFAULT)


@contextlib.contextmanager
def speaking(lang: Language) -> Iterator[Language]:
    """Render everything inside in `lang`."""
    token = _current.set(lang)
    try:
        yield lang
    finally:
        _current.reset(token)


def _(message: str, /, **values: object) -> str:
    return current()._(message, **values)


def n_(singular: str, plural: str, n: int, /, **values: object) -> str:
    return current().n_(singular, plural, n, **values)


def place(name: str) -> str:
    return current().place(name)


def display_width(text: str) -> int:
    """Columns `text` takes on a terminal: combining marks and format characters take none,
    wide (East Asian) characters two, the rest one."""
    if text.isascii():  # every ASCII character takes one column
        return len(text)
    width = 0
    for ch in text:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def pad(text: str, width: int, right: bool = False) -> str:
    """`text` padded with spaces to `width` display columns (left-aligned unless `right`)."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` display columns, broken between words."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if line and display_width(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return lines
