"""Table talk in the reports: what each reader may see of the press of a turn
(pbem.records.press), ready for the templates and the view file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbem.languages import i18n
from pbem.present.text import wrap
from pbem.records.press import Press


def press_items(
    press: Sequence[Press], reader: str | None, lang: i18n.Language
) -> list[dict[str, Any]]:
    """The messages `reader` sent or was sent (None: the moderator, every one, senders named),
    each with its number, sender and readers as the reader is told, and its lines."""
    _ = lang._
    out = []
    for p in press:
        if reader is not None and not p.seen_by(reader):
            continue
        sender = p.sender_for(reader)
        who = _("a player not named") if sender is None else sender
        readers = readers_text(p, reader, lang)
        out.append(
            {
                "number": p.number,
                "heading": _(
                    "#%(number)s, from %(sender)s to %(readers)s:",
                    number=p.number,
                    sender=who,
                    readers=readers,
                )
                + (" " + _("(not named to its readers)") if p.anonymous and reader is None else ""),
                "lines": p.text.split("\n"),
                "text_lines": [
                    row for line in p.text.split("\n") for row in wrap(line, "    | ") or ["    |"]
                ],
            }
        )
    return out


def readers_text(press: Press, reader: str | None, lang: i18n.Language) -> str:
    """Whom a message went to, as `reader` may be told (None: the moderator): "everyone", or
    the players by name (one written to as `#N` stays `#N`)."""
    return lang._("everyone") if press.public else ", ".join(press.readers_for(reader))


def press_view(press: Sequence[Press], reader: str) -> list[dict[str, Any]]:
    """The press of a turn in `reader`'s view file (docs/views.md): those they sent or were
    sent, the sender null where it is not named to them."""
    return [
        {
            "number": p.number,
            "from": p.sender_for(reader),
            "to": list(p.readers_for(reader)),
            "text": p.text,
        }
        for p in press
        if p.seen_by(reader)
    ]


def record_lines(press: Sequence[Press], reader: str | None) -> list[str]:
    """The table talk of a game as text, for `pbem press`: every message (`reader` None: the
    moderator's whole record, each sender named) or those `reader` sent or was sent, as their
    reports told them."""
    lines = []
    for p in press:
        if reader is not None and not p.seen_by(reader):
            continue
        sender = p.sender_for(reader)
        who = "a player not named" if sender is None else sender
        if reader is None and p.anonymous:
            who += " (not named to its readers)"
        readers = readers_text(p, reader, i18n.language())
        lines.append(f"#{p.number}, turn {p.turn}, {p.time}: from {who} to {readers}")
        lines += [f"    | {line}" for line in p.text.split("\n")]
    return lines
