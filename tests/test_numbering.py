"""One numbering a player can follow: the turn. The mail that asks for a turn, the order file,
the report folder, the report's heading, `pbem dice --turn`, `undo`, `audit` and `status` all
give one turn one number; the resolution number shows only beside it, in words."""

from __future__ import annotations

import email
import json
import re
import shutil
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.records.history import report_dir
from pbem.records.store import FORMAT, _load_toml

ROOT = Path(__file__).resolve().parent.parent
# The example game as an older pbem kept it (game file format 2, report folders reports/NNNN/).
OLD_EXAMPLE = ROOT / "tests" / "fixtures" / "format2-example"
SEED = "00" * 31 + "0b"
MODERATOR = "risk@example.org"
RESOLUTION_1 = "(resolution 1, history/0001.toml)"


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def newest_folder(directory: Path) -> Path:
    return sorted(p for p in (directory / "reports").iterdir() if p.is_dir())[-1]


def play_on(directory: Path, resolutions: int) -> None:
    """Each awaited player sends the order file of their latest report, as it is."""
    for _ in range(resolutions):
        for path in newest_folder(directory).glob("*.orders.toml"):
            shutil.copy(path, directory / "orders" / path.name.replace(".orders", ""))
        run("resolve", directory)


def dealt_game(directory: Path, resolutions: int, *options: str) -> Path:
    players = "alice=alice@example.org,bob=bob@example.org,carol=carol@example.org"
    run("new", directory, "--players", players, "--seed", SEED, "--name", "g", *options)
    play_on(directory, resolutions)
    return directory


def only_message(directory: Path, player: str) -> EmailMessage:
    found = [p for p in (directory / "outbox").glob("*.eml") if p.name.endswith(f"-{player}.eml")]
    assert len(found) == 1, found
    msg = email.message_from_bytes(found[0].read_bytes(), policy=default)
    assert isinstance(msg, EmailMessage)
    return msg


def attachment(msg: EmailMessage, name: str) -> str:
    for part in msg.iter_attachments():
        if part.get_filename() == name:
            content = part.get_content()
            return content.decode() if isinstance(content, bytes) else str(content)
    raise AssertionError(f"no attachment {name}")


def flat(text: str) -> str:
    return " ".join(text.split())


def test_one_turn_has_one_number_in_subject_order_file_folder_report_and_dice(
    tmp_path: Path,
) -> None:
    d = dealt_game(tmp_path / "g", 13)  # the deal, the setup turn, turns 1 to 12: turn 13 next
    run("mail", "send", d, "--from", MODERATOR)  # a game under way: its latest reports only
    (player,) = json.loads(run("show", d, "--json"))["awaiting"]
    msg = only_message(d, player)
    assert msg["Subject"] == "[g] turn 13: your move"
    orders = attachment(msg, f"{player}.orders.toml")
    assert re.search(r"^turn = 13$", orders, re.M)
    for other in {"alice", "bob", "carol"} - {player}:
        assert only_message(d, other)["Subject"] == f"[g] turn 13: {player}'s move"

    mine = tmp_path / "mail"  # the player saves both attachments and checks the order file
    mine.mkdir()
    (mine / f"{player}.orders.toml").write_text(orders)
    (mine / f"{player}.view.json").write_text(attachment(msg, f"{player}.view.json"))
    checked = run("check", "--view", mine / f"{player}.view.json", mine / f"{player}.orders.toml")
    assert checked.startswith(f"{player}.orders.toml: valid.")
    (d / "orders" / f"{player}.toml").write_text(orders)
    out = run("resolve", d)
    assert out.splitlines()[0].startswith("Resolved g turn 13 (resolution 14, history/0014.toml):")
    folder = d / "reports" / "0014-turn-13"
    assert f"Reports: {folder}" in out
    assert report_dir(d, 14) == folder
    report = (folder / f"{player}.txt").read_text()
    assert report.splitlines()[0] == f"g: report for {player} after turn 13"
    assert "(Turn 13 is resolution 14 of the game's history.)" in report
    key = report.split("Key of resolution 14:")[1].split()[0]
    assert "after turn 13 (resolution 14)" in (folder / "_moderator.txt").read_text()

    dice = run("dice", d, "--turn", 13)
    assert dice.splitlines()[0] == (
        f"turn 13, {player}'s turn (resolution 14, history/0014.toml): key {key}"
    )
    assert run("dice", d, "--resolution", 14) == dice
    assert "the deal to turn 13 replayed (15 resolutions" in run("audit", d)
    row = run("status", d).splitlines()[1]
    assert " 14 " in row and re.search(r"turn 13 \d{4}-\d\d-\d\dT\d\d:\d\dZ$", row), row
    (status,) = json.loads(run("status", d, "--json"))
    assert (status["turn"], status["last_played"], status["last_resolution"]) == (14, "turn 13", 14)
    assert "Undid turn 13 (resolution 14, history/0014.toml);" in run("undo", d, "--why", "test")
    assert not folder.exists()


def test_the_readme_says_how_turns_and_resolutions_relate_as_a_dealt_game_does(
    tmp_path: Path,
) -> None:
    readme = flat((ROOT / "README.md").read_text())
    said = "in a dealt game resolution 1 is the setup turn (turn 0) and resolution r is turn r - 1"
    assert said in readme
    assert "so turn 13 is resolution 14 (`history/0014.toml`)" in readme
    d = dealt_game(tmp_path / "g", 3)
    assert [p.name for p in sorted((d / "reports").iterdir())] == [
        "0000-deal",
        "0001-setup-turn",
        "0002-turn-1",
        "0003-turn-2",
    ]
    assert [_load_toml(d / "history" / f"{r:04d}.toml")["turn"] for r in (1, 2, 3)] == [0, 1, 2]


