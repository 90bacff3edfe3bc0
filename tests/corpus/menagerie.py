"""A zoo's animal-transfer desk moving two red pandas to a partner zoo on the real **OpenAI
Agents SDK**, traced by **MLflow's OpenAI autologging** (``mlflow.openai.autolog()`` from the
lightweight ``mlflow-tracing`` SDK, which patches ``AgentRunner.run`` and adds MLflow's trace
processor to the SDK's tracing) and the app's own ``mlflow.start_span`` spans, against a scripted
model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``). No planscope
code.

Sealed-77 split only (see README.md). The job: find a transport crate for the pandas in the
keeper's inventory (read page by page), get the CITES export permit for the crate, get the vet's
health certificate (a lab request, polled), book a climate-controlled van for the transfer day,
invoice the partner zoo's account, mail the partner's curator. The zoo's data team runs its other
pipelines on Apache Airflow, so it asks the model for the plan as an **Airflow DAG file**:

* the app opens one MLflow ``AGENT`` span per transfer (``animal transfer {id}``); a failed
  transfer raises inside it, so MLflow records the exception and the ``ERROR`` status;
* a ``transfer_planner`` ``Agent`` (one ``Runner.run`` per plan, under the app's ``dag revision
  {n}`` span) answers a :class:`DagFile` (``output_type``) whose ``dag_file`` field is the Python
  source of a DAG: ``with DAG(dag_id=..., params={...}) as dag:``, one ``<task> =
  PythonOperator(task_id='<task>', python_callable=<service>, op_kwargs={...}, doc_md='step n:
  purpose')`` per step, an earlier step's output as the Jinja string ``"{{
  ti.xcom_pull(task_ids='crate')['crate_id'] }}"``, the order as ``crate >> cites >> ... >>
  [invoice, mail]``. The app reads the source with a small hand-written ``ast`` reader (the file
  is never executed; no Airflow installed). Asked again after a setback, the planner answers a new
  DAG whose ``params`` hold the settled outputs (``"{{ params.crate_crate_id }}"``) and whose
  operators are the steps still to do, their step numbers kept;
* a ``transfer_runner`` ``Agent`` (one ``Runner.run`` per step attempt, under the app's ``task
  {task_id} try {n}`` span) is handed the operator, its templates rendered, calls its
  ``function_tool`` services and answers a :class:`TaskReport` (``state``: ``success`` /
  ``up_for_retry`` / ``failed``, ``xcom`` or ``error``);
* the services raise **Airflow-style exceptions** (:class:`ServiceError`), which the tools'
  ``failure_error_function`` hands the model as ``<Exception>: text``:
  ``AirflowRescheduleException`` (``reschedule at HH:MM``: the runner calls again ``after`` that
  time, in the same run), ``AirflowException`` (the task is ``up_for_retry``: the app runs it
  again, ``retries=7``), ``AirflowBadRequest`` with ``(use key=value)`` (a new DAG, up to 5),
  ``AirflowFailException`` (final); a certificate still pending after 12 reads is reported as
  ``AirflowSensorTimeout``, final;
* after the last step the app checks the van against the partner's intake day (``check van
  against intake``, a ``GUARDRAIL`` span) and watches the transfer (``watch transfer {booking}``,
  tracking reads as span events).

MLflow's tracer provider is the museum agent's (one per process, OTLP to a loopback sink, a relay
to the play's provider). The SDK's trace provider is global and MLflow's autologging clears its
processors before adding its own: the play runs on a fresh ``DefaultTraceProvider`` and puts the
previous one back; autologging is turned off when the play returns. The planner trusts the
keeper's notes over the transfer file: the scenario's wrong value comes from a note. This source
records no context data (no starvation label).
"""

from __future__ import annotations

import ast
import asyncio
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import mlflow
import mlflow.openai
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    RunContextWrapper,
    Runner,
    Tool,
    function_tool,
)
from agents.tracing import get_trace_provider, set_trace_provider
from agents.tracing.provider import DefaultTraceProvider
from mlflow.entities import SpanEvent, SpanType
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from pydantic import BaseModel

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import Label
from .museum import _mlflow_provider, _Relay

