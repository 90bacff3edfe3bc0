"""Runaway recovery loop: the same work failing again and again without getting anywhere.

Definition. Two kinds of *streak*, each a run of consecutive failures that never recovers (no
later success of that step, or of that tool in that step):

* **step streak**: consecutive failed attempts of one plan step, across plan versions too (a
  replan that re-issues the failing step does not reset it: the work is the same);
* **tool streak**: consecutive failed calls of one tool on behalf of one step — tool-call
  retries inside one attempt, or over several attempts. Without step attributes (a third-party
  agent) the tool call's parent span stands for the step (its name minus the operation prefix
  ``execute_step``/``invoke_agent``).

A third kind needs no failed call: a **stalled poll**, at least :data:`STALLED_REPEATS`
successful calls in a row of one tool with the same arguments (the same question asked again
and again: a job that never leaves RUNNING) that never got anywhere, shown either way:

* the executor gave up: the calls are the last of an attempt that failed, of a step that never
  succeeded afterwards; an executor that gives up without a failed call or span counts when the
  run stopped there (the step's attempt is the last attempt of any step of the latest plan and a
  later plan step never ran: an app that ends the run after its executor gave up); a graph
  executor's later node visits in the same invocation that name no plan step (each read as an
  attempt of its node) carry on the attempt's work, their calls its calls;
* no new state: every call answered the same recorded text, no later call with those arguments
  answered anything else, and the run failed.

Polling that ends (its answer changes: DONE, a progress figure), pagination (arguments change)
and a flaky step that succeeds on a re-run are healthy.

**Which step.** A finding names a step only when the trace ties the work to one: a step of a
plan read from the trace, or a step the agent declared on its own step spans. Otherwise (an
agent whose plan no reader understands, an agent without a plan) the finding names no step —
an executor's agent name or span name is not a plan step — and its explanation and
``detail["where"]`` say which agent or span repeated the work; the evidence spans show it.

A streak that spans several plan versions counts when the step was retried within a version
(at least two failures in one version), or when the replans changed the step's work (its
failed attempts got different inputs, or its failing tool calls different arguments) and it
failed again in every version: replanning was tried and the same step still fails. One failure
per version of a step each replan re-issued unchanged is the planner's loop
(``unbounded_replan``), not the executor's. Both can hold of one run (replans that changed the
step but not the plan's structure, beyond ``max_replans``): each is reported with its evidence.

**One loop, one finding.** A tool streak whose failed calls each ran a failed attempt of a
step loop (a coordinator's delegation tool that fails because its worker's attempt failed) is
that step loop seen one level up: its calls join the step's finding as evidence
(``detail["wrapped_by"]``), not a second finding naming no step.

**Plan versions.** An attempt's own plan version (plans read from a trace's structure are
numbered by the loader, in start order; an attempt ran under the last plan started before it);
a loop was escalated to a replan when a later version of its plan followed its last failure.

A streak is a runaway loop when it has at least :data:`MIN_REPEATS` failures, or when it went
beyond the retry budget (an attempt number above ``max_attempts_per_step`` of
``planscope.run.budget``, or an attempt refused with status ``skipped``). Error texts and
arguments may vary from failure to failure — a loop that rewords its error or widens a search
is still a loop — and how they vary is reported as evidence (distinct normalised fingerprints,
distinct argument hashes), not required. A flaky step or tool that succeeds on its 2nd or 3rd
try is healthy and never reported, and neither is a long loop whose calls succeed (pagination,
polling that ends).

Evidence: the failed attempts and tool calls. Waste: tokens, cost and time of every failed
attempt after the first (or of every failed call after the first, without attempts).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from planscope import semconv as A
from planscope.fingerprints import status_fingerprint

from .._columns import BatchColumns, repeated, trace_ids
from .._model import Attempt, Finding, ToolCall, TraceData, unique
from ._base import MAX_EVIDENCE, by_start, make_finding, memoised

KIND = A.FINDING_RUNAWAY_LOOP
MIN_REPEATS = 3
"""Failures in a row, never recovered, before a loop is reported. Two are an ordinary retry
(and what flaky dependencies produce); a third failure of the same work shows the agent is not
adapting, whatever it changed in the wording of its request."""
STALLED_REPEATS = 5
"""Identical successful calls, the last an attempt made before it gave up, that show a stalled
poll: more than any retry, as many as a patient poll of a slow job."""
HIGH_SEVERITY_REPEATS = 5
"""Streaks at least this long (or beyond the budget) are ``high`` severity."""
ERROR_QUOTE = 200
"""Characters of a loop's last error text its finding quotes."""
_OPERATION_PREFIXES = (A.OP_EXECUTE_STEP + " ", A.OP_INVOKE_AGENT + " ")


