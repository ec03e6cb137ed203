"""The players' languages: catalogues, names on the board, plural forms, dates, Gujarati."""

from __future__ import annotations

import gettext
import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po
from click.testing import CliRunner
from conftest import SEED, attacking, flat
from test_kit import bare
from test_mail import GAME, fetch, message, orders_for, outbox, reply_to
from test_mail import PLAYERS as MAIL_PLAYERS
from test_report import parse_html

from pbem import mail
from pbem.cli import main
from pbem.core.board import load_board
from pbem.core.state import Options, state_digest
from pbem.errors import PbemError
from pbem.game import players, processor
from pbem.kit import KIT_NAME
from pbem.languages import i18n
from pbem.languages.reasons import problem_told
from pbem.mail.reports import report_subject
from pbem.present import report
from pbem.records.disk import GAME_FILE
from pbem.records.history import report_dir
from pbem.records.opening import read_game
from pbem.records.store import _load_toml, write_game

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "pbem" / "locale"
OTHERS = [code for code in i18n.LANGUAGES if code != "en"]
PLAYERS = "ann:en,bob:id,cas:sv,dan:it,eve:nl,fay:gu"
LANGUAGE_OF = {"ann": "en", "bob": "id", "cas": "sv", "dan": "it", "eve": "nl", "fay": "gu"}
RESOLUTIONS = 6
"""Setup (0), the setup turn (1), then four play turns."""

WHAT_HAPPENED = {
    "en": "What happened",
    "id": "Yang terjadi",
    "sv": "Vad som hände",
    "it": "Che cosa è successo",
    "nl": "Wat er gebeurde",
    "gu": "શું બન્યું",
}


def catalogue(code: str) -> object:
    return read_po((LOCALE / code / "LC_MESSAGES" / "pbem.po").open("rb"))


# --- The catalogues --------------------------------------------------------------------------


@pytest.mark.parametrize("code", OTHERS)
def test_every_catalogue_is_complete(code: str) -> None:
    cat = read_po((LOCALE / code / "LC_MESSAGES" / "pbem.po").open("rb"))
    assert not cat.fuzzy, "the header is marked fuzzy"
    assert str(cat.locale) == code
    for msg in cat:
        if not msg.id:
            continue
        assert not msg.fuzzy, f"fuzzy: {msg.id!r}"
        strings = msg.string if isinstance(msg.string, tuple) else (msg.string,)
        assert len(strings) == (cat.num_plurals if msg.pluralizable else 1), msg.id
        assert all(strings), f"untranslated: {msg.id!r}"
        wanted = set(re.findall(r"%\((\w+)\)s", " ".join(msg.id if msg.pluralizable else [msg.id])))
        for s in strings:
            assert set(re.findall(r"%\((\w+)\)s", s)) == wanted, f"{msg.id!r}: {s!r}"


SAME_IN_TRANSLATION = {
    ("sv", "neutral"),  # the Swedish word is the English one
}
"""Entries whose translation is rightly the English text (beyond those with no words at all)."""


@pytest.mark.parametrize("code", OTHERS)
def test_no_entry_keeps_the_english_text_as_its_translation(code: str) -> None:
    cat = catalogue(code)
    kept = []
    for msg in cat:  # type: ignore[attr-defined]
        if not msg.id:
            continue
        ids = msg.id if isinstance(msg.id, tuple) else (msg.id,)
        strings = msg.string if isinstance(msg.string, tuple) else (msg.string,)
        words = re.sub(r"%\(\w+\)s|%%", "", ids[0])
        if not re.search(r"[A-Za-z]{2}", words) or (code, ids[0]) in SAME_IN_TRANSLATION:
            continue  # placeholders and punctuation only, or allowed
        if any(s in ids for s in strings):
            kept.append(ids[0])
    assert kept == [], f"{code}: translate these (the msgstr is the msgid)"


def test_the_template_holds_every_sentence_of_the_code_and_templates() -> None:
    keywords = {"_": None, "n_": (1, 2), "of": None, "gettext": None, "ngettext": (1, 2)}
    found = {
        msgid if isinstance(msgid, str) else msgid[0]
        for _file, _line, msgid, _comments, _context in extract_from_dir(
            str(ROOT),
            method_map=[("pbem/**.py", "python"), ("templates/**.j2", "jinja2")],
            keywords=keywords,
        )
    }
    pot = read_po((LOCALE / "pbem.pot").open("rb"))
    listed = {m.id if isinstance(m.id, str) else m.id[0] for m in pot if m.id}
    assert found == listed, "run the pybabel commands in babel.cfg"


