"""The turn processor: game directories, order files, resolution, crash safety and audit."""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import signal
import time
from pathlib import Path

import pytest
import tomli_w
from conftest import new_game, skeleton, snapshot, write_skeletons

from pbem.core.state import Phase
from pbem.errors import AuditError, DiskError, LockedError, PbemError
from pbem.game import processor
from pbem.records import disk, store
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game


def test_new_game_writes_game_file_setup_history_and_first_reports(game_dir: Path) -> None:
    assert (game_dir / "game.toml").exists()
    assert (game_dir / "history" / "0000.toml").exists()
    for player in ("alice", "bob", "carol"):
        text = (report_dir(game_dir, 0) / f"{player}.txt").read_text()
        reg = read_game(game_dir).registration(player)
        assert reg is not None and reg.secret in text
    game = read_game(game_dir)
    assert game.state.phase is Phase.SETUP
    assert game.commitment in (report_dir(game_dir, 0) / "alice.txt").read_text()


def test_new_game_refuses_an_existing_game(game_dir: Path) -> None:
    with pytest.raises(PbemError, match="already holds a game"):
        new_game(game_dir)


def test_player_names_are_checked() -> None:
    with pytest.raises(PbemError, match="cannot be a player name"):
        processor.parse_player_list(["alice", "bob smith"])
    with pytest.raises(PbemError, match="neutral"):
        processor.parse_player_list(["alice", "neutral"])
    with pytest.raises(PbemError, match="2 to 6"):
        processor.parse_player_list(["alice"])
    with pytest.raises(PbemError, match="twice"):
        processor.parse_player_list(["alice", "Alice"])
    assert processor.parse_player_list(["alice=a@example.org", "bob"]) == [
        ("alice", "a@example.org"),
        ("bob", ""),
    ]


def test_setup_turn_waits_for_every_player(game_dir: Path) -> None:
    (game_dir / "orders" / "alice.toml").write_text(skeleton(game_dir, "alice"))
    before = snapshot(game_dir)
    with pytest.raises(processor.NotReady) as err:
        processor.resolve_game(game_dir)
    assert "no valid orders from bob" in str(err.value)
    assert "no valid orders from carol" in str(err.value)
    assert snapshot(game_dir) == before


def test_resolve_uses_orders_folder_and_archives_used_files(game_dir: Path) -> None:
    write_skeletons(game_dir)
    outcome = processor.resolve_game(game_dir)
    assert outcome.resolution == 1
    assert read_game(game_dir).state.phase is Phase.PLAY
    assert not list((game_dir / "orders").glob("*.toml"))
    assert sorted(p.name for p in (game_dir / "orders" / "done" / "0001").iterdir()) == [
        "alice.toml",
        "bob.toml",
        "carol.toml",
    ]
    record = read_history(game_dir, 1)
    assert {o.player for o in record.orders} == {"alice", "bob", "carol"}
    assert (report_dir(game_dir, 1) / "alice.txt").exists()


def _orders_text(directory: Path, player: str, **changes: str) -> str:
    text = skeleton(directory, player)
    for old, new in changes.items():
        text = text.replace(old.replace("_", " "), new)
    return text


