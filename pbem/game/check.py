"""Checking order files against a game directory, changing nothing: what `pbem check` does,
and what resolve and the mail do with each file they take.

It loads only what a check needs (the game, the rules, the forecast): none of the resolving,
the reports or the mail.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from pathlib import Path

from pbem.core.order_parsing import between_cuts
from pbem.core.orders import Orders
from pbem.core.problems import check_text
from pbem.errors import GameFileError, PbemError, Problem
from pbem.files import link_named, link_sentence
from pbem.game.checking import Checked, Submission, forecast, read_order_text, with_duplicates
from pbem.languages.i18n import language, moderator_language
from pbem.records.history import ORDERS, order_files
from pbem.records.opening import read_game
from pbem.records.store import Game


def check_submission(
    game: Game, path: Path, text: str | None = None, language: str | None = None
) -> Submission:
    """Parse, authenticate and validate one order file against the pending turn: every
    problem at once (`pbem.core.problems.check_text`), told in `language` (None: the
    moderator's, PBEM_LANG)."""
    told = {"language": language or moderator_language(), "board": game.state.board.name}
    if text is None:  # an order file in the game's orders/ is not read through a link
        inside = path.parent.absolute() == (game.path / ORDERS).absolute()
        link = None if inside else link_named(game.path, path)
        if link is not None:  # named inside the game's folders (an older orders/done/NNNN/)
            raise GameFileError(link_sentence(link))
        read = read_order_text(path, follow=not inside)
        if isinstance(read, Problem):
            return Submission(path, "", None, (read,), **told)
        text = read
    text = between_cuts(text)

    def secret(orders: Orders) -> Problem | None:
        return secret_problem(game, orders)

    orders, problems = check_text(game.state, text, secret)
    return Submission(path, text, orders, problems, **told)


def secret_problem(game: Game, orders: Orders) -> Problem | None:
    """Why the orders' secret is not their player's (None when it is, or the player is not in
    the game: that is told apart)."""
    reg = game.registration(orders.player)
    if reg is None or hmac.compare_digest(
        orders.secret.encode("utf-8"), reg.secret.encode("utf-8")
    ):
        return None
    from pbem.present.secret_check import wrong_secret
    from pbem.records.seat_changes import handed_over  # only for a wrong secret

    change = handed_over(game.path, reg.name, orders.secret)
    if change is not None:
        return Problem.of(
            "this seat has a new player: %(holder)s took over the seat %(seat)s before "
            "turn %(turn)s, and orders signed with the secret of its previous player are "
            "refused",
            orders.line_of("secret"),
            holder=change.holder,
            seat=change.seat,
            turn=change.turn,
        )
    return wrong_secret(orders)


def check_files(directory: Path, paths: Sequence[Path]) -> tuple[Game, list[Checked]]:
    """Check order files without changing anything, as resolve would (DIRECTORY/orders/ when
    no file is given, two valid files of one player refused); a valid file comes with its
    forecast."""
    game = read_game(directory)
    files = list(paths) if paths else order_files(directory)
    if not files:
        raise PbemError(
            f"no order files to check: {directory / 'orders'} holds none; give the files, or "
            "put them there"
        )
    checked = with_duplicates([check_submission(game, p) for p in files])
    board = game.state.board.name
    return game, [
        (s, forecast(game.state, s.orders, language(s.language, board)) if s.accepted else [])
        for s in checked
    ]
