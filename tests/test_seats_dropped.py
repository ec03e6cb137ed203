"""A seat dropped after missed turns, handed to a substitute within the turns the game allows:
back in the game with what is left of it, told to everyone, audited."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

import pytest
import tomli_w
from test_deadlines import ROME, SETUP_DUE, at, deadline, new, run, send
from test_mail import outbox

from pbem import mail
from pbem.core.events import Dropped, SeatTaken
from pbem.core.state import NEUTRAL, Phase
from pbem.errors import AuditError
from pbem.game.processor import audit_game
from pbem.records import seat_changes
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game

NEW = "dave@example.org"
AT = "2026-12-04T09:00:00+01:00"


def dropped_game(tmp_path: Path, *extra: str) -> Path:
    """alice, bob and carol; carol misses the setup turn and is dropped (after one miss)."""
    d = new(tmp_path / "g", *ROME, "--drop-after", "1", *extra)
    send(d, "alice", "bob")
    run("resolve", d, "--now", SETUP_DUE)
    game = read_game(d)
    assert game.state.player("carol").dropped and game.state.phase is Phase.PLAY
    return d


def play_turn(d: Path) -> None:
    """The player whose turn it is sends their ready file; the turn is resolved before its
    deadline."""
    send(d, read_game(d).state.current_player.name)
    run("resolve", d, "--now", at(deadline(d) - timedelta(hours=1)))


def test_a_dropped_seat_comes_back_with_its_neutral_territories(tmp_path: Path) -> None:
    d = dropped_game(tmp_path)
    before = read_game(d).state
    held = before.owned(NEUTRAL)
    out = run("substitute", d, "carol", "--to", f"dave={NEW}", "--why", "a standby", "--now", AT)
    assert f"dave took over carol's seat before turn 1, back in the game with {len(held)}" in out
    change = seat_changes.seat_changes(d)[-1]
    assert change.returned == held and len(held) == 14
    # the state waits for the next resolution, which tells it first and makes it so
    assert read_game(d).state == before
    # the new player's first report shows the seat as it comes back, with their secret
    text = " ".join((report_dir(d, 1) / "carol.txt").read_text().split())
    secret = read_game(d).registration("carol")
    assert secret is not None and secret.secret in text
    assert "dave took over carol's seat before turn 1: carol had left the game" in text
    assert "dave, you play the seat carol" in text
    mail.send_mail(d, kit=True)  # mailed to the new player, with the kit
    (name,) = [p.name for p in (d / "outbox").glob("*carol*.eml")]
    sent = outbox(d)[name]
    assert sent["To"] == NEW
    assert "pbem-player.pyz" in [p.get_filename() for p in sent.iter_attachments()]
    play_turn(d)
    after = read_game(d).state
    seat = after.player("carol")
    assert seat.alive and not seat.dropped and seat.hand == () and seat.missed == 0
    assert set(after.owned("carol")) == set(held)
    assert all(after.territories[t].armies == before.territories[t].armies for t in held)
    events = read_history(d, 2).events
    assert events[0] == SeatTaken("carol", "dave", "carol", 1, held)
    story = " ".join((report_dir(d, 2) / "alice.txt").read_text().split())
    assert "the seat is back with the 14 territories it held then that are still neutral" in story
    assert audit_game(d).resolutions == 3
    # the seat plays again when its turn comes
    for _ in range(3):
        if read_game(d).state.current_player.name == "carol":
            break
        play_turn(d)
    assert read_game(d).state.current_player.name == "carol"
    play_turn(d)
    assert read_history(d, read_game(d).state.resolution - 1).orders[0].player == "carol"
    assert audit_game(d)


def test_a_forged_return_fails_the_audit(tmp_path: Path) -> None:
    d = dropped_game(tmp_path)
    run("substitute", d, "carol", "--to", f"dave={NEW}", "--now", AT)
    play_turn(d)
    path = sorted((d / "history" / "seats").glob("*.toml"))[-1]
    record = tomllib.loads(path.read_text())
    record["returned"] = record["returned"][1:]  # one territory fewer given back
    path.write_text(tomli_w.dumps(record))
    with pytest.raises(AuditError) as refused:
        audit_game(d)
    assert "history/0002.toml" in str(refused.value)


def test_a_dropped_seat_is_refused_after_the_turns_the_game_allows(tmp_path: Path) -> None:
    d = dropped_game(tmp_path, "--substitute-within", "1")
    play_turn(d)
    play_turn(d)
    out = run("substitute", d, "carol", "--to", f"dave={NEW}", "--now", AT, code=1)
    assert "within 1 turns of the drop (pbem new --substitute-within)" in out
    assert not (d / "history" / "seats").exists() or not list((d / "history" / "seats").iterdir())


def test_a_game_may_hand_no_dropped_seat_over(tmp_path: Path) -> None:
    d = dropped_game(tmp_path, "--substitute-within", "0")
    out = run("substitute", d, "carol", "--to", f"dave={NEW}", "--now", AT, code=1)
    assert "this game hands no dropped seat to a new player" in out
    game = read_game(d)
    assert game.schedule is not None and game.schedule.substitute_within == 0


def test_the_default_window_is_six_turns_and_not_written(tmp_path: Path) -> None:
    d = dropped_game(tmp_path)
    game = read_game(d)
    assert game.schedule is not None and game.schedule.substitute_within == 6
    assert "substitute_within" not in (d / "game.toml").read_text()
    out = run("new", tmp_path / "x", "--players", "a,b", "--substitute-within", "2", code=1)
    assert "--substitute-within needs --turn-time" in out


def test_the_engine_gives_back_only_neutral_territories_of_a_dropped_seat(tmp_path: Path) -> None:
    from pbem.core import engine

    d = dropped_game(tmp_path)
    state = read_game(d).state
    mine = state.owned("alice")[0]
    with pytest.raises(ValueError, match="not a neutral territory"):
        engine.seat_taken(state, SeatTaken("carol", "dave", "carol", 1, (mine,)))
    with pytest.raises(ValueError, match="was not dropped"):
        engine.seat_taken(state, SeatTaken("bob", "dave", "bob", 1, (state.owned(NEUTRAL)[0],)))
    assert [e for e in read_history(d, 1).events if isinstance(e, Dropped)]


@pytest.mark.parametrize("within", ["-1", "1001"])
def test_a_window_out_of_range_is_refused_on_the_command_line(tmp_path: Path, within: str) -> None:
    out = run(
        "new",
        tmp_path / "g",
        "--players",
        "alice,bob,carol",
        *ROME,
        "--drop-after",
        "1",
        "--substitute-within",
        within,
        code=1,
    )
    assert f"--substitute-within must be a number of turns from 0 to 1000, not {within}" in out
    assert not (tmp_path / "g" / "game.toml").exists()


@pytest.mark.parametrize("within", [True, -1, 1001, "6"])
def test_a_window_out_of_range_in_the_game_file_is_a_sentence(
    tmp_path: Path, within: object
) -> None:
    d = dropped_game(tmp_path)
    data = tomllib.loads((d / "game.toml").read_text())
    data["deadlines"]["substitute_within"] = within
    (d / "game.toml").write_text(tomli_w.dumps(data))
    out = run("status", d, "--now", AT)  # (a damaged game is a line of the table)
    assert "damaged" in out
    assert "substitute_within must be a number of turns from 0 to 1000" in out
