"""Mail in and out: orders fetched from a mailbox, reports and answers mailed to the players.

- `message`: reading one incoming message (sender, kind, the orders in it), never raising;
- `sources`: the mailboxes read (Maildir, mbox, .eml files);
- `fetch`: what becomes of each message (accepted, rejected, ...) and who is answered;
- `reports`: a player's report as a message;
- `send`: the reports built into the outbox, and what waits there handed on to be delivered;
- `smtp`: delivering over SMTP;
- `records`: the mail folders and state files of a game directory.
"""

from __future__ import annotations

from pbem.mail.fetch import fetch_orders, parse_time
from pbem.mail.machine import LOOP_HEADER
from pbem.mail.message import MAX_ORDERS_BYTES, Letter, read_letter
from pbem.mail.outcomes import FetchResult, Incoming, Verdict
from pbem.mail.records import DEFAULT_FROM
from pbem.mail.reports import build_report, report_subject
from pbem.mail.send import SendResult, send_mail
from pbem.mail.smtp import SmtpServer, smtp_server
from pbem.mail.sources import Sources
from pbem.terminal import printable

__all__ = [
    "DEFAULT_FROM",
    "LOOP_HEADER",
    "MAX_ORDERS_BYTES",
    "FetchResult",
    "Incoming",
    "Letter",
    "SendResult",
    "SmtpServer",
    "Sources",
    "Verdict",
    "build_report",
    "fetch_orders",
    "parse_time",
    "printable",
    "read_letter",
    "report_subject",
    "send_mail",
    "smtp_server",
]
