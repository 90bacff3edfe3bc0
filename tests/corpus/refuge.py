"""A refuge agent: an alpine hut resupplied for the summer season by helicopter, written as a new
user of the planscope SDK would from its public docs (README.md, docs/sdk.md,
docs/semantic-conventions.md and the docstrings of ``planscope``'s public names) and nothing else.

Sealed-23 split only (see README.md). The task: before the hut opens, count what its stores
lack, read the mountain forecast for a flying window, order the provisions from the valley
supplier, charter a helicopter lift to the hut's landing pad (the load flown in rotations), pay
the supplier's invoice, send the warden the notice.

* **asyncio** throughout: the run, the planner, the executor and the tools are ``async def``
  under the SDK's decorators (``@planscope.run``, ``@planscope.planner``, ``@planscope.llm``,
  ``@planscope.step``, ``@planscope.tool``, on methods: ``self`` is not captured);
* the plan is a ``planscope.Plan`` of ``PlanStep`` s with ``depends_on`` / ``requires`` /
  ``produces``, a **DAG**: the steps whose dependencies are done run **concurrently** (one
  ``asyncio.gather`` per wave); each executor is handed the blackboard's values of its step's
  ``requires`` and records them with ``planscope.record_context`` (recorded even when empty);
* a run's ``RetryBudget`` (5 attempts a step, 3 re-plans, enforced): a step failing with
  passing trouble is tried again until the budget refuses the attempt; a step that cannot be
  done that way asks the planner for a new version (``Plan.replan``) after
  ``record_replan_request``; a refusal is final; the app's check of the lift's day, pad and
  load ends the run with ``record_outcome_check``;
* the planner is a scripted model call (``@planscope.llm``, an OpenAI-shaped answer with usage)
  that reads the booking request and trusts the hut-keeper's notes over it: the scenario's
  wrong value comes from a note.

Errors are the app's own exception classes (``Unsettled``: the attempt is over, try the step
again; ``LineBusy``: call again at once; ``Refused``: final; ``NeedsNewPlan``), their texts the
radio log of a mountain operation.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import math
from typing import Any

import planscope
from opentelemetry.sdk.trace import TracerProvider
from planscope import Plan, PlanStep, RetryBudget, RetryBudgetExceeded

from ._labels import RUNAWAY, STARVED, Label

REQUEST: dict[str, Any] = {
    "hut": "cabane-des-dix",
    "col": "col-de-riedmatten",
    "season_start": "2027-06-12",
    "hut_pad": "pad-2928",
    "supplier": "herens-provisions",
    "valley_depot": "arolla-depot",
    "account": "CH44-0921-7731",
    "warden": "warden@cabane-des-dix.example",
}
SHORTFALL = {
    "cabane-des-dix": {"flour_kg": 120, "rice_kg": 80, "cheese_kg": 60, "gas_kg": 420},
    "cabane-des-vignettes": {"flour_kg": 90, "pasta_kg": 70, "gas_kg": 280},
}
PADS = {"pad-2928": "cabane-des-dix", "pad-3160": "cabane-des-vignettes"}
LEDGERS = {"herens-provisions": {"CH44-0921-7731"}, "bagnes-provisions": {"CH51-3307-1184"}}
HAMPER = {"flour_kg": 50, "rice_kg": 50}
"""What the order desk sends when it is told no shortfall: its standard hamper."""
ROTATION_KG = 450
MAX_CALLS = 8
"""Calls of one tool inside one executor attempt before the executor stops trying."""
MAX_CHECKS = 15
BUDGET = RetryBudget(max_attempts_per_step=5, max_replans=3)


class Unsettled(Exception):
    """Passing trouble (weather, a busy line, a dropped link): worth another go."""


class LineBusy(Exception):
    """A busy line: the executor calls again at once, for a later slot."""


class Refused(Exception):
    """A refusal that another go does not change."""


class NeedsNewPlan(Exception):
    """The step cannot be done the way the plan says: the planner must revise it."""

    def __init__(self, step: str, text: str) -> None:
        super().__init__(text)
        self.step = step


def _steps(
    no_input: bool = False, porters: bool = False, route: str = "bank transfer"
) -> list[PlanStep]:
    """The resupply DAG: the stores count and the forecast first, side by side; the order;
    the lift and the payment side by side; the warden's notice."""
    lift = (
        PlanStep(
            "book_porters",
            "hire porters to carry the load up from the depot",
            tool="hire_porters",
            depends_on=["order_provisions", "get_weather_window"],
            requires=["order", "window", "hut_pad"],
            produces=["lift"],
        )
        if porters
        else PlanStep(
            "book_helicopter",
            "charter a helicopter lift to the hut's pad inside the window",
            tool="charter_lift",
            depends_on=["order_provisions", "get_weather_window"],
            requires=["order", "window", "hut_pad"],
            produces=["lift"],
        )
    )
    steps = [
        PlanStep(
            "count_stores", "count what the hut's stores lack", tool="hut_inventory",
            requires=["hut"], produces=["shortfall"],
        ),
        PlanStep(
            "get_weather_window", "find a flying window before the season starts",
            tool="mountain_forecast", requires=["col", "season_start"], produces=["window"],
        ),
        PlanStep(
            "order_provisions", "order the shortfall from the valley supplier",
            tool="place_provision_order", depends_on=["count_stores"],
            requires=["shortfall", "supplier", "valley_depot"], produces=["order"],
        ),
        lift,
        PlanStep(
            "pay_supplier", f"pay the supplier's invoice by {route}", tool="pay_invoice",
            depends_on=["order_provisions"], requires=["order", "account"],
            produces=["payment"], irreversible=True,
        ),
        PlanStep(
            "notify_warden", "send the warden the lift and payment notice",
            tool="send_warden_notice", depends_on=[lift.id, "pay_supplier"],
            requires=["lift", "payment", "warden", *(["bulletin"] if no_input else [])],
            produces=["notice"],
        ),
    ]  # fmt: skip
    if no_input:
        steps.insert(
            2,
            PlanStep(
                "read_bulletin",
                "read today's avalanche bulletin for the notice",
                tool="avalanche_bulletin",
                produces=["bulletin"],
            ),
        )
    return steps


