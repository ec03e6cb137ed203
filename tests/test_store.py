"""The game directory on disk: the lock against other runs, synced writes, the game file's checks,
the key chain's end and where used order files go."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import FrozenInstanceError, replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEED, snapshot, write_skeletons

from pbem.cli import main
from pbem.core.state import Holding, Options
from pbem.errors import DiskError, GameFileError, LockedError
from pbem.game import processor
from pbem.records import disk, history, store
from pbem.records.opening import read_game
from pbem.records.store import Game, inconsistency

HOLD_THE_LOCK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pbem.records import disk
    with disk.locked(Path(sys.argv[1])):
        print("held", flush=True)
        sys.stdin.readline()
    """
)


@pytest.fixture
def other_run(playing_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the game's lock (through pbem itself) until the test ends."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_THE_LOCK, str(playing_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    try:
        assert child.stdout.readline().strip() == "held"
        yield child
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def test_a_run_fails_while_another_process_holds_the_lock(
    playing_dir: Path, other_run: subprocess.Popen[str]
) -> None:
    write_skeletons(playing_dir)
    before = snapshot(playing_dir)
    with pytest.raises(LockedError, match="being resolved by another run"):
        processor.resolve_game(playing_dir)
    result = CliRunner().invoke(main, ["resolve", str(playing_dir)])
    assert result.exit_code == 1
    assert "being resolved by another run; wait for it to finish" in result.output
    assert "Traceback" not in result.output
    assert snapshot(playing_dir) == before


def test_the_lock_is_free_again_when_the_other_process_ends(
    playing_dir: Path, other_run: subprocess.Popen[str]
) -> None:
    assert other_run.stdin is not None
    other_run.stdin.close()
    other_run.wait(timeout=30)
    write_skeletons(playing_dir)
    assert processor.resolve_game(playing_dir).resolution == 2


def test_two_holders_in_one_process_exclude_each_other(playing_dir: Path) -> None:
    with disk.locked(playing_dir), pytest.raises(LockedError), disk.locked(playing_dir):
        pass  # pragma: no cover - the second lock is refused


def test_the_lock_is_released_when_a_run_ends_or_fails(playing_dir: Path) -> None:
    with disk.locked(playing_dir):
        pass
    with pytest.raises(ZeroDivisionError), disk.locked(playing_dir):
        1 // 0  # noqa: B018
    with disk.locked(playing_dir):  # not left held by either
        pass
    with pytest.raises(processor.NotReady):
        processor.resolve_game(playing_dir)  # fails (no orders) and lets go of the lock
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)


def test_the_lock_needs_a_game_directory_unless_creating_one(tmp_path: Path) -> None:
    with pytest.raises(GameFileError, match="not a game directory"), disk.locked(tmp_path):
        pass  # pragma: no cover
    assert not (tmp_path / disk.LOCK_FILE).exists()
    with disk.locked(tmp_path, creating=True):
        assert (tmp_path / disk.LOCK_FILE).exists()


def test_a_lock_file_that_cannot_be_opened_is_named_not_a_traceback(playing_dir: Path) -> None:
    lock = playing_dir / disk.LOCK_FILE
    lock.unlink()
    lock.symlink_to(playing_dir / "elsewhere")
    refused = "is a symbolic link .* not pbem's lock file: remove the link"
    with pytest.raises(DiskError, match=refused), disk.locked(playing_dir):
        pass


# --- writes that survive a crash ---------------------------------------------------------------


