"""The battle of one attack: its rolls, from the first to the fall of the target or the
attacker's stop, one Rolled event each.

The hot loop of a turn's resolution (a big battle is thousands of rolls), kept apart from the
rest of `engine`: it reads the dice of the rolls that are sure to be rolled at once, and works
out each distinct roll's outcome only once.
"""

from __future__ import annotations

from pbem.core import rules
from pbem.core.dice import Stream
from pbem.core.events import Event, Rolled
from pbem.core.orders import Attack

# The outcome of a roll, by its dice: index a * 3 + d (attacker's and defender's dice) holds the
# rolls seen so far, keyed by their faces (the attacker's first, as rolled), each with its event
# fields (the dice as rolled, the losses) and the losses. At most 6^5 rolls of 3 against 2.
_Outcome = tuple[dict[str, object], int, int]
_OUTCOMES: list[dict[bytes, _Outcome]] = [{} for _ in range(12)]


def _outcome(a: int, faces: bytes) -> _Outcome:
    """The roll of `faces` (the attacker's `a` dice first), worked out once and kept."""
    a_dice, d_dice = tuple(faces[:a]), tuple(faces[a:])
    lost_a, lost_d = rules.battle(a_dice, d_dice)
    fields: dict[str, object] = {
        "attacker": a_dice,
        "defender": d_dice,
        "attacker_losses": lost_a,
        "defender_losses": lost_d,
    }
    outcome = _OUTCOMES[a * 3 + len(d_dice)][faces] = (fields, lost_a, lost_d)
    return outcome


def battle(
    armies: dict[str, int],
    events: list[Event],
    promised: bool,
    name: str,
    attack: Attack,
    defender: str,
    stream: Stream,
) -> int:
    """Roll until the target falls or the source is down to its stop; one Rolled event per
    roll, appended to `events`, and the armies left on both sides written to `armies`
    (`promised`: the game's stop_at_promised option). Returns the attacker's dice of the last
    roll (0 when none was rolled).

    The hot loop of the engine (a big battle is thousands of rolls): the armies are counted in
    locals and written back at the end; while both sides are far from the end, the dice of as
    many rolls as are sure to be rolled (a roll costs each side at most 2 armies) are read at
    once (`Stream.faces`: the same dice, read in one go); each roll's outcome is looked up among
    those already worked out, and its event built as `events.rolled` builds it, its fields
    filled from two ready dicts."""
    source, target = attack.source, attack.target
    mine, theirs = armies[source], armies[target]
    stop = max(1, attack.stop_at)
    wanted, stop_at = attack.dice, attack.stop_at
    # From `plenty` armies up, the attacker rolls as many dice as it ever will (`full`).
    plenty = max(4, stop + 3)
    full = rules.attack_dice_kept(plenty, wanted, stop_at, promised)
    base = {"player": name, "source": source, "target": target, "defender_name": defender}
    faces, outcomes, record, new = stream.faces, _OUTCOMES, events.append, object.__new__
    last = 0
    while mine > stop:
        if mine < plenty:
            a, d, rolls = rules.attack_dice_kept(mine, wanted, stop_at, promised), 2, 1
        elif theirs > 1:
            a, d = full, 2
            rolls = min((mine - plenty) // 2, (theirs - 2) // 2, _MOST_ROLLS_AT_ONCE - 1) + 1
        else:
            a, d, rolls = full, 1, 1
        if theirs < d:
            d = theirs  # rules.defence_dice: 2 with two or more armies
        n = a + d  # the attacker's dice come first in each roll
        dice = faces(n * rolls)
        known = outcomes[a * 3 + d]
        for at in range(0, n * rolls, n):
            rolled = dice[at : at + n]
            outcome = known.get(rolled) or _outcome(a, rolled)
            mine -= outcome[1]
            theirs -= outcome[2]
            event = new(Rolled)
            fields = event.__dict__
            fields |= base
            fields |= outcome[0]
            record(event)
        last = a
        if theirs == 0:
            break
    armies[source], armies[target] = mine, theirs
    return last


_MOST_ROLLS_AT_ONCE = 200
"""The most rolls whose dice the battle loop reads in one go."""
