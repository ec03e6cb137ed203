"""Recovery and audit: what an interrupted or tampered game directory must not get away with."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from conftest import new_game, snapshot, write_skeletons

from pbem.errors import AuditError, GameFileError, PbemError
from pbem.game import processor
from pbem.records import history, store
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game


class Crash(Exception):
    pass


def _play(directory: Path, turns: int) -> None:
    for _ in range(turns):
        write_skeletons(directory)
        processor.resolve_game(directory)


def _history(directory: Path, r: int) -> dict[str, Any]:
    return store._load_toml(history.history_path(directory, r))


def _rewrite_history(directory: Path, r: int, data: dict[str, Any]) -> None:
    history.history_path(directory, r).write_text(tomli_w.dumps(data, multiline_strings=True))


def _interrupted(directory: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Resolve the pending turn but stop right after its history file is written."""
    write_skeletons(directory)
    original = processor.write_history

    def crash_after(*args: Any, **kwargs: Any) -> None:
        original(*args, **kwargs)
        raise Crash

    monkeypatch.setattr(processor, "write_history", crash_after)
    with pytest.raises(Crash):
        processor.resolve_game(directory)
    monkeypatch.setattr(processor, "write_history", original)
    return read_game(directory).state.resolution


@pytest.fixture(scope="module")
def played_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = new_game(tmp_path_factory.mktemp("played") / "game")
    _play(directory, 3)
    return directory


@pytest.fixture
def played(played_once: Path, tmp_path: Path) -> Path:
    """A game four resolutions on (setup, setup turn and two play turns), with battles."""
    return Path(shutil.copytree(played_once, tmp_path / "game"))


def test_a_history_two_files_ahead_of_the_game_file_is_refused(
    played: Path, tmp_path: Path
) -> None:
    further = Path(shutil.copytree(played, tmp_path / "further"))
    _play(further, 2)
    r = read_game(played).state.resolution
    for n in (r, r + 1):
        shutil.copy(history.history_path(further, n), history.history_path(played, n))
    before = snapshot(played)
    write_skeletons(played)
    with pytest.raises(GameFileError) as err:
        processor.resolve_game(played)
    assert str(err.value) == (
        f"the history goes on to history/{r + 1:04d}.toml, beyond game.toml's resolution {r}: "
        "restore game.toml from a backup"
    )
    for p in (played / "orders").glob("*.toml"):
        p.unlink()
    assert snapshot(played) == before


def test_a_history_one_file_ahead_is_completed_not_resolved_again(
    played: Path, tmp_path: Path
) -> None:
    further = Path(shutil.copytree(played, tmp_path / "further"))
    _play(further, 1)
    r = read_game(played).state.resolution
    shutil.copy(history.history_path(further, r), history.history_path(played, r))
    outcome = processor.resolve_game(played)  # no order file is needed: they are in the history
    assert outcome.recovered and outcome.resolution == r
    assert (played / "game.toml").read_bytes() == (further / "game.toml").read_bytes()


def test_a_history_with_a_gap_is_refused(played: Path) -> None:
    history.history_path(played, 2).unlink()
    with pytest.raises(GameFileError, match="history/0002.toml is missing, but game.toml is at"):
        processor.resolve_game(played)


