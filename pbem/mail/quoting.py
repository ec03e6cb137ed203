"""Which lines of a message the player wrote, and which their mail program added.

A reply carries the message it answers, and a report carries its ready order file: read
blindly, the quoted template would be taken for the player's orders. So the text is split
before any order is looked for: the player's own lines on one side; on the other, what was
quoted (`> ` lines, with one level taken off) and the original message below a separator
(`-----Original Message-----` and the separators of the common mail programs in the languages
pbem speaks, in German and in French; Outlook's `From:/Sent:/To:/Subject:` block, with or
without a line above it; an attribution "On Monday, Bob wrote:" with no quote after it).
A signature (`-- `) ends the player's own text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import takewhile

_WORDS_ORIGINAL = (
    "original message|original|reply message|ursprüngliche nachricht|originalnachricht|"
    "message d'origine|message d’origine|message original|messaggio originale|"
    "oorspronkelijk bericht|origineel bericht|oorspronkelijk e-mailbericht|"
    "ursprungligt meddelande|originalmeddelande|pesan asli|pesan original|mensaje original|"
    "mensagem original|મૂળ સંદેશ"
)
_WORDS_FORWARD = (
    "forwarded message|forwarded|weitergeleitete nachricht|message transféré|"
    "message transfere|e-mail transféré|messaggio inoltrato|doorgestuurd bericht|"
    "vidarebefordrat meddelande|vidarebefordrat brev|pesan terusan|pesan yang diteruskan|"
    "pesan diteruskan|mensaje reenviado|mensagem encaminhada|ફોરવર્ડ કરેલો સંદેશ|"
    "ફોરવર્ડ કરેલ સંદેશ"
)
_DASHED = re.compile(
    rf"^\s*[-=_*]{{2,}}\s*(?:(?P<forward>{_WORDS_FORWARD})|{_WORDS_ORIGINAL})\s*[-=_*]{{2,}}\s*$",
    re.IGNORECASE,
)
_BEGIN_FORWARD = re.compile(
    r"^\s*(begin forwarded message|anfang der weitergeleiteten nachricht|"
    r"début du message réexpédié|debut du message reexpedie|inizio messaggio inoltrato|"
    r"begin doorgestuurd bericht|vidarebefordrat brev|början på vidarebefordrat meddelande|"
    r"awal pesan yang diteruskan|pesan yang diteruskan)\s*:\s*$",
    re.IGNORECASE,
)
_RULE = re.compile(r"^\s*_{10,}\s*$")
_HEADER_FROM = re.compile(
    r"^\s*\*?\s*(from|von|de|da|van|från|fra|dari|pengirim|od|lähettäjä|મોકલનાર|પ્રેષક)"
    r"\s*\*?\s*:\s*\S",
    re.IGNORECASE,
)
_HEADER_OTHER = re.compile(
    r"^\s*\*?\s*(sent|date|to|cc|subject|reply-to|gesendet|datum|an|betreff|envoyé|envoye|"
    r"date|à|a|objet|inviato|data|oggetto|per|verzonden|aan|onderwerp|skickat|till|ämne|"
    r"kopia|dikirim|tanggal|kepada|subjek|perihal|tembusan|sendt|til|emne|enviado|enviada|"
    r"para|asunto|assunto|fecha|wysłane|wysłano|do|temat|lähetetty|vastaanottaja|aihe|"
    r"મોકલ્યો|પ્રતિ|વિષય|તારીખ)"
    r"\s*\*?\s*:\s*",
    re.IGNORECASE,
)
_WROTE = re.compile(
    r"(\b(wrote|writes|schrieb|geschrieben|a écrit|a ecrit|ha scritto|scrisse|schreef|skrev|"
    r"menulis|escribió|escreveu|napisał|napisała|kirjoitti)\b|લખ્યું)[^:]*:\s*$",
    re.IGNORECASE,
)  # the verb ends the line ("... Bob wrote:"), or comes before the name ("... schrieb Bob:")
_ON = re.compile(
    r"^\s*(on|am|le|il|op|den|pada|el|em|tanggal|dnia|\d)\b", re.IGNORECASE
)  # how an attribution line begins: "On Mon, ...", "Am 01.03.2027 ...", "Le lun. ...", "Op ..."
# What makes an attribution with no quote below it one (the sender's address), and not a
# player's own "On Monday at 10:30 I wrote the wrong orders, these are the right ones:"
_ADDRESSED = re.compile(r"@|<[^>]*>")
# A line of a header block in any language: a short label, a colon, a value.
_LABELLED = re.compile(r"^\s*\*?[^\W\d][\w .'-]{0,24}?\*?\s*:\s*\S")
_QUOTE = re.compile(r"^[ \t]*>")
_GAME_LINE = re.compile(r"^\s*game\s*=")
_FORWARD_SUBJECT = re.compile(
    r"^\s*(\[[^\]]*\]\s*)?(fwd?|fw|wg|tr|i|rv|doorst|vb|vs|trs|enc|pd|tr)\s*:", re.IGNORECASE
)


@dataclass(frozen=True)
class Parts:
    """A message's text, split."""

    own: str
    """The lines the player wrote: quotes, attributions, the signature and the original
    message below a separator left out."""
    quoted: str
    """What the player's mail program quoted: the `>` lines with one level taken off, then
    the original message below a separator."""
    forward: bool
    """Whether a forward separator was seen (the message passes on another one)."""


