"""Checking order files without a game directory: a player's own check against the view.json
of their report, the forecast of a valid file, and the lines both `pbem check` and the
player's kit print. Needs nothing beyond the standard library (and tomli on Python 3.10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pbem.core import odds, rules
from pbem.core.orders import ALL, Orders, parse_orders
from pbem.core.state import GameState, Phase
from pbem.errors import OrderError, Problem
from pbem.game.safety import ORDER_FILE_LIMIT, FileProblem, read_text
from pbem.present.i18n import language
from pbem.present.missions import draft_forecast
from pbem.present.view import read_view, view_language
from pbem.terminal import printable

NOT_TEXT = "this is not a text file in UTF-8: save the orders as plain text and send them again"


@dataclass(frozen=True)
class Submission:
    """One order file as checked: its orders when they parse, and every problem found."""

    path: Path
    text: str
    orders: Orders | None
    problems: tuple[Problem, ...] = ()
    language: str = "en"
    """The language its problems are told in (the player's, or the moderator's)."""
    board: str = "classic"

    @property
    def accepted(self) -> bool:
        return self.orders is not None and not self.problems

    @property
    def player(self) -> str | None:
        return self.orders.player if self.orders else None

    def messages(self) -> list[str]:
        """One line per problem, safe to print: whatever a player wrote is escaped."""
        lang = language(self.language, self.board)
        return [printable(lang.problem(p, self.path.name)) for p in self.problems]

    def valid(self) -> str:
        """The line that says the file is valid, in its language."""
        lang = language(self.language, self.board)
        return printable(lang._("%(file)s: valid.", file=self.path.name))


def read_order_text(path: Path) -> str | Problem:
    """An order file's text, or the problem that stops it being read (never blocking, never
    past the size limit: see safety.read_bounded)."""
    try:
        return read_text(path, ORDER_FILE_LIMIT)
    except FileProblem as err:
        return Problem(str(err))
    except UnicodeDecodeError:
        return Problem(NOT_TEXT)


Checked = tuple[Submission, list[str]]


def check_with_view(view_file: Path, paths: Sequence[Path]) -> list[Checked]:
    """A player's own check, against the view.json of their latest report (no secret check:
    the view does not hold the secret; the moderator's check does)."""
    state = read_view(view_file)
    lang = {"language": view_language(view_file), "board": state.board.name}
    out: list[Checked] = []
    for path in paths:
        text = read_order_text(path)
        if isinstance(text, Problem):
            out.append((Submission(path, "", None, (text,), **lang), []))
            continue
        try:
            orders = parse_orders(text, state.board)
        except OrderError as err:
            out.append((Submission(path, text, None, tuple(err.problems), **lang), []))
            continue
        problems = tuple(rules.validate(state, orders))
        submission = Submission(path, text, orders, problems, **lang)
        out.append((submission, forecast(state, orders) if not problems else []))
    return out


def forecast(state: GameState, orders: Orders | None) -> list[str]:
    """What a valid order file will do: placements, and the exact odds of each attack."""
    if orders is None:
        return []
    if orders.draft:
        return [draft_forecast(orders.draft)]
    lines: list[str] = []
    placed: dict[str, int] = {}
    total = (
        rules.reinforcement(state, orders.player).total
        if state.phase is Phase.PLAY
        else (state.player(orders.player).to_place)
    )
    traded = state.sets_traded
    for cards in rules.sets_to_trade(state, orders.player, orders.trade):
        value = rules.set_value(traded)
        traded += 1
        total += value
        lines.append(f"trade {', '.join(cards)} for {value} armies")
    for territory, amount in rules.placement_amounts(orders.place, total):
        placed[territory] = placed.get(territory, 0) + amount
        lines.append(f"place {amount} on {territory}")
    for attack in orders.attack:
        defenders = state.armies(attack.target)
        if state.owner(attack.source) == orders.player:
            attackers = state.armies(attack.source) + placed.get(attack.source, 0)
            if attackers + defenders > odds.LARGEST:
                lines.append(
                    f"attack {attack.target} from {attack.source}: {attackers} against "
                    f"{defenders} (too many armies for exact odds)"
                )
                continue
            odds_line = odds.forecast(attackers, defenders, attack.stop_at, attack.dice).summary()
            note = rules.attack_dice_note(attackers, attack.dice)
            lines.append(
                f"attack {attack.target} from {attack.source}: {odds_line}"
                + (f" (first roll: {note})" if note else "")
            )
        else:
            lines.append(
                f"attack {attack.target} ({defenders} {'army' if defenders == 1 else 'armies'}) "
                f"from {attack.source}, once taken: "
                "the odds depend on the armies moved in"
            )
    if orders.fortify is not None:
        lines.append(_fortify_forecast(state, orders, placed))
    return lines


def _fortify_forecast(state: GameState, orders: Orders, placed: dict[str, int]) -> str:
    """The fortification, and the cut it will get if it asks for more than will be there."""
    fortify = orders.fortify
    assert fortify is not None
    line = fortify.describe()
    if fortify.armies == ALL or state.owner(fortify.source) != orders.player:
        return line
    armies = state.armies(fortify.source) + placed.get(fortify.source, 0)
    _, note = rules.fortify_move(armies, fortify.armies)
    if note is None:
        return line
    if orders.attack:
        return f"{line} (at most {armies - 1} unless your attacks change that: more is cut)"
    return f"{line} ({note})"


def check_lines(results: Sequence[Checked]) -> tuple[list[str], bool]:
    """What `pbem check` prints for checked files, and whether every file is valid."""
    lines: list[str] = []
    ok = True
    for submission, forecast_lines in results:
        if submission.accepted:
            lines.append(submission.valid())
            lines += [f"  {line}" for line in forecast_lines]
        else:
            ok = False
            lines += submission.messages()
    return lines, ok
