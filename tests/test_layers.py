"""The package's layers: each part imports only those below it (core < languages < records <
present < game < mail < club < cli), read from the source with the standard library's parser, so
that a new import against the layers fails here with its module and line (docs/layers.md)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pbem"
ORDER = ["core", "languages", "records", "present", "game", "mail", "club", "cli"]
"""The layers, lowest first (docs/layers.md); `pbem.errors`, `pbem.terminal` and `pbem.files`
(plain values, text, and reading files without following links or past a size) are beneath
them all, `pbem.kit` (the player's kit) and `pbem.__main__` beside them."""
BENEATH = {"pbem", "pbem.errors", "pbem.terminal", "pbem.files"}


def imports() -> list[tuple[str, str, int]]:
    """Every import of pbem's own modules: (importer, imported, line)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # `from pbem.mail import quoting` imports the module pbem.mail.quoting
                names = [
                    f"{node.module}.{a.name}"
                    if _is_module(f"{node.module}.{a.name}")
                    else node.module
                    for a in node.names
                ]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found += [(module, n, node.lineno) for n in names if n.split(".")[0] == "pbem"]
    return found


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def layer(module: str) -> int | None:
    parts = module.split(".")
    if module in BENEATH:
        return -1
    return ORDER.index(parts[1]) if len(parts) > 1 and parts[1] in ORDER else None


def upward(found: list[tuple[str, str, int]] | None = None) -> list[tuple[str, str, int]]:
    """The imports from a layer into one above it."""
    return [
        (importer, imported, line)
        for importer, imported, line in (imports() if found is None else found)
        if (low := layer(importer)) is not None
        and (high := layer(imported)) is not None
        and high > low
    ]


def test_no_import_goes_up() -> None:
    assert upward() == [], f"imports against the layers {ORDER}"


@pytest.mark.parametrize("part", ORDER)
def test_every_layer_imports_nothing_above_it(part: str) -> None:
    above = ORDER[ORDER.index(part) + 1 :]
    wrong = [
        (importer, imported, line)
        for importer, imported, line in imports()
        if importer.startswith(f"pbem.{part}.")
        and any(imported == f"pbem.{a}" or imported.startswith(f"pbem.{a}.") for a in above)
    ]
    assert wrong == []


def test_every_module_is_in_a_layer_or_beneath_them() -> None:
    loose = sorted({m for m, _, _ in imports() if layer(m) is None} - {"pbem.kit", "pbem.__main__"})
    assert loose == []


def test_the_check_finds_an_import_against_the_layers() -> None:
    assert layer("pbem.core.rules") == 0 and layer("pbem.cli.turn") == len(ORDER) - 1
    assert layer("pbem.errors") == -1 and layer("pbem.kit") is None
    planted = [
        ("pbem.present.report", "pbem.game.processor", 7),
        ("pbem.game.undo", "pbem.records.store", 9),
    ]
    assert upward(planted) == [planted[0]]
    found = {(a, b) for a, b, _ in imports()}
    assert ("pbem.mail.found", "pbem.mail.quoting") in found  # a module, not the package
    assert ("pbem.mail.found", "pbem.mail") not in found


def cycles(found: list[tuple[str, str, int]] | None = None) -> list[list[str]]:
    """The groups of modules that import each other round a circle (Tarjan's strongly
    connected components of the import graph), lazy imports inside functions included."""
    graph: dict[str, set[str]] = {}
    for importer, imported, _line in imports() if found is None else found:
        graph.setdefault(importer, set()).add(imported)
        graph.setdefault(imported, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_two_modules_import_each_other_round_a_circle() -> None:
    assert cycles() == []


def test_the_check_finds_a_circle() -> None:
    planted = [("pbem.a", "pbem.b", 1), ("pbem.b", "pbem.c", 1), ("pbem.c", "pbem.a", 9)]
    assert cycles(planted) == [["pbem.a", "pbem.b", "pbem.c"]]
    assert cycles(planted[:2]) == []
