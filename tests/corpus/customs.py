"""An import customs-clearance agent on DSPy, traced by OpenInference's DSPy instrumentor
(``openinference-instrumentation-dspy``): DSPy's own ``dspy.LM`` (through LiteLLM) against a
scripted model on the conformance suite's fake OpenAI server (``ModelServer(respond=...)``).
No planscope code.

Sealed-9 split only (see README.md). The task: a container of goods arrives; classify the
goods in the tariff (a catalogue read page by page), get a certificate of origin from the
exporter's chamber of commerce (polled until issued), lodge the import declaration, pay the
duties from the broker's deferment account, book the container's collection. As a DSPy user
would write it:

* the app opens one OTel span per shipment (``clear {shipment}``) and records the outcome;
* a ``ChecklistPlanner`` module (``dspy.ChainOfThought`` over a ``ReviseChecklist``
  signature) answers the plan as a **YAML checklist** (``items`` of ``id``, ``do``, ``tool``,
  ``with``, ``done``); a ``with`` value ``"${id}"`` stands for that earlier item's result,
  substituted by the app. The app ticks items off in place (``done: true``, ``result``); after
  a failure it hands the planner the ticked checklist and the failure, and the planner answers
  the **same checklist revised in place** (done items kept, the open items' arguments changed,
  a ``revised`` note on each changed item);
* a ``CustomsClerk`` module (``dspy.ReAct`` over a ``ClearItem`` signature) run per item
  attempt, its input the item as YAML, its answer ``status`` (done / retry_later / replan /
  rejected / gave_up), ``result`` and ``detail``; a tool's exception reaches the model as
  ReAct's ``Execution error in {tool}`` observation (with the traceback);
* the customs gateway answers errors with HTTP-style status lines the model reads: ``504
  Gateway Timeout`` (the model calls again in the same ReAct run with a longer ``timeout_s``),
  ``503 Service Unavailable`` (the clerk answers ``retry_later``, the app re-runs the item, up
  to 8 attempts), ``409 Conflict`` (``replan``: the app asks the planner to revise the
  checklist, up to 4 revisions), ``422 Unprocessable`` (final);
* after the last item the app checks the declaration against the commercial invoice (``verify
  assessment``) and watches the container (``watch release``), both plain OTel spans.

The planner trusts the broker's notes over the shipment file: the scenario's wrong value comes
from a note. This source records no context data (no starvation label).
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from tests.conformance.fake_openai import MODEL, ModelServer, completion

from ._labels import RUNAWAY, Label

# LiteLLM (under dspy.LM) fetches a price list from the internet when imported unless told to
# use the copy it ships
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import dspy

SHIPMENT: dict[str, Any] = {
    "goods": "cordless drills, lithium-ion, 18 V",
    "origin": "VN",
    "importer": "GB482913570000",
    "port": "felixstowe",
    "customs_value": 48200,
    "account": "DAN-8214037",
    "haulier": "bookings@trentfreight.example",
}
TARIFF = {
    "cordless drills, lithium-ion, 18 V": ("8467.21.10", 0.017),
    "corded drills, mains powered, 230 V": ("8467.21.99", 0.027),
    "hammer drills, pneumatic": ("8467.11.90", 0.017),
    "drill bits, tungsten carbide": ("8207.50.10", 0.027),
}
"""Goods description -> commodity code and duty rate."""
MAX_ITEM_ATTEMPTS = 8
MAX_REVISIONS = 4
MAX_STATUS_CHECKS = 12
REACT_ITERS = 16
REASONS = {
    504: "Gateway Timeout",
    503: "Service Unavailable",
    409: "Conflict",
    422: "Unprocessable",
}


class GatewayError(RuntimeError):
    """An error answer of the customs gateway or a service behind it: ``{code} {reason}:
    text``."""

    def __init__(self, code: int, text: str):
        super().__init__(f"{code} {REASONS[code]}: {text}")


# --- the program's signatures and modules ---------------------------------------------------
class ReviseChecklist(dspy.Signature):
    """Write or revise the clearance checklist for an import shipment, as YAML (``items`` of
    id, do, tool, with, done). Keep done items as they are; revise only open items."""

    shipment: str = dspy.InputField(desc="the shipment file (JSON)")
    broker_notes: str = dspy.InputField(desc="the broker's notes (JSON)")
    checklist: str = dspy.InputField(desc="the current checklist (YAML), empty at first")
    failure: str = dspy.InputField(desc="why the last item could not be done, if any")
    revised_checklist: str = dspy.OutputField(desc="the whole checklist (YAML)")


class ClearItem(dspy.Signature):
    """Carry out one checklist item with the customs tools and report on it."""

    item: str = dspy.InputField(desc="the checklist item (YAML)")
    status: Literal["done", "retry_later", "replan", "rejected", "gave_up"] = dspy.OutputField()
    result: str = dspy.OutputField(desc="the item's result (an id or code) when done")
    detail: str = dspy.OutputField(desc="what went wrong, if anything")


class ChecklistPlanner(dspy.Module):
    """Writes the checklist, and revises it in place after a failure."""

    def __init__(self) -> None:
        super().__init__()
        self.revise = dspy.ChainOfThought(ReviseChecklist)

    def forward(self, shipment: str, broker_notes: str, checklist: str, failure: str) -> Any:
        return self.revise(
            shipment=shipment, broker_notes=broker_notes, checklist=checklist, failure=failure
        )


class CustomsClerk(dspy.Module):
    """Carries out one checklist item (one ReAct run per attempt)."""

    def __init__(self, tools: list[Any]) -> None:
        super().__init__()
        self.act = dspy.ReAct(ClearItem, tools=tools, max_iters=REACT_ITERS)

    def forward(self, item: str) -> Any:
        return self.act(item=item)


# --- the scripted model (answers on the conformance suite's fake OpenAI server) -------------
_MARKER = re.compile(r"\[\[ ## (\w+) ## \]\]\n?")


def _fields(text: str) -> dict[str, str]:
    """DSPy's ChatAdapter fields of a user message (``[[ ## name ## ]]`` sections); nested
    trajectory fields (``tool_name_0``, ``observation_0``) come out flat."""
    text = text.split("\n\nRespond with the corresponding output fields")[0]
    parts = _MARKER.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _answer(**fields: str) -> dict[str, Any]:
    body = "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items())
    return {"role": "assistant", "content": body + "\n\n[[ ## completed ## ]]"}


def _fresh_items(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The checklist for a shipment's facts (the notes trusted over the file)."""
    items = [
        ("classify_goods", f"Classify {facts['goods']} in the tariff",
         "search_tariff", {"description": facts["goods"]}),
        ("origin_certificate", f"Get a certificate of {facts['origin']} origin",
         "request_certificate", {"origin": facts["origin"], "importer": facts["importer"]}),
        ("file_declaration", f"Lodge the import declaration at {facts['port']}",
         "file_declaration",
         {"importer": facts["importer"], "commodity_code": "${classify_goods}",
          "certificate": "${origin_certificate}", "customs_value": facts["customs_value"],
          "port": facts["port"]}),
        ("pay_duties", "Pay the assessed duties from the deferment account",
         "pay_duties", {"declaration": "${file_declaration}", "account": facts["account"]}),
        ("book_collection", "Book the container's collection by the haulier",
         "book_collection",
         {"declaration": "${file_declaration}", "port": facts["port"],
          "haulier": facts["haulier"]}),
    ]  # fmt: skip
    return [
        {"id": i, "do": do, "tool": tool, "with": args, "done": False}
        for i, do, tool, args in items
    ]


