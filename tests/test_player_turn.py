"""The player's turn seen whole, through the command line as a player and as the moderator:
every problem at once, the secret checked by the player's own check, check and resolve agreeing,
orders read between pbem's cut lines, the forecast of the whole plan."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner
from conftest import SEED, skeleton, snapshot

from pbem.cli import main
from pbem.records.history import report_dir
from pbem.records.opening import read_game

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "games" / "example"
# The example game as pbem kept it in game file format 2: alice's pending file trades, places
# twice, chains four attacks and fortifies, the plan the tests below change a little. pbem plays
# it on as it did then (test_old_games.py).
RICH_EXAMPLE = ROOT / "tests" / "fixtures" / "format2-example"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def example(tmp_path: Path, source: Path = EXAMPLE) -> Path:
    copy = tmp_path / "example"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("continuation"))
    return copy


def new(directory: Path) -> Path:
    run("new", directory, "--players", "alice,bob,carol", "--seed", SEED.hex())
    return directory


# --- 2. every problem at once ------------------------------------------------------------------


def test_the_readme_example_of_two_problems_in_one_file(tmp_path: Path) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    orders = game / "orders" / "alice.toml"
    text = orders.read_text()
    text = text.replace('"Middle East"\narmies = 6', '"Midle East"\narmies = 6')
    orders.write_text(text.replace("armies = 3\n", "armies = 30\n", 1))
    out = run("check", game, orders, code=1)
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```\n((?: *alice\.toml line .*\n)+) *```", readme)
    assert block is not None
    assert out.splitlines() == [line.strip() for line in block.group(1).splitlines()]
    assert len(out.splitlines()) == 2  # the typo does not hide the count


def test_an_unknown_territory_in_an_attack_does_not_hide_the_rest(tmp_path: Path) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    orders = game / "orders" / "alice.toml"
    text = orders.read_text().replace('to = "Kamchatka"', 'to = "Kamchatk"')
    orders.write_text(text.replace("armies = 6", "armies = 1"))
    out = run("check", game, orders, code=1)
    assert "unknown territory 'Kamchatk'; did you mean 'Kamchatka'?" in out
    assert "armies placed, but your reinforcements are 9" in out
    # The attack from North Africa may follow one that could not be read: no false alarm.
    assert "no earlier attack" not in out


# --- 4. the player's own check knows the secret ---------------------------------------------


def test_check_view_catches_a_wrong_secret(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    view = report_dir(directory, 0) / "carol.view.json"
    orders = tmp_path / "carol.toml"
    good = skeleton(directory, "carol")
    orders.write_text(good)
    assert "carol.toml: valid." in run("check", "--view", view, orders)
    secret = read_game(directory).registration("carol").secret  # type: ignore[union-attr]
    orders.write_text(good.replace(secret, "0" * len(secret)))
    out = run("check", "--view", view, orders, code=1)
    assert "line 4: the secret is not carol's: copy it from your latest report" in out


def test_a_view_holds_the_hash_of_its_own_players_secret_only(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    game = read_game(directory)
    texts: dict[str, str] = {}
    for name in ("alice", "bob", "carol"):
        text = (report_dir(directory, 0) / f"{name}.view.json").read_text()
        texts[name] = text
        view = json.loads(text)
        assert set(view["secret_check"]) == {"salt", "sha256"}
        for reg in game.registrations:
            assert reg.secret not in text
    hashes = {json.loads(t)["secret_check"]["sha256"] for t in texts.values()}
    assert len(hashes) == 3
    shown = run("show", directory, "--json", "--player", "alice")
    assert "secret_check" not in shown  # only the file sent to alice carries it


def test_orders_signed_by_another_player_are_refused_by_that_view(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    view = report_dir(directory, 0) / "carol.view.json"
    orders = tmp_path / "bob.toml"
    orders.write_text(skeleton(directory, "bob"))
    out = run("check", "--view", view, orders, code=1)
    assert "signed by bob, but the view is carol's" in out


# --- 5. check and resolve agree --------------------------------------------------------------


def test_check_directory_alone_checks_its_orders_folder(tmp_path: Path) -> None:
    game = example(tmp_path)
    out = run("check", game)
    assert out.startswith("alice.toml: valid.\n")
    (game / "orders" / "alice.toml").unlink()
    assert "no order files to check" in run("check", game, code=1)


def test_check_refuses_two_valid_files_of_one_player_as_resolve_does(tmp_path: Path) -> None:
    game = example(tmp_path)
    shutil.copy(game / "orders" / "alice.toml", game / "orders" / "alice-again.toml")
    before = snapshot(game)
    out = run("check", game, code=1)
    assert out.count("alice has 2 valid order files (alice-again.toml, alice.toml)") == 2
    refused = CliRunner().invoke(main, ["resolve", str(game)])
    assert refused.exit_code == 1
    assert "alice has 2 valid order files (alice-again.toml, alice.toml)" in refused.output
    assert snapshot(game) == before


def test_the_whole_report_sent_back_is_read_between_the_cut_lines(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    report = (report_dir(directory, 0) / "alice.txt").read_text()
    assert report.count("-- 8<") == 2
    sent_back = tmp_path / "alice-report.txt"
    sent_back.write_text(report)
    assert "alice-report.txt: valid." in run("check", directory, sent_back)
    view = report_dir(directory, 0) / "alice.view.json"
    assert "valid." in run("check", "--view", view, sent_back)
    # A mistake inside the cuts is reported at its line in the whole report.
    lines = report.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("armies = "))
    lines[at] = "armies = 1"
    sent_back.write_text("\n".join(lines))
    out = run("check", directory, sent_back, code=1)
    assert f"alice-report.txt line {at + 1}: " in out


# --- 1. the forecast of the whole plan, in check ----------------------------------------------


def test_check_forecasts_an_attack_from_a_source_an_earlier_attack_emptied(
    tmp_path: Path,
) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    orders = game / "orders" / "alice.toml"
    text = orders.read_text().replace(
        '[[attack]]\nfrom = "Yakutsk"',
        '[[attack]]\nfrom = "Middle East"\nto = "East Africa"\n\n[[attack]]\nfrom = "Yakutsk"',
    )
    orders.write_text(text)
    out = run("check", game, orders)
    line = next(x for x in out.splitlines() if "attack East Africa from Middle East" in x)
    # Middle East moved all but one into Southern Europe: this attack never happens.
    assert "will be skipped (Middle East has only 1 army: an attack needs 2" in line


# --- 6, 8, 10. reports: the next player asked, skipped orders private, one numbering ----------


def test_after_a_turn_only_the_next_player_gets_an_order_file_and_every_report_says_the_turn(
    tmp_path: Path,
) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    run("resolve", game)
    folder = report_dir(game, 11)
    state = read_game(game).state
    assert state.awaiting() == ("bob",)
    assert sorted(p.name for p in folder.glob("*.orders.toml")) == ["bob.orders.toml"]
    for name in ("alice", "bob", "carol"):
        text = (folder / f"{name}.txt").read_text()
        assert text.startswith(f"example: report for {name} after turn 10\n")
        assert "after resolution" not in text
        assert "(Turn 10 is resolution 11 of the game's history.)" in text
    carol = (folder / "carol.txt").read_text()
    assert "Your next turn is turn 12, after bob." in carol
    assert "Its order file will come with the report that makes it your turn" in carol
    overview = (folder / "_moderator.txt").read_text()
    assert overview.startswith("example: moderator's overview after turn 10 (resolution 11)\n")
    assert "What the orders were forecast to do" in overview
    assert "alice: attack Brazil from North Africa: 2 to 3 (most likely 3) against 1" in overview


def test_a_skipped_order_is_told_to_its_player_only(tmp_path: Path) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    orders = game / "orders" / "alice.toml"
    # North Africa never holds more than 50: the attack on Brazil is skipped.
    text = orders.read_text().replace(
        'to = "Brazil"\nmove = "min"', 'to = "Brazil"\nmove = "min"\nstop_at = 50'
    )
    orders.write_text(text)
    run("resolve", game)
    folder = report_dir(game, 11)
    skipped = "attack Brazil from North Africa was skipped"
    alice = (folder / "alice.txt").read_text()
    assert f"Your order to {skipped}: North Africa has" in alice
    for other in ("bob", "carol"):
        assert "skipped" not in (folder / f"{other}.txt").read_text()
    assert f"alice's order to {skipped}" in (folder / "_moderator.txt").read_text()


def test_check_view_forecasts_the_whole_plan_as_a_player(tmp_path: Path) -> None:
    game = example(tmp_path, RICH_EXAMPLE)
    view = report_dir(game, 10) / "alice.view.json"
    assert "secret_check" not in view.read_text()  # written before views carried it
    out = run("check", "--view", view, game / "orders" / "alice.toml")
    assert out.startswith("alice.toml: valid.\n")
    assert "  attack Brazil from North Africa: 2 to 3 (most likely 3) against 1: happens " in out
