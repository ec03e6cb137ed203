"""Files from strangers never stop a game: order files, view files and reports that are huge,
nested, not regular files or crafted; control characters in what players wrote."""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import new_game, skeleton, snapshot, write_skeletons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbem.cli import main
from pbem.core import order_reader as order_format
from pbem.errors import PbemError
from pbem.files import ORDER_FILE_LIMIT, VIEW_FILE_LIMIT
from pbem.game import processor
from pbem.present import verify
from pbem.records.history import report_dir
from pbem.records.opening import read_game
from pbem.terminal import printable


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


class Blocked(Exception):
    pass


def _blocked(*_: object) -> None:
    raise Blocked("a read blocked for 60 s")


@pytest.fixture(autouse=True)
def never_hang() -> Iterator[None]:
    """A read that blocks (a FIFO opened the ordinary way) fails the test instead of hanging."""
    previous = signal.signal(signal.SIGALRM, _blocked)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def awaited(directory: Path) -> str:
    return read_game(directory).state.awaiting()[0]


# --- Point 4: one bad order file never stops resolve or check -----------------------------


def _nested(depth: int) -> str:
    return "x = " + "[" * depth + "]" * depth + "\n"


BAD_ORDER_FILES: dict[str, tuple[object, str]] = {
    "nested 500 deep": (lambda t: t + _nested(500), "nested more than 8 deep"),
    "nested 5000 deep": (lambda t: t + _nested(5000), "nested more than 8 deep"),
    "dotted keys 300 deep": (lambda t: t + ".".join(["k"] * 300) + " = 1\n", "nested more"),
    "huge": (lambda t: t + "#" * ORDER_FILE_LIMIT, "at most 64 KiB"),
    "too many attacks": (
        lambda t: t + '\n[[attack]]\nfrom = "Peru"\nto = "Brazil"\n' * 101,
        "101 [[attack]] tables: an order file may hold at most 100",
    ),
    "too many places": (
        lambda t: t + '\n[[place]]\nterritory = "Peru"\narmies = 1\n' * 101,
        "102 [[place]] tables",
    ),
    "too many sets": (lambda t: t + "trade = [" + '["a","b","c"],' * 101 + "]\n", "101 sets"),
}


def _bad_file(directory: Path, case: str) -> Path:
    mutate, _ = BAD_ORDER_FILES[case]
    path = directory / "orders" / "zz-bad.toml"
    text = skeleton(directory, awaited(directory))
    if case == "too many sets":  # trade goes before the tables
        head, _, tail = text.partition("\n\n")
        path.write_text(mutate(head + "\n") + "\n" + tail)  # type: ignore[operator]
    else:
        path.write_text(mutate(text))  # type: ignore[operator]
    return path


@pytest.mark.parametrize("case", sorted(BAD_ORDER_FILES))
def test_a_bad_order_file_is_refused_by_name_and_the_turn_resolves_from_the_others(
    tmp_path: Path, case: str
) -> None:
    twin = new_game(tmp_path / "twin" / "g")  # a folder each: one name per folder
    directory = new_game(tmp_path / "one" / "game")
    for one in (twin, directory):
        write_skeletons(one)
        processor.resolve_game(one)
        write_skeletons(one)
    bad = _bad_file(directory, case)
    content = bad.read_bytes()
    reason = BAD_ORDER_FILES[case][1]
    assert any(reason in m for m in processor.check_files(directory, [bad])[1][0][0].messages())
    outcome = processor.resolve_game(directory)
    processor.resolve_game(twin)
    assert [s.path.name for s in outcome.rejected] == ["zz-bad.toml"]
    assert any(m.startswith("zz-bad.toml") and reason in m for m in outcome.rejected[0].messages())
    assert bad.read_bytes() == content
    moderator = (report_dir(directory, 2) / "_moderator.txt").read_text()
    assert "zz-bad.toml" in moderator
    assert _without(snapshot(directory), "zz-bad.toml", "_moderator") == _without(
        snapshot(twin), "_moderator"
    )


def _without(files: dict[str, bytes], *parts: str) -> dict[str, bytes]:
    return {k: v for k, v in files.items() if not any(p in k for p in parts)}


def _special(directory: Path, kind: str) -> Path:
    path = directory / "orders" / "zz-special.toml"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "link to a fifo":
        os.mkfifo(directory / "pipe")
        path.symlink_to(directory / "pipe")
    return path


SPECIAL = {
    "fifo": "a named pipe (FIFO)",
    "directory": "a directory",
    "device": "a device",
    "link to a fifo": "a named pipe (FIFO)",
}
IN_THE_GAME = SPECIAL | {"device": "a symbolic link", "link to a fifo": "a symbolic link"}
"""What each is called in the game's orders/, where no link is followed (a path given to
`check --view` is the player's own, and followed)."""


