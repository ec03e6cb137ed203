"""`pbem publish`: a finished game's public record, or the club's pages of a folder of games."""

from __future__ import annotations

from pathlib import Path

import click

from pbem.cli.common import GAME_DIR, NOW, echo, instant, reports_errors


@click.command(short_help="Write a finished game's public record (or a club's pages).")
@click.argument("source", type=GAME_DIR)
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@NOW
@reports_errors
def publish_command(source: Path, out: Path, now: str | None) -> None:
    """Write the public record of the finished game SOURCE into the folder OUT: its history
    without the players' secrets and addresses, and the keys that check every die, card and
    mission. Anyone audits it with 'pbem audit OUT' (docs/publish.md). A running game is
    refused: its record would give away the dice to come.

    \b
    Example:
      pbem publish games/spring-2027 public/spring-2027
    """
    from pbem.game.record import publish_record

    done = publish_record(source, out, instant(now))
    echo(
        f"Published the record of {done.game} ({done.resolutions} resolutions) in {done.out}: "
        f"anyone can check it with 'pbem audit {done.out}'"
    )