@pytest.mark.parametrize("code", OTHERS)
def test_the_compiled_catalogues_match_their_po_files(code: str) -> None:
    folder = LOCALE / code / "LC_MESSAGES"
    po = read_po((folder / "pbem.po").open("rb"))
    mo = read_mo((folder / "pbem.mo").open("rb"))
    assert _entries(po) == _entries(mo), "run pybabel compile -D pbem -d pbem/locale"


def _entries(cat: Catalog) -> dict[object, object]:
    def plain(value: object) -> object:
        return tuple(value) if isinstance(value, (list, tuple)) else value

    return {plain(m.id): plain(m.string) for m in cat if m.id}


@pytest.mark.parametrize(
    ("code", "one", "two"),
    [
        ("en", "1 army", "2 armies"),
        ("id", "1 pasukan", "2 pasukan"),
        ("sv", "1 armé", "2 arméer"),
        ("it", "1 armata", "2 armate"),
        ("nl", "1 leger", "2 legers"),
        ("gu", "1 સેના", "2 સેનાઓ"),
    ],
)
def test_plural_forms_for_one_and_two_armies(code: str, one: str, two: str) -> None:
    lang = i18n.language(code)
    assert lang.n_("%(num)s army", "%(num)s armies", 1) == one
    assert lang.n_("%(num)s army", "%(num)s armies", 2) == two


def test_numbers_and_dates_are_written_the_languages_way() -> None:
    moment = datetime(2026, 12, 2, 20, 0, tzinfo=timezone.utc)
    now = datetime(2026, 11, 30, 20, 0, tzinfo=timezone.utc)
    assert i18n.language("it").deadline(moment, now).startswith("mercoledì 2 dicembre 2026, 20:00")
    assert "tra 2 giorni" in i18n.language("it").deadline(moment, now)
    assert i18n.language("nl").when(moment).startswith("woensdag 2 december 2026")
    assert i18n.language("sv").number(12345) == "12\xa0345"
    assert i18n.language("nl").number(12345) == "12.345"
    assert "ડિસેમ્બર" in i18n.language("gu").when(moment)


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_every_language_writes_the_numbers_below_a_thousand_as_python_does(code: str) -> None:
    """Babel is skipped for them (i18n._number): a language that writes them otherwise (other
    digits, say) must take that shortcut away."""
    from babel.numbers import format_decimal

    i18n._number.cache_clear()
    for n in range(1000):
        assert format_decimal(n, locale=code) == str(n) == i18n.language(code).number(n)
    assert i18n.language(code).number(1000) == format_decimal(1000, locale=code)
    assert i18n.language(code).number(-5) == format_decimal(-5, locale=code)


@pytest.mark.parametrize("code", i18n.LANGUAGES)
def test_every_language_groups_whole_numbers_as_babel_does(code: str) -> None:
    """Whole numbers are grouped by i18n.GROUPING, not by Babel: each language held to Babel
    over every number to 100,000 on either side of 0, each power of ten and its neighbours,
    and random numbers of up to 18 digits (Babel works to a precision of 28 digits)."""
    import random

    from babel.numbers import format_decimal

    i18n._number.cache_clear()
    numbers = list(range(-100_000, 100_001))
    numbers += [s * (10**k + d) for k in range(19) for d in (-1, 0, 1) for s in (1, -1)]
    rng = random.Random(code)
    numbers += [rng.randrange(-(10**18), 10**18) for _ in range(20_000)]
    wrong = [n for n in numbers if i18n._number(code, n) != format_decimal(n, locale=code)]
    assert not wrong, f"{code}: {wrong[:5]} grouped otherwise than Babel does"


def test_a_grouping_that_differs_from_babel_is_seen() -> None:
    """The test above can fail: a separator or a group's size of its own is not Babel's."""
    from babel.numbers import format_decimal

    assert i18n._grouped(12345678, ",", 3, 3) != format_decimal(12345678, locale="gu")
    assert i18n._grouped(12345678, ",", 3, 2) == format_decimal(12345678, locale="gu")
    assert i18n._grouped(-1234, ".", 3, 3) == format_decimal(-1234, locale="nl")
    assert i18n._grouped(1234, ",", 3, 3) != format_decimal(1234, locale="sv")