@pytest.fixture
def syscalls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """Every os.fsync and os.replace that store makes, in order, with what each was about."""
    calls: list[tuple[str, object]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        what = ("folder", info.st_ino) if stat.S_ISDIR(info.st_mode) else ("file", info.st_size)
        calls.append(("fsync", what))
        real_fsync(fd)

    def replace_(src: str | Path, dst: str | Path) -> None:
        calls.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(disk.os, "fsync", fsync)
    monkeypatch.setattr(disk.os, "replace", replace_)
    return calls


def test_a_file_is_synced_whole_before_its_rename_and_its_folder_after(
    tmp_path: Path, syscalls: list[tuple[str, object]]
) -> None:
    data = b"game = 'x'\n" * 100
    disk.atomic_write(tmp_path / "game.toml", data)
    folder = os.stat(tmp_path).st_ino
    assert syscalls == [
        ("fsync", ("file", len(data))),
        ("replace", "game.toml"),
        ("fsync", ("folder", folder)),
    ]
    assert (tmp_path / "game.toml").read_bytes() == data
    assert [p.name for p in tmp_path.iterdir()] == ["game.toml"]


def test_the_game_file_and_history_are_synced_when_a_turn_is_resolved(
    playing_dir: Path, syscalls: list[tuple[str, object]]
) -> None:
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)
    for name in ("0002.toml", "game.toml"):
        at = syscalls.index(("replace", name))
        assert syscalls[at - 1][0] == "fsync" and syscalls[at + 1][0] == "fsync"
    assert syscalls.index(("replace", "0002.toml")) < syscalls.index(("replace", "game.toml"))


def test_several_files_are_each_synced_before_any_rename_and_their_folder_after(
    tmp_path: Path, syscalls: list[tuple[str, object]]
) -> None:
    files = {"a.txt": "a" * 10, "b.txt": "b" * 20, "c.txt": "c" * 30}
    disk.write_files(tmp_path, files)
    first_rename = syscalls.index(("replace", "a.txt"))
    assert sorted(syscalls[:first_rename]) == [("fsync", ("file", n)) for n in (10, 20, 30)]
    assert [c for c in syscalls[first_rename:] if c[0] == "replace"] == [
        ("replace", name) for name in files
    ]
    assert syscalls[-1] == ("fsync", ("folder", os.stat(tmp_path).st_ino))
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == files


def test_the_threads_that_sync_files_are_made_once_and_kept(tmp_path: Path) -> None:
    import threading

    disk.write_files(tmp_path / "one", {f"{n}.txt": "x" for n in range(12)})
    threads = {t.ident for t in threading.enumerate() if t.name.startswith("pbem-sync")}
    for n in range(5):
        disk.write_files(tmp_path / f"w{n}", {f"{n}.txt": "x" for n in range(12)})
    kept = {t.ident for t in threading.enumerate() if t.name.startswith("pbem-sync")}
    assert threads and threads <= kept and len(kept) <= 8  # the first ones still at work


def _write_in_a_forked_process(folder: str) -> None:
    disk.write_files(Path(folder), {f"{n}.txt": str(n) for n in range(12)})


def test_a_process_forked_after_a_write_syncs_with_threads_of_its_own(tmp_path: Path) -> None:
    """A forked process has none of its parent's threads: with the parent's pool it would wait
    for ever on its first write of several files."""
    import multiprocessing

    disk.write_files(tmp_path / "parent", {f"{n}.txt": "x" * n for n in range(40)})
    child = multiprocessing.get_context("fork").Process(
        target=_write_in_a_forked_process, args=(str(tmp_path / "child"),)
    )
    child.start()
    child.join(20)
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0
    assert sorted(p.name for p in (tmp_path / "child").iterdir()) == sorted(
        f"{n}.txt" for n in range(12)
    )