@pytest.mark.parametrize("kind", sorted(SPECIAL))
def test_an_order_file_that_is_not_a_regular_file_is_refused_without_blocking(
    playing_dir: Path, kind: str
) -> None:
    write_skeletons(playing_dir)
    special = _special(playing_dir, kind)
    before = snapshot(playing_dir)
    out = run("check", playing_dir, special, code=1)
    assert f"zz-special.toml: this is {IN_THE_GAME[kind]}, not a regular file" in out
    assert snapshot(playing_dir) == before
    out = run("check", "--view", report_dir(playing_dir, 1) / "alice.view.json", special, code=1)
    assert f"zz-special.toml: this is {SPECIAL[kind]}" in out
    out = run("resolve", playing_dir)
    assert f"rejected: zz-special.toml: this is {IN_THE_GAME[kind]}, not a regular file" in out
    assert "Resolved test-game turn 1 (resolution 2, history/0002.toml)" in out
    assert os.path.lexists(special)


def test_a_huge_order_file_is_not_read_whole(playing_dir: Path) -> None:
    path = playing_dir / "orders" / "zz-huge.toml"
    with path.open("wb") as handle:
        handle.truncate(2**40)  # a terabyte, sparse: reading it would never end
    submission = processor.check_files(playing_dir, [path])[1][0][0]
    assert submission.messages() == [
        f"zz-huge.toml: this file is {2**40} bytes; at most 64 KiB are read"
    ]


def test_an_order_file_at_the_limits_is_accepted(playing_dir: Path) -> None:
    player = awaited(playing_dir)
    text = skeleton(playing_dir, player)
    text += "#" * (ORDER_FILE_LIMIT - len(text.encode()) - 1) + "\n"
    path = playing_dir / "orders" / f"{player}.toml"
    path.write_text(text)
    assert processor.check_files(playing_dir, [path])[1][0][0].accepted


def test_the_limits_are_those_documented() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "game-directory.md").read_text()
    assert f"{order_format.TABLE_LIMIT} [[attack]]" in doc
    assert f"{order_format.DEPTH_LIMIT} levels" in doc
    assert f"{ORDER_FILE_LIMIT // 1024} KiB" in doc
    assert f"{VIEW_FILE_LIMIT // 1024 // 1024} MiB" in doc


# --- Point 4: crafted view files for check --view and verify ------------------------------


def _changed(view: dict[str, Any], *where_and_value: object) -> str:
    *where, value = where_and_value
    node: Any = view
    for step in where[:-1]:
        node = node[step]
    node[where[-1]] = value
    return json.dumps(view)


def _view(directory: Path) -> dict[str, Any]:
    data = json.loads((report_dir(directory, 1) / "alice.view.json").read_text())
    assert isinstance(data, dict)
    return data


CRAFTED_VIEWS: dict[str, tuple[object, str]] = {
    "Infinity": (lambda v: json.dumps(v).replace('"turn": 1', '"turn": Infinity'), "Infinity"),
    "NaN": (lambda v: json.dumps(v).replace('"turn": 1', '"turn": NaN'), "NaN"),
    "1e400": (lambda v: json.dumps(v).replace('"turn": 1', '"turn": 1e400'), "1e400"),
    "deep": (lambda v: "[" * 100_000 + "]" * 100_000, "nests too deeply"),
    "huge": (lambda v: json.dumps(v) + " " * VIEW_FILE_LIMIT, "at most 4096 KiB"),
    "armies as text": (
        lambda v: _changed(v, "territories", "Alaska", "armies", "1"),
        "whole number",
    ),
    "hand as text": (lambda v: _changed(v, "players", 0, "hand", "Peru"), "hand' is not a list"),
    "owner unknown": (lambda v: _changed(v, "territories", "Peru", "owner", "mallory"), "mallory"),
    "armies huge": (lambda v: _changed(v, "territories", "Peru", "armies", 10**30), "Peru"),
    "armies float": (lambda v: _changed(v, "territories", "Peru", "armies", 2.5), "Peru"),
    "players as object": (
        lambda v: json.dumps({**v, "players": {"a": 1}}),  # type: ignore[dict-item]
        "'players' is not a list",
    ),
    "not an object": (lambda v: "[1, 2]", "not a JSON object"),
    "huge number": (lambda v: json.dumps(v).replace('"turn": 1', '"turn": ' + "9" * 5000), ""),
    "binary": (lambda v: "\udcff", "not a text file in UTF-8"),
}


