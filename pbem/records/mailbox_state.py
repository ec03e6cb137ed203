"""When a folder's mailbox was last read in full: the record that keeps the autopilot from
playing a turn whose orders may be waiting in a mailbox pbem could not read.

A fetch that read its mailbox writes `mail/fetched.json` in the folder it fetched for (a game,
or a folder of games): the time it read it, and, for a folder of games, the games that could
not take their messages (which are read again by the next fetch). `pbem run` reads it: a game
past its deadline whose mailbox has not been read in full since the deadline is not played by
the autopilot. A folder that was never fetched into has no record: its games do not take mail
through pbem, and nothing is held.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from pbem.errors import PbemError
from pbem.files import FileProblem, read_regular
from pbem.records import clock
from pbem.records.disk import atomic_write

FETCHED = Path("mail") / "fetched.json"


def record_fetch(folder: Path, at: datetime, unread: dict[str, str] | None = None) -> None:
    """Record that `folder`'s mailbox was read at `at`; `unread`: the games (by name) whose
    messages could not be taken, since when (kept until a fetch takes them)."""
    data: dict[str, object] = {"at": clock.iso(at)}
    if unread:
        data["unread"] = dict(sorted(unread.items()))
    (folder / FETCHED).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / FETCHED, json.dumps(data, indent=2, sort_keys=True) + "\n")


def record_failure(folder: Path, at: datetime, why: str) -> None:
    """Record that a fetch for `folder` could not read its mailbox at `at` (the time it was
    last read in full, if ever, is kept): a folder whose mailbox was never read is then known
    to take mail, and its games wait for it."""
    data = _read(folder) or {}
    data["failed"] = clock.iso(at)
    data["why"] = why[:300]
    (folder / FETCHED).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / FETCHED, json.dumps(data, indent=2, sort_keys=True) + "\n")


def unread_since(folder: Path) -> dict[str, str]:
    """The games of a folder whose messages the last fetch could not take, since when."""
    data = _read(folder)
    unread = data.get("unread") if data else None
    return {str(k): str(v) for k, v in unread.items()} if isinstance(unread, dict) else {}


def last_read(folder: Path) -> datetime | None | bool:
    """When `folder`'s mailbox was last read in full; None when no fetch was ever tried for it
    (no record); False when it never was read, or the record cannot be read (damaged)."""
    path = folder / FETCHED
    if not path.is_file():
        return None
    data = _read(folder)
    if not data or "at" not in data:
        return False
    try:
        return clock.parse_instant(str(data["at"]), "time")
    except (ValueError, TypeError, PbemError):
        return False


def _read(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads(read_regular(folder / FETCHED).decode("utf-8"))
    except (FileProblem, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def held_by_mailbox(game_dir: Path, name: str, deadline: datetime) -> str | None:
    """Why the autopilot must not play a game past `deadline` yet: the mailbox that brings
    its mail (fetched for the game itself, or for a folder above it) has not been read in full
    since the deadline, or the last fetch could not take the game's messages. None when it
    has, or when no such folder ever fetched mail."""
    folders = [game_dir, *list(game_dir.resolve().parents)[:MAX_LEVELS]]
    known = [(folder, last_read(folder)) for folder in folders]
    known = [(folder, at) for folder, at in known if at is not None]
    if not known:
        return None
    for folder, _ in known:
        since = unread_since(folder).get(name) if folder != game_dir else None
        if since is not None:
            return (
                f"the fetch of {folder} could not take its messages (since {since}): fix what "
                "it said and fetch again; the autopilot plays only once they are read"
            )
    times = [at for _, at in known if isinstance(at, datetime)]
    latest = max(times) if times else None
    if latest is not None and latest >= deadline:
        return None
    if latest is None:
        return (
            f"its mailbox has never been read in full, and the deadline {clock.iso(deadline)} "
            "has passed: the autopilot plays only once it is read (pbem run --fetch, pbem mail "
            "fetch)"
        )
    return (
        f"its mailbox was last read at {clock.iso(latest)}, before the deadline "
        f"{clock.iso(deadline)}: the autopilot plays only once the mail since is read (pbem "
        "run --fetch, pbem mail fetch)"
    )


MAX_LEVELS = 8
"""How many folders above a game are looked at for a fetch that covers it."""
