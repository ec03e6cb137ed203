"""Tournaments: rounds of games in a folder of games (docs/tournaments.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pbem.cli.common import NOW, echo, instant, reports_errors
from pbem.cli.turn import board_named, game_options
from pbem.cli.turn import new as _new_game_command
from pbem.errors import PbemError

if TYPE_CHECKING:
    from pbem.club.tournament_file import GameSettings

ROOT = click.Path(file_okay=False, path_type=Path)

PASSED = (
    "board",
    "setup",
    "missions",
    "two_player",
    "fortify",
    "cards",
    "no_territory_bonus",
    "fortifies",
    "fog",
    "traded_cards",
    "language",
    "turn_time",
    "due_at",
    "zone",
    "vacation",
    "vacation_mode",
    "substitute_within",
    "drop_after",
)
"""The options of `pbem new` that `pbem tournament new` takes, as `pbem new` defines them, for
every game of the tournament (its --rounds is --game-rounds here: --rounds counts a Swiss
tournament's rounds)."""


class _NewByDefault(click.Group):
    """`pbem tournament ROOT NAME ...` is `pbem tournament new ROOT NAME ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["new", *args]
        return super().parse_args(ctx, args)


@click.group(
    name="tournament",
    cls=_NewByDefault,
    short_help="Tournaments: rounds of games made as the games end.",
    invoke_without_command=True,
)
@click.pass_context
def tournament_command(ctx: click.Context) -> None:
    """Round-robin and Swiss tournaments in a folder of games: the games of each round, made
    with pbem new's options, and the next round once every game of a round is over ('pbem run'
    makes it). 'pbem tournament ROOT NAME ...' is 'pbem tournament new ROOT NAME ...'.
    """
    if ctx.invoked_subcommand is None:  # bare `pbem tournament`: its help, and success
        click.echo(ctx.get_help())


@tournament_command.command(name="new", short_help="Create a tournament and its first round.")
@click.argument("root", type=ROOT)
@click.argument("name")
@click.option(
    "--players",
    help="Comma-separated names, each optionally with an address and a language, in the "
    "order of their seeding: ann=ann@example.org:it,ben,cy",
)
@click.option(
    "--player",
    "player_items",
    multiple=True,
    metavar="NAME[=EMAIL][:LANG]",
    help="One player (repeat for each), after those of --players.",
)
@click.option(
    "--format",
    "system",
    type=click.Choice(["round-robin", "swiss"]),
    required=True,
    help="round-robin: every player meets every other; swiss: players with the same points "
    "meet, round after round.",
)
@click.option(
    "--table-size",
    type=click.IntRange(min=2, max=6),
    default=4,
    show_default=True,
    help="Players at each game; tables as even as possible when the players do not divide.",
)
@click.option(
    "--rounds",
    type=click.IntRange(min=1),
    help="Swiss: how many rounds (default: enough for one player to win every game).",
)
@click.option(
    "--game-rounds",
    type=click.IntRange(min=0),
    default=0,
    help="End every game after this many rounds of play (pbem new --rounds; 0, the default: "
    "play until someone wins).",
)
@NOW
@reports_errors
def new_tournament(
    root: Path,
    name: str,
    players: str | None,
    player_items: tuple[str, ...],
    system: str,
    table_size: int,
    rounds: int | None,
    game_rounds: int,
    now: str | None,
    **game: Any,
) -> None:
    """Create tournament NAME in ROOT (a folder of games): ROOT/tournaments/NAME.toml, and the
    games of round 1, ROOT/NAME-r1-t1, ... Every game is made as 'pbem new' makes one, with
    the options given here. 'pbem run ROOT' makes each next round once every game of a round
    is over.

    \b
    Examples:
      pbem tournament new games spring --format round-robin --table-size 4 \\
        --players ann=ann@example.org,ben=ben@example.org,cy,dee,eve,fay,gus,hal
      pbem tournament games autumn --format swiss --rounds 3 --players a,b,c,d,e,f,g,h,i \\
        --turn-time 48h --due-at 20:00 --timezone Europe/Rome --board islands
    """
    from pbem.club import tournament

    items = [p for p in (players or "").split(",") if p.strip()] if players else []
    entrants = tournament.parse_entrants([*items, *player_items])
    if not entrants:
        raise PbemError("give the players: --players ann,ben,... or --player ann=ADDRESS ...")
    made = tournament.create_tournament(
        root,
        name,
        entrants,
        system,
        table_size,
        instant(now),
        rounds,
        _settings(game_rounds, game),
    )
    kind = "Swiss" if system == "swiss" else "round-robin"
    echo(
        f"Created tournament '{made.name}' ({tournament.tournament_path(root, made.name)}): "
        f"{len(made.players)} players, {kind} at tables of {table_size}, "
        f"{made.round_count} rounds."
    )
    echo(f"Round 1: {made.rounds[0].listed()}")
    echo(
        "Each game's first reports are in its reports/ folder ('pbem mail send "
        f"{root}' mails them); 'pbem run {root}' makes the next round when the last game of "
        "this one is over."
    )


for _name in PASSED:  # pbem new's own options, its checks and help with them
    new_tournament.params.insert(
        len(new_tournament.params) - 1,
        copy.copy(next(p for p in _new_game_command.params if p.name == _name)),
    )


def _settings(game_rounds: int, game: dict[str, Any]) -> GameSettings:
    """The GameSettings of `pbem new`'s options, read as `pbem new` reads them."""
    from pbem.club.tournament_file import GameSettings
    from pbem.game import deadlines

    schedule = deadlines.schedule_from_options(
        game["turn_time"],
        game["due_at"],
        game["zone"],
        game["vacation"],
        game["vacation_mode"],
        game["substitute_within"],
    )
    options = game_options(game, game_rounds)
    board = board_named(game["board"])
    return GameSettings(options, schedule, board, game["language"])