def parent_step_name(trace: TraceData, span_id: str) -> str:
    """The step a span outside the typed tables stands for (third-party agents): the span's
    name minus an operation prefix (``execute_step X``/``invoke_agent X``); '' for no span of
    the trace's skeletons. Their names are read once per trace, at the first question (most
    tool calls name their step: none is asked).

    >>> parent_step_name(TraceData("p", "t"), "a")
    ''
    """
    return _parent_step_names(trace).get(span_id, "")


def _parent_step_names(trace: TraceData) -> dict[str, str]:
    names: dict[str, str] | None = trace._memo.get("parent_step_names")
    if names is None:
        # every prefix is an operation name (no space) and one space: cut at the first space
        ops = _OPERATION_PREFIXES
        names = trace._memo["parent_step_names"] = {
            s.span_id: s.name.partition(" ")[2] if s.name.startswith(ops) else s.name
            for s in trace.raw or ()
        }
    return names


def _the_work_loops(versions: Sequence[int], inputs: Sequence[str]) -> bool:
    """Failures (of plan ``versions``, with ``inputs``: input hashes or argument keys) that are
    the step's own loop: in one plan version, at least two in one of several versions, or one
    per version with different inputs (the replans changed the work, and it failed again).

    >>> _the_work_loops([1, 2, 3], ["a", "a", "a"]), _the_work_loops([1, 2, 3], ["a", "b", "c"])
    (False, True)
    """
    counts = Counter(versions)
    return len(counts) == 1 or max(counts.values()) >= 2 or _distinct(inputs) > 1


def _escalated(trace: TraceData, last: Attempt) -> bool:
    """Whether a later version of its plan followed the ``last`` failed attempt of a loop (it
    was escalated to a replan); plans read from structure are numbered by the loader.

    >>> from planscope_analyzer._model import Plan
    >>> plan = Plan("p1", "", "", 0, "", "", 2, True, 10, inferred=True)
    >>> trace = TraceData("p", "t", plans=[plan, plan._replace(span_id="p2", version=1)])
    >>> a = Attempt("a", "", "", 0, "s", 1, "error", "", "", "", (), 0, "", 0, "", 20, 25)
    >>> _escalated(trace, a), _escalated(trace, a._replace(plan_version=1))
    (True, False)
    """
    return any(p.plan_id == last.plan_id and p.version > last.plan_version for p in trace.plans)


def _last_error(message: str) -> str:
    """The sentence quoting a loop's last error text ('' when none was recorded).

    >>> _last_error("Radio: STAND BY"), _last_error("")
    (" Its last error: 'Radio: STAND BY'.", '')
    """
    text = " ".join(message.split())[:ERROR_QUOTE]
    return f" Its last error: {text!r}." if text else ""


def _distinct(values: Sequence[str]) -> int:
    return len({v for v in values if v})


@dataclass(frozen=True)
class _Streak:
    """A tool streak (:meth:`RunawayLoop._tool_streaks`): its failed calls, where they ran (the
    step or span name), the plan step named, its finding's evidence and key (:func:`_key`)."""

    calls: list[ToolCall]
    found_at: str
    step_id: str
    evidence: tuple[str, ...]
    key: str


