"""The moderator's undo: the last resolution taken back, kept in history/undone/, the same key
when it is resolved again, shown in `pbem dice`, later reports and the audit; crash-safe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomli as tomllib
import tomli_w
from click.testing import CliRunner
from conftest import attacking, new_game, skeleton, snapshot, write_skeletons

from pbem.cli import main
from pbem.core.dice import Stream, dice_key
from pbem.core.events import DiceKeyed
from pbem.errors import AuditError, GameFileError, PbemError
from pbem.game import processor, undo
from pbem.records import store, undone
from pbem.records.clock import parse_instant
from pbem.records.history import HistoryRecord, read_history, read_history_file, report_dir
from pbem.records.opening import read_game

NOW = parse_instant("2026-12-01T09:00Z")
WHY = "bob's orders were in the spam folder"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def _resolved_twice(directory: Path) -> dict[str, bytes]:
    """Play the setup and one turn with attacks; the snapshot just before the turn."""
    write_skeletons(directory)
    processor.resolve_game(directory)
    write_skeletons(directory)
    before = snapshot(directory)
    processor.resolve_game(directory)
    return before


def test_undo_keeps_every_file_and_returns_the_game_to_the_state_before(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    before = _resolved_twice(d)
    used = sorted(p.name for p in (d / "orders" / "done" / "0002").iterdir())
    record, finished = undo.undo_last(d, NOW, WHY)
    assert (record.resolution, record.attempt, finished) == (2, 1, False)
    after = snapshot(d)
    # the game as before, but for what was taken back, and the mark that it waits for you
    assert after.pop("history/held.toml").decode().startswith("resolution = 2\n")
    assert {k: v for k, v in after.items() if not k.startswith("history/undone/")} == before
    kept = d / "history" / "undone" / "0002-1"
    assert (kept / "0002.toml").is_file()
    assert sorted(p.name for p in (kept / "orders").iterdir()) == used
    assert (kept / "reports" / "alice.txt").is_file()
    assert (kept / "undo.toml").read_text().count(WHY) == 1
    assert not (d / "history" / "0002.toml").exists()
    assert not report_dir(d, 2).exists()
    assert not (d / "orders" / "done" / "0002").exists()
    assert processor.audit_game(d).resolutions == 2


def test_undo_is_repeatable_back_to_the_setup_and_no_further(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    created = (d / "game.toml").read_bytes()
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    undo.undo_last(d, NOW, "and the setup turn too")
    assert (d / "game.toml").read_bytes() == created
    assert sorted(p.name for p in (d / "history" / "undone").iterdir()) == ["0001-1", "0002-1"]
    with pytest.raises(PbemError, match="the setup cannot be undone"):
        undo.undo_last(d, NOW, WHY)
    with pytest.raises(PbemError, match="say why"):
        undo.undo_last(d, NOW, "  ")


def _stream_matches(key: str, record: HistoryRecord) -> bool:
    """Whether every die of the record is the next one of the stream of the key and the orders
    (docs/dice.md), the salt of a resolution played again included."""
    keyed = record.events[0]
    assert isinstance(keyed, DiceKeyed)
    again = bytes.fromhex(keyed.again) if keyed.again else None
    stream = Stream.public(dice_key(bytes.fromhex(key), keyed.orders, again))
    return all(
        list(stream.dice(len(r["attacker"]))) == r["attacker"]
        and list(stream.dice(len(r["defender"]))) == r["defender"]
        for r in record.rolls()
    )


def test_resolved_again_with_other_orders_it_uses_the_same_key_other_dice(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    first = read_history(d, 2)
    undo.undo_last(d, NOW, WHY)
    player = read_game(d).state.awaiting()[0]
    text = attacking(skeleton(d, player)).replace("stop_at = 3", "dice = 2\nstop_at = 2")
    (d / "orders" / f"{player}.toml").write_text(text)
    processor.resolve_game(d)
    second = read_history(d, 2)
    assert second.orders[0].text != first.orders[0].text
    assert second.key == first.key
    assert first.rolls() and second.rolls() and first.rolls() != second.rolls()
    assert _stream_matches(first.key, first) and _stream_matches(second.key, second)


def test_an_undone_resolution_shows_in_dice_later_reports_and_audit(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    run("undo", d, "--why", WHY, "--now", "2026-12-01T09:00Z")
    run("resolve", d, "--now", "2026-12-01T10:00Z")
    out = run("dice", d)
    assert "(resolution 2, history/0002.toml) UNDONE" in out
    note = (
        f"turn 1 (resolution 2, history/0002.toml) was undone on Tue 1 Dec 2026, 09:00 UTC: {WHY}"
    )
    assert note in out
    entries = json.loads(run("dice", d, "--json", "--resolution", "2"))
    assert [e.get("undone", {}).get("why") for e in entries] == [WHY, None]
    assert entries[0]["key"] == entries[1]["key"]
    reported = f"turn 1 was undone on Tuesday 1 December 2026, 09:00 UTC: {WHY}"  # (a report
    # names the turn, as players do; `pbem dice` the resolution too)
    for name in ("alice.txt", "bob.html", "_moderator.txt"):
        told = (report_dir(d, 2) / name).read_text().replace("&#39;", "'")
        assert reported in " ".join(told.split())  # the text reports wrap it to 78 columns
    assert "audit passed: the deal to turn 1 replayed (3 resolutions" in run("audit", d)


@pytest.mark.parametrize("tamper", ["key", "die"])
def test_audit_checks_the_undone_resolutions_against_the_chain(tmp_path: Path, tamper: str) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    path = d / "history" / "undone" / "0002-1" / "0002.toml"
    data = store._load_toml(path)
    if tamper == "key":
        data["key"] = "00" * 32
    else:
        roll = next(e for e in data["events"] if e["type"] == "rolled")
        roll["attacker"][0] = roll["attacker"][0] % 6 + 1
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    with pytest.raises(AuditError, match=r"undone turn 1, \w+'s turn \(resolution 2, "):
        processor.audit_game(d)


def test_undoing_the_same_resolution_again_is_its_second_undo(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    processor.resolve_game(d)
    record, _ = undo.undo_last(d, NOW, "tried twice")
    assert record.attempt == 2
    assert "undo number 2 of that turn" in record.note()
    kept = [
        read_history_file(p / "0002.toml") for p in sorted((d / "history" / "undone").iterdir())
    ]
    assert kept[0] == kept[1]  # the same orders and the same key: the same dice
    assert processor.audit_game(d).resolutions == 2


def test_a_newer_order_file_in_orders_is_not_overwritten(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    used = next((d / "orders" / "done" / "0002").iterdir())
    (d / "orders" / used.name).write_text("# the next turn's orders, already mailed in\n")
    undo.undo_last(d, NOW, WHY)
    assert (d / "orders" / used.name).read_text().startswith("# the next turn's")
    assert (d / "orders" / f"{used.stem}-r0002.toml").read_bytes() == (
        d / "history" / "undone" / "0002-1" / "orders" / used.name
    ).read_bytes()


def test_an_autopilot_file_is_not_put_back_into_orders(tmp_path: Path) -> None:
    d = tmp_path / "g"
    run(
        "new", d, "--players", "alice,bob,carol", "--turn-time", "1d",
        "--now", "2026-12-01T00:00Z",
    )  # fmt: skip
    before = {}
    for player in ("alice", "bob"):
        (d / "orders" / f"{player}.toml").write_text(skeleton(d, player))
    before = snapshot(d)
    run("resolve", d, "--now", "2026-12-02T00:00Z")
    run("deadline", d, "--extend", "1h", "--why", "x", "--now", "2026-12-02T00:01Z")
    run("undo", d, "--why", "carol's mail came late", "--now", "2026-12-02T01:00Z")
    after = snapshot(d)
    after.pop("history/held.toml")
    assert {k: v for k, v in after.items() if not k.startswith("history/undone/")} == before
    assert (d / "history" / "undone" / "0001-1" / "deadlines" / "0002-1.toml").is_file()
    assert "audit passed" in run("audit", d)


class Crash(Exception):
    pass


def _interrupted(directory: Path, monkeypatch: pytest.MonkeyPatch, name: str, calls: int) -> None:
    """An undo of resolution 2 that stops after the `calls`-th call of undo's `name`."""
    original = getattr(undo, name)
    count = 0

    def crash_after(*args: object, **kwargs: object) -> object:
        nonlocal count
        result = original(*args, **kwargs)
        count += 1
        if count == calls:
            raise Crash(name)
        return result

    monkeypatch.setattr(undo, name, crash_after)
    with pytest.raises(Crash):
        undo.undo_last(directory, NOW, WHY)
    monkeypatch.setattr(undo, name, original)


