"""A tournament's results, read and never written: each game's result from its history, the
standings they make, and the whole tournament as data (`tournament_table`, what `pbem
tournament show` prints, `table_lines`, and the club's pages render).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pbem.club.tournament_file import GameResult, Round, Table, Tournament, read_tournament
from pbem.core.state import Phase
from pbem.errors import PbemError
from pbem.records.disk import GAME_FILE


def game_result(directory: Path) -> GameResult | None:
    """A finished game's result from its history (None while it goes on): the winner, or the
    winning team, of the `won` event; who left the game, in the order of their `eliminated`
    or `dropped` events (a seat given back to a substitute is in the game again)."""
    from pbem.core.events import Dropped, Eliminated, Won
    from pbem.records.history import history_count, read_history
    from pbem.records.opening import read_game

    state = read_game(directory).state
    if state.phase is not Phase.OVER:
        return None
    winners: tuple[str, ...] = ()
    left: dict[str, int] = {}  # each player's last exit, numbered in the history's order
    exits = 0
    for r in range(history_count(directory)):
        for event in read_history(directory, r).events:
            if isinstance(event, Won):
                winners = event.team or (event.player,)
            elif isinstance(event, (Eliminated, Dropped)):
                exits += 1
                left[event.player] = exits
    if not winners and state.winner is not None:
        winners = state.team(state.winner)
    gone = [p for p in state.players if (not p.alive or p.dropped) and p.name not in winners]
    out = sorted(gone, key=lambda p: (left.get(p.name, 0), p.seat))
    return GameResult(tuple(winners), tuple(p.name for p in out))


def record_results(root: Path, tournament: Tournament) -> Tournament:
    """The tournament with the result of every made game that is over and not yet recorded."""
    for one in tournament.rounds:
        changed = False
        tables = []
        for table in one.tables:
            if table.made and table.result is None:
                try:
                    result = game_result(root / table.game)
                except PbemError:
                    result = None  # a damaged game: `pbem run` says so; the round waits
                if result is not None:
                    table, changed = replace(table, result=result), True
            tables.append(table)
        if changed:
            tournament = tournament.with_round(replace(one, tables=tuple(tables)))
    return tournament


def standings(tournament: Tournament) -> list[dict[str, Any]]:
    """Every player, best first: points (a win is 1), then the tie-break (the players of
    their games who finished below them, summed), then the order given; `rank` shared by
    players equal on both."""
    rows: dict[str, dict[str, Any]] = {
        p: {"player": p, "points": 0, "tiebreak": 0, "games": 0, "wins": 0}
        for p in tournament.names
    }
    for table, result in tournament.results():
        points = result.points(table.players)
        below = result.outlasted(table.players)
        for p in table.players:
            rows[p]["points"] += points[p]
            rows[p]["wins"] += points[p]
            rows[p]["tiebreak"] += below[p]
            rows[p]["games"] += 1
    seed = {p: i for i, p in enumerate(tournament.names)}
    ordered = sorted(rows.values(), key=lambda r: (-r["points"], -r["tiebreak"], seed[r["player"]]))
    for row in ordered:
        row["rank"] = 1 + sum(
            1
            for other in ordered
            if (other["points"], other["tiebreak"]) > (row["points"], row["tiebreak"])
        )
    return ordered


def finished(tournament: Tournament) -> bool:
    return len(tournament.rounds) >= tournament.round_count and all(
        r.over for r in tournament.rounds
    )


def points_text(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def tournament_table(root: Path, name: str) -> dict[str, Any]:
    """Everything about a tournament, as JSON-able data (docs/tournaments.md): its rounds and
    tables, each game's state (read from the game), the results, the standings. Changes
    nothing; a result not yet recorded is read from the game's history."""
    tournament = record_results(root, read_tournament(root, name))
    rounds = []
    current = 0
    for one in tournament.rounds:
        if one.made is not None or any(t.made for t in one.tables):
            current = one.number
        tables = [_table_view(root, one, j, t) for j, t in enumerate(one.tables, 1)]
        state = (
            "over"
            if one.over
            else "playing"
            if one.made is not None
            else "incomplete"
            if any(t.made for t in one.tables)
            else "waiting"
        )
        rounds.append({"number": one.number, "state": state, "made": one.made, "tables": tables})
    top = standings(tournament)
    return {
        "name": tournament.name,
        "system": tournament.system,
        "table_size": tournament.table_size,
        "round_count": tournament.round_count,
        "current_round": current,
        "state": "over" if finished(tournament) else "playing",
        "created": tournament.created,
        "over": tournament.over,
        "players": tournament.names,
        "rounds": rounds,
        "standings": top,
        "points": {row["player"]: row["points"] for row in top},
        "seats": tournament.seats(),
    }


def _table_view(root: Path, one: Round, number: int, table: Table) -> dict[str, Any]:
    out: dict[str, Any] = {
        "table": number,
        "game": table.game,
        "players": list(table.players),
        "state": "planned",
        "turn": None,
        "awaiting": [],
        "winners": [],
        "out": [],
        "points": {},
        "tiebreak": {},
        "commitment": table.commitment,
        "hidden_commitment": table.hidden_commitment,
    }
    if table.result is not None:
        out.update(
            state="over",
            winners=list(table.result.winners),
            out=list(table.result.out),
            points=table.result.points(table.players),
            tiebreak=table.result.outlasted(table.players),
        )
        return out
    if not table.made:
        return out
    directory = root / table.game
    if not (directory / GAME_FILE).is_file():
        out["state"] = "missing"
        return out
    from pbem.records.opening import read_game

    try:
        state = read_game(directory).state
    except PbemError:
        out["state"] = "damaged"
        return out
    out.update(state="playing", turn=state.turn, awaiting=list(state.awaiting()))
    return out


def table_lines(data: Mapping[str, Any]) -> list[str]:
    """`pbem tournament show`: the rounds, their games and results, then the standings."""
    system = "Swiss" if data["system"] == "swiss" else "round-robin"
    if data["state"] == "over":
        where = f"over (found so at {data['over']})" if data["over"] else "over"
    else:
        where = f"round {data['current_round']} under way"
    lines = [
        f"Tournament {data['name']}: {system}, {len(data['players'])} players at tables of "
        f"{data['table_size']}, {data['round_count']} rounds; {where}"
    ]
    for one in data["rounds"]:
        lines += ["", f"Round {one['number']}: {one['state']}"]
        for t in one["tables"]:
            lines.append(f"  {t['game']}: {', '.join(t['players'])}: {_game_line(t)}")
    lines += ["", "Standings:"]
    width = max(len(s["player"]) for s in data["standings"])
    for s in data["standings"]:
        lines.append(
            f"  {s['rank']:>3}. {s['player']:<{width}}  {points_text(s['points'])}, tie-break "
            f"{s['tiebreak']}, {s['games']} game{'s' if s['games'] != 1 else ''}"
        )
    return lines


def _game_line(table: Mapping[str, Any]) -> str:
    state = str(table["state"])
    if state == "over":
        won = " + ".join(table["winners"]) or "nobody"
        out = f"; out: {', '.join(table['out'])}" if table["out"] else ""
        return f"over, {won} won{out}"
    if state == "playing":
        return f"turn {table['turn']}, awaiting {', '.join(table['awaiting']) or 'nobody'}"
    return {
        "planned": "not made yet",
        "missing": "its folder has no game",
        "damaged": "damaged (pbem status says why)",
    }.get(state, state)
