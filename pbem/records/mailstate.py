"""The mail state of a game, or of a folder of games: one SQLite database, `mail/ledger.sqlite`.

It holds what `mail/seen.json` and `mail/sent.json` held (the messages read, the orders
accepted, the answers counted against the limits, the lines waiting for the moderator; the
reports built, skipped, resent and reminded, and the delivery ledger of the outbox), as rows
of one table, so that recording a message writes that message's rows and no others: reading
or sending a message costs the same with 100 or 100,000 behind it.

A command reads the whole state once (`MailState.open`), changes it in memory through `put`,
`drop`, `append` and `reset`, and makes each step durable with `commit`: one transaction, in
WAL mode and synced (`synchronous=FULL`), so that a command killed at any moment finds, when
run again, every step committed before and none of the one in flight. A commit first settles
the files written before it (`disk.settle`), so that nothing is recorded as done before what
it wrote is on the disk. A fetch marks each message's steps finished (`complete`) and commits
a group of messages at once; one that fails part way commits only its finished steps
(`commit_complete`).

A game whose state is still in the JSON files of older versions is migrated the first time a
command opens it under its lock: everything is copied in one transaction, which also records
the migration, and the JSON files are then renamed `seen.json.migrated` and
`sent.json.migrated`. A migration stopped before its commit leaves nothing that counts (it is
simply made again); one stopped after it has only the renaming left, which the next command
does. A damaged JSON file or database is a sentence naming it, never a traceback.

This lives with the game's storage rather than the mail, because `status` (which decides when
a turn may be resolved) reads when accepted orders came in; the mail layer is its only writer.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator, MutableMapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pbem.errors import GameFileError
from pbem.files import FileProblem, _kind, read_regular
from pbem.records.disk import settle, write

MAIL = "mail"
OUTBOX = "outbox"
"""Where every message pbem mails waits, one .eml file each, until it is sent."""
DATABASE = "ledger.sqlite"
SEEN = "seen.json"
SENT = "sent.json"
MIGRATED = ".migrated"
"""What a migrated JSON file's name gets at its end (`seen.json.migrated`)."""
SCHEMA = 2
"""The version of the database's tables (table `schema_version`); a newer one is refused. 1: the
records (`entries`, `meta`); 2: beside them, where each message handled was found in its mailbox
(`handled`), added to a database of version 1 by the first command that opens it under its
lock (`MailState.open`)."""
FILES = ("seen", "sent")
"""The two halves of the state, as the JSON files named them."""

_HANDLED = """
CREATE TABLE IF NOT EXISTS handled (
    mailbox TEXT NOT NULL,
    key TEXT NOT NULL,
    stamp TEXT NOT NULL,
    message_id TEXT NOT NULL,
    sender TEXT NOT NULL,
    PRIMARY KEY (mailbox, key)
) WITHOUT ROWID
"""
"""Since schema 2: the messages of each mailbox a fetch handled, by where it found them, so that
the next fetch skips them unread (pbem.mail.handled). `mailbox` names the mailbox
(`maildir:PATH`, `mbox:PATH`, `imap:USER@HOST:PORT/FOLDER`); `key` a message in it (a Maildir
name's unique part, an mbox message's offset, an IMAP UID), or, empty, the mailbox as a whole
(what is checked before any of its messages is skipped: an mbox's beginning and end, an IMAP
folder's UIDVALIDITY); `stamp` what must be the same for it to be the message recorded (a
file's size and time, where an mbox message ends); `message_id` and `sender` what a fetch says
of the message it skips."""