def split(text: str) -> Parts:
    """A message's text (line ends `\\n`) as the player's own lines and the quoted ones."""
    lines = _Lines(text.split("\n"))
    own: list[str] = []
    quoted: list[str] = []
    forward = False
    signed = False  # past the signature: the player's own text has ended
    for i, line in enumerate(lines):
        start = _original_starts(lines, i)
        if start is not None:
            forward = forward or start
            quoted.extend(_unquoted(rest) for rest in lines[i:])
            break
        if line.rstrip() in ("--", "-- "):
            signed = True
        elif _QUOTE.match(line):
            quoted.append(_unquoted(line))
        elif not signed and not _attribution(lines, i):
            own.append(line)
    return Parts("\n".join(own), "\n".join(quoted), forward)


class _Lines(list[str]):
    """A text's lines, with the next line that is not blank after each known at once (so that
    looking ahead costs the same on every line, whatever the text)."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.filled = [len(lines)] * (len(lines) + 1)
        for i in range(len(lines) - 1, -1, -1):
            self.filled[i] = i if lines[i].strip() else self.filled[i + 1]

    def following(self, i: int) -> str:
        """The first line after line i that is not blank ("" when there is none)."""
        n = self.filled[min(i + 1, len(self))]
        return self[n] if n < len(self) else ""


def forwarded(subject: str) -> bool:
    """Whether a subject says the message is a forward (`Fwd:`, `WG:`, `TR:`, `I:` ...)."""
    return bool(_FORWARD_SUBJECT.match(subject))


def _unquoted(line: str) -> str:
    """A quoted line with one level of quoting taken off (and the space after it)."""
    found = _QUOTE.match(line)
    if found is None:
        return line
    rest = line[found.end() :]
    return rest[1:] if rest.startswith(" ") else rest


def _original_starts(lines: _Lines, i: int) -> bool | None:
    """Whether line i begins the original message (True: of a forward; False: of a reply),
    or None when it does not."""
    line = lines[i]
    if _GAME_LINE.match(line):
        return None
    dashed = _DASHED.match(line)
    if dashed is not None:
        return dashed.group("forward") is not None
    if _BEGIN_FORWARD.match(line):
        return True
    if _RULE.match(line) and _header_block(lines, lines.filled[min(i + 1, len(lines))]):
        return False
    if _header_block(lines, i):
        return False
    if _ON.match(line) and not _quote_follows(lines, i) and len(line) < 300:
        if _WROTE.search(line) and _ADDRESSED.search(line):
            return False
        # an attribution the mail program wrapped: "On Mon, 1 Mar 2027, pbem <" + "x> wrote:"
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        wrapped = _WROTE.search(nxt) and _ADDRESSED.search(line + nxt)
        if wrapped and not _quote_follows(lines, i + 1):
            return False
    return None


def _header_block(lines: Sequence[str], i: int) -> bool:
    """Whether line i starts a block of a message's headers as mail programs write them above
    the original: `From: ...` then two of `Sent:`, `To:`, `Subject:` ... in the next lines, in
    the languages named above; or, in any language, three or more lines of `Label: value` in a
    row, one of them with an address (`Fra: pbem <games@example.org>`, `Sendt: ...`)."""
    if i >= len(lines):
        return False
    if _HEADER_FROM.match(lines[i]):
        others = sum(1 for line in lines[i + 1 : i + 8] if _HEADER_OTHER.match(line))
        if others >= 2:
            return True
    block = list(takewhile(lambda line: bool(_LABELLED.match(line)), lines[i : i + 6]))
    return len(block) >= 3 and any("@" in line for line in block)


def _quote_follows(lines: _Lines, i: int) -> bool:
    return bool(_QUOTE.match(lines.following(i)))


def _attribution(lines: _Lines, i: int) -> bool:
    """Whether line i introduces a quote ("On Monday, Bob wrote:" or any line ending in `:`
    right before `> ` lines), also when the mail program wrapped it over two lines."""
    line = lines[i].rstrip()
    if _GAME_LINE.match(line) or not line:
        return False
    if line.endswith(":") and _quote_follows(lines, i):
        return True
    # the first half of a wrapped attribution: "On Mon, 1 Mar 2027 at 12:00, pbem <"
    if _ON.match(line) and i + 1 < len(lines):
        nxt = lines[i + 1].rstrip()
        return bool(_WROTE.search(nxt)) and not _QUOTE.match(nxt) and _quote_follows(lines, i + 1)
    return False
