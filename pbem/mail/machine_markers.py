"""The words machine mail puts before the subject it answers, in the languages pbem's players
write in and those of the mail programs they use: auto-responders' markers, the words of
away notices, read receipts' and mail servers' bounces. Words only: where in a subject each
counts, and what it makes of a message, is `machine`'s (`_subject`).
"""

from __future__ import annotations

AUTOREPLY_MARKERS = (
    # What auto-responders put before the subject they answer. These phrases name the reply
    # itself, so a person's subject does not begin with one; a player answering such a
    # reply writes "Re: Automatic reply: ...", which does not begin with it either.
    # English: Outlook and Exchange ("Automatic reply", older "Out of Office AutoReply"),
    # iCloud and others ("Auto reply").
    "auto reply",
    "auto-reply",
    "autoreply",
    "auto replied",
    "automatic reply",
    "automatic response",
    "automated reply",
    "automated response",
    "auto response",
    "auto-response",
    "autoresponse",
    "autoresponder",
    "auto-responder",
    "out of office autoreply",
    "out of office auto reply",
    "out of office auto-reply",
    "out of office reply",
    "out of the office reply",
    "out of office notification",
    "vacation reply",
    "vacation response",
    "vacation auto-reply",
    "yahoo! auto response",
    # German: Outlook ("Automatische Antwort"), older Outlook ("Abwesenheitsnotiz").
    "automatische antwort",
    "abwesenheitsnotiz",
    "abwesenheitsmeldung",
    "abwesenheitsbenachrichtigung",
    # French: Outlook ("Réponse automatique :", with a space before the colon), older Outlook.
    "réponse automatique",
    "reponse automatique",
    "message automatique",
    "notification d'absence",
    # Italian: Outlook ("Risposta automatica"), older Outlook ("Risposta Non al computer").
    "risposta automatica",
    "risposta non al computer",
    "risposta di assenza",
    # Dutch: Outlook ("Automatisch antwoord").
    "automatisch antwoord",
    "automatisch beantwoord",
    # Swedish: Outlook ("Autosvar"); Danish and Norwegian write "Automatisk svar".
    "autosvar",
    "automatiskt svar",
    "automatisk svar",
    # Indonesian: Outlook ("Balasan Otomatis").
    "balasan otomatis",
    "balas otomatis",
    "jawaban otomatis",
    "respons otomatis",
    # Gujarati: the renderings of "automatic reply" in use; no sample of what Outlook in
    # Gujarati writes was found, so these are the likely forms, not a recorded one.
    "સ્વયંસંચાલિત જવાબ",
    "સ્વયંચાલિત જવાબ",
    "સ્વચાલિત જવાબ",
    "આપોઆપ જવાબ",
    "ઓટોમેટિક જવાબ",
    # And a few more of Outlook's languages, for players who write in them.
    "respuesta automática",
    "respuesta automatica",
    "resposta automática",
    "resposta automatica",
    "automaattinen vastaus",
    "automatyczna odpowiedź",
    "automatická odpověď",
    "răspuns automat",
)
"""Auto-reply markers that count at the very start of a subject, followed by a colon, or
bracketed ("[Auto-Reply] ..."), or alone as the whole subject."""

AWAY_MARKERS = (
    # Words a person uses too ("Away: back on Monday"), which some responders put before the
    # subject they answer. They count only before the echo of that subject: everything pbem
    # sends has a subject that begins "[game]", so an auto-reply to it reads
    # "Away: [spring-2027] turn 3: your move", and a person's message rarely does.
    # Sieve vacation's default (RFC 5230: "Auto: " and the subject) is here too, for a
    # player may well write "Auto: ..." about pbem's autopilot.
    "auto",
    "out of office",
    "out of the office",
    "out-of-office",
    "ooo",
    "away",
    "on vacation",
    "vacation",
    "on holiday",
    "holiday",
    "on leave",
    "abwesend",
    "abwesenheit",
    "urlaub",
    "absence",
    "absent",
    "absente",
    "absence du bureau",
    "absent du bureau",
    "absent(e) du bureau",
    "en congé",
    "en congés",
    "assente",
    "assenza",
    "fuori sede",
    "fuori ufficio",
    "afwezig",
    "afwezigheid",
    "niet aanwezig",
    "frånvaro",
    "frånvarande",
    "ledig",
    "di luar kantor",
    "tidak di kantor",
    "sedang cuti",
    "cuti",
    "ઓફિસની બહાર",
    "રજા પર",
    "fuera de la oficina",
    "ausente",
)

RECEIPT_MARKERS = (
    # What mail clients put before the subject of a read receipt sent without the report
    # format; counted, like the words above, only before the echo of pbem's subject.
    "read",
    "not read",
    "gelesen",
    "nicht gelesen",
    "lu",
    "non lu",
    "letto",
    "non letto",
    "gelezen",
    "niet gelezen",
    "läst",
    "oläst",
    "dibaca",
    "tidak dibaca",
    "return receipt",
    "read receipt",
)

BOUNCE_MARKERS = (
    # Mail servers' bounce subjects: Exchange ("Undeliverable:", in its languages),
    # Postfix ("Undelivered Mail Returned to Sender"), Gmail and Exchange ("Delivery Status
    # Notification (Failure)"), Exim ("Mail delivery failed: ..."), Sendmail ("Returned mail:
    # ..."), qmail ("failure notice"), Lotus Notes ("Delivery Notification"), and the delay
    # warnings of the same. They begin no person's subject, when followed by a colon, a
    # bracket or nothing ("Delivery failure?" stays a person's).
    "undeliverable",
    "undelivered mail returned to sender",
    "undelivered mail",
    "undeliverable mail",
    "undeliverable message",
    "delivery status notification",
    "delivery notification",
    "mail delivery failed",
    "mail delivery failure",
    "message delivery failure",
    "delivery failure",
    "delivery failed",
    "returned mail",
    "failure notice",
    "mail system error",
    "delayed mail",
    "delivery delayed",
    "nicht zustellbar",
    "unzustellbar",
    "non remis",
    "non distribuable",
    "non recapitabile",
    "impossibile recapitare",
    "onbestelbaar",
    "kan niet worden bezorgd",
    "olevererbart",
    "ej levererbart",
    "kunde inte levereras",
    "tidak terkirim",
    "tidak dapat dikirim",
)
