"""Seats played by a program (`pbem seat DIR PLAYER --bot ...`): the bot answers when the seat
is awaited, from the seat's view file only; its orders are checked as a person's; a bot that
fails gets the autopilot's orders; the audit replays a game without running any bot."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from pbem.cli import main
from pbem.game import bots
from pbem.game.audit import audit_game
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

SEED = "0c" * 32
T0 = "2027-03-01T10:00:00+00:00"

BOT = textwrap.dedent(
    """\
    import json, os, sys
    from pathlib import Path
    given = sys.stdin.read()
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(given)
    view = json.loads(given)
    me = view["player"]
    mine = sorted(t for t, h in view["territories"].items() if h["owner"] == me)
    print(f'game = "{view["game"]}"')
    print(f'turn = {view["turn"]}')
    print(f'player = "{me}"')
    print(f'secret = "{os.environ["PBEM_SECRET"]}"')
    print()
    print("[[place]]")
    print(f'territory = "{mine[0]}"')
    print('armies = "rest"')
    """
)


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def d(tmp_path: Path) -> Path:
    d = tmp_path / "g"
    run("new", d, "--players", "alice,bob,dave", "--seed", SEED, "--now", T0)
    return d


def program(tmp_path: Path, text: str) -> str:
    script = tmp_path / "bot.py"
    script.write_text(text)
    return f"{sys.executable} {script}"


def humans(d: Path, *players: str) -> None:
    """The awaited people send their ready order files."""
    game = read_game(d)
    folder = report_dir(d, game.state.resolution - 1)
    for p in players or game.state.awaiting():
        if p != "dave" and p in game.state.awaiting():
            (d / "orders" / f"{p}.toml").write_text((folder / f"{p}.orders.toml").read_text())


def test_the_reference_bot_plays_its_seat_through_the_checked_path(d: Path) -> None:
    out = run("seat", d, "dave", "--bot", "reference")
    assert (
        out == "dave's seat is played by the bot reference.\ndave's bot wrote orders/dave.toml.\n"
    )
    text = (d / "orders" / "dave.toml").read_text()
    assert text.startswith("# Written by the bot 'reference' for turn 0, from 0000-deal/dave")
    assert 'bot = "reference"' in (d / "game.toml").read_text()
    played = 0
    for turn in range(12):
        humans(d)
        out = run("resolve", d, "--now", f"2027-03-{2 + turn:02d}T10:00:00+00:00")
        state = read_game(d).state
        if "dave" in state.awaiting():
            assert "dave's bot wrote orders/dave.toml" in out
            assert (d / "orders" / "dave.toml").is_file()
        record = read_history(d, state.resolution - 1)
        played += any(o.player == "dave" and "Written by the bot" in o.text for o in record.orders)
        if state.phase.value == "over":
            break
    assert played >= 2
    assert not any(o.autopilot for r in range(1, read_game(d).state.resolution)
                   for o in read_history(d, r).orders)  # fmt: skip
    path = d / "game.toml"
    path.write_text(path.read_text().replace('bot = "reference"', 'bot = "/no/such/bot"'))
    assert audit_game(d).resolutions == read_game(d).state.resolution  # the bot is not run


def test_a_bot_of_the_clubs_own_is_given_the_seats_view_only(d: Path, tmp_path: Path) -> None:
    run("seat", d, "dave", "--bot", program(tmp_path, BOT) + f" {tmp_path / 'given.txt'}")
    given = (tmp_path / "given.txt").read_text()
    assert given == (report_dir(d, 0) / "dave.view.json").read_text()
    view = json.loads(given)
    assert [p for p in view["players"] if "hand" in p] == [
        p for p in view["players"] if p["name"] == "dave"
    ]
    game = read_game(d)
    for reg in game.registrations:
        if reg.name != "dave":
            assert reg.secret not in given
    text = (d / "orders" / "dave.toml").read_text()
    assert "# Written by the bot" in text and 'armies = "rest"' in text
    humans(d)
    run("resolve", d, "--now", "2027-03-02T10:00Z")
    assert audit_game(d).resolutions == 2


@pytest.mark.parametrize(
    ("script", "why"),
    [
        ("import sys; sys.exit('no idea')", "it stopped with exit code 1: no idea"),
        ("print('game = 3')", "its orders were refused"),
        ("import time; time.sleep(30)", "it gave no answer within 0.5 seconds"),
        ("import sys; sys.stdout.buffer.write(b'\\xff\\xfe')", "what it wrote is not UTF-8 text"),
        ("print('x' * 70000)", "it wrote more than 64 KiB"),
    ],
)
def test_a_bot_that_fails_gets_the_autopilots_orders_and_the_moderator_is_told(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str, why: str
) -> None:
    monkeypatch.setattr(bots, "BOT_SECONDS", 0.5)
    out = run("seat", d, "dave", "--bot", program(tmp_path, script))
    assert f"dave's bot failed ({why}" in out
    assert "the autopilot's orders are in orders/dave.toml" in out
    text = (d / "orders" / "dave.toml").read_text()
    assert text.startswith("# The bot '")
    assert "the autopilot's orders instead" in text
    humans(d)
    run("resolve", d, "--now", "2027-03-02T10:00Z")
    assert audit_game(d).resolutions == 2


def test_a_bot_that_cannot_be_started_is_told_too(d: Path) -> None:
    out = run("seat", d, "dave", "--bot", "/no/such/program --fast")
    assert "dave's bot failed (it cannot be started: No such file or directory)" in out


def test_a_seat_given_back_to_a_person_is_not_answered_for(d: Path) -> None:
    run("seat", d, "dave", "--bot", "reference")
    (d / "orders" / "dave.toml").unlink()
    out = run("seat", d, "dave", "--person")
    assert out == "dave's seat is played by a person.\n"
    assert not (d / "orders" / "dave.toml").exists()
    assert "bot" not in (d / "game.toml").read_text().split("[state]")[0]
    assert "played by a person already" in run("seat", d, "dave", "--person", code=1)
    assert "give either --bot BOT or --person" in run("seat", d, "dave", code=1)
    assert "there is no seat 'erin' in this game" in run("seat", d, "erin", "--bot", "x", code=1)


def test_a_run_stopped_before_its_bot_answered_is_answered_by_the_next_resolve(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("seat", d, "dave", "--bot", "reference")
    humans(d)
    run("resolve", d, "--now", "2027-03-02T10:00Z")
    state = read_game(d).state
    while "dave" not in state.awaiting():
        humans(d)
        run("resolve", d, "--now", "2027-03-03T10:00Z")
        state = read_game(d).state
    (d / "orders" / "dave.toml").unlink()  # as if the run had stopped before the bot answered
    out = run("resolve", d, "--now", "2027-03-04T10:00Z")
    assert "Resolved" in out
    record = read_history(d, state.resolution)
    assert [o.player for o in record.orders] == ["dave"]
    assert "Written by the bot 'reference'" in record.orders[0].text


def test_a_bot_an_installed_package_names_plays_in_pbems_process(
    d: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from importlib import metadata

    found = [
        metadata.EntryPoint("steady", "pbem.core.autopilot:autopilot_orders", bots.ENTRY_POINTS),
        metadata.EntryPoint("broken", "pbem.core.odds:forecast", bots.ENTRY_POINTS),
    ]

    def entry_points(group: str) -> list[metadata.EntryPoint]:
        return [e for e in found if e.group == group]

    monkeypatch.setattr(metadata, "entry_points", entry_points)
    out = run("seat", d, "dave", "--bot", "steady")
    assert "dave's bot wrote orders/dave.toml" in out
    assert (d / "orders" / "dave.toml").read_text().startswith("# Written by the bot 'steady'")
    (d / "orders" / "dave.toml").unlink()
    out = run("seat", d, "dave", "--bot", "broken")  # called with the wrong arguments
    assert "dave's bot failed (it failed: " in out


def orders_bot(tmp_path: Path, before: str = "", after: str = "", player: str = "") -> str:
    """A club's bot that places every army on its first territory, with `before` and `after`
    run around it (and, given `player`, orders naming that player instead)."""
    body = BOT.replace('me = view["player"]', f'me = "{player}" or view["player"]')
    body = body.replace("view = json.loads(given)", "view = json.loads(given)\n" + before)
    return program(tmp_path, body + after)


def test_a_bots_orders_for_another_seat_are_refused(d: Path, tmp_path: Path) -> None:
    out = run("seat", d, "dave", "--bot", orders_bot(tmp_path, player="alice"))
    assert "dave's bot failed (its orders were refused: " in out


def test_a_bot_is_given_no_mail_password_and_no_other_file(
    d: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "hunter2")
    monkeypatch.setenv("PBEM_IMAP_PASSWORD", "hunter3")
    seen = tmp_path / "seen.json"
    spy = f"Path({str(seen)!r}).write_text(json.dumps([dict(os.environ), os.listdir('.')]))"
    out = run("seat", d, "dave", "--bot", orders_bot(tmp_path, before=spy))
    assert "dave's bot wrote orders/dave.toml" in out
    environment, listing = json.loads(seen.read_text())
    assert set(environment) <= {"PATH", "HOME", "LANG", "PBEM_VIEW", "PBEM_SECRET", "LC_CTYPE"}
    assert "hunter2" not in seen.read_text() and "hunter3" not in seen.read_text()
    assert listing == ["view.json"]


@pytest.mark.parametrize("value", ['python3 \\"unclosed', "python3\\u0000x", "reference "])
def test_an_odd_bot_in_the_game_file_is_a_sentence(d: Path, value: str) -> None:
    run("seat", d, "dave", "--bot", "reference")
    path = d / "game.toml"
    path.write_text(path.read_text().replace('bot = "reference"', f'bot = "{value}"'))
    out = run("resolve", d, "--now", "2027-03-02T10:00Z", code=1)
    assert "the bot of the seat 'dave' must be a bot's name or a command line" in out


def test_pbem_run_lets_a_bot_answer_that_a_stopped_run_left(d: Path) -> None:
    from pbem.club.batch import run_game
    from pbem.records import clock

    run("seat", d, "dave", "--bot", "reference")
    (d / "orders" / "dave.toml").unlink()
    humans(d)
    done = run_game(d, clock.parse_instant("2027-03-02T10:00:00+00:00"))
    assert done.result.value == "resolved", done


def test_a_refused_file_of_a_bot_seat_does_not_silence_its_bot(d: Path) -> None:
    run("seat", d, "dave", "--bot", "reference")
    (d / "orders" / "dave.toml").write_text('game = "g"\nturn = 99\n')
    humans(d)
    out = run("resolve", d, "--now", "2027-03-02T10:00Z")
    assert "dave's bot wrote orders/dave.toml" in out
    assert read_game(d).state.resolution == 2


def test_after_an_undo_the_bot_answers_the_position_played_again(d: Path) -> None:
    import hashlib

    from pbem.core.autopilot import autopilot_orders

    run("seat", d, "dave", "--bot", "reference")
    for i in range(10):
        humans(d)
        run("resolve", d, "--now", f"2027-03-{2 + i:02d}T10:00Z")
        if read_game(d).state.awaiting() == ("dave",) and read_game(d).state.turn > 0:
            break
    run("undo", d, "--why", "other orders", "--now", f"2027-03-{3 + i:02d}T10:00Z")
    game = read_game(d)
    who = game.state.awaiting()[0]
    reg = game.registration(who)
    assert reg is not None
    (d / "orders" / f"{who}.toml").write_text(
        autopilot_orders(game.state, who, reg.secret).to_toml()
    )
    run("resolve", d, "--now", f"2027-03-{4 + i:02d}T10:00Z")
    game = read_game(d)
    view = report_dir(d, game.state.resolution - 1) / "dave.view.json"
    digest = hashlib.sha256(view.read_bytes()).hexdigest()
    assert digest in (d / "orders" / "dave.toml").read_text().splitlines()[0]


def test_a_substitute_takes_the_seat_from_its_bot(d: Path) -> None:
    run("seat", d, "dave", "--bot", "reference")
    run("substitute", d, "dave", "--to", "erin=erin@example.org", "--now", "2027-03-01T11:00Z")
    reg = read_game(d).registration("dave")
    assert reg is not None and reg.bot is None and reg.holder == "erin"


def test_a_bots_answer_with_a_byte_order_mark_or_near_the_limit(d: Path, tmp_path: Path) -> None:
    bom = orders_bot(tmp_path, before="sys.stdout.write('\\ufeff')")
    out = run("seat", d, "dave", "--bot", bom)
    assert "dave's bot wrote orders/dave.toml" in out
    assert (d / "orders" / "dave.toml").read_text().startswith("# Written by the bot")
    humans(d)
    run("resolve", d, "--now", "2027-03-02T10:00Z")
    run("seat", d, "bob", "--bot", orders_bot(tmp_path, after="print('#' * 65300)"))
    state = read_game(d).state
    if "bob" in state.awaiting():
        text = (d / "orders" / "bob.toml").read_text()
        assert "(it wrote more than an order file may hold (64 KiB))" in text


def test_a_bot_that_floods_its_errors_or_leaves_a_child_still_answers(
    d: Path, tmp_path: Path
) -> None:
    pid = tmp_path / "child.pid"
    noisy = "sys.stderr.write('x' * 20_000_000)"
    child = (
        "import subprocess\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"Path({str(pid)!r}).write_text(str(child.pid))\n"
    )
    out = run("seat", d, "dave", "--bot", orders_bot(tmp_path, before=noisy, after=child))
    assert "dave's bot wrote orders/dave.toml" in out, out
    assert not running(int(pid.read_text()))  # none outlives its answer


def running(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped does not), within a second."""
    import time

    for _ in range(20):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def test_a_bot_failing_at_the_start_of_a_resolve_is_told(d: Path) -> None:
    run("seat", d, "dave", "--bot", "/no/such/bot")
    (d / "orders" / "dave.toml").unlink()  # a run stopped before the bot answered
    humans(d)
    out = run("resolve", d, "--now", "2027-03-02T10:00Z")
    assert "dave's bot failed (it cannot be started" in out


def test_status_names_the_awaited_seats_a_bot_plays(d: Path) -> None:
    run("seat", d, "dave", "--bot", "reference")
    [game] = json.loads(run("status", d.parent, "--json"))
    assert sorted(game["awaiting"]) == ["alice", "bob", "dave"] and game["bots"] == ["dave"]
    table = run("status", d.parent)
    assert "bob, dave (bot), alice" in table
