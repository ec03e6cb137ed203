"""The story of a game in numbers: its length, who eliminated whom, territories and armies of
each player over time, the biggest battles, the cards traded, and each player's luck.

Everything here is public (the board, the battles, the trades and the dice are in every report),
so the same numbers go into the moderator's `pbem stats`, the players' view files (for
`pbem stats --view`) and the last report. Computed from the recorded events alone, resolution by
resolution: `game_stats` takes them and returns plain values (JSON as the view file carries it).
A resolution's reports read them from the tallies the game keeps (`story_after`,
pbem.core.tallies and pbem.records.tallies) and the new events, not from the whole history.
"""

from __future__ import annotations

import functools
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pbem.core import fog
from pbem.core.events import Event, Reinforced, Rolled
from pbem.core.luck import PlayerLuck, SideLuck, tally
from pbem.core.state import GameState, team_name
from pbem.core.tallies import Tallies
from pbem.languages.i18n import Language, _, current, language, n_, place, speaking
from pbem.present.bounds import kept_points
from pbem.present.charts import chart_titles, line_chart
from pbem.present.plan import decimal
from pbem.present.sentences import card_name
from pbem.present.text import wrap
from pbem.present.view import ViewError, load_json, view_language
from pbem.records.history import history_count, read_history
from pbem.records.store import Game
from pbem.records.tallies import tallies_before

Resolution = tuple[int, int, Sequence[Event]]
"""(resolution, turn, its events)."""


@functools.lru_cache(maxsize=4096)
def _recorded(path: Path, stamp: tuple[int, int]) -> tuple[int, tuple[Event, ...]]:
    record = read_history(path.parent.parent, int(path.stem))
    return record.turn, record.events


def recorded_resolutions(directory: Path, before: int) -> list[Resolution]:
    """Resolutions 0 to `before` - 1 as the history keeps them (read once per file version;
    a file is looked at with one system call, however long the game)."""
    out: list[Resolution] = []
    folder = (directory / "history").resolve()
    for r in range(before):
        path = folder / f"{r:04d}.toml"
        try:
            info = path.stat()
        except OSError:
            break
        if not stat.S_ISREG(info.st_mode):
            break
        turn, events = _recorded(path, (info.st_mtime_ns, info.st_size))
        out.append((r, turn, events))
    return out


def _luck_dict(side: SideLuck) -> dict[str, Any]:
    return {
        "rolls": side.rolls,
        "expected_losses": round(float(side.expected), 3),
        "losses": side.lost,
        "luck": round(side.luck, 3),
        "z": round(side.z, 3),
    }


def luck_dict(luck: PlayerLuck, battles: bool = True) -> dict[str, Any]:
    """A player's luck in plain values, with their battles one by one unless not `battles`."""
    out = {
        "attack": _luck_dict(luck.attack),
        "defence": _luck_dict(luck.defence),
        "total": _luck_dict(luck.total),
        "longest_losing_streak": luck.longest_losing_streak,
    }
    if battles:
        out["battles"] = [
            {
                "attacker": b.attacker,
                "defender": b.defender,
                "from": b.source,
                "to": b.target,
                "rolls": b.rolls,
                "attacker_expected": round(float(b.attacker_expected), 3),
                "attacker_lost": b.attacker_lost,
                "defender_expected": round(float(b.defender_expected), 3),
                "defender_lost": b.defender_lost,
            }
            for b in luck.battles
        ]
    return out


def stats_of(tallies: Tallies, luck: Mapping[str, PlayerLuck] | None = None) -> dict[str, Any]:
    """The story of a game from its tallies, in plain values; each player's luck battle by
    battle too when `luck` (counted from every roll of the game, `luck.tally`) is given."""
    whole = range(len(tallies.timeline))
    return _story(tallies, timeline_of(tallies, tallies.players, whole), luck)


def _story(
    tallies: Tallies,
    timeline: list[dict[str, Any]],
    luck: Mapping[str, PlayerLuck] | None = None,
) -> dict[str, Any]:
    players = tallies.players
    battles = luck is not None
    if luck is None:
        luck = {p: PlayerLuck(p, *tallies.side(p)) for p in players}
    return {
        "resolutions": max(tallies.resolution, 0),
        "turns": tallies.turn,
        "winner": tallies.winner,
        **({"winners": list(tallies.winners)} if tallies.winners else {}),
        "players": list(players),
        "eliminated": [dict(f) for f in tallies.fallen],
        "timeline": timeline,
        "biggest_battles": [{k: v for k, v in b.items() if k != "end"} for b in tallies.biggest],
        "trades": [{**t, "cards": list(t["cards"])} for t in tallies.trades],
        "luck": {p: luck_dict(luck[p], battles) for p in players},
    }


