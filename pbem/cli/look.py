"""Reading a game: its board and players, its dice, its audit, its story."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pbem.cli.common import GAME_DIR, echo, reports_errors
from pbem.errors import PbemError
from pbem.terminal import printable


@click.command(short_help="Show the board and the players.")
@click.argument("directory", type=GAME_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print the view as JSON (docs/views.md).")
@click.option("--player", help="Show only what this player may see.")
@reports_errors
def show(directory: Path, as_json: bool, player: str | None) -> None:
    """Show a game's state, for the moderator or as one player may see it.

    \b
    Examples:
      pbem show games/spring-2027
      pbem show games/spring-2027 --json --player alice
    """
    from pbem.game import processor
    from pbem.game.store import read_game
    from pbem.present.context import deadline_iso, deadline_text
    from pbem.present.view import game_view

    game = read_game(directory)
    if player is not None and not game.state.has_player(player):
        raise PbemError(f"there is no player '{player}' in this game")
    view = game_view(game.state, player, game.commitment, deadline_iso(game))
    if as_json:
        echo(json.dumps(view, indent=2, ensure_ascii=False))
    else:
        click.echo(
            printable(
                processor.show_table(game.state, view, deadline_text(game, None)),
                lines=True,
            ),
            nl=False,
        )


@click.command(name="dice", short_help="List every die rolled, with its key.")
@click.argument("directory", type=GAME_DIR)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON (docs/views.md).")
@click.option("--turn", type=click.IntRange(min=0), help="Only this turn (0: the setup turn).")
@click.option("--resolution", type=int, help="Only this resolution (history/NNNN.toml).")
@reports_errors
def dice_command(directory: Path, as_json: bool, turn: int | None, resolution: int | None) -> None:
    """List every die rolled, turn by turn, with its key.

    \b
    Examples:
      pbem dice games/spring-2027 --turn 13
      pbem dice games/spring-2027 --resolution 14
    """
    from pbem.game import processor

    history = processor.dice_history(directory, resolution, turn)
    if as_json:
        echo(json.dumps(history, indent=2))
        return
    for line in processor.dice_lines(history):
        echo(line)


@click.command(short_help="Replay the history; check every event, die and key.")
@click.argument("directory", type=GAME_DIR)
@reports_errors
def audit(directory: Path) -> None:
    """Replay the whole history and check every event, die and key against it.

    \b
    Example:
      pbem audit games/spring-2027
    """
    from pbem.game import processor

    echo(processor.audit_game(directory).passed())


@click.command(name="stats", short_help="The story of a game, with each player's luck.")
@click.argument("directory", type=GAME_DIR, required=False)
@click.option(
    "--view",
    "view_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A player's .view.json from a report, instead of a game directory.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the numbers as JSON.")
@reports_errors
def stats_command(directory: Path | None, view_file: Path | None, as_json: bool) -> None:
    """The story of a game: its length, who eliminated whom, territories and armies over
    time, the biggest battles, the cards traded, and each player's luck with the dice.

    \b
    Examples:
      pbem stats games/spring-2027
      pbem stats --view alice.view.json
    """
    from pbem.present import stats

    if (directory is None) == (view_file is None):
        raise PbemError("give a game directory or --view FILE (one of them)")
    if view_file is not None:
        numbers, lines = stats.view_stats(view_file)
    else:
        assert directory is not None
        numbers = stats.directory_stats(directory)
        lines = stats.stats_text(numbers)
    echo(json.dumps(numbers, indent=2, ensure_ascii=False) if as_json else "\n".join(lines))
