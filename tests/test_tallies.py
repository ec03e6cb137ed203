"""The tallies a game keeps (history/tallies.json): a resolution's story read from them and the
new events gives the same reports, byte for byte, as one counted from the whole history; they
go back with an undo, survive a run stopped part way, are counted once for a game made before
them, and the audit names any number in them the history does not give."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from conftest import (
    new_game,
    snapshot,
    stopped_after_the_history,
    write_bot_orders,
    write_skeletons,
)
from test_old_games import FIXTURE, FORMAT2, play_to_the_end

from pbem.core.tallies import Tallies
from pbem.errors import AuditError
from pbem.game import processor, undo
from pbem.present.stats import game_stats, stats_of
from pbem.records import clock, history, tallies
from pbem.records.history import read_history
from pbem.records.opening import read_game
from pbem.records.tallies import tallies_before, tallies_path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NOW = "2026-12-02T00:00Z"


def played(directory: Path, resolutions: int, seed: int = 7) -> Path:
    """A 6-player game with the test bots' orders, `resolutions` resolutions long."""
    new_game(directory, "alice,bob,carol,dave,erin,frank")
    rng = random.Random(seed)
    for _ in range(resolutions - 1):
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    return directory


def reports_of_last(directory: Path) -> dict[str, bytes]:
    folder = max((directory / "reports").iterdir())
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def counted(directory: Path) -> Tallies:
    """The tallies after the last resolution, counted from the whole history."""
    game = read_game(directory)
    players = [p.name for p in game.state.players]
    every = Tallies(players)
    for r in range(history.history_count(directory)):
        record = read_history(directory, r)
        every.fold(r, record.turn, record.events)
    return every


@pytest.fixture(scope="module")
def long_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game of 40 resolutions (battles, conquests, trades), the next turn's orders waiting."""
    directory = played(tmp_path_factory.mktemp("long") / "g", 40)
    write_bot_orders(directory, random.Random(99))
    return directory


def test_the_reports_are_the_same_bytes_from_the_tallies_and_from_the_whole_history(
    long_game: Path, tmp_path: Path
) -> None:
    kept = Path(shutil.copytree(long_game, tmp_path / "kept"))
    again = Path(shutil.copytree(long_game, tmp_path / "again"))
    tallies_path(again).unlink()  # (counted from the whole history, as a game made before them)
    processor.resolve_game(kept)
    processor.resolve_game(again)
    assert reports_of_last(kept) == reports_of_last(again)
    assert snapshot(kept) == snapshot(again)  # the tallies written the same too
    trades = json.loads(
        next(v for k, v in reports_of_last(kept).items() if k.endswith(".view.json"))
    )["stats"]["trades"]
    assert trades, "the game traded cards: the tallies carry them"


def test_a_resolution_reads_no_history_file_before_the_last(
    long_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = Path(shutil.copytree(long_game, tmp_path / "g"))
    read: list[int] = []
    real = history.read_history_file

    def counting(path: Path, *, events: bool = True) -> history.HistoryRecord:
        if events and path.parent.name == "history":
            read.append(int(path.stem))
        return real(path, events=events)

    monkeypatch.setattr(history, "read_history_file", counting)
    processor.resolve_game(directory)
    assert read == []  # the story came from the tallies, not from the history's events
    assert json.loads(tallies_path(directory).read_text())["resolution"] == 40


def test_the_stats_from_the_tallies_are_those_of_the_whole_history(long_game: Path) -> None:
    game = read_game(long_game)
    players = [p.name for p in game.state.players]
    resolutions = [
        (r, (h := read_history(long_game, r)).turn, h.events)
        for r in range(history.history_count(long_game))
    ]
    whole = game_stats(resolutions, players)
    kept = stats_of(tallies_before(long_game, players, len(resolutions)))
    for p in players:  # (the tallies count the luck, not each battle of it)
        del whole["luck"][p]["battles"]
    assert kept == whole
    assert whole["biggest_battles"] and whole["timeline"][-1]["resolution"] == 39


def test_tallies_round_trip_and_fold_on_as_from_the_start(long_game: Path) -> None:
    every = counted(long_game)
    again = Tallies.from_dict(json.loads(json.dumps(every.to_dict())))
    assert again.to_dict() == every.to_dict()
    half = Tallies(every.players)
    for r in range(20):
        record = read_history(long_game, r)
        half.fold(r, record.turn, record.events)
    half = Tallies.from_dict(json.loads(json.dumps(half.to_dict())))
    for r in range(20, 40):
        record = read_history(long_game, r)
        half = half.after(r, record.turn, record.events)
    assert half.to_dict() == every.to_dict()


def test_the_audit_names_a_number_the_history_does_not_give(
    long_game: Path, tmp_path: Path
) -> None:
    assert processor.audit_game(long_game).resolutions == 40
    for change, said in (
        (
            lambda d: d["luck"]["bob"]["defence"].update(
                losses=d["luck"]["bob"]["defence"]["losses"] + 1
            ),
            "luck, bob, defence, losses: kept",
        ),
        (
            lambda d: d["timeline"][12][3].__setitem__(1, d["timeline"][12][3][1] + 1),
            "timeline, after resolution 12, armies, dave: kept",  # (dave: seat 2)
        ),
        (
            lambda d: d["trades"][0].update(armies=99),
            "trades, 0, armies: kept 99, the history gives",
        ),
    ):
        directory = Path(shutil.copytree(long_game, tmp_path / f"g{len(said)}"))
        path = tallies_path(directory)
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))
        with pytest.raises(AuditError) as err:
            processor.audit_game(directory)
        assert said in str(err.value) and "history/tallies.json" in str(err.value)
        assert "remove it, and the next resolution counts the tallies again" in str(err.value)
        path.unlink()  # as the audit says
        processor.resolve_game(directory)
        assert processor.audit_game(directory).resolutions == 41


