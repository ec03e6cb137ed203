"""Whether the pending turn can be resolved: its order files checked, one accepted file for
each awaited player, and, when it cannot, why not (`NotReady`, with every file rejected and
every player still to send).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pbem.errors import PbemError
from pbem.game.check import check_submission
from pbem.game.checking import Submission, with_duplicates
from pbem.records.history import order_files
from pbem.records.store import Game


class NotReady(PbemError):
    """The pending turn cannot be resolved yet: an awaited player has no valid orders."""


@dataclass(frozen=True)
class Readiness:
    """The order files of the pending turn as checked: one accepted file per awaited player
    (`used`), the files rejected, the awaited players with no valid file (`missing`) and those
    with more than one (`doubled`, a message each)."""

    used: tuple[Submission, ...]
    rejected: tuple[Submission, ...]
    missing: tuple[str, ...]
    doubled: tuple[str, ...]
    turn: int

    @property
    def ready(self) -> bool:
        return not self.missing and not self.doubled

    @property
    def problems(self) -> list[str]:
        return [
            f"no valid orders from {name} for turn {self.turn}" for name in self.missing
        ] + list(self.doubled)


def readiness(game: Game, paths: Sequence[Path] | None = None) -> Readiness:
    """Check the order files (those given, or orders/) against the pending turn."""
    files = list(paths) if paths else order_files(game.path)
    checked = [check_submission(game, p) for p in files]
    accepted = [s for s in checked if s.accepted]
    rejected = [s for s in checked if not s.accepted]
    missing: list[str] = []
    doubled: list[str] = []
    used: list[Submission] = []
    for name in game.state.awaiting():
        mine = [s for s in accepted if s.player == name]
        if not mine:
            missing.append(name)
        elif len(mine) > 1:
            doubled.append(with_duplicates(mine)[0].problems[0].message)
        else:
            used.append(mine[0])
    return Readiness(tuple(used), tuple(rejected), tuple(missing), tuple(doubled), game.state.turn)


def choose(
    game: Game, paths: Sequence[Path] | None
) -> tuple[list[Submission], list[Submission], list[str]]:
    """One accepted order file per awaited player, and the players with none; NotReady when
    a player sent two valid files."""
    found = readiness(game, paths)
    used, rejected, missing = list(found.used), list(found.rejected), list(found.missing)
    if found.doubled:
        raise NotReady("\n".join(why_not_ready(game, rejected, missing, found.doubled)))
    return used, rejected, missing


def why_not_ready(
    game: Game, rejected: Sequence[Submission], missing: Sequence[str], more: Sequence[str]
) -> list[str]:
    """Why a turn cannot be resolved: the files rejected, the players with no valid orders,
    and what else there is to say."""
    lines = [m for s in rejected for m in s.messages()]
    lines += [f"no valid orders from {n} for turn {game.state.turn}" for n in missing]
    return [*lines, *more]
