"""What the moderator changed, told to the players: an undo (the turn is to be played again, and
why) and a moved deadline (the new one, and why), each a short message in the outbox, in each
player's language, to every living player with an address. `pbem mail send` (or `pbem run
--send`) delivers them. The same change told twice (a command run again after a crash) is the
same message, by the same name."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from pbem.core.state import Phase
from pbem.languages import i18n
from pbem.mail.records import address, queue
from pbem.mail.told import speaking
from pbem.records import clock
from pbem.records.opening import read_game
from pbem.records.settings import Settings
from pbem.records.store import Game


def deadline_words(
    game: Game, lang: i18n.Language, now: datetime, deadline: datetime | None = None
) -> str | None:
    """A deadline (the game's pending one by default) as a player reads it, in the game's
    zone and the player's language, with how far it is from `now`."""
    deadline = deadline or game.deadline
    if deadline is None or game.schedule is None:
        return None
    zone = game.schedule.zone
    if lang.code == i18n.DEFAULT:
        return clock.describe(deadline, zone, now)
    return lang.deadline(deadline.astimezone(zone), now)


def tell_undo(directory: Path, settings: Settings, now: datetime, why: str, key: str) -> list[str]:
    """Tell every player that the last turn was taken back (it is played again); the outbox
    names written. `key` names the undo (its resolution and attempt)."""

    def words(game: Game, lang: i18n.Language) -> tuple[str, str]:
        _ = lang._
        turn = game.state.turn
        body = _(
            "The moderator took back turn %(turn)s of %(game)s: %(why)s. It will be played "
            "again; the report you had of it no longer counts, and a new one follows.",
            turn=turn,
            game=game.name,
            why=why,
        )
        due = deadline_words(game, lang, now)
        if due is not None:
            body += "\n\n" + _("Turn %(turn)s is due by %(when)s.", turn=turn, when=due)
        body += "\n\n" + _(
            "Orders sent for it stand; to change yours, send them again before it is played."
        )
        if game.state.options.dice_by_orders and game.state.phase in (Phase.PLAY, Phase.DRAFT):
            body += " " + _(
                "The same orders roll the same dice as the first time; other orders roll other "
                "dice, which nobody could work out from the first report."
            )
        return _("turn %(turn)s taken back: %(why)s", turn=turn, why=why), body

    return _tell(directory, settings, now, f"undo/{key}", words)


def tell_deadline(
    directory: Path, settings: Settings, now: datetime, why: str, key: str
) -> list[str]:
    """Tell every player that the pending turn's deadline moved, and why; `key` names the
    change (its resolution and number)."""

    def words(game: Game, lang: i18n.Language) -> tuple[str, str]:
        from pbem.languages.reasons import told

        _ = lang._
        turn = game.state.turn
        due = deadline_words(game, lang, now) or ""
        with i18n.speaking(lang):  # a vacation's words in the reader's language
            shown = told(why)
        body = _(
            "The deadline of turn %(turn)s of %(game)s has moved: it is now due by %(when)s "
            "(%(why)s).",
            turn=turn,
            game=game.name,
            when=due,
            why=shown,
        )
        return _("turn %(turn)s now due by %(when)s", turn=turn, when=due), body

    return _tell(directory, settings, now, f"deadline/{key}", words)


Words = Callable[[Game, i18n.Language], tuple[str, str]]
"""A notice's subject and text for a game, in a language."""


def _tell(directory: Path, settings: Settings, now: datetime, key: str, say: Words) -> list[str]:
    game = read_game(directory)
    names = []
    for reg in game.registrations:
        player = game.state.player(reg.name)
        if not player.alive or not address(reg.email):
            continue
        subject, body = say(game, speaking(game, reg.name))
        to, kind = address(reg.email), "notice"
        name = queue(
            directory, game.name, settings.sender, to, kind, f"{key}/{reg.name}",
            subject, body + "\n", now,
        )  # fmt: skip
        names.append(name)
    return names