def _planner(fields: dict[str, str]) -> dict[str, Any]:
    """The planner's answer: a fresh checklist, or the current one revised in place for the
    port or deferment account a failure names."""
    facts = json.loads(fields["shipment"]) | json.loads(fields.get("broker_notes") or "{}")
    current = yaml.safe_load(fields.get("checklist") or "") or {}
    failure = fields.get("failure", "")
    if not current:
        checklist = {"shipment": facts["shipment"], "items": _fresh_items(facts)}
        why = "No checklist yet: five items, from classification to collection."
    else:
        checklist = current
        port = re.search(r"lodge the declaration at ([\w-]+)", failure)
        account = re.search(r"use deferment account (DAN-\d+)", failure)
        for item in checklist["items"]:
            if item.get("done"):
                continue
            args = item["with"]
            if port and "port" in args:
                args["port"] = port.group(1)
                item["revised"] = f"port {port.group(1)}"
            if account and "account" in args:
                args["account"] = account.group(1)
                item["revised"] = f"account {account.group(1)}"
        why = f"Revising the open items after: {failure}"
    text = yaml.safe_dump(checklist, sort_keys=False, width=200)
    return _answer(reasoning=why, revised_checklist=text)


def _trajectory(fields: dict[str, str]) -> list[tuple[str, dict[str, Any], str]]:
    """The ReAct trajectory so far: (tool, arguments, observation) per call."""
    out = []
    n = 0
    while f"tool_name_{n}" in fields:
        args = json.loads(fields.get(f"tool_args_{n}") or "{}")
        out.append((fields[f"tool_name_{n}"], args, fields.get(f"observation_{n}", "")))
        n += 1
    return out


