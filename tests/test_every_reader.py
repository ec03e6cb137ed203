"""Every reader: no English left in what a player reads in another language (reports, answers,
the kit), templates that say nothing outside the catalogues, answers that fit a mail reader."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEED
from residue import left_in, message_text, readable
from test_languages import LANGUAGE_OF, OTHERS, babel  # noqa: F401  (the six-language game)
from test_mail import GAME, PLAYERS, fetch, message, orders_for, outbox

from pbem.cli import main
from pbem.core.state import Options
from pbem.game import players, processor
from pbem.languages.i18n import display_width
from pbem.present.text import wrapped_message
from pbem.records.history import report_dir

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
EXAMPLE = Path(__file__).resolve().parents[1] / "games" / "example"
READ = [
    "report.html.j2",
    "report.txt.j2",
    "macros.html.j2",
    "board.txt.j2",
    "story.txt.j2",
    "base.html.j2",
    "site_game.html.j2",
    "site_index.html.j2",
    "site_map.svg.j2",
]
"""The templates whose words a player or a visitor reads (the moderator's overview speaks the
moderator's language: English)."""


def words_outside_the_catalogue(text: str) -> list[str]:
    """Runs of two words or more of a template that no `_()` holds: its text less Jinja's
    expressions, statements and comments, HTML's tags, style and script, and the kit's command
    lines."""
    text = re.sub(r"\{#.*?#\}", " ", text, flags=re.S)
    text = re.sub(
        r"<style.*?</style>|<script.*?</script>|\{% block style %\}.*?\{% endblock %\}",
        " ",
        text,
        flags=re.S,
    )
    found = []
    for line in text.splitlines():
        if "{{ kit }}" in line:
            continue  # (a command: `python3 pbem-player.pyz check --view ...`)
        bare = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", " ", line)
        bare = re.sub(r"<[^>]*>|&\w+;", " ", bare)
        found += [m.group(0) for m in re.finditer(r"[A-Za-z]{2,}(?:[ ,:;.'-]+[A-Za-z]{2,})+", bare)]
    return found


@pytest.mark.parametrize("name", READ)
def test_a_readers_template_says_nothing_outside_the_catalogue(name: str) -> None:
    assert words_outside_the_catalogue((TEMPLATES / name).read_text("utf-8")) == []


def test_the_template_check_finds_english_outside_the_catalogue() -> None:
    assert words_outside_the_catalogue('<p class="muted">Swipe it sideways.</p>') == [
        "Swipe it sideways"
    ]
    assert words_outside_the_catalogue('<p>{{ _("Swipe it sideways.") }}</p>') == []


def test_the_residue_check_finds_an_english_sentence_left() -> None:
    assert left_in("Spelet är slut. The game is over: ann has won.", "sv") != []
    assert left_in("Spelet är slut: ann har vunnit.", "sv") == []


@pytest.mark.parametrize("player", [p for p, code in LANGUAGE_OF.items() if code != "en"])
def test_no_english_is_left_in_a_players_reports(babel: Path, player: str) -> None:  # noqa: F811
    code = LANGUAGE_OF[player]
    files = sorted(babel.glob(f"reports/*/{player}.*"))
    assert len(files) >= 5 * 3
    for path in files:
        if path.suffix == ".json":
            continue
        text = path.read_text("utf-8")
        text = readable(text) if path.suffix == ".html" else text
        assert left_in(text, code) == [], path.relative_to(babel)


def quoted_aside(text: str) -> str:
    """A mail's text without the lines it quotes as written (an order file, a message)."""
    return "\n".join(line for line in text.splitlines() if not re.match(r"^\s*(\d+ )?\| ", line))


@pytest.fixture(scope="module")
def answered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """For each language, a game whose alice reads it and mailed orders that were accepted,
    orders that were not, a question, and orders for another game."""
    out = {}
    for code in OTHERS:
        directory = tmp_path_factory.mktemp(code) / GAME
        processor.new_game(directory, PLAYERS, Options(), seed=SEED, name=GAME)
        players.set_language(directory, "alice", code)
        alice = "alice@example.org"
        fetch(
            directory,
            [
                message(alice, orders_for(directory, "alice"), mid="<ok@t>"),
                message(alice, orders_for(directory, "alice", "Nowhere"), mid="<bad@t>", minutes=1),
                message(alice, "When is my turn, please?", mid="<q@t>", minutes=2),
                message(
                    alice,
                    orders_for(directory, "alice").replace(f'game = "{GAME}"', 'game = "other"'),
                    mid="<o@t>",
                    minutes=3,
                ),
            ],
        )
        out[code] = directory
    return out


@pytest.mark.parametrize("code", OTHERS)
def test_no_english_is_left_in_the_answers_and_they_fit_a_mail_reader(
    answered: dict[str, Path], code: str
) -> None:
    mine = [m for m in outbox(answered[code]).values() if "alice@" in str(m["To"])]
    assert len(mine) >= 3
    for msg in mine:
        text = message_text(msg)
        assert left_in(quoted_aside(text), code) == [], (msg["Subject"], text)
        body = msg.get_body(preferencelist=("plain",))
        assert body is not None
        for line in body.get_content().splitlines():
            if not re.match(r"^\s*(\d+ )?\| ", line) and " " in line.strip():
                assert display_width(line) <= 78, line


def test_a_message_is_wrapped_keeping_indents_quotes_and_commands() -> None:
    long = "word " * 30
    text = f"{long}\n  - {long}\n   12 | {long}\n  python3 pbem-player.pyz {long}\n  {'x' * 90}"
    lines = wrapped_message(text).splitlines()
    assert all(display_width(line) <= 78 for line in lines[:-3])
    assert lines[0].startswith("word") and lines[1].startswith("word")
    item = [line for line in lines if line.startswith("  - ")]
    assert len(item) == 1 and lines[lines.index(item[0]) + 1].startswith("    word")
    assert f"   12 | {long}" in lines and f"  python3 pbem-player.pyz {long}" in lines
    assert lines[-1] == "  " + "x" * 90
    gujarati = "ખેલાડીના આગલા વારામાં " * 10
    assert all(display_width(line) <= 78 for line in wrapped_message(gujarati).splitlines())


@pytest.mark.parametrize("player", ["cas", "fay"])
def test_the_kit_checks_in_the_language_of_the_view_file(
    babel: Path,  # noqa: F811
    tmp_path: Path,
    player: str,
) -> None:
    code = LANGUAGE_OF[player]
    assert CliRunner().invoke(main, ["kit", str(tmp_path)]).exit_code == 0
    folder = next(
        report_dir(babel, r)
        for r in range(5, -1, -1)
        if (report_dir(babel, r) / f"{player}.orders.toml").is_file()
    )
    orders = tmp_path / "orders.toml"
    shutil.copy(folder / f"{player}.orders.toml", orders)
    kit = [sys.executable, str(tmp_path / "pbem-player.pyz")]
    done = subprocess.run(
        [*kit, "check", "--view", str(folder / f"{player}.view.json"), str(orders)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout.strip() and left_in(done.stdout + done.stderr, code) == [], done.stdout
    verified = subprocess.run(
        [*kit, "verify", "--report", str(folder / f"{player}.view.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert verified.returncode == 0, verified.stderr
    assert left_in(verified.stdout, code) == [], verified.stdout
    assert "key OK" not in verified.stdout  # (told in the player's language)
    odds = subprocess.run(
        [*kit, "odds", "10", "4", "--stop-at", "3", "--lang", code],
        capture_output=True,
        text=True,
        check=False,
    )
    assert odds.returncode == 0 and left_in(odds.stdout, code) == [], odds.stdout
    assert "against" not in odds.stdout and "," in odds.stdout


def test_the_moderator_reads_of_a_players_forecast_in_the_third_person(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pbem.core.orders import Attack, Orders
    from pbem.game.processor import _forecasts
    from pbem.records.opening import read_game

    state = read_game(EXAMPLE).state
    alice = state.player("alice")
    mine = next(iter(state.owned("alice")))
    theirs = next(t for t in state.board.neighbours(mine) if state.owner(t) != "alice")
    not_mine = next(t for t in state.territories if state.owner(t) != "alice")
    orders = Orders(
        state.game,
        state.turn,
        "alice",
        "s",
        attack=(Attack(mine, theirs), Attack(not_mine, mine)),
    )
    told = "\n".join(_forecasts(state, [orders]))
    assert "you do not hold" not in told and "alice does not hold" in told, told
    monkeypatch.setenv("PBEM_LANG", "sv")
    swedish = "\n".join(_forecasts(state, [orders]))
    assert "alice håller inte" in swedish, swedish
    assert alice.alive


def test_a_skipped_order_is_told_to_the_moderator_of_its_player() -> None:
    from pbem.core.events import Skipped
    from pbem.languages.i18n import language, speaking
    from pbem.present.skipped import skipped_sentence

    event = Skipped(
        "bob", "attack Siam from China", "no chain of your territories leads from Peru to Siam"
    )
    assert skipped_sentence(event, None) == (
        "bob's order to attack Siam from China was skipped: no chain of territories held by bob "
        "leads from Peru to Siam."
    )
    with speaking(language("sv")):
        assert "som bob håller" in skipped_sentence(event, None)
        assert "dina territorier" in skipped_sentence(event, "bob")


@pytest.mark.parametrize("code", ["en", *OTHERS])
def test_times_name_their_zone_as_the_deadlines_do(code: str) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from pbem.languages.i18n import language

    lang = language(code)
    utc = datetime(2027, 1, 5, 21, 56, tzinfo=ZoneInfo("UTC"))
    cet = datetime(2027, 1, 5, 21, 56, tzinfo=ZoneInfo("Europe/Stockholm"))
    assert lang.when(utc).endswith("21:56 UTC") and " Z" not in lang.when(utc)
    assert lang.when(cet).endswith("21:56 CET")


def test_an_undo_is_told_in_the_readers_language_and_the_games_zone() -> None:
    from zoneinfo import ZoneInfo

    from pbem.languages.i18n import language, speaking
    from pbem.languages.numbering import Played, Undone

    undone = Undone(Played.of(14, 13), "2026-12-01T11:30:00+00:00", "sent too early", 2)
    with speaking(language("sv")):
        told = undone.told(ZoneInfo("Europe/Stockholm"))
    assert told == (
        "tur 13 ångrades tisdag 1 december 2026, 12:30 CET: sent too early (ångring nummer 2 av "
        "den turen)"
    )
    assert "UTC+01:00" not in undone.told(ZoneInfo("Europe/Stockholm"))


@pytest.mark.parametrize(
    ("code", "point"),
    [("en", "."), ("id", ","), ("sv", ","), ("it", ","), ("nl", ","), ("gu", ".")],
)
def test_the_reports_numbers_have_the_languages_decimal_point(code: str, point: str) -> None:
    from pbem.languages.i18n import language, speaking
    from pbem.present.aids import _odds
    from pbem.present.stats import luck_line, signed

    luck = {
        "total": {"rolls": 12, "luck": -1.25, "z": 0.4},
        "attack": {"luck": 0.3},
        "defence": {"luck": -1.5},
    }
    with speaking(language(code)):
        odds = _odds(10, 3)
        line = luck_line(luck)
        assert re.fullmatch(rf"\d+\{point}\d[ \xa0]?%", odds), odds
        assert signed(-1.5) == f"-1{point}5" and signed(0.04) == f"0{point}0"
        assert f"1{point}2" in line and f"+0{point}3" in line and f"-1{point}5" in line, line


GLOSSARY = {
    "setup turn": {
        "sv": "starttur",
        "id": "persiapan",
        "it": "preparazione",
        "nl": "beginbeurt",
        "gu": "શરૂઆત",
    },
    "draft": {"sv": "draft", "id": "draf", "it": "scelt", "nl": "kie", "gu": "પસંદગી"},
    "order file": {
        "sv": "orderfil",
        "id": "file perintah",
        "it": "file d",
        "nl": "bevelenbestand",
        "gu": "આદેશ ફાઇલ",
    },
    "orders": {"sv": "order", "id": "perintah", "it": "ordin", "nl": "bevel", "gu": "આદેશ"},
}
"""One word for each game word in each language (docs/languages.md, "Glossary"): every
sentence of the catalogue that says the English word says the language's (a stem of it)."""


@pytest.mark.parametrize("code", OTHERS)
def test_each_game_word_has_one_translation_in_each_language(code: str) -> None:
    from babel.messages.pofile import read_po
    from residue import LOCALE

    with (LOCALE / code / "LC_MESSAGES" / "pbem.po").open("rb") as handle:
        catalogue = read_po(handle)
    drifted = []
    for m in catalogue:
        if not m.id:
            continue
        english = m.id[0] if isinstance(m.id, tuple) else m.id
        strings = m.string if isinstance(m.string, tuple) else (m.string,)
        for word, by in GLOSSARY.items():
            said = re.sub(r"\b(draft|orders)(\s*=|\s+must|:|\.toml|\s+is one)", "", english)
            said = re.sub(r"\[\[?\w+\]?\]|pbem/orders/", "", said)
            if re.search(rf"\b{word}\b", said, re.I) and not all(
                by[code].lower() in s.lower() for s in strings if s
            ):
                drifted.append(f"{word}: {english[:60]!r} -> {strings[0][:60]!r}")
    assert drifted == []


@pytest.mark.parametrize(
    ("code", "kind", "said"),
    [
        ("gu", "setup", "શરૂઆતના વારા પછી"),
        ("gu", "turn", "વારા 7 પછી"),
        ("it", "turn", "dopo il turno 7"),
        ("sv", "setup", "efter startturen"),
        ("en", "turn", "after turn 7"),
    ],
)
def test_after_a_turn_is_a_whole_phrase_in_each_language(code: str, kind: str, said: str) -> None:
    from pbem.languages.i18n import language, speaking
    from pbem.languages.numbering import Played

    played = Played(8, 7 if kind == "turn" else 0, kind)  # type: ignore[arg-type]
    with speaking(language(code)):
        assert played.after() == said


def test_the_gujarati_report_title_bends_the_turn_after_its_after(
    babel: Path,  # noqa: F811
) -> None:
    title = (report_dir(babel, 1) / "fay.txt").read_text("utf-8").splitlines()[0]
    assert "શરૂઆતના વારા પછી" in title and "શરૂઆતનો વારો પછી" not in title


def test_the_gujarati_text_report_keeps_its_continent_table_aligned(
    babel: Path,  # noqa: F811
) -> None:
    from pbem.languages.i18n import display_width

    text = (report_dir(babel, 5) / "fay.txt").read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("ખંડો:"))
    rows = [line for line in text[start + 1 : start + 7] if line.startswith("  ")]
    assert len(rows) == 6
    columns = {display_width(row[: row.index("માંથી")]) for row in rows}
    assert len(columns) == 1, rows  # "N માંથી M" starts in one column on every row


def test_the_players_table_says_holds_in_the_readers_language(babel: Path) -> None:  # noqa: F811
    for player, code in LANGUAGE_OF.items():
        text = (report_dir(babel, 5) / f"{player}.txt").read_text("utf-8")
        if code != "en":
            assert "holds " not in text, player


@pytest.mark.parametrize("code", OTHERS)
def test_a_reminder_is_in_the_players_language_with_no_english_left(
    tmp_path: Path, code: str
) -> None:
    from datetime import datetime, timezone

    from test_mail import run

    from pbem.mail import inbox
    from pbem.mail.reminders import queue_reminders

    game = tmp_path / "games" / "rome"
    run(
        "new",
        game,
        "--players",
        f"alice=alice@example.org:{code},bob=bob@example.org",
        "--seed",
        "22" * 32,
        "--now",
        "2026-11-30T21:00+01:00",
        "--turn-time",
        "48h",
        "--due-at",
        "20:00",
        "--timezone",
        "Europe/Rome",
    )
    run("config", game, "remind=24h")
    when = datetime(2026, 12, 2, 19, 30, tzinfo=timezone.utc)
    done = queue_reminders(game, inbox.game_settings(game, {}), when)
    assert len(done.queued) == 2
    (mine,) = [m for m in outbox(game).values() if "alice@" in str(m["To"])]
    text = message_text(mine)
    assert left_in(text, code) == [], text
    body = mine.get_body(preferencelist=("plain",))
    assert body is not None
    assert all(display_width(line) <= 78 for line in body.get_content().splitlines())


@pytest.mark.parametrize("code", OTHERS)
def test_the_draft_order_file_is_in_the_players_language_and_fits(
    tmp_path: Path, code: str
) -> None:
    from pbem.core.state import SetupMode
    from pbem.records.opening import read_game

    game = tmp_path / code / "draft"
    processor.new_game(
        game,
        processor.parse_player_list(["ann", "bob", "cy"]),
        Options(setup=SetupMode.DRAFT),
        seed=SEED,
        name="draft",
        languages={"ann": code},
    )
    text = (report_dir(game, 0) / "ann.orders.toml").read_text("utf-8")
    assert left_in(text, code) == [], text
    assert all(display_width(line) <= 78 for line in text.splitlines())
    state = read_game(game).state
    from pbem.languages.i18n import language

    names = language(code, state.board.name)
    translated = [t for t in state.board.names if names.place(t) != t]
    assert translated and all(f'"{names.place(t)}"' in text for t in translated)


def test_notices_are_wrapped_and_the_neutral_is_named_in_the_readers_word() -> None:
    from pbem.core.state import NEUTRAL
    from pbem.languages.i18n import language, speaking
    from pbem.present.missions import owner_name
    from pbem.present.text import wrapped_message

    long = "Tidsgränsen för tur 3 i spring-2027 har flyttats " * 4
    assert all(display_width(line) <= 78 for line in wrapped_message(long).splitlines())
    with speaking(language("it")):
        assert owner_name(NEUTRAL) == "neutrale" and owner_name("ann") == "ann"


def test_another_players_mission_choice_is_theirs() -> None:
    from pbem.core import missions
    from pbem.languages.i18n import language, speaking
    from pbem.present.missions import goal

    card = missions.Mission.parse("continents:Europe,Australia,+1")
    assert goal(card).endswith("of your choice")
    assert goal(card, own=False).endswith("of their choice")
    with speaking(language("it")):
        assert goal(card, own=False).endswith("a sua scelta")


def test_the_moderator_reads_of_armies_hidden_from_a_player_by_name() -> None:
    from fractions import Fraction

    from pbem.core.forecast import AttackForecast
    from pbem.core.orders import Attack
    from pbem.languages.reasons import telling_of
    from pbem.present.plan import _attack_line

    unseen = AttackForecast(
        Attack("Alaska", "Kamchatka"),
        Fraction(1),
        Fraction(0),
        (),
        None,
        None,
        None,
        None,
        unseen=True,
    )
    assert "hidden from you" in _attack_line(unseen)
    with telling_of("dan"):
        line = _attack_line(unseen)
    assert "hidden from dan" in line and "you" not in line


def test_a_team_win_is_told_as_the_teams() -> None:
    from pbem.mail.reports import report_subject

    view = {"phase": "over", "winners": ["bob", "dan"], "language": "nl", "players": []}
    assert report_subject(view, "ann", "after turn 9") == "spel voorbij: bob + dan wonnen samen"
    view = {"phase": "over", "winner": "bob", "players": []}
    assert report_subject(view, "ann", "after turn 9") == "game over: bob won"


def test_a_draft_reminder_says_what_is_due_and_what_happens_at_the_deadline(
    tmp_path: Path,
) -> None:
    from datetime import datetime, timezone

    from test_mail import run

    from pbem.mail import inbox
    from pbem.mail.reminders import queue_reminders

    game = tmp_path / "games" / "pick"
    run(
        "new", game, "--players", "alice=alice@example.org:sv,bob=bob@example.org",
        "--setup", "draft", "--seed", "22" * 32, "--now", "2026-11-30T21:00+01:00",
        "--turn-time", "48h", "--due-at", "20:00", "--timezone", "Europe/Rome",
    )  # fmt: skip
    run("config", game, "remind=24h")
    when = datetime(2026, 12, 2, 19, 30, tzinfo=timezone.utc)
    assert len(queue_reminders(game, inbox.game_settings(game, {}), when).queued) == 2
    mails = {str(m["To"]): m for m in outbox(game).values()}
    sv = message_text(mails["alice@example.org"])
    assert "påminnelse: draftturen ska vara inne" in sv and "utfyllnadsregeln" in sv
    en = message_text(mails["bob@example.org"])
    assert "reminder: the draft is due by" in en and "fill-in rule" in en
    assert "autopilot" not in en
