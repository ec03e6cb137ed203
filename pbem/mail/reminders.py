"""Reminders: a player awaited without valid orders is told, at the times the `remind` setting
gives before the deadline ("24h, 2h"), that their turn is due, and how many more missed turns
would drop them. Each reminder is queued once (recorded in the mail state, `reminded`), so a
run again changes nothing; when several times have passed since the last run (cron was down),
only the latest is sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from pbem.core.state import Phase
from pbem.game import deadlines, processor
from pbem.mail.notices import deadline_words
from pbem.mail.records import address, queue
from pbem.mail.told import speaking
from pbem.present.text import wrapped_message
from pbem.records import clock
from pbem.records.deadline_changes import deadline_of
from pbem.records.disk import locked
from pbem.records.mailstate import MailState
from pbem.records.opening import read_game
from pbem.records.settings import Settings
from pbem.records.store import Game


@dataclass
class Reminded:
    """The reminders queued in a game's outbox."""

    queued: list[str] = field(default_factory=list)


def queue_reminders(directory: Path, settings: Settings, now: datetime) -> Reminded:
    """Queue the reminders due at `now` in a game's outbox (none without `remind`, without a
    deadline, or once the deadline has passed)."""
    out = Reminded()
    offsets = settings.remind
    if not offsets:
        return out
    with locked(directory):
        game = read_game(directory)
        deadline = deadline_of(game).at
        if deadline is None or now >= deadline:
            return out
        passed = [o for o in offsets if deadline - o <= now]
        if not passed:
            return out
        with MailState.open(directory) as state:
            done: list[str] = state.sent.setdefault("reminded", [])
            ready = {s.player for s in processor.readiness(game).used}
            # a player away whose turn the autopilot plays without a miss is not reminded
            ready |= set(deadlines.away_players(game, game.state.awaiting(), deadline))
            r = game.state.resolution
            for reg in game.registrations:
                player = game.state.player(reg.name)
                if reg.name not in game.state.awaiting() or reg.name in ready or not player.alive:
                    continue
                keys = [f"{r}/{reg.name}{reg.stint}/{clock.format_duration(o)}" for o in passed]
                if all(k in done for k in keys) or not address(reg.email):
                    continue
                name = _write(game, reg.name, address(reg.email), settings, deadline, now, keys[-1])
                for key in [k for k in keys if k not in done]:
                    state.append("sent", "reminded", key)
                state.commit()
                out.queued.append(name)
    return out


def _write(
    game: Game,
    player: str,
    to: str,
    settings: Settings,
    deadline: datetime,
    now: datetime,
    key: str,
) -> str:
    """One reminder in the outbox, in the player's language; its outbox name."""
    lang = speaking(game, player)
    _ = lang._
    when = deadline_words(game, lang, now, deadline) or ""
    turn = game.state.turn
    phase = game.state.phase
    if phase is Phase.DRAFT:
        body = _(
            "Your ranked list for the draft of %(game)s is due by %(when)s, and pbem has no "
            "valid orders from you yet.",
            game=game.name,
            when=when,
        )
        body += "\n\n" + _(
            "Send it before the deadline: at the deadline each of your picks is made by the "
            "fill-in rule."
        )
    else:
        body = (
            _(
                "Your orders for the setup turn of %(game)s are due by %(when)s, and pbem has no "
                "valid orders from you yet.",
                game=game.name,
                when=when,
            )
            if phase is Phase.SETUP
            else _(
                "Your orders for turn %(turn)s of %(game)s are due by %(when)s, and pbem has no "
                "valid orders from you yet.",
                turn=turn,
                game=game.name,
                when=when,
            )
        )
        body += "\n\n" + _(
            "Send them before the deadline: at the deadline the autopilot plays for you (it only "
            "places your armies)."
        )
    drop = game.state.options.drop_after
    missed = game.state.player(player).missed
    if drop:
        left = drop - missed
        body += "\n\n" + (
            _("If you miss this turn, you leave the game.")
            if left <= 1
            else lang.n_(
                "If you miss this turn, you may miss %(num)s more in a row before you leave "
                "the game.",
                "If you miss this turn, you may miss %(num)s more in a row before you leave "
                "the game.",
                left - 1,
            )
        )
    body = wrapped_message(body) + "\n"
    subject = {
        Phase.DRAFT: _("reminder: the draft is due by %(when)s", when=when),
        Phase.SETUP: _("reminder: the setup turn is due by %(when)s", when=when),
    }.get(phase) or _("reminder: turn %(turn)s is due by %(when)s", turn=turn, when=when)
    return queue(game.path, game.name, settings.sender, to, "remind", key, subject, body, now)
