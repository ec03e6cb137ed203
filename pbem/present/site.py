"""The club's pages (docs/publish.md): a page for each game, with the board after every turn,
what happened, the charts and the record to download, and an index of the club's games. Pure
functions of the games' values: pbem.club.site reads the games and writes what these render.

A page shows what every player may see: a running game's board, moves and dice (no hand, no
mission, no card drawn), nothing of a running game under fog of war, and everything once the
game is over.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jinja2
import markupsafe

from pbem.core.events import Conquered, Event, Rolled
from pbem.core.luck import expected_losses
from pbem.core.state import GameState, Phase
from pbem.languages.i18n import _, current, n_
from pbem.present.charts import charts, line_chart
from pbem.present.context import KIT_COMMAND, game_over, variants
from pbem.present.plan import decimal
from pbem.present.report import render_template
from pbem.present.stats import (
    battle_line,
    fallen_line,
    game_stats,
    luck_line,
    trade_line,
)
from pbem.present.story import armies_before, tell
from pbem.present.svgmap import map_shapes, player_colours, player_marks

OUTSIDER = ""
"""Whom a running game's story is told to: no player, so that nothing secret is told (a card
drawn, a mission); the moderator's telling (None) once the game is over."""


@dataclass(frozen=True)
class Turn:
    """A resolution as the page shows it: what it played ("turn 13") and its events, with the
    state before it and after it."""

    resolution: int
    turn: int
    label: str
    events: tuple[Event, ...]
    before: GameState | None
    after: GameState
    said_after: str = ""
    """"after turn 13" (`pbem.languages.numbering.Played.after`), for the map's text."""


def public(state: GameState) -> bool:
    """Whether the board and moves of the game are for everyone to see: always, but in a game
    under fog of war that is still being played."""
    return state.phase is Phase.OVER or not state.options.fogged


def map_svg(env: jinja2.Environment, turn: Turn, title: str) -> str:
    """The board after `turn`, its conquests ringed, as an SVG file of its own."""
    taken = (e.target for e in turn.events if isinstance(e, Conquered))
    return render_template(
        env, "site_map.svg.j2", {"map": map_shapes(turn.after, None, taken), "title": title}
    )


def game_files(
    env: jinja2.Environment,
    club: str,
    state: GameState,
    turns: Sequence[Turn],
    record: str | None,
    record_note: str,
) -> dict[str, str]:
    """A game's page and its maps, by path inside the game's folder of the site."""
    colours = player_colours(state)
    marks = player_marks(state)
    shown = public(state)
    viewer = None if state.phase is Phase.OVER else OUTSIDER
    files: dict[str, str] = {}
    entries = []
    for t in turns if shown else ():
        path = f"maps/{t.resolution:04d}.svg"
        alt = _("The board %(after)s", after=t.said_after or t.label)
        files[path] = map_svg(env, t, alt)
        armies = armies_before(t.before, t.events) if t.before is not None else {}
        label = t.label[:1].upper() + t.label[1:]  # ("the deal": a heading, "The deal")
        entries.append(
            {"map": path, "label": label, "alt": alt, "story": tell(t.events, viewer, armies)}
        )
    players: list[dict[str, Any]] = [
        {
            "name": p.name,
            "colour": colours[p.name][0],
            "mark": marks[p.name],
            "territories": len(state.owned(p.name)) if shown else None,
            "armies": state.total_armies(p.name) if shown else None,
            "cards": len(p.hand) if shown else None,
            "state": _player_state(state, p.name),
        }
        for p in state.players
    ]
    stats = game_stats(
        [(t.resolution, t.turn, t.events) for t in turns], [p["name"] for p in players]
    )
    context: dict[str, Any] = {
        "lang": current().code,
        "club": club,
        "game": state.game,
        "rules": rules(state),
        "headline": headline(state),
        "players": players,
        "turns": entries,
        "turns_json": markupsafe.Markup(  # (only values pbem made: paths, labels)
            json.dumps(
                [{"map": e["map"], "label": e["label"], "alt": e["alt"]} for e in entries],
                ensure_ascii=True,
            ).replace("<", "\\u003c")
        ),
        "map_width": state.board.width,
        "map_height": state.board.height,
        "record": record,
        "record_note": record_note,
        "kit": KIT_COMMAND,
        "audit_command": "pbem audit FOLDER",
        "hidden_note": _(
            "This game is played under fog of war: its board, its moves and its story are "
            "shown here when it is over."
        ),
    }
    if shown:
        context.update(_story_context(stats, turns, {p["name"]: p["colour"] for p in players}))
    files["index.html"] = render_template(env, "site_game.html.j2", context)
    return files


