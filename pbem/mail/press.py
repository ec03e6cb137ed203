"""Table talk by mail: a player's message for other players, relayed by the game.

A player asks for it in one of two ways:
- a message whose subject begins with `press:` (or the word in the languages pbem speaks),
  followed by whom it is for: player names, `all` (everyone), or `#N` (whoever sent message N
  of the game's table talk, named or not); the text is what they wrote, without quotes or
  signature;
- an order file holding `[[press]]` tables (`to = "all"` or a list of names, `text = "..."`),
  and nothing else but `game`, `player` and `secret`.

Each message is checked against the game's rules (pbem.records.settings.PressRules), recorded in
the game's press/ folder (pbem.records.press) and put in the outbox once for each reader, from
the game's address: no player ever sees another's address. A message checked and refused is
relayed to no one, and the sender is told why.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pbem.core.state import Phase, same_name
from pbem.errors import Problem
from pbem.mail.found import Choice
from pbem.mail.message import REPLY_PREFIXES, Letter
from pbem.mail.outcomes import Incoming, Verdict
from pbem.mail.records import address, queue
from pbem.mail.refusing import Refusing, reason_told
from pbem.present.talk import readers_text
from pbem.records import press as record
from pbem.records.disk import write
from pbem.records.press import EVERYONE, Press
from pbem.records.settings import PressRules, in_force
from pbem.records.store import Registration
from pbem.terminal import printable

KEYWORDS = {
    "en": "press",
    "id": "pesan",
    "sv": "meddelande",
    "it": "messaggio",
    "nl": "bericht",
    "gu": "સંદેશ",
}
"""The word a subject of table talk begins with, in each language (each is read in any game);
relayed messages use their reader's."""
ALL = {"en": "all", "id": "semua", "sv": "alla", "it": "tutti", "nl": "iedereen", "gu": "બધા"}
"""The word for everyone after `press:`, in each language (each is read in any game)."""
EVERYONE_WORDS = frozenset({*ALL.values(), "everyone", "everybody", "allen"})
FILE_KEYS = frozenset({"game", "player", "secret", "turn", "press"})
"""What an order file of table talk may hold beside its `[[press]]` tables."""
OWN_WORDS = 20_000
"""How much of a message's own text is read (pbem.mail.found): a longer one is refused whole."""
MOST_TABLES = 20
"""The most `[[press]]` tables read from one file."""
_SUBJECT = re.compile(
    r"^\s*(?:" + "|".join(re.escape(w) for w in KEYWORDS.values()) + r")\s*:(.*)$",
    re.IGNORECASE | re.DOTALL,
)
_SEPARATORS = re.compile(r"[\s,;]+")
AND_WORDS = frozenset({"and", "dan", "och", "e", "en", "અને", "&"})
"""Words between names ("bob and carol") that name no one, unless a player has that name."""


@dataclass(frozen=True)
class Request:
    """One message of table talk as the player wrote it: whom for (names, `all`, `#N`, as
    written) and its text."""

    to: tuple[str, ...]
    text: str


def subject_recipients(subject: str) -> str | None:
    """What follows `press:` in a subject that begins with it (after any `Re:`, `Fwd:` and
    `[game]` tags), or None when the subject does not."""
    found = _SUBJECT.match(REPLY_PREFIXES.sub("", subject[:1000]))
    return None if found is None else found.group(1)


def words(recipients: str) -> tuple[str, ...]:
    """The names, `all` and `#N` of a subject's list of recipients."""
    return tuple(w for w in _SEPARATORS.split(recipients.strip()) if w)


def file_requests(data: Mapping[str, Any]) -> list[Request] | Problem:
    """The `[[press]]` tables of an order file, or the problem with them."""
    tables = data.get("press")
    if isinstance(tables, Mapping):
        tables = [tables]  # `[press]` written for `[[press]]`
    if not isinstance(tables, list) or not tables:
        return Problem.of("press must be one or more [[press]] tables, each with to and text")
    if len(tables) > MOST_TABLES:
        return Problem.of(
            "one message may hold at most %(most)s [[press]] tables", most=MOST_TABLES
        )
    out = []
    for table in tables:
        if not isinstance(table, Mapping):
            return Problem.of("press must be one or more [[press]] tables, each with to and text")
        to, text = table.get("to"), table.get("text")
        names = [to] if isinstance(to, str) else to
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) for n in names)
            or not isinstance(text, str)
            or set(table) - {"to", "text"}
        ):
            return Problem.of(
                'each [[press]] table holds to (a name, a list of names or "all") and text, '
                "and nothing else"
            )
        out.append(Request(tuple(w for n in names for w in words(n)), text))
    return out