def test_a_report_of_big_numbers_loads_no_number_formats(tmp_path: Path) -> None:
    """A report of a long game (its turn past 999, stacks of thousands) writes its numbers
    without Babel's locale data too."""
    from conftest import new_game, write_skeletons

    directory = new_game(tmp_path / "game")
    game = directory / "game.toml"
    write_skeletons(directory)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pbem.languages import i18n\n"
        "from pbem.game import processor\n"
        f"processor.resolve_game(Path({str(directory)!r}))\n"
        "for c in i18n.LANGUAGES:\n"
        "    print(i18n.language(c).number(-12345678), file=sys.stderr)\n"
        "print(sorted(m for m in sys.modules if m.startswith('babel')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert "-1,23,45,678" in out.stderr and "-12\xa0345\xa0678" in out.stderr
    assert game.exists()


def test_a_report_of_small_numbers_loads_no_number_formats(tmp_path: Path) -> None:
    """Babel's locale data is a fifth of a resolution's time to load: a report whose numbers
    are all below a thousand does without."""
    from conftest import new_game, write_skeletons

    directory = new_game(tmp_path / "game")
    write_skeletons(directory)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pbem.game import processor\n"
        f"processor.resolve_game(Path({str(directory)!r}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('babel')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert (report_dir(directory, 1) / "alice.html").exists()


def test_an_unknown_language_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(PbemError, match="'fr' is not one pbem speaks: use one of en, id"):
        processor.parse_player_languages(["ann:fr", "bob"])
    assert processor.parse_player_languages(["ann=ann@x.org:it", "bob"]) == {"ann": "it"}
    assert processor.parse_player_list(["ann=ann@x.org:it", "bob:nl"]) == [
        ("ann", "ann@x.org"),
        ("bob", ""),
    ]


def test_the_moderator_language_comes_from_pbem_lang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PBEM_LANG", "nl_NL.UTF-8")
    assert i18n.moderator_language() == "nl"
    monkeypatch.setenv("PBEM_LANG", "xx")
    assert i18n.moderator_language() == "en"
    monkeypatch.delenv("PBEM_LANG")
    assert i18n.moderator_language() == "en"


# --- A game in six languages -----------------------------------------------------------------