ROUTES = ["bank transfer", "card", "postal order", "supplier credit"]


async def _radio() -> None:
    """A round trip over the hut's radio: the other executors of the wave go on meanwhile."""
    await asyncio.sleep(0)


class Mountain:
    """The supplier, forecast office, charter, bank and hut radio, and the scenario's trouble."""

    def __init__(self, label: Label) -> None:
        self.label = label
        p = label.params
        self.trouble: list[str] = list(p.get("troubles", ()))
        self.target = str(p.get("step", "")) if "troubles" in p else ""
        self.mode = str(p.get("mode", ""))
        self.polls = 0
        self.orders: dict[str, dict[str, Any]] = {}

    def _trouble(self, step: str) -> None:
        """The scenario's trouble at ``step``'s own tool: passing trouble while it lasts; a
        runaway loop's line then closes for good, a flaky one's works."""
        if step != self.target or self.mode == "replans":
            return
        if self.trouble:
            raise (LineBusy if self.mode == "tool" else Unsettled)(self.trouble.pop(0))
        if self.mode == "tool" and self.label.kind == RUNAWAY:
            raise Refused("the valley office closed the line for today")

    @planscope.tool(effect="read", resource="refuge:stores")
    async def hut_inventory(self, hut: str) -> dict[str, Any]:
        await _radio()
        if hut not in SHORTFALL:
            raise Refused(f"no hut answers the radio as {hut!r}")
        return {"hut": hut, "short": dict(SHORTFALL[hut])}

    @planscope.tool(effect="read", resource="meteo:forecast")
    async def mountain_forecast(self, col: str, from_day: str) -> dict[str, Any]:
        await _radio()
        if not col.startswith("col-"):
            raise Refused(f"the forecast office has no col named {col!r}")
        start = dt.date.fromisoformat(from_day)
        return {"state": "pending", "run": f"FC-{start:%m%d}", "from_day": from_day}

    @planscope.tool(effect="read", resource="meteo:forecast")
    async def forecast_status(self, run: str, from_day: str) -> dict[str, Any]:
        await _radio()
        self.polls += 1
        if self.label.scenario == "loop_poll_stuck" or self.polls < int(
            self.label.params.get("polls", 1)
        ):
            return {"state": "pending", "run": run, "check": self.polls}
        day = dt.date.fromisoformat(from_day) - dt.timedelta(days=3)
        return {"state": "published", "run": run, "window": {"day": day.isoformat()}}

    @planscope.tool(effect="read", resource="supplier:catalogue")
    async def supplier_catalogue(self, supplier: str, page: int) -> dict[str, Any]:
        await _radio()
        pages = int(self.label.params.get("pages", 1))
        items = ["flour_kg", "rice_kg", "pasta_kg", "cheese_kg", "gas_kg", "firewood_kg"]
        if page < pages:
            return {"page": page, "items": [f"lot-{page}-{i}" for i in range(6)], "next": page + 1}
        return {"page": page, "items": items, "next": None}

    @planscope.tool(effect="write", resource="supplier:orders")
    async def place_provision_order(
        self, supplier: str, lines: dict[str, int], deliver_to: str, for_hut: str, slot: str
    ) -> dict[str, Any]:
        self._trouble("order_provisions")
        if supplier not in LEDGERS:
            raise Refused(f"no supplier in the valley trades as {supplier!r}")
        number = f"ORD-{len(self.orders) + 731}"
        order = {"order": number, "supplier": supplier, "lines": lines, "for_hut": for_hut}
        self.orders[number] = order | {"kg": sum(lines.values()), "depot": deliver_to}
        return self.orders[number]

    @planscope.tool(effect="write", resource="charter:lifts")
    async def charter_lift(self, pad: str, day: str, order: str, slot: str) -> dict[str, Any]:
        await _radio()
        self._trouble("book_helicopter")
        if self.label.scenario == "legit_replan":
            raise NeedsNewPlan("book_helicopter", f"{pad} under snow until July, no landing")
        if pad not in PADS:
            raise Refused(f"no landing pad {pad!r} on the charter's map")
        load = self.orders.get(order)
        if load is None:
            raise Refused("nothing at the depot to lift")
        if load["for_hut"] != PADS[pad]:
            raise Refused(f"consignment {order} is for {load['for_hut']!r}, not {PADS[pad]}")
        return {"lift": f"LFT-{order[4:]}", "day": day, "pad": pad, "kg": load["kg"]}

    @planscope.tool(effect="write", resource="charter:lifts")
    async def fly_rotation(self, lift: str, rotation: int, kg: int, left_kg: int) -> dict[str, Any]:
        await _radio()
        return {"lift": lift, "rotation": rotation, "left_kg": left_kg - kg}

    @planscope.tool(effect="write", resource="porters:crew")
    async def hire_porters(self, depot: str, hut: str, day: str, kg: int) -> dict[str, Any]:
        await _radio()
        return {"crew": f"PRT-{kg}", "day": day, "loads": math.ceil(kg / 25)}

    @planscope.tool(effect="irreversible", resource="bank:payments")
    async def pay_invoice(
        self, supplier: str, order: str, account: str, route: str, cut_off: str
    ) -> str:
        await _radio()
        self._trouble("pay_supplier")
        if self.mode == "replans" and self.trouble:
            raise NeedsNewPlan("pay_supplier", self.trouble.pop(0))
        if not order:
            raise Refused("no invoice to pay")
        if account not in {a for ledger in LEDGERS.values() for a in ledger}:
            raise Refused(f"the valley bank holds no account {account!r}")
        if account not in LEDGERS[supplier]:
            raise Refused(f"{supplier} keeps no ledger for account {account}")
        return f"PAY-{order[4:]}-{route.split()[0]}"

    @planscope.tool(effect="read", resource="refuge:avalanche")
    async def avalanche_bulletin(self) -> dict[str, Any]:
        await _radio()
        return {"danger": 2, "aspects": ["N", "NE"]}

    @planscope.tool(effect="write", resource="refuge:radio")
    async def send_warden_notice(
        self, warden: str, lift: dict[str, Any] | None, payment: str, bulletin: str
    ) -> str:
        if "@" not in warden:
            raise Refused(f"no warden reachable at {warden!r}")
        if not lift or not payment:
            raise Refused("a notice without a lift or a payment")
        return f"notice to {warden}: {lift.get('day')}"

    @planscope.tool(effect="read", resource="refuge:radio")
    async def pad_report(self, pad: str) -> str:
        await _radio()
        if self.label.scenario == "external_after":
            return f"rockfall on {pad} overnight: {self.label.params['buried']} of the load buried"
        return "clear"


