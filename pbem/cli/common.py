"""What every command of the command line shares: library errors turned into messages, the
printing of pbem's own lines, the common arguments and the time a command acts at.

Each command imports the library modules it uses inside its function, so that a command that
only checks or computes loads neither the reports (Jinja2) nor the rest: its start-up is what a
moderator waits for.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import click

from pbem.errors import PbemError
from pbem.terminal import printable

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Turn library errors into a clean message and exit code 1, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except PbemError as err:
            raise click.ClickException(printable(str(err), lines=True)) from None
        except OSError as err:  # a fault no library function foresaw: still a sentence
            from pbem.files import disk_error

            path = Path(err.filename) if err.filename else Path(".")
            raise click.ClickException(printable(str(disk_error(err, path, "use")))) from None

    return wrapper  # type: ignore[return-value]


def echo(text: str) -> None:
    """Print pbem's own lines; any control character in them (from a player) shown escaped."""
    click.echo(printable(text, lines=True))


GAME_DIR = click.Path(file_okay=False, path_type=Path)

NOW = click.option(
    "--now",
    metavar="ISO-TIME",
    help="The time to act at, e.g. 2026-12-03T20:00+01:00 (default: the system clock).",
)


def instant(text: str | None) -> datetime:
    """The time a command acts at: --now, or else the system clock (the one place read)."""
    from pbem.records import clock

    if text is None:
        return datetime.now(timezone.utc).replace(microsecond=0)
    return clock.parse_instant(text)