class RunawayLoop:
    """Detects runaway recovery loops (see the module docstring).

    >>> RunawayLoop().detect(TraceData("p", "t"))
    []
    """

    kind = KIND
    version = 11

    def screen(self, batch: BatchColumns) -> set[str]:
        """Traces of ``batch`` with two failed attempts, three failed tool calls, a skipped
        attempt, or :data:`STALLED_REPEATS` successful calls of one tool with the same
        arguments (what every rule below needs: see the exit at the top of the rule)."""
        import pyarrow.compute as pc

        attempts, tools = batch.attempts, batch.tools
        out: set[str] = set()
        if attempts is not None:
            status = attempts.column("status")
            out |= repeated(attempts.filter(pc.equal(status, A.STATUS_ERROR)), [], 2)
            out |= trace_ids(attempts, pc.equal(status, A.STATUS_SKIPPED))
        if tools is not None:
            failed = pc.or_(
                pc.equal(tools.column("status_code"), "Error"),
                pc.not_equal(tools.column("error_type"), ""),
            )
            out |= repeated(tools.filter(failed), [], MIN_REPEATS)
            calls = tools.filter(
                pc.and_(pc.invert(failed), pc.not_equal(tools.column("args_key"), ""))
            )
            out |= repeated(calls, ["tool", "args_key"], STALLED_REPEATS)
        return out

    def detect(self, trace: TraceData) -> list[Finding]:
        return memoised(trace, KIND, self._detect)  # plan_propagation asks too

    def _detect(self, trace: TraceData) -> list[Finding]:
        # Every rule needs several failures or a failed run; most traces have none (a cheap exit).
        failed_attempts = sum(a.status == A.STATUS_ERROR for a in trace.attempts)
        failed_tools = sum(t.failed for t in trace.tools)
        skipped = any(a.status == A.STATUS_SKIPPED for a in trace.attempts)
        if failed_attempts < 2 and failed_tools < MIN_REPEATS and not skipped:
            return self._stalled(trace)
        budget = trace.budget_limit("max_attempts_per_step")
        findings: dict[str, Finding] = {}
        # a step loop needs two failed attempts of its step (three, or two beyond the budget)
        errors = Counter(a.step_id for a in trace.attempts if a.status == A.STATUS_ERROR)
        by_step: dict[str, list[Attempt]] = defaultdict(list)
        for a in trace.attempts:
            if a.step_id and errors[a.step_id] >= 2:
                by_step[a.step_id].append(a)
        for step_id, attempts in by_step.items():
            f = self._step_loop(trace, step_id, by_start(attempts), budget)
            if f is not None:
                findings[_key(f)] = f
        streaks = self._tool_streaks(trace) if failed_tools >= MIN_REPEATS else []
        step_loops = list(findings.values())
        for streak in streaks:
            # a streak's finding is made only when kept: most repeat a step loop's step
            host = _wrapped_loop(trace, streak.evidence, step_loops)
            if host is None:
                if streak.key not in findings:
                    findings[streak.key] = self._tool_loop(trace, streak)
            else:  # the calls that ran the step's attempts: the same loop, one level up
                findings[_key(host)] = _with_wrapper(
                    findings[_key(host)], self._tool_loop(trace, streak)
                )
        for f in self._stalled(trace):
            findings.setdefault(_key(f), f)
        return list(findings.values())

    def _stalled(self, trace: TraceData) -> list[Finding]:
        """Stalled polls (module docstring): the last calls of an attempt that gave up, or calls
        that never got a new answer in a run that failed."""
        # a poll is STALLED_REPEATS successful calls of one tool with the same arguments: a
        # trace without as many such calls has none (most traces: a cheap exit)
        # (counted with the failed calls first, without reading each call's status: when even
        # that count is short, most traces, none is)
        if len(trace.tools) < STALLED_REPEATS:
            return []
        same = Counter((t.tool, t.args_key) for t in trace.tools if t.args_key)
        if not same or max(same.values()) < STALLED_REPEATS:
            return []
        same = Counter((t.tool, t.args_key) for t in trace.tools if t.args_key and not t.failed)
        if not same or max(same.values()) < STALLED_REPEATS:
            return []
        stopped = _stopped_short(trace)
        # a tool call belongs to its step's attempt (the binding), else to its parent span
        calls: dict[tuple[str, int] | str, list[ToolCall]] = defaultdict(list)
        for t in sorted(trace.tools, key=lambda t: t.start_ns):
            calls[(t.step_id, t.attempt) if t.step_id else t.parent_span_id].append(t)
        attempts = by_start(trace.attempts)
        # one pass, not a scan of the later attempts per attempt (quadratic in a long loop)
        last_success = {b.step_id: i for i, b in enumerate(attempts) if b.succeeded}
        carried = _carried_on(trace, attempts)
        stalled: dict[str, tuple[list[ToolCall], Attempt | None, bool]] = {}
        for i, a in enumerate(attempts):
            if (a.status != A.STATUS_ERROR and a is not stopped) or not a.step_id:
                continue
            if last_success.get(a.step_id, -1) > i:  # the step succeeded afterwards
                continue
            mine = calls.get((a.step_id, a.attempt)) or calls.get(a.span_id, [])
            if a.span_id in carried:
                later = [t for b in carried[a.span_id] for t in trace.tools_of(b)]
                mine = sorted([*mine, *later], key=lambda t: t.start_ns)
            polls = _polls(mine)
            if polls and polls[-1][-1] is mine[-1]:
                stalled[polls[-1][0].span_id] = (polls[-1], a, True)
        if _run_failed(trace):
            answers: dict[tuple[str, str], set[str]] = defaultdict(set)
            for t in trace.tools:
                if not t.failed:
                    answers[(t.tool, t.args_key)].add(t.result)
            attempt_of = {(a.step_id, a.attempt): a for a in attempts} | {
                a.span_id: a for a in attempts
            }
            for key, mine in calls.items():
                for poll in _polls(mine):
                    # one recorded answer, the same for every call of it in the run
                    if poll[0].result and len(answers[(poll[0].tool, poll[0].args_key)]) == 1:
                        stalled.setdefault(poll[0].span_id, (poll, attempt_of.get(key), False))
        if not stalled:
            return []
        findings = []
        for poll, attempt, gave_up in stalled.values():
            first = poll[0]
            where = (
                (attempt.step_id if attempt else "")
                or first.step_id
                or parent_step_name(trace, first.parent_span_id)
            )
            step = _step_named(trace, where)
            how = (
                "every call succeeding, then gave up (the step never succeeded afterwards): a "
                "poll that made no progress"
                if gave_up
                else f"every call answering the same ({first.result[:80]!r}), and the run "
                "failed without that answer ever changing: a poll that never ended"
            )
            findings.append(
                make_finding(
                    self,
                    trace,
                    severity="medium",
                    component=first.tool,
                    step_id=step,
                    evidence=([attempt.span_id] if attempt else []) + [c.span_id for c in poll],
                    explanation=(
                        f"{_capital(_subject(step, where))} called tool '{first.tool}' "
                        f"{len(poll)} times in a row with the same arguments, {how}."
                    ),
                    wasted_ns=sum(c.duration_ns for c in poll[:-1]),
                    detail={
                        "attempts": len(poll),
                        "signals": ["same_tool_args", "no_progress"]
                        + ([] if gave_up else ["same_output"]),
                        "distinct_inputs": 1,
                        "parent_spans": 1,
                        "tool": first.tool,
                    }
                    | _where(step, where),
                    identity=first.tool,
                )
            )
        return findings

    # -- plan steps ----------------------------------------------------------------------------
    def _step_loop(
        self, trace: TraceData, step_id: str, attempts: Sequence[Attempt], budget: int | None
    ) -> Finding | None:
        # The last streak of non-successful attempts; a success after it means recovered.
        streak: list[Attempt] = []
        for a in attempts:
            if a.status == A.STATUS_OK:
                streak = []
            else:
                streak.append(a)
        failed = [a for a in streak if a.status == A.STATUS_ERROR]
        refused = any(a.status == A.STATUS_SKIPPED for a in streak)
        over_budget = len(failed) >= 2 and (
            refused or (budget is not None and max(a.attempt for a in streak) > budget)
        )
        if len(failed) < MIN_REPEATS and not over_budget:
            return None
        tool_calls = [t for a in failed for t in trace.tools_of(a)]
        failing_tools = [t for t in tool_calls if t.failed]
        hashes = [a.input_hash for a in failed if a.input_hash] or [
            t.args_key for t in failing_tools
        ]
        ran_under = [a.plan_version for a in failed]
        escalated = _escalated(trace, failed[-1])
        if not _the_work_loops(ran_under, hashes):
            return None
        tool = Counter(t.tool for t in failing_tools).most_common(1)
        executor = next((a.executor for a in failed if a.executor), "")
        component = tool[0][0] if tool else executor or "executor"
        versions = sorted(set(ran_under))
        n = len(failed)
        errors = _distinct([a.fingerprint for a in failed])
        inputs = _distinct(hashes)
        why = []
        if over_budget:
            why.append(
                f"beyond its retry budget ({budget} attempts)"
                if budget
                else "until the retry budget refused it"
            )
        if len(versions) > 1:
            why.append(f"across {len(versions)} plan versions (replanning did not change it)")
        variation = (
            "no error text recorded"  # nothing says whether the errors differed
            if errors == 0
            else "the same error every time"
            if errors == 1
            else f"{errors} different errors (normalised)"
        )
        named = _step_named(trace, step_id)
        explanation = (
            f"{_capital(_subject(named, step_id))} failed {n} attempts in a row "
            f"{' '.join(why)}".rstrip()
            + f", with {variation}, and never succeeded afterwards"
            + (
                ""
                if escalated
                else "; its last failure was not escalated to a replan"
                if len(versions) > 1
                else "; it was not escalated to a replan"
            )
            + "."
            + (f" Its failing tool: '{component}'." if tool and not named else "")
            + _last_error(failed[-1].message)
        )
        signals = [
            name
            for name, values in (
                ("same_error", [a.fingerprint for a in failed]),
                ("same_inputs", [a.input_hash for a in failed]),
                (
                    "same_tool_args",
                    [t.args_key and f"{t.tool}:{t.args_key}" for t in failing_tools],
                ),
            )
            if len(set(values)) == 1 and values[0]
        ]
        wasted = failed[1:]
        return make_finding(
            self,
            trace,
            severity="high" if over_budget or n >= HIGH_SEVERITY_REPEATS else "medium",
            component=component,
            step_id=named,
            evidence=[a.span_id for a in streak] + [t.span_id for t in failing_tools],
            explanation=explanation,
            wasted_tokens=sum(a.tokens for a in wasted),
            wasted_cost_usd=sum(a.cost_usd for a in wasted),
            wasted_ns=sum(max(0, a.end_ns - a.start_ns) for a in wasted),
            detail={
                "attempts": n,
                "signals": signals,
                "distinct_errors": errors,
                "distinct_inputs": inputs,
                "over_budget": over_budget,
                "budget": budget,
                "plan_versions": versions,
                "plan_version": ran_under[-1],
                "escalated_to_replan": escalated,
                "tool": component if tool else "",
                "last_error": failed[-1].message[:ERROR_QUOTE],
            }
            | _where(named, step_id),
        )

    # -- tool calls ----------------------------------------------------------------------------
    @staticmethod
    def _tool_streaks(trace: TraceData) -> list[_Streak]:
        """Consecutive failed calls of one tool for one step (any arguments), or of one tool
        with the same arguments across steps (a ReAct agent's iterations), never recovered:
        the longest of each step (else tool)."""
        attempt_of = {a.span_id: a for a in trace.attempts}
        per_step: dict[tuple[str, str], list[ToolCall]] = defaultdict(list)
        same_args: dict[tuple[str, str, str, int], list[ToolCall]] = defaultdict(list)
        step_of: dict[str, str] = {}
        for t in sorted(trace.tools, key=lambda t: t.start_ns):
            if not t.tool:
                continue
            parent = attempt_of.get(t.parent_span_id)
            step = (
                t.step_id
                or (parent.step_id if parent else "")
                or parent_step_name(trace, t.parent_span_id)
            )
            step_of[t.span_id] = step
            per_step[(step, t.tool)].append(t)
            if t.args_key:
                same_args[(t.tool, t.args_key, t.plan_id, t.plan_version)].append(t)
        streaks: dict[str, list[ToolCall]] = {}
        for calls in [*per_step.values(), *same_args.values()]:
            # the last streak: the failed calls after the last success
            start = len(calls)
            while start and calls[start - 1].failed:
                start -= 1
            streak = calls[start:]
            if len(streak) < MIN_REPEATS:
                continue
            if not _the_work_loops([c.plan_version for c in streak], [c.args_key for c in streak]):
                continue
            key = step_of[streak[0].span_id] or f"\x00{streak[0].tool}"
            if len(streak) > len(streaks.get(key, ())):
                streaks[key] = streak
        out = []
        for streak in streaks.values():
            found_at, tool = step_of[streak[0].span_id], streak[0].tool
            step_id = _step_named(trace, found_at)
            in_attempts = [
                attempt_of[c.parent_span_id] for c in streak if c.parent_span_id in attempt_of
            ]
            evidence = [c.span_id for c in streak] + [p.span_id for p in in_attempts]
            out.append(
                _Streak(
                    streak,
                    found_at,
                    step_id,
                    unique(evidence)[:MAX_EVIDENCE],
                    _place_key(step_id, found_at, tool),  # its finding's :func:`_key`
                )
            )
        return out

    def _tool_loop(self, trace: TraceData, found: _Streak) -> Finding:
        """The finding of a tool streak (:meth:`_tool_streaks`)."""
        streak, found_at, step_id = found.calls, found.found_at, found.step_id
        tool = streak[0].tool
        spans = len({c.parent_span_id for c in streak})
        args = _distinct([c.args_key for c in streak])
        prints = [status_fingerprint(c.error_type, c.message) for c in streak]
        errors = _distinct(prints)
        where = "inside one attempt" if spans == 1 else f"over {spans} attempts"
        wasted = streak[1:]
        return make_finding(
            self,
            trace,
            severity="high" if len(streak) >= HIGH_SEVERITY_REPEATS else "medium",
            component=tool,
            step_id=step_id,
            evidence=found.evidence,
            explanation=(
                f"Tool '{tool}' failed {len(streak)} calls in a row {where}"
                + (f" of {_subject(step_id, found_at)}" if found_at else "")
                + (
                    " with the same arguments"
                    if args == 1
                    else f" with {args} different argument sets"
                    if args
                    else ""
                )
                + (
                    ""
                    if not errors
                    else ", the same error every time"
                    if errors == 1
                    else f", {errors} different errors (normalised)"
                )
                + ", and never succeeded afterwards."
                + _last_error(streak[-1].message)
            ),
            wasted_ns=sum(c.duration_ns for c in wasted),
            detail={
                "attempts": len(streak),
                "signals": (["same_tool_args"] if args == 1 else [])
                + (["same_error"] if len(set(prints)) == 1 and prints[0] else []),
                "distinct_inputs": args,
                "distinct_errors": errors,
                "parent_spans": spans,
                "tool": tool,
                "last_error": streak[-1].message[:ERROR_QUOTE],
            }
            | _where(step_id, found_at),
            identity=tool,
        )


