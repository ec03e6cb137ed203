"""Checking order files without a game directory: a player's own check against the view.json
of their report, the forecast of a valid file, and the lines both `pbem check` and the
player's kit print. Needs nothing beyond the standard library (and tomli on Python 3.10).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pbem.core.order_parsing import between_cuts
from pbem.core.orders import Orders
from pbem.core.problems import check_text
from pbem.core.state import GameState
from pbem.errors import Problem
from pbem.files import ORDER_FILE_LIMIT, FileProblem, read_text
from pbem.languages.i18n import Language, current, language, speaking
from pbem.languages.reasons import problem_told
from pbem.present.plan import forecast_with_warnings
from pbem.terminal import printable


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
        return [printable(problem_told(lang, p, self.path.name)) for p in self.problems]

    def valid(self) -> str:
        """The line that says the file is valid, in its language."""
        lang = language(self.language, self.board)
        return printable(lang._("%(file)s: valid.", file=self.path.name))


def read_order_text(path: Path, *, follow: bool = True) -> str | Problem:
    """An order file's text, or the problem that stops it being read (never blocking, never
    past the size limit, a link refused unless `follow`: see pbem.files.read_bounded)."""
    try:
        return read_text(path, ORDER_FILE_LIMIT, follow=follow)
    except FileProblem as err:
        return Problem(str(err))
    except UnicodeDecodeError:
        return Problem.of(
            "this is not a text file in UTF-8: save the orders as plain text and send them again"
        )


Checked = tuple[Submission, list[str]]


def check_with_view(view_file: Path, paths: Sequence[Path]) -> list[Checked]:
    """A player's own check, against the view.json of their latest report; the view carries a
    salted hash of that player's secret (only theirs), so a wrong secret is caught here too."""
    from pbem.present.view import read_view_with_secret, view_language

    state, secret_hash = read_view_with_secret(view_file)
    lang = {"language": view_language(view_file), "board": state.board.name}
    told = language(lang["language"], lang["board"])
    out: list[Checked] = []
    for path in paths:
        text = read_order_text(path)
        if isinstance(text, Problem):
            out.append((Submission(path, "", None, (text,), **lang), []))
            continue
        text = between_cuts(text)
        orders, problems = check_text(state, text, secret_hash.check if secret_hash else None)
        submission = Submission(path, text, orders, problems, **lang)
        out.append((submission, forecast(state, orders, told) if submission.accepted else []))
    submissions = with_duplicates([s for s, _ in out])
    return [
        (s, lines if s.accepted else []) for s, (_, lines) in zip(submissions, out, strict=True)
    ]


def with_duplicates(checked: Sequence[Submission]) -> list[Submission]:
    """The submissions, where a player has more than one valid file each of them refused:
    resolve would not know which to take."""
    valid: dict[str, list[Submission]] = {}
    for submission in checked:
        if submission.accepted and submission.player is not None:
            valid.setdefault(submission.player, []).append(submission)
    out = []
    for submission in checked:
        mine = valid.get(submission.player or "", [])
        if submission.accepted and len(mine) > 1:
            problem = Problem.of(
                "%(player)s has %(count)s valid order files (%(files)s): "
                "resolve takes none of them; keep one",
                player=submission.player or "",
                count=len(mine),
                files=", ".join(s.path.name for s in mine),
            )
            submission = replace(submission, problems=(problem,))
        out.append(submission)
    return out


def forecast(state: GameState, orders: Orders | None, lang: Language | None = None) -> list[str]:
    """What a valid order file will do: placements, and the exact odds of each step of the
    plan, followed in order (`pbem.core.forecast`), and warnings about what looks unintended
    (`pbem.core.advice`); for a draft list, what it asks for. In `lang` (the language spoken
    when None)."""
    with speaking(lang or current()):
        if orders is not None and orders.draft:
            from pbem.present.missions import draft_forecast  # (and the events) for a draft only

            return [draft_forecast(orders.draft)]
        return forecast_with_warnings(state, orders)


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
