"""Tool calls said only by the conversation, and LiteLLM's own OpenTelemetry.

An instrumentation that traces model calls only (LiteLLM's OpenTelemetry callback, the OpenAI or
Anthropic instrumentors of OpenInference and OpenLLMetry used without a framework) writes no
tool span: a tool call shows only as a tool call in one model call's answer (with its id, where
the convention records one) and as the assistant message and ``tool`` message (its result, by
call id) that every later request of that conversation repeats. :func:`conversation_events`
says those as the GenAI tool events ``observed.event_calls`` reads (a call: its id, tool and
arguments; its outcome: its result, and its error when the result is an error envelope by
shape, ``_returned``), so one path makes them tool calls; each call once (the first model call
that shows it says it; a repeat of the history says nothing new).

The messages are read in every convention the mapping reads: GenAI ``gen_ai.input.messages`` /
``gen_ai.output.messages`` (``tool_call`` / ``tool_call_response`` parts, or OpenAI-shaped
``tool_calls`` and ``tool_call_id`` as LiteLLM writes them), OpenInference's
``llm.input_messages.{i}.message.*`` / ``llm.output_messages.*``, OpenLLMetry's
``gen_ai.prompt.{i}.*`` / ``gen_ai.completion.{i}.*``.

**LiteLLM** (scope ``litellm``, ``USE_OTEL_LITELLM_REQUEST_SPAN``) writes a ``litellm_request``
span per model call and under it a ``raw_gen_ai_request`` span carrying the provider's raw
request and response (``llm.openai.*``): the same call again, not work of its own
(:func:`duplicate_call`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from planscope import safejson
from planscope import semconv as A

from ._returned import returned_error

__all__ = [
    "CONVERSATION",
    "HandedResult",
    "conversation_calls_sql",
    "conversation_events",
    "conversation_sql",
    "duplicate_call",
    "flat_messages",
    "function_calls_sql",
    "function_results",
    "function_results_sql",
    "handed_over",
]

CONVERSATION = "planscope.conversation"
"""The attribute of a conversation's tool events naming the conversation (the span above its
model calls): its call ids are unique only within it."""

LITELLM_REQUEST = "litellm_request"
"""The span LiteLLM's OpenTelemetry callback writes per model call."""
LITELLM_RAW = "raw_gen_ai_request"
"""Its child holding the provider's raw request and response: the same call."""

_PREFIXES = (
    ("llm.input_messages.", "llm.output_messages."),
    ("gen_ai.prompt.", "gen_ai.completion."),
)
"""The flattened conventions' (input, output) message prefixes: OpenInference, OpenLLMetry."""

Call = tuple[str, str, str]
"""A tool call: its id, tool and arguments (JSON text)."""

TRANSFER_KEY = "assistant"
"""The one key of the result the OpenAI Agents SDK gives a handoff's tool call
(``Handoff.get_transfer_message``: ``{"assistant": "<agent>"}``, the agent handed to)."""


def duplicate_call(name: str, parent_name: str) -> bool:
    """Whether a span is LiteLLM's raw copy of the model call its parent is (module docstring).

    >>> duplicate_call("raw_gen_ai_request", "litellm_request"), duplicate_call("search", "x")
    (True, False)
    """
    return name == LITELLM_RAW and parent_name == LITELLM_REQUEST


def conversation_sql(column: str = "SpanAttributes") -> str:
    """SQL for the attributes of ``column`` that :func:`conversation_events` reads (a Map).

    >>> conversation_sql().startswith("mapFilter((k, v) -> k IN ('gen_ai.input.messages'")
    True
    """
    starts = " OR ".join(f"startsWith(k, '{p}')" for pair in _PREFIXES for p in pair)
    # the request JSON too: a result's is_error is only there (_flagged)
    whole = f"'{A.GEN_AI_INPUT_MESSAGES}', '{A.GEN_AI_OUTPUT_MESSAGES}', '{A.OI_INPUT_VALUE}'"
    return f"mapFilter((k, v) -> k IN ({whole}) OR {starts}, {column})"


