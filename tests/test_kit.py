"""The player's kit: one file that runs with a bare Python and answers as pbem does."""

from __future__ import annotations

import glob
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import skeleton, write_skeletons
from test_mail import GAME, make_template, outbox

from pbem import mail
from pbem.cli import main
from pbem.game import processor
from pbem.kit import KIT_NAME
from pbem.mail.reports import kit_note

EXAMPLE = Path(__file__).resolve().parent.parent / "games" / "example"
LATEST = sorted((EXAMPLE / "reports").iterdir())[-1]


def pbem(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("kit")
    code, out = pbem("kit", folder)
    assert code == 0, out
    return folder / KIT_NAME


@pytest.fixture(scope="module")
def player(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A player's folder: nothing of pbem, the view and order files of the latest report."""
    folder = tmp_path_factory.mktemp("player")
    shutil.copy(LATEST / "alice.view.json", folder / "view.json")
    valid = (LATEST / "alice.orders.toml").read_text()
    (folder / "valid.toml").write_text(valid)
    (folder / "invalid.toml").write_text(
        valid.replace('territory = "South Africa"', 'territory = "Sout Africa"').replace(
            'armies = "rest"', "armies = 50"
        )
    )
    # The file bob's report will hold when his turn comes: signed by bob, not alice.
    (folder / "not-mine.toml").write_text(skeleton(EXAMPLE, "bob"))
    return folder


def bare(python: str, kit: Path, folder: Path, *args: str, timeout: float = 60) -> tuple[int, str]:
    """Run the kit as a player would: isolated, no site-packages, from their own folder."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [python, "-I", "-S", str(kit), *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_kit_refuses_a_resolution_beyond_any_chain_at_once(kit: Path, tmp_path: Path) -> None:
    """A view file whose resolution no key chain reaches: the chain is not hashed that many
    times (days of work), the player is told at once."""
    data = json.loads((LATEST / "alice.view.json").read_text())
    data["dice"]["resolution"] = 10**15
    (tmp_path / "view.json").write_text(json.dumps(data))
    code, out = bare(sys.executable, kit, tmp_path, "verify", "--report", "view.json", timeout=20)
    assert code == 1 and "beyond the key chain of any game" in out, out
    assert "Traceback" not in out


def test_the_kit_checks_orders_as_pbem_check_view_does(kit: Path, player: Path) -> None:
    for files in (["valid.toml"], ["invalid.toml"], ["valid.toml", "not-mine.toml"]):
        got = bare(sys.executable, kit, player, "check", "--view", "view.json", *files)
        want = pbem("check", "--view", player / "view.json", *(player / f for f in files))
        assert got == want
    code, out = bare(sys.executable, kit, player, "check", "--view", "view.json", "invalid.toml")
    assert code == 1
    assert "invalid.toml line " in out and "did you mean 'South Africa'?" in out
    assert bare(sys.executable, kit, player, "check", "--view", "view.json", "valid.toml") == (
        0,
        "valid.toml: valid.\n  place 3 on South Africa\n",
    )


def _python310() -> str | None:
    for candidate in [
        shutil.which("python3.10"),
        *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3"))),
    ]:
        if (
            candidate
            and subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0
        ):
            return candidate
    return None


def test_the_kit_runs_on_python_3_10_without_tomllib(kit: Path, player: Path) -> None:
    python = _python310()
    if python is None:
        pytest.skip("no Python 3.10 on this machine")
    args = ("check", "--view", "view.json", "valid.toml", "invalid.toml")
    assert bare(python, kit, player, *args) == bare(sys.executable, kit, player, *args)


def test_the_kit_works_out_odds_and_verifies_dice_as_pbem_does(kit: Path, player: Path) -> None:
    assert bare(sys.executable, kit, player, "odds", "10", "7", "--stop-at", "3") == pbem(
        "odds", "10", "7", "--stop-at", "3"
    )
    code, out = bare(sys.executable, kit, player, "verify", "--report", "view.json")
    assert (code, out) == pbem("verify", "--report", player / "view.json")
    assert code == 0 and "chain OK" in out


def test_the_kit_explains_itself_and_refuses_what_it_cannot_do(kit: Path, player: Path) -> None:
    code, out = bare(sys.executable, kit, player)
    assert code == 0 and "check" in out and "odds" in out and "verify" in out
    code, out = bare(sys.executable, kit, player, "verify")
    assert code == 2 and "give KEY and PREVIOUS_KEY" in out
    code, out = bare(sys.executable, kit, player, "check", "--view", "missing.json", "valid.toml")
    assert code == 1 and out.startswith("Error: ") and "Traceback" not in out


def test_the_kit_holds_no_moderators_command_line(kit: Path) -> None:
    names = zipfile.ZipFile(kit).namelist()
    assert "__main__.py" in names and "tomli/_parser.py" in names and "tomli/LICENSE" in names
    assert "pbem/cli.py" not in names
    assert not [n for n in names if n.startswith("pbem/cli/")]
    assert not [n for n in names if n.endswith((".so", ".pyc"))]
    assert kit.read_bytes().startswith(b"#!/usr/bin/env python3\n")


@pytest.fixture
def new_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_template(tmp_path_factory)


def test_mail_send_attaches_the_kit_to_the_first_reports_only(new_game: Path) -> None:
    mail.send_mail(new_game, kit=True)
    first = outbox(new_game)
    assert first
    for message in first.values():
        attached = {part.get_filename(): part for part in message.iter_attachments()}
        assert KIT_NAME in attached
        data = attached[KIT_NAME].get_content()
        assert zipfile.ZipFile(io.BytesIO(data)).testzip() is None
        body = message.get_body(preferencelist=("plain",))
        assert body is not None
        player = str(message["To"]).split("@")[0]
        assert kit_note(player) in " ".join(body.get_content().split())
    assert GAME in str(next(iter(first.values()))["Subject"])
    write_skeletons(new_game)
    processor.resolve_game(new_game)
    mail.send_mail(new_game, kit=True)
    later = {name: m for name, m in outbox(new_game).items() if name not in first}
    assert later and all(name.startswith("r0001-") for name in later)
    for message in later.values():
        assert KIT_NAME not in {p.get_filename() for p in message.iter_attachments()}


def test_mail_send_attaches_no_kit_unless_asked(new_game: Path) -> None:
    mail.send_mail(new_game)
    for message in outbox(new_game).values():
        assert KIT_NAME not in {p.get_filename() for p in message.iter_attachments()}
        body = message.get_body(preferencelist=("plain",))
        # (the report names the kit's commands, the player's tools; the note of an attached
        # kit is not there)
        assert body is not None and f"Attached: {KIT_NAME}" not in body.get_content()
