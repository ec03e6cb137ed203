"""Every problem of an order file at once: what reading it found, then, with the entries that
could be read, everything `validation.validate` finds, so that a misspelt name does not hide an
army-count error (one more mail round trip for the player)."""

from __future__ import annotations

from collections.abc import Callable

from pbem.core import validation
from pbem.core.order_parsing import parse_orders
from pbem.core.orders import Orders
from pbem.core.state import GameState
from pbem.errors import OrderError, Problem

SecretCheck = Callable[[Orders], "Problem | None"]


def check_text(
    state: GameState, text: str, secret: SecretCheck | None = None
) -> tuple[Orders | None, tuple[Problem, ...]]:
    """The orders of `text` (None when even its header cannot be read) and every problem,
    in the order of the file. A wrong secret stops there: whoever sent it learns nothing
    about the player's position."""
    try:
        orders = parse_orders(text, state.board)
        found: list[Problem] = []
        dropped = False
    except OrderError as err:
        if err.partial is None:
            return None, tuple(err.problems)
        orders, found, dropped = err.partial, list(err.problems), err.dropped_attack
    wrong = secret(orders) if secret is not None else None
    if wrong is not None:
        return orders, _in_file_order([*found, wrong])
    lines = {p.line for p in found if p.line is not None}
    for problem in validation.validate(state, orders):
        if problem.line is not None and problem.line in lines:
            continue  # that line already has its problem
        if dropped and "no earlier attack of yours takes it" in problem.message:
            continue  # it may well be taken by the attack that could not be read
        found.append(problem)
    return orders, _in_file_order(found)


def _in_file_order(problems: list[Problem]) -> tuple[Problem, ...]:
    return tuple(sorted(problems, key=lambda p: p.line or 0))