@pytest.mark.parametrize(
    ("name", "calls"),
    [("atomic_write", 1), ("_copy", 1), ("_copy", 5), ("write_game", 1), ("read_game", 2)],
)
def test_an_interrupted_undo_run_again_gives_the_same_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, calls: int
) -> None:
    clean = new_game(tmp_path / "clean" / "game")  # one folder each: one name per folder
    crashed = new_game(tmp_path / "crashed" / "game")
    _resolved_twice(clean)
    _resolved_twice(crashed)
    undo.undo_last(clean, NOW, WHY)

    _interrupted(crashed, monkeypatch, name, calls)
    interrupted = r"undo of turn 1 \(resolution 2, history/0002.toml\) was interrupted"
    with pytest.raises(GameFileError, match=interrupted):
        processor.resolve_game(crashed)
    later = parse_instant("2027-01-01T00:00Z")
    record, finished = undo.undo_last(crashed, later, "another reason, ignored")
    assert finished and record.why == WHY
    assert snapshot(crashed) == snapshot(clean)
    processor.audit_game(crashed)


def test_the_reports_of_a_resolution_made_again_are_mailed_and_the_undone_not(
    tmp_path: Path,
) -> None:
    from pbem.mail.send import send_mail

    d = new_game(tmp_path / "g", "alice=a@example.org,bob=b@example.org,carol=c@example.org")
    _resolved_twice(d)
    send_mail(d)
    outbox = d / "outbox"
    built = sorted(p.name for p in outbox.glob("r0002-*.eml"))
    assert built
    undo.undo_last(d, NOW, WHY)
    assert not list(outbox.glob("r0002-*.eml"))
    assert sorted(p.name for p in (d / "history/undone/0002-1/outbox").iterdir()) == built
    processor.resolve_game(d)
    send_mail(d)
    remade = built[0].replace("-turn-1-", "-turn-1.a2-")  # a new message, by a name of its own
    again = (outbox / remade).read_text()
    assert ".r0002.a2." in again


