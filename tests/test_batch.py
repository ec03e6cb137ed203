"""Many games in one root: `pbem status` names where each stands, `pbem run` resolves exactly
the ones that are due, reports the rest, and never resolves a game twice."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import SEED, held_lock, skeleton, snapshot, write_skeletons
from test_old_games import play_to_the_end

from pbem.cli import main
from pbem.club.status import State, root_status
from pbem.core.state import Options, SetupMode
from pbem.game import deadlines, processor
from pbem.records import clock
from pbem.records.disk import GAME_FILE
from pbem.records.history import history_count, history_path, read_history
from pbem.records.opening import read_game
from pbem.records.root import find_games

NOW = "2027-03-01T12:00:00+00:00"
STARTED = "2027-02-25T12:00:00+00:00"
"""When the games with deadlines began: a turn of 48 hours is overdue by NOW."""
PBEM = [sys.executable, "-m", "pbem"]


def make(
    root: Path, name: str, players: int, setup: str = "deal", turn_time: str | None = None
) -> Path:
    names = ["ann", "ben", "cy", "dee", "eve", "fay"][:players]
    directory = root / name
    processor.new_game(
        directory,
        processor.parse_player_list(names),
        Options(setup=SetupMode(setup)),
        seed=bytes([players] * 32),
        name=name,
        schedule=deadlines.schedule_from_options(turn_time, None),
        now=clock.parse_instant(STARTED) if turn_time else None,
    )
    return directory


def rejected_file(directory: Path, player: str) -> None:
    text = skeleton(directory, player).replace('secret = "', 'secret = "x')
    (directory / "orders" / f"{player}-wrong.toml").write_text(text)


STATES = {
    "ready-two": State.READY,
    "ready-six": State.READY,
    "ready-with-a-rejected-file": State.READY,
    "interrupted": State.READY,
    "overdue": State.OVERDUE,
    "waiting-four": State.WAITING,
    "waiting-five": State.WAITING,
    "example": State.OVER,
    "damaged": State.DAMAGED,
    "gap": State.DAMAGED,
    "locked": State.LOCKED,
    "nested": State.READY,
}
READY = {name for name, state in STATES.items() if state in (State.READY, State.OVERDUE)}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("root") / "games"
    write_skeletons(make(root, "ready-two", 2, "random"))
    write_skeletons(make(root, "ready-six", 6))
    game = make(root, "ready-with-a-rejected-file", 3)
    write_skeletons(game)
    rejected_file(game, "ann")
    # A resolution whose history was written before the run stopped: the next run completes it.
    game = make(root, "interrupted", 3, "random")
    before = (game / GAME_FILE).read_bytes()
    write_skeletons(game)
    processor.resolve_game(game)
    (game / GAME_FILE).write_bytes(before)
    make(root, "overdue", 2, "random", turn_time="48h")
    game = make(root, "waiting-four", 4)
    (game / "orders" / "ann.toml").write_text(skeleton(game, "ann"))
    rejected_file(game, "ben")
    game = make(root, "waiting-five", 5)
    write_skeletons(game)
    (game / "orders" / "eve.toml").unlink()
    over = play_to_the_end(root)
    assert read_game(over).state.winner is not None
    game = make(root, "damaged", 3)
    text = (game / GAME_FILE).read_text()
    (game / GAME_FILE).write_text(text.replace("current = ", "current = 7 #", 1))
    game = make(root, "gap", 2, "random")
    for _ in range(2):
        write_skeletons(game)
        processor.resolve_game(game)
    history_path(game, 1).unlink()
    write_skeletons(game)
    write_skeletons(make(root, "locked", 4))
    write_skeletons(make(root / "club" / "autumn", "nested", 2, "random"))
    return root


@pytest.fixture
def root(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the twelve games, with the lock of 'locked' held by another process."""
    copy = tmp_path / "games"
    shutil.copytree(pristine, copy)
    with held_lock(copy / "locked"):
        yield copy