@pytest.mark.parametrize("case", sorted(CRAFTED_VIEWS))
def test_a_crafted_view_file_is_refused_by_check_and_verify(playing_dir: Path, case: str) -> None:
    craft, reason = CRAFTED_VIEWS[case]
    path = playing_dir / "crafted.view.json"
    text = craft(_view(playing_dir))  # type: ignore[operator]
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    orders = playing_dir / "orders" / "mine.toml"
    orders.write_text(skeleton(playing_dir, "alice"))
    before = snapshot(playing_dir)
    out = run("check", "--view", path, orders, code=1)
    assert "crafted.view.json" in out and reason in out and "Traceback" not in out
    if case in NOT_JSON_OF_A_VIEW:
        out = run("verify", "--report", path, code=1)
        assert "crafted.view.json" in out and reason in out
    else:  # verify reads only the dice section, which is intact
        assert "key OK" in run("verify", "--report", path)
    assert snapshot(playing_dir) == before


NOT_JSON_OF_A_VIEW = {
    "Infinity",
    "NaN",
    "1e400",
    "deep",
    "huge",
    "not an object",
    "huge number",
    "binary",
}


def test_verify_refuses_dice_that_no_die_can_show(playing_dir: Path) -> None:
    view = _view(playing_dir)
    view["dice"]["rolls"] = [{"from": "a", "to": "b", "attacker": [9], "defender": [1]}]  # type: ignore[index]
    path = playing_dir / "crafted.view.json"
    path.write_text(json.dumps(view))
    with pytest.raises(verify.VerifyError, match="dice"):
        verify.read_record(path)


# --- Property tests: arbitrary bytes never give another exception than pbem's own -------

OUTCOMES = {"accepted", "refused"}


def outcome(call: Callable[[], object]) -> str:
    """ "accepted", or "refused" with pbem's own error and a message; any other exception
    propagates and fails the test."""
    try:
        call()
    except PbemError as err:
        assert str(err).strip()
        return "refused"
    return "accepted"


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_any_bytes_as_an_order_file_are_accepted_or_refused_by_pbem(
    playing_dir: Path, data: bytes
) -> None:
    path = playing_dir / "fuzz.toml"
    path.write_bytes(data)
    view = report_dir(playing_dir, 1) / "alice.view.json"
    for submission, _ in processor.check_files(playing_dir, [path])[1]:
        assert submission.accepted or submission.problems
    for submission, _ in processor.check_with_view(view, [path]):
        assert submission.accepted or submission.problems