_TABLES = (
    """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    file TEXT NOT NULL,
    section TEXT NOT NULL,
    key TEXT,
    value TEXT NOT NULL,
    UNIQUE (file, section, key)
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
    + _HANDLED
)
"""`entries`: one row per record (`key`: its key in a table of records; NULL for an item of a
list), in the order it was first written (`n`), its value as JSON. `meta`: `made` (which JSON
files the database was made from, in the transaction that made it), `begun:seen` and
`begun:sent` (that half has been written: the first `mail send` of a game is decided by it)."""

_SHAPES: dict[str, tuple[type, type, str]] = {
    "messages": (dict, dict, "a table of messages"),
    "accepted": (dict, dict, "a table of accepted orders"),
    "to_tell": (list, str, "a list of lines for the moderator"),
    "answered": (dict, dict, "a table of answers"),
    "reports": (list, str, "a list of reports"),
    "skipped": (list, str, "a list of reports"),
    "reminded": (list, str, "a list of reminders"),
    "resent": (list, dict, "a list of reports resent"),
    "earlier": (dict, list, "a table of earlier deliveries"),
}
"""What each section of the mail state holds: the container, the kind of each of its items,
and how to say it."""

_DEFAULTS: dict[str, tuple[str, ...]] = {
    "seen": ("messages", "accepted"),
    "sent": ("reports", "messages"),
}
"""The sections each half always has (empty when nothing was written)."""

_FIELDS: dict[str, type] = {"also": list, "delivered": list, "refused": dict, "date": str}
"""The fields of a message's or an accepted order's record that are read as that kind."""


_UPSERT = (
    "INSERT INTO entries (file, section, key, value) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (file, section, key) DO UPDATE SET value = excluded.value"
)


def damage(data: dict[str, Any]) -> str | None:
    """What is wrong with one half of the mail state, or None: each value of the kind that is
    read from it, so that a hand-edited or damaged file is a sentence, not a traceback half-way
    through a fetch or a send."""
    for key, (kind, item, what) in _SHAPES.items():
        value = data.get(key)
        if value is None:
            continue
        items = list(value.values()) if isinstance(value, dict) else value
        if not isinstance(value, kind) or not all(isinstance(i, item) for i in items):
            return f"'{key}' is not {what}"
        for record in items if item is dict else ():
            for name, field_kind in _FIELDS.items():
                if name in record and not isinstance(record[name], field_kind):
                    return f"'{key}' holds a record whose '{name}' is not {field_kind.__name__}"
            if key == "accepted" and not _instant(record.get("date")):
                return f"'{key}' holds a record without a valid date"
    return None


def _instant(value: object) -> bool:
    try:
        return datetime.fromisoformat(str(value)).tzinfo is not None
    except ValueError:
        return False


def read_json(path: Path) -> dict[str, Any] | None:
    """An old JSON state file's contents, checked (None when there is none): what the
    migration copies. Damage is a GameFileError naming the file."""
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except FileProblem as err:
        raise GameFileError(f"cannot read {path}: {err}; restore it from a backup") from None
    except (ValueError, RecursionError) as err:
        raise GameFileError(f"{path} is damaged ({err}); restore it from a backup") from None
    if not isinstance(data, dict):
        raise GameFileError(f"{path} is damaged: not a JSON object; restore it from a backup")
    why = damage(data)
    if why is not None:
        raise GameFileError(f"{path} is damaged: {why}; restore it from a backup")
    return data


def _damaged(path: Path, why: object) -> GameFileError:
    return GameFileError(
        f"{path} is damaged ({why}); restore it from a backup (or, to start the mail state "
        "afresh, remove it: every message in the mailbox is then read again, and a game under "
        "way counts as never mailed)"
    )


def _unwritable(path: Path, err: Exception) -> GameFileError:
    return GameFileError(
        f"cannot write {path}: {err}; fix that and run the command again "
        "(nothing is lost: what was done so far is recorded)"
    )


def _check_regular(path: Path) -> None:
    """The database and its companions must be regular files (or absent): SQLite would block
    on a FIFO and follow a link."""
    for each in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            mode = os.lstat(each).st_mode
        except FileNotFoundError:
            continue
        except OSError as err:
            raise GameFileError(f"cannot read {each}: {err.strerror or err}") from None
        if not stat.S_ISREG(mode):
            raise GameFileError(
                f"cannot read {each}: this is {_kind(mode)}, not a regular file; remove it "
                "(and restore the mail state from a backup)"
            )


class MailState:
    """The mail state of one folder (a game, or a folder of games), read whole, changed in
    memory and written back change by change. `seen` and `sent` hold it as the JSON files did:
    sections of records (`seen["messages"][key]`) or lists (`sent["reports"]`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / MAIL / DATABASE
        self.seen: dict[str, Any] = {s: _SHAPES[s][0]() for s in _DEFAULTS["seen"]}
        self.sent: dict[str, Any] = {s: _SHAPES[s][0]() for s in _DEFAULTS["sent"]}
        self.begun: set[str] = set()
        self._changes: list[tuple[str, str, str, Any]] = []
        self._complete = 0
        """How many of `_changes` belong to finished steps (`complete`)."""
        self.failed = False
        """Whether a commit failed: the changes it held are not written, and are dropped."""
        self._made = ""
        self._version = SCHEMA
        self._marked: dict[tuple[str, str], tuple[str, str, str] | None] = {}
        """The messages marked (`mark`) or unmarked by this command, as they stand."""
        self._db: sqlite3.Connection | None = None

    # --- opening --------------------------------------------------------------------------

    @classmethod
    def open(cls, directory: Path) -> MailState:
        """The state of `directory`, its JSON files migrated first if it has them (the caller
        holds the folder's lock)."""
        state = cls(directory)
        _check_regular(state.path)
        if state.path.exists() and state._read_database(lazy=True):
            state._finish_migration()
            state._upgrade()
            return state
        state._migrate()
        return state

    @classmethod
    def peek(cls, directory: Path, section: str | None = None) -> MailState:
        """The state of `directory` as it is, for reading only: nothing is migrated or made
        (`status`, which takes no lock). `section`: only that section is read from the
        database (the others are left empty)."""
        state = cls(directory)
        _check_regular(state.path)
        if state.path.exists() and state._read_database(section):
            state.close()
            return state
        for name in FILES:
            data = read_json(directory / MAIL / f"{name}.json")
            if data is not None:
                state._take(name, data)
                state.begun.add(name)
        return state

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(
                    self.path, isolation_level=None, timeout=30, check_same_thread=False
                )  # one thread at a time (a fetch commits its games side by side)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
            except sqlite3.DatabaseError as err:
                raise _damaged(self.path, err) from None
            except (OSError, sqlite3.Error) as err:
                raise _unwritable(self.path, err) from None
            self._db = db
        return self._db

    def _read_database(self, section: str | None = None, lazy: bool = False) -> bool:
        """Read the database; False when it was never completed (made or migrated by a command
        stopped before its commit), which is then made again. `lazy`: the messages read
        (`seen["messages"]`, which grow with every message) are read one by one when asked for
        (`_Lazy`), the rest now."""
        db = self._connect()
        try:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not {"schema_version", "entries", "meta"} <= names:
                return False
            meta = dict(db.execute("SELECT name, value FROM meta").fetchall())
            if "made" not in meta:
                return False
            (version,) = db.execute("SELECT max(version) FROM schema_version").fetchone()
            if not isinstance(version, int) or version > SCHEMA:
                raise GameFileError(
                    f"{self.path} was written by a newer pbem (schema {version}, this pbem "
                    f"reads {SCHEMA}): upgrade pbem"
                )
            rows = db.execute(
                "SELECT file, section, key, value FROM entries"
                + (" WHERE section = ?" if section is not None else "")
                + (" WHERE NOT (file = 'seen' AND section = 'messages')" if lazy else "")
                + " ORDER BY n",
                () if section is None else (section,),
            ).fetchall()
        except sqlite3.DatabaseError as err:
            raise _damaged(self.path, err) from None
        self._made = str(meta["made"])
        self._version = version
        self.begun = {name for name in FILES if f"begun:{name}" in meta}
        halves: dict[str, dict[str, Any]] = {"seen": {}, "sent": {}}
        for file, section, key, value in rows:
            if file not in halves or not isinstance(section, str):
                raise _damaged(self.path, f"a row of an unknown kind ({file!r})")
            try:
                item = json.loads(value)
            except (TypeError, ValueError, RecursionError) as err:
                raise _damaged(self.path, f"a record of '{section}' is not JSON: {err}") from None
            if key is None:
                halves[file].setdefault(section, []).append(item)
            else:
                halves[file].setdefault(section, {})[key] = item
        for file, data in halves.items():
            why = damage(data)
            if why is not None:
                raise _damaged(self.path, f"the {file} state: {why}")
            self._take(file, data)
        if lazy:
            self.seen["messages"] = _Lazy(self)
        return True

    def _messages(self, key: str | None) -> list[tuple[str, Any]]:
        """The records of the messages read (`seen["messages"]`) from the database: the one
        under `key`, or (None) all of them in the order they were first written; each checked."""
        try:
            rows = (
                self._connect()
                .execute(
                    "SELECT key, value FROM entries WHERE file = 'seen' AND section = 'messages'"
                    + (" AND key = ?" if key is not None else " ORDER BY n"),
                    (key,) if key is not None else (),
                )
                .fetchall()
            )
        except sqlite3.DatabaseError as err:
            raise _damaged(self.path, err) from None
        out: list[tuple[str, Any]] = []
        for name, value in rows:
            try:
                item = json.loads(value)
            except (TypeError, ValueError, RecursionError) as err:
                raise _damaged(self.path, f"a record of 'messages' is not JSON: {err}") from None
            why = damage({"messages": {name: item}})
            if why is not None:
                raise _damaged(self.path, f"the seen state: {why}")
            out.append((str(name), item))
        return out

    def _take(self, file: str, data: dict[str, Any]) -> None:
        mine = self.seen if file == "seen" else self.sent
        for section, value in data.items():
            if isinstance(value, dict | list):
                mine[section] = value

    def _migrate(self) -> None:
        """Make the database, from the JSON files when there are any: in one transaction, which
        also records what it was made from; then the JSON files are renamed."""
        olds = {name: read_json(self.directory / MAIL / f"{name}.json") for name in FILES}
        found = {name: data for name, data in olds.items() if data is not None}
        if not found and not self.path.exists():
            return  # nothing yet: the database is made by the first commit
        rows: list[tuple[str, str, str | None, str]] = []
        for name, data in found.items():
            self._take(name, data)
            self.begun.add(name)
            for section, items in data.items():
                pairs: list[tuple[str | None, Any]] = (
                    list(items.items())
                    if isinstance(items, dict)
                    else [(None, v) for v in items]
                    if isinstance(items, list)
                    else []  # nothing pbem wrote: a value that is neither is not kept
                )
                rows += [(name, section, k, json.dumps(v, ensure_ascii=False)) for k, v in pairs]
        made = " ".join(f"{name}.json" for name in found) or "nothing"
        self._write(
            lambda db: (
                db.execute("DELETE FROM entries"),
                db.execute("DELETE FROM meta"),
                db.executemany(
                    "INSERT INTO entries (file, section, key, value) VALUES (?, ?, ?, ?)", rows
                ),
                db.executemany(
                    "INSERT INTO meta VALUES (?, '')", [(f"begun:{name}",) for name in found]
                ),
                db.execute("INSERT INTO meta VALUES ('made', ?)", (made,)),
            ),
            fresh=True,
        )
        self._made = made
        self._finish_migration()

    def _finish_migration(self) -> None:
        """Rename the JSON files the database was made from (left by a command stopped right
        after the migration's commit)."""
        for name in FILES:
            old = self.directory / MAIL / f"{name}.json"
            if f"{name}.json" in self._made.split() and os.path.lexists(old):
                try:
                    os.replace(old, old.with_name(old.name + MIGRATED))
                except OSError as err:
                    raise _unwritable(old, err) from None

    def _upgrade(self) -> None:
        """Bring a database of an older schema to this one, in one transaction (under the
        folder's lock): schema 2 adds the table `handled`, empty (the next fetch reads its
        mailbox whole, as before, and records what it handled)."""
        if self._version >= SCHEMA:
            return
        self._write(
            lambda db: (
                db.execute(_HANDLED),
                db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA,)),
            )
        )
        self._version = SCHEMA

    # --- the messages of a mailbox handled (read when asked, not with the rest) ---------------

    def handled(self, mailbox: str) -> dict[str, tuple[str, str, str]]:
        """The messages of `mailbox` recorded as handled, by key: (stamp, Message-ID, sender);
        the mailbox's own check under the empty key (see `_HANDLED`). Read from the database
        when asked: a fetch reads those of the mailbox it reads, and nothing else does."""
        if self._db is None and not self.path.exists():
            return {}
        try:
            rows = (
                self._connect()
                .execute(
                    "SELECT key, stamp, message_id, sender FROM handled WHERE mailbox = ?",
                    (mailbox,),
                )
                .fetchall()
            )
        except sqlite3.OperationalError as err:
            if "no such table" in str(err):  # a database of schema 1, read by `peek`
                return {}
            raise _unwritable(self.path, err) from None
        except sqlite3.DatabaseError as err:
            raise _damaged(self.path, err) from None
        return {str(k): (str(t), str(m), str(f)) for k, t, m, f in rows}

    def mark(self, mailbox: str, key: str, stamp: str, message_id: str, sender: str) -> None:
        """Record a message of `mailbox` as handled (committed with the changes around it, as
        it is when the commit comes, like a record `put`)."""
        self._marked[mailbox, key] = (stamp, message_id, sender)
        self._changes.append(("mark", mailbox, key, None))

    def unmark(self, mailbox: str, key: str) -> None:
        """Take back `mark` (a message whose handling is not recorded after all): whichever
        commit writes the mark, or would have, writes that it is not."""
        self._marked[mailbox, key] = None
        self._changes.append(("mark", mailbox, key, None))

    def forget_mailbox(self, mailbox: str) -> None:
        """Forget every message of `mailbox` recorded as handled (it is not what it was)."""
        self._changes.append(("forget", mailbox, "", None))

    # --- changing -------------------------------------------------------------------------

    def _half(self, file: str) -> dict[str, Any]:
        return self.seen if file == "seen" else self.sent

    def put(self, file: str, section: str, key: str, value: Any) -> None:
        """Set the record `key` of a table (its value as it is when `commit` comes)."""
        self._half(file).setdefault(section, {})[key] = value
        self._changes.append(("put", file, section, key))

    def drop(self, file: str, section: str, key: str) -> None:
        self._half(file).setdefault(section, {}).pop(key, None)
        self._changes.append(("put", file, section, key))

    def append(self, file: str, section: str, item: Any) -> None:
        self._half(file).setdefault(section, []).append(item)
        self._changes.append(("append", file, section, json.dumps(item, ensure_ascii=False)))

    def reset(self, file: str, section: str, items: list[Any]) -> None:
        """Replace a whole list (or table) by `items` (a list's items)."""
        self._half(file)[section] = list(items)
        dumped = [json.dumps(i, ensure_ascii=False) for i in items]
        self._changes.append(("reset", file, section, dumped))

    def begin(self, file: str) -> None:
        """Mark a half as written though nothing is in it yet."""
        self._changes.append(("begin", file, "", None))

    def complete(self) -> None:
        """Every change made so far belongs to a finished step: `commit_complete` writes it."""
        self._complete = len(self._changes)

    @property
    def between_steps(self) -> bool:
        """Whether every change waiting belongs to a finished step (`complete`): a commit now
        cuts no step in two."""
        return self._complete == len(self._changes)

    @property
    def pending(self) -> bool:
        """Whether changes wait for a commit."""
        return bool(self._changes)

    def commit(self) -> None:
        """Write every change since the last commit, in one synced transaction, once every
        file written before is on the disk (`disk.settle`)."""
        changes, self._changes, self._complete = self._changes, [], 0
        self._commit(changes)

    def commit_complete(self) -> None:
        """`commit` the changes of the finished steps (`complete`); those of a step under way
        are left out and dropped (the step is made again by the next command)."""
        changes, self._changes, self._complete = self._changes[: self._complete], [], 0
        self._commit(changes)

    def _commit(self, changes: list[tuple[str, str, str, Any]]) -> None:
        try:
            # settled with no change to write too: a write that failed fails this commit,
            # not a later one of a folder holding this one
            settle(self.directory)
            if changes:
                self._commit_now(changes)
        except BaseException:
            self.failed = True
            raise

    def _commit_now(self, changes: list[tuple[str, str, str, Any]]) -> None:
        halves = {c[1] for c in changes if c[0] not in _MARKS}
        rows: list[tuple[str, tuple[Any, ...]]] = [
            ("INSERT OR IGNORE INTO meta VALUES (?, '')", (f"begun:{file}",))
            for file in sorted(halves - self.begun)
        ]
        self.begun |= halves
        for op, file, section, arg in changes:
            if op in _MARKS:
                rows.append(_marking(op, file, section, self._marked.get((file, section))))
            elif op == "put":
                table = self._half(file).get(section, {})
                if arg in table:
                    rows.append(
                        (
                            _UPSERT,
                            (file, section, arg, json.dumps(table[arg], ensure_ascii=False)),
                        )
                    )
                else:
                    rows.append(
                        (
                            "DELETE FROM entries WHERE file = ? AND section = ? AND key = ?",
                            (file, section, arg),
                        )
                    )
            elif op == "append":
                rows.append(
                    (
                        "INSERT INTO entries (file, section, key, value) VALUES (?, ?, NULL, ?)",
                        (file, section, arg),
                    )
                )
            elif op == "reset":
                rows.append(("DELETE FROM entries WHERE file = ? AND section = ?", (file, section)))
                rows.extend(
                    (
                        "INSERT INTO entries (file, section, key, value) VALUES (?, ?, NULL, ?)",
                        (file, section, item),
                    )
                    for item in arg
                )

        def apply(db: sqlite3.Connection) -> None:
            for sql, values in rows:
                db.execute(sql, values)

        self._write(apply, fresh=not self.path.exists())

    def _write(self, work: Any, fresh: bool = False) -> None:
        """One transaction: `work(db)`, committed (synced) or, on any failure, rolled back."""
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                if fresh:
                    for statement in _TABLES.strip().split(";"):
                        if statement.strip():
                            db.execute(statement)
                    if db.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 0:
                        db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA,))
                    db.execute("INSERT OR IGNORE INTO meta VALUES ('made', 'nothing')")
                work(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as err:
            raise _unwritable(self.path, err) from None
        except sqlite3.DatabaseError as err:
            raise _damaged(self.path, err) from None

    # --- closing --------------------------------------------------------------------------

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> MailState:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


_GONE = object()
"""What `_Lazy` holds for a record removed (or known to be absent)."""


class _Lazy(MutableMapping[str, Any]):
    """The records of the messages read (`seen["messages"]`), read from the database one at a
    time when asked for, so that a fetch reads those of the messages it reads, not of every
    message ever read; all of them once iterated (in the order they were first written, with
    the changes made since). Changes are made in memory, as in any section, and written by
    `commit`."""

    def __init__(self, state: MailState) -> None:
        self._state = state
        self._held: dict[str, Any] = {}
        self._whole = False

    def __getitem__(self, key: str) -> Any:
        if key not in self._held and not self._whole:
            found = self._state._messages(key)
            self._held[key] = found[0][1] if found else _GONE
        value = self._held.get(key, _GONE)
        if value is _GONE:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self._held[key] = value

    def __delitem__(self, key: str) -> None:
        self[key]  # (a KeyError when there is none)
        self._held[key] = _GONE

    def _all(self) -> dict[str, Any]:
        if not self._whole:
            every = dict(self._state._messages(None))
            every.update(self._held)
            self._held, self._whole = every, True
        return self._held

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, v in self._all().items() if v is not _GONE])

    def __len__(self) -> int:
        return sum(1 for v in self._all().values() if v is not _GONE)


