"""Machine mail: the messages that a program sent (auto-replies, vacation notices, bounces,
read receipts, pbem's own mail coming back) and that must never be answered, or two programs
answer each other for ever."""

from __future__ import annotations

from collections.abc import Mapping

LOOP_HEADER = "X-Pbem-Loop"


def automatic(headers: Mapping[str, list[str]]) -> str | None:
    """Why a message was sent by a machine (and must not be answered), or None."""

    def first(name: str) -> str | None:
        values = headers.get(name.lower())
        return values[0].strip() if values else None

    if first(LOOP_HEADER) is not None:
        return f"it carries pbem's own {LOOP_HEADER} header"
    submitted = (first("Auto-Submitted") or "").split(";")[0].strip().lower()
    if submitted and submitted != "no":
        return f"it is an automatic message (Auto-Submitted: {submitted[:40]})"
    precedence = (first("Precedence") or "").lower()
    if precedence in ("bulk", "junk", "list"):
        return f"it is an automatic message (Precedence: {precedence})"
    for header in ("X-Autoreply", "X-Autorespond"):
        if first(header) is not None:
            return f"it is an automatic reply ({header})"
    return_path = first("Return-Path")
    if return_path is not None and return_path in ("", "<>"):
        return "it has an empty Return-Path (a bounce or notification)"
    return None