REJECTIONS = {
    "wrong secret": (lambda t: t.replace('secret = "', 'secret = "x'), "secret is not", 4),
    "stale turn": (lambda t: t.replace("turn = 1", "turn = 0"), "earlier turn", 2),
    "future turn": (lambda t: t.replace("turn = 1", "turn = 5"), "later turn", 2),
    "bad toml": (lambda t: t.replace('armies = "rest"', "armies = rest"), "not valid TOML", None),
    "unknown territory": (
        lambda t: t + '\n[[attack]]\nfrom = "Ukrane"\nto = "Ural"\n',
        "did you mean 'Ukraine'",
        None,
    ),
    "too many armies": (
        lambda t: t.replace('armies = "rest"', "armies = 99"),
        "too many armies placed",
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(REJECTIONS))
def test_rejected_file_names_line_and_reason_and_changes_nothing(
    playing_dir: Path, case: str
) -> None:
    mutate, reason, line = REJECTIONS[case]
    player = read_game(playing_dir).state.awaiting()[0]
    path = playing_dir / "orders" / f"{player}.toml"
    path.write_text(mutate(skeleton(playing_dir, player)))
    before = snapshot(playing_dir)
    with pytest.raises(processor.NotReady) as err:
        processor.resolve_game(playing_dir)
    message = str(err.value)
    assert reason in message
    assert f"{player}.toml line " in message
    if line is not None:
        assert f"{player}.toml line {line}:" in message
    assert snapshot(playing_dir) == before
    _, results = processor.check_files(playing_dir, [path])
    assert not results[0][0].accepted


def test_error_messages_never_echo_a_secret(playing_dir: Path) -> None:
    game = read_game(playing_dir)
    player = game.state.awaiting()[0]
    other = next(r for r in game.registrations if r.name != player)
    path = playing_dir / "orders" / f"{player}.toml"
    reg = game.registration(player)
    assert reg is not None
    path.write_text(skeleton(playing_dir, player).replace(reg.secret, other.secret))
    with pytest.raises(processor.NotReady) as err:
        processor.resolve_game(playing_dir)
    assert other.secret not in str(err.value) and reg.secret not in str(err.value)


def test_a_bad_file_of_one_player_leaves_another_players_valid_file(game_dir: Path) -> None:
    write_skeletons(game_dir)
    (game_dir / "orders" / "zz-broken.toml").write_text("game = \n")
    outcome = processor.resolve_game(game_dir)
    assert [s.path.name for s in outcome.rejected] == ["zz-broken.toml"]
    assert (game_dir / "orders" / "zz-broken.toml").exists()


def test_two_valid_files_from_one_player_are_refused(game_dir: Path) -> None:
    write_skeletons(game_dir)
    (game_dir / "orders" / "alice-again.toml").write_text(skeleton(game_dir, "alice"))
    with pytest.raises(processor.NotReady, match="alice has 2 valid order files"):
        processor.resolve_game(game_dir)


def test_second_run_on_a_locked_game_fails_at_once(playing_dir: Path) -> None:
    fd = os.open(playing_dir / disk.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockedError, match="another run"):
            processor.resolve_game(playing_dir)
    finally:
        os.close(fd)


def _play(directory: Path, turns: int) -> None:
    for _ in range(turns):
        write_skeletons(directory)
        processor.resolve_game(directory)


@pytest.mark.parametrize("crash_at", ["write_history", "archive_orders", "write_files"])
def test_interrupted_resolve_run_again_gives_the_same_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    clean = new_game(tmp_path / "clean" / "game")
    crashed = new_game(tmp_path / "crashed" / "game")
    _play(clean, 2)
    _play(crashed, 1)
    write_skeletons(crashed)

    class Crash(Exception):
        pass

    target = processor
    original = getattr(target, crash_at)

    def crash_after(*args: object, **kwargs: object) -> object:
        original(*args, **kwargs)
        raise Crash(crash_at)

    monkeypatch.setattr(target, crash_at, crash_after)
    with pytest.raises(Crash):
        processor.resolve_game(crashed)
    monkeypatch.setattr(target, crash_at, original)
    outcome = processor.resolve_game(crashed)
    assert outcome.resolution == 2
    assert snapshot(crashed) == snapshot(clean)
    processor.audit_game(crashed)


def test_crash_in_the_middle_of_a_write_leaves_the_old_file(
    playing_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = (playing_dir / "game.toml").read_bytes()

    def broken_replace(src: object, dst: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(DiskError, match="game.toml"):
        disk.atomic_write(playing_dir / "game.toml", b"half")
    assert (playing_dir / "game.toml").read_bytes() == before
    assert not [p for p in playing_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_resolved_turn_is_never_applied_twice(playing_dir: Path) -> None:
    write_skeletons(playing_dir)
    used = list((playing_dir / "orders").glob("*.toml"))
    processor.resolve_game(playing_dir)
    done = playing_dir / "orders" / "done" / "0002"
    for p in done.iterdir():
        (playing_dir / "orders" / p.name).write_bytes(p.read_bytes())
    before = snapshot(playing_dir)
    with pytest.raises(processor.NotReady, match="earlier turn"):
        processor.resolve_game(playing_dir, used)
    assert snapshot(playing_dir) == before


def test_same_seed_and_orders_give_byte_identical_directories(tmp_path: Path) -> None:
    one = new_game(tmp_path / "one" / "game")
    two = new_game(tmp_path / "two" / "game")
    _play(one, 4)
    _play(two, 4)
    assert snapshot(one) == snapshot(two)


def test_audit_passes_on_a_played_game(playing_dir: Path) -> None:
    _play(playing_dir, 3)
    summary = processor.audit_game(playing_dir)
    assert summary.resolutions == 5


def _first_roll_resolution(directory: Path) -> int:
    for entry in processor.dice_history(directory):
        if entry["rolls"]:
            return int(str(entry["resolution"]))
    raise AssertionError("no rolls")


def test_audit_names_the_resolution_whose_die_was_changed(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "g")
    _play(directory, 6)
    r = _first_roll_resolution(directory)
    path = directory / "history" / f"{r:04d}.toml"
    data = store._load_toml(path)
    roll = next(e for e in data["events"] if e["type"] == "rolled")
    roll["attacker"][0] = roll["attacker"][0] % 6 + 1
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    with pytest.raises(AuditError, match=f"resolution {r}, "):
        processor.audit_game(directory)


def test_audit_tells_a_changed_die_in_words(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "g")
    _play(directory, 6)
    r = _first_roll_resolution(directory)
    path = directory / "history" / f"{r:04d}.toml"
    data = store._load_toml(path)
    rolls = [e for e in data["events"] if e["type"] == "rolled"]
    roll = rolls[-1]
    number = sum(1 for e in rolls if (e["source"], e["target"]) == (roll["source"], roll["target"]))
    given = " ".join(map(str, roll["attacker"]))
    roll["attacker"][-1] = roll["attacker"][-1] % 6 + 1
    changed = " ".join(map(str, roll["attacker"]))
    against = " ".join(map(str, roll["defender"]))
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    player = roll["player"]
    with pytest.raises(AuditError) as caught:
        processor.audit_game(directory)
    assert str(caught.value) == (
        f"turn {data['turn']}, {player}'s turn (resolution {r}, history/{r:04d}.toml): "
        f"{player}'s attack on {roll['target']} from {roll['source']}, roll {number}: "
        f"recorded {changed} against {against}, the dice give {given} against {against}"
    )


def test_audit_names_each_field_of_a_changed_game_file(playing_dir: Path) -> None:
    path = playing_dir / "game.toml"
    text = path.read_text()
    state = read_game(playing_dir).state
    name, holding = next(iter(state.territories.items()))
    old = f'{name} = [\n    "{holding.owner}",\n    {holding.armies},'
    assert old in text
    path.write_text(text.replace(old, old.replace(f"{holding.armies},", "40,")))
    with pytest.raises(AuditError) as caught:
        processor.audit_game(playing_dir)
    assert str(caught.value) == (
        "game.toml differs from the state the history replays to: "
        f"{name}: game file 40 armies, history {holding.armies}"
    )


def test_audit_detects_a_changed_game_file(playing_dir: Path) -> None:
    path = playing_dir / "game.toml"
    path.write_text(path.read_text().replace("current = 0", "current = 1"))
    with pytest.raises(AuditError, match="game.toml differs"):
        processor.audit_game(playing_dir)


def test_audit_detects_a_key_not_from_the_chain(playing_dir: Path) -> None:
    path = playing_dir / "history" / "0001.toml"
    data = store._load_toml(path)
    data["key"] = "00" * 32
    path.write_text(tomli_w.dumps(data, multiline_strings=True))
    with pytest.raises(AuditError, match="resolution 1, "):
        processor.audit_game(playing_dir)


def test_not_a_game_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PbemError, match="not a game directory"):
        processor.resolve_game(tmp_path)


def test_dice_history_lists_every_resolution_with_key(playing_dir: Path) -> None:
    _play(playing_dir, 2)
    history = processor.dice_history(playing_dir)
    game = read_game(playing_dir)
    assert [h["resolution"] for h in history] == [0, 1, 2, 3]
    assert [h["key"] for h in history] == [game.key(r).hex() for r in range(4)]
    assert history[0]["first_player"]


KILLS = 100


def _killed_at(directory: Path, delay: float) -> bool:
    """Resolve in a child process and kill -9 it after `delay` seconds; True if it was killed
    before it finished."""
    pid = os.fork()
    if pid == 0:  # the child: resolve, then leave without running the parent's cleanup
        code = 0
        try:
            processor.resolve_game(directory)
        except BaseException:
            code = 1
        os._exit(code)
    deadline = time.perf_counter() + delay
    while time.perf_counter() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            break
        time.sleep(min(0.005, max(0.0, deadline - time.perf_counter())))
    else:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    assert not (os.WIFEXITED(status) and os.WEXITSTATUS(status)), "the resolve failed"
    return os.WIFSIGNALED(status)


def test_kill_9_at_random_moments_of_resolve_then_a_rerun_gives_the_uninterrupted_game(
    tmp_path: Path,
) -> None:
    base = new_game(tmp_path / "base")
    _play(base, 1)
    write_skeletons(base)
    twin = Path(shutil.copytree(base, tmp_path / "twin"))
    started = time.perf_counter()
    assert not _killed_at(twin, 60.0)  # a run left alone, timed as the killed ones run
    duration = time.perf_counter() - started
    expected = snapshot(twin)
    rng = random.Random(10)
    stages = {"before the history": 0, "half written": 0, "done": 0}
    for i in range(KILLS):
        directory = Path(shutil.copytree(base, tmp_path / f"kill{i}"))
        _killed_at(directory, rng.uniform(0, duration * 1.2))
        if read_game(directory).state.resolution == 3:
            stages["done"] += 1
        elif (directory / "history" / "0002.toml").exists():
            stages["half written"] += 1
        else:
            stages["before the history"] += 1
        try:  # the next run: it completes the resolution, or finds it done
            processor.resolve_game(directory)
        except processor.NotReady:
            assert read_game(directory).state.resolution == 3
        assert not [p for p in directory.rglob("*") if p.name.endswith(".tmp")]
        assert snapshot(directory) == expected, f"kill {i}"
        shutil.rmtree(directory)
    # The kills must reach both sides of the history write; how many land in each window
    # depends on the machine's load (the crash tests above hit each point exactly).
    assert stages["half written"] >= 1 and stages["before the history"] >= 1, stages


@pytest.mark.parametrize("crash_at", ["write_history", "archive_orders", "write_files"])
def test_interrupted_autopilot_resolve_run_again_later_gives_the_same_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash_at: str
) -> None:
    from datetime import timedelta

    from pbem.core.state import Options
    from pbem.records.clock import Schedule, parse_instant

    start = parse_instant("2026-12-01T00:00Z")
    due = parse_instant("2026-12-02T00:00Z")
    dirs = []
    for name in ("clean", "crashed"):
        directory = tmp_path / name / "game"  # apart: one name each per folder of games
        processor.new_game(
            directory,
            processor.parse_player_list(["alice", "bob", "carol"]),
            Options(),
            seed=bytes(range(32)),
            name="test-game",
            schedule=Schedule(timedelta(days=1)),
            now=start,
        )
        for player in ("alice", "bob"):
            (directory / "orders" / f"{player}.toml").write_text(skeleton(directory, player))
        dirs.append(directory)
    clean, crashed = dirs
    processor.resolve_game(clean, now=due)

    class Crash(Exception):
        pass

    target = processor
    original = getattr(target, crash_at)

    def crash_after(*args: object, **kwargs: object) -> object:
        original(*args, **kwargs)
        raise Crash(crash_at)

    monkeypatch.setattr(target, crash_at, crash_after)
    with pytest.raises(Crash):
        processor.resolve_game(crashed, now=due)
    monkeypatch.setattr(target, crash_at, original)
    outcome = processor.resolve_game(crashed, now=due + timedelta(days=3))
    assert outcome.recovered
    assert snapshot(crashed) == snapshot(clean)
    assert any(o.autopilot for o in read_history(crashed, 1).orders)
    processor.audit_game(crashed)