def _story_context(
    stats: Mapping[str, Any], turns: Sequence[Turn], colours: Mapping[str, str]
) -> dict[str, Any]:
    """The game's story (as the reports tell it) with its charts: territories, armies, cards
    and luck of each player over the turns."""
    drawn = charts(stats, colours)
    if len(turns) >= 2:
        numbers = [t.turn for t in turns]
        names = list(stats["players"])
        drawn.append(
            line_chart(
                _("Cards"),
                numbers,
                {p: [len(t.after.player(p).hand) for t in turns] for p in names},
                colours,
            )
        )
        luck = line_chart(_("Luck"), numbers, luck_series(turns, names), colours)
        luck["note"] = _(
            "Luck: how many armies fewer than the odds expected a player has lost in the "
            "game's rolls so far, attacking and defending (above 0: luckier than the odds)."
        )
        drawn.append(luck)
    return {
        "stats": stats,
        "charts": drawn,
        "fallen_lines": [fallen_line(f) for f in stats["eliminated"]],
        "battle_lines": [battle_line(b) for b in stats["biggest_battles"]],
        "trade_lines": [trade_line(t) for t in stats["trades"]],
        "luck_lines": {p: luck_line(stats["luck"][p]) for p in stats["players"]},
    }


def luck_series(turns: Sequence[Turn], players: Sequence[str]) -> dict[str, list[float]]:
    """Each player's luck after each turn: the armies they expected to lose in the rolls of
    the game so far, attacking and defending, less those they lost (above 0: luckier than
    the odds), rounded to a tenth."""
    total = dict.fromkeys(players, 0.0)
    out: dict[str, list[float]] = {p: [] for p in players}
    for t in turns:
        for e in t.events:
            if isinstance(e, Rolled):
                mean_a, mean_d, _variance = expected_losses(len(e.attacker), len(e.defender))
                if e.player in total:
                    total[e.player] += float(mean_a) - e.attacker_losses
                if e.defender_name in total:
                    total[e.defender_name] += float(mean_d) - e.defender_losses
        for p in players:
            out[p].append(round(total[p], 1))
    return out


def rules(state: GameState) -> str:
    """The game's rules in a line: classic Risk, or what differs."""
    differ = variants(state)
    if state.options.missions:
        differ.insert(0, _("secret missions: each player wins by their own mission"))
    if not differ:
        return _("Classic rules.")
    return _("This game's rules: %(rules)s.", rules="; ".join(differ))


def headline(state: GameState) -> str:
    """Where the game stands, for everyone."""
    over = game_over(state, None)
    if over is not None:
        return over
    if state.phase is Phase.OVER:
        return _("The game is over.")
    waiting = ", ".join(state.awaiting())
    if state.phase is Phase.DRAFT:
        return _("The draft is being played: orders awaited from %(players)s.", players=waiting)
    if state.phase is Phase.SETUP:
        return _(
            "The setup turn is being played: orders awaited from %(players)s.", players=waiting
        )
    return _(
        "Turn %(turn)s is being played: orders awaited from %(players)s.",
        turn=state.turn,
        players=waiting,
    )


def _player_state(state: GameState, name: str) -> str:
    player = state.player(name)
    if state.winner is not None:
        winners = state.team(state.winner) if state.options.teams else (state.winner,)
        if name in winners:
            return _("won")
    if player.dropped:
        return _("dropped")
    if not player.alive:
        return _("out")
    return _("playing")


def game_entry(state: GameState, turn_label: str, href: str) -> dict[str, Any]:
    """A game's line in the index."""
    return {
        "name": state.game,
        "href": href,
        "players": [p.name for p in state.players],
        "turn": turn_label,
        "state": headline(state),
    }


