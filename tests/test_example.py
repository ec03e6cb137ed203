"""The example game in games/: it audits, its pending orders are valid, and resolving a copy
(the README's first command) writes every player's reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import tomli
from click.testing import CliRunner
from conftest import snapshot

from pbem.cli import main
from pbem.game import processor
from pbem.records.history import report_dir
from pbem.records.opening import read_game
from pbem.records.store import FORMAT

EXAMPLE = Path(__file__).resolve().parent.parent / "games" / "example"


def test_example_game_audits() -> None:
    summary = processor.audit_game(EXAMPLE)
    assert summary.resolutions >= 10


def test_example_is_in_todays_format_as_pbem_new_writes_it() -> None:
    """Made again by tests/make_example.py when the format moves on; the example as an older
    pbem kept it is tests/fixtures/format2-example (test_old_games.py)."""
    assert tomli.loads((EXAMPLE / "game.toml").read_text())["format"] == FORMAT
    resolutions = read_game(EXAMPLE).state.resolution
    folders = sorted(p.name for p in (EXAMPLE / "reports").iterdir())
    assert folders == [report_dir(EXAMPLE, r).name for r in range(resolutions)]
    assert folders[:2] == ["0000-deal", "0001-setup-turn"]
    assert folders[-1] == f"{resolutions - 1:04d}-turn-{resolutions - 2}"


def test_example_is_three_players_mid_game_with_valid_pending_orders() -> None:
    game = read_game(EXAMPLE)
    assert len(game.state.players) == 3 and all(p.alive for p in game.state.players)
    assert game.state.phase.value == "play"
    files = sorted((EXAMPLE / "orders").glob("*.toml"))
    assert [f.stem for f in files] == list(game.state.awaiting())
    _, results = processor.check_files(EXAMPLE, files)
    assert all(s.accepted for s, _ in results)


def test_resolving_a_copy_of_the_example_writes_reports(tmp_path: Path) -> None:
    copy = tmp_path / "example"
    shutil.copytree(EXAMPLE, copy)
    before = snapshot(EXAMPLE)
    result = CliRunner().invoke(main, ["resolve", str(copy)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    r = read_game(copy).state.resolution - 1
    folder = report_dir(copy, r)
    awaited = read_game(copy).state.awaiting()
    for player in ("alice", "bob", "carol"):
        for suffix in (".txt", ".html", ".view.json"):
            assert (folder / f"{player}{suffix}").exists()
        # Only the player who is next is asked for orders.
        assert (folder / f"{player}.orders.toml").exists() == (player in awaited)
    assert "audit passed" in CliRunner().invoke(main, ["audit", str(copy)]).output
    assert snapshot(EXAMPLE) == before
