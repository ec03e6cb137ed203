"""A game's own catalogue (`<game>/locale/<lang>/LC_MESSAGES/pbem.mo`): read without following
a link, and checked before it is used, so that a damaged or hostile catalogue is one sentence
for its game instead of a traceback or a resolution that never ends.

A catalogue is refused when its file is a symbolic link (or a folder on the way to it is), is
not a regular file (a FIFO), cannot be read as a catalogue (truncated, an unknown charset), has
a plural rule that fails for a count (`plural=n/0`), or has a translation whose placeholders
its English sentence does not give (`%(cards)s` where only `%(num)s` is given), that asks for
a format width or precision over WIDEST (`%(cards)999999999s` would make a gigabyte of
spaces), or that turns a placeholder into a number conversion its sentence does not use.

Standard library only: the player's kit carries this module (it never reads a game's own).
"""

from __future__ import annotations

import gettext
import io
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from pbem.errors import PbemError
from pbem.files import FileProblem, link_on_the_way, link_sentence, read_bounded

CATALOGUE_LIMIT = 4 * 1024 * 1024
"""The largest catalogue of a game read, in bytes (pbem's own are some 60 KiB)."""
WIDEST = 100
"""The largest format width or precision a translation may ask for."""
COUNTS = range(1001)
"""The counts a plural rule is tried with before the catalogue is used."""

_CONVERSION = re.compile(
    r"%(?:\((?P<name>[^)]*)\))?[#0 +\-]*(?P<width>\*|\d+)?(?:\.(?P<precision>\*|\d+))?"
    r"[hlL]?(?P<kind>[diouxXeEfFgGcrsa%])"
)
"""One %-conversion: its name, width, precision and kind."""
_ANY_VALUE = frozenset("sra")
"""The conversions that take a value of any type."""


class CatalogueProblem(PbemError):
    """A game's own catalogue pbem will not use: which file and why."""


def conversions(text: str) -> Iterator[tuple[str | None, int, str]]:
    """The %-conversions of `text`: name (None when it has none), the larger of its width and
    precision (-1 for a '*': given with the values), kind; a '%' that begins none is kind ''."""
    at = 0
    while (start := text.find("%", at)) >= 0:
        match = _CONVERSION.match(text, start)
        if match is None:
            yield None, 0, ""
            at = start + 1
            continue
        numbers = [match["width"], match["precision"]]
        widths = [-1 if n == "*" else int(n) if len(n) < 10 else 10**9 for n in numbers if n]
        if -1 in widths:
            widths = [-1]
        yield match["name"], max(widths, default=0), match["kind"]
        at = match.end()


def translation_problem(message: str, translated: str, plural: bool) -> str | None:
    """What is wrong with `translated` as the translation of `message` (a plural one is also
    given %(num)s), or None."""
    given: dict[str | None, set[str]] = {}
    for name, _, kind in conversions(message):
        given.setdefault(name, set()).add(kind)
    if plural:
        given.setdefault("num", set()).update(_ANY_VALUE)
    for name, width, kind in conversions(translated):
        if width > WIDEST or width < 0:
            return f"a format width or precision over {WIDEST} in {translated[:60]!r}"
        if kind == "%":
            continue
        if name is None and kind and None not in given:
            return f"the placeholder without a name in {translated[:60]!r}"
        if name not in given:
            what = f"%({name})" if name is not None else "a % that begins no placeholder"
            return f"{what} in {translated[:60]!r}, which its sentence does not give"
        if kind not in _ANY_VALUE | given[name]:
            return f"the conversion %{kind} in {translated[:60]!r}, which its sentence does not use"
    return None


def catalogue_problem(catalogue: gettext.GNUTranslations) -> str | None:
    """What is wrong with a catalogue read from a file, or None (see the module)."""
    rule: Callable[[int], object] = catalogue.plural  # type: ignore[attr-defined]
    for n in COUNTS:
        try:
            form = rule(n)
        except Exception as err:  # noqa: BLE001 - the rule is the catalogue's own code
            return f"its plural rule fails for {n} ({type(err).__name__}: {err})"
        if not isinstance(form, int) or form < 0:
            return f"its plural rule gives {form!r} for {n}"
    entries: dict[object, str] = getattr(catalogue, "_catalog", {})
    for key, translated in entries.items():
        message, plural = (key[0], True) if isinstance(key, tuple) else (key, False)
        if not message:
            continue  # the header
        problem = translation_problem(str(message), str(translated), plural)
        if problem is not None:
            return f"the translation of {str(message)[:60]!r} has {problem}"
    return None


def own_catalogue(game_dir: Path, code: str, domain: str) -> gettext.GNUTranslations | None:
    """The game's own catalogue of language `code`, checked; None when it has none; raises
    CatalogueProblem naming the file and what to do (see the module)."""
    path = game_dir / "locale" / code / "LC_MESSAGES" / f"{domain}.mo"
    link = link_on_the_way(game_dir, path)
    if link is not None:
        raise CatalogueProblem(f"the catalogue of language {code}: {link_sentence(link)}")
    if not os.path.lexists(path):
        return None
    fix = "compile it again from its .po file (pybabel compile) and run the command again"
    try:
        raw = read_bounded(path, CATALOGUE_LIMIT, follow=False)
    except FileProblem as err:
        raise CatalogueProblem(f"cannot read the catalogue {path}: {err}") from None
    try:
        catalogue = gettext.GNUTranslations(io.BytesIO(raw))
    except Exception as err:  # noqa: BLE001 - a damaged file can fail in the parser anywhere
        raise CatalogueProblem(
            f"the catalogue {path} is damaged ({type(err).__name__}: {err}); {fix}"
        ) from None
    problem = catalogue_problem(catalogue)
    if problem is not None:
        raise CatalogueProblem(f"the catalogue {path} is refused: {problem}; fix it, then {fix}")
    return catalogue
