"""What the reading of a message found, told to the player in their language: where the orders
were, what pbem changed in them, and why none could be taken."""

from __future__ import annotations

from pbem.errors import Problem
from pbem.languages import i18n
from pbem.languages.i18n import Language
from pbem.mail.found import Choice, Fix, Found, Where
from pbem.records.store import Game
from pbem.terminal import printable


def speaking(game: Game, player: str) -> Language:
    """The language a player is written to in (the game's, or their own), English for a code
    this pbem does not know."""
    code = game.language_of(player)
    return i18n.language(code if code in i18n.LANGUAGES else i18n.DEFAULT)


def where(found: Found, lang: Language) -> str:
    """Where in the message an order file was ("in the quoted part of your message")."""
    _ = lang._
    name = printable(found.name)
    if found.where is Where.FILE:
        return _("in the attached file %(name)s", name=name) if name else _("in an attached file")
    if found.where is Where.QUOTE:
        return _("in the quoted part of your message")
    if found.where is Where.ATTACHED:
        if name:
            return _('in the message attached to yours ("%(subject)s")', subject=name)
        return _("in the message attached to yours")
    if found.in_report:
        return _("between the cut lines of the report in your message")
    return _("in the text of your message")


def found_notes(choice: Choice, lang: Language) -> list[str]:
    """What a player should know about the orders taken from their message: that they were
    not where a player's own orders are, that they are the ready file unchanged, what pbem
    changed in them."""
    found = choice.found
    if found is None:
        return []
    _ = lang._
    notes: list[str] = []
    if choice.ready is not None:
        notes.append(
            _(
                "These orders are the ready order file of your report (%(file)s), unchanged.",
                file=printable(choice.ready),
            )
        )
    if not found.where.own:
        notes.append(
            _("These orders are %(where)s; pbem read them from there.", where=where(found, lang))
        )
    if Fix.QUOTES in found.fixes:
        notes.append(
            _(
                "Your mail program had turned the straight quotes of the orders into curly "
                "quotes; pbem read them as straight quotes."
            )
        )
    if Fix.WRAPPED in found.fixes:
        notes.append(
            _(
                "Your mail program had broken a long line of the orders in two; pbem joined "
                "it again."
            )
        )
    return notes


def problem(problem: Problem, lang: Language) -> str:
    """A problem of reading a message, in the player's language."""
    if problem.template is None:
        return problem.message
    return lang._(problem.template, **problem.values)


def why_none(choice: Choice, lang: Language) -> str:
    """Why a message's orders cannot be taken (no orders, two different sets, only the ready
    file quoted or passed on, unreadable), in the player's language."""
    _ = lang._
    if choice.ambiguous is not None:
        first, second = choice.ambiguous
        return _(
            "I found two different sets of orders, one %(first)s and one %(second)s, and "
            "cannot tell which you mean: send one message with only the orders you want played.",
            first=where(first, lang),
            second=where(second, lang),
        )
    if choice.only_ready is not None:
        found, name = choice.only_ready
        return _(
            "no orders found: the only orders in your message are the ready order file of "
            "your report (%(file)s), unchanged, %(where)s. To play it as it is, attach it to a "
            "new message; to change it, edit the orders and send them.",
            file=printable(name),
            where=where(found, lang),
        )
    if choice.problem is not None:
        return problem(choice.problem, lang)
    return ""


def not_read(limit: Problem, subject: str, lang: Language) -> tuple[str, str]:
    """The subject and the words of the answer to a message over a limit (its size, its MIME
    parts), which was not read: why, and what to do."""
    _ = lang._
    why = problem(limit, lang)
    body = (
        _('Your message "%(subject)s" was not read: %(why)s.', subject=printable(subject), why=why)
        if subject
        else _("Your message was not read: %(why)s.", why=why)
    )
    body += "\n\n" + _(
        "Send your orders again in a message of their own: the order file in its text, or "
        "attached as one .toml file, without other attachments."
    )
    return _("not read: your message is too large"), body
