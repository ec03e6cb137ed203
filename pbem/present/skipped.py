"""How a skipped order is told: to its own player, in the second person; to the moderator, in
the third. Nobody else is told (at a table, nobody sees the attacks a player did not make)."""

from __future__ import annotations

from pbem.core.events import Skipped
from pbem.languages.i18n import _
from pbem.languages.reasons import telling_of, told


def skipped_sentence(event: Skipped, viewer: str | None) -> str:
    """The sentence for `viewer` (None: the moderator); the engine's reason speaks to the
    player ("you do not hold Alaska")."""
    if viewer == event.player:
        return _(
            "Your order to %(order)s was skipped: %(reason)s.",
            order=told(event.order),
            reason=told(event.reason),
        )
    with telling_of(event.player):
        reason = told(event.reason)
    return _(
        "%(player)s's order to %(order)s was skipped: %(reason)s.",
        player=event.player,
        order=told(event.order),
        reason=reason,
    )