TOML_VALUES = st.recursive(
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.text(max_size=30)
    | st.sampled_from(["Peru", "Brazil", "rest", "all", "min", "best", "wild", "alice"]),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(["territory", "armies", "from", "to", "dice", "move", "x"]), inner
        )
    ),
    max_leaves=20,
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    changes=st.dictionaries(
        st.sampled_from(["trade", "place", "attack", "fortify", "turn", "player", "game", "z"]),
        TOML_VALUES,
        max_size=4,
    )
)
def test_any_toml_as_orders_is_accepted_or_refused_by_pbem(
    playing_dir: Path, changes: dict[str, object]
) -> None:
    import tomli_w

    from pbem.records.store import _load_toml

    path = playing_dir / "fuzz.toml"
    player = awaited(playing_dir)
    path.write_text(skeleton(playing_dir, player))
    data = _load_toml(path)
    data.update(changes)
    path.write_text(tomli_w.dumps(data))
    view = report_dir(playing_dir, 1) / f"{player}.view.json"
    for submission, _ in processor.check_files(playing_dir, [path])[1]:
        assert submission.accepted or submission.problems
    for submission, _ in processor.check_with_view(view, [path]):
        assert submission.accepted or submission.problems


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_any_bytes_as_a_view_file_are_accepted_or_refused_by_pbem(
    playing_dir: Path, data: bytes
) -> None:
    path = playing_dir / "fuzz.view.json"
    path.write_bytes(data)
    orders = playing_dir / "orders" / "alice.toml"
    if not orders.exists():
        orders.write_text(skeleton(playing_dir, "alice"))
    assert outcome(lambda: processor.check_with_view(path, [orders])) in OUTCOMES
    assert outcome(lambda: verify.verify(verify.read_record(path))) in OUTCOMES


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["alice", "bob", "neutral", "Peru", "play", "setup", "over"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


def _paths(value: object, prefix: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_view_file_with_any_value_changed_is_accepted_or_refused_by_pbem(
    playing_dir: Path, data: st.DataObject
) -> None:
    view = _view(playing_dir)
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(_paths(view)[1:]))
        node: object = view
        for step in where[:-1]:
            node = node[step]  # type: ignore[index]
        node[where[-1]] = data.draw(JSON_VALUES)  # type: ignore[index]
    path = playing_dir / "fuzz.view.json"
    path.write_text(json.dumps(view))
    orders = playing_dir / "orders" / "alice.toml"
    if not orders.exists():
        orders.write_text(skeleton(playing_dir, "alice"))
    assert outcome(lambda: processor.check_with_view(path, [orders])) in OUTCOMES
    assert outcome(lambda: verify.verify(verify.read_record(path))) in OUTCOMES


# --- Point 5: control characters are escaped wherever they are shown ----------------------


def test_printable_shows_every_control_character_escaped() -> None:
    assert printable("a\x1b[2Jb\rc\nd\u202ee\x85\x7f") == "a\\x1b[2Jb\\x0dc\\x0ad\\u202ee\\x85\\x7f"
    assert printable("line\n\tnext\x07", lines=True) == "line\n\tnext\\x07"
    assert printable("Peru, Österreich, 東京") == "Peru, Österreich, 東京"


def test_control_characters_in_an_order_file_are_escaped_on_the_terminal_and_in_reports(
    playing_dir: Path,
) -> None:
    write_skeletons(playing_dir)
    text = skeleton(playing_dir, awaited(playing_dir))
    evil = playing_dir / "orders" / "zz-\x1b[31mred\u202e.toml"
    evil.write_text(
        text + '\n[[attack]]\nfrom = "\\u001b[2J\\r\\nalice.toml: valid."\nto = "Peru"\n'
    )
    other = playing_dir / "orders" / "zz-other.toml"
    other.write_text(text.replace('game = "test-game"', 'game = "x\\u001b]0;pwned\\u0007"'))
    for out in (run("check", playing_dir, evil, other, code=1), run("resolve", playing_dir)):
        assert "\x1b" not in out and "\u202e" not in out and "\r" not in out and "\x07" not in out
        assert "zz-\\x1b[31mred\\u202e.toml line" in out
        assert "unknown territory '\\x1b[2J\\x0d\\x0aalice.toml: valid.'" in out
        assert "game 'x\\x1b]0;pwned\\x07'" in out
    for name in ("_moderator.txt", "_moderator.html"):
        text = (report_dir(playing_dir, 2) / name).read_text()
        assert "\x1b" not in text and "\u202e" not in text and "\\x1b[2J" in text


def test_a_territory_name_thousands_of_characters_long_is_cut_in_messages(
    playing_dir: Path,
) -> None:
    path = playing_dir / "orders" / "long.toml"
    path.write_text(
        skeleton(playing_dir, awaited(playing_dir))
        + f'\n[[attack]]\nfrom = "{"x" * 50000}"\nto = "Peru"\n'
    )
    messages = processor.check_files(playing_dir, [path])[1][0][0].messages()
    assert max(len(m) for m in messages) < 300
    assert any("unknown territory 'xxxxx" in m and "…'" in m for m in messages)


# --- A whole directory of hostile files --------------------------------------------------


def test_a_folder_of_every_bad_file_at_once_still_resolves(tmp_path: Path) -> None:
    directory = new_game(tmp_path / "g")
    write_skeletons(directory)
    shutil.copy(directory / "orders" / "alice.toml", directory / "orders" / "zz-copy.toml")
    for i, case in enumerate(sorted(BAD_ORDER_FILES)):
        mutate, _ = BAD_ORDER_FILES[case]
        (directory / "orders" / f"bad{i}.toml").write_text(mutate("x = 1\n"))  # type: ignore[operator]
    for kind in ("fifo", "directory", "device"):
        os.rename(_special(directory, kind), directory / "orders" / f"special-{kind}.toml")
    (directory / "orders" / "binary.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(processor.NotReady, match="alice has 2 valid order files"):
        processor.resolve_game(directory)
    (directory / "orders" / "zz-copy.toml").unlink()
    outcome = processor.resolve_game(directory)
    assert outcome.resolution == 1
    assert len(outcome.rejected) == len(BAD_ORDER_FILES) + 4


def test_a_fifo_given_as_a_view_file_or_report_is_refused_without_blocking(
    playing_dir: Path,
) -> None:
    fifo = playing_dir.parent / "view.json"
    os.mkfifo(fifo)
    orders = playing_dir.parent / "mine.toml"
    orders.write_text(skeleton(playing_dir, "alice"))
    for args in (["check", "--view", fifo, orders], ["verify", "--report", fifo]):
        out = run(*args, code=1)
        assert f"cannot read {fifo}: this is a named pipe (FIFO), not a regular file" in out