def test_a_folder_made_for_the_files_is_synced_in_its_parent_after_them(
    tmp_path: Path, syscalls: list[tuple[str, object]]
) -> None:
    """A new report folder's entry is synced too: else a crash could keep the game file that
    moved on and lose the folder of the reports it made."""
    (tmp_path / "reports").mkdir()
    folder = tmp_path / "reports" / "0002-turn-1" / "deeper"
    disk.write_files(folder, {"a.txt": "a", "b.txt": "bb"})
    inode = {p: os.stat(p).st_ino for p in (folder, folder.parent, folder.parent.parent)}
    folders = [what for call, what in syscalls if call == "fsync" and what[0] == "folder"]
    assert folders == [
        ("folder", inode[folder]),
        ("folder", inode[folder.parent]),
        ("folder", inode[tmp_path / "reports"]),
    ]
    last_rename = max(i for i, (call, _) in enumerate(syscalls) if call == "replace")
    assert syscalls.index(("fsync", folders[0])) > last_rename  # after every file is in place
    syscalls.clear()
    disk.write_files(folder, {"c.txt": "c"})  # the folder is there now: only it is synced
    assert [w for c, w in syscalls if c == "fsync" and w[0] == "folder"] == [folders[0]]


def test_a_folder_without_a_history_counts_no_resolutions(tmp_path: Path) -> None:
    assert history.history_count(tmp_path) == 0
    (tmp_path / "history").mkdir()
    assert history.history_count(tmp_path) == 0