TRANSFER: dict[str, Any] = {
    "transfer": "ZT-RP-0912",
    "partner": "Parc Zoologique de Lunaret",
    "taxon": "Ailurus fulgens fulgens",
    "animals": 2,
    "container": "IATA CR82",
    "appendix": "I",
    "office": "APHA Bristol",
    "depot": "Whipsnade depot",
    "day": "2027-06-09",
    "account": "PZL-30417",
    "amount": 2640.0,
    "curator": "curator@lunaret-zoo.example",
}
MAX_ATTEMPTS = 8
MAX_PLANS = 5
MAX_READS = 12
"""Certificate reads in one runner run before the runner reports the sensor timed out."""
MAX_TURNS = 40
PLANNER = "You plan a zoo animal transfer. Answer the plan as an Apache Airflow DAG file."
RUNNER = "You are the zoo's transfer runner. Run the one Airflow task you are given, then report."
OUTPUTS = {
    "crate": "crate_id",
    "cites": "permit_no",
    "vet": "certificate_id",
    "van": "booking",
    "invoice": "invoice_id",
    "mail": "message_id",
}
"""Each step's output field, in the order the steps run."""


class ServiceError(RuntimeError):
    """A service's failure, an Airflow-style exception: ``kind`` is its class name."""

    def __init__(self, kind: str, text: str):
        super().__init__(text)
        self.kind = kind