def invoke(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def resolutions(root: Path) -> dict[str, int]:
    return {p.name: history_count(p) for p in find_games(root)}


def test_every_game_of_the_root_is_found_at_any_depth(root: Path) -> None:
    found = find_games(root)
    assert {p.name for p in found} == set(STATES)
    assert root / "club" / "autumn" / "nested" in found


def test_status_names_the_state_of_every_game(root: Path) -> None:
    statuses = {s.name: s for s in root_status(root, batch_now())}
    assert {name: s.state for name, s in statuses.items()} == STATES
    assert "current seat 7" in statuses["damaged"].reason
    assert "history/0001.toml is missing" in statuses["gap"].reason
    assert statuses["example"].reason.endswith("won")
    assert statuses["interrupted"].reason == (
        "turn 1 (resolution 1, history/0001.toml) was interrupted and is to be completed"
    )
    four = statuses["waiting-four"]
    assert (sorted(four.awaited), four.valid, four.rejected) == (
        ["ann", "ben", "cy", "dee"],
        ("ann",),
        ("ben-wrong.toml",),
    )


def test_status_puts_what_needs_the_moderator_first(root: Path) -> None:
    lines = invoke("status", root, "--now", NOW).splitlines()
    assert lines[0].split()[:3] == ["STATE", "GAME", "TURN"]
    states = [line.split()[0] for line in lines[1:]]
    assert states == sorted(states, key=[s.value for s in State].index)
    assert states[:2] == ["damaged", "damaged"] and states[-1] == "over"
    row = next(line for line in lines if " waiting-four " in line)
    assert "1/4 valid, 1 rejected" in row and "ann" in row


def test_status_as_json_for_scripts(root: Path) -> None:
    data = json.loads(invoke("status", root, "--json", "--now", NOW))
    by_name = {g["name"]: g for g in data}
    assert {n: g["state"] for n, g in by_name.items()} == {n: s.value for n, s in STATES.items()}
    two = by_name["ready-two"]
    assert (two["turn"], two["phase"], two["valid"]) == (1, "play", two["awaiting"])
    assert two["last_resolution"] == 0 and two["last_resolved"] is not None
    assert by_name["damaged"]["reason"] and by_name["damaged"]["turn"] is None


def test_status_of_one_game_directory(root: Path) -> None:
    lines = invoke("status", root / "waiting-four", "--now", NOW).splitlines()
    assert len(lines) == 2 and lines[1].startswith("waiting  waiting-four")


def test_status_shows_the_deadline_and_the_time_left(root: Path) -> None:
    (before,) = json.loads(invoke("status", root / "overdue", "--json", "--now", STARTED))
    assert before["state"] == "waiting"
    assert before["deadline"] == "2027-02-27T12:00Z" and before["seconds_left"] == 48 * 3600
    row = invoke("status", root / "overdue", "--now", STARTED).splitlines()[1]
    assert "2027-02-27T12:00Z  2d00h" in row and row.endswith("the deal 2027-02-25T12:00Z")
    (after,) = json.loads(invoke("status", root / "overdue", "--json", "--now", NOW))
    assert after["state"] == "overdue" and after["seconds_left"] == -2 * 24 * 3600


def test_an_overdue_game_is_resolved_with_the_missed_turn_rule(root: Path) -> None:
    output = invoke("run", root / "overdue", "--now", NOW)
    assert "resolved turn 1 (resolution 1, history/0001.toml)" in output
    record = read_history(root / "overdue", 1)
    assert [o.autopilot for o in record.orders] == [True] and record.time is not None
    (status,) = json.loads(invoke("status", root / "overdue", "--json", "--now", NOW))
    assert status["missed_turns"] == {record.orders[0].player: 1}


def test_status_changes_nothing(root: Path) -> None:
    before = snapshot(root)
    invoke("status", root)
    assert snapshot(root) == before


def test_run_resolves_exactly_the_ready_games_and_reports_the_rest(root: Path) -> None:
    before = resolutions(root)
    untouched = {
        name: snapshot(root / name) for name in STATES if name not in READY and name != "nested"
    }
    output = invoke("run", root, "--now", NOW, code=1)
    after = resolutions(root)
    changed = {name for name in before if after[name] != before[name]}
    assert changed == READY - {"interrupted"}  # its history was already there: completed
    assert read_game(root / "interrupted").state.resolution == 2
    for name, files in untouched.items():
        assert snapshot(root / name) == files, name
    rows = {line.split()[1]: line for line in output.splitlines()[1:-1]}
    assert rows["damaged"].startswith("failed") and "current seat 7" in rows["damaged"]
    assert rows["gap"].startswith("failed") and "history/0001.toml is missing" in rows["gap"]
    assert rows["locked"].startswith("skipped") and "locked by another run" in rows["locked"]
    assert rows["example"].startswith("over")
    assert rows["waiting-five"].startswith("waiting") and "awaiting eve" in rows["waiting-five"]
    assert rows["overdue"].startswith("resolved")
    assert rows["interrupted"].startswith("resolved") and "completed turn 1 (resolution 1" in output
    assert output.splitlines()[-1] == (
        f"12 games at {NOW}: 2 failed, 6 resolved, 1 skipped, 2 waiting, 1 over"
    )


def test_a_second_run_right_after_changes_nothing(root: Path) -> None:
    invoke("run", root, "--now", NOW, code=1)
    before = games_of(root)
    output = invoke("run", root, "--now", NOW, code=1)
    assert games_of(root) == before
    assert " resolved" not in output.splitlines()[-1]


def games_of(root: Path) -> dict[str, bytes]:
    """Every file of the games of a root, not the index the runs keep of them (.pbem-tick/,
    which a run brings up to date)."""
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".pbem-tick/")}


