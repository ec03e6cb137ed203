"""The command line: every command, its exit codes, and a whole game driven from outside."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import SEED, attacking, skeleton, snapshot, stopped_after_the_history

from pbem.cli import main
from pbem.core.board import load_board
from pbem.records.history import report_dir
from pbem.records.opening import read_game


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def new(directory: Path, *extra: str) -> Path:
    run(
        "new",
        directory,
        "--players",
        "alice=alice@example.org,bob,carol",
        "--seed",
        SEED.hex(),
        *extra,
    )
    return directory


def test_every_command_has_help_with_an_example() -> None:
    def walk(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
        out = []
        for name, command in group.commands.items():
            out.append((f"{prefix} {name}", command))
            if isinstance(command, click.Group):
                out += walk(command, f"{prefix} {name}")
        return out

    commands = walk(main, "pbem")
    assert {
        "pbem new",
        "pbem check",
        "pbem resolve",
        "pbem show",
        "pbem dice",
        "pbem audit",
        "pbem map",
        "pbem odds",
    } <= {name for name, _ in commands}
    for name, command in commands:
        assert command.help, name
        if not isinstance(command, click.Group):
            assert "Example" in command.help, f"{name} has no example in its help"
    assert "Example" in run("--help")


def _commands(group: click.Group, prefix: str = "pbem") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = [(prefix, group)]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out += _commands(command, f"{prefix} {name}")
        else:
            out.append((f"{prefix} {name}", command))
    return out


def test_every_option_has_help_text() -> None:
    missing = [
        f"{name} {'/'.join(param.opts)}"
        for name, command in _commands(main)
        for param in command.params
        if isinstance(param, click.Option) and not (param.help or "").strip()
    ]
    assert missing == []
    for name, _ in _commands(main):
        help_text = run(*name.split()[1:], "--help")
        assert help_text.startswith("Usage: ")


def test_command_summaries_fit_uncut() -> None:
    for name, command in _commands(main):
        if not isinstance(command, click.Group):
            continue
        listing = run(*name.split()[1:], "--help").split("Commands:\n", 1)[1]
        lines = listing.splitlines()
        assert len(lines) == len(command.commands), f"{name}: a summary wraps"
        for line in lines:
            assert not line.endswith("..."), f"{name}: cut summary {line!r}"
            assert len(line) <= 80


def test_bare_pbem_prints_the_help_and_succeeds() -> None:
    result = CliRunner().invoke(main, [])
    assert result.exit_code == 0
    assert result.output == run("--help")
    assert "Commands:" in result.output and "bash_source" in result.output
    assert run("mail") == run("mail", "--help")


def test_map_lists_the_other_names_orders_accept() -> None:
    out = run("map")
    quebec = out.split("\n  Quebec ", 1)[1].splitlines()
    assert quebec[1] == "    also: Québec, Eastern Canada"
    board = load_board()
    for t in board.names:
        for alternative in board.alternatives(t):
            assert board.lookup(alternative) == t
            assert alternative in out


def test_new_then_show_json_is_the_designed_view(tmp_path: Path) -> None:
    directory = new(tmp_path / "spring")
    view = json.loads(run("show", directory, "--json"))
    assert view["game"] == "spring"
    assert view["phase"] == "setup" and view["turn"] == 0 and view["resolution"] == 1
    assert set(view["awaiting"]) == {"alice", "bob", "carol"}
    assert len(view["territories"]) == 42
    assert all("hand" in p for p in view["players"])
    mine = json.loads(run("show", directory, "--json", "--player", "bob"))
    assert [("hand" in p) for p in mine["players"]] == [p["name"] == "bob" for p in mine["players"]]
    assert mine["commitment"] == view["commitment"]
    assert "North America" in run("show", directory)


def test_new_accepts_the_options(tmp_path: Path) -> None:
    directory = tmp_path / "duel"
    run(
        "new",
        directory,
        "--players",
        "alice,bob",
        "--seed",
        SEED.hex(),
        "--setup",
        "random",
        "--two-player",
        "classic",
        "--fortify",
        "connected",
        "--traded-cards",
        "deck",
    )
    view = json.loads(run("show", directory, "--json"))
    assert view["phase"] == "play"
    assert view["options"] == {
        "setup": "random",
        "two_player": "classic",
        "fortify": "connected",
        "traded_cards": "deck",
        "stop_at": "promise",
        "dice": "orders",
        "autopilot": "borders",
    }
    assert sum(p["armies"] for p in view["players"]) == 100


def test_new_says_what_it_made_and_what_the_first_turn_asks(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    lines = run("new", directory, "--players", "alice,bob,carol", "--seed", SEED.hex()).splitlines()
    game = read_game(directory)
    assert lines == [
        f"Created game 'g' in {directory}: 3 players.",
        "Order of play: " + ", ".join(p.name for p in game.state.players),
        "Setup turn: every player places their remaining armies in one order file.",
        f"Reports to send: {report_dir(directory, 0)}",
    ]
    assert game.state.options.drop_after == 3 and game.state.options.missions is False
    draft = run("new", tmp_path / "d", "--players", "a,b,c", "--setup", "draft")
    assert "Draft turn: every player sends a ranked list of territories" in draft
    assert "Setup turn" not in draft and "Orders are due by" not in draft
    placed = run("new", tmp_path / "r", "--players", "a,b,c", "--setup", "random")
    assert "Setup turn" not in placed and "Draft turn" not in placed
    assert "secret mission" not in placed
    missions = run("new", tmp_path / "m", "--players", "a,b,c", "--missions")
    assert "Each player's secret mission is in their own report only." in missions
    assert read_game(tmp_path / "m").state.options.missions is True
    due = run(
        "new",
        tmp_path / "t",
        "--players",
        "a,b",
        "--turn-time",
        "48h",
        "--now",
        "2026-12-01T09:00Z",
    )
    assert "Orders are due by Thu 3 Dec 2026, 09:00 UTC" in due


def test_new_checks_its_options(tmp_path: Path) -> None:
    out = run("new", tmp_path / "g", code=2)
    assert "Missing option '--players'" in out
    assert not (tmp_path / "g").exists()
    run("new", tmp_path / "never", "--players", "a,b,c", "--drop-after", "0")
    assert read_game(tmp_path / "never").state.options.drop_after == 0
    out = run("new", tmp_path / "x", "--players", "a,b,c", "--drop-after", "-1", code=2)
    assert "Invalid value for '--drop-after'" in out
    assert "[default: UTC]" in run("new", "--help")


def test_new_shows_the_default_of_each_choice_in_its_help() -> None:
    """A moderator reading `pbem new --help` sees what a game gets when nothing is said."""
    text = " ".join(run("new", "--help").split())
    for default in ("deal]", "neutral]", "adjacent]", "aside]", "UTC]", "wait]", "3;"):
        assert f"[default: {default}" in text, default
    for said in ("14d for the game (the default)", "(default 6; 0: never)"):
        assert said in text


def test_new_takes_every_mail_setting_given(tmp_path: Path) -> None:
    run(
        "new",
        tmp_path / "g",
        "--players",
        "a,b",
        "--mail",
        "from=games@club.example",
        "--mail",
        "reply_to=moderator@club.example",
    )
    assert dict(read_game(tmp_path / "g").mail) == {
        "from": "games@club.example",
        "reply_to": "moderator@club.example",
    }


def test_user_mistakes_give_one_line_and_exit_code_not_a_traceback(tmp_path: Path) -> None:
    runner = CliRunner()
    for args in (
        ["show", str(tmp_path)],
        ["resolve", str(tmp_path)],
        ["new", str(tmp_path / "x"), "--players", "alice"],
        ["new", str(tmp_path / "x"), "--players", "alice,bob", "--seed", "zz"],
        ["map", "atlantis"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code != 0, args
        assert "Traceback" not in result.output
        assert result.output.startswith("Error:"), result.output


def test_check_exit_codes_and_forecast(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    good = tmp_path / "alice.toml"
    good.write_text(skeleton(directory, "alice"))
    out = run("check", directory, good)
    assert "alice.toml: valid." in out and "place 21 on" in out
    bad = tmp_path / "bad.toml"
    bad.write_text(skeleton(directory, "alice").replace('armies = "rest"', "armies = 30"))
    out = run("check", directory, bad, code=1)
    assert "bad.toml line 8: too many armies placed: 30" in out
    before = snapshot(directory)
    run("check", directory, good, bad, code=1)
    assert snapshot(directory) == before


def test_check_with_a_view_file_needs_no_game_directory(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    view = report_dir(directory, 0) / "carol.view.json"
    orders = tmp_path / "carol.toml"
    orders.write_text(skeleton(directory, "carol"))
    assert "valid" in run("check", "--view", view, orders)
    orders.write_text(skeleton(directory, "carol").replace('"rest"', "1"))
    assert "armies placed, but your setup armies are" in run(
        "check", "--view", view, orders, code=1
    )


def test_resolve_refuses_while_orders_are_missing(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    result = CliRunner().invoke(main, ["resolve", str(directory)])
    assert result.exit_code == 1
    assert "no valid orders from alice" in result.output


def test_check_says_what_it_needs(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    view = report_dir(directory, 0) / "carol.view.json"
    assert "give at least one order file to check" in run("check", "--view", view, code=2)
    assert "give a game directory" in run("check", code=2)
    orders = tmp_path / "carol.toml"
    orders.write_text(skeleton(directory, "carol"))
    assert "carol.toml: valid." in run("check", orders, "--view", view)


def test_resolve_takes_the_files_given_and_names_those_it_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = new(tmp_path / "g")
    files = []
    for player in ("alice", "bob", "carol"):
        files.append(tmp_path / f"{player}.toml")
        files[-1].write_text(skeleton(directory, player))
    junk = tmp_path / "zz-junk.toml"
    junk.write_text("this is not an order file\n")
    out = run("resolve", directory, *files, junk)
    assert "rejected: zz-junk.toml" in out
    assert "the setup turn, turn 0 (resolution 1, history/0001.toml)" in out
    assert "interrupted earlier" not in out
    assert out.splitlines()[-1] == f"Reports: {report_dir(directory, 1)}"
    for player in ("alice", "bob", "carol"):
        orders = attacking(skeleton(directory, player))
        (directory / "orders" / f"{player}.toml").write_text(orders)
    stopped_after_the_history(directory, monkeypatch)
    out = run("resolve", directory)
    assert out.startswith(
        "Completed turn 1 (resolution 2, history/0002.toml), interrupted earlier.\n"
    ), out


def test_resolve_dice_audit_map_odds(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    for player in ("alice", "bob", "carol"):
        (directory / "orders" / f"{player}.toml").write_text(skeleton(directory, player))
    out = run("resolve", directory)
    assert "the setup turn, turn 0 (resolution 1, history/0001.toml)" in out and "awaits" in out
    dice = json.loads(run("dice", directory, "--json"))
    assert [d["resolution"] for d in dice] == [0, 1]
    assert dice[0]["key"] == read_game(directory).key(0).hex()
    assert "resolution 0" in run("dice", directory)
    assert run("audit", directory).startswith(
        "audit passed: the deal to the setup turn replayed (2 resolutions"
    )
    assert "41.7%" in run("odds", "2", "1")
    assert "Alaska" in run("map")


def test_map_json_agrees_with_the_printed_board() -> None:
    data = json.loads(run("map", "--json"))
    board = load_board()
    assert data["name"] == "classic" and data["wild_cards"] == 2
    assert {c: v["bonus"] for c, v in data["continents"].items()} == {
        "North America": 5,
        "South America": 2,
        "Europe": 5,
        "Africa": 3,
        "Asia": 7,
        "Australia": 2,
    }
    assert list(data["territories"]) == list(board.names)
    borders = {frozenset((t, n)) for t, v in data["territories"].items() for n in v["neighbours"]}
    assert len(borders) == 83
    for pair in (
        ("Alaska", "Kamchatka"),
        ("Greenland", "Iceland"),
        ("Brazil", "North Africa"),
        ("Southern Europe", "Egypt"),
        ("Siam", "Indonesia"),
    ):
        assert frozenset(pair) in borders
    kinds = [v["card"] for v in data["territories"].values()]
    assert sorted({k: kinds.count(k) for k in kinds}.items()) == [
        ("artillery", 14),
        ("cavalry", 14),
        ("infantry", 14),
    ]


def test_show_dice_and_stats_print_what_they_read_as_written(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    run("new", directory, "--players", "zoë,bob,cy", "--seed", SEED.hex())
    table = run("show", directory)
    assert table.splitlines()[0].startswith("g: setup, turn 0, awaiting ")
    assert "\nNorth America (+5)\n" in table and table.endswith(".\n")
    assert not table.endswith("\n\n")
    for args in (["show", directory, "--json"], ["stats", directory, "--json"]):
        out = run(*args)
        assert (
            "zoë" in out and out == json.dumps(json.loads(out), indent=2, ensure_ascii=False) + "\n"
        )
    out = run("dice", directory, "--json")
    assert out == json.dumps(json.loads(out), indent=2) + "\n"
    assert "there is no player 'zed' in this game" in run(
        "show", directory, "--player", "zed", code=1
    )
    assert "there is no turn 0 in the history" in run("dice", directory, "--turn", "0", code=1)
    assert "Invalid value for '--turn'" in run("dice", directory, "--turn", "-1", code=2)
    story = run("stats", directory)
    assert story.startswith("The game so far: 0 turns.\n\nWho fell\n  Nobody yet.\n")
    view = report_dir(directory, 0) / "bob.view.json"
    assert run("stats", "--view", view) == story
    assert "is a directory" in run("stats", "--view", tmp_path, code=2)
    for args in ([], [directory, "--view", view]):
        out = run("stats", *args, code=1)
        assert out == "Error: give a game directory or --view FILE (one of them)\n"


def test_map_prints_how_names_are_read_then_each_continent() -> None:
    lines = run("map").splitlines()
    assert lines[:3] == [
        "Orders accept each name in any case, with or without spaces, hyphens and dots,",
        "and the other names given after 'also'.",
        "North America (+5)",
    ]
    assert "Australia (+2)" in lines
    out = run("map", "--json")
    assert out == json.dumps(json.loads(out), indent=2) + "\n"


def test_odds_take_the_smallest_armies_and_dice_and_refuse_fewer() -> None:
    assert run("odds", "1", "1").startswith("1 against 1: takes it 0.0% of the time")
    assert run("odds", "3", "1", "--stop-at", "1").startswith("3 against 1: takes it 75.4%")
    assert "(at most 1 die)" in run("odds", "2", "1", "--dice", "1")
    assert "(at most 3 dice)" in run("odds", "4", "1", "--dice", "3")
    for args in (["0", "1"], ["1", "0"], ["2", "1", "--stop-at", "0"]):
        assert "Invalid value" in run("odds", *args, code=2), args
    for dice in ("0", "4"):
        assert "Invalid value for '--dice'" in run("odds", "2", "1", "--dice", dice, code=2)
    assert "many armies. [default: 1; x>=1]" in " ".join(run("odds", "--help").split())


def test_kit_says_where_it_wrote_and_how_big(tmp_path: Path) -> None:
    lines = run("kit", tmp_path).splitlines()
    path = tmp_path / "pbem-player.pyz"
    assert lines == [
        f"Wrote {path} ({path.stat().st_size // 1024} KiB): players run it with",
        "  python3 pbem-player.pyz check --view NAME.view.json ORDERS.toml",
    ]


@pytest.mark.parametrize(("size", "kib"), [(1023, 0), (1024, 1), (2047, 1), (2048, 2)])
def test_the_kits_size_is_told_in_whole_kib(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, kib: int
) -> None:
    from pbem import kit

    def write(directory: Path) -> Path:
        path = directory / kit.KIT_NAME
        path.write_bytes(b"k" * size)
        return path

    monkeypatch.setattr(kit, "write_kit", write)
    assert f"pbem-player.pyz ({kib} KiB)" in run("kit", tmp_path)


@pytest.mark.parametrize("setup", ["deal", "random"])
def test_python_m_pbem_runs(tmp_path: Path, setup: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pbem",
            "new",
            str(tmp_path / "g"),
            "--players",
            "a,b,c",
            "--setup",
            setup,
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "Created game" in result.stdout


def test_unreadable_order_files_are_named_not_tracebacks(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00orders")
    missing = tmp_path / "missing.toml"
    view = report_dir(directory, 0) / "alice.view.json"
    for args in (["check", directory, binary, missing], ["check", "--view", view, binary, missing]):
        out = run(*args, code=1)
        assert "binary.toml: this is not a text file in UTF-8" in out
        assert "missing.toml: no such file" in out


def _edit_game(directory: Path, old: str, new: str) -> None:
    path = directory / "game.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("old", "replacement", "reason"),
    [
        ("current = 0", "current = 7", "current seat 7"),
        ("chain_length = 4096", "chain_length = 0", "chain_length 0"),
        ("resolution = 1", "resolution = -1", "resolution -1"),
        ("hand = []", "hand = [5]", "cards in the hands"),
        ('Alaska = [\n    "bob",\n    1,', 'Alaska = [\n    "bob",\n    0,', "holds 0 armies"),
    ],
)
def test_a_damaged_game_file_is_refused_by_every_command(
    tmp_path: Path, old: str, replacement: str, reason: str
) -> None:
    directory = tmp_path / "g"
    run("new", directory, "--players", "alice,bob,carol", "--seed", SEED.hex(), "--setup", "random")
    if "Alaska" in old:
        owner = read_game(directory).state.owner("Alaska")
        old = old.replace("bob", owner)
        replacement = replacement.replace("bob", owner)
    _edit_game(directory, old, replacement)
    before = snapshot(directory)
    for args in (["show", directory], ["resolve", directory], ["audit", directory]):
        result = CliRunner().invoke(main, [str(a) for a in args])
        assert result.exit_code == 1, (args, result.output)
        assert "Traceback" not in result.output
        assert "damaged" in result.output and reason in result.output, result.output
    assert snapshot(directory) == before


def test_an_error_of_several_lines_is_printed_line_by_line(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    lines = run("resolve", directory, code=1).splitlines()
    assert lines[0].startswith("Error: no valid orders from ")
    assert sorted(line.removeprefix("Error: ") for line in lines) == [
        f"no valid orders from {player} for turn 0" for player in ("alice", "bob", "carol")
    ]


def test_a_disk_fault_no_library_function_foresaw_is_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from pbem.game import processor

    directory = new(tmp_path / "g")

    def broken(*args: object) -> None:
        raise OSError(errno.EIO, "Input/output error", str(directory / "game.toml"))

    monkeypatch.setattr(processor, "audit_game", broken)
    out = run("audit", directory, code=1)
    assert out.startswith(f"Error: cannot use {directory / 'game.toml'}: "), out
    assert "Traceback" not in out


def test_a_game_directory_that_is_a_file_is_refused(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    for command in ("show", "resolve", "audit", "undo", "release"):
        assert "is a file" in run(command, directory / "game.toml", code=2), command


def test_a_time_from_the_clock_is_taken_to_the_second(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    run("new", directory, "--players", "alice=alice@example.org,bob=bob@example.org")
    run("mail", "resend", directory, "--player", "alice")
    with contextlib.closing(sqlite3.connect(directory / "mail" / "ledger.sqlite")) as ledger:
        rows = ledger.execute("SELECT value FROM entries WHERE section = 'resent'").fetchall()
    (record,) = [json.loads(value) for (value,) in rows]
    assert "." not in record["at"] and record["at"].endswith("+00:00"), record


def test_resolve_refuses_a_history_with_a_gap(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    (directory / "history" / "0000.toml").unlink()
    out = CliRunner().invoke(main, ["resolve", str(directory)]).output
    assert "history/0000.toml is missing" in out


def test_commands_on_a_missing_directory_say_so(tmp_path: Path) -> None:
    for args in (["resolve"], ["mail", "send"], ["show"], ["audit"]):
        result = CliRunner().invoke(main, [*args, str(tmp_path / "nowhere")])
        assert result.exit_code == 1 and "not a game directory" in result.output, result.output
    result = CliRunner().invoke(main, ["new", "/dev/null/x", "--players", "a,b"])
    assert result.exit_code == 1 and "cannot create" in result.output


def test_new_checks_addresses_and_game_names(tmp_path: Path) -> None:
    for players, message in (
        ("a=not an address,b", "is not an email address"),
        ("a=x@example.org\nBcc: spy@example.org,b", "is not an email address"),
        ("a=x@example.org,b=x@example.org", "given for two players"),
    ):
        result = CliRunner().invoke(main, ["new", str(tmp_path / "g"), "--players", players])
        assert result.exit_code == 1 and message in result.output, result.output
    result = CliRunner().invoke(
        main, ["new", str(tmp_path / "g"), "--players", "a,b", "--name", "evil\nBcc: x"]
    )
    assert result.exit_code == 1 and "cannot be a game name" in result.output


def test_an_order_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    path = tmp_path / "alice.toml"
    path.write_bytes(b"\xef\xbb\xbf" + skeleton(directory, "alice").encode())
    assert "valid" in run("check", directory, path)


def test_dice_of_a_resolution_that_does_not_exist(tmp_path: Path) -> None:
    directory = new(tmp_path / "g")
    out = CliRunner().invoke(main, ["dice", str(directory), "--resolution", "9"]).output
    assert "there is no resolution 9" in out


def test_odds_refuse_what_would_take_too_long() -> None:
    result = CliRunner().invoke(main, ["odds", "3000", "3000"])
    assert result.exit_code == 1 and "up to 600 armies" in result.output


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_commands_page_turns_on_shell_completion(shell: str) -> None:
    """The lines docs/commands.md gives (the README links to it) turn completion on."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "commands.md").read_text()
    assert f"_PBEM_COMPLETE={shell}_source pbem" in page
    result = CliRunner().invoke(
        main, [], prog_name="pbem", env={"_PBEM_COMPLETE": f"{shell}_source"}
    )
    assert result.exit_code == 0
    assert "_PBEM_COMPLETE" in result.output and "Commands:" not in result.output


