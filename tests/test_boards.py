"""Boards: the second board pbem ships, and a club's own board file (`pbem new --board FILE`):
checked with a clear reason, kept in the game directory, guarded by its digest, carried in the
players' views; a game on the second board played to the end through the command line, with
its mail."""

from __future__ import annotations

import json
import random
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bots import orders_for
from click.testing import CliRunner
from conftest import write_skeletons
from test_mail import into_maildir, message

from pbem.cli import main
from pbem.core.board import load_board
from pbem.core.state import Phase
from pbem.records.opening import read_game

ISLANDS = (Path(__file__).parent.parent / "pbem" / "core" / "boards" / "islands.toml").read_text()
OWN = ISLANDS.replace('name = "islands"', 'name = "our-islands"')
NOW = "2027-03-01T12:00Z"
START = datetime(2027, 3, 1, 12, 0, tzinfo=timezone.utc)


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def new(directory: Path, board: str | Path, *more: str, code: int = 0) -> str:
    return run(
        "new", directory, "--players", "ann,ben,cy", "--board", board,
        "--seed", "22" * 32, "--now", NOW, *more, code=code,
    )  # fmt: skip


# --- a board file that is not a board is refused, saying why -------------------------------------


def swap(old: str, new: str, count: int = -1) -> str:
    """The club's board with one change."""
    assert old in OWN
    return OWN.replace(old, new, count)


DAWNSPIRE = 'continent = "The East"\ncard = "infantry"\nneighbours = ["Redcliff", "Emberhold"]'
FAR_ISLE = '\n[continents."Far Isle"]\nbonus = 1\n' + "".join(
    f'\n[territories."{a}"]\ncontinent = "Far Isle"\ncard = "infantry"\n'
    f'neighbours = ["{b}"]\nposition = [500, 600]\n'
    for a, b in (("Farpoint", "Lonehaven"), ("Lonehaven", "Farpoint"))
)
TINY = "\n".join(
    ['name = "tiny"', "wild_cards = 0", "width = 100", "height = 100", "[continents.A]"]
    + ["bonus = 1"]
    + [
        f'[territories.T{i}]\ncontinent = "A"\ncard = "infantry"\nneighbours = ["T{1 - i}"]\n'
        "position = [1, 1]"
        for i in range(2)
    ]
)
BAD = [
    ("not toml", "name = \n", "is not valid TOML"),
    (
        "one-sided border",
        swap('"Icefjord", "Greenvale", "Riverbend"]', '"Icefjord", "Greenvale"]'),
        "'Riverbend' borders 'Frostmark' but 'Frostmark' does not border it",
    ),
    (
        "empty continent",
        OWN + '\n[continents."The Void"]\nbonus = 1\n',
        "continent 'The Void' has no territories",
    ),
    ("not connected", OWN + FAR_ISLE, "cannot be reached from 'Frostmark'"),
    (
        "too few of a kind",
        swap('card = "artillery"', 'card = "infantry"', 5),
        "the cards show too few artillery",
    ),
    (
        "a name twice",
        swap(
            "aliases = []\nposition = [300, 70]", 'aliases = ["Frost Mark"]\nposition = [300, 70]'
        ),
        "clashes with 'Frostmark'",
    ),
    (
        "off the canvas",
        swap("position = [840, 480]", "position = [9999, 480]"),
        "'Dawnspire' is positioned off the map",
    ),
    ("no continent", swap(DAWNSPIRE, DAWNSPIRE.replace("The East", "Atlantis")), "Dawnspire"),
    ("unknown card", swap('card = "cavalry"', 'card = "dragon"', 1), "unknown card kind 'dragon'"),
    ("pbem's own name", ISLANDS, "as pbem's own board: give it a name of its own"),
    (
        "a bad name",
        swap('name = "our-islands"', 'name = "Our Islands"'),
        "must be lower-case letters",
    ),
    ("a control character", swap('"Dawnspire"', '"Dawn\\u0007spire"'), "printable characters"),
    ("the wild card's name", swap('"Dawnspire"', '"Wild"'), "is a word pbem keeps"),
    ("too small", TINY, "has 2 territories; a board has 6 to 100"),
    ("an order word", swap('"Dawnspire"', '"Rest"'), "is a word pbem keeps"),
    ("a double quote", swap('"Dawnspire"', '"Dawn\\"spire"'), "holds a double quote"),
]