def test_damaged_or_foreign_tallies_are_counted_again(long_game: Path, tmp_path: Path) -> None:
    expected = Path(shutil.copytree(long_game, tmp_path / "expected"))
    processor.resolve_game(expected)
    for name, text in (
        ("damaged", "{not json"),
        ("newer", json.dumps({"format": 99, "history": "x"})),
        ("empty", ""),
    ):
        directory = Path(shutil.copytree(long_game, tmp_path / name))
        tallies_path(directory).write_text(text)
        with pytest.raises(AuditError, match="history/tallies.json: it is damaged"):
            processor.audit_game(directory)
        processor.resolve_game(directory)
        assert snapshot(directory) == snapshot(expected), name


def test_an_undo_takes_the_tallies_back(long_game: Path, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(long_game, tmp_path / "g"))
    before = tallies_path(directory).read_bytes()
    processor.resolve_game(directory)
    assert tallies_path(directory).read_bytes() != before
    undo.undo_last(directory, clock.parse_instant(NOW, "now"), "a late mail")
    assert tallies_path(directory).read_bytes() == before
    assert processor.audit_game(directory).resolutions == 40


def test_a_run_stopped_after_the_history_completes_the_tallies(
    long_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = Path(shutil.copytree(long_game, tmp_path / "expected"))
    processor.resolve_game(expected)
    directory = Path(shutil.copytree(long_game, tmp_path / "g"))
    stopped_after_the_history(directory, monkeypatch)
    assert json.loads(tallies_path(directory).read_text())["resolution"] == 39
    processor.resolve_game(directory)
    assert snapshot(directory) == snapshot(expected)


def test_a_run_stopped_after_the_tallies_counts_them_again(
    long_game: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = Path(shutil.copytree(long_game, tmp_path / "expected"))
    processor.resolve_game(expected)
    directory = Path(shutil.copytree(long_game, tmp_path / "g"))

    def stop(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(processor, "write_game", stop)
    with pytest.raises(KeyboardInterrupt):
        processor.resolve_game(directory)
    monkeypatch.undo()
    assert json.loads(tallies_path(directory).read_text())["resolution"] == 40
    processor.resolve_game(directory)  # completed from the history, the tallies counted again
    assert snapshot(directory) == snapshot(expected)


@pytest.mark.parametrize("fixture", [FIXTURE, FORMAT2], ids=["format1", "format2"])
def test_a_game_made_before_the_tallies_gets_them_on_its_first_resolution(
    fixture: Path, tmp_path: Path
) -> None:
    assert not tallies_path(fixture).exists()
    directory = play_to_the_end(tmp_path, fixture)
    assert tallies.stored_tallies(directory) is not None
    assert json.loads(tallies_path(directory).read_text())["resolution"] == (
        history.history_count(directory) - 1
    )
    processor.audit_game(directory)  # (the audit compares them with the history)


@pytest.mark.parametrize("name", ["format5-game", "format6-game", "format7-game"])
def test_old_game_fixtures_resolve_and_keep_tallies(name: str, tmp_path: Path) -> None:
    directory = Path(shutil.copytree(FIXTURES / name, tmp_path / name))
    assert not tallies_path(directory).exists()
    if read_game(directory).state.phase.value == "over":
        pytest.skip("the game is over")
    write_skeletons(directory)
    processor.resolve_game(directory)
    assert (
        tallies.kept_tallies(
            directory, [p.name for p in read_game(directory).state.players], 10**6
        ).to_dict()
        == counted(directory).to_dict()
    )
    processor.audit_game(directory)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ([3, 2, [1, True, 1], [1, 1, 1]], "True is not a whole number"),
        ([3, 2, [1, 1, 1], [1, "4", 1]], "'4' is not a whole number"),
        ([3, 2, [1, 1, 1], [1, 2.0, 1]], "2.0 is not a whole number"),
        ([3, -2, [1, 1, 1], [1, 1, 1]], "-2 is below 0"),
        ([3, 2, [1, -1, 1], [1, 1, 1]], "-1 is below 0"),
        ([3, 2, [1, 1], [1, 1, 1]], "does not count every player"),
        ([3, 2, [1, 1, 1]], "not enough values to unpack"),
        ([None, 2, [1, 1, 1], [1, 1, 1]], "None is not a whole number"),
    ],
)
def test_a_timeline_entry_that_is_not_numbers_is_refused_naming_it(entry: list, said: str) -> None:
    """The timeline's numbers are checked all at once (`_timeline`), each kind of wrong value
    still refused and named; armies may be below 0 in no entry pbem writes, but they are whole."""
    tallies = Tallies(("a", "b", "c"))
    tallies.fold(0, 0, ())
    data = tallies.to_dict()
    data["timeline"] = [[0, 0, [0, 0, 0], [0, 0, 0]], entry]
    with pytest.raises(ValueError, match=said):
        Tallies.from_dict(data)
    data["timeline"] = [[0, 0, [0, 0, 0], [0, 0, 0]], [3, 2, [1, 0, 5], [1, -3, 9]]]
    assert Tallies.from_dict(data).timeline[1] == (3, 2, (1, 0, 5), (1, -3, 9))
