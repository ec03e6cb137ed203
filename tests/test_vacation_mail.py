"""A vacation mailed by the player: `vacation = { from = ..., to = ... }` in an order file, on
its own or with orders; recorded within the allowance, answered in the player's language, the
other players told when it moves the deadline."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_mail import T0, message, orders_for, outbox
from test_mail import fetch as fetch_mail

from pbem import mail
from pbem.cli import main
from pbem.core.board import load_board
from pbem.core.order_parsing import parse_orders
from pbem.errors import GameFileError, OrderError
from pbem.game.audit import audit_game
from pbem.records import away
from pbem.records.opening import read_game

PLAYERS = "alice=alice@example.org,bob=bob@example.org:sv,carol=carol@example.org"
AWAY = 'vacation = { from = "2027-03-04", to = "2027-03-07" }\n'


def run(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def d(tmp_path: Path) -> Path:
    d = tmp_path / "g"
    run("new", d, "--players", PLAYERS, "--seed", "0e" * 32, "--turn-time", "3d",
        "--now", T0.isoformat())  # fmt: skip
    return d


def header(d: Path, player: str) -> str:
    """The four lines of a player's order file that say whose it is."""
    return "\n".join(orders_for(d, player).splitlines()[:4]) + "\n"


def answer(d: Path, result: mail.FetchResult) -> str:
    [incoming] = result.incoming
    assert incoming.reply is not None
    body = outbox(d)[incoming.reply].get_body(preferencelist=("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())


def test_a_vacation_mailed_on_its_own_is_recorded_answered_and_told(d: Path) -> None:
    before = read_game(d).deadline
    result = fetch_mail(d, [message("alice@example.org", header(d, "alice") + AWAY)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED]
    assert result.incoming[0].reasons == ("vacation from 2027-03-04 to 2027-03-07 recorded",)
    text = answer(d, result)
    assert "Your vacation from 4 March 2027 to 7 March 2027 is recorded (4 days)." in text
    assert "the turns that await you wait for you" in text
    [v] = away.vacations(d)
    assert (v.player, v.by, v.days) == ("alice", "player", 4)
    assert read_game(d).deadline != before
    assert not (d / "orders" / "alice.toml").exists()  # no orders: nothing to play
    told = [m for name, m in outbox(d).items() if name.startswith("notice")]
    assert sorted(str(m["To"]) for m in told) == [
        "alice@example.org", "bob@example.org", "carol@example.org"
    ]  # fmt: skip
    assert audit_game(d).resolutions == 1


def with_vacation(text: str) -> str:
    """An order file with the vacation line where it belongs: after the four header lines."""
    lines = text.splitlines(keepends=True)
    return "".join(lines[:4]) + AWAY + "".join(lines[4:])


def test_a_vacation_beside_orders_is_not_recorded_and_the_answer_says_so(d: Path) -> None:
    result = fetch_mail(d, [message("bob@example.org", with_vacation(orders_for(d, "bob")))])
    [incoming] = result.incoming
    assert incoming.verdict is mail.Verdict.ACCEPTED  # the orders are taken as always
    assert incoming.reasons[0] == "vacation not recorded: beside orders"
    assert (d / "orders" / "bob.toml").is_file()
    assert away.vacations(d) == []
    text = answer(d, result)
    assert "Dina order för tur 0 i g är godkända." in text
    assert "Semestern i det här meddelandet är inte registrerad" in text  # bob reads Swedish


def test_broken_orders_beside_a_vacation_are_told_and_nothing_is_recorded(d: Path) -> None:
    text = header(d, "alice") + AWAY + 'trad = "best"\n'
    result = fetch_mail(d, [message("alice@example.org", text)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert "unknown key 'trad'" in answer(d, result)
    assert away.vacations(d) == []


def test_a_damaged_vacation_record_stops_the_fetch_and_tells_the_player_nothing(d: Path) -> None:
    fetch_mail(d, [message("alice@example.org", header(d, "alice") + AWAY, mid="<a@x>")])
    [path] = (d / "history" / "vacations").iterdir()
    path.write_text("resolution = 1\n")
    with pytest.raises(GameFileError, match="is damaged or incomplete"):
        fetch_mail(d, [message("bob@example.org", header(d, "bob") + AWAY, mid="<b@x>")])


def test_a_vacation_overlapping_one_recorded_is_refused_not_answered_as_recorded(d: Path) -> None:
    first = header(d, "alice") + 'vacation = { from = "2027-03-05", to = "2027-03-07" }\n'
    fetch_mail(d, [message("alice@example.org", first, mid="<e1@x>")])
    result = fetch_mail(d, [message("alice@example.org", header(d, "alice") + AWAY,
                                    mid="<e2@x>", minutes=5)])  # fmt: skip
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert "a vacation may not overlap another" in answer(d, result)
    assert [(v.start.isoformat(), v.end.isoformat()) for v in away.vacations(d)] == [
        ("2027-03-05", "2027-03-07")
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('vacation = { from = "2027-03-04", to = "2027-04-30" }\n', "allowance"),
        ('vacation = { from = "2027-03-04" }\n', "vacation must name its first and last day"),
    ],
)
def test_a_vacation_that_cannot_be_is_refused_and_nothing_is_recorded(
    d: Path, text: str, why: str
) -> None:
    result = fetch_mail(d, [message("alice@example.org", header(d, "alice") + text)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert why in answer(d, result)
    assert away.vacations(d) == []


def test_a_vacation_with_another_players_secret_is_refused(d: Path) -> None:
    forged = header(d, "alice").replace('player = "alice"', 'player = "carol"')
    result = fetch_mail(d, [message("carol@example.org", forged + AWAY)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert "the secret is not carol's" in answer(d, result)
    assert away.vacations(d) == []


def test_the_same_vacation_mailed_twice_is_recorded_once(d: Path) -> None:
    fetch_mail(d, [message("alice@example.org", header(d, "alice") + AWAY, mid="<a1@x>")])
    result = fetch_mail(
        d, [message("alice@example.org", header(d, "alice") + AWAY, mid="<a2@x>", minutes=5)]
    )
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED]
    assert len(away.vacations(d)) == 1


def test_a_vacation_line_round_trips_and_the_dice_do_not_follow_it() -> None:
    board = load_board("classic")
    text = 'game = "g"\nturn = 1\nplayer = "a"\nsecret = "s"\n' + AWAY
    orders = parse_orders(text, board)
    assert orders.vacation == ("2027-03-04", "2027-03-07") and not orders.plays
    assert parse_orders(orders.to_toml(), board) == orders
    dated = text.replace('"2027-03-04"', "2027-03-04").replace('"2027-03-07"', "2027-03-07")
    assert parse_orders(dated, board).vacation == orders.vacation
    played = parse_orders(text + '\n[[place]]\nterritory = "Peru"\narmies = 3\n', board)
    assert parse_orders(played.to_toml(), board) == played  # with orders too
    assert played.canonical() == replace(played, vacation=None).to_toml()
    with pytest.raises(OrderError, match="vacation must name its first and last day"):
        parse_orders(text.replace('"2027-03-04"', '"20270304"'), board)


def test_the_hint_names_the_table_as_it_is_written() -> None:
    board = load_board("classic")
    head = 'game = "g"\nturn = 1\nplayer = "a"\nsecret = "s"\n'
    fortify = '[fortify]\nfrom = "Peru"\nto = "Brazil"\narmies = 1\n'
    with pytest.raises(OrderError, match=r"after a \[fortify\] line"):
        parse_orders(head + fortify + AWAY, board)


def test_a_vacation_line_written_at_the_end_is_told_where_it_belongs(d: Path) -> None:
    result = fetch_mail(d, [message("alice@example.org", orders_for(d, "alice") + AWAY)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    assert "vacation = ... belongs at the top of the file" in answer(d, result)
    assert away.vacations(d) == []


def test_a_mailed_vacation_is_asked_when_the_message_was_sent(d: Path) -> None:
    sent = message("alice@example.org", header(d, "alice") + AWAY, minutes=90)
    result = fetch_mail(d, [sent])  # read a day later
    assert [i.verdict for i in result.incoming] == [mail.Verdict.ACCEPTED]
    [v] = away.vacations(d)
    assert v.time == "2027-03-01T13:30:00+00:00"
    assert audit_game(d).resolutions == 1


def test_a_mailed_vacation_dated_in_the_future_is_asked_when_it_was_read(d: Path) -> None:
    sent = message("alice@example.org", header(d, "alice") + AWAY, minutes=5 * 24 * 60)
    fetch_mail(d, [sent])
    [v] = away.vacations(d)
    assert v.time == "2027-03-02T12:00:00+00:00"  # test_mail.NOW


def test_a_refused_vacation_is_told_in_the_players_language(d: Path) -> None:
    long = 'vacation = { from = "2027-03-04", to = "2027-04-30" }\n'
    result = fetch_mail(d, [message("bob@example.org", header(d, "bob") + long)])
    assert [i.verdict for i in result.incoming] == [mail.Verdict.REJECTED]
    text = answer(d, result)
    assert (  # bob reads Swedish
        "din semester registrerades inte: 58 dagar är fler än de 14 av 14 semesterdagar som "
        "bob har kvar i det här spelet" in text
    )
    assert "allowance" not in text
    assert away.vacations(d) == []


def test_the_notice_of_a_vacation_tells_it_in_each_players_language(d: Path) -> None:
    fetch_mail(d, [message("alice@example.org", header(d, "alice") + AWAY)])
    told = {str(m["To"]): m for name, m in outbox(d).items() if name.startswith("notice")}
    for to, words in (
        ("bob@example.org", "alice är borta från 4 mars 2027 till 7 mars 2027"),
        ("carol@example.org", "alice is away from 4 March 2027 to 7 March 2027"),
    ):
        body = told[to].get_body(preferencelist=("plain",))
        assert body is not None
        assert words in " ".join(str(body.get_content()).split()), to