@pytest.mark.parametrize(("kind", "text", "said"), BAD, ids=[b[0] for b in BAD])
def test_a_board_file_that_is_not_a_board_is_refused_with_its_reason(
    tmp_path: Path, kind: str, text: str, said: str
) -> None:
    board = tmp_path / "board.toml"
    board.write_text(text)
    out = new(tmp_path / "game", board, code=1)
    assert said in out and "Traceback" not in out, (kind, out)
    assert not (tmp_path / "game" / "game.toml").exists()


def test_a_huge_board_file_is_not_read(tmp_path: Path) -> None:
    board = tmp_path / "board.toml"
    board.write_text(OWN + "#" * (300 * 1024))
    out = new(tmp_path / "game", board, code=1)
    assert "cannot read the board" in out and "at most 256 KiB are read" in out


def test_a_board_too_small_for_the_players_and_missions_off_the_classic_board_are_refused(
    tmp_path: Path,
) -> None:
    ring = ["Ash", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Gum", "Hazel", "Ivy"]
    small = tmp_path / "grove.toml"
    small.write_text(
        'name = "grove"\nwild_cards = 0\nwidth = 100\nheight = 100\n'
        '[continents."Grove"]\nbonus = 2\n'
        + "".join(
            f'[territories."{t}"]\ncontinent = "Grove"\n'
            f'card = "{("infantry", "cavalry", "artillery")[i % 3]}"\n'
            f'neighbours = ["{ring[i - 1]}", "{ring[(i + 1) % 9]}"]\nposition = [{i * 10}, 50]\n'
            for i, t in enumerate(ring)
        )
    )
    out = run("new", tmp_path / "g", "--players", "a,b,c,d", "--board", small, code=1)
    assert "has 9 territories: too few for 4 players (at least 3 territories each)" in out
    run("new", tmp_path / "g3", "--players", "a,b,c", "--board", small)  # three fit
    out = new(tmp_path / "m", "islands", "--missions", code=1)
    assert "Secret Mission Risk's cards name the classic board's continents" in out
    assert "there is no board 'atlantis'" in new(tmp_path / "a", "atlantis", code=1)


# --- a club's own board, kept with the game ------------------------------------------------------


def test_a_clubs_own_board_is_kept_with_the_game_and_guarded_by_its_digest(
    tmp_path: Path,
) -> None:
    source = tmp_path / "our.toml"
    source.write_text(OWN)
    game = tmp_path / "game"
    new(game, source)
    source.unlink()  # the game needs nothing outside its directory
    assert (game / "board.toml").read_text() == OWN
    assert 'board_digest = "' in (game / "game.toml").read_text()
    state = read_game(game).state
    assert state.board.name == "our-islands" and len(state.board.names) == 22
    run("audit", game)
    view = json.loads(next((game / "reports").glob("0000-*/ann.view.json")).read_text())
    assert view["board"] == "our-islands" and view["board_file"] == OWN
    # the player's check works from the view alone, the board in it
    ready = next((game / "reports").glob("0000-*/*.orders.toml"))
    viewed = ready.parent / f"{ready.name.split('.')[0]}.view.json"
    assert "valid" in run("check", "--view", viewed, ready).lower()
    (game / "board.toml").write_text(OWN.replace("bonus = 2", "bonus = 9"))
    out = run("show", game, code=1)
    assert "is not the board this game began with" in out and "board.toml" in out
    (game / "board.toml").unlink()
    assert "the game's own board" in run("show", game, code=1)


def test_a_game_on_the_classic_board_has_no_board_file_and_no_digest(tmp_path: Path) -> None:
    new(tmp_path / "g", "classic")
    assert not (tmp_path / "g" / "board.toml").exists()
    assert "board_digest" not in (tmp_path / "g" / "game.toml").read_text()
    view = json.loads(next((tmp_path / "g" / "reports").glob("0000-*/ann.view.json")).read_text())
    assert "board_file" not in view


# --- a whole game on the second board, by mail ---------------------------------------------------


def test_a_game_on_the_islands_is_played_to_its_end_by_mail(tmp_path: Path) -> None:
    """Two players on the islands, each turn's orders mailed in (a Maildir), fetched, resolved
    and the reports mailed out (the outbox), until the game is over; then it audits."""
    game = tmp_path / "isles"
    players = "ann=ann@example.org,ben=ben@example.org"
    run("new", game, "--players", players, "--board", "islands", "--seed", "33" * 32, "--now", NOW)
    rng = random.Random(3)
    for r in range(150):
        state = read_game(game).state
        if state.phase is Phase.OVER:
            break
        letters = []
        for name in state.awaiting():
            reg = read_game(game).registration(name)
            assert reg is not None
            text = (
                orders_for(state, name, rng)
                .to_toml()
                .replace('secret = "x"', f'secret = "{reg.secret}"')
            )
            letters.append(
                message(f"{name}@example.org", text, mid=f"<r{r}.{name}@test>", minutes=r)
            )
        box = into_maildir(tmp_path / f"box{r}", letters)
        now = (START + timedelta(hours=r + 1)).isoformat()
        fetched = run("mail", "fetch", game, "--maildir", box, "--now", now)
        assert "rejected" not in fetched.split("read:")[-1] or " 0 rejected" in fetched, fetched
        run("resolve", game, "--now", now)
        run("mail", "send", game, "--now", now)
        shutil.rmtree(box)
    final = read_game(game).state
    assert final.phase is Phase.OVER and final.board.name == "islands"
    run("audit", game)
    mailed = list((game / "outbox").glob("r*.eml"))
    assert len(mailed) >= 2 * final.resolution - 2  # every resolution's reports, to both
    text = next(iter(sorted((game / "reports").iterdir())[-1].glob("ann.txt"))).read_text()
    assert "This game's rules: played on the board islands." in " ".join(text.split())
    svg = next(iter(sorted((game / "reports").iterdir())[-1].glob("ann.html"))).read_text()
    assert all(t in svg for t in ("Frostmark", "Dawnspire")) and "Alaska" not in svg
    assert load_board("islands").names == final.board.names


def test_a_board_too_large_for_every_seat_to_have_armies_left_is_refused(tmp_path: Path) -> None:
    """101 territories: six players of 20 armies would be dealt 17 each, fewer than 20, but the
    board is over the largest that keeps that true for every number of players."""
    names = [f"Plot {i}" for i in range(101)]
    big = tmp_path / "big.toml"
    big.write_text(
        'name = "big"\nwild_cards = 2\nwidth = 1000\nheight = 1000\n'
        '[continents."Land"]\nbonus = 5\n'
        + "".join(
            f'[territories."{t}"]\ncontinent = "Land"\n'
            f'card = "{("infantry", "cavalry", "artillery")[i % 3]}"\n'
            f'neighbours = ["{names[i - 1]}", "{names[(i + 1) % 101]}"]\n'
            f"position = [{i * 9}, {i * 9}]\n"
            for i, t in enumerate(names)
        )
    )
    out = new(tmp_path / "g", big, code=1)
    assert "has 101 territories; a board has 6 to 100" in out


def test_verify_with_a_text_report_of_another_board_says_to_give_the_view(
    tmp_path: Path,
) -> None:
    game = tmp_path / "isles"
    run("new", game, "--players", "ann,ben", "--board", "islands", "--seed", "55" * 32)
    for _ in range(2):  # the setup turn, then turn 1, whose dice follow its order file
        write_skeletons(game)
        run("resolve", game)
    used = next((game / "orders" / "done").glob("0002/*.toml"))
    report = next((game / "reports").glob(f"0002-*/{used.stem}.txt"))
    out = run("verify", "--report", report, "--orders", used, code=1)
    assert "give its view file (NAME.view.json) as the report" in " ".join(out.split())
