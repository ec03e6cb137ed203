"""A long self-played game with six players and long names: its text reports fit 80-column mail,
its HTML stays well-formed, its luck figures can be recomputed from `pbem dice --json`, and its
decision aids' odds are `pbem odds`'s."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import make_state
from long_game import LONG_NAMES, play_long_game
from test_report import parse_html

from pbem.cli import main
from pbem.core import odds, rules
from pbem.core.luck import expected_losses
from pbem.core.state import Options, SetupMode
from pbem.present.aids import decision_aids
from pbem.records.history import report_dir
from pbem.records.opening import read_game

WIDTH = 78


@pytest.fixture(scope="module")
def long_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return play_long_game(tmp_path_factory.mktemp("long") / "game")


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def text_lines(path: Path) -> list[str]:
    """A text report's lines, less the order file between its cut lines (which stays TOML)."""
    out, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-- 8<"):
            inside = not inside
        elif not inside:
            out.append(line)
    return out


def test_the_long_game_is_played_to_its_end(long_game: Path) -> None:
    game = read_game(long_game)
    assert game.state.phase.value == "over"
    assert [p.name for p in sorted(game.state.players, key=lambda p: LONG_NAMES.index(p.name))]
    assert max(len(n) for n in LONG_NAMES) >= 30


def test_every_line_of_every_text_report_fits_78_columns(long_game: Path) -> None:
    reports = sorted((long_game / "reports").glob("*/*.txt"))
    assert len(reports) > 100
    too_wide = [
        f"{path.parent.name}/{path.name}: {len(line)}: {line}"
        for path in reports
        for line in text_lines(path)
        if len(line) > WIDTH
    ]
    assert too_wide == []


def test_the_html_reports_of_the_long_game_are_well_formed(long_game: Path) -> None:
    last = max((long_game / "reports").iterdir())
    for path in sorted(last.glob("*.html")):
        html = path.read_text(encoding="utf-8")
        parse_html(html)
        assert "The story of the game" in html and "<polyline" in html
        for outside in ("http", "src=", "<link", "<script", "@import", "url("):
            assert outside not in html, f"{path.name} reaches outside: {outside}"


def test_the_moderators_text_overview_has_the_board(long_game: Path) -> None:
    text = (report_dir(long_game, 10) / "_moderator.txt").read_text(encoding="utf-8")
    assert "\nThe board\n---------\n" in text
    assert re.search(r"^North America \(\+5\)", text, re.M)
    assert "Alaska" in text and "The story of the game" in text


def test_luck_recomputed_from_the_dice_and_the_exact_roll_distributions(long_game: Path) -> None:
    history = json.loads(run("dice", str(long_game), "--json"))
    expected: dict[tuple[str, str], float] = defaultdict(float)
    lost: dict[tuple[str, str], int] = defaultdict(int)
    for entry in history:
        for roll in entry["rolls"]:
            a, d = roll["attacker"], roll["defender"]
            lost_a, lost_d = rules.battle(a, d)
            mean_a, mean_d, _ = expected_losses(len(a), len(d))
            expected[roll["by"], "attack"] += float(mean_a)
            lost[roll["by"], "attack"] += lost_a
            expected[roll["against"], "defence"] += float(mean_d)
            lost[roll["against"], "defence"] += lost_d
    stats = json.loads(run("stats", str(long_game), "--json"))
    for name in LONG_NAMES:
        for side in ("attack", "defence"):
            luck = stats["luck"][name][side]
            assert math.isclose(
                luck["luck"], expected[name, side] - lost[name, side], abs_tol=0.001
            )
            assert luck["losses"] == lost[name, side]


def test_pbem_stats_tells_the_story_from_the_directory_and_from_a_view_file(
    long_game: Path,
) -> None:
    game = read_game(long_game)
    told = run("stats", str(long_game))
    assert f"{game.state.winner} won in turn" in told
    for heading in ("Who fell", "The biggest battles", "Cards traded", "Luck:"):
        assert heading in told
    assert "was eliminated by" in told and "attacked" in told
    assert all(len(line) <= WIDTH for line in told.splitlines())
    last = report_dir(long_game, game.state.resolution - 1)
    view = last / f"{LONG_NAMES[5]}.view.json"
    from_view = run("stats", "--view", str(view))
    assert from_view.splitlines()[0] == told.splitlines()[0]
    assert "Who fell" in from_view


