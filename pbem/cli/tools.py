"""Commands that need no game: the board, the odds of an attack, a check of the dice, the
player's kit."""

from __future__ import annotations

import json
from pathlib import Path

import click

from pbem.cli.common import GAME_DIR, echo, reports_errors


@click.command(name="map", short_help="Print the board, with the names orders accept.")
@click.argument("name", default="classic")
@click.option("--json", "as_json", is_flag=True, help="Print the board as JSON (docs/views.md).")
@reports_errors
def map_command(name: str, as_json: bool) -> None:
    """Print a board: continents, territories, borders, cards and the other names of each
    territory that orders accept.

    \b
    Example:
      pbem map classic --json
    """
    from pbem.core.board import load_board

    board = load_board(name)
    if as_json:
        echo(json.dumps(board.to_json(), indent=2))
        return
    echo("Orders accept each name in any case, with or without spaces, hyphens and dots,")
    echo("and the other names given after 'also'.")
    for continent in board.continents.values():
        echo(f"{continent.name} (+{continent.bonus})")
        for t in continent.territories:
            territory = board.territories[t]
            neighbours = ", ".join(territory.neighbours)
            echo(f"  {t} [{territory.card.value}]: {neighbours}")
            alternatives = board.alternatives(t)
            if alternatives:
                echo(f"    also: {', '.join(alternatives)}")


@click.command(name="odds", short_help="Exact odds of an attack.")
@click.argument("attackers", type=click.IntRange(min=1))
@click.argument("defenders", type=click.IntRange(min=1))
@click.option(
    "--stop-at",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Stop attacking when the attackers are down to this many armies.",
)
@click.option("--dice", type=click.IntRange(1, 3), help="Most dice the attacker rolls.")
@reports_errors
def odds_command(attackers: int, defenders: int, stop_at: int, dice: int | None) -> None:
    """Exact odds of an attack from ATTACKERS armies against DEFENDERS.

    \b
    Example:
      pbem odds 10 10 --stop-at 3
    """
    from pbem.languages.i18n import language, moderator_language, speaking
    from pbem.present.plan import odds_summary

    with speaking(language(moderator_language())):
        echo(odds_summary(attackers, defenders, stop_at, dice))


@click.command(name="verify", short_help="Check a resolution's key chain and dice.")
@click.argument("key", required=False)
@click.argument("previous_key", required=False)
@click.option(
    "--dice",
    "rolls",
    multiple=True,
    help='One roll, attacker/defender dice as rolled: "6 3 1/5 2". Repeat, in order.',
)
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Take the keys and rolls from a report: its .view.json or its .txt.",
)
@click.option(
    "--orders",
    "orders_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="With --report: the order file you sent for that turn, checked to be one the dice "
    "come from.",
)
@click.option(
    "--digest",
    "digests",
    multiple=True,
    help="With KEY: an order file's digest, as the report lists them (games whose dice follow "
    "the orders). Repeat, in order.",
)
@click.option("--again", help="With --digest: the salt of a turn played again after an undo.")
@click.option(
    "--previous",
    "previous_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="With --report in a game with fog: the view file of the report before it, whose "
    "commitment for the next turn this report's battles must lead to.",
)
@reports_errors
def verify_command(
    key: str | None,
    previous_key: str | None,
    rolls: tuple[str, ...],
    report_file: Path | None,
    orders_file: Path | None,
    digests: tuple[str, ...],
    again: str | None,
    previous_file: Path | None,
) -> None:
    """Check a resolution's dice: SHA-256(KEY) = PREVIOUS_KEY, and every die from KEY.

    The view file of a finished game with missions also has every mission checked against
    the card key it reveals.

    Exit code 0 when the key and every die check out, 1 when anything does not.

    \b
    Examples:
      pbem verify --report reports/0003-turn-2/alice.view.json
      pbem verify --report alice.view.json --orders alice-turn-2.toml
      pbem verify KEY PREVIOUS_KEY --dice "6 3 1/5 2" --dice "4 4/6"
      pbem verify KEY PREVIOUS_KEY --digest DIGEST --dice "6 3 1/5 2"
      pbem verify --report 0008-turn-7/ann.view.json --previous 0007-turn-6/ann.view.json
    """
    from pbem.present import verify

    try:
        lines, ok = verify.verify_lines(
            verify.Given(
                key, previous_key, rolls, report_file, orders_file, digests, again, previous_file
            )
        )
    except verify.ArgumentsError as err:
        raise click.UsageError(str(err)) from None
    echo("\n".join(lines))
    if not ok:
        raise SystemExit(1)


@click.command(name="kit", short_help="Write the player's kit, pbem-player.pyz.")
@click.argument("directory", type=GAME_DIR, default=".")
@reports_errors
def kit_command(directory: Path) -> None:
    """Write pbem-player.pyz into DIRECTORY (default: here): one file a player runs with any
    Python 3.10 or newer, nothing else installed, to check orders against the view.json of
    their report, work out odds and verify dice. `pbem mail send --kit` attaches it to the
    first report.

    \b
    Examples:
      pbem kit games/spring-2027
      python3 pbem-player.pyz check --view alice.view.json orders.toml
    """
    from pbem import kit

    path = kit.write_kit(directory)
    echo(f"Wrote {path} ({path.stat().st_size // 1024} KiB): players run it with")
    echo(f"  python3 {kit.KIT_NAME} check --view NAME.view.json ORDERS.toml")
