"""Bounded work and damage confined: a FIFO where pbem reads a file, a game file nested too
deep, mail state files of the wrong shape and an address hand-edited to hold a line break are
each a sentence, and in a folder of games they stop only their own game.

A read that blocks fails the test (an alarm) instead of hanging the suite."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_skeletons
from test_hostile_files import never_hang  # noqa: F401 (a read that blocks fails the test)
from test_mail import (
    GAME,
    MODERATOR,
    NOW,
    Server,
    into_maildir,
    make_template,
    message,
    orders_for,
    run,
    running_server,
)

from pbem.core.state import Options
from pbem.game import processor

ALICE = "alice@example.org"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


@pytest.fixture
def game(made: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(made, tmp_path / GAME))


@pytest.fixture
def server() -> Iterator[Server]:
    yield from running_server()


def fetch(game: Path, *args: object, code: int = 0) -> str:
    return run(
        "mail", "fetch", game, *args, "--from", MODERATOR, "--now", NOW.isoformat(), code=code
    )


# --- FIFOs ------------------------------------------------------------------------------------


def test_a_fifo_in_a_maildir_is_refused_and_the_other_messages_read(game: Path) -> None:
    orders = orders_for(game, "alice")
    box = into_maildir(game.parent / "box", [message(ALICE, orders, mid="<o@t>")])
    os.mkfifo(box / "new" / "1800000099.M9P9.pipe")
    out = fetch(game, "--maildir", box)
    assert "accepted: <o@t>" in out
    assert "Maildir entry 1800000099.M9P9.pipe" in out
    assert "it is a named pipe (FIFO), not a regular file" in out
    again = fetch(game, "--maildir", box)  # recorded as read, like any unreadable entry
    assert "named pipe" not in again


def test_a_fifo_given_as_an_eml_file_is_refused(game: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "orders.eml"
    os.mkfifo(fifo)
    good = tmp_path / "good.eml"
    good.write_bytes(message(ALICE, orders_for(game, "alice"), mid="<g@t>").as_bytes())
    out = fetch(game, fifo, good)
    assert f"cannot read {fifo}: this is a named pipe (FIFO), not a regular file" in out
    assert "accepted: <g@t>" in out


@pytest.mark.parametrize("name", ["seen.json", "sent.json"])
def test_a_fifo_as_a_mail_state_file_is_a_sentence(game: Path, name: str) -> None:
    (game / "mail").mkdir(exist_ok=True)
    os.mkfifo(game / "mail" / name)
    box = into_maildir(game.parent / "box", [message(ALICE, "Hello", mid="<h@t>")])
    command = (
        ("mail", "fetch", game, "--maildir", box) if name == "seen.json" else ("mail", "send", game)
    )
    out = run(*command, "--now", NOW.isoformat(), code=1)
    assert f"cannot read {game / 'mail' / name}: this is a named pipe (FIFO)" in out
    assert "Traceback" not in out


# --- one damaged game in a folder of games ---------------------------------------------------


def two_games(tmp_path: Path, addresses: bool = False) -> Path:
    """A folder of two games, autumn and winter, their players with addresses or without."""
    root = tmp_path / "games"
    for name in ("autumn", "winter"):
        players = [(p, f"{p}@{name}.example" if addresses else "") for p in ("ann", "ben")]
        processor.new_game(root / name, players, Options(), seed=bytes(32), name=name)
    return root


def nested(depth: int) -> str:
    return "deep = " + "[" * depth + "]" * depth + "\n"


@pytest.mark.parametrize("damage", ["nested 1000 deep", "a FIFO"])
def test_one_damaged_game_file_is_one_damaged_game_of_the_folder(
    tmp_path: Path, damage: str
) -> None:
    root = two_games(tmp_path)
    game_file = root / "autumn" / "game.toml"
    if damage == "a FIFO":
        game_file.unlink()
        os.mkfifo(game_file)
    else:
        game_file.write_text(game_file.read_text() + nested(1000))
    status = run("status", root)
    (row,) = [line for line in status.splitlines() if " autumn " in line]
    assert row.startswith("damaged")
    assert "winter" in status and "Traceback" not in status
    done = run("run", root, code=1)
    assert "failed   autumn" in done and "waiting  winter" in done
    created = run("new", root / "spring", "--players", "cy,dee")
    assert "Created game 'spring'" in created


# --- damaged mail state files ----------------------------------------------------------------

DEEP = '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}"

DAMAGE = {
    "seen.json, messages a list": ("seen.json", {"messages": [], "accepted": {}}, "'messages'"),
    "seen.json, accepted a number": ("seen.json", {"messages": {}, "accepted": 5}, "'accepted'"),
    "seen.json, a message's record text": (
        "seen.json",
        {"messages": {"<h@t>": "read"}, "accepted": {}},
        "'messages'",
    ),
    "seen.json, an accepted date not a time": (
        "seen.json",
        {"messages": {}, "accepted": {"1/alice": {"date": 3}}},
        "'accepted'",
    ),
    "seen.json, the summary a number": ("seen.json", {"messages": {}, "to_tell": 3}, "'to_tell'"),
    "seen.json, the answers a list": ("seen.json", {"answered": [1]}, "'answered'"),
    "seen.json, nested too deep": ("seen.json", DEEP, "recursion"),
    "sent.json, reports a table": ("sent.json", {"reports": {}, "messages": {}}, "'reports'"),
    "sent.json, messages a list": ("sent.json", {"reports": [], "messages": []}, "'messages'"),
    "sent.json, a delivery record a number": (
        "sent.json",
        {"reports": [], "messages": {"x.eml": 3}},
        "'messages'",
    ),
    "sent.json, delivered a number": (
        "sent.json",
        {"reports": [], "messages": {"x.eml": {"delivered": 1}}},
        "'delivered'",
    ),
    "sent.json, reminders a number": ("sent.json", {"reminded": 2}, "'reminded'"),
    "sent.json, nested too deep": ("sent.json", DEEP, "recursion"),
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A game one turn in (a resolution to undo)."""
    directory = make_template(tmp_path_factory)
    write_skeletons(directory)
    processor.resolve_game(directory)
    return directory


