"""The moderator's undo: take back the last resolution, keeping every file of it.

`undo_last` moves history/NNNN.toml, reports/NNNN/ and the used order files into
history/undone/NNNN-<n>/ (n: the how-many-th undo of resolution NNNN), with undo.toml saying
when and why; the order files go back into orders/, game.toml returns to the state before and
the game's tallies (history/tallies.json) to those of the resolution before.
The next resolution NNNN uses the same key (keys come from the chain by resolution number);
in a game whose dice follow the orders, other orders than the first time add a salt to it
(`first_orders`, docs/dice.md).

Crash safety: the undo is first written down in history/undo.toml; every step after that can
be done again; the last one removes history/undo.toml. `pbem undo` run again after a crash
finishes the interrupted undo, and `pbem resolve` refuses until it is finished.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import tomli_w

from pbem.core.state import Phase
from pbem.errors import GameFileError, PbemError
from pbem.files import FileProblem, read_regular, refuse_links
from pbem.records import clock, deadline_changes
from pbem.records.disk import atomic_write, locked
from pbem.records.history import (
    HISTORY,
    ORDERS,
    done_dir,
    drafted,
    history_count,
    history_path,
    plain_file_name,
    read_history_file,
    report_dir,
)
from pbem.records.mailstate import withdraw_reports
from pbem.records.opening import read_game
from pbem.records.store import write_game
from pbem.records.undone import (
    HELD,
    PENDING,
    RECORD,
    UndoRecord,
    _pending,
    held,
    undo_records,
    undone_folder,
)


def undo_last(directory: Path, now: datetime, why: str) -> tuple[UndoRecord, bool]:
    """Undo the last resolution (or finish an interrupted undo: then True)."""
    with locked(directory):
        refuse_links(directory)  # (an interrupted undo is finished before the game is read)
        pending = _pending(directory)
        if pending is not None:
            _carry_out(directory, pending)
            return pending, True
        if not why.strip():
            raise PbemError('say why the resolution is undone: --why "bob\'s orders came late"')
        game = read_game(directory)
        count = history_count(directory)
        if count != game.state.resolution:
            raise GameFileError("a resolution was interrupted: run 'pbem resolve' to finish it")
        r = count - 1
        if r < 1:
            raise PbemError("there is no resolution to undo: the setup cannot be undone")
        if game.state.phase is Phase.OVER and game.state.options.fogged:
            raise PbemError(
                "the game is over, and its last reports lifted the fog and revealed its keys: "
                "played again, its dice could be foreseen; the result stands"
            )
        from pbem.records.published import published_when

        published = published_when(directory)
        if published is not None:
            raise PbemError(
                f"the game's public record was published ({published}): it reveals the keys "
                "of the game's dice and cards, so a turn played again could be foreseen by "
                "anyone; the result stands"
            )
        from pbem.records.seat_changes import changed_after

        seat = changed_after(directory, r)
        if seat is not None:
            raise PbemError(
                f"the last resolution cannot be undone: after it, {seat.describe()}, and the "
                "orders for the seat are signed with the new player's secret; the turn stands"
            )
        history = read_history_file(history_path(directory, r))
        report_dir(directory, r)  # a link in the folders the undo empties: refused now
        done_dir(directory, r)
        for order in history.orders:  # checked before anything is changed
            if not plain_file_name(order.file):
                raise GameFileError(
                    f"{history_path(directory, r)} names the order file {order.file[:100]!r}, "
                    "which is not a plain file name: the undo cannot move it; restore the "
                    "history from a backup"
                )
        from pbem.records.mailstate import MailState

        MailState.open(directory).close()  # damaged mail state is refused before anything moves
        attempt = 1 + sum(1 for u in undo_records(directory) if u.resolution == r)
        record = UndoRecord(r, attempt, clock.iso(now), why.strip(), history.key, history.turn)
        atomic_write(directory / HISTORY / PENDING, tomli_w.dumps(record.to_dict()))
        _carry_out(directory, record)
        return record, False


def release(directory: Path) -> str | None:
    """Let a game held after an undo go on (`pbem run` resolves it again when it is due);
    what it was held for, or None when it was not held. A game whose folders hold a symbolic
    link is refused first (pbem.files.refuse_links), so that nothing outside it is removed."""
    refuse_links(directory)
    return released(directory)


def released(directory: Path) -> str | None:
    """`release` for a command that refused the game's links itself, under the lock it still
    holds (a resolve: its game was read, so checked, before it wrote anything)."""
    why = held(directory)
    (directory / HISTORY / HELD).unlink(missing_ok=True)
    return why


def taken_back(directory: Path, record: UndoRecord, finished: bool) -> str:
    """What `pbem undo` says it did: "Undid turn 13 (resolution 14, history/0014.toml); ..."."""
    what = "Finished the interrupted undo of" if finished else "Undid"
    played = record.played(drafted(read_game(directory)))
    return (
        f"{what} {played.words()}; its files are in history/undone/{record.folder_name}/ and "
        "its order files are back in orders/. The game waits for you: 'pbem run' leaves it "
        "alone until you resolve it by hand or run 'pbem release'."
    )


def _copy(source: Path, target: Path) -> None:
    try:
        atomic_write(target, read_regular(source, follow=False))
    except FileProblem as err:
        raise GameFileError(f"cannot read {source}: {err}; the undo cannot go on") from None


def _same_bytes(one: Path, other: Path) -> bool:
    """Whether two files hold the same bytes; a FIFO or a folder is never the same (and is
    not opened the ordinary way, which would block)."""
    try:
        return read_regular(one, follow=False) == read_regular(other, follow=False)
    except FileProblem:
        return False


def _carry_out(directory: Path, record: UndoRecord) -> None:
    """Every step of an undo; each can be run again after a crash with the same result."""
    from pbem.records import replay

    r = record.resolution
    folder = undone_folder(directory, record)
    atomic_write(folder / RECORD, tomli_w.dumps(record.to_dict()))
    live = history_path(directory, r)
    kept = folder / live.name
    if live.exists():
        _copy(live, kept)
    if not kept.exists():
        raise GameFileError(f"{kept} is missing: the undo cannot go on; restore from a backup")
    history = read_history_file(kept)

    reports = report_dir(directory, r)
    if reports.is_dir():
        for path in sorted(reports.iterdir()):
            if path.is_file():
                _copy(path, folder / "reports" / path.name)
        shutil.rmtree(reports)

    done = done_dir(directory, r)
    for order in history.orders:
        used = done / order.file
        if order.autopilot or not used.is_file():
            continue
        _copy(used, folder / "orders" / order.file)
        back = directory / ORDERS / order.file
        if back.exists() and not _same_bytes(back, used):
            back = back.with_name(f"{back.stem}-r{r:04d}{back.suffix}")
        os.replace(used, back)
    if done.is_dir() and not any(done.iterdir()):
        done.rmdir()

    withdraw_reports(directory, r, folder / "outbox")

    changes = deadline_changes.changes_folder(directory)
    if changes.is_dir():
        for path in sorted(changes.glob(f"{r + 1:04d}-*.toml")):
            _copy(path, folder / "deadlines" / path.name)
            path.unlink()

    # game.toml goes back before the history file goes: in between, the directory looks like
    # a resolution interrupted after its history was written, a state every reader accepts
    # (and `pbem resolve` will not complete it while history/undo.toml is there).
    game = read_game(directory)
    before = replay.state_after(game, r - 1)
    restored = replace(game, state=before)
    write_game(
        replace(restored, deadline=deadline_changes.pending_deadline(directory, restored, r))
    )
    if live.exists():
        live.unlink()
    from pbem.records.tallies import tallies_before, write_tallies

    # The tallies go back with the resolution: those of the one before, from the history.
    write_tallies(directory, tallies_before(directory, [p.name for p in before.players], r))
    hold = {"resolution": r, "time": record.time, "why": f"undone: {record.why}"}
    atomic_write(directory / HISTORY / HELD, tomli_w.dumps(hold))
    (directory / HISTORY / PENDING).unlink(missing_ok=True)
