"""One numbering for players: the turn. A report, its subject and the order file speak of
turns; the history, the report folders and the dice key count resolutions. The two are tied
(docs/history.md): resolution 0 is the deal; in a dealt game resolution 1 is the setup turn
(turn 0) and resolution r the turn r - 1; in a game set up at random, resolution r is turn r."""

from __future__ import annotations

from collections.abc import Sequence

from pbem.core.events import Event, Reinforced
from pbem.present.i18n import _


def played(events: Sequence[Event], resolution: int) -> str:
    """What a resolution played, as players name it: "turn 10", "the setup turn", "the deal"."""
    if resolution == 0:
        return _("the deal")
    turn = next((e.turn for e in events if isinstance(e, Reinforced)), None)
    return _("turn %(turn)s", turn=turn) if turn is not None else _("the setup turn")