def test_the_last_report_tells_the_story_and_every_report_the_players_luck(
    long_game: Path,
) -> None:
    game = read_game(long_game)
    last = report_dir(long_game, game.state.resolution - 1)
    text = (last / f"{LONG_NAMES[0]}.txt").read_text(encoding="utf-8")
    assert "The story of the game" in text and "was eliminated by" in text
    middle = (report_dir(long_game, 5) / f"{LONG_NAMES[0]}.txt").read_text(encoding="utf-8")
    assert re.search(r"Your dice so far: [+-]?\d+\.\d armies (above|below) expectation", middle)


def test_the_decision_aids_odds_are_pbem_odds(long_game: Path) -> None:
    game = read_game(long_game)
    seen = 0
    for r in range(2, 30, 3):
        text = (report_dir(long_game, r) / "_moderator.txt").read_text(encoding="utf-8")
        awaited = re.search(r"^Turn \d+: awaiting orders from (.+)\.$", text, re.M)
        assert awaited is not None
        player_report = report_dir(long_game, r) / f"{awaited.group(1)}.txt"
        told = " ".join(text_lines(player_report))
        pattern = r"\((\d+)\) -> [^(]+ \([^,]+, (\d+)\): (\S+) now, (\S+) with (\d+)"
        for attackers, defenders, now, later, more in re.findall(pattern, told):
            for a, chance in ((attackers, now), (more, later)):
                if chance == "cannot":
                    continue
                odds = run("odds", a, defenders)
                assert f"takes it {chance} of the time" in odds
                seen += 1
    assert seen > 5
    assert game.state.phase.value == "over"


def test_the_decision_aids_tell_continents_borders_and_attacks() -> None:
    state = make_state(
        {"Alaska": ("alice", 5), "Northwest Territory": ("alice", 3)},
        default=("bob", 1),
        players=["alice", "bob"],
    )
    aids = decision_aids(state, "alice")
    north_america = next(c for c in aids["continents"] if c.name == "North America")
    assert (north_america.held, north_america.size, north_america.others) == (2, 9, "bob 7")
    alaska = next(b for b in aids["borders"] if b.territory == "Alaska")
    assert alaska.threat == 2 and "Kamchatka (bob, 1)" in alaska.enemies
    attack = next(a for a in aids["attacks"] if (a.source, a.target) == ("Alaska", "Kamchatka"))
    assert attack.now == odds.percent(odds.forecast(5, 1).win)
    assert aids["reinforcements"] == 3 and attack.reinforced_armies == 8
    assert attack.reinforced == odds.percent(odds.forecast(8, 1).win)


def test_without_its_style_sheet_a_report_still_reads(long_game: Path) -> None:
    """Some webmail strips <style>: the dice stay apart, the map keeps its size, the order
    file its lines."""
    folder = report_dir(long_game, 5)
    asked = next(p.stem for p in folder.glob("*.orders.toml"))  # the report with an order file
    html = (folder / f"{asked.removesuffix('.orders')}.html").read_text(encoding="utf-8")
    bare = re.sub(r"<style>.*?</style>", "", html, flags=re.S)
    assert "<style>" not in bare
    dice = re.findall(r'<td class="dice">(.*?)</td>', bare)
    assert dice
    for cell in dice:
        text = re.sub(r"<[^>]+>", "", cell).strip()
        assert re.fullmatch(r"\d( \d)*", text), text
    assert re.search(r'<svg viewBox="[^"]+" width="100%"', bare)
    assert "<pre>" in bare


def test_a_drafted_mission_game_with_long_names_fits_78_columns(tmp_path: Path) -> None:
    options = Options(setup=SetupMode.DRAFT, missions=True)
    directory = play_long_game(tmp_path / "missions", 5, options)
    assert read_game(directory).state.phase.value == "over"
    too_wide = [
        f"{path.parent.name}/{path.name}: {line}"
        for path in sorted((directory / "reports").glob("*/*.txt"))
        for line in text_lines(path)
        if len(line) > WIDTH
    ]
    assert too_wide == []