def test_two_jobs_resolve_what_one_job_does(root: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(root, other)
    invoke("run", root, "--now", NOW, code=1)
    invoke("run", other, "--now", NOW, "--jobs", "2", code=1)
    for one, two in zip(find_games(root), find_games(other), strict=True):
        if one.name == "locked":  # the copy's lock is not held
            continue
        assert (one / GAME_FILE).read_bytes() == (two / GAME_FILE).read_bytes(), one.name


def test_a_dry_run_changes_nothing(root: Path) -> None:
    before = snapshot(root)
    output = invoke("run", root, "--dry-run", "--now", NOW, code=1)
    assert snapshot(root) == before
    assert sum(line.startswith("would resolve") for line in output.splitlines()) == len(READY)


def test_a_game_that_breaks_does_not_stop_the_others(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = processor.resolve_game

    def breaking(directory: Path, paths: object = None, **kwargs: Any) -> processor.Outcome:
        if directory.name == "ready-six":
            raise RuntimeError("disk on fire")
        return real(directory, **kwargs)

    monkeypatch.setattr(processor, "resolve_game", breaking)
    output = invoke("run", root, code=1)
    assert "RuntimeError: disk on fire" in output
    assert history_count(root / "ready-two") == 2


def test_two_runs_at_once_resolve_each_game_once(tmp_path: Path) -> None:
    root = tmp_path / "games"
    games = [make(root, f"g{i}", 2 + i % 5, "random") for i in range(10)]
    for game in games:
        write_skeletons(game)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [*PBEM, "run", str(root), "--jobs", "2", "--now", NOW]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    resolved = [
        line.split()[1]
        for out in outputs
        for line in out.splitlines()
        if line.startswith("resolved")
    ]
    assert sorted(resolved) == sorted(g.name for g in games)
    for game in games:
        assert history_count(game) == 2, game.name
        assert read_game(game).state.resolution == 2
        processor.audit_game(game)


def test_the_progress_bar_shows_only_on_a_terminal(tmp_path: Path) -> None:
    root = tmp_path / "games"
    write_skeletons(make(root, "solo", 2, "random"))
    make(root, "other", 3)
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run(
        [*PBEM, "run", str(root)], stdout=subprocess.PIPE, stderr=follower, env=env, timeout=120
    )
    os.close(follower)
    bar = os.read(leader, 65536).decode()
    os.close(leader)
    assert done.returncode == 0
    assert "games" in bar and "100%" in bar
    quiet = subprocess.run(
        [*PBEM, "run", str(root)], capture_output=True, text=True, env=env, timeout=120
    )
    assert quiet.stderr == ""
    assert quiet.stdout.splitlines()[0].startswith("RESULT")


def test_run_refuses_a_folder_without_games(tmp_path: Path) -> None:
    assert "there is no game in" in invoke("run", tmp_path, code=1)
    assert "there is no game in" in invoke("status", tmp_path, code=1)


def test_now_must_be_an_iso_time(tmp_path: Path) -> None:
    assert "is not an ISO 8601 time" in invoke("run", tmp_path, "--now", "tomorrow", code=1)


def test_jobs_must_be_at_least_one(tmp_path: Path) -> None:
    assert "--jobs" in invoke("run", tmp_path, "--jobs", "0", code=2)


def test_the_commands_of_many_games_want_a_folder_that_is_there(tmp_path: Path) -> None:
    game = make(tmp_path / "games", "duel", 2)
    for command in ("status", "run", "config"):
        assert "is a file" in invoke(command, game / GAME_FILE, code=2), command
        assert "does not exist" in invoke(command, tmp_path / "nowhere", code=2), command
    assert "each in a process of its own. [default: 1; x>=1]" in " ".join(
        invoke("run", "--help").split()
    )
    assert "waiting  duel" in invoke("run", tmp_path / "games", "--jobs", "1", "--now", NOW)


def test_status_json_is_indented_and_keeps_names_as_written(tmp_path: Path) -> None:
    game = tmp_path / "games" / "duel"
    processor.new_game(game, processor.parse_player_list(["zoë", "ann"]), Options(), seed=SEED)
    out = invoke("status", tmp_path / "games", "--json", "--now", NOW)
    data = json.loads(out)
    assert "zoë" in data[0]["awaiting"]
    assert out == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_new_refuses_a_name_already_in_the_root(tmp_path: Path) -> None:
    make(tmp_path / "games" / "fridays", "duel", 2)
    (tmp_path / "games" / "pbem.toml").write_text("")
    output = invoke("new", tmp_path / "games" / "mondays" / "duel", "--players", "a,b", code=1)
    assert "already holds a game called 'duel'" in output and "--name" in output
    assert not (tmp_path / "games" / "mondays").exists()
    invoke("new", tmp_path / "games" / "mondays" / "duel", "--players", "a,b", "--name", "duel2")


def test_new_refuses_a_name_taken_outside_a_club_folder_with_its_own_settings(
    tmp_path: Path,
) -> None:
    """A club folder with a pbem.toml of its own is the nearest root of its games, yet a tick
    over the folder above takes its games in too: a name is refused if taken there."""
    root = tmp_path / "games"
    make(root, "g1", 2)
    (root / "pbem.toml").write_text("")
    (root / "club").mkdir()
    (root / "club" / "pbem.toml").write_text('[mail]\ngrace = "1h"\n')
    out = invoke("new", root / "club" / "x", "--players", "a,b", "--name", "G1", code=1)
    assert f"{root / 'g1'} already holds a game called 'G1' in {root}" in out
    assert not (root / "club" / "x").exists()
    invoke("new", root / "club" / "x", "--players", "a,b", "--name", "g2")
    assert "failed" not in invoke("run", root, "--now", NOW)


def test_new_refuses_a_name_taken_in_a_folder_a_tick_is_run_over(tmp_path: Path) -> None:
    """A folder with no pbem.toml that `pbem run` is run over (its index tells) is a root too:
    a club folder inside it with settings of its own does not make a name free again."""
    root = tmp_path / "games"
    make(root, "g1", 2)
    (root / "club").mkdir()
    (root / "club" / "pbem.toml").write_text("")
    invoke("new", root / "club" / "x", "--players", "a,b", "--name", "g1")  # (no tick yet)
    assert "is also the name of" in invoke("run", root, "--now", NOW, code=1)
    shutil.rmtree(root / "club" / "x")
    out = invoke("new", root / "club" / "y", "--players", "a,b", "--name", "G1", code=1)
    assert f"{root / 'g1'} already holds a game called 'G1' in {root}" in out
    invoke("new", tmp_path / "elsewhere" / "y", "--players", "a,b", "--name", "G1")


def test_games_with_one_name_are_not_run(tmp_path: Path) -> None:
    root = tmp_path / "games"
    write_skeletons(make(root, "twin", 2, "random"))
    shutil.copytree(root / "twin", root / "backup" / "twin")
    output = invoke("run", root, code=1)
    assert sum(line.startswith("failed") for line in output.splitlines()) == 2
    assert "is also the name of" in output
    assert history_count(root / "twin") == 1
    assert [s.state for s in root_status(root, batch_now())] == [State.DAMAGED] * 2


def test_hidden_folders_and_the_inside_of_games_are_not_searched(tmp_path: Path) -> None:
    root = tmp_path / "games"
    game = make(root, "outer", 2)
    shutil.copytree(game, root / ".trash" / "outer")
    shutil.copytree(game, tmp_path / "copy")
    shutil.move(tmp_path / "copy", game / "reports" / "copy")
    assert find_games(root) == [game]


def batch_now() -> datetime:
    return datetime.fromisoformat(NOW)


def test_a_damaged_history_behind_a_deadline_is_reported_not_raised(root: Path) -> None:
    history_path(root / "overdue", 0).write_text("[broken")
    (status,) = root_status(root / "overdue", batch_now())
    assert status.state is State.DAMAGED and "0000.toml" in status.reason


def test_a_folder_that_is_not_there_is_not_a_folder_of_games(tmp_path: Path) -> None:
    from pbem.errors import PbemError

    (tmp_path / "a-file").write_text("")
    for path in (tmp_path / "nowhere", tmp_path / "a-file"):
        with pytest.raises(PbemError, match=f"{path.name} is not a folder of games: it does not"):
            find_games(path)
    game = make(tmp_path / "games", "duel", 2)
    assert find_games(game) == [game]


def test_a_game_whose_name_cannot_be_read_is_listed_under_its_folder(tmp_path: Path) -> None:
    from pbem.records.root import game_name

    game = make(tmp_path / "games", "duel", 2)
    assert game_name(game) == "duel"
    path = game / "game.toml"
    text = path.read_text()
    path.write_text(text.replace('game = "duel"', 'game = ""', 1))
    renamed = Path(shutil.move(game, tmp_path / "games" / "folder"))
    assert game_name(renamed) == "folder"
    (renamed / "game.toml").write_text("[broken")
    assert game_name(renamed) == "folder"


def test_without_a_pbem_toml_a_new_game_joins_the_folder_it_is_made_in(tmp_path: Path) -> None:
    make(tmp_path / "games" / "fridays", "duel", 2)
    invoke("new", tmp_path / "games" / "mondays" / "duel", "--players", "a,b")
    output = invoke(
        "new",
        tmp_path / "games" / "fridays" / "other",
        "--players",
        "a,b",
        "--name",
        "duel",
        code=1,
    )
    assert "already holds a game called 'duel'" in output


@pytest.mark.parametrize(
    ("now", "state", "left"),
    [
        ("2027-02-27T10:55:00+00:00", "waiting", "1h05m"),
        ("2027-02-27T12:00:00+00:00", "overdue", "0h00m"),
        ("2027-02-27T12:00:01+00:00", "overdue", "-0h00m"),
        ("2027-02-27T13:30:00+00:00", "overdue", "-1h30m"),
        ("2027-03-01T13:00:00+00:00", "overdue", "-2d01h"),
    ],
)
def test_a_game_is_overdue_from_its_deadline_on(
    root: Path, now: str, state: str, left: str
) -> None:
    row = invoke("status", root / "overdue", "--now", now).splitlines()[1]
    assert row.startswith(f"{state} ") and f"2027-02-27T12:00Z  {left} " in row


def test_status_of_a_folder_without_games_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    output = invoke("status", tmp_path / "empty", "--now", NOW, code=1)
    assert "there is no game in" in output and "no folder in it has a game.toml" in output


def test_a_dry_run_fetches_and_sends_no_mail(root: Path) -> None:
    before = snapshot(root)
    output = invoke("run", root, "--dry-run", "--fetch", "--send", "--now", NOW, code=1)
    assert output.splitlines()[0] == "dry run: no mail fetched or sent"
    assert snapshot(root) == before


def test_a_fetch_that_fails_is_told_and_the_games_still_run(tmp_path: Path) -> None:
    root = tmp_path / "games"
    write_skeletons(make(root, "duel", 2, "random"))
    output = invoke("run", root, "--fetch", "--now", NOW, code=1)
    assert output.splitlines()[0].startswith("fetch failed: ")
    assert history_count(root / "duel") == 2
    assert output.splitlines()[-1] == f"1 games at {NOW}: 1 resolved"


def test_the_status_table_keeps_its_columns_under_their_headings(root: Path) -> None:
    lines = invoke("status", root, "--now", NOW).splitlines()
    starts = [lines[0].index(heading) for heading in ("GAME", "TURN", "PHASE", "AWAITING")]
    for row in lines[1:]:
        for start in starts:
            assert row[start - 2 : start] == "  " and row[start] != " ", (row, start)


def test_a_root_knows_its_games_by_name_except_a_name_two_share(tmp_path: Path) -> None:
    from pbem.records.root import open_root

    root = tmp_path / "games"
    make(root, "duel", 2)
    make(root, "twin", 2)
    shutil.copytree(root / "twin", root / "backup" / "twin")
    found = open_root(root)
    assert found.by_name == {"duel": root / "duel"}
    assert found.duplicates == {"twin": [root / "backup" / "twin", root / "twin"]}
    assert found.duplicate_reason(root / "duel") is None
    assert found.duplicate_reason(root / "twin") == (
        f"the name 'twin' is also the name of {root / 'backup' / 'twin'}: rename one of them"
    )


def _ready_root(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "games"
    for i in range(count):
        write_skeletons(make(root, f"g{i}", 2, "random"))
    return root


def test_the_library_resolves_unless_told_it_is_a_dry_run(tmp_path: Path) -> None:
    from pbem.club import batch

    root = _ready_root(tmp_path, 2)
    before = snapshot(root)
    assert (
        batch.run_game(root / "g0", batch_now(), dry_run=True).result is batch.Result.WOULD_RESOLVE
    )
    assert snapshot(root) == before
    assert batch.run_game(root / "g0", batch_now()).result is batch.Result.RESOLVED
    summary = batch.run_root(root, batch_now())
    assert [(g.name, g.result) for g in summary.games] == [
        ("g0", batch.Result.WAITING),
        ("g1", batch.Result.RESOLVED),
    ]
    assert summary.ok


def test_the_library_refuses_fewer_than_one_job(tmp_path: Path) -> None:
    from pbem.club import batch
    from pbem.errors import PbemError

    root = _ready_root(tmp_path, 1)
    before = snapshot(root)
    with pytest.raises(PbemError, match="--jobs must be 1 or more"):
        batch.run_root(root, batch_now(), jobs=0)
    assert snapshot(root) == before


def test_a_game_another_run_resolved_meanwhile_is_waiting_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def resolved_meanwhile(directory: Path, paths: object = None, **kwargs: Any) -> None:
        raise processor.NotReady("turn 1 cannot be resolved yet:\nawaiting ben")

    root = _ready_root(tmp_path, 1)
    monkeypatch.setattr(processor, "resolve_game", resolved_meanwhile)
    output = invoke("run", root, "--now", NOW)
    assert [line.split(None, 2)[::2] for line in output.splitlines()[1:-1]] == [
        ["waiting", "awaiting ben"]
    ]


def test_two_jobs_resolve_two_games_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each game's resolution waits (up to 10 s) until the other one has started."""
    import time

    from pbem.club import batch

    root = _ready_root(tmp_path, 2)
    real = processor.resolve_game

    def meeting(directory: Path, paths: object = None, **kwargs: Any) -> processor.Outcome:
        (tmp_path / f"started-{directory.name}").touch()
        other = tmp_path / f"started-{'g1' if directory.name == 'g0' else 'g0'}"
        until = time.monotonic() + 10
        while not other.exists() and time.monotonic() < until:
            time.sleep(0.01)
        (tmp_path / f"met-{directory.name}").write_text(str(other.exists()))
        return real(directory, **kwargs)

    monkeypatch.setattr(processor, "resolve_game", meeting)
    summary = batch.run_root(root, batch_now(), jobs=2)
    assert [g.result for g in summary.games] == [batch.Result.RESOLVED] * 2
    assert [(tmp_path / f"met-g{i}").read_text() for i in (0, 1)] == ["True", "True"]


def test_mail_that_cannot_be_sent_at_all_is_told_after_the_run(tmp_path: Path) -> None:
    root = _ready_root(tmp_path, 1)
    (root / "pbem.toml").write_text('[mail]\nsmtp_port = "many"\n')
    (root / "outbox").mkdir()
    (root / "outbox" / "answer.eml").write_text("From: a@b.example\nTo: c@d.example\n\nhi\n")
    output = invoke("run", root, "--send", "--now", NOW, code=1)
    assert "send failed: " in output and "smtp_port must be a port number" in output
    assert history_count(root / "g0") == 2


def test_names_in_another_case_or_width_are_one_name_in_a_root(tmp_path: Path) -> None:
    from pbem.records.root import open_root

    root = tmp_path / "games"
    make(root, "friday", 2)
    elsewhere = make(tmp_path / "elsewhere", "Friday", 2)
    shutil.copytree(elsewhere, root / "Friday")  # copied in by hand: both are held apart
    make(root, "duel", 2)
    found = open_root(root)
    assert found.by_name == {"duel": root / "duel"}
    assert set(found.duplicates) == {"friday", "Friday"}
    reason = found.duplicate_reason(root / "Friday") or ""
    assert reason == f"the name 'Friday' is also the name of {root / 'friday'}: rename one of them"
    out = invoke("new", root / "other", "--players", "ann,ben", "--name", "DUEL", code=1)
    assert "already holds a game called 'DUEL'" in out