class Resupply:
    """One resupply run: the planner, the executor, the DAG of waves, the app's check."""

    def __init__(self, label: Label) -> None:
        self.label = label
        self.world = Mountain(label)
        p = label.params
        self.notes = {k: p[k] for k in REQUEST if k in p}
        # a long season ahead: the stores also lack a winter's firewood, flown in many rotations
        self.extra = {"firewood_kg": int(p["firewood_kg"])} if "firewood_kg" in p else {}
        self.board: dict[str, Any] = {}
        self.done: set[str] = set()
        self.plan: Plan | None = None
        self.trace_id = ""

    # --- the planner: a scripted model call ---------------------------------------------------
    @planscope.llm("refuge-planner-v1", provider="scripted")
    async def think(self, prompt: str) -> dict[str, Any]:
        facts = REQUEST | self.notes  # the hut-keeper's notes win over the request
        answer = {
            "facts": facts,
            "no_input": self.label.scenario == "no_input_step",
            "porters": "no landing" in prompt,  # a pad under snow: porters carry the load
            "route": ROUTES[prompt.count("pay_supplier:") % len(ROUTES)],
        }
        return {
            "choices": [{"message": {"role": "assistant", "content": json.dumps(answer)}}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 60},
        }

    @planscope.planner("refuge-planner")
    async def make_plan(self, objective: str, problems: list[str]) -> Plan:
        prompt = f"Plan the resupply: {objective}\nNotes: {json.dumps(self.notes)}"
        if problems:
            prompt += "\nProblem: " + "\n".join(problems)
        answer = json.loads((await self.think(prompt))["choices"][0]["message"]["content"])
        self.board.update(answer["facts"])
        steps = _steps(answer["no_input"], answer["porters"], answer["route"])
        if self.plan is None:
            return Plan(steps, id="resupply", objective=objective)
        return self.plan.replan(steps, reason=problems[-1])

    # --- the executor ---------------------------------------------------------------------------
    @planscope.step(executor="quartermaster")
    async def execute(self, step: PlanStep, context: dict[str, Any]) -> dict[str, Any]:
        planscope.record_context(context)
        attempt = handle.attempt if (handle := planscope.current_step()) else 1
        work = getattr(self, f"_{step.id}")
        out: dict[str, Any] = await work(step, context, attempt)
        return out

    async def _retrying(self, call: Any, first: int) -> Any:
        """The executor's own retries of one tool call inside an attempt, a later slot each."""
        for n in range(MAX_CALLS):
            try:
                return await call(f"{first + n:02d}:30")
            except LineBusy:
                if n == MAX_CALLS - 1:
                    raise
        raise AssertionError("unreachable")

    async def _count_stores(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        stores = await self.world.hut_inventory(hut=str(c.get("hut", "")))
        return {"shortfall": stores | {"short": stores["short"] | self.extra}}

    async def _get_weather_window(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        col = str(c.get("col") or c.get("hut", ""))  # given no col, it asks for the place it has
        day = str(c.get("season_start") or REQUEST["season_start"])
        seen = await self.world.mountain_forecast(col=col, from_day=day)
        checks = 0
        while seen["state"] == "pending":
            checks += 1
            if checks > MAX_CHECKS:
                raise Refused(f"forecast run {seen['run']} still pending after {MAX_CHECKS} checks")
            seen = await self.world.forecast_status(run=seen["run"], from_day=day)
        return {"window": seen["window"]}

    async def _order_provisions(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        supplier = str(c.get("supplier", ""))
        stores = c.get("shortfall") or {}
        lines = dict(stores.get("short") or HAMPER)  # told nothing, it orders the hamper
        page: int | None = 1
        found: set[str] = set()
        while page is not None and not set(lines) <= found:
            seen = await self.world.supplier_catalogue(supplier=supplier, page=page)
            found |= set(seen["items"])
            page = seen["next"]
        lines = {k: v for k, v in lines.items() if k in found}

        async def place(slot: str) -> Any:
            return await self.world.place_provision_order(
                supplier=supplier,
                lines=lines,
                deliver_to=str(c.get("valley_depot", "")),
                for_hut=str(stores.get("hut", "")),
                slot=slot,
            )

        return {"order": await self._retrying(place, 5 + attempt)}

    async def _book_helicopter(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        order = c.get("order") or {}
        # given no window, it books the first slot it can: tomorrow
        day = str((c.get("window") or {"day": "2027-05-03"})["day"])
        pad = str(c.get("hut_pad", ""))

        async def charter(slot: str) -> Any:
            return await self.world.charter_lift(
                pad=pad, day=day, order=str(order.get("order", "")), slot=slot
            )

        lift = await self._retrying(charter, 6 + attempt)
        left, rotation = int(lift["kg"]), 0
        while left > 0:
            rotation += 1
            flown = await self.world.fly_rotation(
                lift=lift["lift"], rotation=rotation, kg=min(ROTATION_KG, left), left_kg=left
            )
            left = int(flown["left_kg"])
        return {"lift": lift | {"rotations": rotation}}

    async def _book_porters(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        order, day = c.get("order") or {}, str((c.get("window") or {}).get("day", ""))
        crew = await self.world.hire_porters(
            depot=str(order.get("depot", "")), hut=str(order.get("for_hut", "")), day=day,
            kg=int(order.get("kg", 0)),
        )  # fmt: skip
        return {"lift": {"lift": crew["crew"], "day": day, "pad": c.get("hut_pad", "")}}

    async def _pay_supplier(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        order = c.get("order") or {}
        route = step.description.rsplit(" by ", 1)[1]

        async def pay(slot: str) -> Any:
            return await self.world.pay_invoice(
                supplier=str(order.get("supplier", "")),
                order=str(order.get("order", "")),
                account=str(c.get("account", "")),
                route=route,
                cut_off=slot,
            )

        return {"payment": await self._retrying(pay, 8 + attempt)}

    async def _read_bulletin(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        return {"bulletin": json.dumps(await self.world.avalanche_bulletin())}

    async def _notify_warden(self, step: PlanStep, c: dict[str, Any], attempt: int) -> Any:
        notice = await self.world.send_warden_notice(
            warden=str(c.get("warden", "")),
            lift=c.get("lift"),
            payment=str(c.get("payment", "")),
            bulletin=str(c.get("bulletin", "")),
        )
        return {"notice": notice}

    # --- the app: waves of the DAG, re-plans, the check -----------------------------------------
    def _handed(self, step: PlanStep) -> dict[str, Any]:
        keys = list(step.requires)
        if self.label.kind == STARVED and step.id == self.label.step:
            keys = list(self.label.params["given"])
        return {k: self.board[k] for k in keys if k in self.board}

    async def _attempts(self, step: PlanStep) -> dict[str, Any]:
        while True:
            try:
                out: dict[str, Any] = await self.execute(step, self._handed(step))
                return out
            except Unsettled:
                continue  # the budget refuses the attempt that is one too many

    async def _carry_out(self, plan: Plan) -> None:
        while todo := [s for s in plan.topological_order() if s.id not in self.done]:
            wave = [s for s in todo if set(s.depends_on) <= self.done]
            got = await asyncio.gather(*(self._attempts(s) for s in wave), return_exceptions=True)
            for step, out in zip(wave, got, strict=True):
                if isinstance(out, dict):
                    self.board.update(out)
                    self.done.add(step.id)
            failed = [out for out in got if isinstance(out, BaseException)]
            if failed:
                raise failed[0]

    def _check(self) -> str:
        """Why the hut is not resupplied as asked ('' when it is)."""
        opens = dt.date.fromisoformat(REQUEST["season_start"])
        lift, order = self.board["lift"], self.board["order"]
        day = dt.date.fromisoformat(lift["day"])
        if not opens - dt.timedelta(days=7) <= day < opens:
            return f"the lift on {day} is not in the week before the hut opens on {opens}"
        if lift["pad"] != REQUEST["hut_pad"]:
            return f"the load went to {lift['pad']}"
        short = SHORTFALL[REQUEST["hut"]]
        missing = [k for k, v in short.items() if order["lines"].get(k, 0) < v]
        return f"the order lacks {', '.join(missing)}" if missing else ""

    @planscope.run("refuge-resupply", variant="dag-async", budget=BUDGET)
    async def resupply(self, objective: str) -> None:
        run = planscope.current_run()
        assert run is not None
        self.trace_id = format(run.span.get_span_context().trace_id, "032x")
        problems: list[str] = []
        try:
            self.plan = await self.make_plan(objective, problems)
            while True:
                try:
                    await self._carry_out(self.plan)
                    break
                except NeedsNewPlan as e:
                    planscope.record_replan_request(str(e), step_id=e.step)
                    problems.append(f"{e.step}: {e}")
                    self.plan = await self.make_plan(objective, problems)
        except (Refused, RetryBudgetExceeded) as e:
            planscope.set_outcome("failure", reason=f"{type(e).__name__}: {e}")
            raise
        why = self._check()
        planscope.record_outcome_check(not why, name="lift_before_opening", reason=why or None)
        if not why:
            report = await self.world.pad_report(pad=REQUEST["hut_pad"])
            if report != "clear":
                planscope.set_outcome("failure", reason=report)


def play(labels: list[Label], provider: TracerProvider) -> dict[str, str]:
    """Run the refuge scenarios with the planscope SDK on ``provider``; run name -> trace id."""
    planscope.configure(tracer_provider=provider)
    out = {}
    for label in labels:
        app = Resupply(label)
        objective = f"resupply {REQUEST['hut']} before it opens on {REQUEST['season_start']}"
        with contextlib.suppress(Refused, RetryBudgetExceeded):  # the run span holds it
            asyncio.run(app.resupply(objective))
        out[label.run] = app.trace_id
    return out