def standings_table(standings: Mapping[str, Any]) -> dict[str, Any] | None:
    """The club's standings (pbem.club.standings, as its to_dict gives them) as the index's
    table: rank, player, rating, games, wins and how, missed turns, reliability; None when no
    game was played yet."""
    players = standings.get("players", [])
    if not players:
        return None
    wins = {
        "conquest": lambda n: n_("%(num)s by conquest", "%(num)s by conquest", n),
        "mission": lambda n: n_("%(num)s by mission", "%(num)s by mission", n),
        "rounds": lambda n: n_("%(num)s at the round limit", "%(num)s at the round limit", n),
        "team": lambda n: n_("%(num)s with a team", "%(num)s with a team", n),
    }
    rows = []
    for p in players:
        how = [wins[kind](n) for kind, n in p["wins_by"].items() if n and kind in wins]
        reliability = p["reliability"]
        rows.append(
            [
                "–" if p["rank"] is None else str(p["rank"]),
                p["name"],
                "–" if p["rank"] is None else decimal(p["ordinal"]),
                current().number(p["games"]),
                current().number(p["won"]) + (f" ({', '.join(how)})" if how else ""),
                current().number(p["turns_missed"]),
                "–" if reliability is None else _("%(value)s%%", value=decimal(reliability)),
            ]
        )
    head = [
        "#",
        _("Player"),
        _("Rating"),
        _("Games"),
        _("Won"),
        _("Turns missed"),
        _("Reliability"),
    ]
    return {"head": head, "rows": rows}


def tournament_section(table: Mapping[str, Any], hrefs: Mapping[str, str]) -> dict[str, Any]:
    """A tournament (pbem.club.tournament.tournament_table) as the index shows it: where it
    stands, each round's tables (their games linked, `hrefs` by game name) and the points."""
    system = _("round-robin") if table["system"] == "round-robin" else _("Swiss")
    leaders = [s["player"] for s in table["standings"] if s["rank"] == 1]
    if table["state"] == "over":
        where = n_(
            "over: %(players)s won",
            "over: %(players)s share first place",
            len(leaders),
            players=current().listing(leaders),
        )
    else:
        where = _(
            "round %(round)s of %(rounds)s",
            round=table["current_round"],
            rounds=table["round_count"],
        )
    summary = _(
        "%(system)s, %(players)s, tables of up to %(size)s: %(where)s.",
        system=system,
        players=n_("%(num)s player", "%(num)s players", len(table["players"])),
        size=table["table_size"],
        where=where,
    )
    states = {
        "planned": _("not made yet"),
        "playing": _("being played"),
        "over": _("over"),
        "missing": _("missing"),
        "damaged": _("damaged"),
    }
    rounds = [
        {
            "number": r["number"],
            "tables": [
                {
                    "game": t["game"],
                    "href": hrefs.get(t["game"]),
                    "players": t["players"],
                    "state": (
                        _("won by %(players)s", players=current().listing(list(t["winners"])))
                        if t["state"] == "over" and t["winners"]
                        else states.get(t["state"], t["state"])
                    ),
                }
                for t in r["tables"]
            ],
        }
        for r in table["rounds"]
    ]
    head = ["#", _("Player"), _("Points"), _("Tie-break"), _("Games"), _("Won")]
    rows = [
        [
            str(s["rank"]),
            s["player"],
            current().number(s["points"]),
            current().number(s["tiebreak"]),
            current().number(s["games"]),
            current().number(s["wins"]),
        ]
        for s in table["standings"]
    ]
    return {
        "name": table["name"],
        "summary": summary,
        "rounds": rounds,
        "table": {"head": head, "rows": rows},
        "note": _(
            "A win is worth 1 point; the tie-break counts the players who finished below the "
            "player in their games."
        ),
    }


def index_page(
    env: jinja2.Environment,
    club: str,
    games: Sequence[Mapping[str, Any]],
    standings: Mapping[str, Any],
    tournaments: Sequence[Mapping[str, Any]],
) -> str:
    """The club's index: its games, the standings and the tournaments."""
    running = sum(1 for g in games if not g.get("over"))
    summary = (
        n_("%(num)s game", "%(num)s games", len(games))
        + ", "
        + n_("%(num)s being played", "%(num)s being played", running)
    )
    return render_template(
        env,
        "site_index.html.j2",
        {
            "lang": current().code,
            "club": club,
            "summary": summary,
            "games": games,
            "standings": standings_table(standings),
            "standings_note": _(
                "Worked out from the games' histories alone, so that anyone can recompute them "
                "(pbem standings): the rating is openskill's Plackett-Luce over every finished "
                "game's ranking (the winner first, then the others, the last to fall first); "
                "reliability is the share of their turns a player sent orders for."
            ),
            "tournaments": tournaments,
        },
    )