def test_a_tampered_state_digest_of_an_interrupted_resolution_is_not_trusted(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _interrupted(played, monkeypatch)
    data = _history(played, r)
    data["state"] = "0" * 64
    _rewrite_history(played, r, data)
    before = snapshot(played)
    with pytest.raises(GameFileError, match=f"history/{r:04d}.toml does not match a replay"):
        processor.resolve_game(played)
    assert snapshot(played) == before
    assert read_game(played).state.resolution == r


def test_a_tampered_die_of_an_interrupted_resolution_is_not_trusted(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _interrupted(played, monkeypatch)
    data = _history(played, r)
    roll = next(e for e in data["events"] if e["type"] == "rolled")
    roll["attacker"][0] = roll["attacker"][0] % 6 + 1
    _rewrite_history(played, r, data)
    before = snapshot(played)
    with pytest.raises(GameFileError, match="does not match a replay"):
        processor.resolve_game(played)
    assert snapshot(played) == before


def test_an_interrupted_resolution_is_completed_with_its_orders_archived(
    played: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    clean = Path(shutil.copytree(played, tmp_path / "clean"))
    _play(clean, 1)
    r = _interrupted(played, monkeypatch)
    outcome = processor.resolve_game(played)
    assert (outcome.recovered, outcome.resolution) == (True, r)
    assert outcome.reports and outcome.reports[0].parent == report_dir(played, r)
    assert snapshot(played) == snapshot(clean)
    assert not list((played / "orders").glob("*.toml"))


def test_an_interrupted_resolution_with_another_games_key_is_not_completed(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _interrupted(played, monkeypatch)
    data = _history(played, r)
    data["key"] = "0" * len(data["key"])
    _rewrite_history(played, r, data)
    before = snapshot(played)
    with pytest.raises(GameFileError) as err:
        processor.resolve_game(played)
    assert str(err.value) == (
        f"history/{r:04d}.toml belongs to another game: its key is not this game's key for "
        f"resolution {r}; move it away and run the command again"
    )
    assert snapshot(played) == before


# --- audit -------------------------------------------------------------------------------------


def _battle_resolution(directory: Path) -> int:
    for r in range(2, history.history_count(directory)):
        if any(e["type"] == "rolled" for e in _history(directory, r)["events"]):
            return r
    raise AssertionError("no battle in the game")


def test_audit_catches_a_dropped_event(played: Path) -> None:
    r = _battle_resolution(played)
    for where in (0, -1):
        data = _history(played, r)
        dropped = data["events"].pop(where)
        _rewrite_history(played, r, data)
        with pytest.raises(AuditError, match=f"resolution {r}, ") as err:
            processor.audit_game(played)
        assert str(r) in str(err.value)
        data["events"].insert(len(data["events"]) + 1 if where == -1 else 0, dropped)
        _rewrite_history(played, r, data)
    processor.audit_game(played)


def test_audit_says_how_many_events_differ_when_the_last_is_dropped(played: Path) -> None:
    r = _battle_resolution(played)
    data = _history(played, r)
    count = len(data["events"])
    data["events"].pop()
    _rewrite_history(played, r, data)
    with pytest.raises(AuditError) as err:
        processor.audit_game(played)
    record = read_history(played, r)
    assert str(err.value) == (
        f"turn {record.turn}, {record.players[0]}'s turn (resolution {r}, history/{r:04d}.toml): "
        f"{count - 1} events recorded but the replay gives {count}"
    )


def test_audit_catches_an_extra_event(played: Path) -> None:
    r = _battle_resolution(played)
    data = _history(played, r)
    data["events"].append(data["events"][-1])
    _rewrite_history(played, r, data)
    with pytest.raises(AuditError, match="events recorded but the replay gives"):
        processor.audit_game(played)


def test_audit_names_the_changed_event(played: Path) -> None:
    r = _battle_resolution(played)
    data = _history(played, r)
    i = next(i for i, e in enumerate(data["events"]) if e["type"] == "rolled")
    data["events"][i]["defender"] = [7] * len(data["events"][i]["defender"])
    _rewrite_history(played, r, data)
    event = data["events"][i]
    sevens = " ".join(["7"] * len(event["defender"]))
    with pytest.raises(
        AuditError,
        match=rf"turn \d+, \w+'s turn \(resolution {r}, history/{r:04d}.toml\): "
        rf"{event['player']}'s attack on {event['target']} from {event['source']}, roll 1: "
        rf"recorded [1-6 ]+ against {sevens}, the dice give [1-6 ]+ against [1-6 ]+$",
    ):
        processor.audit_game(played)


def test_audit_catches_a_changed_state_digest(played: Path) -> None:
    data = _history(played, 2)
    data["state"] = "1" * 64
    _rewrite_history(played, 2, data)
    with pytest.raises(AuditError, match="resolution 2, .*the state after it differs"):
        processor.audit_game(played)


def test_audit_catches_orders_that_no_longer_read(played: Path) -> None:
    data = _history(played, 2)
    data["orders"][0]["text"] = data["orders"][0]["text"].replace("[[place]]", "[[place]", 1)
    _rewrite_history(played, 2, data)
    with pytest.raises(AuditError, match="resolution 2, .*does not pass the checks resolve makes"):
        processor.audit_game(played)


def _retold(directory: Path, r: int, pattern: str, replacement: str) -> dict[str, Any]:
    """History file `r` with its first order file's text changed by one regex substitution."""
    data = _history(directory, r)
    text = data["orders"][0]["text"]
    changed = re.sub(pattern, replacement, text, count=1, flags=re.MULTILINE)
    assert changed != text
    data["orders"][0]["text"] = changed
    _rewrite_history(directory, r, data)
    return data


def test_audit_checks_the_recorded_orders_were_for_their_turn(played: Path) -> None:
    data = _retold(played, 2, r"^turn = (\d+)", "turn = 7")
    turn = data["turn"]
    with pytest.raises(AuditError) as err:
        processor.audit_game(played)
    assert str(err.value).startswith(
        f"turn {turn}, {data['players'][0]}'s turn (resolution 2, history/0002.toml): an order "
        "file it used does not pass the checks resolve makes: "
    )
    assert f"these orders are for turn 7, a later turn; the pending turn is {turn}" in str(
        err.value
    )


def test_audit_checks_the_recorded_orders_game_and_secret(played: Path) -> None:
    data = _retold(played, 3, r'^secret = "(\w+)"', 'secret = "guessed"')
    with pytest.raises(
        AuditError, match=rf"resolution 3, .*the secret is not {data['players'][0]}'s"
    ):
        processor.audit_game(played)
    _retold(played, 3, r'^secret = "guessed"', f'secret = "{_secret(played, data)}"')
    processor.audit_game(played)
    _retold(played, 3, r'^game = "([\w-]+)"', 'game = "another"')
    with pytest.raises(AuditError, match="resolution 3, .*these orders are for game 'another'"):
        processor.audit_game(played)


def _secret(directory: Path, data: dict[str, Any]) -> str:
    registration = read_game(directory).registration(data["players"][0])
    assert registration is not None
    return registration.secret


def test_audit_checks_the_recorded_orders_against_the_state_before_them(played: Path) -> None:
    """Orders valid for no state of the game: more armies placed than the player had."""
    _retold(played, 3, r"^armies = \"rest\"", "armies = 99")
    with pytest.raises(AuditError, match="resolution 3, .*does not pass the checks resolve makes"):
        processor.audit_game(played)


def test_audit_checks_the_player_an_order_file_is_recorded_for(played: Path) -> None:
    data = _history(played, 3)
    data["orders"][0]["player"] = "nobody"
    _rewrite_history(played, 3, data)
    with pytest.raises(
        AuditError, match=r"resolution 3, .*\(.*\) is recorded as nobody's but holds \w+'s orders"
    ):
        processor.audit_game(played)


def test_audit_checks_the_setup_and_the_keys(played: Path) -> None:
    setup = _history(played, 0)
    del setup["setup"]
    _rewrite_history(played, 0, setup)
    with pytest.raises(AuditError, match=r"history/0000.toml has no \[setup\] section"):
        processor.audit_game(played)
    for r in range(history.history_count(played)):
        history.history_path(played, r).unlink()
    with pytest.raises(AuditError, match="the history is empty"):
        processor.audit_game(played)


def test_audit_catches_a_key_of_another_resolution(played: Path) -> None:
    data = _history(played, 2)
    data["key"] = _history(played, 3)["key"]
    _rewrite_history(played, 2, data)
    with pytest.raises(AuditError, match="resolution 2, .*not the seed's key for resolution 2"):
        processor.audit_game(played)


def test_audit_counts_resolutions_and_rolls(played: Path) -> None:
    summary = processor.audit_game(played)
    rolls = sum(1 for r in range(4) for e in _history(played, r)["events"] if e["type"] == "rolled")
    assert (summary.resolutions, summary.rolls) == (4, rolls)
    assert rolls > 0
    assert summary.final_digest == _history(played, 3)["state"]


def test_audit_catches_a_game_file_ahead_of_its_history(played: Path) -> None:
    history.history_path(played, 3).unlink()
    with pytest.raises(AuditError, match="game.toml differs from the state the history replays"):
        processor.audit_game(played)


# --- the dice view -----------------------------------------------------------------------------


def test_dice_of_one_resolution(played: Path) -> None:
    r = _battle_resolution(played)
    one = processor.dice_history(played, r)
    assert [e["resolution"] for e in one] == [r]
    assert one[0]["rolls"] and one[0]["player"] is not None
    assert "first_player" not in one[0]
    assert processor.dice_history(played, 0)[0]["player"] is None  # every player's setup
    for wrong in (-1, 4):
        with pytest.raises(
            PbemError, match=f"there is no resolution {wrong}: this game has 0 to 3"
        ):
            processor.dice_history(played, wrong)


def test_audit_checks_the_setup_against_its_replay(played: Path) -> None:
    setup = _history(played, 0)
    setup["state"] = "0" * 64
    _rewrite_history(played, 0, setup)
    with pytest.raises(
        AuditError, match=r"the deal \(resolution 0, history/0000.toml\): the state after it"
    ):
        processor.audit_game(played)


def test_audit_checks_the_deadline_of_the_game_file(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from pbem.cli import main

    d = tmp_path / "g"
    args = ["new", str(d), "--players", "alice,bob,carol", "--turn-time", "48h"]
    result = CliRunner().invoke(main, [*args, "--now", "2026-12-01T00:00Z"])
    assert result.exit_code == 0, result.output
    assert processor.audit_game(d).resolutions == 1
    path = d / "game.toml"
    text = path.read_text()
    assert "2026-12-03T00:00:00" in text
    path.write_text(text.replace("2026-12-03T00:00:00", "2026-12-04T00:00:00"))
    with pytest.raises(AuditError, match="game.toml's deadline differs from the one the history"):
        processor.audit_game(d)


def test_a_refusal_names_six_differences_and_counts_the_rest() -> None:
    from pbem.records.agreement import describe

    found = [f"difference {n}" for n in range(1, 9)]
    assert describe(found[:6]) == "; ".join(found[:6])
    assert describe(found[:7]) == "; ".join(found[:6]) + "; and 1 more difference"
    assert describe(found) == "; ".join(found[:6]) + "; and 2 more differences"
    assert describe([]) == "no field differs (the digests do)"


def test_a_territory_edited_by_hand_is_named_with_its_owner_and_armies(playing_dir: Path) -> None:
    from dataclasses import replace

    from pbem.core.state import Holding
    from pbem.records.agreement import differences

    state = read_game(playing_dir).state
    first, second = list(state.territories)[:2]
    a, b = state.territories[first], state.territories[second]
    other = next(p.name for p in state.players if p.name != a.owner)
    held = dict(state.territories)
    held[first] = Holding(other, a.armies)
    held[second] = Holding(b.owner, b.armies + 1)
    edited = replace(state, territories=held)
    army = "army" if a.armies == 1 else "armies"
    assert differences(edited, state) == [
        f"{first}: game file {other} with {a.armies} {army}, history {a.owner} with {a.armies} "
        f"{army}",
        f"{second}: game file {b.armies + 1} armies, history {b.armies}",
    ]
    held[second] = Holding(b.owner, 1)
    assert differences(replace(state, territories=held), replace(state, territories=held)) == []
    one = dict(state.territories)
    one[second] = Holding(b.owner, 1)
    assert differences(replace(state, territories=one), replace(state, territories=held))[0] == (
        f"{first}: game file {a.owner} with {a.armies} {army}, history {other} with {a.armies} "
        f"{army}"
    )
    many = dict(state.territories)
    many[second] = Holding(b.owner, b.armies + 5)
    assert differences(replace(state, territories=one), replace(state, territories=many)) == [
        f"{second}: game file 1 army, history {b.armies + 5}"
    ]


def test_a_changed_event_is_named_by_its_number_or_its_first_player_roll() -> None:
    from pbem.core.events import RolledForFirst, SeatsDecided
    from pbem.game.audit import event_difference

    recorded = [
        RolledForFirst("alice", 3),
        RolledForFirst("bob", 5),
        SeatsDecided(("bob", "alice")),
    ]
    assert event_difference(recorded, 1, RolledForFirst("bob", 2)) == (
        "bob's roll for first player: recorded 5, the dice give 2"
    )
    told = event_difference(recorded, 2, SeatsDecided(("alice", "bob")))
    assert told.startswith("event 3: recorded '") and "but the replay gives '" in told
