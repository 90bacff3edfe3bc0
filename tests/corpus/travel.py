"""A travel-booking agent instrumented with the planscope decorators (written for the corpus).

The planner turns "fly to a city on a date for some nights" into five steps (find a flight,
book it, find a hotel, book it, send the itinerary); executors run them against a small airline
and hotel world with real state. The scenario (see ``_labels.py``) changes only the world (a
hotel API that times out, an airline that cancels, a hotel search with many pages) or what the
planner or an executor receives (a misread airport, an off-by-one check-in date, an empty
context); the agent's own code reacts as agents do: it retries transient errors a few times,
replans when a fare is sold out, and gives up.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import planscope
from opentelemetry import trace
from planscope import Plan, PlanStep

from ._labels import Label

CITIES = {"Lyon": "LYS", "Lisbon": "LIS", "Porto": "OPO", "Nice": "NCE", "Oslo": "OSL"}
MAX_ATTEMPTS = 8
"""The agent's own give-up point for a step (its retry budget, not enforced by planscope)."""


class TransientError(Exception):
    """A failure worth retrying (timeouts, 5xx)."""


class BookingError(Exception):
    """A refusal that retrying does not change."""


@dataclass
class World:
    """Airline and hotel state, and the faults the scenario puts in it."""

    label: Label
    rng: random.Random
    flights: dict[str, dict[str, Any]] = field(default_factory=dict)
    hotels: dict[str, dict[str, Any]] = field(default_factory=dict)
    bookings: dict[str, dict[str, Any]] = field(default_factory=dict)
    emails: list[str] = field(default_factory=list)
    failures: dict[str, list[str]] = field(default_factory=dict)
    """Transient errors each tool raises next, in order."""
    broken: dict[str, list[str]] = field(default_factory=dict)
    """Tools that fail on every call (cycling through these error texts)."""
    sold_out: int = 0

    def __post_init__(self) -> None:
        p, sc = self.label.params, self.label.scenario
        tool = {"find_flight": "search_flights", "find_hotel": "search_hotels"}
        if sc == "flaky_step":
            self.failures[tool[p["step"]]] = list(p["errors"])
        if sc == "tool_retry_recovers":
            self.failures["book_hotel"] = list(p["errors"])
        if sc == "loop_step_varying":
            self.broken[tool[p["step"]]] = list(p["errors"])
        if sc == "loop_tool_in_step":
            self.broken["book_flight"] = list(p["errors"])
        if sc == "loop_across_replans":
            self.broken["book_hotel"] = list(p["errors"])
        if sc == "legit_replan":
            self.sold_out = int(p["sold_out"])
        self.calls: dict[str, int] = {}

    def fail(self, tool: str) -> None:
        """Raise the scenario's transient error for this call of ``tool``, if any."""
        n = self.calls[tool] = self.calls.get(tool, 0) + 1
        if self.failures.get(tool):
            raise TransientError(self.failures[tool].pop(0))
        errors = self.broken.get(tool)
        if errors:
            raise TransientError(errors[(n - 1) % len(errors)])


