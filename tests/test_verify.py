"""A player's own tools: `pbem verify` re-derives a turn's dice, and `pbem check --view`
gives the moderator's verdict on their own machine."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import attacking, new_game, skeleton, write_skeletons

from pbem.cli import main
from pbem.game import processor
from pbem.present import verify
from pbem.records.history import read_history, report_dir
from pbem.records.opening import read_game
from pbem.terminal import quoted

RESOLUTIONS = 7


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = new_game(tmp_path_factory.mktemp("verify") / "game")
    for _ in range(RESOLUTIONS - 1):
        write_skeletons(directory)
        processor.resolve_game(directory)
    return directory


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def report_file(directory: Path, r: int, player: str, suffix: str) -> Path:
    return report_dir(directory, r) / f"{player}.{suffix}"


# --- verify --------------------------------------------------------------------------------


def test_every_report_verifies_from_its_view_file_and_its_text(played: Path) -> None:
    checked_rolls = 0
    for r in range(RESOLUTIONS):
        for player in ("alice", "bob", "carol"):
            from_view = verify.read_record(report_file(played, r, player, "view.json"))
            from_text = verify.read_record(report_file(played, r, player, "txt"))
            assert from_view == from_text
            verdict = verify.verify(from_view)
            assert verdict.ok, verdict.lines()
        record = read_history(played, r)
        expected = [(tuple(x["attacker"]), tuple(x["defender"])) for x in record.rolls()]
        if r == 0:
            expected = [((x["die"],), ()) for x in record.first_player_rolls()]
        assert list(from_view.rolls) == expected
        assert from_view.key.hex() == record.key
        checked_rolls += len(expected)
    assert checked_rolls > 3


def test_verify_command_over_a_report(played: Path) -> None:
    out = run("verify", "--report", report_file(played, RESOLUTIONS - 1, "bob", "view.json"))
    assert "key OK: SHA-256(key) = previous key" in out
    assert "every die matches" in out or "no dice were rolled" in out
    out = run("verify", "--report", report_file(played, 0, "bob", "txt"))
    assert "the deal (resolution 0): key OK" in out and "3 rolls, every die matches" in out


def _played_roll(played: Path) -> tuple[int, list[dict[str, object]]]:
    for r in range(1, RESOLUTIONS):
        rolls = read_history(played, r).rolls()
        if len(rolls) >= 2:
            return r, rolls
    raise AssertionError("the self-play rolled no dice")


def test_verify_command_with_keys_and_dice(played: Path) -> None:
    game = read_game(played)
    r, rolls = _played_roll(played)
    key, previous = game.key(r).hex(), game.key(r - 1).hex()
    written = [
        " ".join(map(str, x["attacker"])) + "/" + " ".join(map(str, x["defender"]))  # type: ignore[call-overload]
        for x in rolls
    ]
    args = [a for w in written for a in ("--dice", w)]
    view = json.loads(report_file(played, r, "alice", "view.json").read_text())
    digests = [a for f in view["dice"]["orders"] for a in ("--digest", f["digest"])]
    out = run("verify", key, previous, *digests, *args)
    assert out.splitlines() == [
        "key OK: SHA-256(key) = previous key",
        'dice key OK: HMAC-SHA256(key, "pbem/orders/" and the digest of the 1 order file)',
        f"{len(rolls)} rolls, every die matches",
    ]
    # without the digest the dice are taken for the key's own, and they are not
    assert "does NOT match" in run("verify", key, previous, *args, code=1)


def test_a_changed_die_is_named_and_fails(played: Path) -> None:
    game = read_game(played)
    r, rolls = _played_roll(played)
    view = json.loads(report_file(played, r, "alice", "view.json").read_text())
    original = view["dice"]["rolls"][1]["attacker"][0]
    view["dice"]["rolls"][1]["attacker"][0] = 1 if original != 1 else 2
    tampered = played.parent / "tampered.view.json"
    tampered.write_text(json.dumps(view))
    out = run("verify", "--report", tampered, code=1)
    assert "key OK" in out
    assert f"roll 2 of {len(rolls)} does NOT match" in out
    assert f"the key gives {' '.join(map(str, rolls[1]['attacker']))}/" in out  # type: ignore[call-overload]
    assert game.key(r).hex() == view["dice"]["key"]


def test_a_key_that_does_not_follow_fails(played: Path) -> None:
    game = read_game(played)
    wrong_previous = game.key(1).hex()
    out = run("verify", game.key(3).hex(), wrong_previous, code=1)
    assert "key WRONG" in out and wrong_previous in out


def test_a_text_report_with_a_changed_key_fails(played: Path) -> None:
    game = read_game(played)
    text = report_file(played, 2, "carol", "txt").read_text()
    altered = text.replace(game.key(2).hex(), game.key(3).hex())
    path = played.parent / "altered.txt"
    path.write_text(altered)
    assert "key WRONG" in run("verify", "--report", path, code=1)


def test_a_text_report_with_fewer_rolls_than_its_heading_says_fails(played: Path) -> None:
    r, rolls = _played_roll(played)
    lines = report_file(played, r, "carol", "txt").read_text().splitlines()
    (i,) = [n for n, line in enumerate(lines) if "Rolls, attacker/defender as rolled" in line]
    assert lines[i].endswith(f"({len(rolls)}):")
    end = i + 1
    while lines[end].startswith("    "):
        end += 1
    written = " ".join(lines[i + 1 : end]).split(";")
    assert len(written) == len(rolls)
    # the last roll left out: what is left still matches the key's first dice
    shorter = [*lines[: i + 1], "    " + ";".join(written[:-1]).strip(), *lines[end:]]
    path = played.parent / "shorter.txt"
    path.write_text("\n".join(shorter) + "\n")
    out = run("verify", "--report", path, code=1)
    assert f"the report lists {len(rolls)} rolls but {len(rolls) - 1} could be read" in out
    assert "every die matches" not in out


def test_verify_follows_the_key_chain_back_to_the_commitment(played: Path) -> None:
    game = read_game(played)
    for suffix in ("view.json", "txt"):
        out = run("verify", "--report", report_file(played, 3, "alice", suffix))
        assert (
            "chain OK: the previous key hashed 3 times (the resolution number) gives the "
            f"commitment {game.commitment}, the same in every report" in out
        )
    out = run("verify", "--report", report_file(played, 1, "bob", "view.json"))
    assert "the previous key hashed 1 time (the resolution number)" in out


def test_a_broken_key_chain_fails(played: Path) -> None:
    """A key that follows its previous key, but a chain that does not reach the commitment."""
    game = read_game(played)
    view = json.loads(report_file(played, 3, "alice", "view.json").read_text())
    forged = "ab" * 32
    view["commitment"] = forged
    path = played.parent / "forged-chain.view.json"
    path.write_text(json.dumps(view))
    out = run("verify", "--report", path, code=1)
    assert "key OK" in out
    assert (
        f"chain BROKEN: the previous key hashed 3 times (the resolution number) gives "
        f"{game.commitment}, not the commitment {forged}: these keys are not the ones "
        "committed to" in out
    )


@pytest.mark.parametrize(
    ("text", "roll"),
    [
        ("6 3 1/5 2", ((6, 3, 1), (5, 2))),
        ("6,3/4", ((6, 3), (4,))),
        ("5", ((5,), ())),
    ],
)
def test_a_roll_is_written_attacker_slash_defender(text: str, roll: verify.Roll) -> None:
    assert verify.parse_roll(text) == roll
    assert verify.parse_roll(verify.format_roll(roll)) == roll


@pytest.mark.parametrize("text", ["7/1", "1 2 3 4/1", "/3", "a/b", "1/2 3 4 5"])
def test_a_roll_that_cannot_be_is_refused(text: str) -> None:
    with pytest.raises(verify.VerifyError):
        verify.parse_roll(text)


def test_verify_needs_keys_or_a_report(played: Path) -> None:
    assert "give KEY and PREVIOUS_KEY" in run("verify", code=2)
    assert "64 hexadecimal digits" in run("verify", "abc", "def", code=1)
    orders = played.parent / "not-a-report.txt"
    orders.write_text("hello\n")
    assert "no dice check found" in run("verify", "--report", orders, code=1)


# --- check --view agrees with the moderator's check ------------------------------------------


def _corpus(directory: Path) -> dict[str, tuple[str, str]]:
    """Order files for the pending turn, valid and not: name -> (author, text)."""
    game = read_game(directory)
    state = game.state
    me = state.current_player.name
    other = next(p.name for p in state.players if p.name != me and p.alive)
    base = skeleton(directory, me)
    owned = state.owned(me)
    strongest = base.split('territory = "')[1].split('"')[0]
    far = next(
        t for t in state.board.names if t not in owned and not state.board.adjacent(strongest, t)
    )
    foreign = next(t for t in state.board.names if state.owner(t) != me)
    foreign_target = next(n for n in state.board.neighbours(foreign) if state.owner(n) != me)
    inner_pair = next(
        (a, b) for a in owned for b in owned if a != b and not state.board.adjacent(a, b)
    )
    header_turn = f"turn = {state.turn}"
    return {
        "valid.toml": (me, base),
        "attacking.toml": (me, attacking(base)),
        "bad-territory.toml": (
            me,
            base.replace(f'territory = "{strongest}"', 'territory = "Atlantis"'),
        ),
        "misspelt.toml": (me, base.replace(f'territory = "{strongest}"', 'territory = "Ukrane"')),
        "too-many.toml": (me, base.replace('armies = "rest"', "armies = 999")),
        "too-few.toml": (me, base.replace('armies = "rest"', "armies = 1")),
        "stale.toml": (me, base.replace(header_turn, f"turn = {state.turn - 1}")),
        "future.toml": (me, base.replace(header_turn, f"turn = {state.turn + 1}")),
        "wrong-game.toml": (me, base.replace(f'game = "{state.game}"', 'game = "other"')),
        "not-adjacent.toml": (
            me,
            base + f'\n[[attack]]\nfrom = "{strongest}"\nto = "{far}"\n',
        ),
        "not-yours.toml": (
            me,
            base + f'\n[[attack]]\nfrom = "{foreign}"\nto = "{foreign_target}"\n',
        ),
        "fortify-far.toml": (
            me,
            base + f'\n[fortify]\nfrom = "{inner_pair[0]}"\nto = "{inner_pair[1]}"\narmies = 1\n',
        ),
        "trade-not-held.toml": (
            me,
            base.replace(header_turn, header_turn + '\ntrade = [["Alaska", "Peru", "Japan"]]'),
        ),
        "bad-toml.toml": (me, base + "\n[[attack]\nfrom = \n"),
        "unknown-key.toml": (me, base + '\n[[place]]\nterritory = "Peru"\narmys = 2\n'),
        "not-your-turn.toml": (
            other,
            skeleton(directory, other)
            .replace(f"turn = {state.turn + 1}", header_turn)
            .replace(f"turn = {state.turn + 2}", header_turn),
        ),
    }


def _agreement(directory: Path, tmp_path: Path) -> int:
    game = read_game(directory)
    latest = game.state.resolution - 1
    rejected = 0
    for name, (author, text) in _corpus(directory).items():
        path = tmp_path / name
        path.write_text(text)
        view = report_file(directory, latest, author, "view.json")
        ((moderator, forecast),) = processor.check_files(directory, [path])[1]
        ((own, own_forecast),) = processor.check_with_view(view, [path])
        assert own.accepted == moderator.accepted, name
        assert own.messages() == moderator.messages(), name
        assert own_forecast == forecast, name
        assert run("check", "--view", view, path, code=own.accepted ^ 1) == run(
            "check", directory, path, code=moderator.accepted ^ 1
        ), name
        rejected += not moderator.accepted
    return rejected


def test_check_with_a_view_gives_the_moderators_verdict_in_play(
    played: Path, tmp_path: Path
) -> None:
    assert _agreement(played, tmp_path) == len(_corpus(played)) - 2


def test_check_with_a_view_gives_the_moderators_verdict_in_setup(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "game")
    game = read_game(directory)
    for player in ("alice", "carol"):
        for name, text in {
            "valid.toml": skeleton(directory, player),
            "too-few.toml": skeleton(directory, player).replace('armies = "rest"', "armies = 2"),
            "attack.toml": skeleton(directory, player)
            + '\n[[attack]]\nfrom = "Peru"\nto = "Brazil"\n',
        }.items():
            path = tmp_path / f"{player}-{name}"
            path.write_text(text)
            view = report_file(directory, 0, player, "view.json")
            ((moderator, forecast),) = processor.check_files(directory, [path])[1]
            ((own, own_forecast),) = processor.check_with_view(view, [path])
            assert (own.accepted, own.messages(), own_forecast) == (
                moderator.accepted,
                moderator.messages(),
                forecast,
            ), name
            assert own.accepted == (name == "valid.toml")
    assert game.state.phase.value == "setup"


def test_the_moderator_and_the_players_own_check_both_check_the_secret(
    played: Path, tmp_path: Path
) -> None:
    game = read_game(played)
    me = game.state.current_player.name
    reg = game.registration(me)
    assert reg is not None
    path = tmp_path / "forged.toml"
    path.write_text(skeleton(played, me).replace(reg.secret, "not-the-secret"))
    ((moderator, _),) = processor.check_files(played, [path])[1]
    view = report_file(played, game.state.resolution - 1, me, "view.json")
    ((own, _),) = processor.check_with_view(view, [path])
    assert not moderator.accepted and "secret" in moderator.messages()[0]
    assert not own.accepted and own.messages() == moderator.messages()


HUGE = 10**15
"""A resolution number no chain reaches: following the chain from it would hash for days."""


def verify_in_a_process(report: Path) -> subprocess.CompletedProcess[str]:
    """`pbem verify --report` in its own process, stopped after a few seconds: a regression
    that hashes the chain `HUGE` times fails here rather than hanging the suite."""
    return subprocess.run(
        [sys.executable, "-m", "pbem", "verify", "--report", str(report)],
        capture_output=True,
        text=True,
        timeout=20,
    )


@pytest.mark.parametrize("suffix", ["view.json", "txt"])
def test_a_resolution_number_beyond_any_chain_is_refused_at_once(
    played: Path, tmp_path: Path, suffix: str
) -> None:
    original = report_file(played, 3, "alice", suffix)
    forged = tmp_path / f"alice.{suffix}"
    if suffix == "view.json":
        data = json.loads(original.read_text())
        data["dice"]["resolution"] = HUGE
        forged.write_text(json.dumps(data))
    else:
        text = original.read_text()
        assert "Key of resolution 3:" in text
        forged.write_text(text.replace("Key of resolution 3:", f"Key of resolution {HUGE}:"))
    started = time.monotonic()
    done = verify_in_a_process(forged)
    assert time.monotonic() - started < 10
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"the report gives resolution {HUGE}, beyond the key chain of any game" in done.stderr
    assert "Traceback" not in done.stderr
    forged.write_text(forged.read_text().replace(str(HUGE), "9" * 5000))
    done = verify_in_a_process(forged)  # JSON refuses so many digits itself: not a view file
    assert done.returncode == 1 and done.stderr.startswith("Error: ")
    assert "Traceback" not in done.stderr


# --- what a report may not hold, one value at a time --------------------------------------


def test_a_die_outside_one_to_six_is_no_roll(played: Path) -> None:
    key, previous = read_game(played).key(1).hex(), read_game(played).key(0).hex()
    assert "'0 3/2' is not a roll" in run("verify", key, previous, "--dice", "0 3/2", code=1)
    view = json.loads(report_file(played, 0, "alice", "view.json").read_text())
    for die in (7, 0, "x" * 100):
        view["dice"]["first_player"][0]["die"] = die
        with pytest.raises(verify.VerifyError) as caught:
            verify.record_from_view(view)
        assert f"{quoted(repr(die), 40)} is not a die: dice show 1 to 6" in str(caught.value)


def test_the_first_resolution_beyond_the_longest_chain_is_refused(played: Path) -> None:
    from pbem.core.dice import MAX_CHAIN_LENGTH

    view = json.loads(report_file(played, 3, "alice", "view.json").read_text())
    view["dice"]["resolution"] = MAX_CHAIN_LENGTH
    with pytest.raises(verify.VerifyError, match="beyond the key chain of any game"):
        verify.record_from_view(view)
    view["dice"]["resolution"] = MAX_CHAIN_LENGTH - 1  # within: only the chain does not follow
    assert verify.record_from_view(view).resolution == MAX_CHAIN_LENGTH - 1


def test_a_key_without_its_previous_key_is_a_usage_error(played: Path) -> None:
    key = read_game(played).key(1).hex()
    result = CliRunner().invoke(main, ["verify", key])
    assert result.exit_code == 2
    assert "give KEY and PREVIOUS_KEY (with --dice), or --report FILE" in result.output


def test_a_final_view_of_a_game_without_missions_checks_no_mission(
    played: Path, tmp_path: Path
) -> None:
    data = json.loads(report_file(played, 3, "alice", "view.json").read_text())
    data["dice"]["hidden_key"] = "00" * 32  # as the last view of a game over shows it
    final = tmp_path / "final.view.json"
    final.write_text(json.dumps(data))
    out = run("verify", "--report", final)
    assert "mission" not in out and "every die matches" in out


def test_a_view_that_names_no_board_is_read_on_the_classic_one(
    played: Path, tmp_path: Path
) -> None:
    r = next(r for r in range(1, RESOLUTIONS) if read_history(played, r).rolls())
    record = read_history(played, r)
    player = record.orders[0].player
    data = json.loads(report_file(played, r, player, "view.json").read_text())
    del data["board"]
    view = tmp_path / "no-board.view.json"
    view.write_text(json.dumps(data))
    sent = tmp_path / "sent.toml"
    sent.write_text(record.orders[0].text)
    assert f"order file of {player} OK" in run("verify", "--report", view, "--orders", sent)


def test_orders_given_that_are_not_an_order_file_are_a_sentence(
    played: Path, tmp_path: Path
) -> None:
    r = next(r for r in range(1, RESOLUTIONS) if read_history(played, r).rolls())
    view = report_file(played, r, "alice", "view.json")
    sent = tmp_path / "sent.toml"
    sent.write_text("this is not [an order file\n")
    out = run("verify", "--report", view, "--orders", sent, code=1)
    assert f"{sent} cannot be read as an order file: " in out
    assert "Traceback" not in out


@pytest.mark.parametrize("side", ["attacker", "defender"])
def test_a_roll_with_no_dice_on_a_side_is_refused(played: Path, side: str) -> None:
    r = next(r for r in range(1, RESOLUTIONS) if read_history(played, r).rolls())
    view = json.loads(report_file(played, r, "alice", "view.json").read_text())
    view["dice"]["rolls"][0][side] = []
    most = 3 if side == "attacker" else 2
    with pytest.raises(verify.VerifyError, match=f"a roll has 1 to {most} dice on a side"):
        verify.record_from_view(view)


@pytest.mark.parametrize("resolution", ["3", True, -1, 2.5])
def test_a_resolution_that_is_not_a_number_is_refused(played: Path, resolution: object) -> None:
    view = json.loads(report_file(played, 3, "alice", "view.json").read_text())
    view["dice"]["resolution"] = resolution
    with pytest.raises(verify.VerifyError, match="the resolution is not a number"):
        verify.record_from_view(view)


@pytest.mark.parametrize("files", [[], "alice", [{"player": "alice", "digest": "00" * 32}] * 7])
def test_a_view_must_list_one_to_six_order_files(played: Path, files: object) -> None:
    r = next(r for r in range(1, RESOLUTIONS) if read_history(played, r).rolls())
    view = json.loads(report_file(played, r, "alice", "view.json").read_text())
    view["dice"]["orders"] = files
    with pytest.raises(verify.VerifyError, match="the order files are not listed"):
        verify.record_from_view(view)


def test_a_text_report_without_its_previous_key_is_no_dice_check(
    played: Path, tmp_path: Path
) -> None:
    text = report_file(played, 3, "alice", "txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(text.replace("Previous key:", "Earlier:"))
    out = run("verify", "--report", cut, code=1)
    assert "no dice check found" in out


def test_a_report_and_keys_together_are_a_usage_error(played: Path) -> None:
    key = read_game(played).key(1).hex()
    view = report_file(played, 1, "alice", "view.json")
    for extra in ([key], ["--dice", "6/5"], ["--digest", key], ["--again", key]):
        result = CliRunner().invoke(main, ["verify", "--report", str(view), *extra])
        assert result.exit_code == 2, extra
        assert "give either --report or KEY PREVIOUS_KEY --dice" in result.output


def test_a_resolution_without_rolls_says_so(played: Path) -> None:
    out = run("verify", "--report", report_file(played, 1, "alice", "view.json"))
    assert "no dice were rolled" in out and "0 rolls" not in out


def test_the_report_and_orders_given_must_be_files_that_are_there(
    played: Path, tmp_path: Path
) -> None:
    view = report_file(played, 1, "alice", "view.json")
    missing = tmp_path / "missing.json"
    for args, message in (
        (["--report", missing], "does not exist"),
        (["--report", tmp_path], "is a directory"),
        (["--report", view, "--orders", missing], "does not exist"),
        (["--report", view, "--orders", tmp_path], "is a directory"),
    ):
        assert message in run("verify", *args, code=2), args
