"""A game's story in running numbers: what the statistics, the luck and the story of the game
need, kept up to date resolution by resolution, so that a report reads these and the new
events, not the whole history (docs/history.md, "The tallies").

`Tallies.fold` adds one resolution's events; everything the story tells of the game so far
follows from the result (`pbem.present.stats` words it). Folding every resolution from the
deal gives the same numbers as folding onto tallies kept from before: the history is what they
are checked against (`pbem audit`). Pure: no files; `to_dict` and `from_dict` give and take
plain values (JSON), exact (each expected loss a fraction, written "n/d").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from itertools import chain
from operator import itemgetter
from typing import Any

from pbem.core.events import (
    Conquered,
    Dealt,
    Drafted,
    Dropped,
    Eliminated,
    Event,
    Fortified,
    Placed,
    Rolled,
    Traded,
    Won,
)
from pbem.core.luck import LuckCount, SideLuck
from pbem.core.state import NEUTRAL

BIGGEST = 5
"""How many of the biggest battles the story lists."""

FORMAT = 1
"""The version of `to_dict`'s values (a stored file of another is counted again)."""


def _size(battle: Mapping[str, Any]) -> tuple[int, int]:
    """The order of the biggest battles: the most armies lost first, then the earliest."""
    return -(battle["attacker_lost"] + battle["defender_lost"]), battle["resolution"]


