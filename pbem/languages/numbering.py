"""One numbering for players: the turn. A report, its subject, its folder, the order file and
every command speak of turns; the history, the dice key and the used order files
(`orders/done/NNNN/`) count resolutions, one per run of `pbem resolve`. The two are tied
(docs/history.md): resolution 0 is the deal; in a dealt game resolution 1 is the setup turn
(turn 0) and resolution r turn r - 1; in a drafted game resolution 1 is the draft and 2 the
setup turn (both turn 0), resolution r turn r - 2; in a game set up at random, resolution r is
turn r. Wherever the resolution number must show (the history, the dice key), the turn is said
beside it: "turn 13 (resolution 14, history/0014.toml)"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Literal

from pbem.core.events import Drafted, Event, MissedTurn, Reinforced
from pbem.languages.i18n import _

Kind = Literal["deal", "draft", "setup", "turn"]


@dataclass(frozen=True)
class Played:
    """What one resolution played, as players name it: the deal, the draft, the setup turn
    (turn 0) or turn N."""

    resolution: int
    turn: int
    kind: Kind

    @classmethod
    def of(cls, resolution: int, turn: int, *, draft: bool = False) -> Played:
        """`turn` as its history file records it; `draft`: the resolution is a draft's
        (resolution 1 of a game made with `--setup draft`)."""
        if resolution == 0:
            return cls(0, turn, "deal")
        if draft:
            return cls(resolution, turn, "draft")
        return cls(resolution, turn, "setup" if turn == 0 else "turn")

    @classmethod
    def from_events(cls, events: Sequence[Event], resolution: int) -> Played:
        """What a resolution played, from its events (the turn its first player began)."""
        turn = next((e.turn for e in events if isinstance(e, (Reinforced, MissedTurn))), 0)
        return cls.of(resolution, turn, draft=any(isinstance(e, Drafted) for e in events))

    def name(self) -> str:
        """Its name in the current language: "turn 13", "the setup turn", "the draft"..."""
        if self.kind == "deal":
            return _("the deal")
        if self.kind == "draft":
            return _("the draft")
        if self.kind == "setup":
            return _("the setup turn")
        return _("turn %(turn)s", turn=self.turn)

    def after(self) -> str:
        """ "after turn 13" and the others as whole phrases in the current language: a
        language that bends its words after its "after" (Gujarati's oblique case, Italian's
        article) has each of its own."""
        if self.kind == "deal":
            return _("after the deal")
        if self.kind == "draft":
            return _("after the draft")
        if self.kind == "setup":
            return _("after the setup turn")
        return _("after turn %(turn)s", turn=self.turn)

    @property
    def label(self) -> str:
        """The same in English, for the moderator's terminal and the dice list's `played`."""
        if self.kind == "turn":
            return f"turn {self.turn}"
        return {"deal": "the deal", "draft": "the draft", "setup": "the setup turn"}[self.kind]

    def folder(self) -> str:
        """The name of its report folder: `0014-turn-13`, `0001-setup-turn`, `0000-deal`."""
        what = {"deal": "deal", "draft": "draft", "setup": "setup-turn"}.get(self.kind)
        return f"{self.resolution:04d}-{what or f'turn-{self.turn}'}"

    def words(self, whose: str = "", file: str | None = None) -> str:
        """For the moderator, both numbers in words: "turn 13 (resolution 14,
        history/0014.toml)", "the setup turn, turn 0 (resolution 1, history/0001.toml)";
        `whose` follows the turn ("alice's turn"), `file` replaces the history file's name."""
        where = f"resolution {self.resolution}, {file or f'history/{self.resolution:04d}.toml'}"
        said = [self.label] + ([] if self.kind in ("turn", "deal") else ["turn 0"])
        return ", ".join(said + ([whose] if whose else [])) + f" ({where})"


def played(events: Sequence[Event], resolution: int) -> str:
    """What a resolution played, as players name it: "turn 10", "the setup turn", "the deal"."""
    return Played.from_events(events, resolution).name()


def played_after(events: Sequence[Event], resolution: int) -> str:
    """ "after turn 10", "after the setup turn", ...: `Played.after`."""
    return Played.from_events(events, resolution).after()


@dataclass(frozen=True)
class Undone:
    """A resolution the moderator took back, as the reports tell it: what it played, when it
    was undone (ISO 8601 with offset, as recorded), why, and which undo of that turn it was."""

    played: Played
    time: str
    why: str
    attempt: int = 1

    def told(self, zone: tzinfo | None = None) -> str:
        """The note every later report carries, in the reader's language, the time in the
        game's `zone` (as its deadlines are told) or in the offset it was recorded with."""
        from pbem.languages.i18n import current

        try:
            moment = datetime.fromisoformat(self.time)
            when = current().when(moment.astimezone(zone) if zone is not None else moment)
        except (ValueError, TypeError):
            when = self.time
        values = {"played": self.played.name(), "when": when, "why": self.why}
        if self.attempt > 1:
            return _(
                "%(played)s was undone on %(when)s: %(why)s (undo number %(number)s of that turn)",
                number=self.attempt,
                **values,
            )
        return _("%(played)s was undone on %(when)s: %(why)s", **values)
