"""Reminders: a player awaited without valid orders is told, at the times the `remind` setting
gives before the deadline ("24h, 2h"), that their turn is due, and how many more missed turns
would drop them. Each reminder is queued once (recorded in the mail state, `reminded`), so a
run again changes nothing; when several times have passed since the last run (cron was down),
only the latest is sent.

Whether a reminder is to be queued depends on the clock only through the deadline and the
`remind` times before it: `queue_reminders` also tells from when until when one would be queued
in the game as it stands (`Reminded.due_from`, `due_until`), which `pbem run --send` keeps, so
that a game whose files do not change is opened again only once that time comes
(pbem.mail.due)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
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
from pbem.records.store import Game, Registration


@dataclass
class Reminded:
    """The reminders queued in a game's outbox, and when a reminder is due in the game as it
    stands once they are queued."""

    queued: list[str] = field(default_factory=list)
    due_from: datetime | None = None
    """From this time until `due_until` (not included), a run would queue a reminder in the game
    as it stands: the earliest of the `remind` times before its deadline whose reminder is not
    yet queued for a player it is for. None: no reminder is due at any time until the game's
    files or settings change."""
    due_until: datetime | None = None
    """The deadline, after which no reminder is queued."""

    def due(self, now: datetime) -> bool:
        """Whether a run at `now` would queue a reminder in the game as it stood."""
        if self.due_from is None or self.due_until is None:
            return False
        return self.due_from <= now < self.due_until


def queue_reminders(directory: Path, settings: Settings, now: datetime) -> Reminded:
    """Queue the reminders due at `now` in a game's outbox (none without `remind`, without a
    deadline, or once the deadline has passed); and tell from when until when a reminder would
    be queued in the game as it is then (`Reminded.due`)."""
    out = Reminded()
    offsets = settings.remind
    if not offsets:
        return out
    with locked(directory):
        game = read_game(directory)
        deadline = deadline_of(game).at
        if deadline is None:
            return out
        r = game.state.resolution
        players = _awaited(game, deadline)

        def keys(reg: Registration, times: list[timedelta]) -> list[str]:
            return [f"{r}/{reg.name}{reg.stint}/{clock.format_duration(o)}" for o in times]

        passed = [o for o in offsets if deadline - o <= now] if now < deadline else []
        if not passed or not players:  # nothing to queue now: the mail state is only read
            done = _reminded(directory) if players else []
        else:
            with MailState.open(directory) as state:
                done = state.sent.setdefault("reminded", [])
                for reg in players:
                    wanted = keys(reg, passed)
                    if all(k in done for k in wanted):
                        continue
                    to = address(reg.email)
                    name = _write(game, reg.name, to, settings, deadline, now, wanted[-1])
                    for key in [k for k in wanted if k not in done]:
                        state.append("sent", "reminded", key)
                    state.commit()
                    out.queued.append(name)
        # the earliest time whose reminder some player still lacks (`passed` as it grows)
        pending = [
            deadline - o
            for reg in players
            for o, key in zip(offsets, keys(reg, offsets), strict=True)
            if key not in done
        ]
        if pending:
            out.due_from, out.due_until = min(pending), deadline
    return out


def _awaited(game: Game, deadline: datetime) -> list[Registration]:
    """The players a reminder is for: awaited, in the game, with an address, without valid
    orders in, and not away with the autopilot playing for them without a miss."""
    awaiting = game.state.awaiting()
    ready = {s.player for s in processor.readiness(game).used}
    ready |= set(deadlines.away_players(game, awaiting, deadline))
    return [
        reg
        for reg in game.registrations
        if reg.name in awaiting
        and reg.name not in ready
        and game.state.player(reg.name).alive
        and address(reg.email)
    ]


def _reminded(directory: Path) -> list[str]:
    """The reminders the mail state records as queued (read only: nothing is migrated)."""
    found = MailState.peek(directory, "reminded").sent.get("reminded", [])
    return [str(k) for k in found]


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
