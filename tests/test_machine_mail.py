"""Machine mail: every bounce, auto-reply, read receipt and list message shape below must be
recognised (pbem must never answer it), and every ordinary message a person's mail client
writes must not be (the player would never be answered).

The shapes are written after the bounces and auto-replies that mail servers, providers and
clients actually send (as RFC 3464, RFC 3834 and RFC 8098 give them, as the public fixture
sets of bounce parsers show them, and as providers document them), with names and addresses
made up. Each is tried as delivered by a server that records the envelope sender in a
Return-Path header and by one that does not, because pbem reads mailboxes of both kinds.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbem.mail.machine import LOOP_HEADER, automatic
from pbem.mail.message import read_letter

FIXTURES = Path(__file__).parent / "fixtures" / "mail" / "machine"
GAME = "[spring-2027] turn 3: your move"
"""The subject of a report pbem sends; auto-replies answer it."""

Shape = dict[str, str]


def headers(shape: Shape) -> dict[str, list[str]]:
    """A shape as the caller hands it over: lower-case names, lists of values."""
    out: dict[str, list[str]] = {}
    for name, value in shape.items():
        out.setdefault(name.lower(), []).append(value)
    return out


def without_return_path(shape: Shape) -> Shape:
    return {name: value for name, value in shape.items() if name != "Return-Path"}


def deliveries(table: dict[str, Shape]) -> list[object]:
    """Each shape as two deliveries: with the Return-Path the receiving server wrote, and
    through a server that writes none."""
    cases = []
    for name, shape in table.items():
        cases.append(pytest.param(shape, id=name))
        if "Return-Path" in shape:
            cases.append(pytest.param(without_return_path(shape), id=f"{name}, no Return-Path"))
    return cases


EXCHANGE = "MicrosoftExchange329e71ec88ae4615bbc36ab6ce41109e"
"""The system mailbox that Exchange sends its reports from, the same in every organisation."""
DSN = 'multipart/report; report-type=delivery-status;\n\tboundary="{}"'
MDN = 'multipart/report; report-type=disposition-notification;\n\tboundary="{}"'

# ---------------------------------------------------------------------------------------------
# Bounces (non-delivery reports and delay warnings), by the program that writes them

BOUNCES: dict[str, Shape] = {
    "Postfix": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@mx1.example.org (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "To": "pbem@example.net",
        "Auto-Submitted": "auto-replied",
        "MIME-Version": "1.0",
        "Content-Type": DSN.format("3F2B81C0A4.1709294400/mx1.example.org"),
        "Message-Id": "<20270301120000.3F2B81C0A4@mx1.example.org>",
    },
    "Postfix delay warning": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@mx1.example.org (Mail Delivery System)",
        "Subject": "Delayed Mail (still being retried)",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("6A1C2E0B11.1709298000/mx1.example.org"),
    },
    "Postfix, null sender written as MAILER-DAEMON": {
        "Return-Path": "<MAILER-DAEMON>",
        "From": "MAILER-DAEMON@mail2.example.com (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "Content-Type": DSN.format("2222FFFFEEEE.0000000000/mail2.example.com"),
    },
    "Postfix on iCloud": {
        "Return-Path": "<>",
        "From": "<Mailer-Daemon@mail-in.icloud.com> (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "Content-Type": DSN.format("A1B2C3D4E5.1709294400/mail-in.icloud.com"),
    },
    "Exim": {
        "Return-Path": "<>",
        "X-Failed-Recipients": "bob@example.org",
        "Auto-Submitted": "auto-replied",
        "From": "Mail Delivery System <Mailer-Daemon@mx.example.org>",
        "To": "pbem@example.net",
        "Subject": "Mail delivery failed: returning message to sender",
        "Message-Id": "<E1qAbCd-0001Ef-Gh@mx.example.org>",
    },
    "Exim with a delivery report": {
        "Return-Path": "<>",
        "X-Failed-Recipients": "bob@example.org",
        "Auto-Submitted": "auto-replied",
        "From": "Mail Delivery System <Mailer-Daemon@mx.example.org>",
        "Subject": "Mail delivery failed: returning message to sender",
        "Content-Type": DSN.format("1709294400-eximdsn-1804289383"),
        "MIME-Version": "1.0",
    },
    "Exim delay warning": {
        "Return-Path": "<>",
        "Auto-Submitted": "auto-replied",
        "From": "Mail Delivery System <Mailer-Daemon@mx.example.org>",
        "Subject": "Warning: message 1qAbCd-0001Ef-Gh delayed 24 hours",
        "Content-Type": DSN.format("1709380800-eximdsn-846930886"),
    },
    "cPanel Exim": {
        "Return-Path": "<>",
        "X-Failed-Recipients": "bob@example.org",
        "Auto-Submitted": "auto-replied",
        "From": "Mail Delivery System <MAILER-DAEMON@server.hosting.example>",
        "Subject": "Mail delivery failed: returning message to sender",
    },
    "Exim at 1&1": {
        "From": '"Mail Delivery System" <mailer-daemon@kundenserver.de>',
        "Subject": "Mail delivery failed: returning message to sender",
        "Content-Type": "text/plain; charset=utf-8",
    },
    "Sendmail": {
        "Return-Path": "<MAILER-DAEMON@smtp.example.org>",
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@smtp.example.org>",
        "Subject": "Returned mail: see transcript for details",
        "Auto-Submitted": "auto-generated (failure)",
        "Content-Type": DSN.format("j3QNaaaa222222.1709294400/smtp.example.org"),
    },
    "Sendmail delay warning": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@smtp.example.org>",
        "Subject": "Warning: could not send message for past 4 hours",
        "Auto-Submitted": "auto-generated (warning-timeout)",
        "Content-Type": DSN.format("j3QNbbbb333333.1709308800/smtp.example.org"),
    },
    "Sendmail postmaster copy": {
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@smtp.example.org>",
        "Subject": "Postmaster notify: see transcript for details",
        "Auto-Submitted": "auto-generated (postmaster-notification)",
        "Content-Type": DSN.format("j3QNcccc444444.1709294400/smtp.example.org"),
    },
    "RFC 3464 example": {
        "Date": "Thu, 7 Jul 1994 17:16:05 -0400",
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@CS.UTK.EDU>",
        "Message-Id": "<199407072116.RAA14128@CS.UTK.EDU>",
        "Subject": "Returned mail: Cannot send message for 5 days",
        "To": "<owner-info-mime@cs.utk.edu>",
        "MIME-Version": "1.0",
        "Content-Type": "multipart/report; report-type=delivery-status;\n"
        "\tboundary=RAA14128.773615765/CS.UTK.EDU",
    },
    "qmail": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@mx4.example.org",
        "To": "pbem@example.net",
        "Subject": "failure notice",
    },
    "qmail at Yahoo": {
        "From": "MAILER-DAEMON@yahoo.com",
        "Subject": "Failure Notice",
    },
    "Courier": {
        "From": '"Courier mail server at mx.example.org" <@>',
        "Subject": "NOTICE: mail delivery status.",
        "Content-Type": DSN.format("=_courier-12345-0-1709294400=_"),
    },
    "Courier as postmaster": {
        "From": "postmaster@example.org",
        "Subject": "NOTICE: mail delivery status.",
        "Content-Type": DSN.format("=_courier-23456-0-1709294400=_"),
    },
    "OpenSMTPD": {
        "Return-Path": "<>",
        "From": "Mailer Daemon <MAILER-DAEMON@mail.example.org>",
        "Subject": "Delivery status notification: error",
        "Content-Type": 'multipart/mixed; boundary="16444391902.fdDc4.67890"',
    },
    "Exchange 2003": {
        "Return-Path": "<>",
        "From": "System Administrator <postmaster@example.com>",
        "Subject": "Undeliverable: " + GAME,
        "Content-Type": DSN.format("----_=_NextPart_000_01C0A1B2.C3D4E5F6"),
        "X-MimeOLE": "Produced By Microsoft Exchange V6.5",
    },
    "Exchange 2007": {
        "Return-Path": "<>",
        "From": "postmaster@example.com",
        "Subject": "Undeliverable: " + GAME,
        "Content-Type": DSN.format("9B095B5ADSN=_01CF7F0B5B8AB6A400000003mail.example.com"),
        "Thread-Topic": GAME,
    },
    "Exchange 2013 to 2019": {
        "Return-Path": "<>",
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.com>",
        "Subject": "Undeliverable: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("ad8e1c4b-3d2f-4f5e-9a7b-1c2d3e4f5a6b"),
        "Content-Language": "en-US",
    },
    "Exchange 2016, German": {
        "Return-Path": "<>",
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.de>",
        "Subject": "Unzustellbar: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
        "Content-Language": "de-DE",
    },
    "Exchange 2016, French": {
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.fr>",
        "Subject": "=?iso-8859-1?Q?Non_remis=A0:_?=" + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809"),
    },
    "Exchange 2016, Italian": {
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.it>",
        "Subject": "Non recapitabile: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("2b3c4d5e-6f70-8192-a3b4-c5d6e7f8091a"),
    },
    "Exchange 2016, Dutch": {
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.nl>",
        "Subject": "Onbestelbaar: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("3c4d5e6f-7081-92a3-b4c5-d6e7f8091a2b"),
    },
    "Exchange 2016, Swedish": {
        "From": f"Microsoft Outlook\n\t<{EXCHANGE}@example.se>",
        "Subject": "=?iso-8859-1?Q?Olevererbart:_?=" + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("4d5e6f70-8192-a3b4-c5d6-e7f8091a2b3c"),
    },
    "Office 365": {
        "Return-Path": "<>",
        "From": "Microsoft Outlook <postmaster@contoso.onmicrosoft.com>",
        "To": "<pbem@example.net>",
        "Subject": "Undeliverable: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("ndr_5e6f7081-92a3-b4c5-d6e7-f8091a2b3c4d"),
        "X-MS-Exchange-Organization-SCL": "-1",
        "X-MS-PublicTrafficType": "Email",
    },
    "Office 365 delay": {
        "From": "Microsoft Outlook <postmaster@contoso.onmicrosoft.com>",
        "Subject": "Delivery delayed: " + GAME,
        "X-MS-Exchange-Message-Is-Ndr": "",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("dly_6f708192-a3b4-c5d6-e7f8-091a2b3c4d5e"),
    },
    "Outlook.com": {
        "Return-Path": "<>",
        "From": "postmaster@outlook.com",
        "Subject": "Undeliverable: " + GAME,
        "Content-Type": DSN.format("9B095B5ADSN=_01D0A1B2C3D4E5F600000001BLU004-MC1F1.hotmail.com"),
    },
    "Hotmail": {
        "Return-Path": "<>",
        "From": "postmaster@mail.hotmail.com",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": DSN.format("9B095B5ADSN=_01D1B2C3D4E5F6A700000002COL004-MC3F9.hotmail.com"),
    },
    "Gmail": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "To": "pbem@example.net",
        "X-Failed-Recipients": "bob@example.org",
        "Subject": "Delivery Status Notification (Failure)",
        "Message-ID": "<65e1c2a3.050a0220.1b2c3.abcdGMR@mx.google.com>",
        "Date": "Mon, 01 Mar 2027 04:00:03 -0800 (PST)",
        "MIME-Version": "1.0",
        "Content-Type": 'multipart/report; boundary="000000000000a1b2c3d4e5f6a7b8";'
        " report-type=delivery-status",
        "Auto-Submitted": "auto-replied",
    },
    "Gmail delay": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "Subject": "Delivery Status Notification (Delay)",
        "Content-Type": 'multipart/report; boundary="000000000000b2c3d4e5f6a7b8c9";'
        " report-type=delivery-status",
        "Auto-Submitted": "auto-replied",
    },
    "Gmail, older plain text": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "X-Failed-Recipients": "bob@example.org",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": "text/plain; charset=ISO-8859-1",
    },
    "Google Workspace": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "X-Failed-Recipients": "bob@example.org",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": 'multipart/report; boundary="0000000000001c2d3e4f5a6b7c8d";'
        " report-type=delivery-status",
        "Auto-Submitted": "auto-replied",
    },
    "Google Groups": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
        "X-Failed-Recipients": "bob@example.org",
        "Subject": "Delivery Status Notification (Failure)",
        "Auto-Submitted": "auto-replied",
        "Content-Type": 'text/plain; charset="UTF-8"',
    },
    "Yahoo": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@yahoo.com",
        "To": "pbem@example.net",
        "Subject": "Failure Notice",
    },
    "AOL": {
        "Return-Path": "<Postmaster@AOL.com>",
        "From": "Postmaster <Postmaster@AOL.com>",
        "Subject": "Undeliverable: " + GAME,
        "Content-Type": DSN.format("0__=0ABBE5DEDFE1A6C38f9e8a93df938690918c0ABBE5DEDFE1A6C3"),
    },
    "Amazon SES": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@amazonses.com",
        "To": "pbem@example.net",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": 'multipart/report; report-type=delivery-status;\n\tboundary="=_SES_a1b2"',
    },
    "Amazon SES bounce address": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@email-bounces.amazonses.com",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": 'multipart/report; report-type=delivery-status;\n\tboundary="=_SES_c3d4"',
    },
    "Amazon WorkMail": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@us-west-2.amazonses.com",
        "Subject": "=?iso-8859-15?Q?Delivery_Status_Notification_=28Failure=29?=",
        "Content-Type": 'multipart/mixed; \n\tboundary="----=_Part_1234_5678.1709294400"',
    },
    "Mail.ru": {
        "Return-Path": "<>",
        "From": "mailer-daemon@corp.mail.ru",
        "Subject": "=?UTF-8?B?0JLQsNGI0LUg0YHQvtC+0LHRidC10L3QuNC1INC90LUg?=\n"
        " =?UTF-8?B?0LTQvtGB0YLQsNCy0LvQtdC90L4=?=",
        "X-Failed-Recipients": "bob@example.ru",
        "Auto-Submitted": "auto-replied",
        "Content-Type": "text/plain; charset=utf-8",
    },
    "Yandex": {
        "Return-Path": "<>",
        "From": "mailer-daemon@yandex.ru",
        "Subject": "=?UTF-8?B?0J3QtdC00L7RgdGC0LDQstC70LXQvdC90L7QtSDRgdC+0L7QsdGJ0LXQvdC40LU=?=",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("yandex-1709294400-abcdef"),
    },
    "GMX": {
        "Return-Path": "",
        "From": "MAILER-DAEMON@mail.gmx.com",
        "Subject": "Mail delivery failed: returning message to sender",
        "Content-Type": "text/plain; charset=utf-8",
    },
    "Zoho": {
        "From": "mailer-daemon@mail.zoho.com",
        "Subject": "Undelivered Mail Returned to Sender",
        "Content-Type": 'multipart/mixed; \n\tboundary="----=_Part_44_123456.1709294400"',
    },
    "HCL Domino": {
        "Return-Path": "<MAILER-DAEMON@mx.example.com>",
        "From": "Postmaster@example.com",
        "Subject": "DELIVERY FAILURE: User Bob Smith (bob@example.com) not listed in"
        " Domino Directory",
        "Content-Type": "Text/Plain",
    },
    "Lotus Notes": {
        "Return-Path": "<>",
        "From": "postmaster@notes.example.com",
        "Subject": "Undeliverable message",
        "Content-Type": "text/plain; charset=ISO-8859-1",
    },
    "Oracle Messaging Server": {
        "Return-Path": "<>",
        "From": "postmaster@mail.example.com",
        "Subject": "Delivery Notification: Delivery has failed",
        "Content-Type": DSN.format("Boundary_(ID_a1b2c3d4e5f6)"),
    },
    "GroupWise": {
        "Return-Path": "<>",
        "From": '"Mail Delivery System" <MAILER-DAEMON@gw.example.org>',
        "Subject": "Undeliverable mail",
    },
    "MessageLabs": {
        "From": "Mail Delivery System <MAILER-DAEMON@messagelabs.com>",
        "Subject": "Mail Delivery Failure",
        "Content-Type": DSN.format("ffe0e+NekoNyaan/88AFvG"),
    },
    "Mimecast": {
        "Return-Path": "<>",
        "From": '"postmaster" <postmaster@example.org>',
        "Subject": "[Postmaster] Email Delivery Failure",
        "Content-Type": "text/plain; charset=UTF-8",
    },
    "Barracuda": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON <>",
        "Subject": "**Message you sent blocked by our bulk email filter**",
        "Content-Type": DSN.format("Barracuda_BOUNDARY_a1b2c3"),
    },
    "McAfee": {
        "From": "<>",
        "Subject": "Delivery Status",
        "Content-Type": 'Multipart/Mixed;  boundary="------------Boundary-00=_OAIUGOLJALKJ"',
    },
    "Amavis": {
        "Return-Path": "<MAILER-DAEMON>",
        "From": '"Content-filter at mx.example.com" <postmaster@mx.example.com>',
        "Subject": "Undeliverable mail, MTA-BLOCKED",
        "Content-Type": DSN.format("----------=_1709294400-12345-0"),
    },
    "Trend Micro": {
        "Return-Path": "<postmaster@example.co.jp>",
        "From": '"InterScan MSS" <postmaster@example.co.jp>',
        "Subject": "Undeliverable: " + GAME,
        "Content-Type": 'multipart/mixed;  boundary="===============1234567890=="',
    },
    "PowerMTA": {
        "Return-Path": "<>",
        "From": "postmaster@mail22.example.net",
        "Subject": "Delivery report",
        "Content-Type": DSN.format("24E0_9C7E_4A11_55C3"),
    },
    "Apache James": {
        "From": "post_master@mail.example.com",
        "Subject": "Re:" + GAME,
        "Content-Type": 'multipart/mixed; \n\tboundary="----=_Part_0_1234.1709294400"',
    },
    "Facebook": {
        "From": "Facebook <mailer-daemon@mx.facebook.com>",
        "Subject": "Sorry, your message could not be delivered",
        "Content-Type": DSN.format("-----_=_NextPart_fb_a1b2"),
    },
    "Verizon MMS gateway": {
        "Return-Path": "<>",
        "From": "MMSC NDR Administrator <sysadmin@m01.vzwpix.com>",
        "Subject": "Undeliverable Message",
        "Content-Type": 'multipart/mixed;  boundary="MIME-BOUNDARY-vzw-a1b2"',
    },
    "RFC 3834 reply with nothing but its header": {
        "Return-Path": "<>",
        "From": "<bob@example.net>",
        "Subject": "kitununulinitoquekegu",
        "In-Reply-To": "<r0003-bob@spring-2027.pbem>",
        "Auto-Submitted": "auto-replied",
    },
    "ActiveHunter": {
        "Return-Path": "<>",
        "From": '"MAILER-DAEMON" <MAILER-DAEMON@example.org>',
        "Subject": "FAILURE NOTICE : " + GAME,
        "Content-Type": DSN.format("AH-1709294400-1"),
    },
    "Bigfoot": {
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@bigfoot.com>",
        "Subject": "Returned mail: Requested action not taken: mailbox name not allowed",
        "Auto-Submitted": "auto-generated (failure)",
        "Content-Type": DSN.format("j3QNdddd555555.1709294400/bigfoot.com"),
    },
    "BIGLOBE": {
        "Return-Path": "<MAILER-DAEMON>",
        "From": "postmaster@biglobe.ne.jp",
        "Subject": "Returned mail: Service unavailable",
        "Content-Type": 'multipart/mixed;  boundary="BIGLOBE-1709294400"',
    },
    "Ipswitch IMail": {
        "From": '"Postmaster" <postmaster@example.org>',
        "Subject": "Undeliverable Mail",
    },
    "MailFoundry": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@example.org",
        "Subject": "Message delivery has failed",
        "Content-Type": 'multipart/mixed;  boundary="MF-1709294400"',
    },
    "MailMarshal": {
        "From": "postmaster@example.com",
        "Subject": 'Undeliverable Mail: "' + GAME + '"',
        "Content-Type": 'multipart/mixed;   boundary="MM-1709294400"',
    },
    "McAfee MX Logic": {
        "Return-Path": "<>",
        "From": "Mail Delivery System <MAILER-DAEMON@relay0.mxlogic.net>",
        "Subject": "Mail delivery failed",
        "Content-Type": "text/plain",
    },
    "m-FILTER": {
        "Return-Path": "<postmaster@example.com>",
        "From": "POSTMASTER <postmaster@example.com>",
        "Subject": "failure notice",
        "Content-Type": 'text/plain; charset="ISO-2022-JP"',
    },
    "SurfControl": {
        "Return-Path": "<>",
        "From": "<MAILER-DAEMON@example.com>",
        "Subject": GAME,
        "Content-Type": DSN.format("SC-1709294400"),
    },
    "Sendmail V5": {
        "Return-Path": "<MAILER-DAEMON@example.com>",
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@example.com>",
        "Subject": "Returned mail: Cannot send message for 4 days",
    },
    "Amazon SES receiving": {
        "Return-Path": "<>",
        "From": "postmaster@inbound.example.org",
        "Subject": "Delivery Status Notification (Failure)",
        "Content-Type": 'multipart/report;  boundary="----=_Part_SES_1";'
        " report-type=delivery-status",
    },
    "SendGrid": {
        "Return-Path": "<bounces+1234567-abcd-pbem=example.net@sendgrid.net>",
        "From": "MAILER-DAEMON@mx.example.jp",
        "Subject": "Undelivered Mail Returned to Sender",
        "Content-Type": DSN.format("SG-1709294400"),
    },
    "au (KDDI)": {
        "Return-Path": "<MAILER-DAEMON>",
        "From": "<Postmaster@ezweb.ne.jp>",
        "Subject": "Mail System Error - Returned Mail",
        "Content-Type": "text/plain; charset=iso-2022-jp",
    },
    "Cloudflare Email Routing": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@relay.mx.cloudflare.net (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("CF0A1B2C3D.1709294400/relay.mx.cloudflare.net"),
    },
    "Tencent": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@mail.example.net (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "Auto-Submitted": "auto-replied",
        "Content-Type": DSN.format("TC0A1B2C3D.1709294400/mail.example.net"),
    },
    "Proofpoint": {
        "Return-Path": "<>",
        "From": "Mail Delivery Subsystem <MAILER-DAEMON@pps.example.com>",
        "Subject": "Returned mail: see transcript for details",
        "Auto-Submitted": "auto-generated (failure)",
        "Content-Type": DSN.format("PPS0A1B2C3D.1709294400/pps.example.com"),
    },
    "Microsoft IIS SMTP": {
        "Return-Path": "<<>>",
        "From": "bob@example.com",
        "Subject": "Delivery Status Notification (Failure)",
    },
}

# ---------------------------------------------------------------------------------------------
# Automatic replies: out-of-office and vacation notices, autoresponders

# What Outlook and Exchange put before the subject of an automatic reply, by the language of
# the mailbox (Exchange 2010 and later, Office 365, Outlook.com).
OUTLOOK_PREFIXES = {
    "English": "Automatic reply: ",
    "German": "Automatische Antwort: ",
    "French": "=?iso-8859-1?Q?R=E9ponse_automatique=A0:_?=",
    "Italian": "Risposta automatica: ",
    "Dutch": "Automatisch antwoord: ",
    "Swedish": "Autosvar: ",
    "Indonesian": "Balasan Otomatis: ",
    "Spanish": "=?iso-8859-1?Q?Respuesta_autom=E1tica:_?=",
    "Portuguese": "=?iso-8859-1?Q?Resposta_autom=E1tica:_?=",
    "Danish": "Automatisk svar: ",
    "Finnish": "Automaattinen vastaus: ",
    "Polish": "=?utf-8?B?QXV0b21hdHljem5hIG9kcG93aWVkxbo6IA==?=",
}
# What Outlook 2003 and 2007 with Exchange 2003 wrote.
EXCHANGE_2003_PREFIXES = {
    "English": "Out of Office AutoReply: ",
    "German": "Abwesenheitsnotiz: ",
    "Italian": "Risposta Non al computer: ",
    "Swedish": "=?iso-8859-1?Q?Fr=E5nvaro:_?=",
    "Dutch": "Automatisch antwoord: ",
}


def exchange_oof(prefix: str) -> Shape:
    """An Exchange 2010 to 2019 out-of-office reply: no Auto-Submitted, but the inbox-rule
    loop header, and the null sender."""
    return {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@example.com>",
        "To": "pbem <pbem@example.net>",
        "Subject": prefix + GAME,
        "Thread-Topic": GAME,
        "Thread-Index": "AQHaZ2N1x8b9c0d1e2f3g4h5i6j7k8l9m0==",
        "Date": "Mon, 1 Mar 2027 12:00:05 +0000",
        "Message-ID": "<8415797d5564f6c279db9815ab2819ca@mail.example.com>",
        "In-Reply-To": "<r0003-bob@spring-2027.pbem>",
        "X-MS-Has-Attach": "",
        "X-Auto-Response-Suppress": "All",
        "X-MS-Exchange-Inbox-Rules-Loop": "bob@example.com",
        "X-MS-TNEF-Correlator": "",
        "Content-Type": 'text/plain; charset="us-ascii"',
        "MIME-Version": "1.0",
    }


def office365_oof(prefix: str) -> Shape:
    """An Office 365 or Outlook.com automatic reply: the same, and Auto-Submitted and the
    generated-message source besides."""
    return {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@contoso.com>",
        "To": "pbem <pbem@example.net>",
        "Subject": prefix + GAME,
        "Thread-Topic": GAME,
        "Date": "Mon, 1 Mar 2027 12:00:05 +0000",
        "Message-ID": "<aef8de8b87ce408d98043942ab89c729@DM8PR09MB7205.namprd09.prod.outlook.com>",
        "X-MS-Has-Attach": "",
        "X-Auto-Response-Suppress": "All",
        "X-MS-Exchange-Inbox-Rules-Loop": "bob@contoso.com",
        "X-MS-TNEF-Correlator": "",
        "x-ms-exchange-parent-message-id": "<r0003-bob@spring-2027.pbem>",
        "auto-submitted": "auto-generated",
        "x-ms-exchange-generated-message-source": "Mailbox Rules Agent",
        "x-ms-publictraffictype": "Email",
        "Content-Type": 'multipart/alternative;\n\tboundary="_000_aef8de8b87ce_"',
        "MIME-Version": "1.0",
    }


def exchange_2003_oof(prefix: str) -> Shape:
    """An Exchange 2003 out-of-office reply: nothing but its subject and, where the receiving
    server records it, the null sender."""
    return {
        "Return-Path": "<>",
        "Content-class": "urn:content-classes:message",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain",
        "Subject": prefix + GAME,
        "Date": "Mon, 1 Mar 2027 13:00:05 +0100",
        "X-MimeOLE": "Produced By Microsoft Exchange V6.5",
        "Message-ID": "<4F2A1B3C8D9E0F1A2B3C4D5E6F7A8B9C@mail.example.de>",
        "X-MS-Has-Attach": "",
        "X-MS-TNEF-Correlator": "",
        "Thread-Topic": GAME,
        "From": '"Schmidt, Bob" <bob@example.de>',
        "To": "<pbem@example.net>",
    }


AUTO_REPLIES: dict[str, Shape] = {
    **{f"Exchange out-of-office, {lang}": exchange_oof(p) for lang, p in OUTLOOK_PREFIXES.items()},
    **{
        f"Office 365 automatic reply, {lang}": office365_oof(p)
        for lang, p in OUTLOOK_PREFIXES.items()
    },
    **{
        f"Exchange 2003 out-of-office, {lang}": exchange_2003_oof(p)
        for lang, p in EXCHANGE_2003_PREFIXES.items()
    },
    "RFC 3834 example": {
        "Date": "Thu, 29 Apr 2027 23:34:45 +0900",
        "Message-Id": "<200503142138.j3QNaaaa222222@example.net>",
        "To": "pbem@example.net",
        "Auto-Submitted": "auto-replied",
        "From": "bob@example.net",
        "Subject": "Away until May 5",
    },
    "Gmail vacation responder": {
        "Return-Path": "<bob@gmail.com>",
        "MIME-Version": "1.0",
        "From": "Bob Smith <bob@gmail.com>",
        "Date": "Mon, 1 Mar 2027 04:00:07 -0800",
        "Message-ID": "<CAB1x2y3z4-vacation-a1b2c3@mail.gmail.com>",
        "Subject": "Out of office",
        "To": "pbem@example.net",
        "Auto-Submitted": "auto-replied",
        "Precedence": "bulk",
        "X-Autoreply": "yes",
        "In-Reply-To": "<r0003-bob@spring-2027.pbem>",
        "References": "<r0003-bob@spring-2027.pbem>",
        "Content-Type": 'multipart/alternative; boundary="000000000000c1d2e3f4a5b6"',
    },
    "Gmail vacation responder, no subject set": {
        "Return-Path": "<bob@gmail.com>",
        "From": "Bob Smith <bob@gmail.com>",
        "Subject": "Re: " + GAME,
        "Auto-Submitted": "auto-replied",
        "Content-Type": 'multipart/alternative; boundary="000000000000d2e3f4a5b6c7"',
    },
    "Google Workspace vacation responder, Italian": {
        "Return-Path": "<bob@example.it>",
        "From": "Bob Rossi <bob@example.it>",
        "Subject": "Sono in ferie fino al 5 maggio",
        "Auto-Submitted": "auto-replied",
        "Content-Type": 'multipart/alternative; boundary="000000000000e3f4a5b6c7d8"',
    },
    "iCloud vacation": {
        "Return-Path": "<bob@icloud.com>",
        "From": "bob@icloud.com",
        "To": '"pbem" <pbem@example.net>',
        "Subject": "Auto reply: " + GAME,
        "Date": "Tue, 2 Mar 2027 02:53:09 +0000",
        "Message-id": "<7e23258d-247f-479e-996d-e01f0f30af85-vac@icloud.com>",
        "In-Reply-To": "<r0003-bob@spring-2027.pbem>",
        "X-Apple-Criteria": "{kind=VACATION,startDate=2027-02-28T15:00:00Z,"
        "endDate=2027-03-10T14:59:59Z}",
        "X-Apple-Action": "VACATION",
        "X-Apple-UUID": "7e23258d-247f-479e-996d-e01f0f30af85",
        "Content-type": "text/plain; charset=UTF-8",
    },
    "iCloud vacation, custom subject": {
        "From": "bob@me.com",
        "Subject": "Je suis en vacances",
        "X-Apple-Action": "VACATION",
        "X-Apple-Criteria": "{kind=VACATION}",
    },
    "Zimbra out-of-office": {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@zimbra.example.org>",
        "Subject": "Out of office: " + GAME,
        "Auto-Submitted": "auto-replied (zimbra; vacation)",
        "Precedence": "bulk",
    },
    "Dovecot Pigeonhole vacation": {
        "Return-Path": "<>",
        "From": "Bob <bob@example.org>",
        "Subject": "Auto: " + GAME,
        "Auto-Submitted": "auto-replied (vacation)",
        "Precedence": "bulk",
        "X-Sieve": "Pigeonhole Sieve 0.5.21",
    },
    "Roundcube managesieve vacation": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "Auto: " + GAME,
        "Auto-Submitted": "auto-replied (vacation)",
    },
    "Cyrus Sieve vacation": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "Auto: " + GAME,
        "Auto-Submitted": "auto-replied (vacation)",
        "X-Sieve": "CMU Sieve 3.0",
    },
    "Fastmail auto-reply": {
        "Return-Path": "<>",
        "From": "Bob <bob@fastmail.com>",
        "Subject": "Auto: " + GAME,
        "Auto-Submitted": "auto-replied",
    },
    "Exim filter vacation": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "On vacation",
        "Auto-Submitted": "auto-replied",
    },
    "Unix vacation(1)": {
        "Return-Path": "<>",
        "From": "bob@example.org (Bob Smith)",
        "Subject": "I am away",
        "Precedence": "junk",
        "Auto-Submitted": "auto-replied",
    },
    "Postfix vacation script": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "Out of Office (vacation)",
        "Precedence": "junk",
        "X-Loop": "Postfix Admin Virtual Vacation",
    },
    "cPanel autoresponder": {
        "Return-Path": "<bob@hosting.example>",
        "From": "bob@hosting.example",
        "Subject": "I am away",
        "X-Autorespond": "I am away",
    },
    "Yahoo auto response": {
        "From": "Bob <bob@yahoo.com>",
        "Subject": "Yahoo! Auto Response",
        "X-Autoreply": "yes",
    },
    "OpenSRS autoresponder": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "Re: " + GAME,
        "X-Autoresponder": "Will not send another autoreply for 86400 seconds",
    },
    "Domain Technologies Control autoresponder": {
        "From": "bob@example.org",
        "Subject": "Re: " + GAME,
        "X-AutoReply-From": "bob@example.org",
        "X-Mail-Autoreply": "bob@example.org",
    },
    "CommuniGate Pro rule reply": {
        "From": "bob@example.org",
        "Subject": "Re: " + GAME,
        "X-Autogenerated": "Reply",
    },
    "CommuniGate Pro rule forward": {
        "From": "bob@example.org",
        "Subject": "Fwd: " + GAME,
        "X-Autogenerated": "Forward",
    },
    "cPanel BoxTrapper": {
        "From": "bob@hosting.example",
        "Subject": "Re: " + GAME,
        "Preference": "auto_reply",
        "X-Precedence": "auto_reply",
        "X-Autorespond": "auto_reply",
    },
    "FirstClass": {
        "From": "bob@firstclass.example",
        "Subject": "Re: " + GAME,
        "X-FC-MachineGenerated": "true",
    },
    "Mailtraq autoresponder": {
        "From": "bob@example.org",
        "Subject": "Re: " + GAME,
        "X-POST-MessageClass": "9; Autoresponder",
    },
    "qmail autoresponder": {
        "From": "bob@example.org",
        "Subject": "Re: " + GAME,
        "Delivered-To": "Autoresponder",
    },
    "Mimecast autoresponder": {
        "Return-Path": "<>",
        "From": "<noreply@example.com>",
        "To": "<pbem@example.net>",
        "Reply-To": "<bob@example.com>",
        "Subject": "=?UTF-8?Q?AutoRespons?= :" + GAME,
        "Auto-Submitted": "auto-replied",
        "X-Auto-Response-Suppress": "OOF, AutoReply, DR, NDR, RN, NRN",
        "Precedence": "bulk",
    },
    "Lotus Notes out-of-office": {
        "From": "Ann Smith <ann.smith@notes.example.com>",
        "Subject": "AUTO: Ann Smith is out of the office (returning 06/03/2027)",
        "X-Mailer": "Lotus Notes Release 8.5.3 September 15, 2011",
        "X-MIMETrack": "Serialize by Router on Notes01/Example(Release 9.0.1FP10|January 2018)",
    },
    "Zoho vacation reply": {
        "Return-Path": "<bob@zoho.com>",
        "From": "Bob <bob@zoho.com>",
        "Subject": "Out of Office Reply: " + GAME,
        "Auto-Submitted": "auto-replied",
    },
    "Mirror reply (X-Autogenerated)": {
        "From": "Mail Service <service@example.com>",
        "Subject": "Re: " + GAME,
        "X-Autogenerated": "Reply",
    },
    "help desk acknowledgement": {
        "Return-Path": "<support@example.com>",
        "From": "Example Support <support@example.com>",
        "Subject": "[#12345] Re: " + GAME,
        "Auto-Submitted": "auto-generated",
        "X-Auto-Response-Suppress": "All",
        "Precedence": "bulk",
    },
    "Exchange inbox rule forwarding": {
        "From": "Bob Smith <bob@example.com>",
        "Subject": "FW: " + GAME,
        "X-MS-Exchange-Inbox-Rules-Loop": "bob@example.com",
    },
    "Exchange transport rule notice": {
        "From": "Microsoft Outlook <postmaster@contoso.com>",
        "Subject": "Your message was blocked",
        "X-MS-Exchange-Transport-Rules-Notification": "1",
        "X-MS-Exchange-Generated-Message-Source": "Transport Rule Agent",
        "Auto-Submitted": "auto-generated",
    },
    "Exchange journal report": {
        "Sender": f"<{EXCHANGE}@contoso.com>",
        "From": "Journal Agent <journal@contoso.com>",
        "Subject": GAME,
        "X-MS-Journal-Report": "",
        "X-MS-Exchange-Generated-Message-Source": "Journal Agent",
    },
}

# ---------------------------------------------------------------------------------------------
# Read receipts (RFC 8098 message disposition notifications) and other reports

READ_RECEIPTS: dict[str, Shape] = {
    "Thunderbird": {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@example.org>",
        "Subject": "Return Receipt (displayed) - " + GAME,
        "Content-Type": MDN.format("------------5A1B2C3D4E5F6A7B8C9D0E1F"),
        "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101"
        " Thunderbird/128.5.0",
    },
    "Thunderbird, German": {
        "From": "Bob Schmidt <bob@example.de>",
        "Subject": "=?UTF-8?Q?Empfangsbest=C3=A4tigung_=28angezeigt=29_-_?=" + GAME,
        "Content-Type": MDN.format("------------6B2C3D4E5F6A7B8C9D0E1F2A"),
    },
    "Outlook": {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@example.com>",
        "Subject": "Read: " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0011_01DA6B2C.3D4E5F60"),
        "Thread-Topic": GAME,
    },
    "Outlook, not read": {
        "From": "Bob Smith <bob@example.com>",
        "Subject": "Not read: " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0012_01DA6B2C.3D4E5F60"),
    },
    "Outlook, German": {
        "From": "Bob Schmidt <bob@example.de>",
        "Subject": "Gelesen: " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0013_01DA6B2C.3D4E5F60"),
    },
    "Outlook, French": {
        "From": "Bob Martin <bob@example.fr>",
        "Subject": "Lu : " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0014_01DA6B2C.3D4E5F60"),
    },
    "Outlook, Italian": {
        "From": "Bob Rossi <bob@example.it>",
        "Subject": "Letto: " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0015_01DA6B2C.3D4E5F60"),
    },
    "Outlook, Dutch": {
        "From": "Bob de Vries <bob@example.nl>",
        "Subject": "Gelezen: " + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0016_01DA6B2C.3D4E5F60"),
    },
    "Outlook, Swedish": {
        "From": "Bob Svensson <bob@example.se>",
        "Subject": "=?iso-8859-1?Q?L=E4st:_?=" + GAME,
        "Content-Type": MDN.format("----=_NextPart_000_0017_01DA6B2C.3D4E5F60"),
    },
    "Exchange read receipt": {
        "Return-Path": "<>",
        "From": "Bob Smith <bob@example.com>",
        "Subject": "Read: " + GAME,
        "Content-Type": MDN.format("d8f0a2b4-c6e8-4a0c-8e2f-4a6c8e0a2c4e"),
        "X-MS-Exchange-Organization-SCL": "-1",
        "Auto-Submitted": "auto-replied",
    },
    "Gmail (Google Workspace) read receipt": {
        "Return-Path": "<bob@example.com>",
        "From": "Bob Smith <bob@example.com>",
        "Subject": "Read: " + GAME,
        "Content-Type": 'multipart/report; boundary="000000000000f4a5b6c7d8e9";'
        " report-type=disposition-notification",
    },
    "Roundcube": {
        "Return-Path": "<>",
        "From": "bob@example.org",
        "Subject": "Read: " + GAME,
        "Content-Type": "multipart/report;\n report-type=disposition-notification;\n"
        ' boundary="=_a1b2c3d4e5f6a7b8c9d0"',
        "User-Agent": "Roundcube Webmail/1.6.6",
    },
    "RFC 8098 example": {
        "Date": "Wed, 20 Sep 1995 00:19:00 (EDT) -0400",
        "From": "Joe Recipient <Joe_Recipient@example.com>",
        "Message-Id": "<199509200019.12345@example.com>",
        "Subject": "Disposition notification",
        "To": "Jane Sender <Jane_Sender@example.org>",
        "MIME-Version": "1.0",
        "Content-Type": "multipart/report; report-type=disposition-notification;\n"
        '\tboundary="RAA14128.773615765/example.com"',
    },
    "Lotus Notes return receipt": {
        "From": "Ann Smith <ann.smith@notes.example.com>",
        "Subject": "Return Receipt: " + GAME,
        "X-Mailer": "Lotus Notes Release 8.5.3 September 15, 2011",
    },
    "bare disposition notification": {
        "From": "bob@example.org",
        "Subject": "Read: " + GAME,
        "Content-Type": "message/disposition-notification",
    },
    "bare delivery status": {
        "From": "bob@example.org",
        "Subject": "Delivery report",
        "Content-Type": "message/delivery-status",
    },
    "RFC 5965 spam complaint (Yahoo)": {
        "From": "feedback@arf.mail.yahoo.com",
        "Subject": "FW: " + GAME,
        "Content-Type": 'multipart/report; report-type=feedback-report;\n\tboundary="a1b2c3"',
    },
    "RFC 5965 spam complaint (AOL)": {
        "From": "scomp@aol.net",
        "Subject": "Email Feedback Report for IP 192.0.2.1",
        "Content-Type": 'multipart/report; report-type=feedback-report;\n\tboundary="d4e5f6"',
    },
    "RFC 6533 international bounce": {
        "Return-Path": "<>",
        "From": "MAILER-DAEMON@mx.example.org (Mail Delivery System)",
        "Subject": "Undelivered Mail Returned to Sender",
        "Content-Type": 'multipart/report; report-type=global-delivery-status;\n\tboundary="q"',
    },
}

# ---------------------------------------------------------------------------------------------
# Mailing lists and newsletters

LISTS: dict[str, Shape] = {
    "Mailman 2": {
        "From": "Bob Smith <bob@example.org>",
        "Subject": "[risk-players] who is up for a new game?",
        "Precedence": "list",
        "List-Id": "Risk players <risk-players.lists.example.org>",
        "List-Unsubscribe": "<https://lists.example.org/mailman/options/risk-players>,\n"
        " <mailto:risk-players-request@lists.example.org?subject=unsubscribe>",
        "List-Post": "<mailto:risk-players@lists.example.org>",
        "X-Mailman-Version": "2.1.39",
        "Sender": '"risk-players" <risk-players-bounces@lists.example.org>',
    },
    "Mailman 3": {
        "From": "Bob Smith <bob@example.org>",
        "Subject": "[risk-players] rules question",
        "List-Id": "<risk-players.lists.example.org>",
        "List-Archive": "<https://lists.example.org/hyperkitty/list/risk-players@lists.example.org/>",
        "List-Help": "<mailto:risk-players-request@lists.example.org?subject=help>",
        "List-Post": "<mailto:risk-players@lists.example.org>",
        "List-Subscribe": "<mailto:risk-players-join@lists.example.org>",
        "List-Unsubscribe": "<mailto:risk-players-leave@lists.example.org>",
    },
    "Google Groups": {
        "From": "'Bob Smith' via Risk players <risk-players@googlegroups.com>",
        "Subject": "Re: new game",
        "Precedence": "list",
        "Mailing-list": "list risk-players@googlegroups.com;"
        " contact risk-players+owners@googlegroups.com",
        "List-ID": "<risk-players.googlegroups.com>",
        "X-Google-Group-Id": "123456789012",
        "List-Post": "<https://groups.google.com/group/risk-players/post>",
        "List-Unsubscribe": "<mailto:googlegroups-manage+123456789012+unsubscribe"
        "@googlegroups.com>",
    },
    "Sympa": {
        "From": "bob@example.org",
        "Subject": "[risk] tournament",
        "List-Id": "<risk.lists.example.org>",
        "Precedence": "list",
        "X-Loop": "risk@lists.example.org",
        "X-Sequence": "1234",
    },
    "Mailchimp newsletter": {
        "From": "Board Game News <news@boardgames.example>",
        "Subject": "This week in board games",
        "List-Unsubscribe": "<https://example.us1.list-manage.com/unsubscribe?u=a1b2&id=c3d4>,"
        " <mailto:unsubscribe-mc.us1_a1b2.c3d4@unsubscribe.mailchimpapp.net>",
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        "X-Mailer": "MailChimp Mailer - **CIDa1b2c3d4e5f6**",
        "Feedback-ID": "12345678:12345678.1234567:us1:mc",
    },
    "GitHub notification": {
        "From": "Bob Smith <notifications@github.com>",
        "Subject": "Re: [example/pbem] A map with more continents (Issue #42)",
        "Precedence": "list",
        "List-ID": "example/pbem <pbem.example.github.com>",
        "List-Archive": "https://github.com/example/pbem",
        "List-Unsubscribe": "<mailto:unsub+a1b2c3@reply.github.com>",
        "X-Auto-Response-Suppress": "All",
    },
    "groups.io": {
        "From": '"Bob Smith via groups.io" <bob=example.org@groups.io>',
        "Subject": "[risk] next turn",
        "List-Id": "<risk.groups.io>",
        "List-Subscribe": "<mailto:risk+subscribe@groups.io>",
        "List-Unsubscribe": "<mailto:risk+unsubscribe@groups.io>",
        "Precedence": "Bulk",
    },
    "SendGrid marketing mail": {
        "From": "Game Shop <hello@shop.example>",
        "Subject": "Spring sale",
        "List-Unsubscribe": "<mailto:unsubscribe@sendgrid.net?subject=a1b2>",
        "X-SG-EID": "a1b2c3d4e5f6",
    },
    "vger.kernel.org list": {
        "From": "Bob Smith <bob@example.org>",
        "Subject": "Re: [PATCH] something",
        "Precedence": "bulk",
        "X-Mailing-List": "linux-kernel@vger.kernel.org",
        "List-Id": "<linux-kernel.vger.kernel.org>",
    },
}

# ---------------------------------------------------------------------------------------------
# Senders: mail servers and postmasters in every form they write

SENDERS = [
    "MAILER-DAEMON",
    "MAILER-DAEMON@mx.example.org",
    "mailer-daemon@example.org",
    "Mailer-Daemon@e1.example.org",
    "<mailer-daemon@googlemail.com>",
    "Mail Delivery Subsystem <mailer-daemon@googlemail.com>",
    "Mail Delivery System <MAILER-DAEMON@mx.example.org>",
    "MAILER-DAEMON@mx.example.org (Mail Delivery System)",
    '"MAILER-DAEMON" <MAILER-DAEMON@example.org>',
    "Mailer Daemon <MAILER-DAEMON@mail.example.org>",
    "mailer_daemon@example.org",
    "postmaster@outlook.com",
    "Postmaster <Postmaster@AOL.com>",
    '"Postmaster" <postmaster@example.org>',
    "POSTMASTER <postmaster@example.com>",
    "System Administrator <postmaster@example.com>",
    f"Microsoft Outlook <{EXCHANGE}@example.com>",
    "post_master@mail.example.com",
    "MAILER-DAEMON <>",
    "<>",
    '"Courier mail server at mx.example.org" <@>',
    "Mail Delivery System <Mail.Delivery.System@mx44.example.com>",
    "=?iso-2022-jp?B?TWFpbCBEZWxpdmVyeSBTdWJzeXN0ZW0=?= <bounce@mx.example.co.jp>",
    "Mail Delivery Subsystem <bounces@mx.example.org>",
]
RETURN_PATHS = [
    "<>",
    "",
    " ",
    "<<>>",
    "< >",
    "<MAILER-DAEMON>",
    "<MAILER-DAEMON@smtp.example.org>",
    "<postmaster@example.org>",
]


def machine_cases() -> list[object]:
    cases = deliveries(BOUNCES) + deliveries(AUTO_REPLIES) + deliveries(READ_RECEIPTS)
    cases += [pytest.param(shape, id=f"list: {name}") for name, shape in LISTS.items()]
    cases += [
        pytest.param({"From": sender, "Subject": "Re: " + GAME}, id=f"From: {sender}")
        for sender in SENDERS
    ]
    cases += [
        pytest.param(
            {"From": "bob@example.org", "Subject": GAME, "Return-Path": path},
            id=f"Return-Path: {path!r}",
        )
        for path in RETURN_PATHS
    ]
    cases.append(pytest.param({"From": "pbem@example.net", LOOP_HEADER: GAME}, id="pbem's own"))
    return cases


MACHINE_CASES = machine_cases()


@pytest.mark.parametrize("shape", MACHINE_CASES)
def test_machine_mail_is_recognised(shape: Shape) -> None:
    reason = automatic(headers(shape))
    assert reason
    assert reason.isprintable() and len(reason) < 200


def test_the_corpus_is_large() -> None:
    assert len(MACHINE_CASES) >= 300


@pytest.mark.parametrize(
    ("shape", "said"),
    [
        (BOUNCES["Postfix"], "bounce"),
        (BOUNCES["Exim"], "X-Failed-Recipients"),
        (BOUNCES["qmail"], "MAILER-DAEMON"),
        (READ_RECEIPTS["Thunderbird"], "read receipt"),
        (READ_RECEIPTS["RFC 5965 spam complaint (AOL)"], "spam complaint"),
        (AUTO_REPLIES["Exchange out-of-office, German"], "X-MS-Exchange-Inbox-Rules-Loop"),
        (AUTO_REPLIES["Gmail vacation responder"], "Auto-Submitted: auto-replied"),
        (AUTO_REPLIES["iCloud vacation"], "X-Apple-Action: VACATION"),
        (AUTO_REPLIES["cPanel autoresponder"], "X-Autorespond"),
        (without_return_path(AUTO_REPLIES["Exchange 2003 out-of-office, German"]), "abwesenheit"),
        (AUTO_REPLIES["Lotus Notes out-of-office"], "automatic reply"),
        (LISTS["Mailchimp newsletter"], "List-Unsubscribe"),
        (LISTS["Mailman 2"], "Precedence: list"),
    ],
)
def test_the_reason_says_what_was_seen(shape: Shape, said: str) -> None:
    reason = automatic(headers(shape))
    assert reason is not None and said.lower() in reason.lower()


# ---------------------------------------------------------------------------------------------
# Each rule on its own: a message with nothing else that would give it away


def person(**extra: str) -> dict[str, list[str]]:
    shape = {"From": "Bob Smith <bob@example.org>", "Subject": "Re: " + GAME}
    shape.update({name.replace("_", "-"): value for name, value in extra.items()})
    return headers(shape)


@pytest.mark.parametrize(
    "extra",
    [
        {"Auto_Submitted": "auto-replied"},
        {"Auto_Submitted": "auto-generated"},
        {"Auto_Submitted": "auto-notified"},
        {"Auto_Submitted": "Auto-Replied"},
        {"Auto_Submitted": "auto-replied (vacation)"},
        {"Auto_Submitted": "auto-generated; owner-email=bob@example.org"},
        {"Auto_Submitted": "auto-replied;owner-email=bob@example.org"},
        {"Auto_Submitted": "(comment) auto-generated"},
        {"Precedence": "bulk"},
        {"Precedence": "BULK"},
        {"Precedence": "junk"},
        {"Precedence": "list"},
        {"Precedence": "bulk (no answer please)"},
        {"Precedence": "auto_reply"},
        {"X_Precedence": "auto_reply"},
        {"X_Precedence": "bulk"},
        {"X_Autoreply": "yes"},
        {"X_Autoreply": ""},
        {"X_Autorespond": "On vacation"},
        {"X_Autoresponder": "Will not send another autoreply for 86400 seconds"},
        {"X_Autoreply_From": "bob@example.org"},
        {"X_Mail_Autoreply": "yes"},
        {"X_Autogenerated": "Mirror"},
        {"X_Apple_Action": "VACATION"},
        {"X_MS_Exchange_Inbox_Rules_Loop": "bob@example.org"},
        {"X_MS_Exchange_Generated_Message_Source": "Mailbox Rules Agent"},
        {"X_MS_Exchange_Message_Is_Ndr": ""},
        {"X_Failed_Recipients": "carol@example.org"},
        {"List_Id": "<risk.lists.example.org>"},
        {"List_Unsubscribe": "<mailto:leave@lists.example.org>"},
        {"List_Post": "<mailto:risk@lists.example.org>"},
        {"List_Help": "<mailto:risk-request@lists.example.org?subject=help>"},
        {"List_Subscribe": "<mailto:risk-join@lists.example.org>"},
        {"List_Owner": "<mailto:risk-owner@lists.example.org>"},
        {"List_Archive": "<https://lists.example.org/archive/risk>"},
        {"Mailing_List": "list risk@googlegroups.com"},
        {"X_Mailing_List": "risk@vger.kernel.org"},
        {"Content_Type": "multipart/report; report-type=delivery-status; boundary=x"},
        {"Content_Type": 'Multipart/Report; report-type="disposition-notification"; boundary=x'},
        {"Content_Type": "multipart/report; boundary=x"},
        {"Content_Type": "multipart/report"},
        {"Content_Type": "message/delivery-status"},
        {"Content_Type": "message/disposition-notification"},
        {"Content_Type": "message/global-delivery-status"},
        {"Return_Path": "<>"},
        {"Sender": "MAILER-DAEMON@mx.example.org"},
        {LOOP_HEADER.replace("-", "_"): "spring-2027"},
    ],
    ids=lambda extra: ": ".join(next(iter(extra.items()))),
)
def test_each_mark_is_enough_on_its_own(extra: dict[str, str]) -> None:
    assert automatic(person(**extra))


# ---------------------------------------------------------------------------------------------
# Subjects

AUTOREPLY_SUBJECTS = [
    # Outlook and Exchange, in the languages pbem speaks and a few more.
    "Automatic reply: " + GAME,
    "Automatic Reply: " + GAME,
    "AUTOMATIC REPLY: " + GAME,
    "Automatic reply: Re: " + GAME,
    "Out of Office AutoReply: " + GAME,
    "Out of Office: " + GAME,
    "Out of office " + GAME,
    "Out of the office: " + GAME,
    "Auto reply: " + GAME,
    "Auto-Reply: " + GAME,
    "Autoreply: " + GAME,
    "AutoReply: " + GAME,
    "[Auto-Reply] " + GAME,
    "[Auto Reply] " + GAME,
    "Auto Response: " + GAME,
    "Auto: " + GAME,
    "Away: " + GAME,
    "Vacation reply: " + GAME,
    "Automatische Antwort: " + GAME,
    "Abwesenheitsnotiz: " + GAME,
    "Abwesenheitsnotiz",
    "Abwesend: " + GAME,
    "Réponse automatique : " + GAME,
    "Réponse automatique\u00a0: " + GAME,
    "Réponse automatique\u202f: " + GAME,
    "=?utf-8?Q?R=C3=A9ponse_automatique=C2=A0:_?=" + GAME,
    "=?utf-8?B?UsOpcG9uc2UgYXV0b21hdGlxdWUgOiA=?=" + GAME,
    "Absence du bureau : " + GAME,
    "Absent du bureau : " + GAME,
    "Absence : " + GAME,
    "Risposta automatica: " + GAME,
    "Risposta Non al computer: " + GAME,
    "Fuori sede: " + GAME,
    "Automatisch antwoord: " + GAME,
    "Afwezig: " + GAME,
    "Autosvar: " + GAME,
    "Frånvaro: " + GAME,
    "=?iso-8859-1?Q?Fr=E5nvaro:_?=" + GAME,
    "Frånvarande: " + GAME,
    "Balasan Otomatis: " + GAME,
    "Balasan otomatis: " + GAME,
    "Di luar kantor: " + GAME,
    "સ્વયંસંચાલિત જવાબ: " + GAME,
    "સ્વચાલિત જવાબ: " + GAME,
    "Respuesta automática: " + GAME,
    "Resposta automática: " + GAME,
    "Automatisk svar: " + GAME,
    "Automaattinen vastaus: " + GAME,
    "AUTO: Ann Smith is out of the office (returning 06/03/2027)",
    "  Automatic reply: " + GAME,
]
BOUNCE_SUBJECTS = [
    "Undeliverable: " + GAME,
    "Undelivered Mail Returned to Sender",
    "Delivery Status Notification (Failure)",
    "Delivery Status Notification (Delay)",
    "Mail delivery failed: returning message to sender",
    "Returned mail: see transcript for details",
    "failure notice",
    "Failure Notice",
    "DELIVERY FAILURE: User Bob Smith (bob@example.com) not listed in Domino Directory",
    "Delivery Notification: Delivery has failed",
    "Undeliverable mail, MTA-BLOCKED",
    "Unzustellbar: " + GAME,
    "Non remis : " + GAME,
    "Non recapitabile: " + GAME,
    "Onbestelbaar: " + GAME,
    "Olevererbart: " + GAME,
    "Delivery delayed: " + GAME,
    "Delayed Mail (still being retried)",
]
RECEIPT_SUBJECTS = [
    "Read: " + GAME,
    "Not read: " + GAME,
    "Gelesen: " + GAME,
    "Lu : " + GAME,
    "Letto: " + GAME,
    "Gelezen: " + GAME,
    "Läst: " + GAME,
    "Return Receipt (displayed) - " + GAME,
    "Return receipt: " + GAME,
]


@pytest.mark.parametrize("subject", AUTOREPLY_SUBJECTS + BOUNCE_SUBJECTS + RECEIPT_SUBJECTS)
def test_a_machine_subject_is_enough(subject: str) -> None:
    assert automatic({"from": ["Bob <bob@example.org>"], "subject": [subject]})


# Subjects people write: to pbem, to the moderator, in reply to an automatic reply that pbem
# did not answer (the player saw it quoted), or about being away. None starts with a marker
# followed by the echo of one of pbem's subjects.
PERSON_SUBJECTS = [
    "my orders",
    "Orders for turn 3",
    GAME,
    "Re: " + GAME,
    "RE: " + GAME,
    "AW: " + GAME,
    "SV: " + GAME,
    "R: " + GAME,
    "Antw: " + GAME,
    "Bls: " + GAME,
    "Fwd: " + GAME,
    "Re: Automatic reply: " + GAME,
    "RE: Automatische Antwort: " + GAME,
    "Re: Away: " + GAME,
    "Fwd: Returned mail: see transcript for details",
    "Fw: Undeliverable: " + GAME,
    "Away until May 5",
    "Away: back on Monday",
    "Away next week, please use the autopilot",
    "Absence",
    "Absence next turn",
    "Out of office",
    "Out of office next week",
    "Out of the office until 5 May, skip me",
    "[spring-2027] away next week",
    "[spring-2027] Automatic reply test, please ignore",
    "Vacation",
    "Vacation plans",
    "On holiday from Friday",
    "Frånvaro vecka 12",
    "Afwezig volgende week",
    "Assente fino a lunedì",
    "Cuti minggu depan",
    "Auto: put me on autopilot",
    "Auto",
    "Autopilot for me please",
    "Read: the rules",
    "Read the rules?",
    "Delivery failure?",
    "Did my orders bounce?",
    "Automatic reply from my phone, sorry",
    "Return of the king",
    "Undo my last orders",
    "Postmaster general",
    "",
    "   ",
]


def test_the_subjects_people_write_are_not_machine_marks() -> None:
    for subject in PERSON_SUBJECTS:
        shape = {"From": "Alice <alice@example.org>", "Subject": subject}
        assert automatic(headers(shape)) is None, subject


# ---------------------------------------------------------------------------------------------
# Ordinary messages, as people's mail clients write them


def gmail(subject: str) -> Shape:
    return {
        "Delivered-To": "pbem@example.net",
        "Return-Path": "<alice.example@gmail.com>",
        "Received": "by mail-lf1-f41.google.com with SMTP id 2adb3069b0e04-513;"
        " Mon, 01 Mar 2027 04:05:11 -0800 (PST)",
        "DKIM-Signature": "v=1; a=rsa-sha256; c=relaxed/relaxed; d=gmail.com; s=20230601;"
        " h=to:subject:message-id:date:from:mime-version:from:to:cc:subject:date:message-id;"
        " bh=abc=; b=def=",
        "X-Google-DKIM-Signature": "v=1; a=rsa-sha256; c=relaxed/relaxed; d=1e100.net;",
        "X-Gm-Message-State": "AOJu0YwX1a2b3c4d5e6f7g8h9i0j",
        "X-Google-Smtp-Source": "AGHT+IHa1b2c3d4e5f6g7h8i9j0k",
        "X-Received": "by 2002:a05:6512:3b8a:b0:513:1a2b with SMTP id g10;",
        "MIME-Version": "1.0",
        "References": "<r0003-alice@spring-2027.pbem>",
        "In-Reply-To": "<r0003-alice@spring-2027.pbem>",
        "From": "Alice Example <alice.example@gmail.com>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "Message-ID": "<CAF=kR2x7Yb1Q+Zq3mWn4p5T6u7v8w9x0y1z2A3B4C5D6E7F8G9@mail.gmail.com>",
        "Subject": subject,
        "To": "pbem@example.net",
        "Content-Type": 'multipart/alternative; boundary="000000000000a1b2c3d4e5f6a7b8"',
    }


def gmail_android(subject: str) -> Shape:
    shape = gmail(subject)
    shape["Message-ID"] = "<CAH9x8y7z6+android-a1b2c3@mail.gmail.com>"
    shape["Content-Type"] = 'multipart/mixed; boundary="000000000000b2c3d4e5f6a7b8c9"'
    return shape


def outlook_2016(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.com>",
        "From": "Alice Example <alice@example.com>",
        "To": "'pbem@example.net' <pbem@example.net>",
        "Subject": subject,
        "Thread-Topic": subject,
        "Thread-Index": "AdpsB1c2d3e4f5g6h7i8j9k0l1m2n3==",
        "Date": "Mon, 1 Mar 2027 12:05:00 +0000",
        "Message-ID": "<4a5b6c7d8e9f4a5b6c7d8e9f4a5b6c7d@EX01.example.com>",
        "Accept-Language": "en-GB, en-US",
        "Content-Language": "en-GB",
        "X-MS-Has-Attach": "yes",
        "X-MS-TNEF-Correlator": "",
        "x-originating-ip": "[10.0.0.12]",
        "Disposition-Notification-To": "Alice Example <alice@example.com>",
        "Content-Type": "multipart/mixed;\n"
        '\tboundary="_004_4a5b6c7d8e9f4a5b6c7d8e9f4a5b6c7dEX01examplecom_"',
        "MIME-Version": "1.0",
        "X-Mailer": "Microsoft Outlook 16.0",
        "Importance": "High",
        "X-Priority": "1",
    }


def outlook_on_the_web(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@contoso.com>",
        "ARC-Seal": "i=1; a=rsa-sha256; s=arcselector10001; d=microsoft.com; cv=none; b=abc",
        "From": "Alice Example <alice@contoso.com>",
        "To": '"pbem@example.net" <pbem@example.net>',
        "Subject": subject,
        "Thread-Topic": subject,
        "Thread-Index": "AQHaa1b2c3d4e5f6g7h8i9j0k==",
        "Date": "Mon, 1 Mar 2027 12:05:00 +0000",
        "Message-ID": "<AM9PR04MB1234A1B2C3D4E5F6A7B8C9D0E1F2A"
        "@AM9PR04MB1234.eurprd04.prod.outlook.com>",
        "Accept-Language": "en-US",
        "Content-Language": "en-US",
        "X-MS-Has-Attach": "",
        "X-MS-TNEF-Correlator": "",
        "msip_labels": "",
        "authentication-results": "dkim=none (message not signed) header.d=none;",
        "x-ms-publictraffictype": "Email",
        "x-ms-traffictypediagnostic": "AM9PR04MB1234:EE_|DB9PR04MB5678:EE_",
        "x-ms-office365-filtering-correlation-id": "1d699f2e-610d-4782-ad54-08d5f25c84db",
        "x-ms-exchange-senderadcheck": "1",
        "x-ms-exchange-antispam-relay": "0",
        "x-microsoft-antispam": "BCL:0;ARA:13230031|366004|376005;",
        "x-forefront-antispam-report": "CIP:255.255.255.255;CTRY:;LANG:en;SCL:1;SRV:;",
        "x-ms-exchange-antispam-messagedata-chunkcount": "1",
        "Content-Type": 'multipart/alternative;\n\tboundary="_000_AM9PR04MB1234_"',
        "MIME-Version": "1.0",
        "X-OriginatorOrg": "contoso.com",
        "X-MS-Exchange-CrossTenant-AuthAs": "Internal",
        "X-MS-Exchange-CrossTenant-Network-Message-Id": "2d0e874b-548e-4cc4-a34c-08db4666a30b",
        "X-MS-Exchange-CrossTenant-originalarrivaltime": "01 Mar 2027 12:05:00.1234 (UTC)",
        "X-MS-Exchange-CrossTenant-fromentityheader": "Hosted",
        "X-MS-Exchange-Transport-CrossTenantHeadersStamped": "DB9PR04MB5678",
    }


def outlook_ios(subject: str) -> Shape:
    return {
        "Return-Path": "<alice.example@outlook.com>",
        "From": "Alice Example <alice.example@outlook.com>",
        "To": "pbem@example.net",
        "Subject": subject,
        "Thread-Topic": subject,
        "Thread-Index": "AQHab1c2d3e4==",
        "Date": "Mon, 1 Mar 2027 12:05:00 +0000",
        "Message-ID": "<SN6PR11MB2718A1B2C3D4E5F6@SN6PR11MB2718.namprd11.prod.outlook.com>",
        "X-MS-Has-Attach": "",
        "X-MS-TNEF-Correlator": "",
        "x-ms-exchange-messagesentrepresentingtype": "1",
        "Content-Type": 'multipart/alternative;\n\tboundary="_000_SN6PR11MB2718_"',
        "MIME-Version": "1.0",
    }


def apple_mail(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@icloud.com>",
        "From": "Alice Example <alice@icloud.com>",
        "Content-Type": "text/plain; charset=us-ascii",
        "Content-Transfer-Encoding": "7bit",
        "Mime-Version": "1.0 (Mac OS X Mail 16.0 \\(3774.600.62\\))",
        "Subject": subject,
        "Message-Id": "<5C1A2B3C-4D5E-6F70-8192-A3B4C5D6E7F8@icloud.com>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "To": "pbem@example.net",
        "X-Mailer": "Apple Mail (2.3774.600.62)",
    }


def ios_mail(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@me.com>",
        "Content-Type": "multipart/alternative; boundary=Apple-Mail-1A2B3C4D-5E6F-7081-92A3",
        "Content-Transfer-Encoding": "7bit",
        "From": "Alice Example <alice@me.com>",
        "Mime-Version": "1.0 (1.0)",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "Subject": subject,
        "Message-Id": "<9D8C7B6A-5F4E-3D2C-1B0A-F9E8D7C6B5A4@me.com>",
        "References": "<r0003-alice@spring-2027.pbem>",
        "In-Reply-To": "<r0003-alice@spring-2027.pbem>",
        "To": "pbem@example.net",
        "X-Mailer": "iPhone Mail (21E236)",
    }


def thunderbird(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Message-ID": "<3b2c1d0e-9f8a-7b6c-5d4e-3f2a1b0c9d8e@example.org>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "MIME-Version": "1.0",
        "User-Agent": "Mozilla Thunderbird",
        "Content-Language": "en-US",
        "To": "pbem@example.net",
        "From": "Alice Example <alice@example.org>",
        "Subject": subject,
        "Disposition-Notification-To": "Alice Example <alice@example.org>",
        "Content-Type": "text/plain; charset=UTF-8; format=flowed",
        "Content-Transfer-Encoding": "7bit",
    }


def k9(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Date": "Mon, 01 Mar 2027 13:05:00 +0100",
        "User-Agent": "K-9 Mail for Android",
        "In-Reply-To": "<r0003-alice@spring-2027.pbem>",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=utf-8",
        "Subject": subject,
        "To": "pbem@example.net",
        "From": "Alice Example <alice@example.org>",
        "Message-ID": "<A1B2C3D4-E5F6-4789-8A9B-0C1D2E3F4A5B@example.org>",
    }


def fairemail(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100 (CET)",
        "From": "Alice Example <alice@example.org>",
        "To": "pbem@example.net",
        "Message-ID": "<1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809@example.org>",
        "In-Reply-To": "<r0003-alice@spring-2027.pbem>",
        "Subject": subject,
        "MIME-Version": "1.0",
        "Content-Type": 'multipart/alternative; boundary="----=_Part_1_12345678.1709294700000"',
        "Return-Receipt-To": "alice@example.org",
    }


def mutt(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "From": "Alice Example <alice@example.org>",
        "To": "pbem@example.net",
        "Subject": subject,
        "Message-ID": "<Zb1c2d3e4f5g6h7i@example.org>",
        "Mail-Followup-To": "pbem@example.net",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=us-ascii",
        "Content-Disposition": "inline",
        "User-Agent": "Mutt/2.2.12 (2023-09-09)",
    }


def neomutt(subject: str) -> Shape:
    shape = mutt(subject)
    shape["User-Agent"] = "NeoMutt/20231103"
    return shape


def proton(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@proton.me>",
        "Date": "Mon, 01 Mar 2027 12:05:00 +0000",
        "To": "pbem@example.net",
        "From": "Alice Example <alice@proton.me>",
        "Subject": subject,
        "Message-ID": "<a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6@proton.me>",
        "Feedback-ID": "12345678:user:proton",
        "X-Pm-Message-ID": "a1b2c3d4e5f6a7b8c9d0",
        "X-Pm-Origin": "internal",
        "X-Pm-Content-Encryption": "end-to-end",
        "X-Pm-Spamscore": "0",
        "MIME-Version": "1.0",
        "Content-Type": 'multipart/mixed; boundary="b1_a1b2c3d4e5f6a7b8c9d0"',
    }


def yahoo(subject: str) -> Shape:
    return {
        "Return-Path": "<alice.example@yahoo.com>",
        "X-YMail-OSG": "a1b2c3d4e5f6.g7h8i9j0k1l2",
        "X-Sonic-MF": "<alice.example@yahoo.com>",
        "Date": "Mon, 1 Mar 2027 12:05:00 +0000 (UTC)",
        "From": "Alice Example <alice.example@yahoo.com>",
        "To": '"pbem@example.net" <pbem@example.net>',
        "Message-ID": "<123456789.1234567.1709294700000@mail.yahoo.com>",
        "Subject": subject,
        "MIME-Version": "1.0",
        "Content-Type": "multipart/alternative;"
        ' boundary="----=_Part_1234567_89012345.1709294700000"',
        "X-Mailer": "WebService/1.1.21952 YMailNorrin",
    }


def samsung(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Message-ID": "<a1b2c3d4e5f6.5f6e7d8c9b0a@email.android.com>",
        "Date": "Mon, 01 Mar 2027 13:05:00 +0100",
        "Subject": subject,
        "From": "Alice Example <alice@example.org>",
        "To": "pbem@example.net",
        "MIME-Version": "1.0",
        "Content-Type": 'multipart/alternative; boundary="--_com.samsung.android.email_123456789"',
    }


def the_bat(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "From": "Alice Example <alice@example.org>",
        "Reply-To": "Alice Example <alice@example.org>",
        "Organization": "Home",
        "X-Priority": "3 (Normal)",
        "Message-ID": "<1234567890.20270301130500@example.org>",
        "To": "pbem@example.net",
        "Subject": subject,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=utf-8",
        "X-Mailer": "The Bat! (v10.5.3) Professional",
    }


def alpine(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100 (CET)",
        "From": "Alice Example <alice@example.org>",
        "To": "pbem@example.net",
        "Subject": subject,
        "Message-ID": "<alpine.DEB.2.22.394.2703011304550.12345@host.example.org>",
        "User-Agent": "Alpine 2.26 (DEB 649 2022-06-02)",
        "MIME-Version": "1.0",
        "Content-Type": "TEXT/PLAIN; charset=US-ASCII; format=flowed",
    }


def roundcube(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "MIME-Version": "1.0",
        "Date": "Mon, 01 Mar 2027 13:05:00 +0100",
        "From": "alice@example.org",
        "To": "pbem@example.net",
        "Subject": subject,
        "Message-ID": "<a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6@example.org>",
        "X-Sender": "alice@example.org",
        "User-Agent": "Roundcube Webmail/1.6.6",
        "Content-Type": "text/plain; charset=US-ASCII; format=flowed",
    }


def gmx(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@gmx.de>",
        "MIME-Version": "1.0",
        "Message-ID": "<trinity-a1b2c3d4-e5f6-7081-92a3-b4c5d6e7f809-1709294700000"
        "@3c-app-gmx-bap01>",
        "From": "Alice Beispiel <alice@gmx.de>",
        "To": "pbem@example.net",
        "Subject": subject,
        "Content-Type": "text/plain; charset=UTF-8",
        "Date": "Mon, 1 Mar 2027 13:05:00 +0100",
        "Importance": "normal",
        "Sensitivity": "Normal",
        "X-Priority": "3",
        "X-UI-Message-Type": "mail",
    }


def evolution(subject: str) -> Shape:
    return {
        "Return-Path": "<alice@example.org>",
        "Message-ID": "<a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0.camel@example.org>",
        "Subject": subject,
        "From": "Alice Example <alice@example.org>",
        "To": "pbem@example.net",
        "Date": "Mon, 01 Mar 2027 13:05:00 +0100",
        "Content-Type": "text/plain",
        "User-Agent": "Evolution 3.50.2",
        "MIME-Version": "1.0",
    }


def outlook_with_suppression(subject: str) -> Shape:
    """A person's message sent through an organisation whose servers ask, on every message,
    for no automatic replies: X-Auto-Response-Suppress, and no more."""
    shape = outlook_2016(subject)
    shape["X-Auto-Response-Suppress"] = "DR, OOF, AutoReply"
    return shape


def forwarded(subject: str) -> Shape:
    """A player whose mail goes out through a forwarding service (SRS envelope) and into a
    mailbox fed by procmail, which adds X-Loop."""
    shape = thunderbird(subject)
    shape["Return-Path"] = "<SRS0=AbCd=KJ=example.org=alice@forwarder.example>"
    shape["X-Loop"] = "pbem@example.net"
    shape["X-Forwarded-To"] = "pbem@example.net"
    shape["Auto-Submitted"] = "no"
    return shape


CLIENTS = {
    "Gmail": gmail,
    "Gmail for Android": gmail_android,
    "Outlook 2016": outlook_2016,
    "Outlook on the web": outlook_on_the_web,
    "Outlook for iOS": outlook_ios,
    "Apple Mail": apple_mail,
    "iOS Mail": ios_mail,
    "Thunderbird": thunderbird,
    "K-9 Mail": k9,
    "FairEmail": fairemail,
    "mutt": mutt,
    "NeoMutt": neomutt,
    "Proton Mail": proton,
    "Yahoo Mail": yahoo,
    "Samsung Email": samsung,
    "The Bat!": the_bat,
    "Alpine": alpine,
    "Roundcube": roundcube,
    "GMX": gmx,
    "Evolution": evolution,
    "Outlook, auto-responses suppressed": outlook_with_suppression,
    "forwarded through procmail": forwarded,
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("subject", PERSON_SUBJECTS[:22])
def test_people_are_answered(client: str, subject: str) -> None:
    assert automatic(headers(CLIENTS[client](subject))) is None


# ---------------------------------------------------------------------------------------------
# Whole messages, read as pbem reads them

MACHINE_FILES = sorted(FIXTURES.glob("machine-*.eml"))
PERSON_FILES = sorted(FIXTURES.glob("person-*.eml"))


def test_there_are_whole_messages_of_both_kinds() -> None:
    assert len(MACHINE_FILES) >= 10 and len(PERSON_FILES) >= 5


@pytest.mark.parametrize("path", MACHINE_FILES, ids=lambda p: p.stem)
def test_whole_machine_messages_are_not_answered(path: Path) -> None:
    letter = read_letter(path.read_bytes())
    assert letter.machine, path.name


@pytest.mark.parametrize("path", PERSON_FILES, ids=lambda p: p.stem)
def test_whole_messages_of_people_are_answered(path: Path) -> None:
    letter = read_letter(path.read_bytes())
    assert letter.machine is None, letter.machine
    assert letter.sender is not None


def test_folded_and_eight_bit_headers_are_read() -> None:
    raw = (
        b"From: Bob <bob@example.de>\r\n"
        b"Subject: Automatische\r\n Antwort: " + GAME.encode() + b"\r\n"
        b"\r\nIch bin nicht da.\r\n"
    )
    assert read_letter(raw).machine
    raw = f"From: Bob <bob@example.se>\nSubject: Frånvaro: {GAME}\n\nBorta.\n"
    assert read_letter(raw.encode("utf-8")).machine


# ---------------------------------------------------------------------------------------------
# Never raises

HEADER_NAMES = [
    "auto-submitted",
    "precedence",
    "x-precedence",
    "content-type",
    "from",
    "sender",
    "return-path",
    "subject",
    "x-autoreply",
    "x-apple-action",
    "x-ms-exchange-generated-message-source",
    "list-id",
    "x-pbem-loop",
    "x-random",
]
PIECES = [*string.printable, "=?", "?=", "?Q?", "?B?", "utf-8", "<>", "\0", "\udcff", "\u00a0"]
PIECES += ["auto-replied", "MAILER-DAEMON", "@", "multipart/report", "report-type=", "Auto:"]
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.characters()), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(HEADER_NAMES), st.lists(TEXT, max_size=3), max_size=8))
def test_any_headers_give_an_answer_and_never_raise(value: dict[str, list[str]]) -> None:
    reason = automatic(value)
    assert reason is None or (isinstance(reason, str) and reason)


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_any_subject_or_sender_never_raises(subject: str, sender: str) -> None:
    automatic({"subject": [subject], "from": [sender], "return-path": [sender]})
    automatic({"subject": ["=?utf-8?q?" + subject + "?="], "from": ["=?x?b?" + sender + "?="]})


@pytest.mark.parametrize(
    "value",
    [
        "=?unknown-charset?Q?Automatic_reply:?= x",
        "=?utf-8?B?####?=",
        "=?utf-8?Q?" + "=FF" * 30 + "?=",
        "=?utf-8?B?QXV0b21hdGljIHJlcGx5Og==",
        "\udcff\udcfe",
        "x" * 100_000,
        "<" * 1000,
        '"' * 999,
        "(" * 500 + "auto-replied",
    ],
)
def test_broken_values_never_raise(value: str) -> None:
    for name in HEADER_NAMES:
        automatic({name: [value]})
