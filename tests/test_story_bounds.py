"""A resolution's story, worked out once a side (`pbem.present.stats.Story`): each reader is told
what the whole story gives them (`stats_for`, then the timeline a view file carries) and shown
the charts of every point, however long the game, under fog or not."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import new_game

from pbem.core.state import FogLevel
from pbem.core.tallies import Tallies
from pbem.languages import i18n
from pbem.present import bounds, stats
from pbem.present.charts import charts
from pbem.records.opening import read_game

PLAYERS = "alice,bob,carol,dave"


def long_tallies(players: tuple[str, ...], length: int, seed: int) -> Tallies:
    """Tallies with a timeline `length` long: nobody holding land before the deal, a side out
    for a while (and back, as a team's land may be), and the rest at random."""
    rng = random.Random(seed)
    tallies = Tallies(players)
    out = rng.choice(players)
    for r in range(length):
        held = tuple(
            0 if r < 3 or (p == out and length // 3 < r < 2 * length // 3) else rng.randint(1, 20)
            for p in players
        )
        armies = tuple(h * rng.randint(1, 9) for h in held)
        tallies.timeline.append((r, max(0, r - 2), held, armies))
    tallies.resolution, tallies.turn = length - 1, max(0, length - 3)
    tallies.trades = [
        {"resolution": r, "turn": r, "player": rng.choice(players), "cards": ["A"], "armies": 4}
        for r in range(0, length, 7)
    ]
    return tallies


@pytest.mark.parametrize("fog", [FogLevel.NONE, FogLevel.HEAVY])
@pytest.mark.parametrize("length", [2, 60, 101, 102, 203, 1_500, 4_000])
def test_each_reader_is_told_what_the_whole_story_gives_them(
    tmp_path: Path, fog: FogLevel, length: int
) -> None:
    teams = (("alice", "carol"), ("bob", "dave")) if fog is FogLevel.HEAVY else ()
    game = read_game(new_game(tmp_path / "g", PLAYERS, fog=fog, teams=teams))
    tallies = long_tallies(tuple(PLAYERS.split(",")), length, seed=length)
    whole = stats.stats_of(tallies)
    story = stats.Story(tallies)
    colours = {"alice": "#111111", "bob": "#222222", "carol": "#333333", "dave": "#444444"}
    for reader in [None, *PLAYERS.split(",")]:
        expected = stats.stats_for(whole, game.state, reader)
        told = story.told(game.state, reader)
        assert told == {**expected, "timeline": bounds.bounded_timeline(expected["timeline"])}
        assert len(told["timeline"]) <= 2 * bounds.TIMELINE_POINTS
        for code in i18n.LANGUAGES:
            with i18n.speaking(i18n.language(code)):
                assert stats.stats_text(told, full=False) == stats.stats_text(expected, False)
                assert story.charts(game.state, reader, colours) == charts(expected, colours)
        # (what the view file carries: the same, bounded once or twice)
        assert bounds.bounded_story(told) == bounds.bounded_story(expected)


def test_a_side_told_apart_from_another_under_fog(tmp_path: Path) -> None:
    """The test above can fail: under fog, alice's side is told only its own numbers."""
    game = read_game(
        new_game(
            tmp_path / "g", PLAYERS, fog=FogLevel.HEAVY, teams=(("alice", "carol"), ("bob", "dave"))
        )
    )
    story = stats.Story(long_tallies(tuple(PLAYERS.split(",")), 300, seed=1))
    alice, bob = story.told(game.state, "alice"), story.told(game.state, "bob")
    assert alice["players"] == ["alice", "carol"] and bob["players"] == ["bob", "dave"]
    assert set(alice["timeline"][-1]["armies"]) == {"alice", "carol"}
    assert alice["timeline"] != bob["timeline"]
    colours = {p: "#000000" for p in PLAYERS.split(",")}
    lines = story.charts(game.state, "alice", colours)[0]["lines"]
    assert [line["player"] for line in lines] == ["alice", "carol"]


def test_a_story_of_a_long_game_is_told_at_a_cost_that_does_not_grow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a reader is told holds at most TIMELINE_POINTS of each part of the timeline, and the
    charts are drawn once a side, whatever the number of readers and languages."""
    game = read_game(new_game(tmp_path / "g", PLAYERS))
    story = stats.Story(long_tallies(tuple(PLAYERS.split(",")), 5_000, seed=3))
    drawn = []
    original = stats.line_chart

    def counting(*args: object, **kwargs: object) -> dict[str, object]:
        drawn.append(args[0])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stats, "line_chart", counting)
    for reader in [None, *PLAYERS.split(",")]:
        for code in i18n.LANGUAGES:
            with i18n.speaking(i18n.language(code)):
                titles = [c["title"] for c in story.charts(game.state, reader, {})]
                assert titles == [i18n._("Territories"), i18n._("Armies")]
    assert len(drawn) == 2  # (territories and armies, once)
    assert len(story.told(game.state, "bob")["timeline"]) == bounds.TIMELINE_POINTS + 3