# --- tools (each call is an execute_tool span with its arguments captured) -------------------
def _tools(world: World) -> dict[str, Any]:
    @planscope.tool(effect="read", resource="airline")
    def search_flights(airport: str, date: str, flex_days: int = 0) -> list[dict[str, Any]]:
        world.fail("search_flights")
        found = []
        for i in range(3):
            fid = f"FL{world.rng.randint(100, 999)}"
            world.flights[fid] = {"id": fid, "to": airport, "date": date, "price": 90 + 40 * i}
            found.append(world.flights[fid])
        return found

    @planscope.tool(effect="write", resource="airline")
    def book_flight(flight_id: str, passenger: str) -> dict[str, Any]:
        world.fail("book_flight")
        if world.sold_out > 0:
            world.sold_out -= 1
            raise BookingError(f"fare for {flight_id} is sold out")
        ref = f"PNR{world.rng.randint(10000, 99999)}"
        world.bookings[ref] = {"flight": world.flights[flight_id], "passenger": passenger}
        return {"ref": ref, **world.flights[flight_id]}

    @planscope.tool(effect="read", resource="hotels")
    def search_hotels(city: str, checkin: str, nights: int, page: int = 1) -> dict[str, Any]:
        world.fail("search_hotels")
        pages = (
            int(world.label.params.get("pages", 1)) if world.label.scenario == "pagination" else 1
        )
        if page < pages:
            return {"hotels": [], "next_page": page + 1}
        hid = f"H{world.rng.randint(100, 999)}"
        world.hotels[hid] = {"id": hid, "city": city, "checkin": checkin, "nights": nights}
        return {"hotels": [world.hotels[hid]], "next_page": None}

    @planscope.tool(effect="write", resource="hotels")
    def book_hotel(hotel_id: str, flight_ref: str) -> dict[str, Any]:
        world.fail("book_hotel")
        hotel = world.hotels.get(hotel_id)
        booking = world.bookings.get(flight_ref)
        if hotel is None or booking is None:
            raise BookingError(f"unknown hotel {hotel_id!r} or flight booking {flight_ref!r}")
        arrival = booking["flight"]["to"]
        if CITIES.get(hotel["city"]) != arrival:
            raise BookingError(
                f"guest arrives at {arrival}, which is not near hotel {hotel_id} in {hotel['city']}"
            )
        ref = f"HB{world.rng.randint(10000, 99999)}"
        world.bookings[ref] = {"hotel": hotel, "flight_ref": flight_ref}
        return {"ref": ref, "checkin": hotel["checkin"]}

    @planscope.tool(effect="irreversible", resource="email")
    def send_email(to: str, body: str) -> str:
        if not body.strip():
            raise BookingError("refusing to send an empty itinerary")
        world.emails.append(body)
        return "sent"

    @planscope.tool(effect="read", resource="airline")
    def booking_status(ref: str) -> str:
        if world.label.scenario == "external_cancel":
            raise BookingError(f"booking {ref} was cancelled by the airline (schedule change)")
        return "confirmed"

    return {
        f.__name__: f
        for f in (
            search_flights,
            book_flight,
            search_hotels,
            book_hotel,
            send_email,
            booking_status,
        )
    }


# --- planner ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trip:
    city: str
    date: str
    nights: int
    passenger: str


def _plan(trip: Trip, label: Label, version: int = 1) -> tuple[Plan, dict[str, Any]]:
    """The plan and the facts the planner hands to the executors (misread under a fault)."""
    airport = CITIES[trip.city]
    checkin = trip.date
    if label.scenario == "wrong_airport":
        others = [c for c in CITIES.values() if c != airport]
        airport = others[int(label.params["airport_index"]) % len(others)]
    if label.scenario == "wrong_checkin":
        day = dt.date.fromisoformat(trip.date) + dt.timedelta(days=int(label.params["offset_days"]))
        checkin = day.isoformat()
    facts = {
        "airport": airport,
        "date": trip.date,
        "city": trip.city,
        "checkin": checkin,
        "nights": trip.nights,
        "passenger": trip.passenger,
    }
    steps = [
        PlanStep(
            "find_flight",
            "search flights",
            tool="search_flights",
            requires=["airport", "date"],
            produces=["flight"],
        ),
        PlanStep(
            "book_flight",
            "book the cheapest flight",
            tool="book_flight",
            depends_on=["find_flight"],
            requires=["flight", "passenger"],
            produces=["flight_booking"],
        ),
        PlanStep(
            "find_hotel",
            "search a hotel",
            tool="search_hotels",
            requires=["city", "checkin", "nights"],
            produces=["hotel"],
        ),
        PlanStep(
            "book_hotel",
            "book the hotel",
            tool="book_hotel",
            depends_on=["find_hotel", "book_flight"],
            requires=["hotel", "flight_booking"],
            produces=["hotel_booking"],
        ),
        PlanStep(
            "send_itinerary",
            "email the itinerary",
            tool="send_email",
            depends_on=["book_hotel"],
            requires=["flight_booking", "hotel_booking"],
            irreversible=True,
        ),
    ]
    return Plan(steps, id="trip", version=version, objective=_objective(trip)), facts


def _objective(trip: Trip) -> str:
    return f"Fly {trip.passenger} to {trip.city} on {trip.date} and book {trip.nights} nights"


# --- executor -----------------------------------------------------------------------------
def _retrying(call: Any, patience: int) -> Any:
    """Call a tool, retrying transient errors up to ``patience`` calls (inside one attempt)."""
    for n in range(1, patience + 1):
        try:
            return call()
        except TransientError:
            if n == patience:
                raise
    raise AssertionError("unreachable")


