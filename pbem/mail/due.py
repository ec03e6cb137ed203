"""What `pbem run --send` knows of each game's mail without opening it, so that a tick's sending
costs what waits and what is due, not every game of the root.

Sending a game's mail reads its game file, its settings, its mail state and its outbox, and
queues its reminders; in a root of ten thousand games most have nothing to send. The root's
index keeps, in `.pbem-tick/mail.json` (`mail-K-of-N.json` for shard K of N), each game that
had nothing to send when it was last opened: the fingerprint of its files then (the status
index's, pbem.records.rootindex: every entry of its folder, its `outbox/` among them, of
`orders/`, `mail/` and `history/`, and every `pbem.toml` above it), the notes sending said of
it (a report not mailed to a player without an address), and from when until when a reminder
would be queued in it as it stood (pbem.mail.reminders.Reminded.due: the earliest `remind` time
before its deadline whose reminder a player still lacks, until the deadline).

Each game is looked at when the tick's sending comes to it (in the order of the folders, after
the resolutions), as a send of every game would come to it, so that a message written into its
outbox while the tick runs goes with the tick whenever it would have before. A tick opens a
game (queues its reminders, sends its mail) when the index does not keep it,
when its fingerprint is not the one kept, when a reminder is due in it now (the clock goes
forward or back: the times are kept, not what they gave), or when this run resolved it; every
other game is told as sending it would tell it (its notes; "nothing to send"), unopened. What
can make a message wait or a report be built changes the fingerprint: a message written into
`outbox/` (an answer, a report resent, a reminder, one put back from `outbox/failed/`), a new
resolution, an undo, a seat taken, an address changed in the game file, a setting changed in
any `pbem.toml` above. What does not come from the files is the same for the whole index, or
the index is set aside: the command line's settings, `PBEM_FROM`, `--kit` and pbem's version.

A game is kept only as it was read: its fingerprint is taken before it is opened and again
after, and it is kept when both are the same (nothing was sent, queued or changed meanwhile)
and no file of it changed in the few seconds before (rootindex.RACY_NS). A game whose opening
changed anything, that failed, that another run held, or whose messages wait (no SMTP server,
a server refusing for now) is opened again at the next tick, as before: a message that waits
goes at the first tick that can send it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pbem import __version__
from pbem.errors import PbemError
from pbem.mail.inbox import RootSend, game_settings, send_answers, send_into
from pbem.mail.reminders import Reminded, queue_reminders
from pbem.mail.send import SendResult
from pbem.records import rootindex
from pbem.records.root import game_name
from pbem.records.rootindex import Found
from pbem.records.settings import FROM_ENV, Value

VERSION = 1
"""Raised whenever what an entry holds changes: an index of another version is set aside."""


def index_file(shard: tuple[int, int] | None) -> str:
    return "mail.json" if shard is None else f"mail-{shard[0]}-of-{shard[1]}.json"


def settings_digest(flags: Mapping[str, Value | None] | None, kit: bool) -> str:
    """What, besides a game's files, decides what sending it does: the settings given on the
    command line, the environment's `PBEM_FROM`, whether the kit goes with first reports, and
    pbem's version."""
    given = sorted((k, str(v)) for k, v in (flags or {}).items() if v is not None)
    said = [given, os.environ.get(FROM_ENV), kit, __version__]
    text = json.dumps(said, ensure_ascii=False)
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class Quiet:
    """What the index keeps of a game that had nothing to send when it was last opened."""

    notes: tuple[str, ...] = ()
    """What sending said of it (a report not mailed to a player without an address)."""
    remind: Reminded = field(default_factory=Reminded)
    """When a reminder would be queued in it (`Reminded.due`)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.remind.due_from is not None and self.remind.due_until is not None:
            out["remind"] = [self.remind.due_from.isoformat(), self.remind.due_until.isoformat()]
        return out

    @classmethod
    def from_json(cls, data: object) -> Quiet:
        """The entry as `to_json` wrote it; ValueError (or TypeError) when it is not."""
        if not isinstance(data, dict) or set(data) - {"notes", "remind"}:
            raise ValueError("not an entry of the mail index")
        notes = data.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("notes that are not lines")
        remind = Reminded()
        if "remind" in data:
            start, end = (datetime.fromisoformat(t) for t in data["remind"])
            if start.tzinfo is None or end.tzinfo is None:
                raise ValueError("a time without its offset")
            remind = Reminded(due_from=start, due_until=end)
        return cls(tuple(notes), remind)


@dataclass
class MailTick:
    """What a tick's sending did: the reminders queued (a line each), what sending did in
    every game (those not opened as the index tells them), and the games opened."""

    reminders: list[str] = field(default_factory=list)
    sent: RootSend = field(default_factory=RootSend)
    opened: list[Path] = field(default_factory=list)
    failed: str | None = None
    """Why the root's own answers could not be sent (its lock held, its settings damaged)."""