class Tallies:
    """The running numbers of a game after its resolutions so far (`resolution`: the last
    folded, -1 before any)."""

    def __init__(self, players: Sequence[str]) -> None:
        self.players = tuple(players)
        self.resolution = -1
        self.turn = 0
        self.owner: dict[str, str] = {}
        self.armies: dict[str, int] = {}
        self.timeline: list[tuple[int, int, tuple[int, ...], tuple[int, ...]]] = []
        """(resolution, turn, each player's territories, each player's armies) after each."""
        self.fallen: list[dict[str, Any]] = []
        self.trades: list[dict[str, Any]] = []
        self.biggest: list[dict[str, Any]] = []
        """The biggest battles so far, at most BIGGEST, biggest first."""
        self.last: dict[str, Any] | None = None
        """The last battle fought (it may be among `biggest`: then the same dict)."""
        self.winner: str | None = None
        self.winners: tuple[str, ...] | None = None
        self.luck = LuckCount(players)

    def copy(self) -> Tallies:
        """Tallies to fold on, leaving these as they are."""
        out = Tallies(())
        out.players, out.resolution, out.turn = self.players, self.resolution, self.turn
        out.owner, out.armies = dict(self.owner), dict(self.armies)
        out.timeline, out.fallen, out.trades = list(self.timeline), [*self.fallen], [*self.trades]
        out.last = dict(self.last) if self.last is not None else None
        out.biggest = [
            out.last if b is self.last and out.last is not None else dict(b) for b in self.biggest
        ]
        out.winner, out.winners = self.winner, self.winners
        out.luck = self.luck.copy()
        return out

    def after(self, resolution: int, turn: int, events: Sequence[Event]) -> Tallies:
        """These tallies with one more resolution folded in, these left as they are."""
        out = self.copy()
        out.fold(resolution, turn, events)
        return out

    def fold(self, resolution: int, turn: int, events: Sequence[Event]) -> None:
        """Add resolution `resolution` (of the turn `turn`) and its events."""
        owner, armies = self.owner, self.armies
        battles: list[dict[str, Any]] = []  # this resolution's
        for e in events:
            if isinstance(e, Dealt):
                for t in e.territories:
                    owner[t], armies[t] = e.player, 1
            elif isinstance(e, Drafted):
                owner[e.territory], armies[e.territory] = e.player, 1
            elif isinstance(e, Placed):
                armies[e.territory] = armies.get(e.territory, 0) + e.armies
            elif isinstance(e, Rolled):
                armies[e.source] -= e.attacker_losses
                armies[e.target] -= e.defender_losses
                self.luck.roll(e)
                last = self.last
                if (
                    last is None
                    or last["resolution"] != resolution
                    or (last["attacker"], last["from"], last["to"])
                    != (e.player, e.source, e.target)
                    or last["end"]
                ):
                    last = {
                        "resolution": resolution,
                        "turn": turn,
                        "attacker": e.player,
                        "defender": e.defender_name,
                        "from": e.source,
                        "to": e.target,
                        "rolls": 0,
                        "attacker_lost": 0,
                        "defender_lost": 0,
                        "taken": False,
                        "end": False,
                    }
                    battles.append(last)
                    self.last = last
                last["rolls"] += 1
                last["attacker_lost"] += e.attacker_losses
                last["defender_lost"] += e.defender_losses
            elif isinstance(e, Conquered):
                owner[e.target] = e.player
                armies[e.source] -= e.moved
                armies[e.target] = e.moved
                if self.last is not None and (self.last["from"], self.last["to"]) == (
                    e.source,
                    e.target,
                ):
                    self.last["taken"] = self.last["end"] = True
            elif isinstance(e, Fortified):
                armies[e.source] -= e.armies
                armies[e.target] += e.armies
            elif isinstance(e, Dropped):
                for t, who in owner.items():
                    if who == e.player:
                        owner[t] = NEUTRAL
                self.fallen.append(
                    {"player": e.player, "by": None, "resolution": resolution, "turn": turn}
                )
            elif isinstance(e, Eliminated):
                self.fallen.append(
                    {"player": e.player, "by": e.by, "resolution": resolution, "turn": turn}
                )
            elif isinstance(e, Traded):
                self.trades.append(
                    {
                        "resolution": resolution,
                        "turn": turn,
                        "player": e.player,
                        "cards": list(e.cards),
                        "armies": e.value,
                    }
                )
            elif isinstance(e, Won):
                self.winner, self.winners = e.player, e.team
        # A battle never goes on into another resolution: this one's are all told, and the
        # biggest of the game are among the biggest before it and these (the earlier first
        # where they tie, as in the game's order).
        self.biggest = sorted([*self.biggest, *battles], key=_size)[:BIGGEST]
        self.timeline.append(
            (
                resolution,
                turn,
                tuple(sum(1 for o in owner.values() if o == p) for p in self.players),
                tuple(sum(armies[t] for t, o in owner.items() if o == p) for p in self.players),
            )
        )
        self.resolution, self.turn = resolution, turn

    def side(self, player: str) -> tuple[SideLuck, SideLuck, int]:
        """A player's luck so far: in attack, in defence, their longest losing streak."""
        luck = self.luck
        return luck.side(player), luck.side(player, defence=True), luck.longest[player]

    # --- as plain values ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The tallies as plain values (JSON), in a stable order."""
        luck = self.luck
        return {
            "format": FORMAT,
            "resolution": self.resolution,
            "turn": self.turn,
            "players": list(self.players),
            "winner": self.winner,
            "winners": list(self.winners) if self.winners is not None else None,
            "owner": dict(self.owner),
            "armies": dict(self.armies),
            "timeline": self.timeline,  # (tuples: JSON writes them as lists)
            "eliminated": self.fallen,
            "trades": self.trades,
            "biggest_battles": self.biggest,
            "last_battle": self.last,
            "last_among_biggest": next(
                (i for i, b in enumerate(self.biggest) if b is self.last), None
            ),
            "luck": {
                p: {
                    "attack": _side(luck.side(p)),
                    "defence": _side(luck.side(p, defence=True)),
                    "streak": luck.streak[p],
                    "longest_losing_streak": luck.longest[p],
                }
                for p in self.players
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Tallies:
        """Tallies from `to_dict`'s values; ValueError, saying what, when they are not such
        values."""
        try:
            return cls._from_dict(data)
        except (KeyError, TypeError, IndexError, AttributeError, ZeroDivisionError) as err:
            raise ValueError(f"not the tallies pbem writes ({err!r})") from None

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any]) -> Tallies:
        if data.get("format") != FORMAT:
            raise ValueError(f"tallies of format {data.get('format')!r}, not {FORMAT}")
        out = cls([_text(p) for p in data["players"]])
        n = len(out.players)
        out.resolution, out.turn = _count(data["resolution"]), _count(data["turn"])
        out.winner = None if data["winner"] is None else _text(data["winner"])
        winners = data["winners"]
        out.winners = None if winners is None else tuple(_text(p) for p in winners)
        out.owner = {_text(t): _text(p) for t, p in data["owner"].items()}
        out.armies = {_text(t): _int(a) for t, a in data["armies"].items()}
        out.timeline = _timeline(data["timeline"], n)
        out.fallen = [_record(f, _FALLEN) for f in data["eliminated"]]
        out.trades = [_record(t, _TRADE) for t in data["trades"]]
        out.biggest = [_record(b, _BATTLE) for b in data["biggest_battles"]]
        out.last = None if data["last_battle"] is None else _record(data["last_battle"], _BATTLE)
        among = data["last_among_biggest"]
        if among is not None and out.last is not None:
            out.biggest[_count(among)] = out.last  # (the same battle: it may still be taken)
        for p in out.players:
            luck = data["luck"][p]
            out.luck.set_side(p, _side_from(luck["attack"]))
            out.luck.set_side(p, _side_from(luck["defence"]), defence=True)
            out.luck.streak[p] = _count(luck["streak"])
            out.luck.longest[p] = _count(luck["longest_losing_streak"])
        return out


