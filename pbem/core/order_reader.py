"""Reading the values of an order file one by one: each checked for its kind (a territory, a
whole number in its range, known keys, a list of tables) and each problem recorded with the
line it is on, so that a file's every problem is told at once; and the limits of what is read
at all (how many tables, how deep they nest).

What each key of an order file means, and the orders built from it, is `order_parsing`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pbem.core.board import Board
from pbem.errors import Problem, UnknownTerritory
from pbem.terminal import quoted

TABLE_LIMIT = 100
"""The most [[place]] or [[attack]] tables one file may hold (a board has 42 territories)."""
DEPTH_LIMIT = 8
"""The deepest nesting of tables and arrays read; an order file needs 2 (trade = [[...]])."""


class Reader:
    """Collects every problem of a file while building its orders."""

    def __init__(self, board: Board, lines: dict[str, int]) -> None:
        self.board = board
        self.lines = lines
        self.problems: list[Problem] = []
        self.dropped_attack = False

    def line(self, *paths: str) -> int | None:
        for path in paths:
            while path:
                if path in self.lines:
                    return self.lines[path]
                path = path.rpartition(".")[0]
        return None

    def fail(self, problem: Problem, *paths: str) -> None:
        """Record `problem` (made with Problem.of, no line) at the line of the first path."""
        self.problems.append(
            Problem(problem.message, self.line(*paths), problem.template, problem.values)
        )

    def territory(self, value: object, path: str) -> str | None:
        if not isinstance(value, str):
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be a territory name in quotes",
                    self.line(path),
                    key=path.rsplit(".", 1)[-1],
                )
            )
            return None
        try:
            return self.board.lookup(value)
        except UnknownTerritory as err:
            self.problems.append(err.problem(self.line(path)))
            return None

    def integer(self, value: object, path: str, low: int, high: int | None = None) -> int | None:
        if type(value) is int and value >= low and (high is None or value <= high):
            return value  # the usual case, first
        name = path.rsplit(".", 1)[-1]
        if isinstance(value, bool) or not isinstance(value, int):
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be a whole number, not %(value)s",
                    self.line(path),
                    key=name,
                    value=quoted(repr(value), 40),
                )
            )
            return None
        if value < low or (high is not None and value > high):
            values: dict[str, str | int] = {
                "key": name,
                "low": low,
                "value": value,
                "high": high or 0,
            }
            self.problems.append(
                Problem.of(
                    "'%(key)s' must be between %(low)s and %(high)s, not %(value)s",
                    self.line(path),
                    **values,
                )
                if high is not None
                else Problem.of(
                    "'%(key)s' must be at least %(low)s, not %(value)s", self.line(path), **values
                )
            )
            return None
        return value

    def unknown_keys(self, table: Mapping[str, Any], allowed: set[str], path: str) -> None:
        if table.keys() <= allowed:
            return  # the usual case, at once
        for key in table:
            if key not in allowed:
                where = f"{path}.{key}" if path else key
                if path and key == "vacation":  # written at the end, inside the last table
                    self.problems.append(
                        Problem.of(
                            "vacation = ... belongs at the top of the file, with game, turn, "
                            "player and secret: after a %(table)s line it is read as part "
                            "of that table",
                            self.line(where),
                            table=(
                                f"[[{path.split('[')[0]}]]"
                                if "[" in path
                                else f"[{path.split('.')[0]}]"
                            ),
                        )
                    )
                    continue
                known = ", ".join(sorted(allowed))
                self.problems.append(
                    Problem.of(
                        "unknown key '%(key)s' (known keys here: %(known)s)",
                        self.line(where),
                        key=quoted(key),
                        known=known,
                    )
                )

    def tables(self, data: Mapping[str, Any], name: str) -> list[tuple[str, Mapping[str, Any]]]:
        value = data.get(name, [])
        if isinstance(value, dict):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.fail(Problem.of("'%(key)s' must be written as [[%(key)s]] tables", key=name), name)
            return []
        if len(value) > TABLE_LIMIT:
            self.fail(
                Problem.of(
                    "%(count)s [[%(key)s]] tables: an order file may hold at most %(most)s",
                    count=len(value),
                    key=name,
                    most=TABLE_LIMIT,
                ),
                name,
            )
            return []
        return [(f"{name}.{i}", v) for i, v in enumerate(value)]


def too_deep(data: Mapping[str, Any]) -> bool:
    """Whether tables and arrays nest deeper than DEPTH_LIMIT (without recursing): whether a
    table or array DEPTH_LIMIT levels down holds anything. Only tables and arrays are visited."""
    level: list[Any] = [data]
    for _ in range(DEPTH_LIMIT):
        level = [
            child
            for value in level
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return any(level)
