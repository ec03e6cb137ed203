"""A turn's moves on the table: each attack order fought or skipped (and the elimination a
conquest may bring, with its trades), each fortification made or skipped.

Which dice each battle rolls is the engine's to say (`engine`); the fight itself is `battle`.
"""

from __future__ import annotations

from collections.abc import Callable

from pbem.core import fog, rules
from pbem.core.battle import battle
from pbem.core.dice import Stream
from pbem.core.events import AttackStopped, Conquered, Eliminated, Fortified, Skipped
from pbem.core.orders import Attack, Fortify
from pbem.core.state import NEUTRAL
from pbem.core.table import Table, win


def attack(
    table: Table,
    name: str,
    attack: Attack,
    next_stream: Callable[[Attack], tuple[Stream | None, int | None]],
    bonus_used: bool,
) -> tuple[int, bool]:
    """Carry out one attack order; returns (territories conquered, whether the +2 is used).
    Its dice come from `next_stream` once it is fought (in a fog game with its number among the
    turn's battles on its pair, recorded with its end)."""
    source, target = attack.source, attack.target
    if table.owner[source] != name:
        table.events.append(Skipped(name, attack.describe(), f"you do not hold {source}"))
        return 0, bonus_used
    if table.owner[target] == name:
        table.events.append(Skipped(name, attack.describe(), f"you already hold {target}"))
        return 0, bonus_used
    if table.owner[target] in table.state.mates(name):
        mate = table.owner[target]
        table.events.append(
            Skipped(name, attack.describe(), f"{mate}, your team-mate, holds {target}")
        )
        return 0, bonus_used
    if table.armies[source] < 2 or table.armies[source] <= attack.stop_at:
        table.events.append(
            Skipped(
                name,
                attack.describe(),
                f"{source} has only 1 army: an attack needs 2"
                if table.armies[source] < 2
                else f"{source} has {table.armies[source]} armies (stop at {attack.stop_at})",
            )
        )
        return 0, bonus_used
    stream, number = next_stream(attack)
    if stream is None:
        limit = fog.MOST_ATTACKS_ON_A_PAIR
        why = f"a game with fog allows {limit} attacks on {target} from {source} a turn"
        table.events.append(Skipped(name, attack.describe(), why))
        return 0, bonus_used
    defender = table.owner[target]
    last = battle(table.armies, table.events, table.promised, name, attack, defender, stream)
    if table.armies[target] > 0:
        why = f"{source} is down to {table.armies[source]}" + (
            f" (stop at {attack.stop_at})" if attack.stop_at > 1 else ""
        )
        table.events.append(AttackStopped(name, source, target, why, number))
        return 0, bonus_used

    moved, note = rules.move_in(table.armies[source], last, attack.move)
    table.owner[target] = name
    table.armies[source] -= moved
    table.armies[target] = moved
    table.events.append(Conquered(name, source, target, defender, moved, note, number))
    if defender != NEUTRAL and defender not in table.owner.values():
        bonus_used = eliminate(table, name, defender, target, bonus_used)
    table.check_missions(name)
    return 1, bonus_used


def eliminate(table: Table, victor: str, loser: str, where: str, bonus_used: bool) -> bool:
    """The loser is out; the victor takes their cards and, holding 6 or more, trades sets at
    once down to 4 or fewer, placing those armies on the territory just conquered."""
    taken = table.hands[loser]
    table.hands[loser] = []
    table.hands[victor].extend(taken)
    table.alive[loser] = False
    table.events.append(Eliminated(loser, victor, len(taken)))
    standing = table.last_standing(victor)
    if standing:
        win(table, standing)
        return bonus_used
    table.missions_fall_back(loser, f"{loser} was eliminated by {victor}", victor)
    table.check_missions(victor)
    hand = table.hands[victor]
    if len(hand) >= rules.ELIMINATION_TRADE_HAND:
        while len(hand) > rules.ELIMINATION_TRADE_DOWN_TO and not table.winner:
            rule = table.state.options.cards
            chosen = rules.best_set(table.board, hand, table.owned(victor), rule=rule)
            if chosen is None:  # cannot happen with 5 or more cards; kept for safety
                break
            value, bonus = table.trade(victor, chosen, forced=True, bonus_used=bonus_used)
            table.place(victor, where, value, "elimination")
            if bonus:
                table.place(victor, bonus, rules.CARD_TERRITORY_BONUS, "card")
                bonus_used = True
    return bonus_used


def fortify(table: Table, name: str, fortify: Fortify) -> None:
    reason = rules.can_fortify(table.view(), name, fortify.source, fortify.target)
    if reason:
        table.events.append(Skipped(name, fortify.describe(), reason))
        return
    moved, note = rules.fortify_move(table.armies[fortify.source], fortify.armies)
    table.armies[fortify.source] -= moved
    table.armies[fortify.target] += moved
    table.events.append(Fortified(name, fortify.source, fortify.target, moved, note))
    table.check_missions(name)