_MARKS = ("mark", "forget")
"""The changes of the table `handled` (their `file` is the mailbox, their `section` the key)."""


def _marking(
    op: str, mailbox: str, key: str, marked: tuple[str, str, str] | None
) -> tuple[str, tuple[Any, ...]]:
    """The statement of a change of the table `handled`: a message marked as it stands now
    (`marked`, None when unmarked since), or a mailbox forgotten."""
    if op == "forget":
        return ("DELETE FROM handled WHERE mailbox = ?", (mailbox,))
    if marked is None:
        return ("DELETE FROM handled WHERE mailbox = ? AND key = ?", (mailbox, key))
    return (
        "INSERT OR REPLACE INTO handled (mailbox, key, stamp, message_id, sender)"
        " VALUES (?, ?, ?, ?, ?)",
        (mailbox, key, *marked),
    )


def withdraw_reports(directory: Path, resolution: int, into: Path) -> None:
    """An undone resolution's reports: the messages built for them and not yet sent move from
    outbox/ to `into`, and they count as not mailed, so the reports of the resolution made
    again in its place are mailed. Safe to run again."""
    prefix = f"r{resolution:04d}-"
    with MailState.open(directory) as state:
        outbox = directory / OUTBOX
        files = sorted(outbox.iterdir()) if outbox.is_dir() else []
        for path in files:
            if path.name.startswith(prefix) and not path.is_dir():
                write(into / path.name, path.read_bytes())
                path.unlink()
        if "sent" not in state.begun:
            return
        sent = state.sent
        mine = f"{resolution:04d}/"
        keep = [k for k in sent["reports"] if not str(k).startswith(mine)]
        skipped = [k for k in sent.get("skipped", []) if not str(k).startswith(mine)]
        if keep != sent["reports"] or skipped != sent.get("skipped", []):
            state.reset("sent", "reports", keep)
            if "skipped" in sent:
                state.reset("sent", "skipped", skipped)
            state.commit()