def conversation_calls_sql(where: str) -> str:
    """SQL for whether an ``otel_traces`` row is a model call whose messages may say tool calls
    ``observed.bind`` takes from them, of the spans ``where`` selects (a read's traces and time
    range): an LLM span in a trace with no tool span, with no span beside it (the same parent)
    but model calls (a span beside may record the calls itself: an app's traced tool function).
    A log (Logfire's) is an event of its span, neither. The run model and the loader read the
    messages of these spans only: most model calls of a framework's trace say nothing ``bind``
    takes, and their messages (each request repeats the history) are a span's largest
    attributes. (A plain span ``bind`` reads as a model call, a Burr function's, still counts
    as a span beside here.)

    >>> conversation_calls_sql("TraceId = 't'").startswith("SpanModelKind = 'llm' AND TraceId")
    True
    """
    spans = f"FROM otel_traces WHERE {where} AND SpanModelLogLevel = 0 AND SpanModelKind"
    return (
        f"SpanModelKind = 'llm' AND TraceId NOT IN (SELECT TraceId {spans} = 'tool') "
        f"AND (TraceId, ParentSpanId) NOT IN (SELECT TraceId, ParentSpanId {spans} != 'llm')"
    )


def conversation_events(
    span_id: str, parent_span_id: str, start_ns: int, end_ns: int, attributes: Mapping[str, str]
) -> list[tuple[str, int, str, dict[str, str]]]:
    """The GenAI tool events (span id, time, name, attributes) one model call's messages say:
    each call its answer made (``gen_ai.choice``, at its end), and each call and result its
    request's history holds (a call just before it began, its result as it began). The same
    call in several model calls' histories is said by each: ``observed.event_calls`` keeps the
    first. A call id names a call within one conversation (a scripted or local model may
    number its calls afresh in each): the events carry the model call's parent span as the
    conversation (:data:`CONVERSATION`), one per attempt of an app that starts one each time.

    >>> said = {"gen_ai.input.messages": json.dumps([
    ...     {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
    ...      "function": {"name": "lookup", "arguments": '{"q": 1}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "parts": [
    ...      {"type": "text", "content": '{"error": "not found"}'}]}])}
    >>> [(e[1], e[2], e[3].get("gen_ai.tool.name"), e[3].get("error.type"))
    ...  for e in conversation_events("s", "p", 10, 20, said)]
    [(9, 'gen_ai.choice', 'lookup', None), (10, 'gen_ai.tool.message', None, 'error')]
    """
    asked, answered = _messages(attributes)
    flagged = _flagged(attributes.get(A.OI_INPUT_VALUE))
    scope = {CONVERSATION: parent_span_id}
    out: list[tuple[str, int, str, dict[str, str]]] = []
    for message in asked:
        for call_id, tool, arguments in _calls(message):
            said = _call(call_id, tool, arguments) | scope
            out.append((span_id, start_ns - 1, A.GEN_AI_CHOICE_EVENT, said))
        for call_id, result in _results(message):
            said = _result(call_id, result, call_id in flagged) | scope
            out.append((span_id, start_ns, A.GEN_AI_TOOL_MESSAGE_EVENT, said))
    for message in answered:
        for call_id, tool, arguments in _calls(message):
            said = _call(call_id, tool, arguments) | scope
            out.append((span_id, end_ns, A.GEN_AI_CHOICE_EVENT, said))
    return out


def _call(call_id: str, tool: str, arguments: str) -> dict[str, str]:
    return {
        A.GEN_AI_TOOL_CALL_ID: call_id,
        A.GEN_AI_TOOL_NAME: tool,
        A.GEN_AI_TOOL_CALL_ARGUMENTS: arguments,
    }


def handed_over(messages: Sequence[Mapping[str, Any]]) -> str:
    """The arguments of a conversation's latest handoff: of the last tool call whose result is
    the OpenAI Agents SDK's transfer message (``{"assistant": "<agent>"}``, the agent the call
    handed the conversation to); '' when none. A handoff's arguments (its ``input_type``: a
    work order, a report) are what the agent it handed to was given, in no span of their own.

    >>> handed_over([
    ...     {"role": "user", "parts": [{"type": "text", "content": "Go"}]},
    ...     {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1",
    ...      "name": "transfer_to_desk", "arguments": {"step": "pick"}}]},
    ...     {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1",
    ...      "response": '{"assistant": "desk"}'}]},
    ...     {"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "lookup",
    ...      "arguments": "{}"}}]},
    ...     {"role": "tool", "tool_call_id": "c2", "content": "3 found"}])
    '{"step": "pick"}'
    """
    calls: list[Call] = []
    results: dict[str, str] = {}
    for message in messages:
        calls.extend(_calls(message))
        results.update(_results(message))
    return next(
        (arguments for call_id, _, arguments in reversed(calls) if _transfer(results.get(call_id))),
        "",
    )


def _transfer(result: str | None) -> bool:
    """Whether a tool result is the OpenAI Agents SDK's handoff transfer message
    (:data:`TRANSFER_KEY`: a JSON object of that one key naming the agent)."""
    if not result or not result.startswith("{"):
        return False
    decoded = safejson.load_object(result)
    return list(decoded) == [TRANSFER_KEY] and isinstance(decoded[TRANSFER_KEY], str)