def clean(text: str) -> str:
    """A player's text as relayed: line ends made plain, control and format characters (a
    right-to-left override, a zero-width joiner out of place) left out, tabs kept, trailing
    spaces and blank lines at either end removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    kept = "".join(
        c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co")
    )
    return "\n".join(line.rstrip() for line in kept.split("\n")).strip("\n")


class Relaying(Refusing):
    """The table talk of a game's fetch (pbem.mail.fetch's `_Fetcher` is one)."""

    sender: str
    now: datetime
    _press: list[Press] | None = None

    def press_records(self) -> list[Press]:
        """The game's table talk so far, read once a fetch and kept up to date by it."""
        if self._press is None:
            self._press = record.press_records(self.game.path)
        return self._press

    def table_talk(
        self, letter: Letter, raw: bytes, me: Registration | None, choice: Choice
    ) -> Incoming | None:
        """A message of table talk (pbem.mail.press) relayed or refused; None when the message
        is not one: its subject does not begin with `press:` followed by someone it can be for
        (a player's name, `all`, `#N`: "Press: my orders" is no table talk), and it holds no
        [[press]] table. A message of table talk in a game without it that holds orders is
        read for its orders."""
        data = choice.found.data() if choice.found is not None else None
        in_file = data is not None and "press" in data
        recipients = subject_recipients(letter.subject)
        nobody = recipients is not None and not self._names_anyone(words(recipients))
        if nobody and choice.found is not None and not in_file:
            recipients = None  # orders under "Press: my orders for turn 1": played
        in_file = in_file and recipients is None
        if not in_file and recipients is None:
            return None
        rules = in_force(self.game.path, self.game.mail).press
        if rules.kind == "none" and choice.found is not None and not in_file:
            return None  # orders under a subject of table talk, in a game without it
        if me is None:
            stranger = Problem.of("table talk is taken only from the players of the game")
            return self.reject(letter, raw, [stranger], to=None)
        sharing = [r for r in self.game.registrations if self.sent_by(letter.sender, r)]
        if in_file:
            assert data is not None
            named = self.game.registration(str(data.get("player", "")))
            if named is not None and named in sharing:
                me = named  # two players of one household may share an address
            others = sorted(str(k) for k in data if k not in FILE_KEYS)
            if str(data.get("game", "")) != self.game.name or named != me or others:
                wrong = Problem.of(
                    'a file of table talk holds game = "%(game)s", player = "%(player)s" and '
                    "its [[press]] tables, and nothing else: send orders in a message of their own",
                    game=self.game.name,
                    player=me.name,
                )
                return self.refuse_press(letter, raw, me, [wrong])
            return self.press(letter, raw, me, rules, file_requests(data))
        assert recipients is not None
        if len(sharing) > 1:
            shared = Problem.of(
                "this address plays for %(players)s: send table talk in an order file that says "
                'player = "..." and holds [[press]] tables, so that it goes out from the right '
                "seat",
                players=", ".join(r.name for r in sharing),
            )
            return self.refuse_press(letter, raw, me, [shared])
        note = None
        if choice.found is not None:
            note = self.speaking(me)._(
                "The orders in this message were not read: a message of table talk is relayed "
                "only. Send your orders in a message of their own."
            )
        if letter.trouble is not None:  # its text cannot be read (its MIME structure)
            return self.refuse_press(letter, raw, me, [letter.trouble], note)
        text = letter.reading.own_words
        if len(text) >= OWN_WORDS:  # read only so far: it is longer than any game relays
            long = Problem.of(
                "the message is longer than %(most)s characters: this game relays at most %(size)s",
                most=OWN_WORDS,
                size=rules.size,
            )
            return self.refuse_press(letter, raw, me, [long], note)
        if nobody:  # "Messaggio: vacanza?": maybe a question, and the moderator reads it
            note = self.speaking(me)._(
                "If it was not table talk, it is not lost: your message has been passed to the "
                "moderator."
            )
            self.out.summarise(
                letter.message_id,
                letter.sender or "",
                letter.subject,
                f"no one named after press: from {me.name}, passed on",
                "",
                text,
            )
        return self.press(letter, raw, me, rules, [Request(words(recipients), text)], note)

    def _names_anyone(self, written: Sequence[str]) -> bool:
        """Whether the words after `press:` name anyone table talk can be for: a player, all
        (in any language) or `#N`."""
        return any(
            w.casefold() in EVERYONE_WORDS
            or (w.startswith("#") and w[1:].isdigit())
            or any(same_name(r.name, w) for r in self.game.registrations)
            for w in written
        )

    def press(
        self,
        letter: Letter,
        raw: bytes,
        me: Registration,
        rules: PressRules,
        requests: Sequence[Request] | Problem,
        note: str | None = None,
    ) -> Incoming:
        """Relay a player's table talk, or refuse all of it saying why, by the game's `rules`;
        `note`: a sentence to add to the answer (orders beside it that were not read)."""
        told = self.speaking(me)
        if isinstance(requests, Problem):
            return self.refuse_press(letter, raw, me, [requests], note)
        digests = [_digest(letter, n) for n in range(len(requests))]
        problems: list[Problem] = []
        readers: list[tuple[str, ...]] = []
        written: list[tuple[str, ...]] = []
        for request in requests:
            seats, wrong, as_written = self._readers(me, request, rules)
            readers.append(seats)
            written.append(as_written)
            problems += wrong
            if not request.text.strip():
                problems.append(Problem.of("the message has no text to relay"))
            elif len(clean(request.text)) > rules.size:
                problems.append(
                    Problem.of(
                        "the message is %(size)s characters long; this game relays at most "
                        "%(most)s",
                        size=len(clean(request.text)),
                        most=rules.size,
                    )
                )
        pending = self.game.state.resolution
        sent = [
            p
            for p in self.press_records()
            if p.sender == me.name
            and p.holder == (me.holder or "")  # a substitute's are their own
            and p.resolution == pending
            and p.digest not in digests
        ]
        if len(sent) + len(requests) > rules.per_turn:
            problems.append(
                Problem.of(
                    "you have sent %(sent)s messages of table talk this turn; this game relays "
                    "at most %(most)s a turn: the next turn, you may send more",
                    sent=len(sent),
                    most=rules.per_turn,
                )
            )
        if problems:
            return self.refuse_press(letter, raw, me, _unique(problems), note)
        done = [
            self._relay(letter, me, request, seats, shown, digest, rules)
            for request, seats, shown, digest in zip(
                requests, readers, written, digests, strict=True
            )
        ]
        _ = told._
        lines = [
            _("Your table talk is relayed (message %(number)s of this game):", number=p.number)
            + "\n"
            + _("to %(readers)s", readers=readers_text(p, me.name, told))
            + "\n\n"
            + "".join(f"  | {line}\n" for line in p.text.split("\n"))
            for p in done
        ]
        body = "\n".join(lines)
        if rules.anonymous:
            body += "\n" + _("Its readers are not told who sent it; the moderator is.") + "\n"
        if note is not None:
            body += "\n" + note + "\n"
        subject = _("press relayed: %(readers)s", readers=readers_text(done[0], me.name, told))
        reply = self.out.answer(letter, me, subject, body)
        mid, frm = letter.message_id, letter.sender or ""
        reasons = tuple(
            f"press {p.number} relayed to {', '.join(p.to)}" + (" (unnamed)" if p.anonymous else "")
            for p in done
        )
        return Incoming(mid, frm, Verdict.RELAYED, me.name, reasons, reply)

    def _readers(
        self, me: Registration, request: Request, rules: PressRules
    ) -> tuple[tuple[str, ...], list[Problem], tuple[str, ...]]:
        """The seats a request is for, or the problems with it; and, when the sender wrote to
        someone as `#N` of an unnamed message, whom it is for as the sender may know it (each
        name and `#N` once, as written: `#1, #2` and `#1, alice` tell nothing more)."""
        state = self.game.state
        problems: list[Problem] = []
        if state.phase is Phase.OVER:
            problems.append(
                Problem.of("game '%(game)s' is over: no more table talk", game=self.game.name)
            )
        if rules.kind == "none":
            return (
                (),
                [
                    Problem.of(
                        "this game has no table talk: its players cannot write to each other "
                        "through it"
                    )
                ],
                (),
            )
        mine = state.player(me.name)
        out = not mine.alive or mine.dropped
        names = {r.name.casefold() for r in self.game.registrations}
        public = any(w.casefold() in EVERYONE_WORDS - names for w in request.to)
        if out and (rules.when_out == "none" or not public):
            problems.append(
                Problem.of("you are out of the game: you may not send table talk")
                if rules.when_out == "none"
                else Problem.of("you are out of the game: you may send table talk to everyone only")
            )
        if public:
            if not rules.public:
                problems.append(
                    Problem.of(
                        "this game relays table talk to chosen players only, not to everyone: "
                        "name them"
                    )
                )
            return (EVERYONE,), problems, ()
        if not rules.private:
            problems.append(
                Problem.of(
                    'this game relays table talk to everyone only: write "press: all" as the '
                    "subject"
                )
            )
        seats: list[str] = []
        written: list[str] = []  # as the sender may know them: names, and `#N` of unnamed ones
        for word in request.to:
            if word.casefold() in AND_WORDS and word.casefold() not in names:
                continue
            seat, label = self._seat(me, word, problems)
            if seat is None or seat == me.name:
                continue
            if (label or seat) not in written:
                written.append(label or seat)
            if seat not in seats:
                seats.append(seat)
        if not seats and not problems:
            problems.append(
                Problem.of(
                    'name whom the table talk is for after "press:": players of the game '
                    '(%(players)s), or "all"',
                    players=", ".join(r.name for r in self.game.registrations if r.name != me.name),
                )
            )
        shown = tuple(written) if tuple(written) != tuple(seats) else ()
        return tuple(seats), problems, shown

    def _seat(
        self, me: Registration, word: str, problems: list[Problem]
    ) -> tuple[str | None, str | None]:
        """The seat a word of the recipients names (a player's name, or `#N`), or None with
        the problem added; and `#N` when it names the unnamed sender of message N."""
        if word.startswith("#"):
            number = word[1:]
            found = next(
                (p for p in self.press_records() if number.isdigit() and p.number == int(number)),
                None,
            )
            if found is None or not found.seen_by(me.name):
                problems.append(
                    Problem.of(
                        "there is no message %(word)s of table talk that you read",
                        word=word[:20],
                    )
                )
                return None, None
            unnamed = found.sender_for(me.name) is None
            reg = self.game.registration(found.sender)
            if reg is None or not self._reads_press(reg):
                problems.append(  # (not named: its sender may be unnamed)
                    Problem.of(
                        "the sender of %(word)s has left the game or reads no table talk",
                        word=word[:20],
                    )
                )
                return None, None
            return found.sender, f"#{found.number}" if unnamed else None
        reg = next((r for r in self.game.registrations if same_name(r.name, word)), None)
        if reg is None:
            problems.append(
                Problem.of(
                    "there is no player '%(word)s' in this game: the players are %(players)s",
                    word=word[:40],
                    players=", ".join(r.name for r in self.game.registrations),
                )
            )
            return None, None
        if reg.name == me.name:
            return reg.name, None
        if self.game.state.player(reg.name).dropped:
            problems.append(Problem.of("%(player)s has left the game", player=reg.name))
            return None, None
        if reg.bot is not None or not address(reg.email):
            problems.append(
                Problem.of(
                    "%(player)s is played by a program or has no address: it reads no table talk",
                    player=reg.name,
                )
            )
            return None, None
        return reg.name, None

    def _reads_press(self, reg: Registration) -> bool:
        """Whether a seat reads table talk: a person's, with an address, still in the game."""
        dropped = self.game.state.player(reg.name).dropped
        return reg.bot is None and bool(address(reg.email)) and not dropped

    def _relay(
        self,
        letter: Letter,
        me: Registration,
        request: Request,
        seats: tuple[str, ...],
        shown: tuple[str, ...],
        digest: str,
        rules: PressRules,
    ) -> Press:
        """Record one message (once: a fetch run again finds it) and put it in the outbox of
        each of its readers."""
        records = self.press_records()
        press = next((p for p in records if p.digest == digest), None)
        if press is None:
            state = self.game.state
            when = min(letter.date, self.now) if letter.date is not None else self.now
            when = when.astimezone(timezone.utc)  # (a sender's own zone would tell of them)
            press = Press(
                number=max((p.number for p in records), default=0) + 1,
                digest=digest,
                resolution=state.resolution,
                turn=state.turn,
                time=when.isoformat(),
                sender=me.name,
                to=seats,
                anonymous=rules.anonymous,
                text=clean(request.text),
                holder=me.holder or "",
                written=shown,
            )
            folder = record.press_folder(self.game.path)
            write(folder / press.file_name, record.press_text(press), later=True)
            records.append(press)
        for reg in self.game.registrations:
            if reg.name == press.sender or not press.seen_by(reg.name):
                continue
            if not self._reads_press(reg):
                continue  # (public press: the seats that read none)
            self._tell(press, reg)
        return press

    def _tell(self, press: Press, reader: Registration) -> str:
        """One reader's copy of a message in the outbox."""
        told = self.speaking(reader)
        _ = told._
        shown = press.sender_for(reader.name)
        keyword = KEYWORDS.get(told.code, KEYWORDS["en"])
        if press.public:
            answer = ALL.get(told.code, ALL["en"])
        elif shown is None:
            answer = f"#{press.number}"
        else:
            others = [t for t in press.readers_for(reader.name) if t != reader.name]
            # (one written to as `#N` stays unnamed: an answer cannot reach them)
            answer = ", ".join([press.sender, *(t for t in others if not t.startswith("#"))])
        head = (
            _(
                "Table talk in %(game)s, turn %(turn)s, from %(sender)s to %(readers)s:",
                game=self.game.name,
                turn=press.turn,
                sender=shown,
                readers=readers_text(press, reader.name, told),
            )
            if shown is not None
            else _(
                "Table talk in %(game)s, turn %(turn)s, from a player not named to %(readers)s:",
                game=self.game.name,
                turn=press.turn,
                readers=readers_text(press, reader.name, told),
            )
        )
        quoted = "".join(f"| {line}\n" for line in press.text.split("\n"))  # (never a heading)
        body = head + "\n\n" + quoted + "\n-- \n"
        body += _(
            "Reply to this message and your reply goes to %(answer)s, as table talk too. To "
            'write to other players, mail the game with the subject "%(keyword)s:" and their '
            'names, or "%(keyword)s: all". The game relays table talk from its own address: no '
            "player sees another's address. It keeps every message: the moderator may read "
            "them, and they may be published when the game is over.",
            answer=answer,
            keyword=keyword,
        )
        subject = f"{keyword}: {answer}"
        return queue(
            self.game.path,
            self.game.name,
            self.sender,
            address(reader.email),
            "press",
            f"{press.digest}/{reader.name}{reader.stint}",
            subject,
            body + "\n",
            self.now,
        )

    def refuse_press(
        self,
        letter: Letter,
        raw: bytes,
        me: Registration,
        problems: Sequence[Problem],
        note: str | None = None,
    ) -> Incoming:
        """Relay nothing of a message: kept for the moderator, and the player told why."""
        mid, frm = letter.message_id, letter.sender or ""
        reasons = [p.message for p in problems]
        kept = self.out.keep(mid, raw, frm, "\n".join(reasons), letter)
        told = self.speaking(me)
        _ = told._
        body = _("Your table talk was not relayed:") + "\n\n"
        body += "".join(f"  {printable(reason_told(p, _))}\n" for p in problems)
        body += "\n" + _("Nothing of this message was relayed. Correct it and send it again.")
        body += "\n"
        if note is not None:
            body += "\n" + note + "\n"
        reply = self.out.answer(letter, me, _("press not relayed"), body)
        return Incoming(mid, frm, Verdict.REJECTED, me.name, tuple(reasons), reply, kept)


def _digest(letter: Letter, n: int) -> str:
    """The record's key of a message's `n`-th request: the same each time it is read."""
    key = f"{letter.message_id}\0{letter.digest}\0{n}"
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:16]


def _unique(problems: Sequence[Problem]) -> list[Problem]:
    out: list[Problem] = []
    for problem in problems:
        if all(p.message != problem.message for p in out):
            out.append(problem)
    return out