def damaged(played: Path, tmp_path: Path, case: str) -> tuple[Path, Path, str]:
    name, data, said = DAMAGE[case]
    game = Path(shutil.copytree(played, tmp_path / GAME))
    (game / "mail").mkdir(exist_ok=True)
    state = game / "mail" / name
    state.write_text(data if isinstance(data, str) else json.dumps(data))
    return game, state, said


@pytest.mark.parametrize("case", DAMAGE)
def test_a_damaged_mail_state_file_is_a_sentence(played: Path, tmp_path: Path, case: str) -> None:
    game, state, said = damaged(played, tmp_path, case)
    box = into_maildir(tmp_path / "box", [message(ALICE, "Hello", mid="<h@t>")])
    commands = [("mail", "send", game), ("undo", game, "--why", "a test")]
    if state.name == "seen.json":
        commands.append(("mail", "fetch", game, "--maildir", box))
    for command in commands:
        out = run(*command, "--now", NOW.isoformat(), code=1)
        assert f"Error: {state} is damaged" in out and said in out, out
        assert "restore it from a backup" in out
    assert (game / "reports").is_dir() and len(list((game / "history").glob("*.toml"))) == 2


# --- an address hand-edited to hold a line break ---------------------------------------------


@pytest.mark.parametrize(
    "edited", ["ann@example.org\\r\\n", "ann@example.org\\r\\nBcc: evil@example.net"]
)
def test_a_line_break_in_an_address_stops_only_that_players_mail(
    tmp_path: Path, server: Server, edited: str
) -> None:
    root = two_games(tmp_path)
    game_file = root / "autumn" / "game.toml"
    text = game_file.read_text()
    assert text.count('email = ""') == 2
    game_file.write_text(
        text.replace('email = ""', f'email = "{edited}"', 1).replace(
            'email = ""', 'email = "ben@example.org"', 1
        )
    )
    winter = root / "winter" / "game.toml"
    winter.write_text(winter.read_text().replace('email = ""', 'email = "cy@example.org"', 1))
    out = run("mail", "send", root, "--smtp", server.spec)
    assert "ann's address is not one address" in out and "Traceback" not in out
    delivered = server.recorder.received
    recipients = sorted(r for _, rcpts, _ in delivered for r in rcpts)
    assert recipients == ["ben@example.org", "cy@example.org"]
    for msg in server.recorder.messages():
        assert msg["Subject"] and msg["To"] in ("ben@example.org", "cy@example.org")


@pytest.mark.parametrize("part", ["txt", "view.json"])
def test_a_fifo_among_a_games_reports_stops_only_that_games_mail(tmp_path: Path, part: str) -> None:
    root = two_games(tmp_path, addresses=True)
    (report,) = (root / "autumn" / "reports").glob(f"*/ann.{part}")
    report.unlink()
    os.mkfifo(report)
    out = run("mail", "send", root, code=1)
    assert f"failed: autumn: cannot read {report}: this is a named pipe (FIFO)" in out
    assert "winter: 2 messages wait in outbox/" in out


def test_a_fifo_in_orders_does_not_hang_an_undo(played: Path, tmp_path: Path) -> None:
    game = Path(shutil.copytree(played, tmp_path / GAME))
    (used,) = [p for p in (game / "orders" / "done").rglob("*.toml")][:1]
    os.mkfifo(game / "orders" / used.name)
    out = run("undo", game, "--why", "a test", "--now", NOW.isoformat())
    assert "Traceback" not in out
    assert (game / "orders" / f"{used.stem}-r0001.toml").read_bytes()


def test_a_held_file_nested_too_deep_is_read_as_undone(played: Path, tmp_path: Path) -> None:
    game = Path(shutil.copytree(played, tmp_path / GAME))
    (game / "history" / "held.toml").write_text(nested(1000))
    out = run("status", game)
    assert "undone" in out


def test_a_dot_file_in_a_maildir_is_no_message(game: Path) -> None:
    orders = orders_for(game, "alice")
    box = into_maildir(game.parent / "box", [message(ALICE, orders, mid="<o@t>")])
    (box / "cur" / ".gitkeep").write_bytes(b"")  # what a tool leaves to keep a folder
    (box / "new" / ".notes").write_bytes(b"From: x@y\n\nnot mail\n")
    out = fetch(game, "--maildir", box)
    assert "accepted: <o@t>" in out
    assert out.splitlines()[-1].startswith("spring-2027: 1 message read"), out