def _timeline(entries: Any, n: int) -> list[tuple[int, int, tuple[int, ...], tuple[int, ...]]]:
    """The timeline from its plain values, every entry [resolution, turn, each of the `n`
    players' territories, their armies]: the numbers checked all at once (a long game's
    timeline has tens of thousands), and the first that is not what it should be named."""
    out = [(r, t, tuple(held), tuple(armies)) for r, t, held, armies in entries]
    held, armies = list(map(itemgetter(2), out)), list(map(itemgetter(3), out))
    if (set(map(len, held)) | set(map(len, armies))) - {n}:
        raise ValueError("a timeline entry does not count every player")
    counts = [*map(itemgetter(0), out), *map(itemgetter(1), out), *chain.from_iterable(held)]
    whole = list(chain.from_iterable(armies))
    if (set(map(type, counts)) | set(map(type, whole))) - {int}:
        for x in counts:
            _count(x)  # (names the first that is not a whole number)
        for x in whole:
            _int(x)
    if counts and min(counts) < 0:
        raise ValueError(f"{min(counts)} is below 0")
    return out


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a text")
    return value


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not a whole number")
    return value


def _count(value: Any) -> int:
    if _int(value) < 0:
        raise ValueError(f"{value} is below 0")
    return int(value)


def _maybe_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _texts(value: Any) -> list[str]:
    return [_text(v) for v in value]


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{value!r} is not true or false")
    return value


_FALLEN = {"player": _text, "by": _maybe_text, "resolution": _count, "turn": _count}
_TRADE = {"resolution": _count, "turn": _count, "player": _text, "cards": _texts, "armies": _count}
_BATTLE = {
    "resolution": _count,
    "turn": _count,
    "attacker": _text,
    "defender": _text,
    "from": _text,
    "to": _text,
    "rolls": _count,
    "attacker_lost": _count,
    "defender_lost": _count,
    "taken": _flag,
    "end": _flag,
}


def _record(value: Mapping[str, Any], fields: Mapping[str, Callable[[Any], Any]]) -> dict[str, Any]:
    """One entry of a list the tallies keep, its values checked, its keys in their order."""
    if set(value) != set(fields):
        raise ValueError(f"an entry of the tallies has the keys {sorted(value)}")
    return {key: check(value[key]) for key, check in fields.items()}


def _side(side: SideLuck) -> dict[str, Any]:
    return {
        "rolls": side.rolls,
        "expected_losses": _fraction(side.expected),
        "losses": side.lost,
        "variance": _fraction(side.variance),
    }


def _side_from(values: Mapping[str, Any]) -> SideLuck:
    return SideLuck(
        _count(values["rolls"]),
        Fraction(_text(values["expected_losses"])),
        _count(values["losses"]),
        Fraction(_text(values["variance"])),
    )


def _fraction(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"
