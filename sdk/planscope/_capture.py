"""Serialisation of captured payloads: JSON with a repr() fallback, size caps, redaction, hashes.

Everything here is deterministic so that hashes and fingerprints are comparable across processes
and runtimes (the algorithms are specified in docs/semantic-conventions.md).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

Redactor: TypeAlias = Callable[[str, str, Any], Any]
"""``redact(span_kind, key, value) -> value``: called for every captured value before it is
serialised. ``span_kind`` is ``run``/``plan``/``step``/``tool``/``llm``; ``key`` is the argument
name for inputs and ``"return"`` for outputs. Return the value to record (e.g. ``"***"``)."""

OUTPUT_KEY = "return"

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"
)
_HEX_RUN = re.compile(r"\b(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,}\b")
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _plain(value: Any) -> Any:
    """Turn a non-JSON value into something json can encode (the ``default=`` hook)."""
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and getattr(type(value), "__module__", "").startswith("planscope"):
        return to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):  # pydantic v2 models
        try:
            return model_dump(mode="json")
        except Exception:
            return repr(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return [repr(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    return repr(value)


def _stable_plain(value: Any) -> Any:
    plain = _plain(value)
    if isinstance(plain, str):
        return _ADDRESS.sub("0x", plain)  # "<Foo object at 0x7f..>" must hash the same every run
    return plain


# Encoders built once (json.dumps with keyword arguments builds a new one per call); they hold
# only their settings, so one instance serves every thread. Same settings as json.dumps(...).
_DUMPS = json.JSONEncoder(default=_plain, ensure_ascii=False, separators=(",", ":")).encode
_CANONICAL = json.JSONEncoder(
    default=_stable_plain, sort_keys=True, ensure_ascii=False, separators=(",", ":")
).encode


def dumps(value: Any) -> str:
    """Serialise ``value`` to compact JSON; unserialisable parts become their repr()."""
    try:
        return _DUMPS(value)
    except (ValueError, TypeError, RecursionError):  # circular references, odd keys
        return json.dumps(repr(value), ensure_ascii=False)


def cap(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``max_bytes`` UTF-8 bytes; return (text, truncated)."""
    if len(text) * 4 <= max_bytes:  # fast path: cannot exceed even if every char took 4 bytes
        return text, False
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", errors="ignore"), True


def stable_hash(value: Any) -> str:
    """A stable 16-hex-digit hash of a value: sha256 of its canonical JSON (sorted keys).

    >>> stable_hash({"b": 1, "a": [1, 2]}) == stable_hash({"a": [1, 2], "b": 1})
    True
    """
    try:
        canonical = _CANONICAL(value)
    except (ValueError, TypeError, RecursionError):
        canonical = json.dumps(_ADDRESS.sub("0x", repr(value)))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def normalise_message(message: str) -> str:
    """Replace the variable parts of an error message (uuids, hex, numbers) by placeholders.

    >>> normalise_message("timeout after 30s on 0x7f3a, job_9f1c2d3e-aaaa-bbbb-cccc-123456789abc")
    'timeout after <n>s on <hex>, job_<uuid>'
    """
    text = _UUID.sub("<uuid>", message)
    text = _ADDRESS.sub("<hex>", text)
    text = _HEX_RUN.sub("<hex>", text)
    text = _DIGITS.sub("<n>", text)
    return _SPACES.sub(" ", text).strip()


def fingerprint(error_type: str, message: str) -> str:
    """sha256(error type + "\\n" + normalised message), first 16 hex digits; "" for no error."""
    if not error_type and not message:
        return ""
    text = f"{error_type}\n{normalise_message(message)}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def status_fingerprint(error_type: str, status_message: str) -> str:
    """The fingerprint of a span that carries none: from error.type and the status message.

    The status message is ``"{error.type}: {message}"`` by OTel convention; the prefix is
    stripped, so the result equals the SDK's fingerprint of the same exception.
    """
    prefix = error_type + ": "
    if error_type and status_message.startswith(prefix):
        status_message = status_message[len(prefix) :]
    return fingerprint(error_type, status_message)


def error_type(exc: BaseException) -> str:
    """The ``error.type`` of an exception: its class's qualified name."""
    return type(exc).__qualname__


def error_fingerprint(exc: BaseException) -> str:
    """The fingerprint of an exception (see :func:`fingerprint`)."""
    return fingerprint(error_type(exc), str(exc))


def estimate_tokens(context: Mapping[str, Any]) -> int:
    """Estimate the token count of a context mapping: ceil(characters / 4) over its values.

    Strings count as is, other values by their JSON.

    >>> estimate_tokens({"doc": "x" * 10, "n": 12345})
    4
    """
    chars = 0
    for value in context.values():
        chars += len(value) if isinstance(value, str) else len(dumps(value))
    return math.ceil(chars / 4)


def bind_arguments(
    signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> dict[str, Any]:
    """Arguments by parameter name (defaults applied), without a leading ``self``/``cls``."""
    if signature is None:
        return {"args": list(args), "kwargs": dict(kwargs)} if args or kwargs else {}
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError:  # the call itself is wrong; the function will raise, record what we got
        return {"args": list(args), "kwargs": dict(kwargs)}
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    params = list(signature.parameters)
    if params and params[0] in ("self", "cls"):
        arguments.pop(params[0], None)
    return arguments


Binder: TypeAlias = Callable[[tuple[Any, ...], Mapping[str, Any]], dict[str, Any]]

_SIMPLE_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def make_binder(signature: inspect.Signature | None) -> Binder:
    """``bind_arguments`` for one signature, precomputed at decoration time.

    Signatures made only of ordinary and keyword-only parameters (the common case) are bound
    without ``inspect``: same dict, same order (parameter order, defaults applied, no leading
    ``self``/``cls``). Anything else, and any call that does not fit the signature, goes through
    :func:`bind_arguments`.
    """
    if signature is None or any(p.kind not in _SIMPLE_KINDS for p in signature.parameters.values()):
        return functools.partial(bind_arguments, signature)
    params = list(signature.parameters.values())
    names = tuple(p.name for p in params)
    name_set = frozenset(names)
    n_positional = sum(1 for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    empty = inspect.Parameter.empty
    defaults = tuple(p.default for p in params)
    drop_first = bool(names) and names[0] in ("self", "cls")
    n_names = len(names)

    def bind(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        n = len(args)
        if n > n_positional:
            return bind_arguments(signature, args, kwargs)
        arguments = dict(zip(names, args, strict=False))
        if n < n_names:
            if kwargs and (
                not name_set.issuperset(kwargs) or any(names[i] in kwargs for i in range(n))
            ):  # an unknown argument, or one given both by position and by name
                return bind_arguments(signature, args, kwargs)
            for i in range(n, n_names):
                name = names[i]
                if name in kwargs:
                    arguments[name] = kwargs[name]
                elif defaults[i] is not empty:
                    arguments[name] = defaults[i]
                else:  # a required argument is missing
                    return bind_arguments(signature, args, kwargs)
        elif kwargs:  # every parameter was given by position: any keyword is one too many
            return bind_arguments(signature, args, kwargs)
        if drop_first:
            del arguments[names[0]]
        return arguments

    return bind


def redact_mapping(
    redact: Redactor | None, kind: str, arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """Apply the user's redactor to every top-level argument."""
    if redact is None:
        return dict(arguments)
    return {key: redact(kind, key, value) for key, value in arguments.items()}