def timeline_of(
    tallies: Tallies, side: Sequence[str], points: Iterable[int]
) -> list[dict[str, Any]]:
    """The entries `points` of the tallies' timeline in plain values, of the players `side`."""
    at = [(p, tallies.players.index(p)) for p in side]
    timeline = tallies.timeline
    return [
        {
            "resolution": timeline[i][0],
            "turn": timeline[i][1],
            "territories": {p: timeline[i][2][j] for p, j in at},
            "armies": {p: timeline[i][3][j] for p, j in at},
        }
        for i in points
    ]


class Story:
    """The story of a game just after a resolution, as its reports and view files tell it to
    each reader: worked out once for each side told (every player; under fog, each reader's
    side), with the timeline a view file carries (`bounds.kept_points`) and charts drawn from
    every point of it, so that what a resolution's reports cost does not grow with the game.
    Its `told` is `stats_for` of the whole story with the timeline bounded as a view file
    bounds it, which tells the same text (the first, middle and last points are kept)."""

    def __init__(self, tallies: Tallies) -> None:
        self.tallies = tallies
        self._base = _story(tallies, [])
        self._told: dict[frozenset[str] | None, dict[str, Any]] = {}
        self._lines: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self._words: dict[tuple[Any, ...], tuple[Language, dict[str, Any]]] = {}

    def _side(
        self, state: GameState, player: str | None
    ) -> tuple[frozenset[str] | None, list[str]]:
        team = _team(state, player)
        players = self.tallies.players
        return team, [p for p in players if team is None or p in team]

    def told(self, state: GameState, player: str | None) -> dict[str, Any]:
        """The story as `player` may know it (`stats_for`), its timeline bounded."""
        team, side = self._side(state, player)
        if team not in self._told:
            entries = self.tallies.timeline
            at = [self.tallies.players.index(p) for p in side]
            points = kept_points([any(e[2][j] for j in at) for e in entries])
            told = {**self._base, "timeline": timeline_of(self.tallies, side, points)}
            self._told[team] = told if team is None else _only(told, team)
        return dict(self._told[team])

    def lines(self, state: GameState, player: str | None) -> dict[str, Any]:
        """The story `player` may know in lines, in the language spoken now: its text
        (`stats_text`, without the battles one by one), who fell, the biggest battles, the
        cards traded and each player's luck (told once a side and a language)."""
        team = _team(state, player)
        lang = current()
        key = (team, id(lang))
        if key not in self._words:
            stats = self.told(state, player)
            self._words[key] = (
                lang,
                {
                    "stats_lines": stats_text(stats, full=False),
                    "fallen_lines": [fallen_line(f) for f in stats["eliminated"]],
                    "battle_lines": [battle_line(b) for b in stats["biggest_battles"]],
                    "trade_lines": [trade_line(t) for t in stats["trades"]],
                    "luck_lines": {p: luck_line(stats["luck"][p]) for p in stats["players"]},
                },
            )
        return dict(self._words[key][1])

    def charts(
        self, state: GameState, player: str | None, colours: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """`charts` of the story `player` may know, from every point of its timeline."""
        team, side = self._side(state, player)
        entries = self.tallies.timeline
        if len(entries) < 2:
            return []
        key = (team, tuple(colours.items()))
        if key not in self._lines:
            turns = [e[1] for e in entries]
            at = [(p, self.tallies.players.index(p)) for p in side]
            columns = [e[2] for e in entries], [e[3] for e in entries]
            self._lines[key] = [
                line_chart("", turns, {p: [held[j] for held in column] for p, j in at}, colours)
                for column in columns
            ]
        return [
            {**chart, "title": title}
            for chart, title in zip(self._lines[key], chart_titles(), strict=True)
        ]


def game_stats(resolutions: Sequence[Resolution], players: Sequence[str]) -> dict[str, Any]:
    """The story of a game from its resolutions' events, in plain values."""
    tallies = Tallies(players)
    rolls: list[Rolled] = []
    for resolution, turn, events in resolutions:
        tallies.fold(resolution, turn, events)
        rolls += (e for e in events if isinstance(e, Rolled))
    return stats_of(tallies, tally(rolls, players))


# --- Told in words --------------------------------------------------------------------------


def signed(x: float) -> str:
    """+1.5, -0.3, and 0.0 with no sign (however small the number rounded to it), with the
    decimal separator of the language spoken ("+1,5")."""
    text = f"{x:+.1f}"
    return decimal(0.0) if text in ("+0.0", "-0.0") else text[0] + decimal(abs(x))


def luck_line(luck: Mapping[str, Any], you: bool = True) -> str:
    """'+3.2 armies above expectation, z = 0.8 (attack +2.0, defence +1.2)', in the reader's
    language."""
    total = luck["total"]
    if not total["rolls"]:
        return _("no dice rolled yet")
    values = {
        "rolls": n_("%(num)s roll", "%(num)s rolls", total["rolls"]),
        "z": signed(total["z"]),
        "attack": signed(luck["attack"]["luck"]),
        "defence": signed(luck["defence"]["luck"]),
    }
    if total["luck"] < 0:
        return _(
            "%(amount)s armies below expectation over %(rolls)s, z = %(z)s "
            "(attack %(attack)s, defence %(defence)s)",
            amount=decimal(-total["luck"]),
            **values,
        )
    return _(
        "%(amount)s armies above expectation over %(rolls)s, z = %(z)s "
        "(attack %(attack)s, defence %(defence)s)",
        amount=signed(total["luck"]),
        **values,
    )


def fallen_line(f: Mapping[str, Any]) -> str:
    if f["by"] is None:
        return _(
            "%(player)s left the game (missed turns) in turn %(turn)s.",
            player=f["player"],
            turn=f["turn"],
        )
    return _(
        "%(player)s was eliminated by %(by)s in turn %(turn)s.",
        player=f["player"],
        by=f["by"],
        turn=f["turn"],
    )


def battle_line(b: Mapping[str, Any]) -> str:
    values = {
        "turn": b["turn"],
        "attacker": b["attacker"],
        "target": place(b["to"]),
        "defender": b["defender"],
        "source": place(b["from"]),
        "rolls": n_("%(num)s roll", "%(num)s rolls", b["rolls"]),
        "lost": b["attacker_lost"],
        "killed": b["defender_lost"],
    }
    if b["taken"]:
        return _(
            "Turn %(turn)s: %(attacker)s attacked %(target)s (%(defender)s) from %(source)s, "
            "%(rolls)s: lost %(lost)s, killed %(killed)s, took it.",
            **values,
        )
    return _(
        "Turn %(turn)s: %(attacker)s attacked %(target)s (%(defender)s) from %(source)s, "
        "%(rolls)s: lost %(lost)s, killed %(killed)s, did not take it.",
        **values,
    )


def trade_line(t: Mapping[str, Any]) -> str:
    return _(
        "Turn %(turn)s: %(player)s traded %(cards)s for %(armies)s.",
        turn=t["turn"],
        player=t["player"],
        cards=", ".join(card_name(c) for c in t["cards"]),
        armies=t["armies"],
    )


def stats_for(stats: Mapping[str, Any], state: GameState, player: str | None) -> dict[str, Any]:
    """The story of the game as `player` may know it: under fog, until the game is over, only
    their side's (docs/fog.md): its players' territories, armies and luck over time and its
    trades; who fell; no list of the game's biggest battles (it would count those unseen)."""
    team = _team(state, player)
    if team is None:
        return dict(stats)
    return {
        **_only(stats, team),
        "timeline": [
            {**t, "territories": _ours(t["territories"], team), "armies": _ours(t["armies"], team)}
            for t in stats["timeline"]
        ],
    }


def _team(state: GameState, player: str | None) -> frozenset[str] | None:
    """The players whose story `player` is told under fog (their side), or None: everyone's."""
    if player is None or fog.sight_of(state, player) is None:
        return None
    return frozenset(state.team(player))


def _only(stats: Mapping[str, Any], team: frozenset[str]) -> dict[str, Any]:
    """The story of `team`'s side (`stats_for`), its timeline as it is."""
    return {
        **stats,
        "players": [p for p in stats["players"] if p in team],
        "biggest_battles": [],  # (the game's biggest, which would count the battles not seen)
        "trades": [t for t in stats["trades"] if t["player"] in team],
        "luck": _ours(stats["luck"], team),
    }


def _ours(values: Mapping[str, Any], team: frozenset[str]) -> dict[str, Any]:
    """Of `values` by player, those of `team`'s players."""
    return {p: v for p, v in values.items() if p in team}


def won_by(stats: Mapping[str, Any]) -> str:
    """Who won, as a name to show: the winner, or in a team game their team ("ann + cy")."""
    winners = stats.get("winners")
    return team_name(tuple(winners)) if winners else str(stats["winner"])


def stats_text(stats: Mapping[str, Any], full: bool = True) -> list[str]:
    """The story as lines of at most 78 characters (`full`: with each player's battles), in
    the reader's language."""
    players = stats["players"]
    out: list[str] = []
    turns = n_("%(num)s turn", "%(num)s turns", stats["turns"])
    head = _("The game so far: %(turns)s.", turns=turns)
    if stats.get("winners"):
        head = _("%(team)s won together in turn %(turn)s.", team=won_by(stats), turn=stats["turns"])
    elif stats["winner"]:
        head = _("%(player)s won in turn %(turn)s.", player=won_by(stats), turn=stats["turns"])
    out += wrap(head)
    out += ["", _("Who fell")]
    for f in stats["eliminated"]:
        out += wrap(fallen_line(f), "  ", "    ")
    if not stats["eliminated"]:
        out.append("  " + _("Nobody yet."))
    out += ["", _("Territories and armies, start, middle and now")]
    held = [t for t in stats["timeline"] if any(t["territories"].values())]
    timeline = held or stats["timeline"]
    if timeline:
        marks = sorted({0, len(timeline) // 2, len(timeline) - 1})
        name_width = max(len(p) for p in players)
        for p in players:
            cells = "  ".join(
                f"{timeline[i]['territories'][p]:3d} / {timeline[i]['armies'][p]:4d}" for i in marks
            )
            out.append(f"  {p[:name_width]:<{name_width}}  {cells}")
        out += wrap(
            _(
                "(territories / armies after turns %(turns)s)",
                turns=current().listing([str(timeline[i]["turn"]) for i in marks]),
            ),
            "  ",
        )
    out += ["", _("The biggest battles")]
    for b in stats["biggest_battles"]:
        out += wrap(battle_line(b), "  ", "    ")
    if not stats["biggest_battles"]:
        out.append("  " + _("None yet."))
    out += ["", _("Cards traded")]
    for t in stats["trades"]:
        out += wrap(trade_line(t), "  ", "    ")
    if stats.get("trades_before"):  # (a view file's story lists the latest trades only)
        earlier = stats["trades_before"]
        out += wrap(
            n_("and %(num)s trade before these", "and %(num)s trades before these", earlier), "  "
        )
    if not stats["trades"]:
        out.append("  " + _("None yet."))
    out += [""]
    out += wrap(_("Luck: armies lost fewer than the exact odds expect (z: in standard deviations)"))
    for p in players:
        luck = stats["luck"][p]
        out += wrap(
            _(
                "%(player)s: %(luck)s; longest losing streak: %(rolls)s.",
                player=p,
                luck=luck_line(luck),
                rolls=n_("%(num)s roll", "%(num)s rolls", luck["longest_losing_streak"]),
            ),
            "  ",
            "    ",
        )
        if full:
            for b in luck.get("battles", ()):
                mine = b["attacker"] == p
                expected = b["attacker_expected"] if mine else b["defender_expected"]
                lost = b["attacker_lost"] if mine else b["defender_lost"]
                values = {
                    "target": place(b["to"]),
                    "source": place(b["from"]),
                    "attacker": b["attacker"],
                    "rolls": n_("%(num)s roll", "%(num)s rolls", b["rolls"]),
                    "lost": lost,
                    "expected": decimal(expected),
                    "luck": signed(expected - lost),
                }
                line = (
                    _(
                        "attacked %(target)s from %(source)s: %(rolls)s, lost %(lost)s, "
                        "expected %(expected)s (%(luck)s)",
                        **values,
                    )
                    if mine
                    else _(
                        "defended %(target)s against %(attacker)s: %(rolls)s, lost %(lost)s, "
                        "expected %(expected)s (%(luck)s)",
                        **values,
                    )
                )
                out += wrap(line, "      ", "        ")
    return out


def story_after(
    directory: Path,
    resolution: int,
    events: Sequence[Event],
    players: Sequence[str],
    before: Tallies | None = None,
) -> Story:
    """The story of a game just after `resolution`, whose `events` may not be recorded yet,
    from the tallies `before` it (read from the game's when not given: `tallies_before`);
    each player's luck without the battles one by one."""
    if before is None:
        before = tallies_before(directory, players, resolution)
    turn = max((e.turn for e in events if isinstance(e, Reinforced)), default=before.turn)
    return Story(before.after(resolution, turn, events))


def without_battles(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The story without each player's battle-by-battle luck (for the view file, which must
    stay small: `pbem stats DIR` has it all)."""
    return {
        **stats,
        "luck": {
            p: {k: v for k, v in luck.items() if k != "battles"}
            for p, luck in stats["luck"].items()
        },
    }


def directory_stats(game: Game) -> dict[str, Any]:
    """The story of `game` so far, from its history (for `pbem stats`)."""
    resolutions = recorded_resolutions(game.path, history_count(game.path))
    return game_stats(resolutions, [p.name for p in game.state.players])


def view_stats(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The story of the game as a view file carries it, and as lines in the language of the
    player it is for (for `pbem stats --view`);
    a file that is not a view file with a story from pbem gives a ViewError saying so."""
    view = load_json(path)
    stats = view.get("stats") if isinstance(view, dict) else None
    if not isinstance(stats, dict):
        raise ViewError(
            f"{path} holds no story of the game: use the .view.json file of a report from "
            "this version of pbem"
        )
    try:
        with speaking(language(view_language(path))):  # the player's, whom the file is for
            return stats, stats_text(stats)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise ViewError(
            f"{path}: its story of the game is not as pbem writes it; use the file as it was sent"
        ) from None