def _wrapped_loop(
    trace: TraceData, evidence: Sequence[str], loops: Iterable[Finding]
) -> Finding | None:
    """The step loop (of ``loops``) whose failed attempts ran inside every failed tool call of
    a tool loop (its finding's ``evidence``: a coordinator's delegation tool, failing because
    its worker's attempt failed): one loop seen at two levels. None when a call wrapped no such
    attempt."""
    tool_calls = {t.span_id for t in trace.tools}
    wrappers = {s for s in evidence if s in tool_calls}
    for loop in loops:
        inside = set(loop.evidence)
        parents = {a.parent_span_id for a in trace.attempts if a.span_id in inside and a.failed}
        if wrappers and wrappers <= parents:
            return loop
    return None


def _with_wrapper(loop: Finding, calls: Finding) -> Finding:
    """``loop`` with the tool calls that wrapped its attempts as evidence and detail."""
    where = calls.detail.get("where") or calls.step_id
    return replace(
        loop,
        evidence=unique([*loop.evidence, *calls.evidence])[:MAX_EVIDENCE],
        explanation=f"{loop.explanation} Each attempt ran inside a failed call of tool "
        f"'{calls.component}'" + (f" by '{where}'" if where else "") + ".",
        detail={
            **loop.detail,
            "wrapped_by": {
                "tool": calls.component,
                "calls": calls.detail["attempts"],
                "where": where,
            },
        },
    )