def test_the_draft_is_called_the_draft_and_the_setup_turn_comes_after_it(tmp_path: Path) -> None:
    d = dealt_game(tmp_path / "g", 3, "--setup", "draft")
    names = [p.name for p in sorted((d / "reports").iterdir())]
    assert names == ["0000-deal", "0001-draft", "0002-setup-turn", "0003-turn-1"]
    assert (
        (d / "reports" / "0001-draft" / "alice.txt")
        .read_text()
        .startswith("g: report for alice after the draft")
    )
    assert "the draft, turn 0 (resolution 1, history/0001.toml): key" in run("dice", d)
    assert run("dice", d, "--turn", 0).startswith(
        "the setup turn, turn 0 (resolution 2, history/0002.toml)"
    )


def test_dice_by_turn_names_the_turns_there_are(tmp_path: Path) -> None:
    d = dealt_game(tmp_path / "g", 2)
    out = run("dice", d, "--turn", 5, code=1)
    assert (
        "there is no turn 5 in the history: this game has played turns 0 to 1, and turn 2 is "
        "pending" in flat(out)
    )
    out = run("dice", d, "--turn", 1, "--resolution", 2, code=1)
    assert "give --turn or --resolution, not both" in out
    assert "Error" in run("dice", d, "--turn", -1, code=2)


def test_an_old_games_report_folders_keep_working_beside_the_new_ones(tmp_path: Path) -> None:
    copy = tmp_path / "example"
    shutil.copytree(OLD_EXAMPLE, copy, ignore=shutil.ignore_patterns("continuation"))
    assert _load_toml(copy / "game.toml")["format"] < 5
    old = sorted(p.name for p in (copy / "reports").iterdir())
    assert old[-1] == "0010" and report_dir(copy, 10) == copy / "reports" / "0010"
    run("resolve", copy)
    assert _load_toml(copy / "game.toml")["format"] == FORMAT
    assert (copy / "reports" / "0011-turn-10").is_dir()
    assert sorted(p.name for p in (copy / "reports").iterdir()) == [*old, "0011-turn-10"]
    run("mail", "send", copy, "--from", MODERATOR, "--all")
    mailed = sorted(p.name for p in (copy / "outbox").glob("*.eml"))
    assert {"r0000-alice.eml", "r0010-bob.eml", "r0011-turn-10-carol.eml"} <= set(mailed)
    assert "Undid turn 10 (resolution 11" in run("undo", copy, "--why", "test")
    assert "Undid turn 9 (resolution 10" in run("undo", copy, "--why", "test")
    assert not (copy / "reports" / "0010").exists()
    run("resolve", copy)
    assert (copy / "reports" / "0010-turn-9").is_dir()
    assert "audit passed" in run("audit", copy)


@pytest.mark.parametrize(
    ("resolution", "turn", "draft", "folder", "words"),
    [
        (0, 0, False, "0000-deal", "the deal (resolution 0, history/0000.toml)"),
        (1, 0, True, "0001-draft", "the draft, turn 0 " + RESOLUTION_1),
        (1, 0, False, "0001-setup-turn", "the setup turn, turn 0 " + RESOLUTION_1),
        (14, 13, False, "0014-turn-13", "turn 13 (resolution 14, history/0014.toml)"),
    ],
)
def test_each_resolution_is_named_by_what_it_played(
    resolution: int, turn: int, draft: bool, folder: str, words: str
) -> None:
    from pbem.languages.numbering import Played

    played = Played.of(resolution, turn, draft=draft)
    assert (played.folder(), played.words()) == (folder, words)


def test_a_format_4_game_file_becomes_format_5_with_nothing_else_changed(tmp_path: Path) -> None:
    from pbem.records.opening import read_game
    from pbem.records.store import MIGRATIONS, game_document

    d = dealt_game(tmp_path / "g", 1)
    doc = {**game_document(read_game(d)), "format": 4}
    assert MIGRATIONS[4](dict(doc)) == {**doc, "format": 5}


def test_a_players_verify_names_the_turn_beside_the_resolution(tmp_path: Path) -> None:
    d = dealt_game(tmp_path / "g", 3)
    folder = d / "reports" / "0003-turn-2"
    for name in ("alice.txt", "alice.view.json"):
        out = run("verify", "--report", folder / name)
        assert out.startswith("turn 2 (resolution 3): key OK"), out
    first = run("verify", "--report", d / "reports" / "0000-deal" / "bob.view.json")
    assert first.startswith("the deal (resolution 0): key OK")


def test_a_report_without_the_turn_is_verified_by_its_resolution_alone(tmp_path: Path) -> None:
    d = dealt_game(tmp_path / "g", 2)
    view = d / "reports" / "0002-turn-1" / "alice.view.json"
    data = json.loads(view.read_text())
    del data["dice"]["played"]  # as reports made before pbem wrote it
    view.write_text(json.dumps(data))
    assert run("verify", "--report", view).startswith("resolution 2: key OK")
    data["dice"]["played"] = "turn 1\x1b[2J"  # not one of pbem's names: not repeated
    view.write_text(json.dumps(data))
    assert run("verify", "--report", view).startswith("resolution 2: key OK")


def test_each_migration_step_moves_the_format_on_by_one(tmp_path: Path) -> None:
    from pbem.records.opening import read_game
    from pbem.records.store import MIGRATIONS, game_document

    doc = game_document(read_game(dealt_game(tmp_path / "g", 0)))
    for version, step in MIGRATIONS.items():
        assert step({**doc, "format": version})["format"] == version + 1
