"""The reasons and notes the engine records inside events, told in the reader's language.

The history keeps them as the engine wrote them, in English ("Ural is down to 1 (stop at
3)"), and must keep doing so: old histories are audited against them. So they are translated
when a report is written: each known shape below is an English sentence with placeholders, the
same sentence the engine fills in, and a catalogue entry; a recorded text that matches a shape
is told with that entry and the values it carried (territories by the reader's names). A text
of no known shape (a game written by another version) stays as it was recorded. The reasons the
TOML reader gives for a file that is not valid TOML are told the same way.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import re
from collections.abc import Iterator

from pbem.errors import Problem
from pbem.languages.i18n import Language, _, current, place, speaking

_PLACES = ("territory", "source", "target")
"""The placeholders that hold a territory's name."""
_DAYS = ("start", "end", "today")
"""The placeholders that hold a day (YYYY-MM-DD), told as the reader writes days."""
_A_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _shapes() -> tuple[str, ...]:
    # Each string is a catalogue entry (marked with `_` for the extractor) and, in English,
    # exactly what pbem.core.engine, pbem.core.rules and pbem.core.orders record.
    return (
        _("you do not hold %(territory)s"),
        _("you already hold %(territory)s"),
        _("%(source)s has only 1 army: an attack needs 2"),
        _("%(source)s has %(armies)s armies (stop at %(stop)s)"),
        _("%(source)s is down to %(armies)s (stop at %(stop)s)"),
        _("%(source)s is down to %(armies)s"),
        _("fortify needs two different territories"),
        _("%(source)s has only 1 army: one must stay behind"),
        _("no chain of your territories leads from %(source)s to %(target)s"),
        _("no chain of your team's territories leads from %(source)s to %(target)s"),
        _("neither you nor a team-mate holds %(territory)s"),
        _("%(player)s, your team-mate, holds %(territory)s"),
        _("a game with fog allows %(most)s attacks on %(target)s from %(source)s a turn"),
        _("%(source)s and %(target)s are not adjacent"),
        _("this game has no fortification"),
        _("the draw pile and the discard pile are empty: every card is in a hand"),
        _("%(player)s was eliminated by %(by)s"),
        _("%(player)s left the game after missed turns"),
        _("asked to move %(asked)s, raised to %(moved)s: the dice of the last roll"),
        _("asked to move %(asked)s, cut to %(moved)s: one army stays behind"),
        _("1 die, not the %(wanted)s asked: with %(armies)s armies there, one must stay behind"),
        _(
            "%(rolled)s dice, not the %(wanted)s asked: with %(armies)s armies there, one "
            "must stay behind"
        ),
        _("place %(armies)s on %(territory)s"),
        # What the TOML reader says of a file that is not valid TOML (tomli and tomllib alike),
        # told inside "this is not valid TOML (...)"; values are quoted keys or characters.
        _("Cannot overwrite a value"),
        _("Escaped character is not a Unicode scalar value"),
        _("Expected '=' after a key in a key/value pair"),
        _("Expected ']' at the end of a table declaration"),
        _("Expected ']]' at the end of an array declaration"),
        _("Expected newline or end of document after a statement"),
        _("Invalid date or datetime"),
        _("Invalid hex value"),
        _("Invalid initial character for a key part"),
        _("Invalid statement"),
        _("Invalid value"),
        _("Unclosed array"),
        _("Unclosed inline table"),
        _("Unescaped '\\' in a string"),
        _("Unterminated string"),
        _("Cannot declare %(key)s twice"),
        _("Cannot mutate immutable namespace %(key)s"),
        _("Cannot redefine namespace %(key)s"),
        _("Duplicate inline table key %(key)s"),
        _("Found invalid character %(key)s"),
        _("Illegal character %(key)s"),
        _("Expected %(key)s"),
        _("attack %(target)s from %(source)s"),
        _("fortify %(target)s from %(source)s with all"),  # before the next, which takes "all"
        _("fortify %(target)s from %(source)s with %(armies)s"),
        # Why a vacation may not be (pbem.game.vacations.problem), and what one is.
        _(
            "game '%(game)s' has no deadlines: no turn is ever played for anyone, and there "
            "is nothing to wait for"
        ),
        _("game '%(game)s' is over"),
        _("%(player)s is out of the game"),
        _("this game allows no vacations"),
        _("the vacation ends (%(end)s) before it begins (%(start)s)"),
        _("the vacation ended already (%(end)s; today is %(today)s)"),
        _("the vacation ends too far ahead (%(end)s)"),
        _("the vacation begins more than %(days)s days ahead: declare it nearer the time"),
        _("a vacation lasts at most %(most)s days, not %(days)s"),
        _(
            "%(player)s is away from %(start)s to %(end)s already: a vacation may not overlap "
            "another"
        ),
        _(
            "%(days)s days are more than %(player)s's allowance left in this game: %(left)s of "
            "%(allowance)s days"
        ),
        _(
            "%(days)s days are more than %(player)s's allowance left in %(year)s: %(left)s of "
            "%(allowance)s days"
        ),
        _("%(player)s is away from %(start)s to %(end)s"),
    )