def _results(message: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """The tool results a message gives (call id, result): a ``tool`` message's
    ``tool_call_id``, GenAI ``tool_call_response`` parts."""
    if (answers := message.get("tool_call_id")) and isinstance(answers, str):
        yield answers, _text(message)
    for part in message.get("parts") or ():
        response = part.get("id") if isinstance(part, dict) else None
        if response and isinstance(response, str) and part.get("type") == "tool_call_response":
            yield response, _text({"parts": [part]})


def _result(call_id: str, result: str, flagged: bool = False) -> dict[str, str]:
    """A result's event attributes; ``flagged``: the request marked it an error (its text the
    error's message, unless it is an error envelope that says one)."""
    out = {A.GEN_AI_TOOL_CALL_ID: call_id, A.GEN_AI_TOOL_CALL_RESULT: result}
    if (error := returned_error(result)) is None and flagged:
        error = ("", result)
    if error is not None:
        out["error.type"] = error[0] or "error"
        out["exception.message"] = error[1]
    return out


def _flagged(request: str | None) -> set[str]:
    """The call ids of the tool results a model call's request JSON marks as errors: Anthropic's
    Messages API ``tool_result`` blocks with ``is_error`` true, a flag the flattened messages
    lose (OpenInference's Anthropic instrumentor records a block's id and text only, the request
    itself as ``input.value``).

    >>> _flagged(json.dumps({"messages": [{"role": "user", "content": [
    ...     {"type": "tool_result", "tool_use_id": "t1", "content": "jammed", "is_error": True},
    ...     {"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]}]}))
    {'t1'}
    """
    if not request or not request.startswith("{") or '"is_error"' not in request:
        return set()
    messages = safejson.load_object(request).get("messages")
    return {
        block["tool_use_id"]
        for m in (messages if isinstance(messages, list) else ())
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        for block in m["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and block.get("is_error") is True
        and isinstance(block.get("tool_use_id"), str)
    }


_FUNCTION_RESULT = r"^llm[.]input_messages[.]([0-9]+)[.]function[.]([0-9]+)$"
"""A tool's result a model call is handed in its input as OpenInference's autogen-agentchat
instrumentor records it: a JSON object ``{"name", "content", "call_id", "is_error"}`` (a
``FunctionExecutionResult`` of the ``function`` message at that index), the only place a failed
call shows (the instrumentor ends the tool's span OK)."""

HandedResult = tuple[str, bool, str]
"""A tool's result as a model call was handed it: the tool, whether it is an error, its text."""


def function_calls_sql(where: str) -> str:
    """SQL for whether an ``otel_traces`` row is a model call that may be handed the result of a
    tool span beside it that ended OK (:func:`function_results`), of the spans ``where`` selects:
    an LLM span with a tool span not in error under its parent. The run model and the loader
    read the function results of these spans only (as :func:`conversation_calls_sql` bounds the
    conversations read): a model call beside no such span can fail none.

    >>> function_calls_sql("TraceId = 't'").startswith("SpanModelKind = 'llm' AND (TraceId")
    True
    """
    return (
        "SpanModelKind = 'llm' AND (TraceId, ParentSpanId) IN (SELECT TraceId, ParentSpanId "
        f"FROM otel_traces WHERE {where} AND SpanModelKind = 'tool' "
        "AND SpanModelStatusCode != 'Error')"
    )


def function_results_sql(column: str = "SpanAttributes") -> str:
    """SQL for a model call's function results (:data:`_FUNCTION_RESULT`) of ``column``: a Map,
    empty unless one of them is an error (the only ones :func:`function_results` is read for).

    >>> function_results_sql().startswith("if(arrayExists(")
    True
    """
    results = f"mapFilter((k, v) -> match(k, '{_FUNCTION_RESULT}'), {column})"
    flagged = f"arrayExists(x -> match(x, '\"is_error\": ?true'), mapValues({results}))"
    return f"if({flagged}, {results}, map())"


def function_results(attributes: Mapping[str, str]) -> tuple[HandedResult, ...]:
    """The results of a model call's last function message (:data:`_FUNCTION_RESULT`), in order:
    those of the round of tool calls just before it; none unless one is an error (a round of
    calls that all worked fails nothing).

    >>> said = {"llm.input_messages.2.function.0": json.dumps(
    ...     {"name": "dig", "content": "rock", "call_id": "c2", "is_error": True}),
    ...     "llm.input_messages.0.function.0": json.dumps(
    ...     {"name": "dig", "content": "ok", "call_id": "c1", "is_error": False})}
    >>> function_results(said)
    (('dig', True, 'rock'),)
    """
    keyed = []
    for key, value in attributes.items():
        if (match := re.match(_FUNCTION_RESULT, key)) is not None and value.startswith("{"):
            decoded = safejson.load_object(value)
            if isinstance(decoded.get("name"), str):
                keyed.append(((int(match[1]), int(match[2])), decoded))
    if not keyed:
        return ()
    message = max(k[0] for k, _ in keyed)
    last = tuple(
        (d["name"], d.get("is_error") is True, str(d.get("content", "")))
        for k, d in sorted(keyed, key=lambda x: x[0])
        if k[0] == message
    )
    return last if any(error for _, error, _ in last) else ()


def _messages(attributes: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A model call's input and output messages, in the first convention that has them."""
    asked = _json_list(attributes.get(A.GEN_AI_INPUT_MESSAGES))
    answered = _json_list(attributes.get(A.GEN_AI_OUTPUT_MESSAGES))
    for into, out in _PREFIXES:
        asked = asked or flat_messages(attributes, into)
        answered = answered or flat_messages(attributes, out)
    return asked, answered


def _json_list(text: str | None) -> list[dict[str, Any]]:
    if not text or not text.startswith("["):
        return []
    try:
        decoded = safejson.loads(text)
    except ValueError:
        return []
    return [m for m in decoded if isinstance(m, dict)] if isinstance(decoded, list) else []


def flat_messages(attributes: Mapping[str, str], prefix: str) -> list[dict[str, Any]]:
    """Flattened messages (``{prefix}{i}.[message.]<field>``, a tool call's fields under
    ``tool_calls.{j}.[tool_call.]``, OpenInference's ``contents.{j}.message_content.text`` as
    text parts) as nested ones, GenAI-shaped, in index order.

    >>> flat_messages({"llm.input_messages.0.message.role": "user",
    ...                "llm.input_messages.0.message.contents.0.message_content.text": "Hi"},
    ...               "llm.input_messages.")
    [{'role': 'user', 'parts': [{'type': 'text', 'content': 'Hi'}]}]
    """
    by_index: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, field = key[len(prefix) :].partition(".")
        if not (index.isascii() and index.isdigit()):  # as the SQL's [0-9]+ ("²" is a digit)
            continue
        message = by_index.setdefault(int(index), {})
        field = field.removeprefix("message.")
        if field.startswith("tool_calls."):
            j, _, part = field[len("tool_calls.") :].partition(".")
            if j.isascii() and j.isdigit():
                calls = message.setdefault("tool_calls", {})
                call = calls.setdefault(int(j), {})
                call[part.removeprefix("tool_call.").removeprefix("function.")] = value
        elif field.startswith("contents.") and field.endswith(".message_content.text"):
            message.setdefault("parts", []).append({"type": "text", "content": value})
        else:
            message[field] = value
    out = []
    for i in sorted(by_index):
        m = by_index[i]
        if isinstance(m.get("tool_calls"), dict):
            m["tool_calls"] = [m["tool_calls"][j] for j in sorted(m["tool_calls"])]
        out.append(m)
    return out


def _calls(message: Mapping[str, Any]) -> Iterable[Call]:
    """The tool calls an assistant message makes that name their id: GenAI ``tool_call``
    parts, OpenAI-shaped ``tool_calls`` (nested or flattened)."""
    for part in message.get("parts") or ():
        if isinstance(part, dict) and part.get("type") == "tool_call":
            yield from _named(part.get("id"), part.get("name"), part.get("arguments"))
    for call in message.get("tool_calls") or ():
        if isinstance(call, dict):
            function = call.get("function")
            fn = function if isinstance(function, dict) else call
            yield from _named(call.get("id"), fn.get("name"), fn.get("arguments"))


def _named(call_id: Any, tool: Any, arguments: Any) -> Iterable[Call]:
    if isinstance(call_id, str) and call_id and isinstance(tool, str) and tool:
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments)
        yield call_id, tool, arguments


def _text(message: Mapping[str, Any]) -> str:
    """A tool message's result: its content, else its parts' text or response."""
    content = message.get("content")
    if isinstance(content, str) and content:
        return content
    texts = []
    for part in message.get("parts") or (content if isinstance(content, list) else ()):
        if not isinstance(part, dict):
            continue
        value = part.get("response", part.get("result", part.get("content", part.get("text"))))
        if isinstance(value, str):
            texts.append(value)
        elif value is not None:
            texts.append(json.dumps(value))
    return "\n".join(texts)