@pytest.fixture(scope="module")
def babel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six players, one per language, each playing the order file of their own report."""
    directory = tmp_path_factory.mktemp("babel") / "game"
    processor.new_game(
        directory,
        processor.parse_player_list(PLAYERS.split(",")),
        Options(),
        seed=SEED,
        name="babel",
        languages=processor.parse_player_languages(PLAYERS.split(",")),
    )
    for r in range(1, RESOLUTIONS):
        game = read_game(directory)
        for player in game.state.awaiting():
            sent = report_dir(directory, r - 1) / f"{player}.orders.toml"
            (directory / "orders" / f"{player}.toml").write_text(
                attacking(sent.read_text(encoding="utf-8")), encoding="utf-8"
            )
        outcome = processor.resolve_game(directory)
        assert not outcome.rejected, [m for s in outcome.rejected for m in s.messages()]
    return directory


def test_each_player_reads_their_report_in_their_language(babel: Path) -> None:
    for r in range(RESOLUTIONS):
        for player, code in LANGUAGE_OF.items():
            folder = report_dir(babel, r)
            text = (folder / f"{player}.txt").read_text(encoding="utf-8")
            assert WHAT_HAPPENED[code] in text, (player, r)
            for other, heading in WHAT_HAPPENED.items():
                if other != code:
                    assert heading not in text, (player, other)
            html = (folder / f"{player}.html").read_text(encoding="utf-8")
            assert f'<html lang="{code}">' in html
            parse_html(html)


def test_the_six_language_game_keeps_each_players_secret_and_hand(babel: Path) -> None:
    game = read_game(babel)
    secrets = {r.name: r.secret for r in game.registrations}
    folder = report_dir(babel, RESOLUTIONS - 1)
    for p in game.state.players:
        files = [f.read_text(encoding="utf-8") for f in folder.glob(f"{p.name}.*")]
        if p.name in game.state.awaiting():  # only the next player gets an order file
            assert any(secrets[p.name] in t for t in files)
        for other in game.state.players:
            if other.name != p.name:
                assert not any(secrets[other.name] in t for t in files)
                view = json.loads((folder / f"{p.name}.view.json").read_text(encoding="utf-8"))
                entry = next(e for e in view["players"] if e["name"] == other.name)
                assert "hand" not in entry


def test_the_moderator_overview_stays_in_english(babel: Path) -> None:
    text = (report_dir(babel, RESOLUTIONS - 1) / "_moderator.txt").read_text()
    assert "What happened" in text


def test_names_on_the_board_are_the_players_own(babel: Path) -> None:
    folder = report_dir(babel, RESOLUTIONS - 1)
    italian = (folder / "dan.txt").read_text(encoding="utf-8")
    assert "Europa meridionale" in italian and "Kamchatka" in italian
    assert "Southern Europe" not in italian
    assert "Zuid-Europa" in (folder / "eve.txt").read_text(encoding="utf-8")
    assert "Sydeuropa" in (folder / "cas.txt").read_text(encoding="utf-8")
    gujarati = (folder / "fay.html").read_text(encoding="utf-8")
    assert "દક્ષિણ યુરોપ" in gujarati and ">Southern Europe<" not in gujarati
    assert 'data-territory="Southern Europe"' in gujarati  # the map keeps the board's own keys


def test_the_language_is_stored_per_player_and_leaves_the_digest_alone(babel: Path) -> None:
    data = _load_toml(babel / GAME_FILE)
    assert {p["name"]: p.get("language") for p in data["players"]} == {
        **LANGUAGE_OF,
        "ann": "en",
    }
    assert "language" not in data
    game = read_game(babel)
    plain = read_game(babel)
    assert state_digest(game.state) == state_digest(plain.state)


def test_a_game_without_languages_writes_no_language_key(tmp_path: Path) -> None:
    processor.new_game(
        tmp_path / "g", processor.parse_player_list(["a", "b"]), Options(), seed=SEED
    )
    text = (tmp_path / "g" / GAME_FILE).read_text()
    assert "language" not in text
    game = read_game(tmp_path / "g")
    assert game.language_of("a") == "en"
    write_game(game)
    assert (tmp_path / "g" / GAME_FILE).read_text() == text


def test_the_game_language_is_everyones_unless_a_player_has_their_own(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        main,
        [
            "new",
            str(tmp_path / "g"),
            "--players",
            "a,b:sv",
            "--language",
            "nl",
            "--seed",
            "00" * 32,
        ],
    )
    assert result.exit_code == 0, result.output
    game = read_game(tmp_path / "g")
    assert (game.language_of("a"), game.language_of("b")) == ("nl", "sv")
    assert "Wat er gebeurde" in (report_dir(tmp_path / "g", 0) / "a.txt").read_text()


# --- Orders in the player's language -----------------------------------------------------------


def italian_orders(babel: Path) -> tuple[str, str]:
    game = read_game(babel)
    player = "dan"
    reg = game.registration(player)
    assert reg is not None
    with i18n.speaking(i18n.language("it")):
        text = report.order_skeleton(game.state, player, reg.secret)
    return player, text


def test_italian_territory_names_are_accepted_in_orders(babel: Path) -> None:
    game = read_game(babel)
    board = load_board()
    assert board.lookup("Europa meridionale") == "Southern Europe"
    assert board.lookup("kamchatka") == "Kamchatka"
    assert board.lookup("દક્ષિણ યુરોપ") == "Southern Europe"
    _player, text = italian_orders(babel)
    submission = processor.check_submission(game, Path("dan.toml"), text, "it")
    if "dan" in game.state.awaiting():
        assert submission.accepted, submission.messages()
    else:
        assert submission.orders is not None  # parsed: every Italian name was understood


def test_an_italian_players_errors_come_in_italian(babel: Path) -> None:
    game = read_game(babel)
    _player, text = italian_orders(babel)
    wrong = re.sub(r'territory = "[^"]*"', 'territory = "Europa meridionalle"', text, count=1)
    submission = processor.check_submission(game, Path("dan.toml"), wrong, "it")
    assert any(
        "territorio sconosciuto 'Europa meridionalle'; intendevi 'Europa meridionale'?" in m
        and "riga" in m
        for m in submission.messages()
    ), submission.messages()


def latest_order_file_of(game: Path, player: str) -> Path:
    """The latest report folder that gave `player` an order file (only the next player gets
    one)."""
    return max(f.parent for f in (game / "reports").glob(f"*/{player}.orders.toml"))


def test_check_with_a_view_speaks_the_views_language(babel: Path, tmp_path: Path) -> None:
    folder = latest_order_file_of(babel, "eve")
    view = json.loads((folder / "eve.view.json").read_text(encoding="utf-8"))
    assert view["language"] == "nl"
    orders = tmp_path / "eve.toml"
    orders.write_text(
        (folder / "eve.orders.toml")
        .read_text(encoding="utf-8")
        .replace('territory = "', 'territory = "Zuid-Europaa', 1),
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        main, ["check", "--view", str(folder / "eve.view.json"), str(orders)]
    )
    assert "onbekend gebied" in result.output, result.output


def test_the_mail_subject_is_in_the_players_language(babel: Path) -> None:
    folder = report_dir(babel, RESOLUTIONS - 1)
    view = json.loads((folder / "dan.view.json").read_text(encoding="utf-8"))
    subject = report_subject(view, "dan", "turn 3")
    assert subject.startswith("turno ")
    english = json.loads((folder / "ann.view.json").read_text(encoding="utf-8"))
    assert report_subject(english, "ann", "turn 3").startswith("turn ")


# --- Gujarati ----------------------------------------------------------------------------------


def test_gujarati_takes_the_width_of_what_it_shows() -> None:
    word = "દક્ષિણ"  # six code points; the virama (a nonspacing mark) takes no column
    assert len(word) == 6 and i18n.display_width(word) == 5
    assert i18n.display_width("e\u0301") == 1
    assert i18n.display_width("日本") == 4
    assert i18n.pad("યુરોપ", 8) == "યુરોપ" + " " * 4  # its u-sign takes no column


def test_gujarati_text_wraps_by_display_width() -> None:
    sentence = " ".join(["દક્ષિણ યુરોપ"] * 12)
    lines = i18n.wrap(sentence, 30)
    assert len(lines) > 1
    assert all(i18n.display_width(line) <= 30 for line in lines)
    assert max(i18n.display_width(line) for line in lines) > 24  # filled, not cut at bytes
    assert " ".join(lines) == sentence


def test_the_gujarati_report_declares_its_language_and_a_gujarati_font(babel: Path) -> None:
    html = (report_dir(babel, 1) / "fay.html").read_text(encoding="utf-8")
    assert '<html lang="gu">' in html
    assert "Noto Sans Gujarati" in html and "Shruti" in html
    text = (report_dir(babel, 1) / "fay.txt").read_text(encoding="utf-8")
    board = text.split("બોર્ડ\n")[1].split("\n\n")[0]
    rows = [line for line in board.splitlines() if line.rstrip()[-1:].isdigit()]
    assert len(rows) == 42
    columns = {i18n.display_width(line.rstrip()) for line in rows}
    assert len(columns) == 1, "the board's columns line up by display width"


def test_a_game_can_change_a_sentence_with_its_own_catalogue(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    processor.new_game(
        directory,
        processor.parse_player_list(["a:it", "b"]),
        Options(),
        seed=SEED,
        languages={"a": "it"},
    )
    folder = directory / "locale" / "it" / "LC_MESSAGES"
    folder.mkdir(parents=True)

    own = Catalog(locale="it")
    own.add("What happened", "Cronaca della guerra")
    with (folder / "pbem.mo").open("wb") as f:
        write_mo(f, own)
    i18n.translations.cache_clear()
    i18n.language.cache_clear()
    report._environment.cache_clear()
    try:
        game = read_game(directory)
        text = report.render(game, 0, [], "a")
    finally:
        i18n.translations.cache_clear()
        i18n.language.cache_clear()
        report._environment.cache_clear()
    assert "Cronaca della guerra" in text
    assert "Il tabellone" in text  # the rest from the built-in catalogue
    assert isinstance(i18n.translations("it"), gettext.GNUTranslations)


def test_the_players_kit_checks_orders_in_the_players_language(babel: Path, tmp_path: Path) -> None:
    folder = latest_order_file_of(babel, "eve")
    result = CliRunner().invoke(main, ["kit", str(tmp_path)])
    assert result.exit_code == 0, result.output
    shutil.copy(folder / "eve.view.json", tmp_path / "view.json")
    (tmp_path / "eve.toml").write_text(
        (folder / "eve.orders.toml")
        .read_text(encoding="utf-8")
        .replace('territory = "', 'territory = "Zuid-Europaa', 1),
        encoding="utf-8",
    )
    code, out = bare(
        sys.executable, tmp_path / KIT_NAME, tmp_path, "check", "--view", "view.json", "eve.toml"
    )
    assert code == 1 and "eve.toml regel " in out and "onbekend gebied" in out, out


def test_config_sets_a_players_language_and_takes_it_back(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    processor.new_game(
        directory, processor.parse_player_list(["ann=ann@x.org", "bob"]), Options(), seed=SEED
    )
    before = state_digest(read_game(directory).state)
    result = CliRunner().invoke(main, ["config", str(directory), "player.ann.language=it"])
    assert result.exit_code == 0, result.output
    assert "ann's language is now italiano (it) (was the game's)" in result.output
    game = read_game(directory)
    assert game.language_of("ann") == "it" and game.registration("ann").email == "ann@x.org"
    assert state_digest(game.state) == before
    result = CliRunner().invoke(main, ["config", str(directory), "player.ann.language="])
    assert result.exit_code == 0, result.output
    assert read_game(directory).language_of("ann") == "en"
    assert "language" not in (directory / GAME_FILE).read_text()


def test_config_refuses_an_unknown_language_and_changes_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    processor.new_game(directory, processor.parse_player_list(["ann", "bob"]), Options(), seed=SEED)
    text = (directory / GAME_FILE).read_text()
    result = CliRunner().invoke(
        main, ["config", str(directory), "player.bob.language=nl", "player.ann.language=fr"]
    )
    assert result.exit_code != 0
    assert "'fr' is not one pbem speaks: use one of en, id, sv, it, nl, gu" in result.output
    assert (directory / GAME_FILE).read_text() == text


def test_a_new_address_keeps_the_players_language(tmp_path: Path) -> None:
    directory = tmp_path / "g"
    processor.new_game(
        directory,
        processor.parse_player_list(["ann=ann@x.org", "bob"]),
        Options(),
        seed=SEED,
        languages={"ann": "sv"},
    )
    result = CliRunner().invoke(
        main, ["config", str(directory), "player.ann.email=ann@y.org", "--now", "2026-12-01T10:00Z"]
    )
    assert result.exit_code == 0, result.output
    assert read_game(directory).language_of("ann") == "sv"


def test_mailed_orders_are_answered_in_the_players_language(tmp_path: Path) -> None:
    directory = tmp_path / GAME
    processor.new_game(directory, MAIL_PLAYERS, Options(), seed=SEED, name=GAME)
    players.set_language(directory, "alice", "it")
    alice = "alice@example.org"
    good = fetch(
        directory, [message("alice@example.org", orders_for(directory, "alice"), mid="<ok@t>")]
    )
    incoming, body = reply_to(directory, good, "<ok@t>")
    assert incoming.verdict is mail.Verdict.ACCEPTED
    assert "I tuoi ordini per il turno 0 di" in body and "sono accettati" in body
    forecast = body.split("\n\n")[1].splitlines()[1:]  # what they will do, told in Italian
    assert forecast and all(line.startswith("  mettere ") for line in forecast), body
    wrong = orders_for(directory, "alice", "Europa meridionalle")
    bad = fetch(directory, [message(alice, wrong, mid="<bad@t>", minutes=1)])
    incoming, body = reply_to(directory, bad, "<bad@t>")
    assert incoming.verdict is mail.Verdict.REJECTED
    assert "non è stato accettato" in body
    assert "territorio sconosciuto 'Europa meridionalle'; intendevi" in body
    subjects = [m["Subject"] for m in outbox(directory).values()]
    assert any("accettati: i tuoi ordini per il turno 0" in s for s in subjects), subjects
    assert any("respinti: i tuoi ordini" in s for s in subjects), subjects


@pytest.mark.parametrize(
    ("change", "english", "translated"),
    [
        (
            ('game = "spring-2027"', 'game = "autumn-2027"'),
            "these orders are for an unknown game 'autumn-2027'",
            "ordern gäller ett okänt spel 'autumn-2027': den här adressen tar emot order för "
            "'spring-2027'",
        ),
        (
            ('player = "alice"', 'player = "zoe"'),
            "there is no player 'zoe' in this game",
            "det finns ingen spelare 'zoe' i det här spelet",
        ),
    ],
)
def test_a_refusal_of_orders_for_another_game_or_player_is_in_the_players_language(
    tmp_path: Path, change: tuple[str, str], english: str, translated: str
) -> None:
    """The answer tells the reason in the player's language; the moderator's records keep it
    in English."""
    directory = tmp_path / GAME
    processor.new_game(directory, MAIL_PLAYERS, Options(), seed=SEED, name=GAME)
    players.set_language(directory, "alice", "sv")
    orders = orders_for(directory, "alice")
    assert change[0] in orders
    got = fetch(
        directory,
        [message("alice@example.org", orders.replace(*change), mid="<x@t>")],
    )
    incoming, body = reply_to(directory, got, "<x@t>")
    assert incoming.verdict is mail.Verdict.REJECTED
    assert translated in flat(body), body
    assert english not in body
    assert any(r.startswith(english) for r in incoming.reasons), incoming.reasons


def test_a_refusals_reason_without_a_catalogue_entry_is_its_english_message() -> None:
    from pbem.errors import Problem
    from pbem.mail.refusing import reason_told

    swedish = i18n.language("sv")._
    assert reason_told(Problem("a plain reason"), swedish) == "a plain reason"
    assert reason_told("redan på svenska", swedish) == "redan på svenska"
    nobody = Problem.of("there is no player '%(player)s' in this game", player="zoe")
    assert reason_told(nobody, swedish) == "det finns ingen spelare 'zoe' i det här spelet"


# --- The forecast and warnings of a check, in the reader's language --------------------------

FORECAST_ENGLISH = (
    "place ",
    "attack ",
    "trade ",
    " against ",
    "takes it ",
    "of the time",
    "in all",
    "expected left",
    "most likely",
    "will be skipped",
    "happens ",
    "warning: ",
    "you hold ",
    "your orders trade none",
    "pbem trades",
    "last placement",
    "is down to",
    "has only 1 army",
    "you do not hold",
    "may be too thin",
    "will never happen",
    "all but 1 army",
    "the fortification leaves",
)
"""Pieces of the forecast and warning lines only an English reader may see (the keys of the
order file, such as `move = "min"` and `trade = "best"`, stay English in every language)."""


def _english_in_forecast(lines: list[str]) -> list[str]:
    text = "\n".join(lines).replace('trade = "best"', "")
    return [phrase for phrase in FORECAST_ENGLISH if phrase in text]


def _awaited_plan(babel: Path) -> tuple[object, object, str]:
    """The awaited player's state with five cards in hand (a forced trade) and orders from
    their ready file that place, attack twice from one stack and write no trade."""
    from dataclasses import replace as changed

    from pbem.core.order_parsing import parse_orders
    from pbem.core.orders import Attack

    game = read_game(babel)
    state = game.state
    player = state.awaiting()[0]
    owned = set(state.owned(player))
    hand = tuple(t for t in state.board.names if t not in owned)[:5]
    players = tuple(changed(p, hand=hand) if p.name == player else p for p in state.players)
    state = changed(state, players=players)
    reg = game.registration(player)
    assert reg is not None
    with i18n.speaking(i18n.language("it")):
        text = report.order_skeleton(state, player, reg.secret)
    text = text.replace('trade = "best"', "# no trade")
    orders = parse_orders(text, state.board)
    stack = max(owned, key=lambda t: (state.armies(t), t))
    enemies = [n for n in state.board.neighbours(stack) if n not in owned][:2]
    attacks = tuple(Attack(stack, target, line=20 + i) for i, target in enumerate(enemies))
    return state, changed(orders, attack=attacks), player


def test_the_forecast_and_its_warnings_speak_each_language(babel: Path) -> None:
    from pbem.game.checking import forecast

    state, orders, _player = _awaited_plan(babel)
    english = forecast(state, orders, i18n.language("en"))  # type: ignore[arg-type]
    assert any(line.startswith("warning: line ") and "pbem trades" in line for line in english)
    assert any(" against " in line and "takes it" in line for line in english), english
    for code in OTHERS:
        lines = forecast(state, orders, i18n.language(code))  # type: ignore[arg-type]
        assert len(lines) == len(english)
        assert _english_in_forecast(lines) == [], (code, lines)
        warning = i18n.language(code)._("warning: line %(line)s: %(message)s", line=1, message="")
        assert any(line.startswith(warning.split("1")[0]) for line in lines), (code, lines)


def test_an_italian_file_with_two_problems_and_a_warning_is_told_in_italian(
    babel: Path,
) -> None:
    state, orders, player = _awaited_plan(babel)
    game = read_game(babel)
    reg = game.registration(player)
    assert reg is not None
    with i18n.speaking(i18n.language("it")):
        text = report.order_skeleton(game.state, player, reg.secret)
    mine = i18n.language("it").place(game.state.owned(player)[0])
    wrong = re.sub(r'territory = "[^"]*"', 'territory = "Europa meridionalle"', text, count=1)
    wrong += f'\n[[place]]\nterritory = "{mine}"\narmies = 999\n'
    submission = processor.check_submission(game, Path("orders.toml"), wrong, "it")
    messages = submission.messages()
    assert len(messages) == 2, messages
    assert all(m.startswith("orders.toml riga ") for m in messages), messages
    assert any("territorio sconosciuto 'Europa meridionalle'" in m for m in messages)
    assert any('"rest" non lascia nulla' in m and "nuove armate" in m for m in messages)
    from pbem.game.checking import forecast

    lines = forecast(state, orders, i18n.language("it"))  # type: ignore[arg-type]
    warning = next(line for line in lines if line.startswith("attenzione: riga "))
    assert "carte e i tuoi ordini non ne scambiano" in warning and "pbem scambia" in warning
    assert any("lo conquista nel" in line for line in lines), lines


def test_the_moderators_overview_forecasts_in_the_moderators_language(
    babel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, orders, player = _awaited_plan(babel)
    monkeypatch.setenv("PBEM_LANG", "nl")
    lines = processor._forecasts(state, [orders])  # type: ignore[arg-type,list-item]
    assert lines and all(line.startswith(f"{player}: ") for line in lines)
    assert _english_in_forecast(lines) == [], lines
    assert any("waarschuwing: regel " in line for line in lines)
    monkeypatch.delenv("PBEM_LANG")
    assert any("warning: line " in line for line in processor._forecasts(state, [orders]))  # type: ignore[arg-type,list-item]


def test_a_file_that_is_not_valid_toml_is_told_in_the_players_language() -> None:
    from pbem.core.order_parsing import parse_orders
    from pbem.errors import OrderError

    with pytest.raises(OrderError) as caught:
        parse_orders('game = "g"\nplayer "ann"\n', load_board())
    (problem,) = caught.value.problems
    english = problem_told(i18n.language("en"), problem)
    assert english == (
        "orders line 2: this is not valid TOML (Expected '=' after a key in a key/value pair); "
        "check quotes, brackets and '='"
    )
    assert problem_told(i18n.language("it"), problem) == (
        "orders riga 2: questo non è TOML valido (atteso '=' dopo una chiave in una coppia "
        "chiave/valore); controlla virgolette, parentesi e '='"
    )
    for code in OTHERS:
        assert "Expected" not in problem_told(i18n.language(code), problem)


def test_a_forced_trade_pbem_made_is_told_as_made_for_the_player() -> None:
    from pbem.core.events import Traded, event_from_dict
    from pbem.present.sentences import narrate

    event = Traded("ann", ("Peru", "Ural", "wild"), 4, 1, forced=True, unwritten=True)
    assert event_from_dict(event.to_dict()) == event
    assert "unwritten" not in Traded("ann", ("Peru", "Ural", "wild"), 4, 1).to_dict()
    assert narrate(event, "bob") == (
        "ann traded Peru, Ural, wild for 4 armies (set 1 of the game): a forced trade, made by "
        "pbem for ann, who held 5 or more cards and whose orders traded none."
    )
    with i18n.speaking(i18n.language("it")):
        italian = narrate(event, "ann")
    assert "scambio obbligatorio, fatto da pbem per ann" in italian and "jolly" in italian


def test_a_file_not_in_utf8_and_a_wrong_secret_are_told_in_the_players_language(
    babel: Path, tmp_path: Path
) -> None:
    game = read_game(babel)
    path = tmp_path / "orders.toml"
    path.write_bytes("armies = 3 # più\n".encode("latin-1"))
    (message,) = processor.check_submission(game, path, None, "nl").messages()
    assert message == (
        "orders.toml: dit is geen tekstbestand in UTF-8: sla de bevelen op als platte tekst en "
        "stuur ze opnieuw"
    )
    _player, text = italian_orders(babel)
    wrong = re.sub(r'secret = "[^"]*"', 'secret = "not-it"', text)
    (message,) = processor.check_submission(game, path, wrong, "it").messages()
    assert "il segreto non è quello di dan: copialo dal tuo ultimo rapporto" in message


def test_check_with_a_view_forecasts_in_the_views_language(babel: Path, tmp_path: Path) -> None:
    folder = latest_order_file_of(babel, "eve")
    orders = tmp_path / "eve.toml"
    orders.write_text(
        attacking((folder / "eve.orders.toml").read_text(encoding="utf-8")), encoding="utf-8"
    )
    result = CliRunner().invoke(
        main, ["check", "--view", str(folder / "eve.view.json"), str(orders)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "eve.toml: geldig."
    assert any(" plaatsen op " in line for line in lines[1:]), lines
    assert any(" aanvallen vanuit " in line for line in lines[1:]), lines
    assert _english_in_forecast(lines[1:]) == [], lines


def test_a_text_report_in_any_language_is_verified_like_its_view_file(babel: Path) -> None:
    from pbem.present.dice_record import read_record

    for r in range(RESOLUTIONS):
        folder = report_dir(babel, r)
        for player in LANGUAGE_OF:
            told = read_record(folder / f"{player}.txt")
            viewed = read_record(folder / f"{player}.view.json")
            assert (told.key, told.previous, told.rolls, told.resolution) == (
                viewed.key,
                viewed.previous,
                viewed.rolls,
                viewed.resolution,
            ), (player, r)
            assert told.commitment == viewed.commitment
    rolled = [read_record(report_dir(babel, r) / "fay.txt").rolls for r in range(RESOLUTIONS)]
    assert any(rolled)