def test_after_an_undo_only_the_remade_reports_are_delivered(tmp_path: Path) -> None:
    """Reports delivered before an undo stay delivered: the next send builds and delivers the
    reports of the resolution made again, and builds no earlier report a second time (the
    delivery ledger would hold it back, but the moderator's listing would show it)."""
    from test_mail import running_server

    from pbem.mail.send import send_mail

    d = new_game(tmp_path / "g", "alice=a@example.org,bob=b@example.org,carol=c@example.org")
    for server in running_server():
        for _ in range(2):  # each resolution's reports mailed as it is made
            assert len(send_mail(d, server=server.smtp()).delivered) == 3
            write_skeletons(d)
            processor.resolve_game(d)
        assert len(send_mail(d, server=server.smtp()).delivered) == 3
        undo.undo_last(d, NOW, WHY)
        processor.resolve_game(d)
        server.recorder.received.clear()
        again = send_mail(d, server=server.smtp())
        assert sorted(again.delivered) == [
            f"r0002-turn-1.a2-{p}.eml to {p[0]}@example.org" for p in ("alice", "bob", "carol")
        ]
        assert sorted(again.built) == [
            f"r0002-turn-1.a2-{p}.eml" for p in ("alice", "bob", "carol")
        ]
        assert len(server.recorder.messages()) == 3
        assert sorted(p.name for p in (d / "outbox").glob("*.eml")) == []


