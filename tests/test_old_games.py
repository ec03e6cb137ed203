"""A game written by the first release of pbem (game file format 1) keeps working after an
upgrade: it loads, audits, and plays on exactly as it did then, event for event and die for die.

tests/fixtures/format1-example is a copy of games/example as that release wrote it, with the
order files its players sent for the rest of the game in `continuation/` (NNNN-player.toml: the
file for resolution NNNN). The values pinned below were recorded with that release.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from pbem.game import processor
from pbem.records.history import history_count, read_history
from pbem.records.opening import read_game

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "format1-example"

# Recorded with the first release: SHA-256 over every resolution's key, order texts, events and
# state digest (canonical JSON), and the digest of the final state.
HISTORY_SHA256 = "5d231f61cebc3593ad44526303b4a9951a1eb7ecfc2ba44bc6028915c9656abf"
FINAL_DIGEST = "d75c1d47283ba75866d09610e247742dadfa5436984948e17f556a76d6f892c7"
RESOLUTIONS = 30


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


def play_to_the_end(tmp_path: Path) -> Path:
    game_dir = tmp_path / "example"
    shutil.copytree(FIXTURE, game_dir, ignore=shutil.ignore_patterns("continuation"))
    processor.resolve_game(game_dir)
    for path in sorted((FIXTURE / "continuation").glob("*.toml")):
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