def _key(f: Finding) -> str:
    """One finding per step, else per place of an unplanned loop, else per tool."""
    return _place_key(f.step_id, f.detail.get("where", ""), f.component)


def _place_key(step_id: str, where: str, component: str) -> str:
    """:func:`_key` of a finding at ``step_id``, else ``where`` (the agent or span name of work
    no plan step names), else about ``component``."""
    return step_id or f"\x00{where or component}"


def _step_named(trace: TraceData, step_id: str) -> str:
    """``step_id`` when it names a plan step read from the trace, or a step the agent declared
    on its own step spans; else '' (an executor's agent or span name is not a plan step)."""
    steps: set[str] | None = trace._memo.get("declared_steps")
    if steps is None:
        steps = {s.step_id for s in trace.plan_steps}
        steps |= {a.step_id for a in trace.attempts if not a.inferred}
        trace._memo["declared_steps"] = steps
    return step_id if step_id in steps else ""


def _subject(step: str, where: str) -> str:
    """How an explanation names the repeated work: its step, else where it ran."""
    if step:
        return f"step '{step}'"
    return f"'{where}' (no plan step could be tied to it)" if where else "work outside any step"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _where(step: str, where: str) -> dict[str, str]:
    """``detail["where"]``: the agent or span name of work no plan step names."""
    return {"where": where} if where and not step else {}


