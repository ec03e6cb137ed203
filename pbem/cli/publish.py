"""`pbem publish`: a finished game's public record, or the club's pages of a folder of games."""

from __future__ import annotations

from pathlib import Path

import click

from pbem.cli.common import GAME_DIR, NOW, echo, instant, reports_errors


@click.command(short_help="A finished game's public record, or a club's pages.")
@click.argument("source", type=GAME_DIR)
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--lang",
    "language",
    default="en",
    show_default=True,
    help="For a folder of games: the language of the club's pages (en, id, sv, it, nl, gu).",
)
@click.option(
    "--club", help="For a folder of games: the club's name on its pages (default: its folder's)."
)
@NOW
@reports_errors
def publish_command(
    source: Path, out: Path, language: str, club: str | None, now: str | None
) -> None:
    """Write the public record of the finished game SOURCE into the folder OUT: its history
    without the players' secrets and addresses, and the keys that check every die, card and
    mission. Anyone audits it with 'pbem audit OUT'. A running game is refused: its record
    would give away the dice to come.

    When SOURCE is a folder of games, write the club's pages into OUT: an index of the games
    with the standings and tournaments, and a page per game with the board after every turn,
    its story and charts, and the record of every finished game to download. Running games
    show what every player may see. Open OUT/index.html, or serve OUT as it is
    (docs/publish.md).

    \b
    Examples:
      pbem publish games/spring-2027 public/spring-2027
      pbem publish games /var/www/club --lang sv --club "Risk i Lund"
    """
    from pbem.records.disk import GAME_FILE

    if not (source / GAME_FILE).is_file():
        from pbem.club.site import publish_site
        from pbem.languages.i18n import check_language

        site = publish_site(source, out, instant(now), check_language(language, "--lang"), club)
        echo("\n".join(site.lines()))
        return
    from pbem.game.record import publish_record

    done = publish_record(source, out, instant(now))
    echo(
        f"Published the record of {done.game} ({done.resolutions} resolutions) in {done.out}: "
        f"anyone can check it with 'pbem audit {done.out}'"
    )
