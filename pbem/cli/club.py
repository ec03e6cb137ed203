"""The club: what spans the games of a root (standings and ratings)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pbem.cli.common import echo, reports_errors


@click.command(
    name="standings", short_help="Players' standings and ratings over a folder of games."
)
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the standings as JSON.")
@reports_errors
def standings_command(root: Path, as_json: bool) -> None:
    """The standings of the players of ROOT (a folder of games, or one game), worked out from
    the games' histories alone: games played, finished and won (by conquest, mission, rounds
    or team), turns played and missed, and a rating (openskill's Plackett-Luce, every finished
    game rated in the order it ended). A game whose history cannot be read is listed as
    skipped, with the reason; docs/standings.md tells how to work it all out again.

    \b
    Examples:
      pbem standings games
      pbem standings games --json
    """
    from pbem.club.standings import standings
    from pbem.club.standings_text import standings_text

    table = standings(root)
    if as_json:
        click.echo(json.dumps(table.to_dict(), indent=2, ensure_ascii=False))
    else:
        echo("\n".join(standings_text(table)))
