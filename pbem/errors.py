"""The errors a user can cause, each with a message they can act on.

The command line turns any `PbemError` into a one-line message and a non-zero exit code.
"""

from __future__ import annotations

from typing import Any

from pbem.terminal import quoted


class PbemError(Exception):
    """Base of every error caused by input: order files, game files, arguments."""


class BoardError(PbemError):
    """A board's data is inconsistent (asymmetric border, territory in no continent, ...)."""


class UnknownTerritory(PbemError):
    """A name that matches no territory; carries the nearest name to suggest."""

    def __init__(self, text: str, suggestion: str | None) -> None:
        self.text = text
        self.suggestion = suggestion
        hint = f"; did you mean '{suggestion}'?" if suggestion else ""
        super().__init__(f"unknown territory '{quoted(text)}'{hint}")

    def problem(self, line: int | None) -> Problem:
        """This error as a problem of an order file, to be told in the player's language."""
        if self.suggestion:
            return Problem.of(
                "unknown territory '%(name)s'; did you mean '%(territory)s'?",
                line,
                name=quoted(self.text),
                territory=self.suggestion,
            )
        return Problem.of("unknown territory '%(name)s'", line, name=quoted(self.text))


class OrderError(PbemError):
    """An order file that cannot be accepted; lists every problem found, each with its line."""

    def __init__(
        self,
        problems: list[Problem],
        source: str = "orders",
        partial: Any = None,
        dropped_attack: bool = False,
    ) -> None:
        self.problems = problems
        self.source = source
        self.partial = partial
        """The orders without the entries that failed (pbem.core.orders.Orders), when the
        header could be read: checking goes on with them, so that one mistake does not hide
        another."""
        self.dropped_attack = dropped_attack
        """Whether an attack was left out of `partial` (a later one may start from its target)."""
        super().__init__("\n".join(p.format(source) for p in problems))


class Problem:
    """One thing wrong in an order file: a message and the line it came from (if known)."""

    __slots__ = ("message", "line", "template", "values")

    def __init__(
        self,
        message: str,
        line: int | None = None,
        template: str | None = None,
        values: dict[str, str | int] | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.template = template
        """The message with %(name)s placeholders (a catalogue entry), when it has one."""
        self.values = values or {}

    @classmethod
    def of(cls, template: str, line: int | None = None, **values: str | int) -> Problem:
        """A problem whose message is `template` filled with `values`, kept apart so that a
        player's language can tell it (pbem.languages.i18n)."""
        return cls(template % values, line, template, values)

    def format(self, source: str = "orders") -> str:
        where = f"{source} line {self.line}" if self.line else source
        return f"{where}: {self.message}"

    def __repr__(self) -> str:
        return f"Problem({self.message!r}, line={self.line!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Problem) and (self.message, self.line) == (
            other.message,
            other.line,
        )

    def __hash__(self) -> int:
        return hash((self.message, self.line))


class GameFileError(PbemError):
    """The game directory or one of its files is missing, unreadable or inconsistent."""


class LockedError(PbemError):
    """Another run holds the game's lock."""


class AuditError(PbemError):
    """The history does not replay to what was recorded."""


class DiskError(PbemError):
    """A write the disk refused (full, read-only, no permission) or a lock file that is not one;
    the message names the path and what to do, and a re-run after the fix completes the work."""