def test_an_undo_not_yet_resolved_again_is_in_pbem_dice(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    entries = processor.dice_history(d)
    assert [(e["resolution"], "undone" in e) for e in entries] == [
        (0, False),
        (1, False),
        (2, True),
    ]
    assert processor.dice_history(d, 2)[0]["note"] == next(iter(undone.undone_notes(d)))
    with pytest.raises(PbemError, match="there is no resolution 3"):
        processor.dice_history(d, 3)


def test_undo_waits_for_an_interrupted_resolution(tmp_path: Path) -> None:
    import shutil

    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    ahead = Path(shutil.copytree(d, tmp_path / "ahead"))
    write_skeletons(ahead)
    processor.resolve_game(ahead)
    shutil.copy(ahead / "history" / "0003.toml", d / "history" / "0003.toml")
    before = snapshot(d)
    with pytest.raises(GameFileError, match="a resolution was interrupted: run 'pbem resolve'"):
        undo.undo_last(d, NOW, WHY)
    assert snapshot(d) == before


def test_a_damaged_undo_record_is_named(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    (d / "history" / "undo.toml").write_text('resolution = 2\nattempt = 1\nwhy = "x"\n')
    with pytest.raises(GameFileError, match=r"undo.toml is damaged or incomplete \(KeyError"):
        undo.undo_last(d, NOW, WHY)


def test_an_undo_time_that_does_not_read_is_shown_as_written() -> None:
    record = undone.UndoRecord(2, 1, "yesterday", "late orders", "00", 3)
    assert record.note() == (
        "turn 3 (resolution 2, history/0002.toml) was undone on yesterday: late orders"
    )
    later = undone.UndoRecord(2, 2, "2026-12-01T09:00:00+00:00", "again", "00", 3)
    assert later.note() == (
        "turn 3 (resolution 2, history/0002.toml) was undone on Tue 1 Dec 2026, 09:00 UTC: "
        "again (undo number 2 of that turn)"
    )


def test_an_interrupted_undo_is_not_yet_an_undone_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    _interrupted(d, monkeypatch, "_copy", 1)  # its folder and record are written
    assert (d / "history" / "undone" / "0002-1" / "undo.toml").is_file()
    assert undone.undo_records(d) == []
    assert undone.undone_notes(d) == []
    undo.undo_last(d, NOW, "ignored")
    assert [(r.resolution, r.why) for r in undone.undo_records(d)] == [(2, WHY)]


def test_an_interrupted_undo_whose_history_file_is_lost_says_to_restore_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    _interrupted(d, monkeypatch, "atomic_write", 1)  # history/undo.toml written, no more
    (d / "history" / "0002.toml").unlink()
    with pytest.raises(GameFileError, match="0002.toml is missing: the undo cannot go on; restore"):
        undo.undo_last(d, NOW, WHY)


def test_a_folder_in_undone_not_named_like_an_undo_is_left_alone(tmp_path: Path) -> None:
    import shutil

    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    kept = d / "history" / "undone"
    shutil.copytree(kept / "0002-1", kept / "0002-1 copy")  # the moderator's copy
    (kept / "0003-1").mkdir()  # a folder with no undo.toml in it
    assert len(undone.undone_notes(d)) == 1
    assert processor.audit_game(d).resolutions == 2


def test_a_resolution_made_again_is_mailed_though_its_first_reports_were_skipped(
    tmp_path: Path,
) -> None:
    from pbem.mail.send import send_mail

    d = new_game(tmp_path / "g", "alice=a@example.org,bob=b@example.org,carol=c@example.org")
    _resolved_twice(d)
    first = send_mail(d)  # a game under way: the reports of 0 and 1 are not mailed
    assert {name[:5] for name in first.built} == {"r0002"}
    undo.undo_last(d, NOW, WHY)
    undo.undo_last(d, NOW, "the first turn too")
    for path in (d / "orders").glob("*.toml"):
        path.unlink()  # the files of both turns, put back
    write_skeletons(d)
    processor.resolve_game(d)
    again = send_mail(d)
    assert {name[:5] for name in again.built} == {"r0001"}


def test_an_undone_draft_is_called_the_draft_and_nothing_else_is() -> None:
    setup = undone.UndoRecord(1, 1, "yesterday", "late", "00", 0)
    assert setup.note().startswith("the setup turn, turn 0 (resolution 1, history/0001.toml)")
    assert setup.note(drafted=True).startswith("the draft, turn 0 (resolution 1, ")
    after_the_draft = undone.UndoRecord(2, 1, "yesterday", "late", "00", 0)
    assert after_the_draft.note(drafted=True).startswith("the setup turn, turn 0 (resolution 2, ")


def test_the_notes_of_a_dealt_game_name_its_setup_turn(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    write_skeletons(d)
    processor.resolve_game(d)
    undo.undo_last(d, NOW, WHY)
    (note,) = undone.undone_notes(d)
    assert note.startswith("the setup turn, turn 0 (resolution 1, history/0001.toml) was undone")


def test_after_an_undo_the_game_waits_for_the_moderator(tmp_path: Path) -> None:
    root = tmp_path / "games"
    d = new_game(root / "g")
    _resolved_twice(d)
    out = CliRunner().invoke(main, ["undo", str(d), "--why", "bob's orders came late"]).output
    assert "'pbem run' leaves it alone until you resolve it by hand or run 'pbem release'" in out
    write_skeletons(d)  # the orders are all in: without the hold, cron would resolve it
    status = CliRunner().invoke(main, ["status", str(root), "--json"]).output
    (row,) = json.loads(status)
    assert row["state"] == "held"
    assert row["reason"] == "held: undone: bob's orders came late; resolve by hand or release"
    run_out = CliRunner().invoke(main, ["run", str(root)]).output
    assert "held: undone: bob's orders came late" in run_out
    assert read_game(d).state.resolution == 2
    released = CliRunner().invoke(main, ["release", str(d)]).output
    assert released.startswith("Released: undone: bob's orders came late.")
    assert "It was not held." in CliRunner().invoke(main, ["release", str(d)]).output
    assert "resolved" in CliRunner().invoke(main, ["run", str(root)]).output
    assert read_game(d).state.resolution == 3


def test_resolving_by_hand_releases_a_held_game(tmp_path: Path) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    undo.undo_last(d, NOW, WHY)
    assert undone.held(d) is not None
    write_skeletons(d)
    processor.resolve_game(d)
    assert undone.held(d) is None


def test_a_history_naming_an_order_file_outside_orders_is_refused_by_undo_and_audit(
    tmp_path: Path,
) -> None:
    d = new_game(tmp_path / "g")
    _resolved_twice(d)
    path = d / "history" / "0002.toml"
    data = tomllib.loads(path.read_text())
    data["orders"][0]["file"] = "../../outside.toml"
    path.write_text(tomli_w.dumps(data))
    outside = tmp_path / "outside.toml"
    (d / "orders" / "done" / "0002").mkdir(parents=True, exist_ok=True)
    out = CliRunner().invoke(main, ["undo", str(d), "--why", "a test"]).output
    assert "which is not a plain file name: the undo cannot move it" in out
    assert not outside.exists()
    audit = CliRunner().invoke(main, ["audit", str(d)]).output
    assert "which is not a plain file name" in audit
