"""Plan-propagation failure: the executors did what the plan said, and the plan was wrong.

The patterns, all blamed on the planner:

* **a wrong value, traced to where it entered**: the run failed, and the failure (the failing
  attempt's error, else the outcome check's reason) names a value that is not in the run's
  objective and that a tool call made on behalf of a plan step carried in its arguments. The
  earliest such step is where the wrong value entered the run (the planner handed it to that
  step, or to the step whose output carried it on); a value no planner handed or wrote that an
  earlier call of another step *returned* entered the run at that step (a date a lookup
  answered for the planner's wrong input, later booked). Suspects, most specific first: values
  that came in through an argument named like one of the step's ``requires`` keys; values the
  planner wrote into its plan JSON (a number or a date is traced only from there — "80" in
  "orders 80 units" names the quantity the planner wrote, a bare count in an error names
  nothing; a value of several words the planner wrote — an account number in groups — is
  named only whole; a step that is a sentence holds the planner's values in it — its codes,
  numbers, dates and quoted names — less those a tool call had returned before that plan was
  made: a re-plan that writes a result into its sentences relays it; an argument of several
  words a sentence holds whole is one the planner wrote there); any other named text value. A
  code of two characters (a letter and a digit: seat ``7C``) is as specific as a longer value.
  Values are compared normalised (``80.0`` is ``80``, ``11,850.00`` is ``11850``, a timestamp
  or ``October 14, 2026`` also stands for its ISO date; digits with a leading zero are a code,
  as written). The blamed step is that earliest carrier, whether the failure came at that
  step, at a later step that received its output, or at the final outcome check. This is data
  lineage through the tool arguments: a downstream failure caused by an earlier wrong output is
  found at its origin, not at the step that happened to fail. A number often stands for
  several quantities of one run (60 minutes, 60 replicas): among its carriers, one that got it
  under an argument the failure names ("runs 60 replicas") is that fact's carrier.
* **a wrong value, traced through outputs**: the failure names a value that the failing step's
  tool arguments carried and that an earlier step's tool *returned* (a division by zero on the
  0 a query returned), or an argument the failure names by its name ("no estimate on
  file") or by its value (an engine's number, when no earlier result recorded holds it) whose
  plan entry stands in for one earlier step's result (``"<from inspect>"``): the value came out
  of that step. With no failing step, a figure the outcome check names that a
  step's tool returned starts the lineage at the last step that returned it (a payout audit
  naming the paid amount). Going up that lineage (a step's
  arguments that carried a still earlier step's result), the first step whose arguments
  carried a value the planner wrote and the objective does not state is where the wrong value
  entered (the query's region); a number the objective states only as the value of other keys
  (a form's ``"coaches": 9``) it does not state for an argument of another name. Nothing is
  reported when every step of the lineage got only
  what the objective states (the world returned the zero), nor when each planner value that
  step got also went into a call of the same tool that returned something else (a metric that
  gave a figure for the other month did not make the zero). Tool results are read, like the
  arguments, only for failed runs.
* **a wrong value that changed form**: a step failed for good, every value the planner handed
  it is one the objective states, and its failure names numbers that none of its arguments and
  nothing in the objective hold (a deposit over a limit, computed by the world from an order):
  the world computed them from the earlier results the step carried. Of the earlier steps whose
  results its arguments carried, exactly one returned figures, and among them is a number the
  planner wrote into that step's arguments (the order's size, echoed back): the wrong value
  entered at the first step whose arguments carried that number. The objective is not
  subtracted here: a run's objective may be its planner's prompt, whose notes can carry the
  very number the planner took; what ties the number to the failure is the lineage, not its
  absence from the objective. Nothing is reported when no carried result, or several, held
  figures, or when the one that did got no number from the planner.
* **wrong plan, faithful execution**: the run's outcome is ``failure`` although every step of
  the final plan version has a successful attempt and no step's last attempt failed. The
  earliest diverging step is the first (by execution time) state-changing step — one that made a
  ``write``/``irreversible`` tool call or is marked irreversible — whose ``requires`` include a
  planner-bound fact (a key no plan step produces): that is where the planner's belief entered
  the world. When several qualify, the first one whose facts are named in the run's
  ``outcome_reason`` wins (an outcome check names what it found wrong). Fallbacks: the first
  state-changing step, then the first step. Steps that were decomposed (the ``scope`` of a
  later plan version) are judged by their sub-steps.
* **the same failed plan, re-issued**: at least ``MIN_IDENTICAL_REPLANS`` replans reproduce
  the plan they replace after the same step failed, and a configured ``max_replans`` stopped
  the loop (without a limit it is ``unbounded_replan``). Blamed step: the earliest executed
  step that requires one of the planner facts the failing step requires (where the wrong
  belief entered), else the failing step.
* **recursive re-split of the same goal** (ADaPT): a decomposition (a plan version whose
  ``scope`` is the step being split) adds a sub-step whose description is a near duplicate
  (word Jaccard ≥ :data:`SAME_GOAL_SIMILARITY` when it is the only sub-step added,
  ≥ :data:`VERBATIM_SIMILARITY` otherwise) of the step it splits, and the next decomposition
  splits that very sub-step again, at least :data:`SAME_GOAL_MIN_SPLITS` times in a chain.
  Reported at the first step that was re-split.

Failures that arrive from outside after the agent finished are not the plan's fault: when every
plan step's last attempt succeeded (an attempt whose last call of its step's own tool failed did
not, whatever its span says: a framework ends a managed agent's span well when the agent reports
the refusal as its answer) and the failure was observed after the last of them ended by
work that belongs to no plan step — a tool call outside any plan step (a status poll that
learns the airline cancelled), also one that did not fail but *answered* what the run's failure
says (every value the outcome reason names that the objective does not state is one its result
names: the app reported the world's answer as the run's failure), a separate agent run no plan
step names (a watch after the release), or an application's own plain span outside any attempt
whose failure names no value a plan step's tool calls got or returned but its own inputs
(what its name says, filled in: a transfer the bank returned, the loan a watch watched) and the
objective's values (a prose answer returns its codes and quoted names, not its words; a check
that failed saying nothing, only a status or a level, is read by the run's outcome reason: the
app reported its verdict there) —
nothing is reported, unless the check's own evidence (the inputs it was called
with, what its failure says) ties the failure to a value the planner introduced, **a check's
verdict on the plan's value**:

* a contradicted input: the failing check (a tool call outside any step, failed or answering
  the failure) was called with an argument ``k = v`` that the objective states, and a plan
  step's tool got a different value for the same argument name, written by the planner and not
  stated by the objective (a health check of the page's region after a restart in the
  runbook's) → that step;
* the plan's own measurement, still wrong: the failure names a value, none of the check's
  inputs, that a plan step's tool returned and a later step received together with a value
  the planner wrote and the objective does not state (an error rate judged against a wrong
  threshold, still there) → that receiving step; a value the call was handed and answered
  back (a booking echoing the day it was asked for) is no measurement of it: it entered with
  the call's arguments, and the next pattern reads it;
* a tool-less check: the failed agent run outside the plan failed on its own verdict (it made
  no tool call: the world did not say it — an auditor's guardrail that trips), and what it was
  given (what its LLM calls were asked) names a value the planner handed to a step that the
  objective does not state (the baseline month of the figure it audits) → the first step whose
  arguments carried it;
* the plan's value, named by the verdict: the check's failure names a value, none of its
  inputs, that the planner wrote, the objective does not state and a plan step's tool was
  handed (a check of the bench day that finds the scaffold booked for the planner's day) →
  the first step handed it.

A check that had succeeded with the same inputs after the last step and then failed saw the
world change (an incident it saw closed, re-opened), and a failure that names only the
check's inputs (the booking it polls), the objective's values or values no step saw is the
world's.

The objective is the run's; a run that declares none takes the objective its first plan states
(the plan JSON's ``objective``), else its planner's prompt (the loader); a prompt also carries
notes and earlier results — possibly the very value the planner took wrongly — so a stated
objective wins, and what a prompt states twice differently for one thing (a note's
``"key": value`` against the prose's value after the key's words, or a code of the same shape)
is not the objective's. The input an inferred run's root span recorded (an app's brief, not a
declared objective) is such a prompt too: what it states twice differently is no more the
objective's (a note overriding the order's account leaves both accounts suspects); an input
recorded as a call's JSON (traceloop-sdk's ``{"args": [...], "kwargs": {...}}``) is read with
its texts written out, so a brief's pairs are read whatever escaping recorded them. A runaway
loop, unordered concurrent writers, unbounded replanning or an irreversible action after a
failure also explain a failed run, and win over the first two patterns.

A more specific structural cause wins: when the trace has a context-starved step, a context a
scheduler lost across a switch (or, for the first pattern, unordered concurrent writers), that
finding explains the failure and plan-propagation is not reported. Runs without a plan
(ReAct) have no planner to blame and are skipped.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from planscope import safejson
from planscope import semconv as A

from .._columns import BatchColumns, trace_ids, traces_of
from .._load import _PAIRS, _covered, _pair_key, _uncontested
from .._model import PLANNER, VALUE, Attempt, Finding, PlanStep, RawSpan, ToolCall, TraceData
from ._base import by_start, make_finding
from .context_lost import ContextLost
from .context_starved import starved_steps
from .irreversible_after_failure import IrreversibleAfterFailure
from .runaway_loop import RunawayLoop, parent_step_name
from .unbounded_replan import MIN_IDENTICAL_REPLANS, UnboundedReplan, version_signature
from .write_conflict import WriteConflict

KIND = A.FINDING_PLAN_PROPAGATION
SAME_GOAL_SIMILARITY = 0.8
"""Word-set Jaccard at which a sub-goal counts as the same goal as its parent: high enough that
a genuine decomposition ("fetch the invoice" / "pay the invoice") never reaches it, low enough
to survive a reworded prefix ("Attempt: ...")."""
VERBATIM_SIMILARITY = 0.95
"""When a decomposition adds several sub-goals, one of them must restate the parent almost
verbatim to count: a genuine split of "A; B; C" into "A; B" and "C" has a sub-goal that is
most of its parent (Jaccard up to ~0.9) and is healthy."""
SAME_GOAL_MIN_SPLITS = 2
"""One same-goal split can be a retry with a different strategy; two in a chain is the planner
failing to decompose."""
_WORD = re.compile(r"[a-z0-9]+")
MIN_VALUE_CHARS = 3
"""Argument values shorter than this (``1``, ``ok``) name nothing specific enough to trace."""
Carried = tuple[ToolCall, str]
"""A tool call and the plan step it was made for."""


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_DIGIT = re.compile(r"\d")
_SPACE = re.compile(r"\s")
_ISO_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})[T ]")
_CODE = re.compile(r"-?0\d+")
"""Digits with a leading zero (``0044`` of an account number, ``00``): a code, matched as
written, not the number it would read as."""
_GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])")
"""A number with thousands separators (``11,850.00``)."""
_GROUPED_PART = re.compile(r"\d,\d{3}")
"""What every :data:`_GROUPED` match holds."""
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MONTH = r"[A-Za-z]{3,9}\.?"
_WRITTEN_DATE = re.compile(
    rf"(?<!\w)(?:(?P<d1>\d{{1,2}})\s+(?P<m1>{_MONTH}),?\s+(?P<y1>\d{{4}})"
    rf"|(?P<m2>{_MONTH})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}})"
    r"|(?P<y3>\d{4})/(?P<m3>\d{1,2})/(?P<d3>\d{1,2}))(?!\w)"
)
"""A date with a month name (``October 14, 2026``, ``14 Oct 2026``) or year-first slashes
(``2026/10/14``); day- or month-first slashes are ambiguous and not read."""
_SPACED_YEAR = re.compile(r"\s\d{4}")
_SLASHED_YEAR = re.compile(r"\d{4}/\d")
"""What every :data:`_WRITTEN_DATE` match holds: its year after a space (a month name's or a
day's date), else its year, a slash and a digit (year first). Most texts with a number have
neither, and the date's own pattern is slow to rule out at every offset of a long text."""


def _iso_date(m: re.Match[str]) -> str | None:
    """The ISO date a :data:`_WRITTEN_DATE` match stands for, None when it is no date."""
    i = next(i for i in (1, 2, 3) if m.group(f"y{i}"))
    year, month, day = m.group(f"y{i}"), m.group(f"m{i}"), m.group(f"d{i}")
    name = month.rstrip(".").lower()
    number = (
        int(month)
        if month.isdigit()
        else next((n for n, full in enumerate(_MONTHS, 1) if full.startswith(name)), 0)
        if len(name) >= 3
        else 0
    )
    if not 1 <= number <= 12 or not 1 <= int(day) <= 31:
        return None
    return f"{year}-{number:02d}-{int(day):02d}"


_MAX_PHRASE = 80
"""Longest argument value of several words looked for in a plan's sentences (a name, an
address; a longer text is a message, not a value a sentence names)."""


def _scalars(value: Any) -> list[str]:
    """Every string and number leaf of a decoded JSON value (numbers as their text); a string
    that is itself a JSON object or array (a tool message's content inside a framework's
    message envelope) or a Python literal of one is decoded too.

    >>> _scalars({"a": ["x", 2, True], "b": '{"c": 1.5}'})
    ['x', '2', '1.5']
    """
    out: list[str] = []
    _collect_scalars(value, out)
    return out


def _collect_scalars(value: Any, out: list[str]) -> None:
    # one list filled by plain recursion: nested generators cost a frame per leaf and level
    if isinstance(value, str):
        if value[:1] in ("{", "["):
            decoded = _nested(value)
            if decoded is not _INVALID:
                _collect_scalars(decoded, out)
                return
        out.append(value)
    elif isinstance(value, bool):
        return
    elif isinstance(value, (int, float)):
        out.append(str(value))
    elif isinstance(value, dict):
        for v in value.values():
            _collect_scalars(v, out)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect_scalars(v, out)


_BARE_NAME = re.compile(
    r"(?<![\w.])(?!(?:True|False|None|set|true|false|null|NaN|Infinity)\b)[A-Za-z_]\w*"
)
"""A name outside any string that neither JSON (``true``, ``NaN``) nor a Python literal
(``None``, ``set()``) has: a text with one and no quote or comment (``{locate_source}``, a
template's ``{{ hold_dates }}``) is neither."""


def _nested(text: str) -> Any:
    """``safejson.loads_or_literal`` of a string inside a decoded value, ``_INVALID`` when it
    is neither JSON nor a literal; a template (:data:`_BARE_NAME`) is not tried: a failed
    decode and a literal's parse cost more than the look.

    >>> _nested('{"a": [1]}'), _nested("{'a': None}"), _nested("{locate_source}") is _INVALID
    ({'a': [1]}, {'a': None}, True)
    """
    if _BARE_NAME.search(text) and not any(mark in text for mark in "\"'#"):
        return _INVALID
    try:
        return safejson.loads_or_literal(text)
    except ValueError:
        return _INVALID


def _named(value: Any, name: str) -> Iterator[tuple[str, Any]]:
    """(argument name, value) pairs of decoded arguments, each value under the innermost key
    that holds it: an envelope around the arguments (``{"kwargs": {"po": ...}}``, a string
    holding a dict) does not hide their names."""
    if isinstance(value, str) and value[:1] == "{":
        decoded = _nested(value)
        value = value if decoded is _INVALID else decoded
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _named(v, str(k))
    elif isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
        for v in value:
            yield from _named(v, name)
    else:
        yield name, value


def forms(value: str) -> set[str]:
    """The normalised forms a value is matched by: itself, a number's canonical text (``80.0``
    is ``80``), the date of an ISO timestamp (``2026-03-20T08:00`` is also ``2026-03-20``).

    >>> sorted(forms("2026-03-20T08:00")), sorted(forms("80.0")), sorted(forms("0044"))
    (['2026-03-20', '2026-03-20T08:00'], ['80', '80.0'], ['0044'])
    >>> sorted(forms("11,850.00")), sorted(forms("Oct 14, 2026"))
    (['11,850.00', '11850', '11850.00'], ['2026-10-14', 'Oct 14, 2026'])
    """
    out = {value}
    if _DIGIT.search(value) is None:  # every other form below has a digit
        return out
    # each form below starts with a digit or a sign, or (a written date) has a space
    if not value[:1].isdigit() and value[:1] != "-" and _SPACE.search(value) is None:
        return out
    if is_number(value) and not _CODE.fullmatch(value):
        number = float(value)
        out.add(str(int(number)) if number.is_integer() else str(number))
    elif m := _ISO_DATE.match(value):
        out.add(m.group(1))
    elif _GROUPED.fullmatch(value):
        out |= forms(value.replace(",", ""))
    elif (m := _WRITTEN_DATE.fullmatch(value)) and (iso := _iso_date(m)):
        out.add(iso)
    return out


Known = dict[str, set[str]]
"""The forms (:func:`forms`) of the values one trace's texts hold, worked out once per trace
(:class:`_Values`: its values recur from argument to result to failure); read-only."""


def _all_forms(values: Iterable[str], known: Known | None = None) -> set[str]:
    """Every form (:func:`forms`) of each of ``values``; ``known``: those already worked out.

    >>> sorted(_all_forms(["80.0", "Lyon", "Lyon"]))
    ['80', '80.0', 'Lyon']
    """
    out = set(values)
    # most values are words, their own only form: only those with a digit are read (in C)
    for value in list(filter(_DIGIT.search, out)):
        if known is None:
            out |= forms(value)
            continue
        found = known.get(value)
        if found is None:
            found = known[value] = forms(value)
        out |= found
    return out


def is_number(value: str) -> bool:
    """A bare number (``80``, ``7.5``): it names something only where the planner wrote it.

    >>> is_number("80"), is_number("LYS-2")
    (True, False)
    """
    return _NUMBER.fullmatch(value) is not None


def _traceable(value: str) -> bool:
    """Specific enough to trace through the run: a number, at least ``MIN_VALUE_CHARS``, or a
    shorter code (a letter and a digit: a bay, seat or shelf ``B7``; ``ok`` names nothing).

    >>> _traceable("B7"), _traceable("7"), _traceable("ok"), _traceable("Lyon")
    (True, True, False, True)
    """
    return (
        len(value) >= MIN_VALUE_CHARS
        or is_number(value)
        or (_DIGIT.search(value) is not None and any(c.isalpha() for c in value))
    )


def text_values(text: str, known: Known | None = None) -> set[str]:
    """The values a text names (identifiers, numbers, dates), in their normalised forms.

    >>> sorted(text_values("orders 80 units delivered 2026-03-20"))
    ['2026-03-20', '80', 'delivered', 'orders', 'units']
    >>> sorted(text_values("paid $11,850.00 on Oct 14, 2026") & {"11850", "2026-10-14"})
    ['11850', '2026-10-14']
    """
    out = _all_forms(VALUE.findall(text), known)
    # a number or a date written for people spans several tokens: it is also its plain form
    # (each has a part that a fast scan finds, or the text has none: most texts)
    grouped = _GROUPED.finditer(text) if _GROUPED_PART.search(text) else ()
    written = (
        _WRITTEN_DATE.finditer(text)
        if _SPACED_YEAR.search(text) or ("/" in text and _SLASHED_YEAR.search(text))
        else ()
    )
    for m in itertools.chain(grouped, written):
        out |= forms(m.group(0))
    return out


_QUOTED = re.compile(r'"([^"\n]{3,80})"|“([^”\n]{3,80})”')
"""A name a sentence quotes (double or typographic quotes: an apostrophe quotes nothing)."""


def sentence_values(text: str, known: Known | None = None) -> set[str]:
    """The values a sentence of a plan names, normalised: its codes (a token with a digit, or
    in capitals: an identifier, a number, a date) and the names it quotes; its words are no
    values (a plan of sentences writes its values into them).

    >>> sorted(sentence_values('Ship order PO-7 to "Quai Nord" by 14 Oct 2026, via DHL.'))
    ['14', '14 Oct 2026', '2026', '2026-10-14', 'DHL', 'PO-7', 'Quai Nord']
    """
    codes = {
        v
        for v in text_values(text, known)
        if _DIGIT.search(v) or (v.upper() == v and sum(ch.isalpha() for ch in v) > 1)
    }
    return codes | {a or b for a, b in _QUOTED.findall(text)}


@dataclass
class _Values:
    """What plan propagation reads of one trace's texts (its tool calls' arguments and results,
    the texts they and the failures name, its objective, its plans), each worked out once per
    trace: several patterns, and candidates within one, read the same. Kept in the trace's
    ``_memo`` (see :func:`_values`), so dropped with the trace (it holds the texts it reads,
    not the trace: no reference cycle outlives a batch); read-only to callers."""

    objective: str
    plan_texts: list[str]
    plan_starts: list[int]
    """When each of ``plan_texts`` was made (ns)."""
    returned: list[tuple[int, str]]
    """(end, result) of the run's tool calls that returned something."""
    called_with: list[str] = field(default_factory=list)
    """The captured arguments of the run's tool calls."""
    _decoded: dict[str, Any] = field(default_factory=dict)
    _forms: Known = field(default_factory=dict)
    _arguments: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    _leaves: dict[str, list[str]] = field(default_factory=dict)
    _results: dict[str, set[str]] = field(default_factory=dict)
    _stated: dict[str, set[str]] = field(default_factory=dict)
    _texts: dict[str, set[str]] = field(default_factory=dict)
    _sentences: dict[str, set[str]] = field(default_factory=dict)
    _entered: dict[str, set[str]] = field(default_factory=dict)
    _plans: tuple[list[Any], list[Any]] | None = None
    _written: set[str] | None = None
    _said: set[str] | None = None
    _keyed: dict[str, set[str]] | None = None

    def decoded(self, text: str) -> Any:
        """``safejson.loads_or_literal`` of a captured argument or result text (``_INVALID``
        when it is neither JSON nor a literal, None for no text): each text of the run is
        decoded once, for every value read from it."""
        found = self._decoded.get(text, _UNSEEN)
        if found is _UNSEEN:
            try:
                found = safejson.loads_or_literal(text) if text else None
            except ValueError:
                found = _INVALID
            self._decoded[text] = found
        return found

    def arguments(self, text: str) -> dict[str, set[str]]:
        """:func:`argument_values`."""
        found = self._arguments.get(text)
        if found is None:
            found = self._arguments[text] = _argument_values(self.decoded(text), self._forms)
        return found

    def leaves(self, text: str) -> list[str]:
        """:func:`argument_leaves`."""
        found = self._leaves.get(text)
        if found is None:
            decoded = self.decoded(text)
            found = self._leaves[text] = [] if decoded is _INVALID else _scalars(decoded)
        return found

    def results(self, text: str) -> set[str]:
        """:func:`result_values`."""
        found = self._results.get(text)
        if found is None:
            found = self._results[text] = _result_values(
                text, self.decoded(text), True, self._forms
            )
        return found

    def stated_results(self, text: str) -> set[str]:
        """:func:`result_values` without the words of a result in prose."""
        found = self._stated.get(text)
        if found is None:
            found = self._stated[text] = _result_values(
                text, self.decoded(text), False, self._forms
            )
        return found

    def text(self, text: str) -> set[str]:
        """:func:`text_values`."""
        found = self._texts.get(text)
        if found is None:
            found = self._texts[text] = text_values(text, self._forms)
        return found

    def sentence(self, text: str) -> set[str]:
        """:func:`sentence_values` (a re-plan repeats most of its plan's sentences)."""
        found = self._sentences.get(text)
        if found is None:
            found = self._sentences[text] = sentence_values(text, self._forms)
        return found

    @property
    def plans(self) -> list[Any]:
        """The run's plans as decoded JSON, in load order; plans whose JSON is invalid are
        skipped (``data_quality`` reports them)."""
        return self._decoded_plans()[0]

    def _decoded_plans(self) -> tuple[list[Any], list[tuple[Any, int]]]:
        """:attr:`plans`, and the distinct ones with when each was first made: a replan that
        repeats a plan's JSON is decoded and read once."""
        if self._plans is None:
            decoded: dict[str, tuple[Any, int]] = {}
            for text, start in zip(self.plan_texts, self.plan_starts, strict=True):
                if text in decoded:
                    decoded[text] = (decoded[text][0], min(start, decoded[text][1]))
                    continue
                try:
                    decoded[text] = (safejson.loads(text) if text else None, start)
                except ValueError:
                    decoded[text] = (_INVALID, start)
            in_order = [decoded[text][0] for text in self.plan_texts]
            self._plans = (
                [d for d in in_order if d is not _INVALID],
                [d for d in decoded.values() if d[0] is not _INVALID],
            )
        return self._plans

    @property
    def written(self) -> set[str]:
        """Every value the planner wrote into a plan of the run (string and number leaves of
        the plan JSON, and the values a leaf that is a sentence names (:func:`sentence_values`)
        that no tool call had returned before that plan was made: a re-plan that writes an
        earlier result into its sentences relays it), normalised; empty when the plan JSON was
        not loaded."""
        if self._written is None:
            written: set[str] = set()
            phrases: set[str] | None = None  # read once, for the first plan with sentences
            for decoded, start in self._decoded_plans()[1]:
                leaves: list[str] = []
                _collect_scalars(decoded, leaves)
                written |= _all_forms(leaves, self._forms)
                sentences = [leaf for leaf in leaves if " " in leaf.strip()]
                if not sentences:
                    continue
                phrases = self._phrases() if phrases is None else phrases
                named = {v for leaf in sentences for v in self.sentence(leaf)}
                named |= named_whole(phrases, "\n".join(sentences))
                if named:
                    earlier = (r for end, r in self.returned if end <= start)
                    written |= named - {v for r in earlier for v in self.results(r)}
            self._written = written
        return self._written

    def _phrases(self) -> set[str]:
        """The argument values of several words (a name, an address) the run's tool calls got:
        one a plan's sentence holds whole is a value the planner wrote into it, which the
        executor took from there (its plain words are no values)."""
        return {
            leaf.strip()
            for text in self.called_with
            for leaf in self.leaves(text)
            if len(leaf.split()) > 1 and len(leaf) <= _MAX_PHRASE
        }

    @property
    def said(self) -> set[str]:
        """The values the run's objective states."""
        if self._said is None:
            self._said = self.text(self.objective)
        return self._said

    @property
    def keyed(self) -> dict[str, set[str]]:
        """The numbers the objective states only as the values of keyed pairs (``"coaches":
        9``), each with those keys (normalised: ``_pair_key``): such a number states those
        quantities, not another argument's that happens to hold it."""
        if self._keyed is None:
            keyed: dict[str, set[str]] = {}
            spans: list[tuple[int, int]] = []
            for pattern in _PAIRS:
                for m in pattern.finditer(self.objective):
                    spans.append(m.span())
                    value = m.group("value").strip("\"' ,")
                    if is_number(value):
                        for f in forms(value):
                            keyed.setdefault(f, set()).add(_pair_key(m.group("key")))
            inside = _covered(spans)
            for t in VALUE.finditer(self.objective) if keyed else ():
                if not inside(t.start()):  # the prose states it too: for whatever it is
                    for f in forms(t.group(0)):
                        keyed.pop(f, None)
            self._keyed = keyed
        return self._keyed

    def entered(self, call: ToolCall) -> set[str]:
        """The values of a call's arguments that the planner wrote (a whole argument leaf of
        the plan JSON) and the objective does not state for that argument (a number it states
        only under other keys, :attr:`keyed`, it does not state for this one)."""
        found = self._entered.get(call.span_id)
        if found is None:
            written, said, keyed = self.written, self.said, self.keyed
            decoded = self.decoded(call.arguments)
            named = [] if decoded is _INVALID or decoded is None else _named(decoded, "")
            found = self._entered[call.span_id] = set()
            for name, value in named:
                own = _pair_key(name)
                for leaf in _scalars(value):
                    if not _all_forms((leaf,), self._forms) & written:
                        continue
                    for v in filter(_traceable, self.text(leaf)):
                        # an unnamed value is stated by whatever key states it
                        if v not in said or (name and own not in keyed.get(v, {own})):
                            found.add(v)
        return found


_INVALID = object()
"""A plan whose JSON is invalid (:attr:`_Values.plans`), a text that decodes to nothing
(:meth:`_Values.decoded`)."""
_UNSEEN = object()
"""A text not decoded yet (:meth:`_Values.decoded`: None is the value of no text)."""


def _marked(value: Any, texts: list[str]) -> Any:
    """``value`` with each text holding a line break or a double quote replaced by a marker
    string (its index in ``texts``, where it is appended), put back raw by :func:`_unescaped`
    once the rest is JSON again. A module function, not a recursive closure: a closure that
    calls itself is a reference cycle per call, left for the cyclic collector (paused during a
    pass).

    >>> texts = []
    >>> _marked({"a": ["x\\ny", 1]}, texts), texts
    ({'a': ['\\x000', 1]}, ['x\\ny'])
    """
    if isinstance(value, dict):
        return {k: _marked(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(v, texts) for v in value]
    if isinstance(value, str) and ("\n" in value or '"' in value):
        texts.append(value)
        return f"\0{len(texts) - 1}"
    return value


def _unescaped(recorded: str) -> str:
    r"""A recorded input that is a JSON document with the texts in it written out as they were
    given: a root span's input recorded as a call's JSON (traceloop-sdk's ``{"args": [...],
    "kwargs": {...}}``) holds its brief as one escaped string, whose own pairs (``\"key\":
    \"value\"``) no pair pattern reads; a string with a line break or a double quote is such a
    text. Anything else is returned as recorded.

    >>> print(_unescaped('{"args": ["Ship to Leeds.\\nNotes: {\\"city\\": \\"York\\"}"], "n": 2}'))
    {"args": [
    Ship to Leeds.
    Notes: {"city": "York"}
    ], "n": 2}
    >>> _unescaped('{"args": ["Ship to Leeds."]}')
    '{"args": ["Ship to Leeds."]}'
    """
    if not recorded.startswith(("{", "[")):
        return recorded
    try:
        document = safejson.loads(recorded)
    except ValueError:
        return recorded
    texts: list[str] = []
    document = _marked(document, texts)
    if not texts:
        return recorded
    out = json.dumps(document, ensure_ascii=False)
    for i, text in enumerate(texts):
        out = out.replace(json.dumps(f"\0{i}"), f"\n{text}\n", 1)
    return out


def _values(trace: TraceData) -> _Values:
    """The trace's :class:`_Values`, made on first use."""
    found: _Values | None = trace._memo.get("plan_propagation_values")
    if found is None:
        run = trace.run
        objective = run.objective if run is not None else ""
        if run is not None:
            # an objective may carry notes that override its facts (a form and a note that
            # changes one of its values): which was asked for it does not say, so neither is
            # stated. An inferred run's is a text it was given (its root span's input, else its
            # planner's prompt), recorded as JSON.
            objective = _uncontested(_unescaped(objective) if run.inferred else objective)
        found = trace._memo["plan_propagation_values"] = _Values(
            objective,
            [p.json for p in trace.plans],
            [p.start_ns for p in trace.plans],
            [(c.end_ns, c.result) for c in trace.tools if c.result],
            [c.arguments for c in trace.tools if c.arguments],
        )
    return found


def _entries(value: Any, step_ids: set[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(step id, the object) of every JSON object in a plan that has a step id as one of its
    values."""
    if isinstance(value, dict):
        # dict.fromkeys: a tool named like its step is one step id, not two
        own = list(dict.fromkeys(v for v in value.values() if isinstance(v, str) and v in step_ids))
        if len(own) == 1:
            yield own[0], value
        for v in value.values():
            yield from _entries(v, step_ids)
    elif isinstance(value, list):
        for v in value:
            yield from _entries(v, step_ids)


def _references(leaf: str, step_ids: set[str]) -> set[str]:
    """The step ids a plan entry's string names inside a longer text (``"{locate_source}"``,
    ``"<from order_inspection>"``), not as the whole string (a dependency list's name)."""
    # the substring test first: a pattern per step id, most leaves hold none
    return {
        other
        for other in step_ids
        if leaf != other
        and other in leaf
        and re.search(rf"(?<![\w-]){re.escape(other)}(?![\w-])", leaf)
    }


def _plan_reference(trace: TraceData, step_id: str, name: str) -> str | None:
    """The one other plan step whose result the plan's entry of ``step_id`` puts into its
    argument ``name`` (``"estimate": "<from order_inspection>"``); None when none or several."""
    step_ids = {s.step_id for s in trace.plan_steps}
    refs = {
        other
        for decoded in _values(trace).plans
        for own, entry in _entries(decoded, step_ids)
        if own == step_id
        for key, value in _named(entry, "")
        if key == name
        for leaf in _scalars(value)
        for other in _references(leaf, step_ids - {step_id})
    }
    return next(iter(refs)) if len(refs) == 1 else None


def _last_call(on_behalf: list[Carried], step_id: str, before_ns: int) -> Carried | None:
    """The last call of a step that ended before ``before_ns`` and did not fail: what the step
    handed on."""
    return next(
        (
            (c, s)
            for c, s in reversed(on_behalf)
            if s == step_id and not c.failed and c.end_ns <= before_ns
        ),
        None,
    )


def _referenced_step(trace: TraceData, step_id: str, values: set[str]) -> str | None:
    """The one other plan step whose result the plan entry of ``step_id`` stands in for: a
    string of the entry that names that step inside a longer text (``"{locate_source}"``, not
    a dependency list's bare ``"locate_source"``); of several, the one whose tool returned one
    of ``values``; None when none or several."""
    step_ids = {s.step_id for s in trace.plan_steps}
    memo = _values(trace)
    refs: set[str] = set()
    for decoded in memo.plans:
        for own, entry in _entries(decoded, step_ids):
            if own == step_id:
                for leaf in _scalars(entry):
                    refs |= _references(leaf, step_ids - {step_id})
    if len(refs) > 1:
        refs = {
            c.step_id
            for c in trace.tools
            if c.step_id in refs and not c.failed and memo.results(c.result) & values
        }
    return next(iter(refs)) if len(refs) == 1 else None


def _returned_by(
    trace: TraceData, call: ToolCall, step_id: str, values: set[str]
) -> Carried | None:
    """The first call (and its plan step), of another step than ``step_id``, that ended before
    ``call`` started and returned one of ``values``: they came out of that step (a date a
    lookup answered, later booked); None when no such call.

    >>> _returned_by(TraceData("p", "t"), ToolCall("s", "", "", 0, "", 0, "t", "", "", "", "",
    ...     "Ok", 0, 1), "book", {"2027-06-09"}) is None
    True
    """
    memo = _values(trace)
    return next(
        (
            (c, step)
            for c, step in PlanPropagation._on_behalf(trace)
            if step != step_id
            and c.end_ns <= call.start_ns
            and not c.failed
            and memo.results(c.result) & values
        ),
        None,
    )


def argument_values(arguments: str) -> dict[str, set[str]]:
    """The values of a tool call's captured arguments (JSON, or a Python literal), by argument
    name (the innermost key holding them): strings of at least ``MIN_VALUE_CHARS`` and
    numbers, in their normalised forms (:func:`forms`).

    >>> argument_values('{"city": "Lyon", "dates": ["2026-05-04"], "n": 3, "ok": true}')
    {'city': {'Lyon'}, 'dates': {'2026-05-04'}, 'n': {'3'}}
    >>> argument_values('{"args": [], "kwargs": {"po": "PO-1f2e3"}}')
    {'po': {'PO-1f2e3'}}
    """
    try:
        decoded = safejson.loads_or_literal(arguments) if arguments else None
    except ValueError:
        return {}
    return _argument_values(decoded)


def _argument_values(decoded: Any, known: Known | None = None) -> dict[str, set[str]]:
    """:func:`argument_values` of the decoded arguments (``_INVALID``: none); ``known``: the
    forms already worked out."""
    if not isinstance(decoded, dict):
        return {}
    out: dict[str, set[str]] = {}
    for name, value in _named(decoded, ""):
        found = _all_forms(filter(_traceable, _scalars(value)), known)
        if found:
            out.setdefault(name, set()).update(found)
    return out


def argument_leaves(arguments: str) -> list[str]:
    """The string and number leaves of a tool call's captured JSON arguments.

    >>> argument_leaves('{"region": "EU-West", "months": ["2026-10"], "n": 3}')
    ['EU-West', '2026-10', '3']
    """
    try:
        return list(_scalars(safejson.loads_or_literal(arguments))) if arguments else []
    except ValueError:
        return []


def result_values(result: str, *, words: bool = True) -> set[str]:
    """The values a tool call returned: the number leaves and the string leaves of at least
    ``MIN_VALUE_CHARS`` of its captured JSON result, normalised (:func:`forms`); a result that
    is not JSON: the values its text names, or with ``words=False`` only its codes and quoted
    names (:func:`sentence_values`: the words of a sentence are no values).

    >>> sorted(result_values('{"state": "DONE", "value": 0.0, "ok": true}'))
    ['0', '0.0', 'DONE']
    >>> import json
    >>> sorted(result_values(json.dumps({"msg": {"content": json.dumps({"id": "INC-7"})}})))
    ['INC-7']
    >>> sorted(result_values("Agent clerk now handles the order PO-7", words=False))
    ['PO-7']
    """
    try:
        decoded = safejson.loads_or_literal(result) if result else None
    except ValueError:
        decoded = _INVALID
    return _result_values(result, decoded, words)


def _result_values(result: str, decoded: Any, words: bool, known: Known | None = None) -> set[str]:
    """:func:`result_values` of ``result`` decoded (``_INVALID``: not JSON); ``known``: the
    forms already worked out."""
    if decoded is _INVALID:
        if not words:
            return sentence_values(result, known)
        return {v for v in text_values(result, known) if _traceable(v)}
    return _all_forms(filter(_traceable, _scalars(decoded)), known)


def named_argument(text: str, by_name: dict[str, set[str]], values: set[str]) -> bool:
    """A number among ``values`` came in through an argument (``by_name``: a call's
    :func:`argument_values`) whose name ``text`` says (``replicas`` in "runs 60 replicas";
    ``max_surge`` as "max surge").

    >>> both = argument_values('{"minutes": 60, "replicas": 60}')
    >>> named_argument("runs 60 replicas", both, {"60"})
    True
    >>> named_argument("runs 60 replicas", argument_values('{"minutes": 60}'), {"60"})
    False
    """
    return any(
        vs & values and any(is_number(v) for v in vs & values) and names_argument(text, name)
        for name, vs in by_name.items()
    )


def names_argument(text: str, name: str) -> bool:
    """``text`` says an argument's name, whole words, underscores as spaces (``max_surge`` as
    "max surge"); a name of fewer than ``MIN_VALUE_CHARS`` characters names nothing.

    >>> names_argument("no inspection estimate on file", "estimate")
    True
    >>> names_argument("no estimates", "estimate"), names_argument("up to 3", "to")
    (False, False)
    """
    words = " ".join(_WORD.findall(name.lower().replace("_", " ")))
    if len(words) < MIN_VALUE_CHARS:
        return False
    said = " ".join(_WORD.findall(text.lower().replace("_", " ")))
    return re.search(rf"\b{re.escape(words)}\b", said) is not None


def named_whole(values: Iterable[str], text: str) -> set[str]:
    """The values of several words (an account number written in groups, an address) that
    ``text`` contains whole, on word boundaries: such a value is named only whole, its parts
    alone name nothing.

    >>> sorted(named_whole({"DE44 5001 0517", "5001", "Lyon"}, "account DE44 5001 0517 closed"))
    ['DE44 5001 0517']
    """
    # the substring test first: a pattern per value, most texts hold none of them
    return {
        v
        for v in values
        if v in text and len(v.split()) > 1 and re.search(rf"(?<!\w){re.escape(v)}(?!\w)", text)
    }


def _listed(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in sorted(values)[:3])


def _plain_check_failed(trace: TraceData, finished: int) -> bool:
    """A span outside the typed ones (``raw``: an application's plain OTel span), started
    after the last plan step ended and inside no attempt, failed, and what its failure says
    names no value a plan step's tool calls got or returned, other than the check's own inputs
    (what its name says, filled in: ``watch loan LN-88`` watched LN-88) and the objective's
    values (the date the user asked for, which every step was handed): the world told the
    app's own check (a transfer returned by the bank, the loan it watched recalled). As for a
    check that is a tool call, a value the objective states is no value the planner
    introduced. A result in prose (a framework's "Agent X is now handling the request") returned
    its codes and quoted names, not its words: a word the failure shares with it ("the") ties
    nothing. A check naming a value it was not given (a release check naming the deployed tag)
    judged the plan's work: the other patterns read it. A check that failed saying nothing (an
    error status or level, no description) is read by the run's outcome reason, the only
    account of its verdict. A check that failed after another check of the same sequence
    passed (:func:`_passed_before`) failed on a world that changed after the work was found
    good, whatever it names."""
    if not trace.raw:
        return False
    typed = trace.typed_span_ids()
    attempts = {a.span_id for a in trace.attempts}
    parents = {r.span_id: r.parent_span_id for r in trace.raw}

    def in_attempt(span_id: str) -> bool:
        visited: set[str] = set()
        while span_id and span_id not in visited:
            if span_id in attempts:
                return True
            visited.add(span_id)
            span_id = parents.get(span_id, "")
        return False

    checks = [
        r
        for r in trace.raw
        if r.status_code == A.SPAN_STATUS_ERROR
        and r.span_id not in typed
        and r.start_ns >= finished
        and not in_attempt(r.parent_span_id)
    ]
    if any(_passed_before(trace, r, finished, in_attempt) for r in checks):
        return True
    memo = _values(trace)
    # a silent check: the app reported its verdict as the run's outcome reason
    reason = trace.run.outcome_reason if trace.run else ""
    # the values each check names, dropped once a plan step's call got or returned one of them
    # (read call by call: the first calls usually tie them all)
    pending = [
        {v for v in memo.text(r.message or reason) if _traceable(v)}
        - memo.text(r.title or r.name)
        - memo.said
        for r in checks
    ]
    if not pending or not all(pending):
        return bool(pending)
    for call, _ in PlanPropagation._on_behalf(trace):
        got = memo.arguments(call.arguments).values()
        pending = [n for n in pending if not any(n & vs for vs in got)]
        pending = [n for n in pending if not n & memo.stated_results(call.result)]
        if not pending:
            return False
    return True


def _passed_before(
    trace: TraceData, check: RawSpan, finished: int, in_attempt: Callable[[str], bool]
) -> bool:
    """Another of the application's plain spans, a sibling of the failed ``check`` (the same
    parent: one sequence of checks) started after the last plan step ended (``finished``),
    outside every attempt, ended without an error before ``check`` started: the work was
    checked and found good once all of it was done, so what ``check`` found wrong happened
    after (the world changed after success). The first check of a sequence has none: its
    verdict is on the work as the plan left it. A span whose name recurs among its siblings is
    traffic, not a verdict (a runtime's message deliveries, AutoGen's ``autogen publish ...``
    under the team's span): a check is named once in its sequence.

    >>> c = RawSpan("c", "r", "watch", A.SPAN_STATUS_ERROR, "", 5, 6)
    >>> t = TraceData("p", "t", raw=[RawSpan("b", "r", "check", "Unset", "", 3, 4), c])
    >>> _passed_before(t, c, 2, lambda s: False), _passed_before(t, c, 4, lambda s: False)
    (True, False)
    >>> sent = [RawSpan(i, "r", "publish", "Unset", "", n, n + 1) for i, n in (("m", 1), ("n", 3))]
    >>> _passed_before(TraceData("p", "t", raw=[*sent, c]), c, 2, lambda s: False)
    False
    """
    typed = trace.typed_span_ids()
    raw = trace.raw or ()
    names = Counter(r.name for r in raw if r.parent_span_id == check.parent_span_id)
    return any(
        r.span_id != check.span_id
        and r.span_id not in typed
        and r.parent_span_id == check.parent_span_id
        and names[r.name] == 1
        and r.status_code != A.SPAN_STATUS_ERROR
        and finished <= r.start_ns
        and r.end_ns <= check.start_ns
        and not in_attempt(r.parent_span_id)
        for r in raw
    )


def _failure_text(trace: TraceData, attempt: Attempt) -> str:
    """What a failed attempt's failure says: its message, then the result of its last failed
    call when that is text the message does not hold. A framework that catches a tool's error
    hands the model the error's text as the call's result and may end the call's span with a
    status that only says the tool failed (the OpenAI Agents SDK's ``Error running tool
    (non-fatal)``, under MLflow's tracing): the world's words are in the result.

    >>> a = Attempt("a", "", "", 0, "s", 1, "error", "", "", "", (), 0, "", 0, "", 0, 1,
    ...     message="Error running tool (non-fatal)")
    >>> t = TraceData("p", "t", attempts=[a], tools=[ToolCall("c", "a", "", 0, "s", 1, "pay",
    ...     "", "", "", "", "Error", 0, 1, result="Refused: no account PZL-0341")])
    >>> _failure_text(t, a)
    'Error running tool (non-fatal): Refused: no account PZL-0341'
    """
    message = attempt.message
    failed = [c for c in trace.tools_of(attempt) if c.failed]
    said = max(failed, key=lambda c: c.start_ns).result.strip() if failed else ""
    if not said or said in message:
        return message
    return f"{message}: {said}" if message else said


def _refused(trace: TraceData, attempt: Attempt) -> bool:
    """The last call ``attempt`` made of its plan step's tool failed: the step did not get its
    work done, whatever the attempt's own span says (an agent framework ends an agent's span
    well when the agent reports the refusal as its answer, and its manager stops on it).

    >>> _refused(TraceData("p", "t"), Attempt("a", "", "", 0, "s", 1, "ok", "", "", "", (), 0,
    ...     "", 0, "", 0, 1))
    False
    """
    index: tuple[dict[str, set[str]], dict[tuple[str, int], list[ToolCall]]] | None = (
        trace._memo.get("refused_index")
    )
    if index is None:
        # one pass over the trace's calls and steps, not one per attempt asked about
        tools: dict[str, set[str]] = {}
        for s in trace.plan_steps:
            if s.tool:
                tools.setdefault(s.step_id, set()).add(s.tool)
        by_attempt: dict[tuple[str, int], list[ToolCall]] = {}
        for t in trace.tools:
            by_attempt.setdefault((t.step_id, t.attempt), []).append(t)
        index = trace._memo["refused_index"] = (tools, by_attempt)
    step_tools = index[0].get(attempt.step_id, set())
    calls = [
        t for t in index[1].get((attempt.step_id, attempt.attempt), ()) if t.tool in step_tools
    ]
    return bool(calls) and max(calls, key=lambda t: t.start_ns).failed


def _saw_the_failure(trace: TraceData, call: ToolCall) -> bool:
    """``call`` (a check after the plan) failed, or did not fail but answered what the run's
    failure says: every value the outcome reason names that the objective does not state is one
    its captured result names (an app that polled the world after its plan and reported the
    answer as the run's failure).

    >>> _saw_the_failure(TraceData("p", "t"), ToolCall("s", "", "", 0, "", 0, "t", "", "", "",
    ...     "", "Ok", 0, 1))
    False
    """
    if call.failed:
        return True
    run = trace.run
    if run is None or not call.result:
        return False
    memo = _values(trace)
    named = {v for v in memo.text(run.outcome_reason) if _traceable(v)} - memo.said
    return bool(named) and named <= memo.text(call.result)


def _tail(text: str, width: int = 120) -> str:
    """The end of a long error text: frameworks wrap what the world said, which comes last."""
    return text if len(text) <= width else "…" + text[-width:]


def similarity(a: str, b: str) -> float:
    """Word-set Jaccard similarity of two descriptions (0 when either is empty).

    >>> similarity("Publish every draft", "publish every draft")
    1.0
    """
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)


class PlanPropagation:
    """Detects plan-propagation failures (see the module docstring).

    >>> PlanPropagation().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 30

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with plan steps and a failed run or a scoped plan version (what
        the patterns below need: a failed run, or a re-split goal)."""
        import pyarrow.compute as pc

        runs, plans = batch.runs, batch.plans
        out: set[str] = set()
        if runs is not None:
            out |= trace_ids(runs, pc.equal(runs.column("outcome"), A.OUTCOME_FAILURE))
        if plans is not None:
            out |= trace_ids(plans, pc.not_equal(plans.column("scope"), ""))
        return out & traces_of(batch.plan_steps)

    def detect(self, trace: TraceData) -> list[Finding]:
        if not trace.plan_steps:
            return []
        starved = starved_steps(trace) | {f.step_id for f in ContextLost().detect(trace)}
        findings = []
        f = self._same_goal(trace, starved)
        if f is not None:
            findings.append(f)
        run = trace.run
        failed = run is not None and run.outcome == A.OUTCOME_FAILURE
        # Every pattern below needs a failed run (most runs are not: a cheap exit).
        if failed and not starved:
            if self._external_after_success(trace):
                # every step succeeded, then work outside the plan failed: the world's doing
                # (nothing to report) unless it was a check's verdict on a value of the plan
                f = (
                    None
                    if self._explained(trace)
                    else self._check_ties_plan_value(trace) or self._checked_after_success(trace)
                )
            else:
                f = (
                    None
                    if self._explained(trace)
                    else self._wrong_value(trace)
                    or self._through_outputs(trace)
                    or self._figures_downstream(trace)
                    or self._faithful_failure(trace)
                ) or self._repeated_plan(trace)
            if f is not None:
                findings.append(f)
        return findings

    @staticmethod
    def _explained(trace: TraceData) -> bool:
        """Another failure mode explains the failed run."""
        return bool(
            RunawayLoop().detect(trace)
            or WriteConflict().detect(trace)
            or UnboundedReplan().detect(trace)
            or IrreversibleAfterFailure().detect(trace)
        )

    # -- a wrong value, traced to where it entered ----------------------------------------------
    @staticmethod
    def _external_after_success(trace: TraceData) -> bool:
        """Every plan step's last attempt ended well (and was not :func:`_refused`), then work
        that belongs to no plan step (a tool call outside any step, a separate agent run no plan
        step names, with what ran inside it, or an application's own span outside the typed
        ones: a plain OTel span watching the settlement) saw the failure."""
        planned = {s.step_id for s in trace.plan_steps}
        last: dict[str, Attempt] = {}
        for a in by_start(trace.attempts):
            if a.step_id in planned:
                last[a.step_id] = a
        if not last or any(not a.succeeded or _refused(trace, a) for a in last.values()):
            return False
        finished = max(a.end_ns for a in trace.attempts if a.step_id in planned)
        steps = {a.span_id for a in trace.attempts if a.step_id in planned}
        outside = [a for a in trace.attempts if a.step_id not in planned and a.start_ns >= finished]
        return (
            any(a.failed for a in outside)
            or any(
                t.step_id not in planned
                and t.parent_span_id not in steps
                and t.start_ns >= finished
                and _saw_the_failure(trace, t)
                for t in trace.tools
            )
            or _plain_check_failed(trace, finished)
        )

    def _wrong_value(self, trace: TraceData) -> Finding | None:
        run = trace.run
        if run is None or run.outcome != A.OUTCOME_FAILURE:
            return None
        failed = [a for a in by_start(trace.attempts) if a.failed]
        # What the failure names: the failing attempt's own error when a step failed (an
        # outcome reason may dump the whole world state), else the outcome check's reason.
        text = _failure_text(trace, failed[-1]) if failed else run.outcome_reason
        calls = self._carriers(trace)
        memo = _values(trace)
        handed = {v for _, _, _, planner_values, _ in calls for v in planner_values}
        written = memo.written
        # a value of several words is named whole, and only one the planner wrote is a suspect
        # (like a number: an expression the run built names what the run computed)
        whole = {v for *_, vs in calls for v in vs} & (handed | written)
        named = (memo.text(text) - memo.said) | (
            named_whole(whole, text) - named_whole(whole, memo.objective)
        )
        if not named:
            return None
        # Which named values are suspects, most specific first: those the planner handed over
        # through an argument named like one of the step's required facts (keys no step
        # produces); else those the planner wrote into its plan (a number or a date is only
        # traced from there: a bare "5" in a failure names nothing by itself); else any named
        # text value. The earliest call carrying a suspect is where it entered.
        pools = (
            named & handed,
            named & written,
            {v for v in named if not is_number(v) and len(v) >= MIN_VALUE_CHARS},
        )
        carrying = next(
            (
                [(c, step, vs & pool) for _, c, step, _, vs in calls if vs & pool]
                for pool in pools
                if pool and any(vs & pool for *_, vs in calls)
            ),
            [],
        )
        if not carrying:
            return None
        # A number often stands for several quantities of one run (60 minutes, 60 replicas):
        # a carrier that got it under an argument the failure names is that fact's carrier.
        call, step_id, values = next(
            (x for x in carrying if named_argument(text, memo.arguments(x[0].arguments), x[2])),
            carrying[0],
        )
        returned: Carried | None = None
        if not values & (handed | written):
            # a value no planner wrote came out of an earlier step: when the carrier's plan
            # entry stands in for exactly one earlier step's result ("{locate_source}"), or an
            # earlier call of another step returned it, the value entered at that step
            referenced = _referenced_step(trace, step_id, values)
            returned = None if referenced else _returned_by(trace, call, step_id, values)
            step_id = referenced or (returned[1] if returned else step_id)
        carried = sorted(values)
        failing = failed[-1].step_id if failed else ""
        value = _listed(carried)
        evidence = [run.span_id, *([returned[0].span_id] if returned else []), call.span_id]
        evidence += [a.span_id for a in trace.attempts if a.step_id == step_id]
        evidence += [a.span_id for a in failed[-1:]]
        how = (
            f"returned by tool '{returned[0].tool}', then an argument of tool '{call.tool}'"
            if returned
            else f"an argument of tool '{call.tool}'"
        )
        where = (
            f"and step '{failing}' failed on it"
            if failing and failing != step_id
            else "and it failed there"
            if failing
            else "and the outcome check failed on it"
        )
        return make_finding(
            self,
            trace,
            severity="high",
            component=PLANNER,
            step_id=step_id,
            evidence=evidence,
            explanation=(
                f"The run failed ({_tail(text or run.outcome_reason)}); the failure names "
                f"{value}, which is not in the objective and first entered the run at step "
                f"'{step_id}' ({how}), {where}."
            ),
            detail={
                "pattern": "wrong_value",
                "values": carried,
                "entered_at_tool_call": (returned[0] if returned else call).span_id,
                "failing_step": failing,
            },
        )

    def _through_outputs(self, trace: TraceData) -> Finding | None:
        """The failure names a value that came out of an earlier step: a value the failing
        step's tool arguments carried (by the value, or by the argument's name) and an earlier
        step's tool returned or the plan's entry for that argument stands in for; with no
        failing step, a figure the outcome check names that a step's tool returned. The wrong
        value entered at the first step up that lineage (outputs carried into later arguments)
        whose arguments carried a value the planner wrote and the objective does not state."""
        run = trace.run
        if run is None:
            return None
        failed = [a for a in by_start(trace.attempts) if a.failed]
        failing = failed[-1] if failed else None
        memo = _values(trace)
        said = memo.said
        by_name: dict[str, set[str]] = {}
        if failing is not None:
            text, before, other_than = (
                _failure_text(trace, failing),
                failing.start_ns,
                failing.step_id,
            )
            received = {v for c in trace.tools_of(failing) for v in memo.text(c.arguments)}
            named = (memo.text(text) & received) - said
            # an argument the failure names by its name ("no estimate on file"): its value too;
            # or by its value ("engine 60163 is too heavy"): when no earlier result holds it
            # (a result not recorded), the plan's entry for that argument says where it came from
            for c in trace.tools_of(failing):
                for name, vs in memo.arguments(c.arguments).items():
                    if vs - said and names_argument(text, name):
                        by_name.setdefault(name, set()).update(vs - said)
                    elif vs & named:
                        by_name.setdefault(name, set()).update(vs & named)
            named |= {v for vs in by_name.values() for v in vs}
        else:
            # the outcome check names a figure (a number, a date, an id: a value with a digit,
            # compared normalised) that may have come out of a step
            text, before, other_than = run.outcome_reason, run.end_ns or 1 << 62, ""
            named = {v for v in memo.text(text) - said if any(ch.isdigit() for ch in v)}
        if not named:
            return None
        on_behalf = self._on_behalf(trace)
        done = [(c, step) for c, step in on_behalf if c.result and not c.failed]

        def producer(
            values: set[str], before_ns: int, other_than: str, last: bool = False
        ) -> Carried | None:
            """The first (``last``: the last) earlier call of another step whose result holds
            one of ``values``."""
            return next(
                (
                    (c, step)
                    for c, step in (reversed(done) if last else done)
                    if c.end_ns <= before_ns
                    and step != other_than
                    and memo.results(c.result) & values
                ),
                None,
            )

        chain: list[Carried] = []
        entered: list[str] = []
        wanted = named
        # a check judged the figure the run ended with: the last step that returned it (a step
        # that passed an earlier step's figure on unchanged returned it too)
        found = producer(wanted, before, other_than, last=failing is None) or next(
            (
                last
                for name in sorted(by_name)
                if (ref := _plan_reference(trace, other_than, name))
                and (last := _last_call(on_behalf, ref, before))
            ),
            None,
        )
        while found is not None and found[1] not in {s for _, s in chain}:
            chain.append(found)
            calls = [c for c, s in on_behalf if s == found[1] and c.arguments]
            suspects = {v for c in calls for v in memo.entered(c)}
            # a value that also went into a call of the same tool that returned something else
            # did not make this output (a metric that gave a figure for another month)
            held = memo.results(found[0].result) & wanted
            cleared = {
                v
                for c, _ in done
                if held and c.tool == found[0].tool and not memo.results(c.result) & held
                for v in memo.text(c.arguments)
            }
            entered = sorted(suspects - cleared)
            if suspects:
                break
            wanted = {v for c in calls for v in memo.text(c.arguments)} - said
            found = producer(wanted, min(c.start_ns for c in calls or [found[0]]), found[1])
        if not entered:
            return None
        (first, first_step), blamed = chain[0], chain[-1][1]
        out = sorted(named & memo.results(first.result)) or sorted(
            {v for vs in by_name.values() for v in vs}
        )
        how = (
            f"its argument {_listed(by_name)} ({_listed(out)}), which the plan took"
            if by_name and not named & memo.results(first.result)
            else f"{_listed(out)}, which it received in its arguments"
        )
        failure = (
            f"Step '{failing.step_id}' failed ({_tail(text)}) on {how} from what step "
            f"'{first_step}' returned"
            if failing is not None
            else f"The outcome check failed ({_tail(text)}) on {_listed(out)}, which step "
            f"'{first_step}' returned"
        )
        return make_finding(
            self,
            trace,
            severity="high",
            component=PLANNER,
            step_id=blamed,
            evidence=[
                run.span_id,
                *(
                    [failing.span_id, *[c.span_id for c in trace.tools_of(failing)]]
                    if failing
                    else []
                ),
                *[c.span_id for c, _ in chain],
                *[a.span_id for a in trace.attempts if a.step_id == blamed],
            ],
            explanation=(
                f"{failure} (tool '{first.tool}'); step '{blamed}' is where the plan's values "
                f"entered that lineage: its arguments carried {_listed(entered)}, which the "
                "objective does not state."
            ),
            detail={
                "pattern": "wrong_value_through_outputs",
                "values": out,
                "entered": entered,
                "lineage": [s for _, s in chain],
                "failing_step": failing.step_id if failing else "",
            },
        )

    def _figures_downstream(self, trace: TraceData) -> Finding | None:
        """A step failed for good on figures the world computed from what it carried (module
        docstring, "a wrong value that changed form"): every value the planner handed it is
        stated by the objective, its failure names numbers none of its arguments or the
        objective hold, its arguments carried earlier steps' results, and of those steps
        exactly one returned figures — among them a number the planner wrote into that step's
        arguments. The number entered at the first step whose arguments carried it."""
        run = trace.run
        failed = [a for a in by_start(trace.attempts) if a.failed]
        if run is None or not failed:
            return None
        failing = failed[-1]
        calls = trace.tools_of(failing)
        memo = _values(trace)
        said, written = memo.said, memo.written
        if not calls or any(memo.entered(c) for c in calls):
            return None
        received = {v for c in calls for vs in memo.arguments(c.arguments).values() for v in vs}
        text = _failure_text(trace, failing)
        figures = {v for v in memo.text(text) if is_number(v)} - received - said
        if not figures or any(
            a.succeeded and a.step_id == failing.step_id and a.start_ns > failing.start_ns
            for a in trace.attempts
        ):
            return None
        on_behalf = self._on_behalf(trace)
        returned: dict[str, set[str]] = {}
        for c, step in on_behalf:
            if not c.failed and c.end_ns <= failing.start_ns and step != failing.step_id:
                returned.setdefault(step, set()).update(memo.results(c.result))
        sources = {
            step: {v for v in values - received if is_number(v)}
            for step, values in returned.items()
            if values & (received - said)
        }
        counted = [step for step, numbers in sources.items() if numbers]
        if len(counted) != 1:
            return None
        (source,) = counted
        entered = {
            f
            for c, step in on_behalf
            if step == source
            for leaf in memo.leaves(c.arguments)
            if is_number(leaf) and forms(leaf) & written
            for f in forms(leaf)
        } & sources[source]
        call, step_id = next(
            (
                (c, step)
                for c, step in on_behalf
                if {v for vs in memo.arguments(c.arguments).values() for v in vs} & entered
            ),
            (None, ""),
        )
        if call is None:
            return None
        carried = sorted(step for step in sources if step != source)
        return make_finding(
            self,
            trace,
            severity="high",
            component=PLANNER,
            step_id=step_id,
            evidence=[
                run.span_id,
                failing.span_id,
                *[c.span_id for c in calls],
                *[c.span_id for c, step in on_behalf if step == source],
                *[a.span_id for a in trace.attempts if a.step_id == step_id],
            ],
            explanation=(
                f"Step '{failing.step_id}' failed ({_tail(text)}) on figures "
                f"({_listed(figures)}) that none of its arguments carried, computed from the "
                f"earlier results it carried; of the steps that returned those, only "
                f"'{source}' returned figures"
                + (f" (not {_listed(carried)})" if carried else "")
                + f", among them {_listed(entered)}, a number the planner wrote; it entered at "
                f"step '{step_id}' (an argument of tool '{call.tool}')."
            ),
            detail={
                "pattern": "figures_downstream",
                "values": sorted(entered),
                "figures": sorted(figures),
                "source_step": source,
                "failing_step": failing.step_id,
                "entered_at_tool_call": call.span_id,
            },
        )

    def _check_ties_plan_value(self, trace: TraceData) -> Finding | None:
        """Every plan step succeeded, then a tool call outside the plan (a check) failed, or
        was made by an app's own check outside the plan that failed on what it returned (its
        verdict may name a value the call did not return: what the check compared it with); its
        own evidence ties the failure to a value the planner introduced (module docstring, "a
        check's verdict"): a contradicted input — the check was called with ``k = v`` that the
        objective states and a plan step with another planner value ``w`` for the same
        argument ``k`` —, else the plan's own measurement — the failure names a value, none of
        the check's inputs, that a plan step's tool returned and a later step received along
        with a planner value the objective does not state —, else the plan's value named by
        the verdict — the failure names a value, none of the check's inputs, that the planner
        wrote, the objective does not state and a plan step's tool was handed. A check that had
        succeeded with the same inputs after the last step saw the world change: none
        applies."""
        run = trace.run
        planned = {s.step_id for s in trace.plan_steps}
        in_plan = [a for a in trace.attempts if a.step_id in planned]
        if run is None or not in_plan:
            return None
        finished = max(a.end_ns for a in in_plan)
        steps = {a.span_id for a in in_plan}
        outside = [
            t
            for t in sorted(trace.tools, key=lambda t: t.start_ns)
            if t.step_id not in planned and t.parent_span_id not in steps and t.start_ns >= finished
        ]
        judged = {a.span_id for a in trace.attempts if a.failed and a.step_id not in planned}

        def saw(t: ToolCall) -> bool:
            return t.parent_span_id in judged or _saw_the_failure(trace, t)

        check = next((t for t in outside if saw(t)), None)
        same = check.args_key or check.arguments if check else ""
        if check is None or any(
            not saw(t) and (t.tool, t.args_key or t.arguments) == (check.tool, same)
            for t in outside
            if t.start_ns < check.start_ns
        ):
            return None
        memo = _values(trace)
        said, written = memo.said, memo.written
        on_behalf = [(c, step) for c, step in self._on_behalf(trace) if c.end_ns <= check.start_ns]
        checked = memo.arguments(check.arguments)
        parent = next((a for a in trace.attempts if a.span_id == check.parent_span_id), None)
        text = (parent.message if parent else "") or check.result or run.outcome_reason
        for call, step_id in on_behalf:
            for name, used in memo.arguments(call.arguments).items():
                stated = checked.get(name, set()) & said
                entered = (used & written) - said
                if stated and entered and not used & checked[name]:
                    return self._check_finding(
                        trace,
                        (check.span_id, check.tool, text),
                        (call, step_id),
                        entered,
                        f"it was called with the {name!r} the objective states; the plan used",
                        {"pattern": "check_contradicted_input", "tie": name},
                    )
        inputs = {v for leaf in memo.leaves(check.arguments) for v in memo.text(leaf)}
        named = {v for v in memo.text(text) if _traceable(v)} - inputs - said
        for producer, made_by in on_behalf:
            measured = named & memo.results(producer.result) if not producer.failed else set()
            if measured:
                # what the call was handed and answered back (a booking echoing the day it was
                # asked for) is no measurement of it: it entered with the call's arguments
                measured -= {v for leaf in memo.leaves(producer.arguments) for v in memo.text(leaf)}
            if not measured:
                continue
            for call, step_id in on_behalf:
                if call.start_ns < producer.end_ns or step_id == made_by:
                    continue
                if not memo.text(call.arguments) & measured:
                    continue
                entered = memo.entered(call)
                if entered:
                    return self._check_finding(
                        trace,
                        (check.span_id, check.tool, text),
                        (call, step_id),
                        entered,
                        f"it names {_listed(measured)}, which step '{made_by}' had measured and "
                        "which was judged with",
                        {"pattern": "check_measurement_judged", "tie": sorted(measured)},
                    )
        # the verdict names a value the plan introduced: none of the check's inputs, one the
        # planner wrote and the objective does not state, that a plan step's tool was handed
        introduced = named & written
        for call, step_id in on_behalf if introduced else ():
            got = {v for vs in memo.arguments(call.arguments).values() for v in vs & introduced}
            if got:
                return self._check_finding(
                    trace,
                    (check.span_id, check.tool, text),
                    (call, step_id),
                    got,
                    "its failure names",
                    {"pattern": "check_names_plan_value"},
                )
        return None

    def _check_finding(
        self,
        trace: TraceData,
        check: tuple[str, str, str],
        entered_at: tuple[ToolCall, str],
        values: set[str],
        how: str,
        detail: dict[str, Any],
    ) -> Finding:
        """A check after success whose verdict is blamed on the plan: ``check`` is (span id,
        name, what its failure said), ``entered_at`` the (tool call, step) that first carried
        ``values``, ``how`` the sentence tying the check to them."""
        run = trace.run
        assert run is not None
        (check_span, name, failure), (call, step_id) = check, entered_at
        return make_finding(
            self,
            trace,
            severity="high",
            component=PLANNER,
            step_id=step_id,
            evidence=[
                run.span_id,
                check_span,
                call.span_id,
                *[a.span_id for a in trace.attempts if a.step_id == step_id],
            ],
            explanation=(
                f"Every plan step succeeded, then the check '{name}' failed ({_tail(failure)}); "
                f"{how} {_listed(values)}, a value of the plan that the objective does not "
                f"state; it entered at step '{step_id}' (an argument of tool '{call.tool}')."
            ),
            detail={
                "values": sorted(values),
                "check": name,
                "entered_at_tool_call": call.span_id,
                **detail,
            },
        )

    def _checked_after_success(self, trace: TraceData) -> Finding | None:
        """Every plan step succeeded, then a check outside the plan (an agent run no plan step
        names, started after the last step ended) failed on its own verdict — it made no tool
        call, so it judged only what it was given and the world told it nothing — and what it
        was given or said (what its LLM calls were asked, its error) names a value the planner
        handed to a step that the objective does not state (a value of several words, such as
        an address, named whole): the check judged the plan's value, blamed at the first step
        whose arguments carried it. A check that called tools (a
        watch that polls the published page) may have heard the failure from the world."""
        run = trace.run
        planned = {s.step_id for s in trace.plan_steps}
        ends = [a.end_ns for a in trace.attempts if a.step_id in planned]
        if run is None or not ends:
            return None
        memo = _values(trace)
        calls: list[tuple[int, ToolCall, str, set[str], set[str]]] | None = None
        planner: set[str] = set()
        phrases: set[str] = set()
        for check in by_start(trace.attempts):
            if (
                check.step_id in planned
                or check.start_ns < max(ends)
                or not check.failed
                or trace.tools_of(check)
            ):
                continue
            if calls is None:  # at the first check: most runs this far have none
                calls = self._carriers(trace)
                planner = memo.written | {v for _, _, _, handed, _ in calls for v in handed}
                # a value of several words (an address) is named only whole (named_whole):
                # its words alone are no value, so the planner's whole one is looked for too,
                # unless the objective holds it whole (then it states it)
                phrases = {v for *_, vs in calls for v in vs & planner}
                phrases -= named_whole(phrases, memo.objective)
            given = f"{trace.asked.get(check.span_id, '')}\n{check.message}"
            named = (memo.text(given) - memo.said) & planner | named_whole(phrases, given)
            found = next(((c, step, vs & named) for _, c, step, _, vs in calls if vs & named), None)
            if found is None:
                continue
            call, step_id, values = found
            return self._check_finding(
                trace,
                (check.span_id, check.step_id, check.message),
                (call, step_id),
                values,
                "it made no tool call, and what it was given names",
                {"pattern": "check_after_success"},
            )
        return None

    @staticmethod
    def _carriers(
        trace: TraceData,
    ) -> list[tuple[int, ToolCall, str, set[str], set[str]]]:
        """Tool calls on behalf of plan steps with captured arguments, by start: (start, call,
        step id, the values it got through arguments named like a required planner fact, all
        its string values)."""
        if "carriers" in trace._memo:
            return list(trace._memo["carriers"])
        produced = {k for s in trace.plan_steps for k in s.produces}
        facts = {s.step_id: set(s.requires) - produced for s in trace.plan_steps}
        memo = _values(trace)
        out = []
        for t, step_id in PlanPropagation._on_behalf(trace):
            by_arg = memo.arguments(t.arguments)
            if by_arg:
                planner = {v for k, vs in by_arg.items() if k in facts[step_id] for v in vs}
                values = {v for vs in by_arg.values() for v in vs}
                out.append((t.start_ns, t, step_id, planner, values))
        trace._memo["carriers"] = out
        return list(out)

    @staticmethod
    def _on_behalf(trace: TraceData) -> list[Carried]:
        """Tool calls made on behalf of a plan step, by start: (call, step id); the step is the
        call's own, else its attempt's, else its parent span's name."""
        if "on_behalf" in trace._memo:
            return list(trace._memo["on_behalf"])
        attempt_of = {a.span_id: a for a in trace.attempts}
        planned = {s.step_id for s in trace.plan_steps}
        out = []
        for t in sorted(trace.tools, key=lambda t: t.start_ns):
            parent = attempt_of.get(t.parent_span_id)
            step_id = (
                t.step_id
                or (parent.step_id if parent else "")
                or parent_step_name(trace, t.parent_span_id)
            )
            if step_id in planned:
                out.append((t, step_id))
        trace._memo["on_behalf"] = out
        return list(out)

    @staticmethod
    def _facts(steps: list[PlanStep]) -> set[str]:
        produced = {k for s in steps for k in s.produces}
        return {k for s in steps for k in s.requires if k not in produced}

    @staticmethod
    def _mentioned(keys: set[str], reason: str) -> int:
        words = set(re.findall(r"[A-Za-z0-9_]+", reason))
        return sum(k in words for k in keys)

    def _faithful_failure(self, trace: TraceData) -> Finding | None:
        run = trace.run
        if run is None or run.outcome != A.OUTCOME_FAILURE or not trace.attempts:
            return None
        plan_id, version = trace.plan_versions()[-1]
        final = trace.steps_of(plan_id, version)
        decomposed = set(trace.decomposition())
        last: dict[str, Attempt] = {}
        for a in by_start(trace.attempts):
            last[a.step_id] = a
        if any(not a.succeeded for sid, a in last.items() if sid not in decomposed):
            return None
        if any(s.step_id not in last for s in final if s.step_id not in decomposed):
            return None
        if WriteConflict().detect(trace):
            return None
        facts = self._facts(final)
        first_ok: dict[str, int] = {}
        for a in by_start(trace.attempts):
            if a.succeeded:
                first_ok.setdefault(a.step_id, a.start_ns)
        effectful = {
            t.step_id for t in trace.tools if t.effect in (A.EFFECT_WRITE, A.EFFECT_IRREVERSIBLE)
        }
        for a in trace.attempts:
            if any(t.effect in (A.EFFECT_WRITE, A.EFFECT_IRREVERSIBLE) for t in trace.tools_of(a)):
                effectful.add(a.step_id)
        ordered = sorted(
            (s for s in final if s.step_id not in decomposed),
            key=lambda s: (first_ok.get(s.step_id, 1 << 62), s.position),
        )
        if not ordered:
            return None

        def is_effectful(s: PlanStep) -> bool:
            return s.step_id in effectful or s.irreversible

        def fact_keys(s: PlanStep) -> set[str]:
            return {k for k in s.requires if k in facts}

        # A value the planner handed to a step that the objective never mentions is a misread
        # fact: the earliest step that received one is where it entered.
        said = _values(trace).said
        misread = next(
            (
                (step, sorted(planner - said))
                for _, _, step, planner, _ in self._carriers(trace)
                if planner - said and step not in decomposed
            ),
            None,
        )
        by_id = {s.step_id: s for s in ordered}
        candidates = [s for s in ordered if is_effectful(s) and fact_keys(s)]
        if misread is not None and misread[0] in by_id:
            blamed = by_id[misread[0]]
        elif candidates:
            blamed = next(
                (s for s in candidates if self._mentioned(fact_keys(s), run.outcome_reason)),
                candidates[0],
            )
        else:
            blamed = next((s for s in ordered if is_effectful(s)), ordered[0])
        used = sorted(fact_keys(blamed))
        evidence = [a.span_id for a in trace.attempts if a.step_id == blamed.step_id]
        return make_finding(
            self,
            trace,
            severity="high",
            component=PLANNER,
            step_id=blamed.step_id,
            evidence=[run.span_id, *evidence, *[p.span_id for p in trace.plans]],
            explanation=(
                f"Every step of plan version {version} succeeded but the run failed "
                f"({run.outcome_reason[:120] or 'no reason recorded'}); "
                + (
                    f"step '{blamed.step_id}' was the first handed a value the objective never "
                    f"mentions ({_listed(misread[1])})"
                    if misread is not None and misread[0] == blamed.step_id
                    else f"the first state change based on the planner's facts was step "
                    f"'{blamed.step_id}'" + (f" (uses {', '.join(used)})" if used else "")
                )
                + "."
            ),
            detail={"pattern": "faithful_execution_failed", "facts": used, "plan_version": version},
        )

    def _repeated_plan(self, trace: TraceData) -> Finding | None:
        run = trace.run
        if run is None or run.outcome != A.OUTCOME_FAILURE:
            return None
        max_replans = trace.budget_limit("max_replans")
        if max_replans is None:
            return None  # nothing bounded it: unbounded_replan reports it
        by_plan: dict[str, dict[int, list[PlanStep]]] = {}
        for s in trace.plan_steps:
            by_plan.setdefault(s.plan_id, {}).setdefault(s.plan_version, []).append(s)
        for plan_id, versions in by_plan.items():
            ordered = sorted(versions)
            repeats = [
                v
                for prev, v in itertools.pairwise(ordered)
                if version_signature(trace, plan_id, v) == version_signature(trace, plan_id, prev)
            ]
            if len(repeats) < MIN_IDENTICAL_REPLANS or len(ordered) - 1 > max_replans:
                continue
            failed = [a for a in by_start(trace.attempts) if a.plan_id == plan_id and a.failed]
            if not failed:
                continue
            failing = failed[-1].step_id
            steps = versions[ordered[-1]]
            facts = self._facts(steps)
            needs = {k for s in steps if s.step_id == failing for k in s.requires if k in facts}
            first_start: dict[str, int] = {}
            for a in by_start(trace.attempts):
                first_start.setdefault(a.step_id, a.start_ns)
            sharing = sorted(
                (s for s in steps if set(s.requires) & needs and s.step_id in first_start),
                key=lambda s: first_start[s.step_id],
            )
            blamed = sharing[0].step_id if sharing else failing
            return make_finding(
                self,
                trace,
                severity="high",
                component=PLANNER,
                step_id=blamed,
                evidence=[p.span_id for p in trace.plans if p.plan_id == plan_id]
                + [a.span_id for a in failed],
                explanation=(
                    f"The planner re-issued the same plan {len(repeats)} times after step "
                    f"'{failing}' failed, until the replan budget ({max_replans}) ran out; the "
                    f"wrong belief entered at step '{blamed}'."
                ),
                detail={
                    "pattern": "repeated_failed_plan",
                    "failing_step": failing,
                    "identical_replans": len(repeats),
                    "facts": sorted(needs),
                },
                identity="repeated_plan",
            )
        return None

    def _same_goal(self, trace: TraceData, starved: set[str]) -> Finding | None:
        by_plan: dict[str, dict[int, list[PlanStep]]] = {}
        for s in trace.plan_steps:
            by_plan.setdefault(s.plan_id, {}).setdefault(s.plan_version, []).append(s)
        scopes = {(p.plan_id, p.version): p.scope for p in trace.plans}
        for plan_id, versions in by_plan.items():
            chain: list[str] = []
            previous: dict[str, PlanStep] = {}
            for version in sorted(versions):
                current = {s.step_id: s for s in versions[version]}
                scope = scopes.get((plan_id, version), "")
                parent = previous.get(scope) or current.get(scope)
                if scope and parent is not None and previous:
                    added = [s for sid, s in current.items() if sid not in previous]
                    limit = SAME_GOAL_SIMILARITY if len(added) == 1 else VERBATIM_SIMILARITY
                    twins = [
                        s for s in added if similarity(s.description, parent.description) >= limit
                    ]
                    if twins and (not chain or chain[-1] == scope):
                        chain = chain or [scope]
                        chain.append(twins[0].step_id)
                    elif twins:
                        chain = [scope, twins[0].step_id]
                previous = current
            splits = len(chain) - 1
            if splits >= SAME_GOAL_MIN_SPLITS and not set(chain) & starved:
                top = chain[0]
                plan_spans = [p.span_id for p in trace.plans if p.plan_id == plan_id]
                return make_finding(
                    self,
                    trace,
                    severity="high",
                    component=PLANNER,
                    step_id=top,
                    evidence=plan_spans,
                    explanation=(
                        f"The planner re-split the goal of step '{top}' into a near-identical "
                        f"sub-goal {splits} times in a row ({' → '.join(chain)}) instead of "
                        "decomposing it."
                    ),
                    detail={"pattern": "recursive_same_goal", "splits": splits, "chain": chain},
                    identity="same_goal",
                )
        return None
