"""The package's layers: each part imports only those below it (core < present < game < mail <
club < cli), read from the source with the standard library's parser, so that a new import
against the layers fails here with its module and line. The imports that still go the wrong way
are listed by name below, as the work left to do (issue: "a house with one way up"): the list
may only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pbem"
ORDER = ["core", "present", "game", "mail", "club", "cli"]
"""The layers, lowest first; `pbem.errors`, `pbem.terminal` and `pbem.files` (plain values,
text, and reading files without following links or past a size) are beneath them all,
`pbem.kit` (the player's kit) and `pbem.__main__` beside them."""
BENEATH = {"pbem", "pbem.errors", "pbem.terminal", "pbem.files"}

STILL_UPWARD = {
    ("pbem.game.batch", "pbem.mail"),
    ("pbem.game.batch", "pbem.mail.reminders"),
    ("pbem.game.undo", "pbem.mail.send"),
    ("pbem.present.context", "pbem.game"),
    ("pbem.present.context", "pbem.game.store"),
    ("pbem.present.report", "pbem.game.press"),
    ("pbem.present.report", "pbem.game.store"),
    ("pbem.present.stats", "pbem.game.history"),
    ("pbem.present.stats", "pbem.game.store"),
    ("pbem.present.talk", "pbem.game.press"),
}
"""The imports from a layer into one above it that are left: the reports take the game, the
club's batch takes the mail (issue 34 moves each where it belongs)."""


def imports() -> list[tuple[str, str, int]]:
    """Every import of pbem's own modules: (importer, imported, line)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found += [(module, n, node.lineno) for n in names if n.split(".")[0] == "pbem"]
    return found


def layer(module: str) -> int | None:
    parts = module.split(".")
    if module in BENEATH:
        return -1
    return ORDER.index(parts[1]) if len(parts) > 1 and parts[1] in ORDER else None


def upward() -> set[tuple[str, str]]:
    out = set()
    for importer, imported, _line in imports():
        low, high = layer(importer), layer(imported)
        if low is not None and high is not None and high > low:
            out.add((importer, imported))
    return out


def test_no_import_goes_up_but_those_still_to_move() -> None:
    new = sorted(upward() - STILL_UPWARD)
    assert new == [], f"imports against the layers {ORDER}: {new}"


def test_the_list_of_imports_still_to_move_only_shrinks() -> None:
    gone = sorted(STILL_UPWARD - upward())
    assert gone == [], f"these no longer go up: take them off STILL_UPWARD: {gone}"


@pytest.mark.parametrize("part", ["core", "club"])
def test_the_core_and_the_club_import_nothing_above_them(part: str) -> None:
    above = ORDER[ORDER.index(part) + 1 :]
    wrong = [
        (importer, imported, line)
        for importer, imported, line in imports()
        if importer.startswith(f"pbem.{part}")
        and any(imported.startswith(f"pbem.{a}") for a in above)
    ]
    assert wrong == []


def test_the_check_finds_an_import_against_the_layers(tmp_path: Path) -> None:
    assert layer("pbem.core.rules") == 0 and layer("pbem.cli.turn") == len(ORDER) - 1
    assert layer("pbem.errors") == -1 and layer("pbem.kit") is None
    assert ("pbem.game.batch", "pbem.mail") in upward()  # (one still to move: it is seen)