def error_for_model(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """What the model reads when a service raised (the SDK's default hides every error's text).

    >>> error_for_model(None, ServiceError("AirflowFailException", "no"))  # type: ignore[arg-type]
    'AirflowFailException: no'
    """
    kind = error.kind if isinstance(error, ServiceError) else "AirflowFailException"
    return f"{kind}: {error}"


# --- the plan: an Airflow DAG file -----------------------------------------------------------
class DagFile(BaseModel):
    """The planner's answer."""

    dag_file: str
    """The DAG's Python source."""


class TaskReport(BaseModel):
    """The runner's answer for one task try."""

    task_id: str
    state: Literal["success", "up_for_retry", "failed"]
    xcom: str
    """The service's answer (JSON) on success."""
    error: str
    """``<Exception>: text`` otherwise."""


@dataclass(frozen=True)
class Ref:
    """A Jinja template argument: ``{{ ti.xcom_pull(task_ids='crate')['crate_id'] }}`` or
    ``{{ params.crate_crate_id }}``."""

    text: str


@dataclass
class Task:
    """One ``PythonOperator`` of the DAG: a step of the plan."""

    number: int
    purpose: str
    task_id: str
    callable: str
    args: dict[str, Any]


@dataclass
class Dag:
    params: dict[str, str]
    """The DAG's ``params``: the settled outputs."""
    tasks: list[Task]
    """In the order of the ``>>`` chain."""


_TEMPLATE = re.compile(r"^\{\{.*\}\}$", re.DOTALL)


def _chain(node: ast.expr) -> list[str]:
    """The task variables of a ``a >> b >> [c, d]`` expression, left to right."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.RShift):
        return _chain(node.left) + _chain(node.right)
    if isinstance(node, ast.List | ast.Tuple):
        return [n for e in node.elts for n in _chain(e)]
    return [node.id] if isinstance(node, ast.Name) else []


def read_dag(source: str) -> Dag:
    """The plan's steps, from the planner's DAG file (parsed, never run): the ``DAG(params=...)``
    and each ``PythonOperator`` in the ``with DAG(...)`` block, ordered by its ``>>`` chain.

    >>> d = read_dag('''with DAG(dag_id="t", params={"crate_crate_id": "CR-1"}) as dag:
    ...     cites = PythonOperator(task_id="cites", python_callable=apply_cites_permit,
    ...         op_kwargs={"crate": "{{ params.crate_crate_id }}", "office": "X"},
    ...         doc_md="step 2: permit")
    ...     cites''')
    >>> d.params, d.tasks[0].number, d.tasks[0].callable, d.tasks[0].args
    ({'crate_crate_id': 'CR-1'}, 2, 'apply_cites_permit', \
{'crate': Ref(text='{{ params.crate_crate_id }}'), 'office': 'X'})
    """
    tree = ast.parse(source)
    block = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.With)
            and isinstance(call := n.items[0].context_expr, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "DAG"
        ),
        None,
    )
    if block is None:
        raise ValueError("no `with DAG(...)` block in the plan")
    dag_call = block.items[0].context_expr
    assert isinstance(dag_call, ast.Call)
    params: dict[str, str] = {}
    for kw in dag_call.keywords:
        if kw.arg == "params":
            params = dict(ast.literal_eval(kw.value))
    tasks: dict[str, Task] = {}
    order: list[str] = []
    for stmt in block.body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            op = stmt.value
            if not (isinstance(op.func, ast.Name) and op.func.id == "PythonOperator"):
                continue
            (target,) = stmt.targets
            assert isinstance(target, ast.Name)
            kws = {kw.arg: kw.value for kw in op.keywords}
            fn = kws["python_callable"]
            assert isinstance(fn, ast.Name)
            doc = ast.literal_eval(kws["doc_md"]) if "doc_md" in kws else ""
            head = re.match(r"step (\d+):\s*(.*)", doc)
            kwargs = dict(ast.literal_eval(kws["op_kwargs"])) if "op_kwargs" in kws else {}
            args = {
                k: Ref(v) if isinstance(v, str) and _TEMPLATE.match(v) else v
                for k, v in kwargs.items()
            }
            tasks[target.id] = Task(
                int(head.group(1)) if head else len(tasks) + 1,
                head.group(2) if head else doc,
                str(ast.literal_eval(kws["task_id"])),
                fn.id,
                args,
            )
        elif isinstance(stmt, ast.Expr):
            order += _chain(stmt.value)
    ordered = [tasks[v] for v in dict.fromkeys(order) if v in tasks]
    return Dag(params, ordered + [t for t in tasks.values() if t not in ordered])


def write_dag(transfer: str, revision: int, params: dict[str, str], tasks: list[Task]) -> str:
    """The DAG file the scripted planner answers."""
    dag_id = "transfer_" + re.sub(r"\W", "_", transfer.lower())
    callables = ", ".join(dict.fromkeys(t.callable for t in tasks))
    lines = [
        f'"""Red panda transfer {transfer}, revision {revision}."""',
        "from datetime import datetime",
        "",
        "from airflow import DAG",
        "from airflow.operators.python import PythonOperator",
        f"from zoo.transfers.services import {callables}",
        "",
        "with DAG(",
        f"    dag_id={dag_id!r},",
        "    start_date=datetime(2027, 6, 1),",
        "    schedule=None,",
        "    catchup=False,",
        "    default_args={'retries': 7},",
        f"    params={json.dumps(params)},",
        ") as dag:",
    ]
    for t in tasks:
        kwargs = ", ".join(
            f"{json.dumps(k)}: {json.dumps(v.text if isinstance(v, Ref) else v)}"
            for k, v in t.args.items()
        )
        lines += [
            f"    {t.task_id} = PythonOperator(",
            f"        task_id={t.task_id!r},",
            f"        python_callable={t.callable},",
            f"        op_kwargs={{{kwargs}}},",
            f"        doc_md={f'step {t.number}: {t.purpose}'!r},",
            "    )",
        ]
    chain = [t.task_id for t in tasks if t.task_id not in ("invoice", "mail")]
    tail = [t.task_id for t in tasks if t.task_id in ("invoice", "mail")]
    if tail:
        chain.append(f"[{', '.join(tail)}]" if len(tail) > 1 else tail[0])
    return "\n".join([*lines, "", "    " + " >> ".join(chain), ""])


# --- the scripted model -------------------------------------------------------------------
def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _call(name: str, args: dict[str, Any], turn: int) -> dict[str, Any]:
    call = {"id": f"call_{name}_{turn}", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(args)}  # type: ignore[assignment]
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _xcom(step: str) -> str:
    return f"{{{{ ti.xcom_pull(task_ids='{step}')['{OUTPUTS[step]}'] }}}}"


def _plan(brief: str) -> str:
    """The planner's DAG: the transfer file's facts, the keeper's notes trusted over them; after a
    setback with a ``use`` value that value; the settled outputs as ``params``, the settled steps
    left out, the step numbers kept."""
    lines = dict(re.findall(r"^(\w[\w' ]*): (.*)$", brief, re.MULTILINE))
    facts = json.loads(lines["Transfer file"]) | json.loads(lines.get("Keeper's notes", "{}"))
    settled: dict[str, str] = json.loads(lines.get("Settled", "{}"))
    revision = int(lines.get("Revision", "1"))
    use = re.search(r"\(use (\w+)=([^)]+)\)", lines.get("Setback", ""))
    if use:
        facts[use.group(1)] = use.group(2)

    def out(step: str) -> Ref:
        name = f"{step}_{OUTPUTS[step]}"
        return Ref(f"{{{{ params.{name} }}}}" if step in settled else _xcom(step))

    tasks = [
        Task(1, f"find a {facts['container']} crate for {facts['animals']} {facts['taxon']} in "
             "the keeper's inventory", "crate", "find_crate",
             {"taxon": facts["taxon"], "container": facts["container"],
              "animals": facts["animals"]}),
        Task(2, f"apply to {facts['office']} for the CITES permit", "cites",
             "apply_cites_permit", {"crate": out("crate"), "appendix": facts["appendix"],
                                    "office": facts["office"]}),
        Task(3, "get the vet's health certificate", "vet", "request_health_certificate",
             {"crate": out("crate"), "permit": out("cites"), "animals": facts["animals"]}),
        Task(4, f"book a climate-controlled van for {facts['day']}", "van", "book_van",
             {"certificate": out("vet"), "depot": facts["depot"], "day": facts["day"]}),
        Task(5, f"invoice {facts['partner']} for {facts['transfer']}", "invoice",
             "invoice_partner", {"transfer": facts["transfer"], "account": facts["account"],
                                 "amount": facts["amount"], "van": out("van")}),
        Task(6, "mail the partner's curator", "mail", "mail_curator",
             {"to": facts["curator"], "van": out("van"), "day": facts["day"]}),
    ]  # fmt: skip
    params = {f"{s}_{OUTPUTS[s]}": v for s, v in settled.items()}
    todo = [t for t in tasks if t.task_id not in settled]
    return json.dumps({"dag_file": write_dag(facts["transfer"], revision, params, todo)})


def _report(task_id: str, state: str, xcom: str = "", error: str = "") -> dict[str, Any]:
    return _say(json.dumps({"task_id": task_id, "state": state, "xcom": xcom, "error": error}))


def _runner(messages: list[dict[str, Any]], order: str) -> dict[str, Any]:
    """The runner's turn: call the task's callable, call again ``after`` a reschedule, follow
    ``next_page``, read a pending certificate, answer the task report."""
    found = re.search(r"^Call: (\w+) (.*)$", order, re.MULTILINE)
    task = re.search(r"^Task: (\w+)", order, re.MULTILINE)
    assert found and task, order
    name, args, task_id = found.group(1), json.loads(found.group(2)), task.group(1)
    turn = len(messages)
    calls: list[tuple[str, dict[str, Any], str]] = []
    pending: dict[str, tuple[str, dict[str, Any]]] = {}
    for m in messages:
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            pending[c["id"]] = (fn["name"], json.loads(fn.get("arguments") or "{}"))
        if m.get("role") == "tool" and m.get("tool_call_id") in pending:
            calls.append((*pending.pop(m["tool_call_id"]), _text(m.get("content"))))
    if not calls:
        return _call(name, args, turn)
    last, called, came_back = calls[-1]
    failed = re.match(r"(Airflow\w+): (.*)", came_back, re.DOTALL)
    if failed:
        kind, text = failed.group(1), failed.group(2).strip()
        after = re.search(r"reschedule at (\d\d:\d\d)", text)
        if kind == "AirflowRescheduleException" and after:
            return _call(last, called | {"after": after.group(1)}, turn)
        state = "up_for_retry" if kind == "AirflowException" else "failed"
        return _report(task_id, state, error=f"{kind}: {text}")
    seen = json.loads(came_back)
    if seen.get("next_page"):
        return _call(last, called | {"page": seen["next_page"]}, turn)
    if seen.get("state") == "pending":
        reads = sum(c[0] == "certificate_status" for c in calls)
        if reads >= MAX_READS:
            note = f"certificate request {seen['request_id']} still pending after {reads} reads"
            return _report(task_id, "failed", error=f"AirflowSensorTimeout: {note}")
        return _call("certificate_status", {"request_id": seen["request_id"]}, turn)
    return _report(task_id, "success", xcom=json.dumps(seen))


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one request body: the planner's DAG file or the
    runner's next turn.

    >>> brief = "Transfer file: " + json.dumps(TRANSFER)
    >>> msg = respond({"messages": [{"role": "system", "content": PLANNER},
    ...     {"role": "user", "content": brief}]})
    >>> dag = read_dag(json.loads(msg["choices"][0]["message"]["content"])["dag_file"])
    >>> [t.task_id for t in dag.tasks], dag.tasks[2].args["permit"]
    (['crate', 'cites', 'vet', 'van', 'invoice', 'mail'], \
Ref(text="{{ ti.xcom_pull(task_ids='cites')['permit_no'] }}"))
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = _text(messages[0].get("content")) if messages else ""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(PLANNER):
        return completion(body, _say(_plan(user)))
    if system.startswith(RUNNER):
        return completion(body, _runner(messages, user))
    return completion(body, _say("I cannot help with that."))


# --- the zoo's services -------------------------------------------------------------------
@dataclass
class World:
    """The keeper's inventory, the CITES office, the vet lab, the van rota, the partner's ledger
    and the mail of one transfer."""

    label: Label
    faults: list[dict[str, str]] = field(default_factory=list)
    crates: dict[str, str] = field(default_factory=dict)
    """Crate -> the taxon it is logged for."""
    requests: dict[str, int] = field(default_factory=dict)
    vans: list[dict[str, str]] = field(default_factory=list)
    invoices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = [dict(f) for f in self.label.params.get("faults", ())]

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self, name: str) -> None:
        """Raise the scenario's next fault when ``name`` is the service it targets."""
        if not self.faults or name != self.params.get("tool"):
            return
        f = self.faults.pop(0)
        kind = f["kind"]
        if kind == "AirflowRescheduleException":
            raise ServiceError(kind, f"{f['text']}; reschedule at {f['hint']}")
        if kind == "AirflowBadRequest":
            raise ServiceError(kind, f"{f['text']} (use {f['hint']})")
        raise ServiceError(kind, f["text"])

    def tools(self) -> list[Tool]:
        """The zoo's services, as ``function_tool``\\ s bound to this transfer's world."""
        seed = self.label.seed

        @function_tool(failure_error_function=error_for_model)
        def find_crate(taxon: str, container: str, animals: int, page: int = 1) -> str:
            """Transport crates in the keeper's inventory fit for a taxon, a page at a time.

            Args:
                taxon: the animals' taxon (species and subspecies).
                container: the IATA live-animal container requirement.
                animals: how many animals travel.
                page: the inventory page.
            """
            self.fault("find_crate")
            if page < int(self.params.get("pages", 1)):
                taken = [{"crate_id": f"CR-{page}{n}", "state": "in use"} for n in (1, 2)]
                return json.dumps({"crates": taken, "next_page": page + 1})
            crate = f"CR-{seed}-{animals}"
            self.crates[crate] = taxon
            return json.dumps({"crate_id": crate, "container": container, "taxon": taxon})

        @function_tool(failure_error_function=error_for_model)
        def apply_cites_permit(crate: str, appendix: str, office: str, after: str = "") -> str:
            """Apply to a CITES management office for the export permit of the animals in a crate.

            Args:
                crate: the transport crate the animals travel in.
                appendix: the CITES appendix of the taxon.
                office: the management office applied to.
                after: call again after this time (HH:MM), when told to reschedule.
            """
            self.fault("apply_cites_permit")
            moved = self.params.get("office_to")
            if moved and office == TRANSFER["office"]:
                raise ServiceError(
                    "AirflowBadRequest",
                    f"{office} takes no Appendix {appendix} applications this month "
                    f"(use office={moved})",
                )
            taxon = self.crates.get(crate, "")
            if taxon != TRANSFER["taxon"]:
                raise ServiceError(
                    "AirflowFailException",
                    f"the permit for {TRANSFER['transfer']} covers {TRANSFER['taxon']}; crate "
                    f"{crate} is logged for {taxon or 'nothing known'}",
                )
            return json.dumps({"permit_no": f"GB-{seed}-{appendix}", "office": office})

        @function_tool(failure_error_function=error_for_model)
        def request_health_certificate(crate: str, permit: str, animals: int) -> str:
            """Ask the vet lab for the pre-transfer health certificate of the animals.

            Args:
                crate: the transport crate.
                permit: the CITES permit number.
                animals: how many animals are examined.
            """
            self.fault("request_health_certificate")
            request = f"VL-{seed}-{len(self.requests) + 1}"
            self.requests[request] = 0
            if self.params.get("stuck") or "polls" in self.params:
                return json.dumps({"request_id": request, "state": "pending"})
            return json.dumps({"request_id": request, "certificate_id": f"HC-{request[3:]}"})

        @function_tool(failure_error_function=error_for_model)
        def certificate_status(request_id: str) -> str:
            """A certificate request's state; the certificate once issued.

            Args:
                request_id: the vet lab request.
            """
            self.requests[request_id] = self.requests.get(request_id, 0) + 1
            if self.params.get("stuck") or self.requests[request_id] < int(
                self.params.get("polls", 0)
            ):
                return json.dumps({"request_id": request_id, "state": "pending"})
            return json.dumps(
                {
                    "request_id": request_id,
                    "state": "issued",
                    "certificate_id": f"HC-{request_id[3:]}",
                }
            )

        @function_tool(failure_error_function=error_for_model)
        def book_van(certificate: str, depot: str, day: str, after: str = "") -> str:
            """Book a climate-controlled animal van from a depot on a day.

            Args:
                certificate: the animals' health certificate.
                depot: the van depot.
                day: the transfer day (YYYY-MM-DD).
                after: call again after this time (HH:MM), when told to reschedule.
            """
            self.fault("book_van")
            if depot != TRANSFER["depot"] and depot not in self.params.get("depots", ()):
                raise ServiceError("AirflowFailException", f"no climate-controlled van at {depot}")
            booking = f"VAN-{seed}-{len(self.vans) + 1}"
            self.vans.append({"booking": booking, "day": day, "depot": depot})
            return json.dumps(
                {"booking": booking, "day": day, "depot": depot, "departs": after or "06:30"}
            )

        @function_tool(failure_error_function=error_for_model)
        def invoice_partner(
            transfer: str, account: str, amount: float, van: str, after: str = ""
        ) -> str:
            """Invoice the partner zoo's account for a transfer.

            Args:
                transfer: the transfer reference.
                account: the partner zoo's account with the zoo.
                amount: the amount in GBP.
                van: the van booking the transfer rides in.
                after: call again after this time (HH:MM), when told to reschedule.
            """
            self.fault("invoice_partner")
            if account != TRANSFER["account"]:
                raise ServiceError(
                    "AirflowFailException", f"the zoo's ledger holds no account {account}"
                )
            self.invoices.append(van)
            return json.dumps(
                {"invoice_id": f"INV-{seed}-{len(self.invoices)}", "transfer": transfer}
            )

        @function_tool(failure_error_function=error_for_model)
        def mail_curator(to: str, van: str, day: str, after: str = "") -> str:
            """Mail the partner zoo's curator the van booking and its day.

            Args:
                to: the curator's address.
                van: the van booking.
                day: the transfer day.
                after: call again after this time (HH:MM), when told to reschedule.
            """
            self.fault("mail_curator")
            return json.dumps({"message_id": f"MSG-{van}-{day[-2:]}", "to": to})

        return [
            find_crate,
            apply_cites_permit,
            request_health_certificate,
            certificate_status,
            book_van,
            invoice_partner,
            mail_curator,
        ]


# --- the app --------------------------------------------------------------------------------
class TransferFailed(Exception):
    """The pandas did not reach the partner zoo (the reason is the message)."""


class Retry(Exception):
    """The task is up for retry: run it again."""


class Replan(Exception):
    """The task failed on the plan's data (``AirflowBadRequest``): ask for a new DAG."""


class AnimalTransfer:
    """One transfer, from the brief to the watched van."""

    def __init__(self, label: Label, model: OpenAIChatCompletionsModel):
        self.label = label
        self.world = World(label)
        self.planner: Agent[Any] = Agent(
            name="transfer_planner", instructions=PLANNER, model=model, output_type=DagFile
        )
        self.runner: Agent[Any] = Agent(
            name="transfer_runner",
            instructions=RUNNER,
            model=model,
            tools=self.world.tools(),
            output_type=TaskReport,
        )
        self.outputs: dict[str, str] = {}
        """Settled step -> its output."""
        self.params: dict[str, str] = {}

    def brief(self, revision: int, setback: str) -> str:
        notes = {
            k: self.label.params[k] for k in ("taxon", "day", "account") if k in self.label.params
        }
        lines = [
            f"Plan transfer {TRANSFER['transfer']}: two red pandas to {TRANSFER['partner']}.",
            f"Transfer file: {json.dumps(TRANSFER)}",
        ]
        if notes:
            lines.append(f"Keeper's notes: {json.dumps(notes)}")
        if revision > 1:
            lines += [
                f"Revision: {revision}",
                f"Settled: {json.dumps(self.outputs)}",
                f"Setback: {setback}",
            ]
        return "\n".join(lines)

    async def plan(self, revision: int, setback: str) -> Dag:
        with mlflow.start_span(name=f"dag revision {revision}", span_type=SpanType.CHAIN) as span:
            brief = self.brief(revision, setback)
            span.set_inputs({"brief": brief})
            result = await Runner.run(self.planner, brief)
            source = result.final_output_as(DagFile).dag_file
            span.set_outputs({"dag_file": source})
            dag = read_dag(source)
            span.set_attribute("menagerie.dag.tasks", [t.task_id for t in dag.tasks])
        self.params |= dag.params
        return dag

    def value(self, arg: Any) -> Any:
        """An argument with its template rendered."""
        if not isinstance(arg, Ref):
            return arg
        param = re.match(r"\{\{\s*params\.(\w+)\s*\}\}", arg.text)
        if param:
            return self.params[param.group(1)]
        xcom = re.search(r"task_ids='(\w+)'", arg.text)
        assert xcom, arg
        return self.outputs[xcom.group(1)]

    async def attempt(self, task: Task, attempt: int) -> None:
        """One runner run of a task, its templates rendered."""
        args = {k: self.value(v) for k, v in task.args.items()}
        order = (
            f"Task: {task.task_id} (step {task.number}, try {attempt})\n"
            f"Purpose: {task.purpose}\n"
            f"Call: {task.callable} {json.dumps(args)}"
        )
        with mlflow.start_span(
            name=f"task {task.task_id} try {attempt}", span_type=SpanType.CHAIN
        ) as span:
            span.set_inputs({"task": order})
            result = await Runner.run(self.runner, order, max_turns=MAX_TURNS)
            report = result.final_output_as(TaskReport)
            span.set_outputs(report.model_dump())
            if report.state == "success":
                self.outputs[task.task_id] = str(json.loads(report.xcom)[OUTPUTS[task.task_id]])
                return
            span.set_status("ERROR")
            kind = report.error.partition(":")[0]
            span.set_attribute("menagerie.task.state", report.state)
        text = f"{task.task_id} ({task.callable}) {report.error}"
        if report.state == "up_for_retry":
            raise Retry(text)
        if kind == "AirflowBadRequest":
            raise Replan(text)
        raise TransferFailed(text)

    async def work(self) -> None:
        setback = ""
        for revision in range(1, MAX_PLANS + 1):
            dag = await self.plan(revision, setback)
            setback = ""
            for task in dag.tasks:
                for attempt in range(1, MAX_ATTEMPTS + 1):
                    try:
                        await self.attempt(task, attempt)
                        break
                    except Retry as e:
                        if attempt == MAX_ATTEMPTS:
                            raise TransferFailed(str(e)) from e
                    except Replan as e:
                        setback = str(e)
                        break
                if setback:
                    break
            if not setback:
                return
        raise TransferFailed(f"no DAG holds after {MAX_PLANS}: {setback}")

    def check(self) -> None:
        """The app's own checks once the curator is mailed: the van against the partner's intake
        day, then the van's tracking up to the arrival."""
        van = self.world.vans[-1]
        with mlflow.start_span(
            name="check van against intake", span_type=SpanType.GUARDRAIL
        ) as span:
            span.set_inputs({"van": van["booking"], "intake_day": TRANSFER["day"]})
            span.set_outputs({"van_day": van["day"]})
            if van["day"] != TRANSFER["day"]:
                raise TransferFailed(
                    f"van {van['booking']} leaves on {van['day']}; {TRANSFER['partner']} takes "
                    f"the pandas in on {TRANSFER['day']}"
                )
        with mlflow.start_span(name=f"watch transfer {van['booking']}") as span:
            span.set_inputs({"van": van["booking"], "depot": van["depot"]})
            for read, place in enumerate(
                ("loading bay", "M1 Toddington", "Folkestone", "Calais"), 1
            ):
                if self.label.scenario == "external_border" and read > int(
                    self.label.params["reads"]
                ):
                    raise TransferFailed(
                        f"the border control post at {place} closes for an animal-health alert; "
                        f"the van turns back and {TRANSFER['partner']} postpones the intake"
                    )
                span.add_event(
                    # SpanEvent is a concrete dataclass; mypy reads its base's abstract from_proto
                    SpanEvent("tracking", attributes={"read": read, "at": place})  # type: ignore[abstract]
                )
            span.set_outputs({"state": "arrived"})

    async def run(self) -> str:
        try:
            with mlflow.start_span(
                name=f"animal transfer {TRANSFER['transfer']}", span_type=SpanType.AGENT
            ) as root:
                # MLflow's trace id is "tr-" and the OpenTelemetry trace id in hex
                trace_id = root.trace_id.removeprefix("tr-")
                root.set_inputs(TRANSFER | {"run": self.label.run})
                await self.work()
                self.check()
                root.set_outputs({"outcome": "arrived", "outputs": self.outputs})
        except TransferFailed:  # MLflow recorded the exception and the root's ERROR status
            pass
        return trace_id


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the menagerie scenarios under MLflow's OpenAI autologging, its spans relayed to
    ``provider``; autologging is turned off and the SDK's trace provider put back when the play
    returns."""
    if not labels:
        return {}
    _mlflow_provider()
    quiet = logging.getLogger("mlflow")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    previous = get_trace_provider()
    set_trace_provider(DefaultTraceProvider())
    _Relay.target = provider
    mlflow.openai.autolog(silent=True)
    try:
        with ModelServer(respond=respond) as server:
            client = AsyncOpenAI(
                base_url=server.base_url("corpus-menagerie"), api_key="test", max_retries=0
            )
            model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)

            async def all_runs() -> dict[str, str]:
                try:
                    return {label.run: await AnimalTransfer(label, model).run() for label in labels}
                finally:  # on this loop: closed after it, httpx's aclose finds no loop
                    await client.close()

            return asyncio.run(all_runs())
    finally:
        mlflow.openai.autolog(disable=True, silent=True)
        set_trace_provider(previous)
        _Relay.target = None
        quiet.setLevel(level)
