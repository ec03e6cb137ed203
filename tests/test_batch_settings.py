"""Mail settings per game and per root: the game file's [mail], a pbem.toml above it, flags."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_skeletons

from pbem.cli import main
from pbem.errors import PbemError
from pbem.game import processor
from pbem.records import settings
from pbem.records.disk import GAME_FILE
from pbem.records.opening import read_game
from pbem.records.settings import Security, Server, in_force

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def invoke(*args: object, code: int = 0) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture(autouse=True)
def no_sender_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(settings.FROM_ENV, raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "club"
    invoke("new", root / "friday", "--players", "ann=ann@example.org,ben=ben@example.org")
    invoke("new", root / "league" / "duel", "--players", "cy=cy@example.org,dee=dee@example.org")
    return root


def test_a_game_without_settings_mails_from_pbem_at_localhost(root: Path) -> None:
    mail = in_force(root / "friday", read_game(root / "friday").mail)
    assert (mail.sender, mail.reply_to, mail.bcc, mail.server("smtp")) == (
        "pbem@localhost",
        "pbem@localhost",
        None,
        None,
    )


def test_every_game_under_a_root_inherits_its_pbem_toml(root: Path) -> None:
    invoke("config", root, "from=games@club.example", "smtp_host=mail.club.example")
    for game in (root / "friday", root / "league" / "duel"):
        mail = in_force(game, read_game(game).mail)
        assert mail.sender == "games@club.example"
        assert mail.server("smtp") == Server("mail.club.example", 25, Security.NONE, None)
        assert mail.origins["from"] == str((root / "pbem.toml").resolve())


def test_the_game_file_overrides_the_root_and_flags_override_both(root: Path) -> None:
    invoke("config", root, "from=games@club.example", "bcc=archive@club.example")
    invoke("config", root / "friday", "from=friday@club.example")
    game = read_game(root / "friday")
    mail = in_force(root / "friday", game.mail)
    assert (mail.sender, mail.bcc, mail.origins["from"]) == (
        "friday@club.example",
        "archive@club.example",
        "the game file",
    )
    flagged = in_force(root / "friday", game.mail, {"from": "now@club.example", "bcc": None})
    assert (flagged.sender, flagged.bcc) == ("now@club.example", "archive@club.example")


def test_a_nearer_pbem_toml_overrides_a_farther_one(root: Path) -> None:
    invoke("config", root, "from=games@club.example", "reply_to=desk@club.example")
    invoke("config", root / "league", "from=league@club.example")
    duel = in_force(root / "league" / "duel", read_game(root / "league" / "duel").mail)
    assert (duel.sender, duel.reply_to) == ("league@club.example", "desk@club.example")


def test_the_environment_comes_below_every_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(settings.FROM_ENV, "env@club.example")
    assert in_force(root / "friday").sender == "env@club.example"
    invoke("config", root, "from=games@club.example")
    assert in_force(root / "friday").sender == "games@club.example"


@pytest.mark.parametrize(("security", "port"), [("none", 25), ("starttls", 587), ("ssl", 465)])
def test_the_smtp_port_follows_the_protection(root: Path, security: str, port: int) -> None:
    invoke("config", root, "smtp_host=mail.club.example", f"smtp_security={security}")
    server = in_force(root).server("smtp")
    assert server is not None and server.port == port
    invoke("config", root, "smtp_port=2525")
    server = in_force(root).server("smtp")
    assert server is not None and server.port == 2525


def test_config_writes_the_game_file_and_a_resolution_keeps_it(root: Path) -> None:
    game = root / "friday"
    output = invoke("config", game, "from=friday@club.example", "smtp_user=friday")
    assert "Wrote" in output and "from = friday@club.example  (the game file)" in output
    write_skeletons(game)
    processor.resolve_game(game)
    data = tomllib.loads((game / GAME_FILE).read_text())
    assert data["mail"] == {"from": "friday@club.example", "smtp_user": "friday"}
    assert processor.audit_game(game).resolutions == 2


def test_an_empty_value_removes_a_setting(root: Path) -> None:
    invoke("config", root / "friday", "from=friday@club.example")
    invoke("config", root / "friday", "from=")
    assert read_game(root / "friday").mail == ()
    assert "mail" not in tomllib.loads((root / "friday" / GAME_FILE).read_text())


def test_config_keeps_the_rest_of_pbem_toml(root: Path) -> None:
    (root / "pbem.toml").write_text(
        '# the club\n[other]\nkept = true\n[mail]\nbcc = "a@b.example"\n'
    )
    invoke("config", root, "from=games@club.example")
    data = tomllib.loads((root / "pbem.toml").read_text())
    assert data == {
        "other": {"kept": True},
        "mail": {"bcc": "a@b.example", "from": "games@club.example"},
    }


def test_config_without_changes_shows_the_settings_in_force(root: Path) -> None:
    assert "No mail settings" in invoke("config", root / "friday")
    invoke("config", root, "from=games@club.example")
    lines = invoke("config", root / "friday").splitlines()
    assert lines == [f"from = games@club.example  ({(root / 'pbem.toml').resolve()})"]


def test_new_takes_mail_settings(tmp_path: Path) -> None:
    invoke("new", tmp_path / "g", "--players", "a,b", "--mail", "from=g@club.example")
    assert read_game(tmp_path / "g").mail == (("from", "g@club.example"),)


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("sender=x@example.org", "there is no mail setting 'sender'"),
        ("from=not an address", "from must be one email address"),
        ("bcc=a@b.example,c@d.example", "bcc must be one email address"),
        ("smtp_port=0", "smtp_port must be a port number"),
        ("smtp_port=smtp", "smtp_port must be a port number"),
        ("imap_port=65536", "imap_port must be a port number from 1 to 65535, not '65536'"),
        ("imap_user=a\nb", "imap_user must be one line of text"),
        ("from=a@b.example\r\nBcc: c@d.example", "from must be one email address"),
        ("smtp_security=tls", "smtp_security must be none, starttls or ssl"),
        ("smtp_host=mail example", "smtp_host must be a host name"),
        ("password=hunter2", "passwords are never stored"),
        ("smtp_password=hunter2", "passwords are never stored"),
        ("from", "is not key=value"),
    ],
)
def test_a_bad_setting_is_refused_and_changes_nothing(
    root: Path, assignment: str, message: str
) -> None:
    before = (root / "friday" / GAME_FILE).read_bytes()
    assert message in invoke("config", root / "friday", assignment, code=1)
    assert (root / "friday" / GAME_FILE).read_bytes() == before
    assert message in invoke("config", root, assignment, code=1)
    assert not (root / "pbem.toml").exists()


def test_a_damaged_pbem_toml_is_named(root: Path) -> None:
    (root / "pbem.toml").write_text("[mail\nfrom=")
    assert "pbem.toml is not valid TOML" in invoke("config", root / "friday", code=1)


def test_a_bad_setting_written_by_hand_is_named_with_the_fix(root: Path) -> None:
    (root / "pbem.toml").write_text('[mail]\nsmtp_port = "many"\n')
    with pytest.raises(PbemError, match=r"pbem.toml \[mail\]: smtp_port must be a port number"):
        in_force(root / "friday")
    path = root / "friday" / GAME_FILE
    path.write_text(path.read_text() + '\n[mail]\nfrom = "nobody"\n')
    output = invoke("show", root / "friday", code=1)
    assert "[mail]: from must be one email address" in output and "pbem config" in output


def test_the_edges_of_a_setting_are_accepted_and_blanks_trimmed(root: Path) -> None:
    from pbem.records.settings import changed

    table = changed((), {"smtp_port": " 65535 ", "imap_port": "1", "smtp_user": " mod "})
    assert table == (("imap_port", 1), ("smtp_port", 65535), ("smtp_user", "mod"))
    assert changed(table, {"smtp_user": "  "}) == (("imap_port", 1), ("smtp_port", 65535))
    with pytest.raises(PbemError, match="there is no mail setting 'nothing'"):
        changed(table, {"nothing": ""})


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        ("mail.example.org", ("mail.example.org", None)),
        (" mail.example.org:993 ", ("mail.example.org", "993")),
        ("[::1]:1143", ("::1", "1143")),
        ("[::1]", ("::1", None)),
    ],
)
def test_a_server_is_host_or_host_and_port(spec: str, parts: tuple[str, str | None]) -> None:
    from pbem.records.settings import split_host

    assert split_host(spec, "--imap") == parts


@pytest.mark.parametrize("spec", [":993", "mail.example.org:imap", "mail example.org", "[]:993"])
def test_a_bad_server_says_how_to_write_one(spec: str) -> None:
    from pbem.records.settings import split_host

    with pytest.raises(
        PbemError, match="--imap must be HOST or HOST:PORT, e.g. mail.example.org:993"
    ):
        split_host(spec, "--imap")


@pytest.mark.parametrize(("security", "port"), [("none", 143), ("starttls", 143), ("ssl", 993)])
def test_the_imap_port_follows_the_protection(root: Path, security: str, port: int) -> None:
    invoke("config", root, "imap_host=mail.club.example")
    assert in_force(root).server("imap") == Server("mail.club.example", 993, Security.SSL, None)
    invoke("config", root, f"imap_security={security}")
    server = in_force(root).server("imap")
    assert server is not None and server.port == port


def test_a_mail_setting_that_is_not_a_table_is_named(root: Path) -> None:
    (root / "pbem.toml").write_text('mail = "games@club.example"\n')
    with pytest.raises(PbemError, match=r"pbem.toml \[mail\] must be a table of settings"):
        in_force(root / "friday")


def test_a_relative_mailbox_is_taken_from_where_it_was_set(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    game = root / "friday"
    invoke("config", root, "maildir=Maildir")
    assert in_force(game).location("maildir", game) == root.resolve() / "Maildir"
    invoke("config", game, "maildir=Maildir")
    assert in_force(game, read_game(game).mail).location("maildir", game) == game / "Maildir"
    monkeypatch.chdir(tmp_path)
    flags = {"maildir": "Maildir"}
    assert in_force(game, (), flags).location("maildir", game) == tmp_path / "Maildir"
    assert in_force(game, (), {"mbox": str(root / "box")}).location("mbox", game) == root / "box"


def test_each_server_has_its_own_password_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(settings.SMTP_PASSWORD_ENV, "for smtp")
    monkeypatch.setenv(settings.IMAP_PASSWORD_ENV, "for imap")
    assert settings.password("smtp", "mod") == "for smtp"
    assert settings.password("imap", "mod") == "for imap"
    monkeypatch.delenv(settings.IMAP_PASSWORD_ENV)
    assert settings.password("imap", "mod", lambda: "typed") == "typed"
    with pytest.raises(PbemError, match="no IMAP password for mod: set PBEM_IMAP_PASSWORD"):
        settings.password("imap", "mod")


def test_a_configured_smtp_login_takes_the_password_and_no_login_asks_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SMTP server of a folder's settings logs in with PBEM_SMTP_PASSWORD only when the
    settings name a user; without one it sends without logging in, whatever is set."""
    from pbem.mail.inbox import smtp_of
    from pbem.records.settings import in_force

    monkeypatch.setenv("PBEM_SMTP_PASSWORD", "hunter2")
    (tmp_path / "pbem.toml").write_text(
        '[mail]\nsmtp_host = "mail.example.org"\nsmtp_port = 587\nsmtp_user = "games"\n'
    )
    server = smtp_of(in_force(tmp_path))
    assert server is not None and server.user == "games"
    assert server.password() == "hunter2"
    (tmp_path / "pbem.toml").write_text('[mail]\nsmtp_host = "mail.example.org"\n')
    anonymous = smtp_of(in_force(tmp_path))
    assert anonymous is not None and anonymous.user is None
    assert anonymous.password() is None
    (tmp_path / "pbem.toml").write_text('[mail]\nfrom = "games@example.org"\n')
    assert smtp_of(in_force(tmp_path)) is None
