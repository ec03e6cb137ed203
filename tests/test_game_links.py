"""Nothing in a game folder reaches outside it: a symbolic link in a game's templates/ or locale/,
or one of the folders pbem reads and writes (reports/, orders/, mail/, outbox/, history/) being
a link, is refused with a sentence naming the link; nothing outside the game is read, written
or mailed, and no report carries the game's seed or a player's secret."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import games_of_a_root, new_game, snapshot, write_skeletons
from test_mail import make_template, run, running_server

from pbem.files import first_link, link_on_the_way
from pbem.game import processor
from pbem.languages import i18n
from pbem.mail import smtp as send
from pbem.present import report
from pbem.records.history import report_dir
from pbem.records.opening import read_game

ADVICE = "replace the link by a real"


def secrets_of(directory: Path) -> dict[str, str]:
    """The game's seed (by the name '') and each player's secret, by player."""
    game = read_game(directory)
    return {"": game.seed.hex()} | {r.name: r.secret for r in game.registrations}


def no_secret_in_any_report(directory: Path, secrets: dict[str, str]) -> None:
    """No file of reports/ or outbox/ holds the seed, or a secret of a player it is not for."""
    for folder in ("reports", "outbox"):
        for path in (directory / folder).rglob("*") if (directory / folder).is_dir() else ():
            if path.is_file():
                text = path.read_bytes().decode("utf-8", "replace")
                for player, secret in secrets.items():
                    if player != path.name.split(".")[0].split("-")[-1]:
                        assert secret not in text, (path, player)


def refused(out: str, link: Path) -> None:
    assert f"{link} is a symbolic link" in out and ADVICE in out, out
    assert "Traceback" not in out


# --- a game's own templates and catalogues --------------------------------------------------


def test_a_template_linked_to_the_game_file_is_refused_and_no_report_holds_a_secret(
    playing_dir: Path,
) -> None:
    secrets = secrets_of(playing_dir)
    write_skeletons(playing_dir)
    templates = playing_dir / "templates"
    templates.mkdir()
    (templates / "report.txt.j2").write_text('{% include "g.j2" %}\n')
    os.symlink("../game.toml", templates / "g.j2")
    before = snapshot(playing_dir)
    refused(run("resolve", playing_dir, code=1), templates / "g.j2")
    assert snapshot(playing_dir) == before
    no_secret_in_any_report(playing_dir, secrets)
    (templates / "g.j2").unlink()
    (templates / "g.j2").write_text("a real file\n")
    run("resolve", playing_dir)
    assert (report_dir(playing_dir, 2) / "alice.txt").read_text() == "a real file\n"
    no_secret_in_any_report(playing_dir, secrets)


def test_a_templates_folder_linked_outside_the_game_is_not_used(
    playing_dir: Path, tmp_path: Path
) -> None:
    write_skeletons(playing_dir)
    outside = tmp_path / "pack"
    outside.mkdir()
    (outside / "report.txt.j2").write_text("from outside the game\n")
    os.symlink(outside, playing_dir / "templates")
    before = snapshot(playing_dir)
    refused(run("resolve", playing_dir, code=1), playing_dir / "templates")
    assert snapshot(playing_dir) == before


def test_the_loader_of_a_games_templates_refuses_links_and_pipes(
    playing_dir: Path, tmp_path: Path
) -> None:
    """The loader holds by itself (a link made after the game was read, as in a race)."""
    game = read_game(playing_dir)
    templates = playing_dir / "templates"
    templates.mkdir()
    (templates / "report.txt.j2").write_text('{% include "part.j2" %}\n')
    os.symlink(playing_dir / "game.toml", templates / "part.j2")
    with pytest.raises(report.TemplateProblem, match=f"{templates / 'part.j2'} is a symbolic"):
        report.render(game, 1, [], "alice")
    (templates / "part.j2").unlink()
    os.mkfifo(templates / "part.j2")
    with pytest.raises(report.TemplateProblem, match="named pipe"):
        report.render(game, 1, [], "alice")
    (templates / "part.j2").unlink()
    shutil.rmtree(templates)
    os.symlink(tmp_path, templates)
    (tmp_path / "report.txt.j2").write_text("outside\n")
    with pytest.raises(report.TemplateProblem, match=f"{templates} is a symbolic link"):
        report.render(game, 1, [], "alice")


def mo_file(folder: Path, language: str = "it") -> Path:
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo

    catalogue = Catalog(locale=language)
    catalogue.add("What happened", "FROM OUTSIDE")
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "pbem.mo").open("wb") as handle:
        write_mo(handle, catalogue)
    return folder / "pbem.mo"


@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_catalogue_reached_through_a_link_is_refused(
    tmp_path: Path, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = new_game(tmp_path / "g", players="alice:it,bob,carol")
    write_skeletons(directory)
    outside = mo_file(tmp_path / "outside" / "it" / "LC_MESSAGES")
    if what == "file":
        (directory / "locale" / "it" / "LC_MESSAGES").mkdir(parents=True)
        link = directory / "locale" / "it" / "LC_MESSAGES" / "pbem.mo"
        os.symlink(outside, link)
    else:
        link = directory / "locale"
        os.symlink(tmp_path / "outside", link)
    before = snapshot(directory)
    refused(run("resolve", directory, code=1), link)
    assert snapshot(directory) == before
    # and by itself, after the game was read
    monkeypatch.setattr(i18n, "own_catalogues", lambda d: d)
    i18n._translations.cache_clear()
    with pytest.raises(i18n.PbemError, match=f"{link} is a symbolic link"):
        i18n._translations("it", directory)
    i18n._translations.cache_clear()


# --- the folders pbem reads and writes ------------------------------------------------------

EVERY_COMMAND = [
    ["show", "{d}"],
    ["check", "{d}"],
    ["resolve", "{d}"],
    ["dice", "{d}"],
    ["audit", "{d}"],
    ["stats", "{d}"],
    ["undo", "{d}", "--why", "a mistake"],
    ["release", "{d}"],
    ["mail", "fetch", "{d}", "{m}"],
    ["mail", "send", "{d}", "--dry-run"],
    ["mail", "resend", "{d}", "--player", "alice"],
    ["config", "{d}", "player.alice.email=alice@example.org"],
    ["deadline", "{d}", "--extend", "2d", "--why", "a holiday"],
]
"""Every command that opens a game: each refuses the game before it reads or writes in it."""
FOLDERS = ["reports", "orders", "orders/done", "history", "mail", "mail/rejected", "outbox"]


@pytest.mark.parametrize("name", FOLDERS)
def test_a_folder_of_the_game_that_is_a_link_is_refused_and_nothing_outside_is_written(
    playing_dir: Path, tmp_path: Path, name: str
) -> None:
    write_skeletons(playing_dir)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("the moderator's own file\n")
    real = playing_dir / name
    if real.is_dir():
        for path in real.iterdir():
            shutil.move(path, outside / path.name)
        real.rmdir()
    real.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, real)
    message = tmp_path / "message.eml"
    message.write_text("From: stranger@example.org\nSubject: hello\n\nhello\n")
    before, there = snapshot(playing_dir), snapshot(outside)
    for command in EVERY_COMMAND:
        refused(run(*(a.format(d=playing_dir, m=message) for a in command), code=1), real)
    assert snapshot(outside) == there
    assert snapshot(playing_dir) == before


def test_an_order_file_linked_to_the_game_file_is_refused_alone_and_nothing_leaks(
    playing_dir: Path,
) -> None:
    secrets = secrets_of(playing_dir)
    write_skeletons(playing_dir)
    game_file = (playing_dir / "game.toml").read_bytes()
    os.symlink("../game.toml", playing_dir / "orders" / "zz-game.toml")
    out = run("resolve", playing_dir)
    assert "rejected: zz-game.toml: this is a symbolic link, not a regular file" in out, out
    assert "Resolved test-game turn 1 (resolution 2" in out
    no_secret_in_any_report(playing_dir, secrets)
    moderator = (report_dir(playing_dir, 2) / "_moderator.txt").read_text()
    assert not any(secret in moderator for secret in secrets.values())
    assert os.path.islink(playing_dir / "orders" / "zz-game.toml")  # left as rejected files are
    assert (playing_dir / "game.toml").read_bytes() != game_file  # written anew, not through
    assert not (playing_dir / "game.toml").is_symlink()


def test_a_game_folder_reached_through_a_link_of_the_moderators_is_used(
    playing_dir: Path, tmp_path: Path
) -> None:
    """Only what is inside the game is looked at: the game's own folder, or a folder above
    it, may be a link (a moderator's ~/games pointing to another disk)."""
    write_skeletons(playing_dir)
    (playing_dir / "templates").mkdir()
    (playing_dir / "templates" / "report.txt.j2").write_text("own template\n")
    mo_file(playing_dir / "locale" / "en" / "LC_MESSAGES", "en")
    linked = tmp_path / "linked"
    os.symlink(playing_dir, linked)
    assert link_on_the_way(linked, linked / "templates" / "report.txt.j2") is None
    run("resolve", linked)
    assert (report_dir(playing_dir, 2) / "alice.txt").read_text() == "own template\n"
    assert "FROM OUTSIDE" in (report_dir(playing_dir, 2) / "alice.html").read_text()


@pytest.mark.parametrize("link", ["templates/g.j2", "reports", "locale"])
def test_a_new_game_in_a_folder_with_a_link_is_not_created(tmp_path: Path, link: str) -> None:
    """A moderator copies a template pack into a new game's folder, then runs `pbem new`."""
    directory, outside = tmp_path / "spring", tmp_path / "outside"
    outside.mkdir()
    (directory / "templates").mkdir(parents=True)
    (directory / "templates" / "report.txt.j2").write_text('{% include "g.j2" %}\n')
    if link == "templates/g.j2":
        (tmp_path / "secret.txt").write_text("the moderator's own secret\n")
        os.symlink(tmp_path / "secret.txt", directory / link)
    else:
        (directory / "templates" / "g.j2").write_text("hello\n")
        os.symlink(outside, directory / link)
    before, there = snapshot(directory), snapshot(outside)
    refused(run("new", directory, "--players", "alice,bob,carol", code=1), directory / link)
    assert snapshot(directory) == before and snapshot(outside) == there
    assert not (directory / "game.toml").exists()


def test_a_link_inside_a_folder_of_the_game_is_found(playing_dir: Path, tmp_path: Path) -> None:
    link = report_dir(playing_dir, 1) / "elsewhere"  # (the newest folder: looked into)
    os.symlink(tmp_path, link)
    assert first_link(playing_dir) == link
    refused(run("show", playing_dir, code=1), link)


def test_links_elsewhere_in_the_game_folder_are_left_alone(
    playing_dir: Path, tmp_path: Path
) -> None:
    """Only pbem's folders are looked at: a moderator's own link beside them is theirs."""
    os.symlink(tmp_path, playing_dir / "notes")
    assert first_link(playing_dir) is None
    run("show", playing_dir)


@pytest.mark.parametrize("whose", ["game", "root"])
def test_an_outbox_linked_elsewhere_sends_nothing_found_there(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, whose: str
) -> None:
    """A game's outbox/, or the root's own (the answers to messages for no game)."""
    if whose == "game":
        directory = make_template(tmp_path_factory)
    else:
        directory = tmp_path / "root"
        new_game(directory / "friday")
        (directory / "pbem.toml").write_text("")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "r9999-secret.eml").write_bytes(
        b"From: moderator@example.org\r\nTo: stranger@example.org\r\nSubject: s\r\n\r\nx\r\n"
    )
    os.symlink(elsewhere, directory / "outbox")
    for server in running_server():
        refused(run("mail", "send", directory, "--smtp", server.spec, code=1), directory / "outbox")
        assert server.recorder.received == []
    assert sorted(p.name for p in elsewhere.iterdir()) == ["r9999-secret.eml"]


def test_a_message_in_the_outbox_that_is_a_link_is_never_sent(tmp_path: Path) -> None:
    target = tmp_path / "secret.eml"
    target.write_bytes(b"From: a@example.org\r\nTo: b@example.org\r\n\r\nsecret\r\n")
    (tmp_path / "outbox").mkdir()
    os.symlink(target, tmp_path / "outbox" / "r0001-x.eml")
    with pytest.raises(send._Permanent, match="symbolic link"):
        send.read_outgoing(tmp_path / "outbox" / "r0001-x.eml")


def test_a_game_with_a_link_is_one_failed_game_of_a_root(tmp_path: Path) -> None:
    linked, fine = games_of_a_root(tmp_path / "root", "linked", "fine")
    for directory in (linked, fine):
        processor.resolve_game(directory)
        write_skeletons(directory)
    os.symlink(tmp_path, linked / "templates")
    out = run("run", tmp_path / "root", code=1)
    assert "Traceback" not in out and f"{linked / 'templates'} is a symbolic link" in out, out
    assert processor.history_count(fine) == 3 and processor.history_count(linked) == 2
