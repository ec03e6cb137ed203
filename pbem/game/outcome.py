"""What a resolution (or the setup of a new game) did, as a value, and the few lines the
terminal prints of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pbem.core.events import Event
from pbem.core.state import GameState, Phase
from pbem.game import bots
from pbem.game.checking import Submission
from pbem.languages.numbering import Played
from pbem.present.text import plural


@dataclass(frozen=True)
class Outcome:
    """What a resolution did: the new state, its events, the files used and those rejected."""

    resolution: int
    state: GameState
    events: tuple[Event, ...]
    used: tuple[Submission, ...] = ()
    rejected: tuple[Submission, ...] = ()
    recovered: bool = False
    reports: tuple[Path, ...] = field(default=())
    bots: tuple[bots.Answer, ...] = ()
    """What the bots of the seats the next turn awaits wrote (pbem.game.bots)."""


def played(outcome: Outcome) -> Played:
    """What the resolution of `outcome` played."""
    return Played.from_events(outcome.events, outcome.resolution)


def summary(outcome: Outcome) -> str:
    """A few lines for the terminal after a resolution."""
    state = outcome.state
    rolls = sum(1 for e in outcome.events if e.kind == "rolled")
    conquests = sum(1 for e in outcome.events if e.kind == "conquered")
    lines = [
        f"Resolved {state.game} {played(outcome).words()}: "
        f"{plural(len(outcome.events), 'event')}, {plural(rolls, 'roll')}, "
        f"{plural(conquests, 'territory', 'territories')} taken."
    ]
    from pbem.present.sentences import narrate

    lines += [
        narrate(e, None)
        for e in outcome.events
        if e.kind in ("missed_turn", "dropped", "mission_completed")
    ]
    if state.phase is Phase.OVER:
        lines.append(f"The game is over: {state.won_by} won.")
    else:
        lines.append(f"Turn {state.turn} awaits {', '.join(state.awaiting())}.")
    if outcome.reports:
        lines.append(f"Reports: {outcome.reports[0].parent}")
    lines += [a.describe() for a in outcome.bots]
    return "\n".join(lines)