def _error(observation: str) -> tuple[int, str] | None:
    """The gateway's status line in a failed call's observation (the traceback's last line)."""
    if not observation.startswith("Execution error in "):
        return None
    found = re.findall(r"GatewayError: (\d{3}) [A-Za-z ]+: (.*)$", observation, re.MULTILINE)
    code, text = found[-1]
    return int(code), text


def _step(fields: dict[str, str], final: bool) -> dict[str, Any]:
    """The clerk's turn: the next tool call (ReAct's next_* fields), or, when ``final``, its
    report (the extract's fields)."""
    item = yaml.safe_load(fields["item"])
    calls = _trajectory(fields)
    made = [c for c in calls if c[0] != "finish"]

    def call(thought: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return _answer(next_thought=thought, next_tool_name=name, next_tool_args=json.dumps(args))

    def finish(thought: str) -> dict[str, Any]:
        return call(thought, "finish", {})

    if not made:
        return call(f"Start with {item['tool']}.", item["tool"], item["with"])
    name, args, seen = made[-1]
    error = _error(seen)
    if error:
        code, text = error
        if final:
            status = {503: "retry_later", 409: "replan"}.get(code, "rejected")
            return _answer(reasoning=f"The gateway said {code}.", status=status, result="",
                           detail=f"{code} {REASONS[code]}: {text}")  # fmt: skip
        if code == 504:
            timeouts = sum(1 for c in made if (_error(c[2]) or (0,))[0] == 504)
            return call("Timed out; again with a longer timeout.", name,
                        args | {"timeout_s": 30 * 2**timeouts})  # fmt: skip
        return finish(f"The gateway answered {code}; reporting.")
    answer = json.loads(seen)
    if "next_page" in answer:
        return call("More pages.", name, args | {"page": answer["next_page"]})
    if answer.get("status") == "PENDING":
        checks = sum(1 for c in made if c[0] == "certificate_status")
        if checks < MAX_STATUS_CHECKS:
            return call("Still pending; checking again.", "certificate_status",
                        {"request": answer["request"]})  # fmt: skip
        if final:
            why = f"certificate {answer['request']} still PENDING after {checks} status checks"
            return _answer(reasoning="No certificate.", status="gave_up", result="", detail=why)
        return finish("The chamber is not answering; giving up.")
    if final:
        return _answer(reasoning="Done.", status="done", result=str(answer["value"]), detail="")
    return finish("The item is done.")


def respond(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's chat completion for one DSPy request: the planner's checklist, the
    clerk's next ReAct step, or the clerk's report, told apart by the output fields the system
    message asks for.

    >>> item = yaml.safe_dump({"tool": "f", "with": {"a": 1}})
    >>> ask = {"messages": [{"role": "system", "content": "1. `next_tool_name` (str)"},
    ...                     {"role": "user", "content": f"[[ ## item ## ]]\\n{item}"}]}
    >>> respond(ask)["choices"][0]["message"]["content"].split("\\n")[4]
    'f'
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    system = next((str(m.get("content")) for m in messages if m.get("role") == "system"), "")
    user = next((str(m.get("content")) for m in messages[::-1] if m.get("role") == "user"), "")
    fields = _fields(user)
    if "`revised_checklist`" in system:
        return completion(body, _planner(fields))
    return completion(body, _step(fields, final="`next_tool_name`" not in system))


# --- the world ------------------------------------------------------------------------------
@dataclass
class World:
    """The tariff, the chamber of commerce, the customs declaration system, the duty ledger
    and the port's collection bookings."""

    label: Label
    shipment: str
    item: str = ""
    errors: list[str] = field(default_factory=list)
    certificates: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Certificate request -> its origin and status polls."""
    declarations: dict[str, dict[str, Any]] = field(default_factory=dict)
    accounts: set[str] = field(default_factory=lambda: {SHIPMENT["account"]})
    """Deferment accounts approved for the broker."""
    port: str = SHIPMENT["port"]
    """Where the container was discharged."""
    paid: dict[str, float] = field(default_factory=dict)
    collection: str = ""

    def __post_init__(self) -> None:
        self.errors = list(self.label.params.get("errors", ()))
        self.port = str(self.label.params.get("diverted_to", SHIPMENT["port"]))

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.label.params)

    def fault(self) -> None:
        """Raise the scenario's next error when the call belongs to the item it targets."""
        if not self.errors or self.item != self.params.get("step"):
            return
        text = self.errors.pop(0)
        if not self.errors and self.label.kind == RUNAWAY:
            raise GatewayError(422, f"{text}; submission abandoned")
        how = self.params.get("raise")
        if how == "timeout":
            raise GatewayError(504, text)
        if how == "replans" and len(self.errors) % 2 == 0:
            account = f"DAN-{8300000 + 17 * len(self.errors)}"
            self.accounts.add(account)
            raise GatewayError(409, f"{text}; deferment account suspended, use deferment "
                                    f"account {account}")  # fmt: skip
        raise GatewayError(503, text)


def make_tools(world: World) -> list[Any]:
    """The customs services, bound to one shipment's world."""

    def search_tariff(description: str, page: int = 1, timeout_s: int = 30) -> str:
        """Search the tariff for a goods description, a page of headings at a time.

        Args:
            description: the goods as the commercial invoice describes them
            page: the result page
            timeout_s: how long to wait for the tariff service
        """
        world.fault()
        pages = int(world.params.get("pages", 1))
        if page < pages:
            near = [f"84{page:02d}.{n}0.00" for n in range(3)]
            return json.dumps({"headings": near, "next_page": page + 1})
        code, rate = TARIFF.get(description, ("8467.29.85", 0.027))
        return json.dumps({"value": code, "duty_rate": rate})

    def request_certificate(origin: str, importer: str, timeout_s: int = 30) -> str:
        """Ask the exporter's chamber of commerce for a certificate of origin.

        Args:
            origin: the country of origin (ISO code)
            importer: the importer's EORI number
            timeout_s: how long to wait for the chamber
        """
        world.fault()
        request = f"COO-{world.label.seed}-{len(world.certificates)}"
        world.certificates[request] = {"origin": origin, "polls": 0}
        return json.dumps({"request": request, "status": "PENDING"})

    def certificate_status(request: str) -> str:
        """The state of a certificate request; the certificate once issued.

        Args:
            request: the certificate request
        """
        entry = world.certificates[request]
        entry["polls"] += 1
        if world.label.scenario == "loop_poll_stuck" or entry["polls"] < int(
            world.params.get("polls", 1)
        ):
            return json.dumps({"request": request, "status": "PENDING"})
        return json.dumps({"request": request, "status": "ISSUED", "value": request})

    def file_declaration(
        importer: str,
        commodity_code: str,
        certificate: str,
        customs_value: int,
        port: str,
        timeout_s: int = 30,
    ) -> str:
        """Lodge an import declaration with customs.

        Args:
            importer: the importer's EORI number
            commodity_code: the goods' commodity code
            certificate: the certificate of origin
            customs_value: the goods' customs value in GBP
            port: the port of entry
            timeout_s: how long to wait for the declaration system
        """
        world.fault()
        if port != world.port:
            raise GatewayError(409, f"no arrival of {world.shipment} at {port}: the vessel was "
                                    f"diverted; lodge the declaration at {world.port}")  # fmt: skip
        origin = world.certificates.get(certificate, {}).get("origin", "")
        if origin != SHIPMENT["origin"]:
            raise GatewayError(
                422,
                f"certificate {certificate} certifies {origin} origin; the bill of lading "
                f"shows goods loaded in {SHIPMENT['origin']}",
            )
        rate = next((r for c, r in TARIFF.values() if c == commodity_code), 0.027)
        mrn = f"26GB{world.label.seed}{len(world.declarations)}"
        world.declarations[mrn] = {
            "code": commodity_code,
            "value": customs_value,
            "duty": round(customs_value * rate, 2),
            "port": port,
        }
        return json.dumps({"value": mrn, "duty": world.declarations[mrn]["duty"]})

    def pay_duties(declaration: str, account: str, timeout_s: int = 30) -> str:
        """Pay a declaration's assessed duties from a deferment account.

        Args:
            declaration: the declaration's MRN
            account: the broker's deferment account
            timeout_s: how long to wait for the duty ledger
        """
        world.fault()
        if account not in world.accounts:
            raise GatewayError(422, f"no deferment approval on file for account {account}")
        world.paid[declaration] = world.declarations[declaration]["duty"]
        return json.dumps({"value": f"PAY-{world.label.seed}-{len(world.paid)}"})

    def book_collection(declaration: str, port: str, haulier: str, timeout_s: int = 30) -> str:
        """Book the container's collection by the haulier once the goods are released.

        Args:
            declaration: the declaration's MRN
            port: the port holding the container
            haulier: the haulier's booking address
            timeout_s: how long to wait for the port's system
        """
        world.fault()
        if port != world.port:
            raise GatewayError(422, f"no container of {world.shipment} at {port}")
        code = world.declarations[declaration]["code"]
        if code != TARIFF[SHIPMENT["goods"]][0]:
            raise GatewayError(
                422,
                f"release refused: documentary check found {SHIPMENT['goods']} declared under "
                f"{code}",
            )
        world.collection = f"COL-{world.label.seed}"
        return json.dumps({"value": world.collection})

    return [
        search_tariff,
        request_certificate,
        certificate_status,
        file_declaration,
        pay_duties,
        book_collection,
    ]


# --- the app --------------------------------------------------------------------------------
class Failed(Exception):
    """The shipment was not released and collected (the reason is the message)."""


class Broker:
    """One shipment, from its arrival to the watched collection."""

    def __init__(self, label: Label):
        self.label = label
        self.world = World(label, shipment=f"SH-{label.seed % 9000 + 1000}")
        self.planner = ChecklistPlanner()
        self.clerk = CustomsClerk(make_tools(self.world))
        self.checklist: dict[str, Any] = {}

    def plan(self, failure: str) -> None:
        notes = {
            k: self.label.params[k]
            for k in ("goods", "origin", "customs_value", "account")
            if k in self.label.params
        }
        answer = self.planner(
            shipment=json.dumps({"shipment": self.world.shipment} | SHIPMENT),
            broker_notes=json.dumps(notes),
            checklist=yaml.safe_dump(self.checklist, sort_keys=False) if self.checklist else "",
            failure=failure,
        )
        self.checklist = yaml.safe_load(answer.revised_checklist)

    def attempt(self, item: dict[str, Any]) -> Any:
        """One clerk run of an item, its ``${id}`` arguments filled from done items."""
        results = {i["id"]: i.get("result") for i in self.checklist["items"] if i.get("done")}
        args = {
            k: results.get(v[2:-1], v) if isinstance(v, str) and v.startswith("${") else v
            for k, v in item["with"].items()
        }
        shown = {k: item[k] for k in ("id", "do", "tool")} | {"with": args}
        self.world.item = item["id"]
        return self.clerk(item=yaml.safe_dump(shown, sort_keys=False, width=200))

    def work(self) -> None:
        failure = ""
        for revision in range(1, MAX_REVISIONS + 1):
            self.plan(failure)
            failure = ""
            for item in self.checklist["items"]:
                if item.get("done"):
                    continue
                for attempt in range(1, MAX_ITEM_ATTEMPTS + 1):
                    report = self.attempt(item)
                    if report.status == "done":
                        item["done"], item["result"] = True, report.result
                        break
                    if report.status == "retry_later" and attempt < MAX_ITEM_ATTEMPTS:
                        continue
                    if report.status == "replan" and revision < MAX_REVISIONS:
                        failure = f"{item['id']}: {report.detail}"
                        break
                    raise Failed(f"{item['id']}: {report.status}: {report.detail}")
                if failure:
                    break
            if not failure:
                return
        raise Failed(failure)

    def check(self, tracer: otel_trace.Tracer) -> None:
        """The app's own checks after collection is booked: the declaration against the
        invoice, then the container's release."""
        with tracer.start_as_current_span("verify assessment") as span:
            mrn = next(
                i["result"] for i in self.checklist["items"] if i["id"] == "file_declaration"
            )
            declared = self.world.declarations[mrn]
            span.set_attribute("customs.declaration", mrn)
            span.set_attribute("customs.declared_value", int(declared["value"]))
            span.set_attribute("invoice.value", int(SHIPMENT["customs_value"]))
            if declared["value"] != SHIPMENT["customs_value"]:
                reason = (
                    f"declared customs value {declared['value']} differs from the invoice "
                    f"value {SHIPMENT['customs_value']} (duty paid {self.world.paid[mrn]})"
                )
                span.set_status(Status(StatusCode.ERROR, reason))
                raise Failed(reason)
        with tracer.start_as_current_span("watch release") as span:
            states = ("RELEASED", "GATED_OUT", "IN_TRANSIT", "DELIVERED", "DELIVERED")
            for poll, state in enumerate(states, 1):
                if self.label.scenario == "external_hold" and poll > int(
                    self.label.params["polls"]
                ):
                    reason = "container held at the depot: post-clearance audit by Border Force"
                    span.set_status(Status(StatusCode.ERROR, reason))
                    raise Failed(reason)
                span.add_event("container", {"poll": poll, "state": state})

    def run(self, tracer: otel_trace.Tracer) -> str:
        with tracer.start_as_current_span(f"clear {self.world.shipment}") as root:
            root.set_attribute("customs.shipment", self.world.shipment)
            try:
                self.work()
                self.check(tracer)
                root.set_attribute("customs.outcome", "delivered")
            except Failed as e:
                root.set_attribute("customs.outcome", "failed")
                root.set_status(Status(StatusCode.ERROR, str(e)))
            return format(root.get_span_context().trace_id, "032x")


_ABSENT = object()


def _dspy_methods() -> dict[tuple[type, str], Any]:
    """The methods OpenInference's DSPy instrumentor wraps, as each class holds them now
    (``_ABSENT`` where the class inherits it)."""
    classes = [dspy.LM, dspy.Predict, *dspy.Predict.__subclasses__(), dspy.Retrieve]
    classes += [dspy.Module, dspy.ColBERTv2, dspy.Adapter, dspy.Tool]
    names = ("__call__", "acall", "forward", "aforward")
    return {(c, n): vars(c).get(n, _ABSENT) for c in classes for n in names}


def _put_back(methods: dict[tuple[type, str], Any]) -> None:
    """Each class's methods as ``_dspy_methods`` found them."""
    for (cls, name), method in methods.items():
        if method is not _ABSENT:
            setattr(cls, name, method)
        elif name in vars(cls):
            delattr(cls, name)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the customs scenarios with OpenInference's DSPy instrumentor on ``provider``.

    The instrumentor's uninstrument (0.1.48) follows a method's whole ``__wrapped__`` chain, so
    it also strips DSPy's own ``@with_callbacks`` from ``Module.__call__``, ``BaseLM.__call__``
    and ``Tool.__call__`` (defining them on ``LM`` too): DSPy callbacks (MLflow's DSPy
    autologging, chorale's) would never fire again in the process. The play puts the methods
    back as it found them.
    """
    out: dict[str, str] = {}
    if not labels:
        return out
    from openinference.instrumentation.dspy import DSPyInstrumentor

    methods = _dspy_methods()
    instrumentor = DSPyInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    # ReAct logs a warning for every failed tool call; the spans carry them
    react_log = logging.getLogger("dspy.predict.react")
    level = react_log.level
    react_log.setLevel(logging.ERROR)
    try:
        with ModelServer(respond=respond) as server:
            lm = dspy.LM(
                f"openai/{MODEL}",
                api_base=server.base_url("corpus-customs"),
                api_key="test",
                cache=False,
            )
            tracer = provider.get_tracer("customs-app")
            with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
                for label in labels:
                    out[label.run] = Broker(label).run(tracer)
    finally:
        react_log.setLevel(level)
        instrumentor.uninstrument()
        _put_back(methods)
    return out