def test_every_command_is_loaded_from_where_the_group_says() -> None:
    from pbem.cli import COMMANDS

    assert sorted(main.commands) == sorted(COMMANDS)
    with click.Context(main) as ctx:
        for name in COMMANDS:
            command = main.get_command(ctx, name)
            assert command is not None and command.name == name


def test_a_lazy_command_that_is_not_there_says_so() -> None:
    from pbem.cli import LazyGroup

    group = LazyGroup(name="g", lazy_subcommands={"odds": "pbem.cli.tools:map_command"})
    with pytest.raises(TypeError, match="pbem.cli.tools:map_command is not the command 'odds'"):
        group.commands["odds"]
    with pytest.raises(KeyError):
        group.commands["nothing"]
    group.add_command(click.Command("odds"))
    assert group.commands["odds"].name == "odds" and len(group.commands) == 1
    del group.commands["odds"]
    assert list(group.commands) == []


def test_a_lazy_command_is_listed_until_taken_away_unloaded() -> None:
    from pbem.cli import LazyGroup

    group = LazyGroup(
        name="g", lazy_subcommands={"map": "pbem.cli.tools:map_command", "odds": "x:y"}
    )
    assert list(group.commands) == ["map", "odds"] and len(group.commands) == 2
    assert group.commands["map"].name == "map"
    assert list(group.commands) == ["map", "odds"] and len(group.commands) == 2
    del group.commands["odds"]
    assert list(group.commands) == ["map"] and len(group.commands) == 1
    with pytest.raises(KeyError):
        del group.commands["odds"]
    del group.commands["map"]
    assert list(group.commands) == [] and len(group.commands) == 0


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [("pbem ch", "1", "plain,check"), ("pbem check --v", "2", "plain,--view")],
)
def test_completion_finds_the_lazily_loaded_commands_and_their_options(
    words: str, cword: str, expected: str
) -> None:
    env = {"_PBEM_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": cword}
    result = CliRunner().invoke(main, [], prog_name="pbem", env=env)
    assert result.exit_code == 0 and result.output.split() == [expected]


def test_a_mistyped_command_is_answered_with_the_nearest_one() -> None:
    assert "Did you mean 'check'?" in run("chek", code=2)