def _polls(calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
    """Runs of at least :data:`STALLED_REPEATS` successful calls in a row of one tool with the
    same (recorded) arguments."""
    runs: list[list[ToolCall]] = []
    for c in calls:
        if c.failed or not c.args_key:
            runs.append([])
        elif (
            runs and runs[-1] and (runs[-1][-1].tool, runs[-1][-1].args_key) == (c.tool, c.args_key)
        ):
            runs[-1].append(c)
        else:
            runs.append([c])
    return [r for r in runs if len(r) >= STALLED_REPEATS]


def _carried_on(trace: TraceData, attempts: Sequence[Attempt]) -> dict[str, list[Attempt]]:
    """Per attempt of a plan step, the attempts (in start order ``attempts``) that carried on its
    work: the later ones under the same parent span that name no plan step, up to the next that
    names one (a graph executor's later node visits in one invocation, each read as an attempt
    of its node: the step's polls made there). One pass over the attempts.

    >>> a = Attempt("a", "inv", "", 0, "s", 1, "ok", "", "", "", (), 0, "", 0, "", 1, 2)
    >>> from planscope_analyzer._model import PlanStep
    >>> step = PlanStep("p", "", 0, 0, "s", "", "", "", (), (), (), False)
    >>> trace = TraceData("p", "t", plan_steps=[step])
    >>> nodes = [a._replace(span_id=f"n{i}", step_id="tools", attempt=i) for i in (1, 2)]
    >>> [b.span_id for b in _carried_on(trace, [a, *nodes])["a"]]
    ['n1', 'n2']
    """
    out: dict[str, list[Attempt]] = defaultdict(list)
    last: dict[str, str] = {}  # parent span -> its latest attempt of a plan step
    for b in attempts:
        if _step_named(trace, b.step_id):
            last[b.parent_span_id] = b.span_id
        elif b.parent_span_id and b.parent_span_id in last:
            out[last[b.parent_span_id]].append(b)
    return out


def _run_failed(trace: TraceData) -> bool:
    run = trace.run
    return run is not None and run.outcome == A.OUTCOME_FAILURE


def _stopped_short(trace: TraceData) -> Attempt | None:
    """The last attempt of a plan step (the one that ended last) when the run stopped there,
    before any attempt of a later step of the latest plan (an executor that gave up without a
    failed call or span, and an app that then ended the run)."""
    if not trace.plan_steps:
        return None
    latest = max(trace.plan_steps, key=lambda s: (s.plan_version, s.plan_span_id)).plan_span_id
    plan = [
        s.step_id
        for s in sorted(trace.plan_steps, key=lambda s: s.position)
        if s.plan_span_id == latest
    ]
    attempts = [a for a in by_start(trace.attempts) if a.step_id in plan]
    if not attempts:
        return None
    # the one whose work ended last (its span, or a call of it: a graph's later node visits):
    # of parallel branches, the last started may have ended first
    last = max(
        attempts,
        key=lambda a: max([a.end_ns, *(t.end_ns for t in trace.tools_of(a))]),
    )
    return last if plan.index(last.step_id) < len(plan) - 1 else None