def send_due(
    root: Path,
    games: Sequence[Found],
    now: datetime,
    flags: Mapping[str, Value | None] | None = None,
    ask: Callable[[str, str], str] | None = None,
    kit: bool = False,
    answers: bool = True,
    shard: tuple[int, int] | None = None,
    names: Mapping[Path, str] | None = None,
    opened: Collection[Path] = (),
) -> MailTick:
    """Queue the reminders due at `now` in each of `games` (a root's, or its shard's; names
    of their own), and send its mail, opening only those that may have any, as the index of the
    root tells them, and those of `opened` (resolved in this run); then the root's own answers
    (with `answers`). Each game is looked at when its turn comes, as a send of every game
    would come to it. The index is brought up to date. `names`: the games' names, from the
    root's index of names (else read from their game files)."""
    digest = settings_digest(flags, kit)
    keep = rootindex.keeps_index(games)
    kept = _load(root, shard, digest) if keep else {}
    prints = rootindex.Fingerprints(root)
    fresh: dict[str, Any] = {}
    out = MailTick()
    resolved = set(opened)
    for game in games:
        name = (names or {}).get(game.path) or game_name(game.path)
        fingerprint, settled = prints.of(game)
        quiet = None if game.path in resolved else _quiet(kept.get(game.key), fingerprint)
        if quiet is not None and not quiet.remind.due(now):
            out.sent.games.append((name, SendResult(notes=list(quiet.notes))))
            fresh[game.key] = kept[game.key]
            continue
        out.opened.append(game.path)
        remind = _remind(game.path, flags, now, out.reminders)
        result = send_into(out.sent, name, game.path, flags, None, ask, now=now, kit=kit)
        if not (settled and remind is not None and result is not None) or remind.queued:
            continue
        if result.built or result.delivered or result.failed or result.pending:
            continue
        # kept only as it was read: nothing of it changed while it was opened (the settings
        # above it looked at afresh)
        if rootindex.Fingerprints(root).of(game)[0] == fingerprint:
            fresh[game.key] = [fingerprint, Quiet(tuple(result.notes), remind).to_json()]
    if answers:
        try:
            send_answers(out.sent, root, [g.path for g in games], flags, None, ask)
        except PbemError as err:
            out.failed = str(err)
    if keep and fresh != kept:
        body = {"version": VERSION, "settings": digest, "games": fresh}
        rootindex.save(root, index_file(shard), body)
    return out


def _load(root: Path, shard: tuple[int, int] | None, digest: str) -> dict[str, Any]:
    """The games the index keeps, when it was made with the same settings; none otherwise."""
    entries = rootindex.load(root, index_file(shard))
    games = entries.get("games")
    if entries.get("version") != VERSION or entries.get("settings") != digest:
        return {}
    return games if isinstance(games, dict) else {}


def _quiet(entry: object, fingerprint: str) -> Quiet | None:
    """What the index keeps of a game whose files look as they did, else None."""
    if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == fingerprint):
        return None
    try:
        return Quiet.from_json(entry[1])
    except (ValueError, TypeError):
        return None


def _remind(
    game: Path, flags: Mapping[str, Value | None] | None, now: datetime, lines: list[str]
) -> Reminded | None:
    """Queue the reminders due now in a game (its `remind` setting), a line each in `lines`;
    what its reminders are, or None when it cannot be read (it is told by the rest of the run,
    and reminds no one)."""
    try:
        done = queue_reminders(game, game_settings(game, flags), now)
    except PbemError:
        return None
    lines.extend(f"{game.name}: reminder queued: {name}" for name in done.queued)
    return done