def test_an_interrupted_write_is_not_taken_for_a_disk_error_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(src: object, dst: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(disk.os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        disk.write_files(tmp_path, {"a.txt": "a", "b.txt": "b"})
    assert list(tmp_path.iterdir()) == []


def test_a_game_without_a_lock_file_is_not_held_by_another(tmp_path: Path) -> None:
    assert not disk.held_by_another(tmp_path)
    with disk.locked(tmp_path, creating=True):
        pass
    assert not disk.held_by_another(tmp_path)


def test_a_history_that_is_a_file_still_marks_a_game_directory(tmp_path: Path) -> None:
    (tmp_path / "history").write_text("not a folder")
    assert history.game_files(tmp_path) == ["history"]
    (tmp_path / "history").unlink()
    (tmp_path / "history").mkdir()
    assert history.game_files(tmp_path) == []


def test_writing_and_syncing_leave_no_file_open(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        disk.write_files(tmp_path, {"a.txt": "a", "b.txt": "b"})
        disk.atomic_write(tmp_path / "c.txt", "c")
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_str_is_written_as_utf8_into_a_new_folder(tmp_path: Path) -> None:
    disk.atomic_write(tmp_path / "new" / "deeper" / "a.txt", "Kamtchatka — ✓\n")
    assert (tmp_path / "new" / "deeper" / "a.txt").read_bytes() == "Kamtchatka — ✓\n".encode()


def test_writing_no_files_writes_nothing_and_succeeds(tmp_path: Path) -> None:
    assert disk.write_files(tmp_path / "reports", {}) == ()
    assert not (tmp_path / "reports").exists()


# --- the game file's checks --------------------------------------------------------------------


def _with_state(game: Game, **changes: object) -> Game:
    return replace(game, state=replace(game.state, **changes))


def test_the_game_file_check_compares_which_cards_not_only_how_many(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    deck = game.state.deck
    assert inconsistency(game) is None
    doubled = _with_state(game, deck=(deck[1],) + deck[1:])  # as many cards, one twice
    assert "not the board's deck" in (inconsistency(doubled) or "")
    foreign = _with_state(game, deck=("Atlantis",) + deck[1:])
    assert "not the board's deck" in (inconsistency(foreign) or "")
    dealt = game.state.players[0]
    moved = _with_state(
        game,
        deck=deck[1:],
        players=(replace(dealt, hand=(deck[0],)),) + game.state.players[1:],
    )
    assert inconsistency(moved) is None  # a card in a hand instead of the deck is fine
    short = _with_state(game, deck=deck[1:])
    assert inconsistency(short) is not None


def test_a_game_file_with_a_card_twice_is_refused_on_reading(playing_dir: Path) -> None:
    path = playing_dir / "game.toml"
    game = read_game(playing_dir)
    first, second = game.state.deck[0], game.state.deck[1]
    text = path.read_text()
    path.write_text(text.replace(f'    "{first}",\n', f'    "{second}",\n', 1))
    with pytest.raises(GameFileError, match="not the board's deck"):
        read_game(playing_dir)


def _players(game: Game, *changes: dict[str, object]) -> Game:
    players = tuple(replace(p, **c) for p, c in zip(game.state.players, changes, strict=False))
    return _with_state(game, players=players + game.state.players[len(players) :])


def test_each_impossible_game_is_named(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    state = game.state
    names = [p.name for p in state.players]
    first = names[0]
    someone = next(t for t, h in state.territories.items() if h.owner == first)
    cases: list[tuple[Game, str]] = [
        (_with_state(game, current=3), "the current seat 3 is not one of the 3 seats"),
        (_with_state(game, current=-1), "the current seat -1"),
        (_players(game, {"seat": 1}, {"seat": 0}), "seats are not 0, 1, 2"),
        (_players(game, {}, {"name": first}), "3 players, 2 of them different"),
        (_with_state(game, players=state.players[:1]), "it lists 1 players"),
        (replace(game, registrations=game.registrations[:2]), "registered players"),
        (replace(game, seed=game.seed[:31]), "the seed is not 32 bytes"),
        (replace(game, chain_length=0), "chain_length 0 is outside 1..100000"),
        (replace(game, chain_length=100_001), "chain_length 100001 is outside"),
        (_with_state(game, resolution=0), "resolution 0 is outside 1..4096"),
        (replace(game, chain_length=1), "resolution 2 is outside 1..1"),
        (
            _with_state(game, territories={**state.territories, someone: Holding("zed", 3)}),
            f"{someone} is held by 'zed', who is not in the game",
        ),
        (
            _with_state(game, territories={**state.territories, someone: Holding(first, 0)}),
            f"{someone} holds 0 armies",
        ),
        (_players(game, {"alive": False}), f"{first} is out of the game but holds territories"),
    ]
    for broken, message in cases:
        problem = inconsistency(broken)
        assert problem is not None and message in problem, (message, problem)
    everything = {t: Holding(names[1], 1) for t in state.territories}
    assert inconsistency(_with_state(game, territories=everything)) == (
        f"{first} is in the game but holds no territory"
    )
    assert inconsistency(replace(game, chain_length=2)) is None  # resolution 2 of 2 keys
    assert inconsistency(replace(game, chain_length=100_000)) is None


def test_six_players_are_a_game_and_seven_are_not(tmp_path: Path) -> None:
    six = tmp_path / "six"
    processor.new_game(
        six,
        processor.parse_player_list(["a", "b", "c", "d", "e", "f"]),
        Options(),
        seed=SEED,
        name="six",
    )
    game = read_game(six)
    assert inconsistency(game) is None
    two = _with_state(game, players=game.state.players[:2])
    assert "registered players" in (inconsistency(two) or "")  # two players are allowed
    seventh = replace(game.state.players[5], name="g", seat=6)
    seven = _with_state(game, players=game.state.players + (seventh,))
    assert "it lists 7 players" in (inconsistency(seven) or "")


def test_a_damaged_or_missing_game_file_is_named(tmp_path: Path, playing_dir: Path) -> None:
    with pytest.raises(GameFileError, match="is not a game directory: it has no game.toml"):
        read_game(tmp_path)
    path = playing_dir / "game.toml"
    text = path.read_text()
    path.write_text(text.replace("[state]", "[state", 1))
    with pytest.raises(GameFileError, match="game.toml is damaged: "):
        read_game(playing_dir)
    path.write_text(text.replace("seed = ", "sown = ", 1))
    with pytest.raises(GameFileError, match="damaged or incomplete"):
        read_game(playing_dir)
    path.write_bytes(b"\xff\xfe" + text.encode())
    with pytest.raises(GameFileError, match="cannot read"):
        read_game(playing_dir)


def test_the_game_file_round_trips(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    store.write_game(game)
    again = read_game(playing_dir)
    assert again.chain_length == game.chain_length and again.state == game.state
    assert again.registrations == game.registrations and again.seed == game.seed
    doc = store.game_document(again)
    assert doc["format"] == store.FORMAT
    assert doc["commitment"] == again.commitment
    assert [p["email"] for p in doc["players"]] == [r.email for r in game.registrations]


def test_a_game_file_without_a_chain_length_has_the_default(playing_dir: Path) -> None:
    path = playing_dir / "game.toml"
    path.write_text(path.read_text().replace("chain_length = 4096\n", "", 1))
    assert read_game(playing_dir).chain_length == 4096


# --- the end of the key chain ------------------------------------------------------------------


def test_the_end_of_the_key_chain_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    directory = tmp_path / "short"
    processor.new_game(
        directory,
        processor.parse_player_list(["alice", "bob", "carol"]),
        Options(),
        seed=SEED,
        name="short",
        chain_length=2,
    )
    write_skeletons(directory)
    assert processor.resolve_game(directory).resolution == 1  # the last key of the chain
    processor.audit_game(directory)
    write_skeletons(directory)
    before = snapshot(directory)
    result = CliRunner().invoke(main, ["resolve", str(directory)])
    assert result.exit_code == 1, result.output
    assert "key chain of 2 keys is used up at resolution 2" in result.output
    assert "Traceback" not in result.output
    assert snapshot(directory) == before
    game = read_game(directory)
    with pytest.raises(GameFileError, match="used up"):
        game.key(2)
    assert game.key(1) == bytes.fromhex(processor.dice_history(directory)[1]["key"])  # type: ignore[arg-type]


# --- archiving used order files ----------------------------------------------------------------


def test_an_order_file_outside_orders_is_used_but_never_moved(
    game_dir: Path, tmp_path: Path
) -> None:
    written = write_skeletons(game_dir)
    elsewhere = tmp_path / "mailbox"
    (game_dir / "orders" / "held").mkdir()
    elsewhere.mkdir()
    outside = [
        written[0].rename(elsewhere / written[0].name),
        written[1].rename(game_dir / "orders" / "held" / written[1].name),
    ]
    paths = [*outside, written[2]]
    texts = [p.read_text() for p in paths]
    processor.resolve_game(game_dir, paths)
    assert [p.read_text() for p in outside] == texts[:2]
    done = game_dir / "orders" / "done" / "0001"
    assert sorted(p.name for p in done.iterdir()) == [written[2].name]
    assert not written[2].exists()


def test_archiving_skips_a_file_already_gone(game_dir: Path) -> None:
    history.archive_orders(game_dir, 1, [game_dir / "orders" / "gone.toml"])
    assert not (game_dir / "orders" / "done").exists()


def test_order_files_are_the_toml_files_of_orders_by_name(game_dir: Path) -> None:
    orders = game_dir / "orders"
    for name in ("b.toml", "a.toml", "notes.txt"):
        (orders / name).write_text("")
    assert [p.name for p in history.order_files(game_dir)] == ["a.toml", "b.toml"]
    (orders / "a.toml").unlink()
    (orders / "b.toml").unlink()
    (orders / "notes.txt").unlink()
    orders.rmdir()
    assert history.order_files(game_dir) == []


def test_the_history_is_counted_up_to_its_first_gap(playing_dir: Path) -> None:
    assert history.history_count(playing_dir) == 2
    (playing_dir / "history" / "0003.toml").write_text("")
    assert history.history_count(playing_dir) == 2
    record = history.read_history(playing_dir, 1)
    assert (record.resolution, record.turn, record.setup) == (1, 0, None)
    assert history.read_history(playing_dir, 0).setup is not None


def test_a_missing_or_unreadable_history_file_is_named(playing_dir: Path) -> None:
    with pytest.raises(GameFileError, match=r"history/0005.toml does not exist"):
        history.read_history(playing_dir, 5)
    path = history.history_path(playing_dir, 1)
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(GameFileError, match=r"cannot read .*history/0001.toml"):
        history.read_history(playing_dir, 1)
    path.write_text('resolution = 1\nturn = "one"\n')
    with pytest.raises(GameFileError, match=r"history/0001.toml is damaged or incomplete"):
        history.read_history(playing_dir, 1)


def test_what_the_store_hands_out_cannot_be_changed_in_place(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    record = history.read_history(playing_dir, 1)
    for thing, field in (
        (game, "seed"),
        (game.registrations[0], "secret"),
        (record, "state_digest"),
        (record.orders[0], "text"),
    ):
        with pytest.raises(FrozenInstanceError):
            setattr(thing, field, None)


def test_a_game_file_that_does_not_say_where_traded_cards_go_is_refused(
    playing_dir: Path,
) -> None:
    path = playing_dir / "game.toml"
    text = path.read_text()
    line = next(ln for ln in text.splitlines() if ln.startswith("traded_cards = "))
    path.write_text(text.replace(line + "\n", ""))
    with pytest.raises(GameFileError, match="do not say where traded cards go; write traded_cards"):
        read_game(playing_dir)
    path.write_text(text.replace(line, 'traded_cards = "burnt"'))
    with pytest.raises(GameFileError, match="\\('burnt' is not a rule\\)"):
        read_game(playing_dir)


def test_a_game_file_that_does_not_say_yes_or_no_to_missions_is_refused(
    playing_dir: Path,
) -> None:
    path = playing_dir / "game.toml"
    text = path.read_text()
    assert "missions = false\n" in text
    for wrong in ('missions = "no"\n', "missions = 0\n", ""):
        path.write_text(text.replace("missions = false\n", wrong, 1))
        with pytest.raises(GameFileError, match="whether the game plays secret missions; write"):
            read_game(playing_dir)


GAME_FILE_LIMIT = 16 * 1024 * 1024  # as docs/game-file.md says


def test_a_game_file_of_16_mib_is_read_and_one_byte_more_is_refused(playing_dir: Path) -> None:
    doc = (Path(__file__).parents[1] / "docs" / "game-file.md").read_text()
    assert "at most 16 MiB" in doc
    before = read_game(playing_dir)
    path = playing_dir / "game.toml"
    text = path.read_bytes()
    padded = text + b"#" * (GAME_FILE_LIMIT - len(text) - 1) + b"\n"
    path.write_bytes(padded)
    assert read_game(playing_dir).state == before.state
    path.write_bytes(padded + b"\n")
    with pytest.raises(
        GameFileError, match=f"this file is {GAME_FILE_LIMIT + 1} bytes; at most 16384 KiB"
    ):
        read_game(playing_dir)


# --- change files and history files read from elsewhere ----------------------------------------


def test_change_files_come_in_the_order_made_and_by_resolution(tmp_path: Path) -> None:
    names = ["0003-10.toml", "0003-2.toml", "0012-1.toml", "0003-1.toml", "0004-1.toml"]
    for name in names + ["0003-x.toml", "notes.txt", "003-1.toml"]:
        (tmp_path / name).write_text("")
    order = ["0003-1.toml", "0003-2.toml", "0003-10.toml", "0004-1.toml", "0012-1.toml"]
    assert [p.name for p in history.change_files(tmp_path)] == order
    assert [p.name for p in history.change_files(tmp_path, 3)] == order[:3]
    assert history.change_files(tmp_path, 5) == []
    assert history.change_files(tmp_path / "none") == []


def test_a_history_file_read_from_elsewhere_is_the_whole_record(
    playing_dir: Path, tmp_path: Path
) -> None:
    write_skeletons(playing_dir)
    processor.resolve_game(playing_dir)
    record = history.read_history(playing_dir, 2)
    assert record.events and record.rolls()
    moved = tmp_path / "kept.toml"
    moved.write_bytes(history.history_path(playing_dir, 2).read_bytes())
    assert history.read_history_file(moved) == record
    assert history.read_history_file(moved, events=False) == replace(record, events=())
