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
    from pbem.present.context import deadline_iso, deadline_text
    from pbem.present.view import game_view
    from pbem.records.opening import read_game

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
    from pbem.present.json_text import json_list_pieces

    entries = processor.dice_entries(directory, resolution, turn)
    if as_json:  # (written entry by entry: a long game's list is never held whole)
        for piece in json_list_pieces(entries):
            click.echo(printable(piece, lines=True), nl=False)
        click.echo()
        return
    for entry in entries:
        for line in processor.dice_lines([entry]):
            echo(line)


@click.command(name="press", short_help="List the table talk players sent each other.")
@click.argument("directory", type=GAME_DIR)
@click.option("--player", help="Only what this player sent or was sent, as they were told it.")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON (docs/press.md).")
@reports_errors
def press_command(directory: Path, player: str | None, as_json: bool) -> None:
    """List the game's table talk: every message players mailed each other through it, with
    its sender (also when its readers were not told), its readers and its text. With --player,
    only what that player may read. At the end of a game, the whole record can be published.

    \b
    Examples:
      pbem press games/spring-2027
      pbem press games/spring-2027 --player alice --json
    """
    from pbem.core.state import same_name
    from pbem.present.talk import press_view, record_lines
    from pbem.records.opening import read_game
    from pbem.records.press import press_records

    game = read_game(directory)
    reg = next((r for r in game.registrations if player and same_name(r.name, player)), None)
    if player is not None and reg is None:
        raise PbemError(f"there is no player '{player}' in this game")
    seat = None if reg is None else reg.name
    records = press_records(directory)
    if as_json:
        data = [p.to_dict() for p in records] if seat is None else press_view(records, seat)
        echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    lines = record_lines(records, seat)
    echo(f"{game.name}: no table talk yet" if not lines else "\n".join(lines))


@click.command(short_help="Replay the history; check every event, die and key.")
@click.argument("directory", type=GAME_DIR)
@click.option(
    "--report",
    "reports",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A report's .view.json, checked against the history (repeat for more).",
)
@click.option(
    "--commitment", help="The commitment of the game's first report, checked to be the game's."
)
@reports_errors
def audit(directory: Path, reports: tuple[Path, ...], commitment: str | None) -> None:
    """Replay the whole history and check every event, die and key against it. DIRECTORY is a
    game, or a finished game's public record ('pbem publish').

    With --report, check that the history holds what those reports told (the key, every roll,
    the order files' digests, the board); with --commitment, that its key chain ends in the
    commitment of the game's first report: what ties a public record to the game its players
    played.

    \b
    Examples:
      pbem audit games/spring-2027
      pbem audit spring-record --report ann.view.json --commitment 94b9ae9b...
    """
    from pbem.game import processor

    echo(processor.audit_game(directory).passed())
    if reports or commitment:
        from pbem.game.record import check_against_report, check_commitment

        if commitment is not None:
            echo(check_commitment(directory, commitment))
        for path in reports:
            echo(check_against_report(directory, path))


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
    from pbem.records.opening import read_game

    if (directory is None) == (view_file is None):
        raise PbemError("give a game directory or --view FILE (one of them)")
    if view_file is not None:
        numbers, lines = stats.view_stats(view_file)
    else:
        assert directory is not None
        numbers = stats.directory_stats(read_game(directory))
        lines = stats.stats_text(numbers)
    echo(json.dumps(numbers, indent=2, ensure_ascii=False) if as_json else "\n".join(lines))