@tournament_command.command(name="show", short_help="The rounds, games, results and points.")
@click.argument("root", type=ROOT)
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON (for pages).")
@reports_errors
def show_tournament(root: Path, name: str, as_json: bool) -> None:
    """Show tournament NAME of ROOT: each round's games with their players in seat order,
    where each game stands or how it ended, then the standings (points, then the tie-break).

    \b
    Examples:
      pbem tournament show games spring
      pbem tournament show games spring --json
    """
    from pbem.club import tournament

    data = tournament.tournament_table(root, name)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        echo("\n".join(tournament.table_lines(data)))


@tournament_command.command(name="list", short_help="The tournaments of a folder of games.")
@click.argument("root", type=ROOT)
@reports_errors
def list_tournaments(root: Path) -> None:
    """List the tournaments of ROOT, one line each: its format and where it stands.

    \b
    Example:
      pbem tournament list games
    """
    from pbem.club import tournament

    names = tournament.list_tournaments(root)
    if not names:
        echo(f"No tournament in {root}.")
    for name in names:
        try:
            data = tournament.tournament_table(root, name)
        except PbemError as err:
            echo(f"{name}: {err}")
            continue
        echo(tournament.table_lines(data)[0].removeprefix("Tournament "))


@tournament_command.command(name="advance", short_help="Make the rounds that are due now.")
@click.argument("root", type=ROOT)
@NOW
@reports_errors
def advance_tournaments(root: Path, now: str | None) -> None:
    """Record the games that are over and make each round that is due: the next round of a
    tournament whose last round is over, or the games a stopped run left unmade. 'pbem run
    ROOT' does this after resolving the games; this is for a root without one.

    \b
    Example:
      pbem tournament advance games
    """
    from pbem.club import tournament

    lines = tournament.advance_tournaments(root, instant(now))
    echo("\n".join(lines) if lines else "No round to make: every tournament waits for games.")
