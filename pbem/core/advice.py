"""Warnings about legal orders that are probably not what the player meant, each with its line,
never blocking (in the spirit of Eressea's echeck): read from the forecast of the plan.

Pure: each warning is a kind and its values (`Advice`), no sentence; `pbem.present.plan` tells
them in the reader's language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pbem.core import rules
from pbem.core.forecast import AttackForecast, PlanForecast
from pbem.core.orders import BEST, REST, Orders
from pbem.core.state import NEUTRAL, GameState, Phase

LARGE_STACK = 5
"""An enemy stack this large next to a territory left with 1 army is worth a warning."""
LIKELY = 0.5
"""A thin border is warned about when it is at least this likely."""
UNLIKELY = 0.05
"""An attack that may not happen is warned about when that is at least this likely."""


@dataclass(frozen=True)
class Threat:
    """The largest enemy stack next to a territory: where, whose, how many armies."""

    territory: str
    owner: str
    armies: int


@dataclass(frozen=True)
class Advice:
    """One warning: its kind, the line of the file it is about, and its values.

    Kinds and their values:
    - "best_without_set": none.
    - "forced_trade": `hand` (cards held), `cards` (the set pbem trades), `armies` (its
      value), `placed` ("last": with the last placement, on `territory`; "rest": by "rest";
      "counted": the placements already count them).
    - "never_happens": `reason` (the engine's reason, as it records it), `thin` (an earlier
      attack takes its armies).
    - "may_be_thin": `source`, `chance`.
    - "thin_border": `move` (the order's move: "all", "min" or a number), `source`, `target`,
      `chance`, `threat`.
    - "fortify_thin": `source`, `threat`.
    """

    kind: str
    line: int | None
    values: Mapping[str, object] = field(default_factory=dict)


def warnings(state: GameState, orders: Orders, plan: PlanForecast) -> list[Advice]:  # type: ignore[type-arg]
    """What may surprise the player in accepted `orders`, in the order of the file."""
    out: list[Advice] = []
    if state.phase is Phase.PLAY and orders.trade == BEST and not plan.trades:
        out.append(Advice("best_without_set", orders.line_of("trade")))
    if plan.forced and plan.trades:
        out.append(_forced(state, orders, plan))
    fortified = {f.target for f in orders.fortifications}
    for i, f in enumerate(plan.attacks):
        earlier = {t for x in orders.attack[:i] for t in (x.source, x.target)}
        out += _attack_warnings(state, orders.player, f, fortified, f.attack.source in earlier)
    touched = {t for x in orders.attack for t in (x.source, x.target)}
    for fortify, moves in zip(orders.fortifications, plan.fortifications, strict=False):
        source = fortify.source
        if moves.moved and source not in touched:  # its armies are known: placements only
            there = state.armies(source) + sum(n for t, n in plan.placements if t == source)
            there += rules.CARD_TERRITORY_BONUS if plan.card_bonus == source else 0
            threat = _threat(state, orders.player, source, exclude=())
            if there - moves.moved.high == 1 and threat:
                out.append(
                    Advice("fortify_thin", fortify.line, {"source": source, "threat": threat})
                )
        touched |= {fortify.source, fortify.target}  # (a later one starts from what it left)
    return sorted(out, key=lambda p: p.line or 0)


def _forced(state: GameState, orders: Orders, plan: PlanForecast) -> Advice:  # type: ignore[type-arg]
    """The forced trade pbem makes for a player whose orders trade none."""
    (cards, value), *_ = plan.trades
    values: dict[str, object] = {
        "hand": len(state.player(orders.player).hand),
        "cards": cards,
        "armies": value,
    }
    line = orders.line_of("player")
    if any(p.armies == REST for p in orders.place):
        values["placed"] = "rest"
    elif sum(n for _, n in plan.placements) == sum(int(p.armies) for p in orders.place):
        values["placed"] = "counted"
    else:
        last = orders.place[-1]
        values |= {"placed": "last", "territory": last.territory}
        line = last.line or line
    return Advice("forced_trade", line, values)


def _attack_warnings(
    state: GameState,
    player: str,
    f: AttackForecast,  # type: ignore[type-arg]
    fortified: set[str],
    after_earlier: bool,
) -> list[Advice]:
    """`after_earlier`: whether an earlier attack of the plan moves from or into the source."""
    a = f.attack
    out = []
    thin = [why for why, _ in f.skipped if after_earlier and ("army" in why or "stop at" in why)]
    if f.happens == 0 and f.skipped and (thin or after_earlier):
        reason = f.skipped[0][0]
        return [Advice("never_happens", a.line, {"reason": reason, "thin": bool(thin)})]
    chance = sum(float(p) for why, p in f.skipped if why in thin)
    if chance >= UNLIKELY:
        out.append(Advice("may_be_thin", a.line, {"source": a.source, "chance": chance}))
    after = f.source_after
    if after is not None and a.source not in fortified:
        thin_left = float(after.probability(1))
        threat = _threat(state, player, a.source, exclude=(a.target,))
        if thin_left >= LIKELY and threat:
            values = {
                "move": a.move,
                "source": a.source,
                "target": a.target,
                "chance": thin_left,
                "threat": threat,
            }
            out.append(Advice("thin_border", a.line, values))
    return out


def _threat(
    state: GameState, player: str, territory: str, exclude: tuple[str, ...]
) -> Threat | None:
    """The largest enemy stack next to `territory`, or None if none is large."""
    stacks = [
        (state.armies(n), n)
        for n in state.board.neighbours(territory)
        if n not in exclude and state.owner(n) not in (*state.team(player), NEUTRAL)
    ]
    if not stacks:
        return None
    armies, name = max(stacks)
    if armies < LARGE_STACK:
        return None
    return Threat(name, state.owner(name), armies)
