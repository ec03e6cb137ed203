"""The autopilot's rule is versioned: a new game (format 7) spreads a missed setup over the
borders the player holds; a game made before keeps its rule (`autopilot = "front"`) and replays
as it was played; the audit checks that every order file recorded as the autopilot's is what
the rule writes."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import refused_with_option

from pbem.core.autopilot import AUTOPILOT_FILE, borders
from pbem.core.events import Placed
from pbem.core.state import AutopilotRule, Options
from pbem.errors import AuditError
from pbem.game import deadlines, processor
from pbem.records import clock, store
from pbem.records.history import read_history, write_history
from pbem.records.opening import read_game
from pbem.records.replay import state_after

FIXTURE = Path(__file__).parent / "fixtures" / "format6-game"
"""Made by the last pbem of format 6: carol missed the setup, which the autopilot played by
the rule of then (every army on one territory); alice played turn 1."""
STARTED = clock.parse_instant("2027-03-01T12:00:00+00:00")
LATE = clock.parse_instant("2027-03-02T12:30:00+00:00")
"""After the setup's deadline (24 hours)."""


def placed(events: object, player: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in events:  # type: ignore[attr-defined]
        if isinstance(e, Placed) and e.player == player:
            out[e.territory] = out.get(e.territory, 0) + e.armies
    return out


def missed_setup(tmp_path: Path) -> Path:
    """A new game whose setup carol misses; alice and bob send their ready files."""
    d = tmp_path / "new"
    processor.new_game(
        d,
        processor.parse_player_list(["alice", "bob", "carol"]),
        Options(),
        seed=bytes([6] * 32),
        name="new",
        schedule=deadlines.schedule_from_options("24h", None),
        now=STARTED,
    )
    for player in ("alice", "bob"):
        ready = next((d / "reports").glob("0000-*")) / f"{player}.orders.toml"
        shutil.copy(ready, d / "orders" / f"{player}.toml")
    processor.resolve_game(d, now=LATE)
    return d


def test_a_new_games_missed_setup_is_spread_over_the_borders(tmp_path: Path) -> None:
    d = missed_setup(tmp_path)
    assert store._load_toml(d / "game.toml")["options"]["autopilot"] == "borders"
    record = read_history(d, 1)
    (auto,) = [o for o in record.orders if o.autopilot]
    assert auto.player == "carol" and auto.file == AUTOPILOT_FILE
    before = state_after(read_game(d), 0)  # the deal, before the setup turn
    got = placed(record.events, "carol")
    edge = borders(before, "carol")
    assert len(got) > 1 and set(got) <= set(edge)  # only borders, and more than one
    held = [before.armies(t) + got.get(t, 0) for t in edge]
    assert max(held) - min(held) <= 1  # one at a time on the fewest: as even as can be
    assert processor.audit_game(d).resolutions == 2


def test_an_older_game_keeps_its_rule_and_replays_as_it_was_played(tmp_path: Path) -> None:
    d = tmp_path / "old"
    shutil.copytree(FIXTURE, d)
    assert store._load_toml(d / "game.toml")["format"] == 6
    assert read_game(d).state.options.autopilot is AutopilotRule.FRONT
    assert processor.audit_game(d).resolutions == 3
    stacked = placed(read_history(d, 1).events, "carol")
    assert len(stacked) == 1  # the rule of then: one territory took all 21
    bob = next((d / "reports").glob("0002-*")) if (d / "reports").is_dir() else None
    assert bob is None  # the fixture keeps no reports: pbem reads the game without them
    # bob's turn 2 is played by the autopilot after its deadline, by the rule of the game
    processor.resolve_game(d, now=clock.parse_instant("2027-03-04T12:00:00+00:00"))
    written = store._load_toml(d / "game.toml")
    assert (written["format"], written["options"]["autopilot"]) == (store.FORMAT, "front")
    assert processor.audit_game(d).resolutions == 4


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        (None, "do not say how the autopilot places a setup's armies"),
        ("stack", "'stack' is not a rule"),
    ],
)
def test_a_game_file_must_say_the_autopilots_rule(
    tmp_path: Path, rule: str | None, said: str
) -> None:
    refused_with_option(missed_setup(tmp_path), "autopilot", rule, said)


def test_the_audit_refuses_an_autopilot_file_the_autopilot_did_not_write(
    tmp_path: Path,
) -> None:
    """A history whose "autopilot" orders for carol are other valid orders (her ready file,
    which places elsewhere) is caught, even before its events are compared."""
    d = missed_setup(tmp_path)
    record = read_history(d, 1)
    ready = (next((d / "reports").glob("0000-*")) / "carol.orders.toml").read_text()
    forged = replace(
        record,
        orders=tuple(replace(o, text=ready) if o.autopilot else o for o in record.orders),
    )
    write_history(d, forged)
    with pytest.raises(AuditError, match="is not what the autopilot writes for that turn"):
        processor.audit_game(d)
