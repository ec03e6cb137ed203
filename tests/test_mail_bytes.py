"""The messages pbem writes are the standard library's bytes: its faster ways of building them
(headers made and folded once, a text body set without parsing its headers) change nothing."""

from __future__ import annotations

from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage

from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.machine import LOOP_HEADER
from pbem.mail.records import POLICY, header, outgoing, set_text

NOW = datetime(2027, 3, 2, 12, 0, tzinfo=timezone.utc)
TEXTS = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
    | st.sampled_from(["\n", "\r\n", "\r", " ", "=", "\t", " \n", "=\n", "." * 90]),
    max_size=12,
).map("".join)


def standard(to: str, subject: str, body: str) -> EmailMessage:
    """The same message as `outgoing` and `set_text` build, by the standard library alone."""
    msg = EmailMessage(policy=policy.default)
    msg["From"] = "pbem@example.org"
    msg["To"] = to
    msg["Subject"] = subject
    msg["Date"] = "Tue, 02 Mar 2027 12:00:00 +0000"
    msg["Auto-Submitted"] = "auto-replied"
    msg[LOOP_HEADER] = "friday"
    msg["Message-ID"] = "<pbem.friday.reply.0123456789abcdef@example.org>"
    msg.set_content(body, cte="quoted-printable")
    return msg


def pbems(to: str, subject: str, body: str) -> EmailMessage:
    msg = outgoing("pbem@example.org", to, subject, "friday", "auto-replied", NOW)
    msg["Message-ID"] = "<pbem.friday.reply.0123456789abcdef@example.org>"
    set_text(msg, body)
    return msg


@settings(max_examples=300, deadline=None)
@given(
    subject=st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=120),
    body=TEXTS,
)
def test_an_answer_is_the_standard_librarys_bytes(subject: str, body: str) -> None:
    want = standard("ann@example.org", subject, body)
    for _ in range(2):  # the second time from the headers made and folded once
        got = pbems("ann@example.org", subject, body)
        assert got.as_bytes() == want.as_bytes()
        assert got.as_bytes(policy=POLICY.clone(utf8=True)) == want.as_bytes(
            policy=policy.default.clone(utf8=True)
        )
        assert got.as_string() == want.as_string()


def test_a_header_folds_for_each_policy_as_the_standard_one() -> None:
    long = "Re: " + " ".join(["a long subject, with ünïcode"] * 6)
    made = header("Subject", long)
    for pol in (
        POLICY,
        POLICY.clone(utf8=True),
        POLICY.clone(max_line_length=40),
        POLICY.clone(linesep="\r\n"),
        policy.SMTP,
        policy.default,
    ):
        want = policy.default.header_factory("Subject", long).fold(policy=pol)
        assert made.fold(policy=pol) == want
        assert made.fold(policy=pol) == want  # (kept, the same)
    assert "\r\n" in made.fold(policy=POLICY.clone(linesep="\r\n"))
    assert "=?utf-8?" in made.fold(policy=POLICY) and "ü" in made.fold(
        policy=POLICY.clone(utf8=True)
    )


def test_set_text_is_only_for_a_message_without_a_body() -> None:
    msg = outgoing("pbem@example.org", "ann@example.org", "s", "friday", "auto-replied", NOW)
    set_text(msg, "first\n")
    try:
        set_text(msg, "second\n")
    except ValueError:
        pass
    else:
        raise AssertionError("a second body was set")
    assert msg.get_content() == "first\n"
