"""Commands that render nothing load nothing of the reports: no Jinja2, no report module, no
mail. Each command runs in a fresh interpreter, which then lists the modules it loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_skeletons

RUN = """
import json, sys
from pbem.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)))
"""

RENDERING = ("jinja2", "markupsafe", "pbem.mail", "pbem.present.report")


def loaded(*args: str) -> set[str]:
    """The modules loaded by one run of `pbem ARGS...` in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def rendering(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in RENDERING or m in RENDERING)


@pytest.mark.parametrize(
    "args",
    [
        ("odds", "5", "3"),
        ("map",),
        ("map", "--json"),
    ],
)
def test_commands_without_a_game_load_no_report_code(args: tuple[str, ...]) -> None:
    assert rendering(loaded(*args)) == []


def test_check_audit_and_dice_load_no_report_code(playing_dir: Path) -> None:
    files = [str(p) for p in write_skeletons(playing_dir)]
    for args in (
        ("check", str(playing_dir), *files),
        ("audit", str(playing_dir)),
        ("dice", str(playing_dir)),
        ("dice", str(playing_dir), "--json"),
    ):
        assert rendering(loaded(*args)) == [], args


def test_show_loads_no_report_code(playing_dir: Path) -> None:
    assert rendering(loaded("show", str(playing_dir))) == []


def test_resolve_does_load_jinja2(playing_dir: Path) -> None:
    """The other side of the line: a resolve renders reports, so the test above can fail."""
    write_skeletons(playing_dir)
    assert "jinja2" in loaded("resolve", str(playing_dir))


def test_check_loads_the_turn_commands_only(playing_dir: Path) -> None:
    """The commands load lazily, a module per group of commands: `pbem check` needs one."""
    files = [str(p) for p in write_skeletons(playing_dir)]
    modules = loaded("check", str(playing_dir), *files)
    assert "pbem.cli.turn" in modules
    others = {"pbem.cli.look", "pbem.cli.tools", "pbem.cli.mail", "pbem.cli.games"}
    assert others & modules == set()
    assert {"pbem.game.processor", "pbem.core.engine", "pbem.core.events"} & modules == set()


def test_commands_that_write_nothing_load_no_threads(playing_dir: Path) -> None:
    """The threads that sync written files (and the logging they bring) are loaded by the
    first write of several files, not by a command that writes none."""
    files = [str(p) for p in write_skeletons(playing_dir)]
    for args in (("check", str(playing_dir), *files), ("status", str(playing_dir))):
        modules = loaded(*args)
        assert "pbem.records.disk" in modules, args  # so the test can fail
        assert {"concurrent.futures", "logging"} & modules == set(), args
