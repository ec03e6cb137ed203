"""Decision aids for a player's next turn: continents, threatened borders, the odds of attacks.

All from the board everyone sees (owners and armies) and the reinforcements every report shows
for every player: nothing private. The odds are those `pbem odds` prints, to the same digit:
worked out in floating point (`odds.printed_win`), from the exact fractions only when a
float lies too near a place where a printed digit changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pbem.core import fog, odds, rules
from pbem.core.state import GameState
from pbem.languages.i18n import _, place
from pbem.present.missions import owner_name
from pbem.present.plan import percent

STRONGEST = 3
"""How many of the player's strongest border territories the attack table starts from."""
ATTACKS = 6
"""The most rows of the attack table."""


@dataclass(frozen=True)
class ContinentAid:
    name: str
    bonus: int
    held: int
    size: int
    others: str
    """Who holds the rest, e.g. 'bob 3, carol 1' (empty when the player holds it all)."""


@dataclass(frozen=True)
class BorderAid:
    territory: str
    armies: int
    threat: int
    """Enemy armies on the territories next to it."""
    enemies: str
    """'Ural (bob, 4), Siberia (carol, 2)'."""


@dataclass(frozen=True)
class AttackAid:
    source: str
    armies: int
    target: str
    owner: str
    defenders: int
    now: str
    """The odds of taking it with the armies there now, as `pbem odds` prints them."""
    reinforced: str
    """The odds with every army of the next turn's reinforcements (before cards) added."""
    reinforced_armies: int


def _odds(attackers: int, defenders: int) -> str:
    if attackers < 2:
        return _("cannot attack")
    if attackers + defenders > odds.LARGEST:
        return _("too many to count")
    return percent(odds.printed_win(attackers, defenders))


def decision_aids(state: GameState, player: str) -> dict[str, object]:
    """Per continent what `player` holds and who holds the rest; their borders with the enemy
    armies next to each; the attacks from their strongest borders with their odds (of the
    rows shown only: they are chosen by the armies, not by the odds)."""
    board = state.board
    team = state.team(player)  # (team-mates' armies are no threat, nor theirs to attack)
    continents = []
    for c in board.continents.values():
        held = sum(1 for t in c.territories if state.owner(t) == player)
        rest: dict[str, int] = {}
        for t in c.territories:
            if state.owner(t) != player:
                rest[state.owner(t)] = rest.get(state.owner(t), 0) + 1
        unseen = _("not seen")  # (a catalogue entry: the extractor reads no f-string)
        others = ", ".join(
            f"{unseen if o == fog.UNKNOWN else owner_name(o)} {n}"
            for o, n in sorted(rest.items(), key=lambda i: -i[1])
        )
        continents.append(ContinentAid(c.name, c.bonus, held, len(c.territories), others))
    continents.sort(key=lambda c: (-(c.held / c.size), c.size - c.held, c.name))
    borders = []
    for t in state.owned(player):
        enemies = [n for n in board.neighbours(t) if state.owner(n) not in team]
        if not enemies:
            continue
        enemies.sort(key=lambda n: (-state.armies(n), n))
        borders.append(
            BorderAid(
                t,
                state.armies(t),
                sum(state.armies(n) for n in enemies),
                ", ".join(
                    f"{place(n)} ({owner_name(state.owner(n))}, {state.armies(n)})" for n in enemies
                ),
            )
        )
    borders.sort(key=lambda b: (-(b.threat - b.armies), b.territory))
    extra = rules.reinforcement(state, player).total
    choices = []
    for b in sorted(borders, key=lambda b: (-b.armies, b.territory))[:STRONGEST]:
        choices += [(b, n) for n in board.neighbours(b.territory) if state.owner(n) not in team]
    choices.sort(key=lambda c: (state.armies(c[1]) - c[0].armies, c[0].territory, c[1]))
    attacks = [
        AttackAid(
            b.territory,
            b.armies,
            n,
            owner_name(state.owner(n)),
            state.armies(n),
            _odds(b.armies, state.armies(n)),
            _odds(b.armies + extra, state.armies(n)),
            b.armies + extra,
        )
        for b, n in choices[:ATTACKS]
    ]
    return {  # names in the reader's language (pbem.languages.i18n), once sorted by the board's
        "continents": [replace(c, name=place(c.name)) for c in continents],
        "borders": [replace(b, territory=place(b.territory)) for b in borders],
        "attacks": [replace(a, source=place(a.source), target=place(a.target)) for a in attacks],
        "reinforcements": extra,
    }
