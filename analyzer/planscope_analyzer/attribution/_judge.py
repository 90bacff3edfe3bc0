"""Optional LLM judge (off by default): ask an OpenAI-compatible chat endpoint who failed.

The rule-based attribution is always computed first and stays the default; the judge's answer
is attached to it and replaces it only when asked (``prefer=True``) and well-formed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import httpx

from ..importers._conversation import Conversation
from ._method import Attribution

MAX_TURN_CHARS = 1200


@dataclass(frozen=True)
class JudgeSettings:
    """Where the judge lives. ``base_url`` is the OpenAI-compatible root (``…/v1``)."""

    base_url: str
    model: str
    api_key: str | None = None
    prefer: bool = False
    timeout: float = 60.0


def _prompt(conv: Conversation, rules: Attribution) -> str:
    lines = [f"Task: {conv.question}", "The multi-agent run below FAILED. Conversation:"]
    for t in conv.turns:
        lines.append(f"[{t.index}] {t.role}: {t.content[:MAX_TURN_CHARS]}")
    lines.append(
        f"A rule-based analysis blamed {rules.component} at step {rules.step}: "
        f"{rules.explanation}. Which agent made the decisive mistake, and at which step index? "
        'Answer with JSON only: {"agent": "...", "step": N, "reason": "..."}'
    )
    return "\n".join(lines)


def judge(
    conv: Conversation,
    rules: Attribution,
    settings: JudgeSettings,
    client: httpx.Client | None = None,
) -> Attribution:
    """The rule-based attribution with the judge's opinion attached (or adopted if preferred)."""
    headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
    body = {
        "model": settings.model,
        "temperature": 0,
        "messages": [{"role": "user", "content": _prompt(conv, rules)}],
    }
    own = client is None
    http = client or httpx.Client(timeout=settings.timeout)
    try:
        r = http.post(
            settings.base_url.rstrip("/") + "/chat/completions", json=body, headers=headers
        )
        r.raise_for_status()
        text = r.json()["choices"][0]["message"]["content"]
        verdict = _parse(text)
    except (httpx.HTTPError, KeyError, IndexError, ValueError, TypeError) as exc:
        return replace(rules, judge={"error": str(exc)[:300]})
    finally:
        if own:
            http.close()
    speakers = set(conv.speakers())
    ok = (
        verdict.get("agent") in speakers
        and isinstance(verdict.get("step"), int)
        and 0 <= verdict["step"] < len(conv.turns)
    )
    if settings.prefer and ok:
        return replace(
            rules,
            component=verdict["agent"],
            step=verdict["step"],
            rule="llm-judge",
            explanation=str(verdict.get("reason", "")),
            judge=verdict,
        )
    return replace(rules, judge=verdict)


def _parse(text: str) -> dict[str, Any]:
    start, end = text.find("{"), text.rfind("}")
    doc = json.loads(text[start : end + 1])
    if not isinstance(doc, dict):
        raise ValueError("judge answer is not an object")
    if isinstance(doc.get("step"), str) and doc["step"].strip().isdigit():
        doc["step"] = int(doc["step"])
    return doc
