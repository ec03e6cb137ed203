"""Team games: the teams a game is created with, and where their players sit.

`--teams 2x3` is two teams of three: the first team is the first, third and fifth player listed,
the second the second, fourth and sixth, so that team-mates never play one after another.
`--teams alice+carol,bob+dave` names them; the players then sit one of each team in turn, in
the order the teams are named (alice, bob, carol, dave). Who plays first is rolled as in any
game; the order round the table is this one.

Pure: no files, no clock; a bad spec raises ValueError with the reason in words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import zip_longest

from pbem.core.state import same_name

Teams = tuple[tuple[str, ...], ...]

_SHAPE = re.compile(r"(\d{1,3})\s*[xX×]\s*(\d{1,3})")


def parse_teams(spec: str, names: Sequence[str]) -> Teams:
    """The teams of `spec` ("2x2": two teams of two, from the players in the order listed;
    or "a+c,b+d": each team by its players' names) for the players `names`."""
    text = spec.strip()
    shape = _SHAPE.fullmatch(text)
    if shape:
        count, size = int(shape[1]), int(shape[2])
        if count < 2 or size < 2:
            raise ValueError(
                f"'{text}' is not a team game: give two or more teams of two or more players "
                "(2x2, 2x3, 3x2)"
            )
        if count * size != len(names):
            raise ValueError(
                f"{count} teams of {size} make {count * size} players, and {len(names)} are "
                "listed: list as many players as the teams hold"
            )
        teams = tuple(tuple(names[i::count]) for i in range(count))
    else:
        teams = tuple(
            tuple(_listed(member, names, text) for member in team.split("+"))
            for team in text.split(",")
        )
    check_teams(teams, names)
    return teams


def _listed(member: str, names: Sequence[str], spec: str) -> str:
    """The listed player `member` names (in any case)."""
    wanted = member.strip()
    for name in names:
        if same_name(name, wanted):
            return name
    if not wanted:
        raise ValueError(
            f"'{spec}' leaves a name out: write teams as alice+carol,bob+dave, or as 2x2"
        )
    raise ValueError(
        f"'{wanted}' is in a team but not among the players ({', '.join(names)}): "
        "name each listed player once"
    )


def check_teams(teams: Teams, names: Sequence[str]) -> None:
    """That `teams` put every one of `names` in exactly one team, in two or more teams, one of
    them at least of two players (else it is not a team game); ValueError otherwise."""
    members = [n for team in teams for n in team]
    twice = sorted({n for n in members if members.count(n) > 1})
    if twice:
        raise ValueError(f"{', '.join(twice)} cannot play in two teams, nor twice in one")
    left = [n for n in names if n not in members]
    if left:
        raise ValueError(f"{', '.join(left)} must play in a team: name every player in one")
    strangers = [n for n in members if n not in names]
    if strangers:
        raise ValueError(f"{', '.join(strangers)} in a team but not among the players")
    if len(teams) < 2:
        raise ValueError("a team game needs two or more teams")
    if max(len(team) for team in teams) < 2:
        raise ValueError("every team has one player: that is a game without teams")


def seating(teams: Teams) -> tuple[str, ...]:
    """The order the players of `teams` sit in: the first of each team, in the order the
    teams are given, then the second of each, and so on."""
    return tuple(n for row in zip_longest(*teams) for n in row if n is not None)
