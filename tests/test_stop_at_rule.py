"""stop_at is a promise in games made from game file format 4 on; older games keep it as a
threshold, recorded by the migration, and replay as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner
from conftest import new_game

from pbem.cli import main
from pbem.core.state import StopAt, state_digest
from pbem.errors import GameFileError
from pbem.records.opening import read_game
from pbem.records.store import FORMAT, game_document, upgrade_game_document

# The example game as pbem kept it in game file format 2, before stop_at was a promise.
OLD_EXAMPLE = Path(__file__).resolve().parent / "fixtures" / "format2-example"


def test_a_new_game_records_stop_at_as_a_promise(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    assert read_game(directory).state.options.stop_at is StopAt.PROMISE
    text = (directory / "game.toml").read_text()
    assert text.startswith(f"format = {FORMAT}\n") and 'stop_at = "promise"' in text


def test_a_format_3_game_file_migrates_to_the_threshold(tmp_path: Path) -> None:
    doc = game_document(read_game(new_game(tmp_path / "game")))
    del doc["options"]["stop_at"]
    doc["format"] = 3
    upgraded = upgrade_game_document(doc, tmp_path / "game.toml")
    assert upgraded["format"] == FORMAT == 8
    assert upgraded["options"]["stop_at"] == "threshold"


def test_the_example_game_written_before_the_rule_keeps_it_and_audits(tmp_path: Path) -> None:
    copy = tmp_path / "example"
    shutil.copytree(OLD_EXAMPLE, copy, ignore=shutil.ignore_patterns("continuation"))
    game = read_game(copy)
    assert game.state.options.stop_at is StopAt.THRESHOLD
    before = state_digest(game.state)
    result = CliRunner().invoke(main, ["resolve", str(copy)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert 'stop_at = "threshold"' in (copy / "game.toml").read_text()
    assert "audit passed" in CliRunner().invoke(main, ["audit", str(copy)]).output
    assert before == state_digest(game.state)


def test_a_game_file_must_say_what_stop_at_means(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    doc = game_document(read_game(directory))
    del doc["options"]["stop_at"]
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match='write stop_at = "promise"'):
        read_game(directory)
    doc["options"]["stop_at"] = "sometimes"
    (directory / "game.toml").write_text(tomli_w.dumps(doc))
    with pytest.raises(GameFileError, match="'sometimes' is not a rule"):
        read_game(directory)
