"""The standings told as plain text (`pbem standings`): the table of players, the games in the
order they were rated in, the games under way and those skipped.
"""

from __future__ import annotations

from collections.abc import Sequence

from pbem.club.game_results import Place
from pbem.club.standings import PlayerStanding, Standings, Z

HEADINGS = (
    "#",
    "PLAYER",
    "RATING",
    "MU",
    "SIGMA",
    "GAMES",
    "FINISHED",
    "WON",
    "PLAYED",
    "MISSED",
    "AWAY",
    "RELIABILITY",
    "WINS BY",
)
_LEFT = {"PLAYER", "WINS BY"}


def _columns(rows: Sequence[Sequence[str]], headings: Sequence[str]) -> list[str]:
    """Rows under their headings, numbers to the right, names to the left."""
    everything = [list(headings), *[list(r) for r in rows]]
    widths = [max(len(r[i]) for r in everything) for i in range(len(headings))]
    return [
        "  ".join(
            cell.ljust(width) if heading in _LEFT else cell.rjust(width)
            for cell, width, heading in zip(row, widths, headings, strict=True)
        ).rstrip()
        for row in everything
    ]


def _cells(p: PlayerStanding) -> list[str]:
    rated = p.rank is not None
    reliability = p.reliability
    return [
        str(p.rank) if rated else "-",
        p.name,
        f"{p.ordinal:.1f}" if rated else "-",
        f"{p.mu:.2f}" if rated else "-",
        f"{p.sigma:.2f}" if rated else "-",
        str(p.games),
        str(p.finished),
        str(p.won),
        str(p.turns_played),
        str(p.turns_missed),
        str(p.turns_away),
        "-" if reliability is None else f"{reliability:.1f}%",
        ", ".join(f"{kind} {n}" for kind, n in p.wins_by.items() if n),
    ]


WON_BY = {
    "conquest": "by conquest",
    "mission": "by a mission",
    "rounds": "on territories after the last round",
    "team": "as a team",
    "": "",
}


def _place_words(place: Place) -> str:
    who = place.player if place.player == place.seat else f"{place.player} (seat {place.seat})"
    return f"{place.rank} {who}"


def standings_text(table: Standings) -> list[str]:
    """The standings as plain text: the table of players, the games in the order rated, the
    games under way and the games skipped with the reason."""
    finished = [g for g in table.games if g.finished]
    going = [g for g in table.games if not g.finished]
    out = [
        f"Standings of {table.root}: {_count(len(table.games), 'game')} read, "
        f"{len(finished)} finished and rated, {len(going)} under way"
        + (f", {len(table.skipped)} skipped." if table.skipped else ".")
    ]
    out += [""]
    if table.players:
        out += _columns([_cells(p) for p in table.players], HEADINGS)
        out += [
            "",
            f"RATING is mu - {Z:g} sigma of openskill's Plackett-Luce model (docs/standings.md);",
            "PLAYED, MISSED, AWAY: turns; AWAY: played by the autopilot on a vacation, not missed;",
            "RELIABILITY: turns played of turns played and missed.",
        ]
    else:
        out.append("No players: no game could be read.")
    if finished:
        out += ["", "Rated in this order (the time of each game's end, then its name):"]
        for i, g in enumerate(finished, 1):
            when = f"ended {g.time}" if g.time else "no time recorded"
            won = " + ".join(g.winners)
            places = ", ".join(_place_words(p) for p in g.places)
            out.append(f"  {i}. {g.name} ({when}): {won} won {WON_BY[g.victory or '']}; {places}")
    if going:
        out += ["", "Under way (not rated):"]
        out += [f"  {g.name}: after turn {g.turn}" for g in going]
    if table.skipped:
        out += ["", "Skipped (their history cannot be read):"]
        out += [f"  {s.path}: {s.reason}" for s in table.skipped]
    return out


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
