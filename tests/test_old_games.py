"""Games written by earlier releases of pbem keep working after an upgrade: they load, audit,
and play on exactly as they did then, event for event and die for die.

tests/fixtures/format1-example is a copy of games/example as the first release wrote it (game
file format 1), and tests/fixtures/format2-example a copy of games/example as it was kept in
game file format 2, its reports included; each holds the order files its players sent for the
rest of the game in `continuation/` (NNNN-player.toml: the file for resolution NNNN). The values
pinned below were recorded with the release that wrote each: for format 2, the last pbem that
wrote game file format 2 (commit a296a29), whose tests/make_example.py made that example again
byte for byte (game file, history, orders) and then played on with the same bots and the same
random stream, keeping each order file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import tomli

from pbem.core.state import AutopilotRule, DiceRule, StopAt, TradedCards
from pbem.game import processor
from pbem.records.history import history_count, read_history
from pbem.records.opening import read_game
from pbem.records.store import FORMAT

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE = FIXTURES / "format1-example"
FORMAT2 = FIXTURES / "format2-example"

# Recorded with the first release: SHA-256 over every resolution's key, order texts, events and
# state digest (canonical JSON), and the digest of the final state.
HISTORY_SHA256 = "5d231f61cebc3593ad44526303b4a9951a1eb7ecfc2ba44bc6028915c9656abf"
FINAL_DIGEST = "d75c1d47283ba75866d09610e247742dadfa5436984948e17f556a76d6f892c7"
RESOLUTIONS = 30

# Recorded with the last release of game file format 2: the same fingerprint and final digest,
# and SHA-256 over the bytes of every history file it wrote (history_bytes below).
FORMAT2_HISTORY_SHA256 = "a1ea095f3a540af86e94afc35c2263f54beeb422e063c10c1ecc4a9d51a58da9"
FORMAT2_FINAL_DIGEST = "79ae3f23011aee4a17cb294c39e0d15e06e47753aad5af6ecf0b6ad3162ae47b"
FORMAT2_HISTORY_BYTES = "161030bdfc79f6f84c0d2354c362a175828e174962c1f56c3f1ef0c78d549fdb"
FORMAT2_RESOLUTIONS = 34


def history_fingerprint(directory: Path) -> str:
    records = []
    for r in range(history_count(directory)):
        record = read_history(directory, r)
        records.append(
            {
                "resolution": record.resolution,
                "turn": record.turn,
                "players": list(record.players),
                "key": record.key,
                "orders": [[o.player, o.text] for o in record.orders],
                "events": [e.to_dict() for e in record.events],
                "state": record.state_digest,
            }
        )
    text = json.dumps(records, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def history_bytes(directory: Path) -> str:
    """SHA-256 over each history file's name and the SHA-256 of its bytes, in order."""
    digest = hashlib.sha256()
    for path in sorted((directory / "history").glob("*.toml")):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def play_to_the_end(tmp_path: Path, fixture: Path = FIXTURE) -> Path:
    game_dir = tmp_path / "example"
    shutil.copytree(fixture, game_dir, ignore=shutil.ignore_patterns("continuation"))
    processor.resolve_game(game_dir)
    for path in sorted((fixture / "continuation").glob("*.toml")):
        resolution, _, player = path.stem.partition("-")
        assert read_game(game_dir).state.resolution == int(resolution), path.name
        shutil.copy(path, game_dir / "orders" / f"{player}.toml")
        processor.resolve_game(game_dir)
    return game_dir


def test_a_format_1_game_audits_as_it_is() -> None:
    assert processor.audit_game(FIXTURE).resolutions == 11


def test_a_format_1_game_plays_on_to_its_end_exactly_as_before(tmp_path: Path) -> None:
    game_dir = play_to_the_end(tmp_path)
    game = read_game(game_dir)
    assert game.state.phase.value == "over"
    assert history_count(game_dir) == RESOLUTIONS
    assert history_fingerprint(game_dir) == HISTORY_SHA256
    assert processor.state_digest(game.state) == FINAL_DIGEST
    assert processor.audit_game(game_dir).resolutions == RESOLUTIONS


def test_a_format_2_game_loads_by_the_rules_it_began_with() -> None:
    assert tomli.loads((FORMAT2 / "game.toml").read_text())["format"] == 2
    game = read_game(FORMAT2)
    assert (game.state.resolution, game.state.awaiting()) == (11, ("alice",))
    options = game.state.options
    assert options.traded_cards is TradedCards.ASIDE
    assert (options.missions, options.stop_at) == (False, StopAt.THRESHOLD)
    assert (options.dice, options.autopilot) == (DiceRule.KEY, AutopilotRule.FRONT)
    assert sorted(p.name for p in (FORMAT2 / "reports").iterdir()) == [
        f"{r:04d}" for r in range(11)
    ]


def test_a_format_2_game_audits_as_it_is() -> None:
    assert processor.audit_game(FORMAT2).resolutions == 11


def test_a_format_2_game_plays_on_to_its_end_exactly_as_before(tmp_path: Path) -> None:
    game_dir = play_to_the_end(tmp_path, FORMAT2)
    game = read_game(game_dir)
    assert game.state.phase.value == "over"
    assert [p.name for p in game.state.players if p.alive] == ["carol"]
    assert history_count(game_dir) == FORMAT2_RESOLUTIONS
    assert history_fingerprint(game_dir) == FORMAT2_HISTORY_SHA256
    assert history_bytes(game_dir) == FORMAT2_HISTORY_BYTES
    assert processor.state_digest(game.state) == FORMAT2_FINAL_DIGEST
    assert processor.audit_game(game_dir).resolutions == FORMAT2_RESOLUTIONS
    # Written back in today's format, by the rules it began with.
    written = tomli.loads((game_dir / "game.toml").read_text())
    assert written["format"] == FORMAT
    assert {k: written["options"][k] for k in ("stop_at", "dice", "autopilot")} == {
        "stop_at": "threshold",
        "dice": "key",
        "autopilot": "front",
    }
