"""Player names: letters of any alphabet, kept safe as file names (one rule, in store)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from conftest import SEED

from pbem.core.state import Options
from pbem.errors import PbemError
from pbem.game import processor
from pbem.records.history import report_dir
from pbem.records.opening import read_game
from pbem.records.store import valid_player_name


@pytest.mark.parametrize("name", ["José", "Zoë", "Ангелина", "李雷", "Søren_2", "ann-marie", "q"])
def test_names_in_any_alphabet_are_player_names(name: str) -> None:
    assert valid_player_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "a.b",
        "..",
        "a/b",
        "a\\b",
        "ann marie",
        "_moderator",
        "2pac",
        "-x",
        "neutral",
        "NEUTRAL",
        "con",
        "Nul",
        "a" * 33,
        unicodedata.normalize("NFD", "José"),
        "x\u200b",
        "Ⅻ",
    ],
)
def test_names_that_would_be_unsafe_file_names_are_refused(name: str) -> None:
    assert not valid_player_name(name)


def test_a_new_game_takes_names_in_any_alphabet_and_names_files_after_them(
    tmp_path: Path,
) -> None:
    decomposed = unicodedata.normalize("NFD", "José")
    directory = tmp_path / "game"
    processor.new_game(
        directory,
        processor.parse_player_list([decomposed, "Ангелина", "Zoë"]),
        Options(),
        seed=SEED,
        name="g",
    )
    names = [p.name for p in read_game(directory).state.players]
    assert sorted(names) == sorted(["José", "Ангелина", "Zoë"])
    for name in names:
        assert (report_dir(directory, 0) / f"{name}.txt").is_file()


def test_names_that_differ_only_in_case_are_one_name() -> None:
    with pytest.raises(PbemError, match="listed twice"):
        processor.parse_player_list(["José", "JOSÉ"])


def test_names_that_differ_only_in_the_width_of_their_letters_are_one_name() -> None:
    with pytest.raises(PbemError, match="listed twice .* or in the width of their letters"):
        processor.parse_player_list(["alice", "ａｌｉｃｅ"])


def test_a_refused_name_says_what_names_may_be() -> None:
    with pytest.raises(PbemError, match=r"'a\.b' cannot be a player name: use .*any alphabet"):
        processor.parse_player_list(["a.b", "bob"])
