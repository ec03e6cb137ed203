"""A whole game driven from outside: the command line, order files and JSON views only.

Kept apart from tests/test_cli.py because it runs some 80 pbem processes one after another:
the mutation trial of the command line runs that file, and not this one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import external_driver
import pytest
from click.testing import CliRunner

from pbem.cli import main


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.timeout(600)  # some 80 pbem processes one after another: on two cores shared with a
# second run of the suite that can take longer than the 120 s that catch a hung test
def test_a_whole_game_driven_from_outside_through_the_command_line(tmp_path: Path) -> None:
    directory = tmp_path / "outside"
    # A seed whose game ends within 20 resolutions (the dice follow the orders, and so the
    # driver's choices): the game is played to its end in seconds.
    run("new", directory, "--players", "alice,bob", "--seed", "1f" * 32)
    result = external_driver.main(directory, 40)
    assert result["phase"] == "over", result
    assert result["rolls"] > 0
    view = json.loads(run("show", directory, "--json"))
    assert view["winner"] in ("alice", "bob")
    assert [p["alive"] for p in view["players"]].count(True) == 1
    history = directory / "history"
    target = next(p for p in sorted(history.glob("*.toml"))[1:] if "attacker = [" in p.read_text())
    text = target.read_text()
    start = text.index("attacker = [")
    start += next(i for i, c in enumerate(text[start:]) if c.isdigit())
    die = int(text[start])
    target.write_text(text[:start] + str(die % 6 + 1) + text[start + 1 :])
    audit = subprocess.run(
        [sys.executable, "-m", "pbem", "audit", str(directory)], capture_output=True, text=True
    )
    assert audit.returncode == 1
    assert f"(resolution {int(target.stem)}, history/{target.name}): " in audit.stderr