def _execute(
    step: PlanStep, context: Mapping[str, Any], tools: Mapping[str, Any], patience: int
) -> Any:
    """Do one step with exactly the context it was given (it records what it got, even {})."""
    planscope.record_context(dict(context))
    c = context
    if step.id == "find_flight":
        flights = tools["search_flights"](c["airport"], c["date"], c.get("flex_days", 0))
        return min(flights, key=lambda f: f["price"])
    if step.id == "book_flight":
        return _retrying(lambda: tools["book_flight"](c["flight"]["id"], c["passenger"]), patience)
    if step.id == "find_hotel":
        page: int | None = 1
        result: dict[str, Any] = {}
        while page is not None:  # a long but progressing loop: every page is new
            result = tools["search_hotels"](c["city"], c["checkin"], c["nights"], page=page)
            page = result["next_page"]
        return result["hotels"][0]
    if step.id == "book_hotel":
        if "hotel" not in c or "flight_booking" not in c:
            raise BookingError("cannot book a hotel: no hotel or flight booking given")
        return _retrying(
            lambda: tools["book_hotel"](c["hotel"]["id"], c["flight_booking"]["ref"]), 3
        )
    if step.id == "send_itinerary":
        if not {"flight_booking", "hotel_booking"} <= set(c):
            raise BookingError("no bookings to put in the itinerary")
        body = f"flight {c['flight_booking']['ref']}, hotel {c['hotel_booking']['ref']}"
        return tools["send_email"]("traveller@example.com", body)
    raise ValueError(step.id)


def run(label: Label) -> str:
    """Play one labelled scenario; return the run's trace id (hex)."""
    rng = random.Random(label.seed)
    trip = Trip(
        city=rng.choice(sorted(CITIES)),
        date=(dt.date(2026, 5, 1) + dt.timedelta(days=rng.randint(0, 60))).isoformat(),
        nights=rng.randint(1, 5),
        passenger=f"traveller{rng.randint(1, 99)}@example.com",
    )
    world = World(label, random.Random(label.seed + 1))
    tools = _tools(world)
    errors = len(label.params.get("errors", ()))
    # How long the agent keeps at a failing step: its own patience, not a planscope budget.
    patience = errors if label.kind == "runaway_loop" else MAX_ATTEMPTS

    @planscope.planner
    def make_plan(objective: str, version: int) -> Plan:
        return _plan(trip, label, version)[0]

    @planscope.step
    def execute(step: PlanStep, context: Mapping[str, Any]) -> Any:
        return _execute(step, context, tools, patience if step.id == "book_flight" else 3)

    @planscope.run("travel-agent", budget=planscope.RetryBudget(max_attempts_per_step=MAX_ATTEMPTS))
    def handle(objective: str) -> str:
        trace_id = format(trace.get_current_span().get_span_context().trace_id, "032x")
        state: dict[str, Any] = dict(_plan(trip, label)[1])
        version = 1
        plan = make_plan(objective, version)
        for step in plan.topological_order():
            attempt = in_version = 0
            while True:
                attempt += 1
                in_version += 1
                given = {k: state[k] for k in step.requires if k in state}
                if label.kind == "context_starved" and step.id == label.params["step"]:
                    given = {k: state[k] for k in label.params["given"] if k in state}
                if step.id == "find_flight" and attempt > 1:
                    given["flex_days"] = attempt - 1  # widen the search: arguments vary
                try:
                    out = execute(step, given)
                    break
                except TransientError:
                    if step.id == "book_flight":
                        planscope.set_outcome("failure", "could not book a flight")
                        return trace_id
                    if step.id == "book_hotel" and in_version == 2:
                        if version >= int(label.params.get("versions", 1)):
                            planscope.set_outcome("failure", "replanning did not help")
                            return trace_id
                        version, in_version = version + 1, 0
                        make_plan(f"{objective} (replan: {step.id} failed)", version)
                        continue
                    if attempt >= patience:
                        planscope.set_outcome("failure", f"gave up on step {step.id}")
                        return trace_id
                except BookingError as e:
                    if "sold out" not in str(e):
                        planscope.set_outcome("failure", f"step {step.id} failed: {e}")
                        return trace_id
                    # a legitimate replan: the next plan version books another fare
                    version += 1
                    make_plan(f"{objective} (replan: {e})", version)
            for key in step.produces:
                state[key] = out
        flight, hotel = state["flight_booking"], state["hotel_booking"]
        if hotel["checkin"] != flight["date"]:
            planscope.record_outcome_check(
                False,
                name="itinerary_consistent",
                reason=f"hotel check-in {hotel['checkin']} does not match flight date "
                f"{flight['date']}",
            )
            return trace_id
        planscope.record_outcome_check(True, name="itinerary_consistent")
        if label.scenario == "external_cancel":
            # after the agent finished: the airline cancels, seen by the status poll
            for _ in range(int(label.params["polls"])):
                try:
                    tools["booking_status"](flight["ref"])
                except BookingError as e:
                    planscope.set_outcome("failure", str(e))
                    break
        return trace_id

    return str(handle(_objective(trip)))
