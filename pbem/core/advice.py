"""Warnings about legal orders that are probably not what the player meant, each with its line,
never blocking (in the spirit of Eressea's echeck): read from the forecast of the plan."""

from __future__ import annotations

from pbem.core import rules
from pbem.core.forecast import AttackForecast, PlanForecast, forecast_plan, percent, plan_lines
from pbem.core.orders import ALL, BEST, Orders
from pbem.core.state import NEUTRAL, GameState, Phase
from pbem.errors import Problem

LARGE_STACK = 5
"""An enemy stack this large next to a territory left with 1 army is worth a warning."""
LIKELY = 0.5
"""A thin border is warned about when it is at least this likely."""
UNLIKELY = 0.05
"""An attack that may not happen is warned about when that is at least this likely."""


def warnings(state: GameState, orders: Orders, plan: PlanForecast) -> list[Problem]:  # type: ignore[type-arg]
    """What may surprise the player in accepted `orders`, in the order of the file."""
    out: list[Problem] = []
    if state.phase is Phase.PLAY and orders.trade == BEST and not plan.trades:
        out.append(
            Problem(
                'trade = "best" but your hand holds no set: nothing is traded this turn',
                orders.line_of("trade"),
            )
        )
    fortified = orders.fortify.target if orders.fortify is not None else None
    for i, f in enumerate(plan.attacks):
        earlier = {t for x in orders.attack[:i] for t in (x.source, x.target)}
        out += _attack_warnings(state, orders.player, f, fortified, f.attack.source in earlier)
    if orders.fortify is not None and plan.fortify is not None and plan.fortify.moved:
        source = orders.fortify.source
        touched = {t for x in orders.attack for t in (x.source, x.target)}
        if source not in touched:  # its armies are known: placements only
            there = state.armies(source) + sum(n for t, n in plan.placements if t == source)
            there += rules.CARD_TERRITORY_BONUS if plan.card_bonus == source else 0
            threat = _threat(state, orders.player, source, exclude=())
            if there - plan.fortify.moved.high == 1 and threat:
                out.append(
                    Problem(
                        f"the fortification leaves {source} with 1 army next to {threat}",
                        orders.fortify.line,
                    )
                )
    return sorted(out, key=lambda p: p.line or 0)


def _attack_warnings(
    state: GameState,
    player: str,
    f: AttackForecast,  # type: ignore[type-arg]
    fortified: str | None,
    after_earlier: bool,
) -> list[Problem]:
    """`after_earlier`: whether an earlier attack of the plan moves from or into the source."""
    a = f.attack
    out = []
    thin = [why for why, _ in f.skipped if after_earlier and ("army" in why or "stop at" in why)]
    if f.happens == 0 and f.skipped and (thin or after_earlier):
        out.append(
            Problem(
                f"this attack will never happen: {f.skipped[0][0]} by then"
                + (" (an earlier attack takes its armies)" if thin else ""),
                a.line,
            )
        )
        return out
    chance = sum(float(p) for why, p in f.skipped if why in thin)
    if chance >= UNLIKELY:
        out.append(
            Problem(
                f"{a.source} may be too thin to attack by then ({percent(chance)} of the "
                "time): an earlier attack moves its armies away or wears them down",
                a.line,
            )
        )
    after = f.source_after
    if after is not None and a.source != fortified:
        thin_left = float(after.probability(1))
        threat = _threat(state, player, a.source, exclude=(a.target,))
        if thin_left >= LIKELY and threat:
            how = (
                'move = "all" (the default) moves'
                if a.move == ALL
                else f"move = {a.move!r} moves".replace("'", '"')
            )
            out.append(
                Problem(
                    f"{how} all but 1 army out of {a.source} when it takes {a.target} "
                    f"({percent(thin_left)} of the time), next to {threat}; "
                    'move = "min" or a number keeps more behind',
                    a.line,
                )
            )
    return out


def _threat(state: GameState, player: str, territory: str, exclude: tuple[str, ...]) -> str:
    """The largest enemy stack next to `territory`, described, or "" if none is large."""
    stacks = [
        (state.armies(n), n)
        for n in state.board.neighbours(territory)
        if n not in exclude and state.owner(n) not in (player, NEUTRAL)
    ]
    if not stacks:
        return ""
    armies, name = max(stacks)
    if armies < LARGE_STACK:
        return ""
    return f"{name} ({state.owner(name)}, {armies} armies)"


def forecast_with_warnings(state: GameState, orders: Orders | None) -> list[str]:
    """The forecast of accepted orders, then their warnings ("warning: line 12: ...")."""
    if orders is None:
        return []
    plan = forecast_plan(state, orders)
    lines = plan_lines(plan)
    for warning in warnings(state, orders, plan):
        where = f"line {warning.line}: " if warning.line else ""
        lines.append(f"warning: {where}{warning.message}")
    return lines
