"""English left in a translated output: any run of three words of an English sentence of the
catalogue (a msgid), placeholders and punctuation aside, that the language's own translations
do not also hold (a word the same in both, a command's name)."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable
from email.message import EmailMessage
from pathlib import Path

from babel.messages.pofile import read_po

LOCALE = Path(__file__).resolve().parents[1] / "pbem" / "locale"
WORDS = 3


def phrases(text: str, n: int = WORDS) -> set[str]:
    """Every run of `n` words of `text` that no placeholder or punctuation breaks."""
    found: set[str] = set()
    for chunk in re.split(r"%\(\w+\)s|%%|[^\w' -]|\s-\s", text):
        words = re.findall(r"[A-Za-z][A-Za-z']*", chunk)
        found.update(
            " ".join(w.lower() for w in words[i : i + n]) for i in range(len(words) - n + 1)
        )
    return found


def _strings(path: Path, ids: bool) -> Iterable[str]:
    with path.open("rb") as handle:
        catalogue = read_po(handle)
    for m in catalogue:
        if not m.id:
            continue
        value = m.id if ids else m.string
        yield from value if isinstance(value, tuple) else (value,)


@functools.cache
def english() -> frozenset[str]:
    return frozenset(p for s in _strings(LOCALE / "pbem.pot", True) for p in phrases(s))


@functools.cache
def theirs(code: str) -> frozenset[str]:
    path = LOCALE / code / "LC_MESSAGES" / "pbem.po"
    return frozenset(p for s in _strings(path, False) if s for p in phrases(s))


def readable(text: str) -> str:
    """What a reader sees of an HTML page (the text outside tags, style and script)."""
    text = re.sub(r"<style.*?</style>|<script.*?</script>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


def left_in(text: str, code: str) -> list[str]:
    """The English runs of words left in `text`, read in language `code`."""
    return sorted((phrases(text) & english()) - theirs(code))


def message_text(msg: EmailMessage) -> str:
    """A message's subject and every text part, as read."""
    parts = [str(msg["Subject"] or "")]
    for part in msg.walk():
        if part.get_content_type() == "text/plain" and not part.get_filename():
            parts.append(part.get_content())
        elif part.get_content_type() == "text/html":
            parts.append(readable(part.get_content()))
    return "\n".join(parts)
