"""The game directory defends itself: a game file that does not match its history, a history of
another game, a new game over an old one, disk faults, stale temporary files, interrupted
resolutions and broken templates. Each refusal says what is wrong and changes nothing."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEED, new_game, skeleton, snapshot, write_skeletons
from jinja2.sandbox import SandboxedEnvironment

from pbem.cli import main
from pbem.core.state import SetupMode
from pbem.errors import DiskError, GameFileError, LockedError, PbemError
from pbem.files import disk_error
from pbem.game import processor
from pbem.present import report
from pbem.records import disk
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

NOW = "2026-12-03T20:00+01:00"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def _play(directory: Path, turns: int) -> None:
    for _ in range(turns):
        write_skeletons(directory)
        processor.resolve_game(directory)


def _edit(directory: Path, old: str, new: str, count: int = 1) -> None:
    path = directory / "game.toml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))


# --- Point 6: the game file is checked against the history --------------------------------

HAND_EDITS = {
    "seed": (lambda t: t.replace(f'seed = "{SEED.hex()}"', f'seed = "{bytes(32).hex()}"'), "seed"),
    "sets_traded": (
        lambda t: t.replace("sets_traded = 0", "sets_traded = 3"),
        "sets_traded: game file 3, history 0",
    ),
    "winner": (
        lambda t: t.replace("[state]\n", '[state]\nwinner = "bob"\n'),
        "winner: game file 'bob', history null",
    ),
    "to_place": (
        lambda t: t.replace("to_place = 0", "to_place = 9", 1),
        r"\w+'s to_place: game file 9, history 0",
    ),
    "renamed player": (
        lambda t: t.replace('"bob"', '"bobby"'),
        "bob's name: game file 'bobby', history 'bob'",
    ),
    "armies": (
        lambda t: t.replace('Alaska = [\n    "bob",\n    1,', 'Alaska = [\n    "bob",\n    9,'),
        "Alaska: game file 9 armies, history 1",
    ),
}

EVERY_COMMAND = [
    ["show", "{d}"],
    ["check", "{d}", "{d}/orders/x.toml"],
    ["resolve", "{d}"],
    ["dice", "{d}"],
    ["audit", "{d}"],
    ["mail", "fetch", "{d}", "{d}/../message.eml"],
    ["mail", "send", "{d}"],
]


@pytest.mark.parametrize("edit", sorted(HAND_EDITS))
def test_a_hand_edited_game_file_is_refused_by_every_command_naming_what_differs(
    tmp_path: Path, edit: str
) -> None:
    directory = new_game(tmp_path / "g", setup=SetupMode.RANDOM)
    _play(directory, 1)
    text = (directory / "game.toml").read_text()
    if edit == "armies" and 'Alaska = [\n    "bob",\n    1,' not in text:
        pytest.skip("Alaska is not bob's with 1 army in this game")
    change, reason = HAND_EDITS[edit]
    (directory / "game.toml").write_text(change(text))  # type: ignore[operator]
    (directory / "orders" / "x.toml").write_text("x = 1\n")
    (tmp_path / "message.eml").write_text("From: bob@example.org\n\nhello\n")
    before = snapshot(directory)
    for command in EVERY_COMMAND:
        out = run(*(a.format(d=directory) for a in command), code=1)
        assert re.search(reason, out), (command, out)
        assert "Traceback" not in out
    assert snapshot(directory) == before


def test_the_seed_is_checked_against_the_setup_key_of_the_history(playing_dir: Path) -> None:
    _edit(playing_dir, f'seed = "{SEED.hex()}"', f'seed = "{bytes(32).hex()}"')
    with pytest.raises(GameFileError, match="the seed .* is not the one this game was created"):
        read_game(playing_dir)


def test_a_player_name_against_the_naming_rule_is_refused_before_any_file_is_named_after_it(
    playing_dir: Path,
) -> None:
    _edit(playing_dir, '"bob"', '"../../outside"', count=100)
    before = snapshot(playing_dir.parent)
    for command in (["show", playing_dir], ["resolve", playing_dir]):
        out = run(*command, code=1)
        assert "the player name '../../outside' breaks the naming rule" in out
    assert snapshot(playing_dir.parent) == before


def test_a_history_file_of_another_game_is_named(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "g")
    other = tmp_path / "elsewhere" / "other"  # one name per folder of games
    processor.new_game(
        other,
        processor.parse_player_list(["alice", "bob", "carol"]),
        read_game(directory).state.options,
        seed=bytes(32),
        name="other",
    )
    _play(directory, 1)
    _play(other, 1)
    shutil.copy(other / "history" / "0001.toml", directory / "history" / "0001.toml")
    before = snapshot(directory)
    with pytest.raises(GameFileError, match="history/0001.toml belongs to another game"):
        read_game(directory)
    shutil.copy(other / "history" / "0000.toml", directory / "history" / "0000.toml")
    out = run("show", directory, code=1)
    assert "history/0000.toml belongs to another game ('other', not 'test-game')" in out
    assert snapshot(directory) == before | {
        "history/0000.toml": (other / "history" / "0000.toml").read_bytes()
    }


def test_an_interrupted_resolution_is_checked_against_the_history_before_it(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skeletons(playing_dir)

    def stop(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(processor, "archive_orders", stop)
    with pytest.raises(KeyboardInterrupt):
        processor.resolve_game(playing_dir)
    monkeypatch.undo()
    assert (playing_dir / "history" / "0002.toml").exists()
    assert read_game(playing_dir).state.resolution == 2  # matches history/0001, not 0002
    assert "awaiting" in run("show", playing_dir)
    assert processor.resolve_game(playing_dir).recovered


@pytest.mark.parametrize("crash_at", ["write_history", "archive_orders", "write_files"])
def test_a_rerun_reports_the_files_the_interrupted_run_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    # a folder each: one name per folder of games
    twin, directory = new_game(tmp_path / "twin" / "g"), new_game(tmp_path / "one" / "g")
    for one in (twin, directory):
        write_skeletons(one)
        (one / "orders" / "zz-bad.toml").write_text("x = [[[[[[[[[[1]]]]]]]]]]\n")
    processor.resolve_game(twin)
    original = getattr(processor, crash_at)

    def crash_after(*args: object, **kwargs: object) -> object:
        original(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(processor, crash_at, crash_after)
    with pytest.raises(KeyboardInterrupt):
        processor.resolve_game(directory)
    monkeypatch.undo()
    assert processor.resolve_game(directory).recovered
    assert "zz-bad.toml" in (report_dir(directory, 1) / "_moderator.txt").read_text()
    assert snapshot(directory) == snapshot(twin)


def test_a_missing_last_history_file_is_named(playing_dir: Path) -> None:
    (playing_dir / "history" / "0001.toml").unlink()
    with pytest.raises(GameFileError, match="history/0001.toml is missing"):
        read_game(playing_dir)


# --- Point 6: pbem new over an existing game ----------------------------------------------


@pytest.mark.parametrize(
    ("leftover", "named"),
    [
        ("history/0000.toml", "history/"),
        ("reports/0000/alice.txt", "reports/"),
        ("orders/alice.toml", "orders/ with files"),
        ("orders/done/0001/alice.toml", "orders/ with files"),
        ("game.toml", "game.toml"),
    ],
)
def test_new_refuses_a_directory_that_holds_a_games_files(
    tmp_path: Path, leftover: str, named: str
) -> None:
    directory = tmp_path / "g"
    (directory / leftover).parent.mkdir(parents=True, exist_ok=True)
    (directory / leftover).write_text("kept\n")
    before = snapshot(directory)
    out = run("new", directory, "--players", "alice,bob", code=1)
    assert f"already holds a game ({named})" in out
    assert snapshot(directory) == before


def test_new_accepts_a_directory_with_an_empty_orders_folder_and_other_files(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "g"
    (directory / "orders").mkdir(parents=True)
    (directory / "README").write_text("our spring game\n")
    run("new", directory, "--players", "alice,bob")
    assert (directory / "game.toml").exists()


def test_new_takes_the_lock_before_it_looks(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    directory.mkdir()
    fd = os.open(directory / disk.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockedError):
            new_game(directory)
    finally:
        os.close(fd)
    assert sorted(p.name for p in directory.iterdir()) == [disk.LOCK_FILE]


# --- Point 7: faults get a sentence -------------------------------------------------------


def _fail_write_number(monkeypatch: pytest.MonkeyPatch, n: int, code: int) -> None:
    """Make the n-th file write (fsync) fail with `code`, as a full disk would."""
    calls = {"count": 0}
    real = os.fsync

    def fsync(fd: int) -> None:
        calls["count"] += 1
        if calls["count"] == n:
            raise OSError(code, os.strerror(code))
        real(fd)

    monkeypatch.setattr(disk.os, "fsync", fsync)


FAULTS = {
    errno.ENOSPC: "the disk is full: free some space",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EDQUOT: "quota",
}


@pytest.mark.parametrize("code", sorted(FAULTS))
@pytest.mark.parametrize("write", [1, 2, 5, 15])  # 15: the sync of the report folder
def test_a_disk_fault_during_resolve_is_a_sentence_and_a_rerun_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, write: int
) -> None:
    twin = new_game(tmp_path / "twin" / "g")  # a folder each: one name per folder
    directory = new_game(tmp_path / "one" / "g")
    write_skeletons(twin)
    run("resolve", twin, "--now", NOW)
    write_skeletons(directory)
    _fail_write_number(monkeypatch, write, code)
    out = run("resolve", directory, "--now", NOW, code=1)
    assert FAULTS[code] in out and "run the command again" in out
    assert "Traceback" not in out
    assert str(directory) in out
    assert not list(directory.rglob("*.tmp"))
    monkeypatch.undo()
    run("resolve", directory, "--now", NOW)
    assert snapshot(directory) == snapshot(twin)


@pytest.mark.parametrize("write", [1, 2, 3, 10])
def test_a_disk_fault_during_new_leaves_the_directory_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: int
) -> None:
    directory = tmp_path / "g"
    directory.mkdir()
    (directory / "README").write_text("our game\n")
    before = snapshot(directory)
    _fail_write_number(monkeypatch, write, errno.ENOSPC)
    out = run("new", directory, "--players", "alice,bob", "--seed", SEED.hex(), code=1)
    assert "the disk is full" in out
    assert snapshot(directory) == before
    assert sorted(p.name for p in directory.iterdir()) == [".lock", "README", "orders"]
    monkeypatch.undo()
    run("new", directory, "--players", "alice,bob", "--seed", SEED.hex())
    processor.audit_game(directory)


def test_a_lock_that_is_a_directory_is_named(playing_dir: Path) -> None:
    (playing_dir / disk.LOCK_FILE).unlink()
    (playing_dir / disk.LOCK_FILE).mkdir()
    before = snapshot(playing_dir)
    out = run("resolve", playing_dir, code=1)
    assert f"{playing_dir / disk.LOCK_FILE} is a directory, not pbem's lock file: remove it" in out
    assert snapshot(playing_dir) == before
    (playing_dir / disk.LOCK_FILE).rmdir()
    write_skeletons(playing_dir)
    run("resolve", playing_dir)


def test_a_lock_that_is_a_dangling_link_is_named_and_not_followed(playing_dir: Path) -> None:
    (playing_dir / disk.LOCK_FILE).unlink()
    target = playing_dir.parent / "elsewhere.lock"
    (playing_dir / disk.LOCK_FILE).symlink_to(target)
    write_skeletons(playing_dir)
    before = snapshot(playing_dir.parent)
    out = run("resolve", playing_dir, code=1)
    assert f"{playing_dir / disk.LOCK_FILE} is a symbolic link (to {target})" in out
    assert "remove the link" in out
    assert not target.exists()
    assert snapshot(playing_dir.parent) == before
    (playing_dir / disk.LOCK_FILE).unlink()
    write_skeletons(playing_dir)
    run("resolve", playing_dir)


def test_temporary_files_left_by_a_killed_run_are_removed_by_the_next(playing_dir: Path) -> None:
    left = [
        playing_dir / ".game.toml.abcd1234.tmp",
        playing_dir / "history" / ".0002.toml.x_y_z_01.tmp",
        report_dir(playing_dir, 1) / ".alice.html.qwertyui.tmp",
    ]
    kept = [playing_dir / "notes.tmp", playing_dir / ".notes.tmp", playing_dir / "orders" / "a.tmp"]
    for path in left + kept:
        path.write_text("half\n")
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)
    assert not [p for p in left if p.exists()]
    assert all(p.exists() for p in kept)


def test_the_sweep_looks_into_the_newest_resolutions_folders_only(tmp_path: Path) -> None:
    from pbem.files import remove_temporaries

    directory = tmp_path / "g"
    names = ["0002-turn-1", "9999-turn-9998", "10000-turn-9999", "10001-turn-10000", "notes"]
    for name in names:
        (directory / "reports" / name).mkdir(parents=True)
        (directory / "reports" / name / ".alice.txt.abcd1234.tmp").write_text("half\n")
    for name in ("0001", "0002", "0003"):
        (directory / "orders" / "done" / name).mkdir(parents=True)
        (directory / "orders" / "done" / name / ".a.toml.abcd1234.tmp").write_text("half\n")
    removed = {p.relative_to(directory).parent.as_posix() for p in remove_temporaries(directory)}
    assert removed == {
        "reports/10000-turn-9999",  # the two newest, by their numbers
        "reports/10001-turn-10000",
        "reports/notes",  # (not a resolution's: looked into as everything else)
        "orders/done/0002",
        "orders/done/0003",
    }


# --- Point 8: a re-run archives exactly the text it used ----------------------------------


def test_a_rerun_archives_the_order_text_it_used_even_if_orders_changed(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (used,) = write_skeletons(playing_dir)

    def stop(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(processor, "archive_orders", stop)
    with pytest.raises(KeyboardInterrupt):
        processor.resolve_game(playing_dir)
    monkeypatch.undo()
    recorded = read_history(playing_dir, 2).orders[0].text
    newer = recorded.replace("turn = 1", "turn = 4") + "# sent later\n"
    used.write_text(newer)
    assert processor.resolve_game(playing_dir).recovered
    assert (playing_dir / "orders" / "done" / "0002" / used.name).read_text() == recorded
    assert used.read_text() == newer


def test_a_rerun_archives_the_text_used_when_the_file_has_gone(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (used,) = write_skeletons(playing_dir)
    monkeypatch.setattr(processor, "archive_orders", lambda *_: (_ for _ in ()).throw(OSError))
    with pytest.raises(OSError):
        processor.resolve_game(playing_dir)
    monkeypatch.undo()
    used.unlink()
    processor.resolve_game(playing_dir)
    done = playing_dir / "orders" / "done" / "0002" / used.name
    assert done.read_text() == read_history(playing_dir, 2).orders[0].text


# --- Point 9: templates are sandboxed and rendered before anything is written ------------

BROKEN_TEMPLATES = {
    "syntax": ("{% if %}\n", "report.txt.j2 line 1: "),
    "undefined": ("line one\n{{ nothing_here }}\n", "report.txt.j2 line 2: UndefinedError"),
    "escape the sandbox": (
        "{{ ''.__class__.__mro__[1].__subclasses__() }}\n",
        "report.txt.j2 line 1: ",
    ),
    "call a method": ("{{ view.clear() }}\n", "report.txt.j2 line 1: SecurityError"),
    "divide by zero": ("\n\n{{ 1 // 0 }}\n", "report.txt.j2 line 3: ZeroDivisionError"),
}


@pytest.mark.parametrize("case", sorted(BROKEN_TEMPLATES))
def test_a_broken_game_template_is_found_before_the_history_is_written(
    playing_dir: Path, case: str
) -> None:
    source, reason = BROKEN_TEMPLATES[case]
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text(source)
    write_skeletons(playing_dir)
    before = snapshot(playing_dir)
    out = run("resolve", playing_dir, code=1)
    assert reason in out and "fix the template and run the command again" in out
    assert str(playing_dir / "templates") in out
    assert snapshot(playing_dir) == before
    (playing_dir / "templates" / "report.txt.j2").unlink()
    run("resolve", playing_dir)


def test_a_template_error_names_the_innermost_template_and_line(playing_dir: Path) -> None:
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text('first\n{% include "part.j2" %}\n')
    (playing_dir / "templates" / "part.j2").write_text("\n\n\n{{ 1 // 0 }}\n")
    write_skeletons(playing_dir)
    out = run("resolve", playing_dir, code=1)
    assert "part.j2 line 4: ZeroDivisionError" in out, out
    assert "report.txt.j2 line" not in out


def test_a_long_template_error_is_cut_short(playing_dir: Path) -> None:
    name = "n" * 400
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text(f"{{{{ {name}.x }}}}\n")
    write_skeletons(playing_dir)
    out = run("resolve", playing_dir, code=1)
    assert "UndefinedError" in out and "'" + "n" * 198 + "…" in out, out
    assert "n" * 199 not in out
    assert "fix the template and run the command again" in out


def test_a_game_template_cannot_reach_python_internals(playing_dir: Path) -> None:
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text(
        "{{ view.__class__ }}|{{ cycler.__init__.__globals__ }}\n"
    )
    write_skeletons(playing_dir)
    with pytest.raises(PbemError, match="template"):
        processor.resolve_game(playing_dir)


def test_a_games_own_templates_render_in_the_sandbox_the_builtin_ones_alone_need_none(
    playing_dir: Path,
) -> None:
    assert not isinstance(report.environment(playing_dir.resolve()), SandboxedEnvironment)
    assert (report_dir(playing_dir, 1) / "_moderator.html").read_text().startswith("<!")
    (playing_dir / "templates").mkdir()
    assert isinstance(report.environment(playing_dir.resolve()), SandboxedEnvironment)


def test_the_builtin_templates_write_the_same_reports_in_the_sandbox(
    playing_dir: Path, tmp_path: Path
) -> None:
    """A game with a templates/ folder renders pbem's own templates in the sandbox (its own
    may include them): the same bytes as out of it."""
    boxed = Path(shutil.copytree(playing_dir, tmp_path / "boxed"))
    (boxed / "templates").mkdir()
    for directory in (playing_dir, boxed):
        write_skeletons(directory)
        processor.resolve_game(directory)
    plain, sandboxed = report_dir(playing_dir, 2), report_dir(boxed, 2)
    names = sorted(p.name for p in plain.iterdir())
    assert len(names) > 10 and names == sorted(p.name for p in sandboxed.iterdir())
    for name in names:
        assert (plain / name).read_bytes() == (sandboxed / name).read_bytes(), name


def test_a_disk_error_names_the_path_and_what_to_do() -> None:
    err = disk_error(OSError(errno.ENOSPC, "No space left"), Path("/g/game.toml"))
    assert isinstance(err, DiskError)
    assert str(err) == (
        "cannot write /g/game.toml: the disk is full: free some space, then run the command "
        "again (it completes the work from where it stopped)"
    )


def test_an_order_file_is_read_as_text_with_its_line_ends(playing_dir: Path) -> None:
    player = read_game(playing_dir).state.awaiting()[0]
    path = playing_dir / "orders" / f"{player}.toml"
    path.write_bytes(skeleton(playing_dir, player).replace("\n", "\r\n").encode())
    processor.resolve_game(playing_dir)
    assert "\r" not in read_history(playing_dir, 1 + 1).orders[0].text


def test_a_directory_pbem_may_not_write_in_is_named(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skeletons(playing_dir)
    before = snapshot(playing_dir)

    def refuse(*_: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(kwargs["dir"]))

    monkeypatch.setattr(disk.tempfile, "mkstemp", refuse)
    out = run("resolve", playing_dir, code=1)
    assert f"cannot write {playing_dir / 'history' / '0002.toml'}: permission denied" in out
    assert snapshot(playing_dir) == before
    monkeypatch.undo()
    run("resolve", playing_dir)


def test_an_interrupted_resolution_of_another_game_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = new_game(tmp_path / "g")
    other = tmp_path / "elsewhere" / "other"  # one name per folder of games
    processor.new_game(
        other,
        processor.parse_player_list(["alice", "bob", "carol"]),
        read_game(directory).state.options,
        seed=bytes(32),
        name="test-game",
    )
    _play(other, 1)
    shutil.copy(other / "history" / "0001.toml", directory / "history" / "0001.toml")
    before = snapshot(directory)
    out = run("resolve", directory, code=1)
    assert "history/0001.toml belongs to another game: its key is not this game's key" in out
    assert snapshot(directory) == before


def test_an_unforeseen_fault_is_still_a_sentence(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> None:
        raise OSError(errno.EIO, "Input/output error", str(playing_dir / "history"))

    monkeypatch.setattr(processor, "dice_entries", broken)
    out = run("dice", playing_dir, code=1)
    assert out == (
        f"Error: cannot use {playing_dir / 'history'}: Input/output error: fix this, then run "
        "the command again (it completes the work from where it stopped)\n"
    )
