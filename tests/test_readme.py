"""The README works as written: its first command block, pasted into a fresh shell in a copy
of this checkout, installs pbem and resolves a copy of the example game; and then a command of
"A moderator's first game" runs by the name the README gives it. Every link of the README leads
to a file, and to a heading of it, that exist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.records.history import report_dir

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"\n## {title}")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.DOTALL)


def checkout_copy(target: Path) -> Path:
    """The files of this checkout as they are now (tracked or new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def fresh_environment() -> dict[str, str]:
    """The environment of a new terminal: no virtual environment active, no pbem on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    ours = Path(sys.prefix).resolve()
    env["PATH"] = os.pathsep.join(
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if p and ours not in Path(p).resolve().parents
    )
    assert shutil.which("pbem", path=env["PATH"]) is None, "pbem is on PATH before installing"
    return env


def test_the_first_command_block_then_a_turn_command_run_as_written(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    first = blocks(section("The two commands"))[0]
    turn = next(
        line
        for block in blocks(section("A moderator's first game"))
        for line in block.splitlines()
        if line.startswith("pbem new ")
    )
    assert "pbem resolve" in first and "pip install" in first
    copy = checkout_copy(tmp_path / "pbem")
    script = "set -euo pipefail\n" + first + turn + "\n"
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=copy,
        env=fresh_environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    newest = sorted((copy / "example-copy" / "reports").iterdir())[-1]
    assert newest.name not in {p.name for p in (ROOT / "games" / "example" / "reports").iterdir()}
    for player in ("alice", "bob", "carol"):
        assert (newest / f"{player}.txt").is_file()
    assert (report_dir(copy / "games" / "spring-2027", 0) / "alice.txt").is_file()
    assert (copy / ".venv" / "bin" / "pbem").is_file()
    assert "Created game 'spring-2027'" in done.stdout


def test_the_second_command_block_is_what_ci_runs() -> None:
    second = blocks(section("The two commands"))[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert second in ci


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings, as GitHub makes them (outside code blocks)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = re.match(r"#{1,6} +(.*?) *#* *$", line)
        if fenced or heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def test_every_link_of_the_readme_leads_to_a_file_and_heading_that_exist() -> None:
    prose = re.sub(r"```.*?```", "", README, flags=re.DOTALL)
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) > 20, local
    for link in local:
        name, _, anchor = link.partition("#")
        target = ROOT / name if name else ROOT / "README.md"
        assert target.is_file(), f"{link}: no such file"
        if anchor:
            assert anchor in anchors(target), f"{link}: no such heading in {name or 'README.md'}"
