"""The club's pages (`pbem publish ROOT OUT`, docs/publish.md): every game listed, a page per
game with the board after every turn, the record of every finished game to download, nothing
a player keeps to themselves on the page of a running game; and in Chromium: no console error,
no request outside the site's folder, a turn slider that changes the map, no serious
accessibility violation (axe-core, installed by `npm ci` in tests/)."""

from __future__ import annotations

import json
import os
import random
import shutil
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import pytest
import screens
from click.testing import CliRunner
from conftest import write_bot_orders
from test_publish import NOW, play, secrets_of

from pbem.cli import main
from pbem.club.site import publish_site
from pbem.core import dice
from pbem.core.state import FogLevel, Options, Phase
from pbem.errors import PbemError
from pbem.game import processor
from pbem.game.audit import audit_game
from pbem.records.history import history_count, read_history
from pbem.records.opening import read_game
from pbem.records.published import PUBLISHED

EXAMPLE = Path(__file__).resolve().parent.parent / "games" / "example"
CHROMIUM = screens.chromium()


def running_fog_game(directory: Path) -> Path:
    processor.new_game(
        directory,
        processor.parse_player_list(["fay=fay@club.example", "gil=gil@club.example"]),
        Options(fog=FogLevel.LIGHT),
        seed=bytes([4]) * 32,
        name="misty",
    )
    rng = random.Random(4)
    for _ in range(6):
        write_bot_orders(directory, rng)
        processor.resolve_game(directory)
    return directory


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("club") / "lund"
    folder.mkdir()
    play(folder / "finished", Options(missions=True), 7)
    shutil.copytree(EXAMPLE, folder / "example")
    running_fog_game(folder / "misty")
    return folder


@pytest.fixture(scope="module")
def site(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("www") / "site"
    summary = publish_site(root, out, NOW)
    assert summary.games == 3 and summary.records == 1, summary.lines()
    assert not summary.problems
    return out


def test_the_index_lists_every_game_with_its_state(site: Path) -> None:
    index = (site / "index.html").read_text("utf-8")
    for name in ("finished", "example", "misty"):
        assert f'href="games/{name}/index.html"' in index
        assert (site / "games" / name / "index.html").is_file()
    assert "has won" in index
    assert "Turn 10 is being played: orders awaited from alice." in index
    assert "3 games, 2 being played" in index


def test_a_finished_games_page_shows_every_turn_and_its_record_audits_alone(
    site: Path, root: Path, tmp_path: Path
) -> None:
    page = site / "games" / "finished"
    maps = sorted(p.name for p in (page / "maps").iterdir())
    assert len(maps) == history_count(root / "finished")
    html = (page / "index.html").read_text("utf-8")
    for name in maps:
        assert f'href="maps/{name}"' in html
    with zipfile.ZipFile(page / "finished-record.zip") as archive:
        archive.extractall(tmp_path)
    assert audit_game(tmp_path / "finished-record").resolutions == history_count(root / "finished")
    assert (root / "finished" / PUBLISHED).is_file()
    assert "finished-record.zip" in html and "pbem audit" in html


def every_file(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): p.read_text("utf-8", errors="replace")
        for p in site.rglob("*")
        if p.is_file() and p.suffix != ".zip"
    }


def test_a_running_games_pages_hold_no_secret_hand_mission_or_key_to_come(
    site: Path, root: Path
) -> None:
    files = every_file(site)
    assert len(files) > 40
    for name in ("example", "misty"):
        game = read_game(root / name)
        hidden = secrets_of(root / name)
        count = history_count(root / name)
        hidden.add(dice.hidden_key(game.seed).hex())
        hidden.update(game.key(r).hex() for r in range(count, count + 3))  # keys of turns to come
        for path, text in files.items():
            for secret in hidden:
                assert secret not in text, f"{path} holds a secret of {name}"
        page = files[f"games/{name}/index.html"]
        for r in range(count):
            for e in read_history(root / name, r).events:
                if e.kind == "drew_card":
                    assert f"drew a card: {e.card}" not in page  # type: ignore[attr-defined]
        for p in game.state.players:
            for card in p.hand:
                assert f"drew a card: {card}" not in page
    assert "drew a card." in files["games/example/index.html"]  # told, not named


