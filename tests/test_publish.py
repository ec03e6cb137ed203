"""A finished game's public record (docs/publish.md): anyone can audit it alone, it holds no
secret, no address and no seed, a die or a card changed in it is named by the audit, and a
running game is never published."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner
from conftest import write_bot_orders
from test_old_games import play_to_the_end

from pbem.cli import main
from pbem.core.state import FogLevel, Options, Phase
from pbem.errors import AuditError, GameFileError, PbemError
from pbem.game import processor, seats, undo
from pbem.game.audit import audit_game
from pbem.game.record import publish_record
from pbem.records import seat_changes, undone
from pbem.records.history import history_count, history_path, read_history
from pbem.records.opening import read_game
from pbem.records.published import PUBLISHED
from pbem.records.store import WITHHELD, _load_toml

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=timezone.utc)
PLAYERS = ["ann=ann@club.example", "ben=ben@club.example", "cy=cy@club.example"]


def play(directory: Path, options: Options, seed: int, *, plot: bool = False) -> Path:
    """A three-player game of the test bots, resolved to its end. With `plot`: a substitute
    takes a seat on the way, and a turn is undone and played again with other orders."""
    processor.new_game(
        directory,
        processor.parse_player_list(PLAYERS),
        options,
        seed=bytes([seed]) * 32,
        name=directory.name,
    )
    rng = random.Random(seed)
    for _ in range(400):
        game = read_game(directory)
        if game.state.phase is Phase.OVER:
            return directory
        r = game.state.resolution
        if plot and r == 6:
            seats.substitute(directory, game.state.players[1].name, "dee", "dee@club.example", NOW)
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
        if plot and r == 9:
            undo.undo_last(directory, NOW, "the orders came late")
            write_bot_orders(directory, random.Random(99))
            processor.resolve_game(directory)
    raise AssertionError("the game did not end")


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play(tmp_path_factory.mktemp("games") / "plotted", Options(missions=True), 7, plot=True)


@pytest.fixture(scope="module")
def record(finished: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("public") / "record"
    publish_record(finished, out, NOW)
    alone = tmp_path_factory.mktemp("elsewhere") / "plotted-record"
    shutil.copytree(out, alone)
    return alone


def secrets_of(game_dir: Path) -> set[str]:
    """Every secret and address the game ever had, the substitutes' and the seed's too."""
    game = read_game(game_dir)
    found = {game.seed.hex()}
    for reg in game.registrations:
        found.update({reg.secret, reg.email})
    for change in seat_changes.seat_changes(game_dir):
        found.update({change.previous_secret, change.email, change.previous_email})
    return {s for s in found if s}


def tampered(record: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "tampered"
    shutil.copytree(record, copy)
    return copy


def test_the_record_copied_alone_passes_the_audit(record: Path, finished: Path) -> None:
    result = CliRunner().invoke(main, ["audit", str(record)])
    assert result.exit_code == 0, result.output
    assert "audit of the public record of plotted passed" in result.output
    assert "record.toml and view.json match" in result.output
    assert f"the commitment {read_game(finished).commitment}" in result.output
    assert audit_game(record).final_digest == audit_game(finished).final_digest
    assert audit_game(record).rolls == audit_game(finished).rolls


def test_the_plotted_game_had_a_substitute_an_undo_missions_and_other_orders_played_again(
    finished: Path,
) -> None:
    assert seat_changes.seat_changes(finished)
    assert undone.undo_records(finished)
    assert read_game(finished).state.options.missions
    again = [
        e
        for r in range(history_count(finished))
        for e in read_history(finished, r).events
        if e.kind == "dice_keyed" and getattr(e, "again", None)
    ]
    assert again, "the undone turn was played again with other orders"


def test_the_record_holds_no_secret_address_or_seed(record: Path, finished: Path) -> None:
    hidden = secrets_of(finished)
    assert len(hidden) >= 9  # the seed, 3 secrets, 3 addresses, the substitute's two
    files = [p for p in record.rglob("*") if p.is_file()]
    assert len(files) > history_count(finished)
    for path in files:
        text = path.read_text("utf-8")
        for secret in hidden:
            assert secret not in text, f"{path.relative_to(record)} holds {secret!r}"
        assert "@" not in text, path.relative_to(record)
    orders = read_history(record, 5).orders
    assert orders and all(f'secret = "{WITHHELD}"' in o.text for o in orders)


def test_the_records_view_passes_verify_with_pbem_and_the_kit(record: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["verify", "--report", str(record / "view.json")])
    assert result.exit_code == 0, result.output
    assert "every die matches" in result.output
    assert CliRunner().invoke(main, ["kit", str(tmp_path)]).exit_code == 0
    kit = subprocess.run(
        [sys.executable, str(tmp_path / "pbem-player.pyz"), "verify", "--report"]
        + [str(record / "view.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert kit.returncode == 0, kit.stderr
    assert "every die matches" in kit.stdout


def first_roll(record: Path) -> tuple[int, dict[str, object], Path]:
    for r in range(1, history_count(record)):
        path = history_path(record, r)
        data = _load_toml(path)
        for i, event in enumerate(data["events"]):
            if event["type"] == "rolled":
                return i, data, path
    raise AssertionError("no roll")


def test_a_die_changed_in_the_record_is_named_by_the_audit(record: Path, tmp_path: Path) -> None:
    copy = tampered(record, tmp_path)
    i, data, path = first_roll(copy)
    path = copy / path.relative_to(copy)
    event = data["events"][i]  # type: ignore[index]
    event["attacker"][0] = event["attacker"][0] % 6 + 1
    path.write_text(tomli_w.dumps(data, multiline_strings=True), "utf-8")
    with pytest.raises(AuditError) as err:
        audit_game(copy)
    assert f"{event['player']}'s attack on {event['target']} from {event['source']}, roll 1" in str(
        err.value
    )
    assert "the dice give" in str(err.value)


def test_a_card_changed_in_the_record_is_named_by_the_audit(record: Path, tmp_path: Path) -> None:
    copy = tampered(record, tmp_path)
    for r in range(1, history_count(copy)):
        path = history_path(copy, r)
        data = _load_toml(path)
        drawn = [e for e in data["events"] if e["type"] == "drew_card"]
        if drawn:
            break
    else:
        raise AssertionError("no card drawn")
    real = drawn[0]["card"]
    drawn[0]["card"] = "Siam" if real != "Siam" else "Peru"
    path.write_text(tomli_w.dumps(data, multiline_strings=True), "utf-8")
    with pytest.raises(AuditError) as err:
        audit_game(copy)
    assert f"history/{r:04d}.toml" in str(err.value)
    assert "drew a card" in str(err.value) and real in str(err.value), str(err.value)


def test_a_key_or_card_key_changed_in_the_record_is_refused(record: Path, tmp_path: Path) -> None:
    copy = tampered(record, tmp_path)
    data = _load_toml(copy / "record.toml")
    real = data["record"]["hidden_key"]
    data["record"]["hidden_key"] = ("0" if real[0] != "0" else "1") + real[1:]
    (copy / "record.toml").write_text(tomli_w.dumps(data), "utf-8")
    with pytest.raises(GameFileError, match="card key is not the one the game committed to"):
        audit_game(copy)
    data["record"]["hidden_key"] = real
    last = data["record"]["last_key"]
    data["record"]["last_key"] = ("0" if last[0] != "0" else "1") + last[1:]
    (copy / "record.toml").write_text(tomli_w.dumps(data), "utf-8")
    with pytest.raises(AuditError, match="its key is not"):
        audit_game(copy)


def test_an_order_changed_in_the_record_fails_the_audit(record: Path, tmp_path: Path) -> None:
    copy = tampered(record, tmp_path)
    i, data, path = first_roll(copy)
    orders = data["orders"]  # type: ignore[index]
    text = orders[0]["text"]
    changed = re.sub(r"dice = \d", "dice = 1", text, count=1)
    if changed == text:
        changed = text.replace("[[attack]]", '[[attack]]\nstop_at = "never"', 1)
    orders[0]["text"] = changed
    path.write_text(tomli_w.dumps(data, multiline_strings=True), "utf-8")
    with pytest.raises(AuditError):
        audit_game(copy)


def test_a_running_game_is_never_published(tmp_path: Path) -> None:
    game_dir = tmp_path / "running"
    processor.new_game(
        game_dir, processor.parse_player_list(PLAYERS), Options(), seed=bytes(32), name="running"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["publish", str(game_dir), str(out)])
    assert result.exit_code == 1
    assert "still being played" in result.output and "foresee the dice" in result.output
    assert not out.exists()
    assert not (game_dir / PUBLISHED).exists()


def test_a_published_game_cannot_be_undone(record: Path, finished: Path) -> None:
    assert (finished / PUBLISHED).is_file()
    with pytest.raises(PbemError, match="public record was published"):
        undo.undo_last(finished, NOW, "a mistake")
    assert read_game(finished).state.phase is Phase.OVER


def test_commands_that_play_refuse_a_record(record: Path) -> None:
    for args in (["resolve", str(record)], ["show", str(record)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1
        assert "is the public record of a game, not a game" in result.output
        assert "Traceback" not in result.output


def test_publishing_again_replaces_the_record_keeps_other_files_and_refuses_a_strange_folder(
    finished: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site" / "record"
    publish_record(finished, out, NOW)
    (out / "README.txt").write_text("the moderator's note", "utf-8")
    (out / "history" / "9999.toml").write_text("not the game's", "utf-8")
    publish_record(finished, out, NOW)
    assert (out / "README.txt").read_text("utf-8") == "the moderator's note"  # theirs: kept
    assert not (out / "history" / "9999.toml").exists()  # in the record's own folder: gone
    assert audit_game(out).resolutions == history_count(finished)
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"\xff")
    with pytest.raises(PbemError, match="not the record of plotted"):
        publish_record(finished, other, NOW)
    assert [p.name for p in other.iterdir()] == ["cat.jpg"]
    with pytest.raises(PbemError, match="inside the game folder"):
        publish_record(finished, finished / "history" / "public", NOW)
    assert not (finished / "history" / "public").exists()


def test_the_same_game_gives_the_same_record_bytes(finished: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    publish_record(finished, one, NOW)
    publish_record(finished, two, NOW)
    for path in one.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (two / path.relative_to(one)).read_bytes()


def test_a_fog_game_and_an_old_game_publish_and_audit(tmp_path: Path) -> None:
    fog = play(tmp_path / "foggy", Options(fog=FogLevel.HEAVY), 3)
    publish_record(fog, tmp_path / "fog-record", NOW)
    assert audit_game(tmp_path / "fog-record").resolutions == history_count(fog)
    old = play_to_the_end(tmp_path)  # a format 1 game: dice from the key alone
    publish_record(old, tmp_path / "old-record", NOW)
    assert audit_game(tmp_path / "old-record").resolutions == history_count(old)


def test_a_changed_view_or_a_record_of_a_game_not_over_fails_the_audit(
    record: Path, tmp_path: Path
) -> None:
    copy = tampered(record, tmp_path)
    view = (copy / "view.json").read_text("utf-8")
    winner = read_game(copy, record=True).state.winner
    other = next(p.name for p in read_game(copy, record=True).state.players if p.name != winner)
    (copy / "view.json").write_text(view.replace(f'"winner": "{winner}"', f'"winner": "{other}"'))
    with pytest.raises(AuditError, match="view.json is not the view of the end"):
        audit_game(copy)
    (copy / "view.json").write_text(view, "utf-8")
    data = _load_toml(copy / "record.toml")
    data["state"]["phase"] = "play"
    (copy / "record.toml").write_text(tomli_w.dumps(data), "utf-8")
    with pytest.raises((AuditError, GameFileError)):
        audit_game(copy)


def test_the_record_agrees_with_the_players_reports_and_a_forged_one_does_not(
    record: Path, finished: Path, tmp_path: Path
) -> None:
    from pbem.records.history import report_dir

    views = sorted(report_dir(finished, 12).glob("*.view.json"))
    assert views
    commitment = read_game(finished).commitment
    args = ["audit", str(record), "--commitment", commitment]
    result = CliRunner().invoke(main, args + [a for v in views for a in ("--report", str(v))])
    assert result.exit_code == 0, result.output
    assert f"commitment OK: {commitment}" in result.output
    assert result.output.count("agrees with it: the commitment, the key") == len(views)
    assert "the board" in result.output
    # a record whose turn 11 was played with other digests (new dice, rewritten to agree with
    # themselves) passes no report of that turn
    copy = tampered(record, tmp_path)
    i, data, path = first_roll(copy)
    keyed = next(e for e in data["events"] if e["type"] == "dice_keyed")  # type: ignore[union-attr]
    keyed["digests"] = ["00" * 32] * len(keyed["digests"])
    path.write_text(tomli_w.dumps(data, multiline_strings=True), "utf-8")
    r = int(path.stem)
    for view in report_dir(finished, r).glob("*.view.json"):
        bad = CliRunner().invoke(main, ["audit", str(copy), "--report", str(view)])
        assert bad.exit_code == 1
    from pbem.game.record import check_against_report

    with pytest.raises(AuditError, match="order files' digests"):
        check_against_report(copy, next(report_dir(finished, r).glob("*.view.json")))
    wrong = CliRunner().invoke(main, ["audit", str(record), "--commitment", "ab" * 32])
    assert wrong.exit_code == 1 and "not the ones that report announced" in wrong.output


def test_a_record_holding_values_pbem_never_writes_fails_with_a_sentence(
    record: Path, tmp_path: Path
) -> None:
    copy = tampered(record, tmp_path)
    i, data, path = first_roll(copy)
    keyed = next(e for e in data["events"] if e["type"] == "dice_keyed")  # type: ignore[union-attr]
    keyed["digests"] = [1]
    path.write_text(tomli_w.dumps(data, multiline_strings=True), "utf-8")
    result = CliRunner().invoke(main, ["audit", str(copy)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "the record holds a value pbem never writes" in result.output


def test_the_first_publication_is_the_one_the_game_keeps(finished: Path, tmp_path: Path) -> None:
    first = (finished / PUBLISHED).read_text("utf-8")
    publish_record(finished, tmp_path / "again", datetime(2030, 1, 1, tzinfo=timezone.utc))
    assert (finished / PUBLISHED).read_text("utf-8") == first


def test_a_report_of_another_game_is_named_and_the_zip_is_the_same_for_everyone(
    record: Path, finished: Path, tmp_path: Path
) -> None:
    import json

    from pbem.game.record import check_against_report, record_files, record_zip
    from pbem.records.history import report_dir

    view = json.loads(next(report_dir(finished, 5).glob("*.view.json")).read_text("utf-8"))
    view["game"] = "another"
    (tmp_path / "other.view.json").write_text(json.dumps(view), "utf-8")
    with pytest.raises(AuditError, match="is a report of another game"):
        check_against_report(record, tmp_path / "other.view.json")
    data = record_zip(record_files(read_game(finished), NOW), "plotted-record")
    (tmp_path / "r.zip").write_bytes(data)
    with zipfile.ZipFile(tmp_path / "r.zip") as archive:
        infos = archive.infolist()
    assert infos and all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in infos)
    assert all(i.external_attr == 0o644 << 16 for i in infos)
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)


def test_a_report_whose_board_differs_from_the_record_is_named(
    record: Path, finished: Path, tmp_path: Path
) -> None:
    import json

    from pbem.game.record import check_against_report
    from pbem.records.history import report_dir

    view = json.loads(next(report_dir(finished, 6).glob("*.view.json")).read_text("utf-8"))
    first = next(iter(view["territories"]))
    view["territories"][first]["armies"] += 1
    (tmp_path / "board.view.json").write_text(json.dumps(view), "utf-8")
    with pytest.raises(AuditError, match="differs from this report in the board of resolution 6"):
        check_against_report(record, tmp_path / "board.view.json")