@functools.lru_cache(maxsize=1)
def _third_person_shapes() -> dict[str, str]:
    """`_third_person`'s shapes, in English (the catalogue entries), by the shape they tell."""
    from pbem.languages.i18n import DEFAULT, language, speaking

    with speaking(language(DEFAULT)):
        return _third_person()


@functools.lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    from pbem.languages.i18n import DEFAULT, language, speaking

    with speaking(language(DEFAULT)):  # the English shapes, whoever is reading
        shapes = _shapes()
    out = []
    for shape in shapes:
        parts = re.split(r"%\((\w+)\)s", shape)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts)
        )
        out.append((re.compile(regex + r"\Z"), shape))
    return tuple(out)


def _third_person() -> dict[str, str]:
    """The reasons that speak to the player who gave the order ("you do not hold Alaska"), as
    the moderator is told them of that player: the same shape with the player named."""
    return {
        "you do not hold %(territory)s": _("%(player)s does not hold %(territory)s"),
        "you already hold %(territory)s": _("%(player)s already holds %(territory)s"),
        "no chain of your territories leads from %(source)s to %(target)s": _(
            "no chain of territories held by %(player)s leads from %(source)s to %(target)s"
        ),
        "no chain of your team's territories leads from %(source)s to %(target)s": _(
            "no chain of territories held by %(player)s and team-mates leads from %(source)s "
            "to %(target)s"
        ),
        "neither you nor a team-mate holds %(territory)s": _(
            "neither %(player)s nor a team-mate holds %(territory)s"
        ),
        "%(player)s, your team-mate, holds %(territory)s": _(
            "%(mate)s, a team-mate of %(player)s, holds %(territory)s"
        ),
    }


_ABOUT: contextvars.ContextVar[str | None] = contextvars.ContextVar("pbem_about", default=None)


def told_of() -> str | None:
    """The player the moderator is being told of (inside `telling_of`), or None: a reader
    reads of themselves."""
    return _ABOUT.get()


@contextlib.contextmanager
def telling_of(player: str) -> Iterator[None]:
    """Inside, the reasons that speak to a player ("you do not hold Alaska") name `player`
    instead: the moderator reads them of that player ("alice does not hold Alaska")."""
    token = _ABOUT.set(player)
    try:
        yield
    finally:
        _ABOUT.reset(token)


def told(text: str | None) -> str:
    """`text` (a recorded reason, note or order) in the reader's language when its shape is
    known, as recorded otherwise; in the third person inside `telling_of`."""
    about = _ABOUT.get()
    if about is not None and text:
        for pattern, shape in _patterns():
            found = pattern.match(text)
            if found and shape in _third_person_shapes():
                values = {k: place(v) if k in _PLACES else v for k, v in found.groupdict().items()}
                if "player" in values:  # (the team-mate the reason names)
                    values["mate"] = values.pop("player")
                return current()._(_third_person_shapes()[shape], player=about, **values)
    if not text or (current().code == "en" and not _A_DAY.search(text)):
        return text or ""  # (in English, only a day is told otherwise than recorded)
    for pattern, shape in _patterns():
        found = pattern.match(text)
        if found:
            values = {
                k: place(v) if k in _PLACES else current().day(v) if k in _DAYS else v
                for k, v in found.groupdict().items()
            }
            return current()._(shape, **values)
    return text


def problem_told(lang: Language, problem: Problem, source: str = "orders") -> str:
    """A problem of an order file in `lang`, territories by this language's names
    (a problem without a catalogue entry keeps its English message)."""
    if problem.template is None:
        message = problem.message
    else:
        values = {
            k: lang.place(v) if k in _PLACES and isinstance(v, str) else v
            for k, v in problem.values.items()
        }
        if isinstance(values.get("reason"), str):  # the TOML reader's, in English
            with speaking(lang):
                values["reason"] = told(str(values["reason"]))
        message = lang._(problem.template, **values)
    if problem.line:
        return lang._(
            "%(file)s line %(line)s: %(message)s",
            file=source,
            line=problem.line,
            message=message,
        )
    return f"{source}: {message}"