def test_a_running_fog_game_shows_no_board_until_it_is_over(site: Path, root: Path) -> None:
    page = site / "games" / "misty"
    assert not (page / "maps").exists()
    html = (page / "index.html").read_text("utf-8")
    assert "fog of war" in html
    for t in read_game(root / "misty").state.board.territories:
        assert t not in html, t
    assert read_game(root / "misty").state.phase is not Phase.OVER


def test_publishing_again_replaces_the_pages_and_keeps_the_moderators_own_files(
    root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "www"
    publish_site(root, out, NOW)
    (out / ".htaccess").write_text("Options -Indexes", "utf-8")
    (out / "photos").mkdir()
    (out / "photos" / "cup.jpg").write_bytes(b"\xff\xd8")
    publish_site(root, out, NOW)
    assert (out / ".htaccess").read_text("utf-8") == "Options -Indexes"
    assert (out / "photos" / "cup.jpg").read_bytes() == b"\xff\xd8"
    assert (out / "games" / "example" / "index.html").is_file()
    assert oct((out / "index.html").stat().st_mode & 0o777) == "0o644"
    assert oct(out.stat().st_mode & 0o777) == "0o755"
    # a page the club no longer has is gone; a file of the moderator's where a page now goes
    # is refused, and nothing changes
    (out / "games" / "newcomer").mkdir()
    (out / "games" / "newcomer" / "index.html").write_text("mine", "utf-8")
    shutil.copytree(root / "example", tmp_path / "more" / "example")
    processor.new_game(
        tmp_path / "more" / "newcomer",
        processor.parse_player_list(["ann=ann@x.example", "bob=bob@x.example"]),
        Options(),
        seed=bytes(32),
        name="newcomer",
    )
    before = every_file(out)
    with pytest.raises(PbemError, match="newcomer/index.html is not a file pbem wrote"):
        publish_site(tmp_path / "more", out, NOW)
    assert every_file(out) == before
    (out / "games" / "newcomer" / "index.html").unlink()
    publish_site(tmp_path / "more", out, NOW)
    assert (out / "games" / "newcomer" / "index.html").is_file()
    assert not (out / "games" / "finished").exists()  # no longer in the club's folder
    assert (out / ".htaccess").is_file()


def test_a_folder_of_other_files_the_games_folder_or_a_game_is_refused(
    root: Path, tmp_path: Path
) -> None:
    other = tmp_path / "home"
    other.mkdir()
    (other / "notes.txt").write_text("mine", "utf-8")
    with pytest.raises(PbemError, match="not the club's pages"):
        publish_site(root, other, NOW)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    for out in (root, root.parent):
        with pytest.raises(PbemError, match="holds the games themselves"):
            publish_site(root, out, NOW)
    with pytest.raises(PbemError, match="inside the game folder"):
        publish_site(root, root / "example" / "www", NOW)
    with pytest.raises(PbemError, match="there is no game in"):
        publish_site(tmp_path / "home", tmp_path / "www", NOW)
    assert (root / "example" / "game.toml").is_file() and not (root / "example" / "www").exists()


def test_a_damaged_game_is_left_out_and_named_and_the_others_are_shown(
    root: Path, tmp_path: Path
) -> None:
    club = tmp_path / "club"
    shutil.copytree(root / "example", club / "example")
    (club / "broken").mkdir()
    (club / "broken" / "game.toml").write_text("format = [", "utf-8")
    summary = publish_site(club, tmp_path / "out", NOW)
    assert summary.games == 1
    assert any(p.startswith("broken: left out") for p in summary.problems), summary.problems
    assert (tmp_path / "out" / "games" / "example" / "index.html").is_file()


def test_the_command_publishes_a_root_in_the_clubs_language(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "sv"
    result = CliRunner().invoke(
        main,
        ["publish", str(root), str(out), "--lang", "sv", "--club", "Risk i Lund"]
        + ["--now", "2026-12-06T12:00Z"],
    )
    assert result.exit_code == 0, result.output
    assert "Published the club's pages of 3 games" in result.output
    index = (out / "index.html").read_text("utf-8")
    assert '<html lang="sv">' in index and "Risk i Lund" in index
    page = (out / "games" / "example" / "index.html").read_text("utf-8")
    assert '<html lang="sv">' in page
    english = (
        "The board, turn by turn",
        "The story of the game",
        "Players",
        "Checking the game",
        "is being played",
        "over time",
        "the club's pages",
    )
    for words in english:
        assert words not in page, words
    for words in ("Standings", "Games", "being played", "the club's pages"):
        assert words not in index, words
    assert "Spelplanen, tur för tur" in page and "Ställning" in index
    bad = CliRunner().invoke(main, ["publish", str(root), str(out), "--lang", "xx"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output


def test_the_same_club_gives_the_same_pages(root: Path, tmp_path: Path) -> None:
    publish_site(root, tmp_path / "one", NOW)
    publish_site(root, tmp_path / "two", NOW)
    one, two = every_file(tmp_path / "one"), every_file(tmp_path / "two")
    assert one == two
    later = datetime(2027, 1, 1, tzinfo=timezone.utc)
    publish_site(root, tmp_path / "three", later)
    assert (
        every_file(tmp_path / "three")["games/example/index.html"]
        == one["games/example/index.html"]
    )


needs_chromium = pytest.mark.skipif(
    CHROMIUM is None and not os.environ.get("PBEM_REQUIRE_CHROMIUM"),
    reason="Chromium is not installed (apt-get install chromium): no page test",
)


def console_problems(events: list[dict[str, object]]) -> list[str]:
    found = []
    for e in events:
        params = e.get("params")
        assert isinstance(params, dict)
        if (
            e["method"] == "Runtime.exceptionThrown"
            or e["method"] == "Runtime.consoleAPICalled"
            and params.get("type")
            in (
                "error",
                "warning",
            )
        ):
            found.append(json.dumps(params)[:300])
        elif e["method"] == "Log.entryAdded":
            entry = params.get("entry")
            if isinstance(entry, dict) and entry.get("level") in ("error", "warning"):
                found.append(json.dumps(entry)[:300])
    return found


def requests(events: list[dict[str, object]]) -> list[str]:
    urls = []
    for e in events:
        params = e.get("params")
        if e["method"] == "Network.requestWillBeSent" and isinstance(params, dict):
            request = params["request"]
            assert isinstance(request, dict)
            urls.append(str(request["url"]))
    return urls


@needs_chromium
def test_the_pages_open_in_chromium_with_no_error_and_nothing_from_outside(site: Path) -> None:
    with screens.browser(CHROMIUM) as b:
        for domain in ("Runtime", "Log", "Network"):
            b.page(f"{domain}.enable")
        for page in (site / "index.html", *sorted((site / "games").glob("*/index.html"))):
            b.events.clear()
            b.open(page, 1200)
            b.evaluate("new Promise(r => setTimeout(r, 200))")
            assert not console_problems(b.events), (page, console_problems(b.events))
            urls = requests(b.events)
            assert urls, page
            for url in urls:
                assert url.startswith(site.resolve().as_uri() + "/"), (page, url)
            broken = b.evaluate(
                "[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                ".map(i => i.src)"
            )
            assert broken == [], broken


@needs_chromium
def test_clicking_the_turn_slider_changes_the_map_and_the_story(site: Path) -> None:
    page = site / "games" / "finished" / "index.html"
    with screens.browser(CHROMIUM) as b:
        b.open(page, 1200)
        last = b.evaluate("document.getElementById('map').getAttribute('src')")
        assert b.evaluate("document.getElementById('slider').hidden") is False
        box = b.evaluate(
            "(() => { const r = document.getElementById('turn').getBoundingClientRect();"
            " return [r.left, r.top + r.height / 2]; })()"
        )
        b.evaluate("document.getElementById('turn').scrollIntoView()")
        box = b.evaluate(
            "(() => { const r = document.getElementById('turn').getBoundingClientRect();"
            " return [r.left + 2, r.top + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            b.page(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )
        first = b.evaluate("document.getElementById('map').getAttribute('src')")
        assert last != first and first == "maps/0000.svg", (last, first)
        assert b.evaluate("document.getElementById('turn-label').value") == "The deal"
        assert b.evaluate("document.querySelector('.turn-story.shown').id") == "story-0"
        shown = b.evaluate(
            "[...document.querySelectorAll('.turn-story')]"
            ".filter(s => getComputedStyle(s).display !== 'none').length"
        )
        assert shown == 1


@needs_chromium
def test_no_serious_accessibility_violation(site: Path) -> None:
    script = screens.axe_script()
    if script is None:
        pytest.skip("axe-core is not installed: run 'npm ci' in tests/")
    with screens.browser(CHROMIUM) as b:
        for page in (site / "index.html", site / "games" / "finished" / "index.html"):
            for dark in (False, True):
                b.open(page, 400, dark)
                serious = b.serious_violations(script)
                assert serious == [], (page.name, dark, serious)


@needs_chromium
def test_screenshots_of_the_pages(site: Path) -> None:
    """The pages at phone and desktop width, dark and printed (docs/screens/site-*.png, looked
    at when the pages change): they are drawn, and nothing is wider than a phone's screen but
    the map, which scrolls."""
    out = Path(os.environ.get("PBEM_SCREENS", site.parent / "screens"))
    out.mkdir(parents=True, exist_ok=True)
    page = site / "games" / "finished" / "index.html"
    with screens.browser(CHROMIUM) as b:
        for name, width, dark in (("site-400", 400, False), ("site-1200", 1200, False)):
            b.open(page, width, dark)
            b.screenshot(out / f"{name}.png", 2400)
            assert (out / f"{name}.png").stat().st_size > 10_000
            width_seen, client = b.overflow()
            assert width_seen <= client, (name, width_seen, client)
        b.open(page, 400, True)
        b.screenshot(out / "site-dark.png", 2400)
        b.open(site / "index.html", 1200)
        b.screenshot(out / "site-index.png", 900)
        b.open(page, 1200)
        assert b.pdf(out / "site-print.pdf") >= 2


def test_the_index_shows_the_standings_worked_out_from_the_histories(
    site: Path, root: Path
) -> None:
    from pbem.club.standings import standings

    index = (site / "index.html").read_text("utf-8")
    table = standings(root).to_dict()
    rated = [p for p in table["players"] if p["rank"] is not None]
    assert len(rated) == 3
    for p in rated:
        row = f'<td>{p["rank"]}</td><td>{p["name"]}</td><td class="n">{p["ordinal"]:.1f}</td>'
        assert row in index, row
    assert "Standings" in index and "pbem standings" in index


def test_two_games_of_one_name_the_second_is_left_out_and_named(root: Path, tmp_path: Path) -> None:
    club = tmp_path / "club"
    shutil.copytree(root / "example", club / "a")
    shutil.copytree(root / "example", club / "b")
    summary = publish_site(club, tmp_path / "out", NOW)
    assert summary.games == 1
    assert summary.problems == (
        f"example: left out (its pages would be those of the game in {club / 'a'} "
        "(games/example/ of the site); give each game a name of its own)",
    )


def test_the_index_shows_a_tournaments_rounds_games_and_points(tmp_path: Path) -> None:
    from pbem.club import tournament as tour
    from pbem.records import clock

    root = tmp_path / "club"
    root.mkdir()
    players = [tour.Entrant(n) for n in ("ann", "ben", "cy", "dee")]
    when = clock.parse_instant("2027-03-01T12:00Z")
    tour.create_tournament(root, "cup", players, "swiss", 2, when, 2)
    first = tour.read_tournament(root, "cup").rounds[0].tables
    summary = publish_site(root, tmp_path / "out", NOW)
    assert summary.games == 2 and not summary.problems
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert "Tournament cup" in index
    assert "Swiss, 4 players, tables of up to 2: round 1 of 2." in index
    for table in first:
        link = f'<a href="games/{table.game}/index.html">{table.game}</a>: '
        assert link + ", ".join(table.players) + " (being played)" in index
    assert index.count("<td>1</td><td>") == 4  # four players tied first, no game over yet
    assert "The setup turn is being played: orders awaited from" in index


def test_the_standings_come_out_the_same_from_the_public_records_alone(
    site: Path, root: Path, tmp_path: Path
) -> None:
    from pbem.club.standings import standings

    for archive in (site / "games").glob("*/*-record.zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp_path / "records")
    mine = {p["name"]: p for p in standings(root).to_dict()["players"] if p["rank"] is not None}
    theirs = standings(tmp_path / "records").to_dict()["players"]
    assert theirs and {p["name"]: (p["ordinal"], p["mu"], p["sigma"]) for p in theirs} == {
        name: (p["ordinal"], p["mu"], p["sigma"]) for name, p in mine.items()
    }


def test_a_game_that_does_not_replay_or_misses_a_history_file_is_left_out(
    root: Path, tmp_path: Path
) -> None:
    club = tmp_path / "club"
    shutil.copytree(root / "example", club / "example")
    shutil.copytree(root / "example", club / "gap")
    data = (club / "gap" / "game.toml").read_text("utf-8").replace('"example"', '"gap"', 1)
    (club / "gap" / "game.toml").write_text(data, "utf-8")
    zero = (club / "gap" / "history" / "0000.toml").read_text("utf-8")
    (club / "gap" / "history" / "0000.toml").write_text(zero.replace('"example"', '"gap"'))
    (club / "gap" / "history" / "0004.toml").unlink()
    summary = publish_site(club, tmp_path / "out", NOW)
    assert summary.games == 1
    assert len(summary.problems) == 1 and summary.problems[0].startswith("gap: left out ("), (
        summary.problems
    )
    assert "Traceback" not in summary.problems[0]


def test_a_finished_games_page_names_its_rules_players_and_charts(site: Path, root: Path) -> None:
    html = (site / "games" / "finished" / "index.html").read_text("utf-8")
    state = read_game(root / "finished").state
    assert "secret missions: each player wins by their own mission" in html  # (a mission game)
    for p in state.players:
        word = "won" if p.name == state.winner else "out" if not p.alive else "playing"
        assert f"{p.name}</td>" in html and f"<td>{word}</td></tr>" in html
        row = html.split(f"{p.name}</td>", 1)[1].split("</tr>", 1)[0]
        assert row.endswith(f"<td>{word}</td>"), (p.name, row)
    for title in ("Territories over time", "Armies over time", "Cards over time", "Luck over time"):
        assert title in html, title
    example = (site / "games" / "example" / "index.html").read_text("utf-8")
    assert "Classic rules." in example


def test_the_luck_chart_is_the_armies_fewer_than_expected_each_player_lost() -> None:
    from pbem.core.events import Rolled
    from pbem.core.luck import expected_losses
    from pbem.present.site import Turn, luck_series

    state = read_game(EXAMPLE).state
    rolls = [
        Rolled("alice", "Alaska", "Kamchatka", "bob", (6, 5, 1), (4, 2), 0, 2),
        Rolled("bob", "Kamchatka", "Alaska", "alice", (2,), (6,), 1, 0),
        Rolled("carol", "Peru", "Brazil", "neutral", (3, 3), (5,), 1, 0),
    ]
    turns = [
        Turn(1, 1, "turn 1", tuple(rolls[:2]), None, state),
        Turn(2, 2, "turn 2", (rolls[2],), None, state),
    ]
    series = luck_series(turns, ["alice", "bob", "carol"])
    a3 = expected_losses(3, 2)
    a1 = expected_losses(1, 1)
    a2 = expected_losses(2, 1)
    alice = float(a3[0]) - 0 + float(a1[1]) - 0
    bob = float(a3[1]) - 2 + float(a1[0]) - 1
    carol = float(a2[0]) - 1
    assert series == {
        "alice": [round(alice, 1), round(alice, 1)],
        "bob": [round(bob, 1), round(bob, 1)],
        "carol": [0.0, round(carol, 1)],
    }


def test_a_tournament_that_is_over_names_its_winners(tmp_path: Path) -> None:
    from test_tournament import end_game

    from pbem.club import tournament as tour
    from pbem.records import clock

    root = tmp_path / "club"
    root.mkdir()
    when = clock.parse_instant("2027-03-01T12:00Z")
    players = [tour.Entrant(n) for n in ("ann", "ben", "cy", "dee")]
    tour.create_tournament(root, "cup", players, "swiss", 2, when, 2)
    for number in (1, 2):
        for table in tour.read_tournament(root, "cup").rounds[number - 1].tables:
            end_game(root / table.game, table.players[0])
        tour.advance_tournaments(root, when)
    data = tour.tournament_table(root, "cup")
    leaders = [s["player"] for s in data["standings"] if s["rank"] == 1]
    publish_site(root, tmp_path / "out", NOW)
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    from pbem.languages import i18n

    said = i18n.language("en").listing(leaders)
    assert (f"over: {said} won" if len(leaders) == 1 else f"over: {said} share first place") in (
        index
    )
    for r in data["rounds"]:
        for table in r["tables"]:
            assert f"(won by {table['players'][0]})" in index
    assert "(being played)" not in index
