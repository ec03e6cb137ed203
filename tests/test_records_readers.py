"""What every command reads of the moderator's changes (pbem/records/undone.py and
seat_changes.py), read straight from the files a game keeps: which undos are complete while
another is half done, who held which seat for which resolution and attempt."""

from __future__ import annotations

from pathlib import Path

import tomli_w

from pbem.records.seat_changes import SeatChange, holder_at
from pbem.records.undone import UndoRecord, undo_records


def change(seat: str, holder: str, resolution: int, attempt: int = 0) -> SeatChange:
    return SeatChange(
        resolution=resolution,
        number=1,
        time="2027-03-02T09:30:00+00:00",
        turn=resolution - 1,
        seat=seat,
        holder=holder,
        previous=seat,
        email=f"{holder}@example.org",
        previous_email=f"{seat}@example.org",
        holders=1,
        previous_secret="00" * 12,
        attempt=attempt,
    )


def test_the_holder_of_a_seat_is_its_own_last_change_before_the_resolution() -> None:
    changes = [change("carol", "erin", 3), change("bob", "finn", 4), change("carol", "gus", 6)]
    assert holder_at(changes, "bob", 3) == "bob"  # bob's seat changed only later
    assert holder_at(changes, "bob", 5) == "finn"
    assert holder_at(changes, "carol", 5) == "erin"  # not finn: bob's change is bob's seat's
    assert holder_at(changes, "carol", 7) == "gus"
    assert holder_at(changes, "dave", 7) == "dave"


def test_a_change_made_after_an_undo_holds_for_the_attempts_after_it() -> None:
    made = change("carol", "erin", 5, attempt=1)  # made once the first attempt at 5 was undone
    assert made.before(6) and not made.before(4)
    assert made.before(5)  # the live resolution 5
    assert not made.before(5, attempt=1)  # the first attempt, undone: carol still played it
    assert made.before(5, attempt=2)


def _undo(path: Path, resolution: int, attempt: int) -> UndoRecord:
    record = UndoRecord(resolution, attempt, "2027-03-02T09:30:00+00:00", "late", "ab" * 32, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(record.to_dict()))
    return record


def test_an_undo_half_done_is_not_listed_but_the_complete_ones_are(tmp_path: Path) -> None:
    undone = tmp_path / "history" / "undone"
    first = _undo(undone / "0003-1" / "undo.toml", 3, 1)
    _undo(undone / "0004-1" / "undo.toml", 4, 1)
    assert [(r.resolution, r.attempt) for r in undo_records(tmp_path)] == [(3, 1), (4, 1)]
    _undo(tmp_path / "history" / "undo.toml", 4, 1)  # the undo of 4 is not finished yet
    assert undo_records(tmp_path) == [first]
