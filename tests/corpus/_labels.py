"""The corpus's scenarios and their ground-truth labels, generated deterministically from seeds.

A scenario is what the world does to an agent in one run (a tool that times out, a planner that
misreads a date, an executor handed nothing); its label is what an analyzer should report: a
failure kind and the plan step to blame, or nothing (``healthy``). Labels are a function of the
scenario alone, never of what the agent or an analyzer did, and are written to
``labels.jsonl`` (``python -m tests.corpus.labels``) before any detector is run on the runs.

>>> scenarios("travel", "dev")[0].run
'travel-dev-000'
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RUNAWAY = "runaway_loop"
STARVED = "context_starved"
PROPAGATION = "plan_propagation"
KINDS = (RUNAWAY, STARVED, PROPAGATION)

LABELS_FILE = Path(__file__).with_name("labels.jsonl")

# Seeds: dev and held-out parts never share one; the support agent exists only in held-out.
SPLITS: dict[str, dict[str, range]] = {
    # restock's dev seeds were added after the sealed split had been scored (its figures are
    # no longer blind), to tune numeric and date lineage on runs other than the sealed ones
    "dev": {"travel": range(0, 60), "etl": range(0, 50), "restock": range(0, 36)},
    "heldout": {
        "travel": range(5000, 5024),
        "etl": range(5000, 5024),
        "support": range(5000, 5042),
        "refund": range(5000, 5030),
    },
    # Sealed: built after the last tuning, labels committed before any detector ran on it,
    # scored once at the end (``benchmarks/detector_corpus.py --sealed``); never tune on it.
    "sealed": {
        "travel": range(9000, 9026),
        "etl": range(9000, 9016),
        "support": range(9000, 9020),
        "refund": range(9000, 9009),
        "restock": range(9000, 9036),
    },
    # Sealed 2: built before the sealed-2 round changed any detector or the plan mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed2``): new seeds of the five agents and a sixth
    # agent (release: a DAG planner with parallel tasks, pydantic-ai spans).
    "sealed2": {
        "travel": range(12000, 12026),
        "etl": range(12000, 12016),
        "support": range(12000, 12020),
        "refund": range(12000, 12009),
        "restock": range(12000, 12024),
        "release": range(12000, 12042),
    },
    # Sealed 3: built after the sealed-2 round's detector changes, labels committed alone
    # before any detector ran on it, scored once (``benchmarks/detector_corpus.py --sealed3``):
    # new seeds of the six agents and a seventh agent (analyst: the real OpenAI Agents SDK
    # under OpenInference's openai-agents instrumentor).
    "sealed3": {
        "travel": range(15000, 15013),
        "etl": range(15000, 15008),
        "support": range(15000, 15010),
        "refund": range(15000, 15006),
        "restock": range(15000, 15012),
        "release": range(15000, 15013),
        "analyst": range(15000, 15060),
    },
    # Sealed 4: built before the sealed-4 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed4``): new seeds of the seven agents, half of
    # them runs of the framework agent (analyst).
    "sealed4": {
        "travel": range(18000, 18013),
        "etl": range(18000, 18016),
        "support": range(18000, 18010),
        "refund": range(18000, 18009),
        "restock": range(18000, 18012),
        "release": range(18000, 18013),
        "analyst": range(18000, 18075),
    },
    # Sealed 5: built before the sealed-5 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed5``): new seeds of the seven agents and an
    # eighth agent (oncall: a real LangGraph graph under OpenLLMetry's LangChain instrumentor).
    "sealed5": {
        "travel": range(21000, 21013),
        "etl": range(21000, 21016),
        "support": range(21000, 21010),
        "refund": range(21000, 21009),
        "restock": range(21000, 21012),
        "release": range(21000, 21013),
        "analyst": range(21000, 21020),
        "oncall": range(21000, 21060),
    },
    # Sealed 6: built before the sealed-6 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed6``): new seeds of the eight agents and a ninth
    # agent (claims: the real pydantic-ai Agent with its own OTel instrumentation).
    "sealed6": {
        "travel": range(24000, 24013),
        "etl": range(24000, 24013),
        "support": range(24000, 24010),
        "refund": range(24000, 24009),
        "restock": range(24000, 24012),
        "release": range(24000, 24013),
        "analyst": range(24000, 24015),
        "oncall": range(24000, 24015),
        "claims": range(24000, 24060),
    },
    # Sealed 7: built before the sealed-7 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed7``): new seeds of the nine agents and a tenth
    # agent (lab: smolagents under OpenInference's smolagents instrumentor).
    "sealed7": {
        "travel": range(27000, 27008),
        "etl": range(27000, 27008),
        "support": range(27000, 27008),
        "refund": range(27000, 27006),
        "restock": range(27000, 27008),
        "release": range(27000, 27008),
        "analyst": range(27000, 27008),
        "oncall": range(27000, 27008),
        "claims": range(27000, 27008),
        "lab": range(27000, 27052),
    },
    # Sealed 8: built before the sealed-8 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed8``): new seeds of the ten agents and an
    # eleventh agent (lease: Agno under OpenInference's Agno instrumentor).
    "sealed8": {
        "travel": range(30000, 30006),
        "etl": range(30000, 30006),
        "support": range(30000, 30006),
        "refund": range(30000, 30004),
        "restock": range(30000, 30006),
        "release": range(30000, 30006),
        "analyst": range(30000, 30006),
        "oncall": range(30000, 30006),
        "claims": range(30000, 30006),
        "lab": range(30000, 30006),
        "lease": range(30000, 30060),
    },
    # Sealed 9: built before the sealed-9 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed9``): new seeds of the eleven agents and a
    # twelfth agent (customs: DSPy under OpenInference's DSPy instrumentor).
    "sealed9": {
        "travel": range(33000, 33009),
        "etl": range(33000, 33009),
        "support": range(33000, 33009),
        "refund": range(33000, 33006),
        "restock": range(33000, 33009),
        "release": range(33000, 33009),
        "analyst": range(33000, 33009),
        "oncall": range(33000, 33009),
        "claims": range(33000, 33009),
        "lab": range(33000, 33009),
        "lease": range(33000, 33009),
        "customs": range(33000, 33020),
    },
    # Sealed 10: built before the sealed-10 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed10``): new seeds of the twelve agents and a
    # thirteenth agent (venue: Haystack under OpenInference's Haystack instrumentor).
    "sealed10": {
        "travel": range(36000, 36008),
        "etl": range(36000, 36008),
        "support": range(36000, 36008),
        "refund": range(36000, 36006),
        "restock": range(36000, 36008),
        "release": range(36000, 36008),
        "analyst": range(36000, 36008),
        "oncall": range(36000, 36008),
        "claims": range(36000, 36008),
        "lab": range(36000, 36008),
        "lease": range(36000, 36008),
        "customs": range(36000, 36008),
        "venue": range(36000, 36020),
    },
    # Sealed 11: built before the sealed-11 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed11``): new seeds of the thirteen agents and a
    # fourteenth agent (fleet: Semantic Kernel under its own OpenTelemetry diagnostics).
    "sealed11": {
        "travel": range(39000, 39008),
        "etl": range(39000, 39008),
        "support": range(39000, 39008),
        "refund": range(39000, 39006),
        "restock": range(39000, 39008),
        "release": range(39000, 39008),
        "analyst": range(39000, 39008),
        "oncall": range(39000, 39008),
        "claims": range(39000, 39008),
        "lab": range(39000, 39008),
        "lease": range(39000, 39008),
        "customs": range(39000, 39008),
        "venue": range(39000, 39008),
        "fleet": range(39000, 39020),
    },
    # Sealed 12: built before the sealed-12 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed12``): new seeds of the fourteen agents and a
    # fifteenth agent (solar: Microsoft Agent Framework under its own OpenTelemetry
    # instrumentation).
    "sealed12": {
        "travel": range(42000, 42008),
        "etl": range(42000, 42008),
        "support": range(42000, 42008),
        "refund": range(42000, 42006),
        "restock": range(42000, 42008),
        "release": range(42000, 42008),
        "analyst": range(42000, 42008),
        "oncall": range(42000, 42008),
        "claims": range(42000, 42008),
        "lab": range(42000, 42008),
        "lease": range(42000, 42008),
        "customs": range(42000, 42008),
        "venue": range(42000, 42008),
        "fleet": range(42000, 42008),
        "solar": range(42000, 42020),
    },
    # Sealed 13: built before the sealed-13 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed13``): new seeds of the fifteen agents and a
    # sixteenth agent (moving: the Langfuse Python SDK's OpenTelemetry-based observations).
    "sealed13": {
        "travel": range(45000, 45008),
        "etl": range(45000, 45008),
        "support": range(45000, 45008),
        "refund": range(45000, 45006),
        "restock": range(45000, 45008),
        "release": range(45000, 45008),
        "analyst": range(45000, 45008),
        "oncall": range(45000, 45008),
        "claims": range(45000, 45008),
        "lab": range(45000, 45008),
        "lease": range(45000, 45008),
        "customs": range(45000, 45008),
        "venue": range(45000, 45008),
        "fleet": range(45000, 45008),
        "solar": range(45000, 45008),
        "moving": range(45000, 45020),
    },
    # Sealed 14: built before the sealed-14 round changed any detector or the span mapping,
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed14``): new seeds of the sixteen agents and a
    # seventeenth agent (grants: the Logfire SDK's spans and logs).
    "sealed14": {
        "travel": range(47000, 47008),
        "etl": range(47000, 47008),
        "support": range(47000, 47008),
        "refund": range(47000, 47006),
        "restock": range(47000, 47008),
        "release": range(47000, 47008),
        "analyst": range(47000, 47008),
        "oncall": range(47000, 47008),
        "claims": range(47000, 47008),
        "lab": range(47000, 47008),
        "lease": range(47000, 47008),
        "customs": range(47000, 47008),
        "venue": range(47000, 47008),
        "fleet": range(47000, 47008),
        "solar": range(47000, 47008),
        "moving": range(47000, 47008),
        "grants": range(47000, 47020),
    },
    # Sealed 15: built before any detector or the span mapping saw an MLflow Tracing span,
    # labels committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed15``): new seeds of the sixteen agents and a
    # seventeenth agent (museum: MLflow Tracing, exported through OTLP).
    "sealed15": {
        "travel": range(49000, 49008),
        "etl": range(49000, 49008),
        "support": range(49000, 49008),
        "refund": range(49000, 49006),
        "restock": range(49000, 49008),
        "release": range(49000, 49008),
        "analyst": range(49000, 49008),
        "oncall": range(49000, 49008),
        "claims": range(49000, 49008),
        "lab": range(49000, 49008),
        "lease": range(49000, 49008),
        "customs": range(49000, 49008),
        "venue": range(49000, 49008),
        "fleet": range(49000, 49008),
        "solar": range(49000, 49008),
        "moving": range(49000, 49008),
        "museum": range(49000, 49020),
    },
    # Sealed 16: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed16``): new seeds of the eighteen agents and a
    # nineteenth agent (marina: a LangGraph graph under OpenInference's LangChain instrumentor).
    "sealed16": {
        "travel": range(52000, 52008),
        "etl": range(52000, 52008),
        "support": range(52000, 52008),
        "refund": range(52000, 52006),
        "restock": range(52000, 52008),
        "release": range(52000, 52008),
        "analyst": range(52000, 52008),
        "oncall": range(52000, 52008),
        "claims": range(52000, 52008),
        "lab": range(52000, 52008),
        "lease": range(52000, 52008),
        "customs": range(52000, 52008),
        "venue": range(52000, 52008),
        "fleet": range(52000, 52008),
        "solar": range(52000, 52008),
        "moving": range(52000, 52008),
        "grants": range(52000, 52008),
        "museum": range(52000, 52008),
        "marina": range(52000, 52020),
    },
    # Sealed 17: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed17``): new seeds of the nineteen agents and a
    # twentieth agent (harvest: the ``openai`` client under OpenLLMetry's OpenAI instrumentor
    # plus the app's own plain OpenTelemetry spans).
    "sealed17": {
        "travel": range(54000, 54008),
        "etl": range(54000, 54008),
        "support": range(54000, 54008),
        "refund": range(54000, 54006),
        "restock": range(54000, 54008),
        "release": range(54000, 54008),
        "analyst": range(54000, 54008),
        "oncall": range(54000, 54008),
        "claims": range(54000, 54008),
        "lab": range(54000, 54008),
        "lease": range(54000, 54008),
        "customs": range(54000, 54008),
        "venue": range(54000, 54008),
        "fleet": range(54000, 54008),
        "solar": range(54000, 54008),
        "moving": range(54000, 54008),
        "grants": range(54000, 54008),
        "museum": range(54000, 54008),
        "marina": range(54000, 54008),
        "harvest": range(54000, 54020),
    },
    # Sealed 18: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed18``): new seeds of the twenty agents and a
    # twenty-first agent (hives: an AutoGen AgentChat Magentic-One team under AutoGen's own
    # OpenTelemetry tracing).
    "sealed18": {
        "travel": range(56000, 56008),
        "etl": range(56000, 56008),
        "support": range(56000, 56008),
        "refund": range(56000, 56006),
        "restock": range(56000, 56008),
        "release": range(56000, 56008),
        "analyst": range(56000, 56008),
        "oncall": range(56000, 56008),
        "claims": range(56000, 56008),
        "lab": range(56000, 56008),
        "lease": range(56000, 56008),
        "customs": range(56000, 56008),
        "venue": range(56000, 56008),
        "fleet": range(56000, 56008),
        "solar": range(56000, 56008),
        "moving": range(56000, 56008),
        "grants": range(56000, 56008),
        "museum": range(56000, 56008),
        "marina": range(56000, 56008),
        "harvest": range(56000, 56008),
        "hives": range(56000, 56020),
    },
    # Sealed 19: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed19``): new seeds of the twenty-one agents and a
    # twenty-second agent (foundry: a Strands Agents planner and executor under Strands' own
    # OpenTelemetry tracing).
    "sealed19": {
        "travel": range(58000, 58008),
        "etl": range(58000, 58008),
        "support": range(58000, 58008),
        "refund": range(58000, 58006),
        "restock": range(58000, 58008),
        "release": range(58000, 58008),
        "analyst": range(58000, 58008),
        "oncall": range(58000, 58008),
        "claims": range(58000, 58008),
        "lab": range(58000, 58008),
        "lease": range(58000, 58008),
        "customs": range(58000, 58008),
        "venue": range(58000, 58008),
        "fleet": range(58000, 58008),
        "solar": range(58000, 58008),
        "moving": range(58000, 58008),
        "grants": range(58000, 58008),
        "museum": range(58000, 58008),
        "marina": range(58000, 58008),
        "harvest": range(58000, 58008),
        "hives": range(58000, 58008),
        "foundry": range(58000, 58020),
    },
    # Sealed 20: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed20``): new seeds of the twenty-two agents and a
    # twenty-third agent (organ: Griptape Agents as planner and executor under Griptape's own
    # OpenTelemetry observability driver).
    "sealed20": {
        "travel": range(60000, 60008),
        "etl": range(60000, 60008),
        "support": range(60000, 60008),
        "refund": range(60000, 60006),
        "restock": range(60000, 60008),
        "release": range(60000, 60008),
        "analyst": range(60000, 60008),
        "oncall": range(60000, 60008),
        "claims": range(60000, 60008),
        "lab": range(60000, 60008),
        "lease": range(60000, 60008),
        "customs": range(60000, 60008),
        "venue": range(60000, 60008),
        "fleet": range(60000, 60008),
        "solar": range(60000, 60008),
        "moving": range(60000, 60008),
        "grants": range(60000, 60008),
        "museum": range(60000, 60008),
        "marina": range(60000, 60008),
        "harvest": range(60000, 60008),
        "hives": range(60000, 60008),
        "foundry": range(60000, 60008),
        "organ": range(60000, 60020),
    },
    # Sealed 21: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed21``): new seeds of the twenty-three agents and a
    # twenty-fourth agent (arbor: a Burr application under Burr's own OpenTelemetry bridge).
    "sealed21": {
        "travel": range(62000, 62008),
        "etl": range(62000, 62008),
        "support": range(62000, 62008),
        "refund": range(62000, 62006),
        "restock": range(62000, 62008),
        "release": range(62000, 62008),
        "analyst": range(62000, 62008),
        "oncall": range(62000, 62008),
        "claims": range(62000, 62008),
        "lab": range(62000, 62008),
        "lease": range(62000, 62008),
        "customs": range(62000, 62008),
        "venue": range(62000, 62008),
        "fleet": range(62000, 62008),
        "solar": range(62000, 62008),
        "moving": range(62000, 62008),
        "grants": range(62000, 62008),
        "museum": range(62000, 62008),
        "marina": range(62000, 62008),
        "harvest": range(62000, 62008),
        "hives": range(62000, 62008),
        "foundry": range(62000, 62008),
        "organ": range(62000, 62008),
        "arbor": range(62000, 62020),
    },
    # Sealed 22: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed22``): new seeds of the twenty-four agents and a
    # twenty-fifth agent (stocking: a hand-written app on LiteLLM under LiteLLM's own
    # OpenTelemetry callback).
    "sealed22": {
        "travel": range(64000, 64008),
        "etl": range(64000, 64008),
        "support": range(64000, 64008),
        "refund": range(64000, 64006),
        "restock": range(64000, 64008),
        "release": range(64000, 64008),
        "analyst": range(64000, 64008),
        "oncall": range(64000, 64008),
        "claims": range(64000, 64008),
        "lab": range(64000, 64008),
        "lease": range(64000, 64008),
        "customs": range(64000, 64008),
        "venue": range(64000, 64008),
        "fleet": range(64000, 64008),
        "solar": range(64000, 64008),
        "moving": range(64000, 64008),
        "grants": range(64000, 64008),
        "museum": range(64000, 64008),
        "marina": range(64000, 64008),
        "harvest": range(64000, 64008),
        "hives": range(64000, 64008),
        "foundry": range(64000, 64008),
        "organ": range(64000, 64008),
        "arbor": range(64000, 64008),
        "stocking": range(64000, 64020),
    },
    # Sealed 23: built before any detector saw this agent's spans, labels committed alone
    # before any detector ran on it, to be scored once (``benchmarks/detector_corpus.py
    # --sealed23``): new seeds of the twenty-five agents and a twenty-sixth agent (refuge: an
    # asyncio DAG agent written from the planscope SDK's public docs only).
    "sealed23": {
        "travel": range(66000, 66008),
        "etl": range(66000, 66008),
        "support": range(66000, 66008),
        "refund": range(66000, 66006),
        "restock": range(66000, 66008),
        "release": range(66000, 66008),
        "analyst": range(66000, 66008),
        "oncall": range(66000, 66008),
        "claims": range(66000, 66008),
        "lab": range(66000, 66008),
        "lease": range(66000, 66008),
        "customs": range(66000, 66008),
        "venue": range(66000, 66008),
        "fleet": range(66000, 66008),
        "solar": range(66000, 66008),
        "moving": range(66000, 66008),
        "grants": range(66000, 66008),
        "museum": range(66000, 66008),
        "marina": range(66000, 66008),
        "harvest": range(66000, 66008),
        "hives": range(66000, 66008),
        "foundry": range(66000, 66008),
        "organ": range(66000, 66008),
        "arbor": range(66000, 66008),
        "stocking": range(66000, 66008),
        "refuge": range(66000, 66030),
    },
    # Sealed 24: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed24``): only a new agent (seedbank: a hand-written
    # app whose spans follow the current OpenTelemetry GenAI semantic conventions by hand).
    "sealed24": {
        "seedbank": range(67000, 67024),
    },
    # Sealed 25: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed25``): only a new agent (wool: LangGraph's
    # Plan-and-Execute tutorial, free-text plan steps, OpenInference's LangChain instrumentor).
    "sealed25": {
        "wool": range(68000, 68024),
    },
    # Sealed 26: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed26``): only a new agent (glazier: LangGraph's
    # Plan-and-Execute tutorial, free-text plan steps, OpenLLMetry's LangChain instrumentor).
    "sealed26": {
        "glazier": range(69000, 69024),
    },
    # Sealed 27: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed27``): only a new agent (chandler: a LlamaIndex
    # Workflow with a structured planner and a FunctionAgent executor, OpenInference's LlamaIndex
    # instrumentor).
    "sealed27": {
        "chandler": range(72000, 72024),
    },
    # Sealed 28: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed28``): only a new agent (ferry: the OpenAI Agents
    # SDK's planner / specialist desks traced by Logfire's openai-agents instrumentation).
    "sealed28": {
        "ferry": range(75000, 75024),
    },
    # Sealed 29: built before any detector or the span mapping saw this agent's spans, labels
    # committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed29``): only a new agent (observatory: a LlamaIndex
    # AgentWorkflow of FunctionAgents handing off to each other, OpenLLMetry's LlamaIndex
    # instrumentor).
    "sealed29": {
        "observatory": range(78000, 78024),
    },
    # Sealed 30: labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed30``): only a new agent (reel: a Google ADK custom
    # agent under ADK's own OpenTelemetry tracing).
    "sealed30": {
        "reel": range(81000, 81024),
    },
    # Sealed 31: labels committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed31``): only a new agent (quarry: the OpenAI Agents
    # SDK with handoffs and an agent as a tool, OpenLLMetry's openai-agents instrumentor).
    "sealed31": {
        "quarry": range(82000, 82024),
    },
    # Sealed 32: labels committed alone before any detector ran on it, to be scored once
    # (``benchmarks/detector_corpus.py --sealed32``): only a new agent (beacon: a smolagents
    # CodeAgent with its own planning steps and a managed CodeAgent crew, OpenInference's
    # smolagents instrumentor).
    "sealed32": {
        "beacon": range(83000, 83024),
    },
    # Sealed 33: a thirty-sixth agent (turret: pydantic-ai agent delegation under
    # OpenInference's pydantic-ai span processor), labels committed alone before any detector
    # ran on it, scored once (``benchmarks/detector_corpus.py --sealed33``).
    "sealed33": {
        "turret": range(84000, 84024),
    },
    # Sealed 34: a thirty-seventh agent (kiln: the Anthropic SDK with tool use by hand, a
    # forced submit_plan tool as the planner, under OpenInference's Anthropic instrumentor),
    # labels committed alone before any detector ran on it, scored once
    # (``benchmarks/detector_corpus.py --sealed34``).
    "sealed34": {
        "kiln": range(85000, 85024),
    },
    # Sealed 35: a thirty-eighth agent (summit: a LangGraph DAG planner fanning ready tasks out
    # in parallel with ``Send``, under OpenInference's LangChain instrumentor), labels committed
    # alone before any detector ran on it, scored once (``--sealed35``).
    "sealed35": {
        "summit": range(86000, 86024),
    },
    # Sealed 37: a fortieth agent (luthier: LangChain 1.x ``create_agent`` planning through
    # ``TodoListMiddleware``'s todos, a bench-hand sub-agent per item attempt, under OpenLLMetry's
    # LangChain instrumentor), labels committed alone before any detector ran on it, scored once
    # (``--sealed37``).
    "sealed37": {
        "luthier": range(88000, 88024),
    },
    # Sealed 36: a thirty-ninth agent (cellar: the Google Gen AI SDK by hand, a structured-output
    # planner and a hand-written function-calling loop, under OpenInference's google-genai
    # instrumentor), labels committed alone before any detector ran on it, scored once
    # (``--sealed36``).
    "sealed36": {
        "cellar": range(87000, 87024),
    },
    # Sealed 38: a forty-first agent (railtour: the OpenAI Responses API by hand, a structured-
    # output planner and a function-calling loop resending the input list, under OpenInference's
    # OpenAI instrumentor), labels committed alone before any detector ran on it, scored once
    # (``--sealed38``).
    "sealed38": {
        "railtour": range(89000, 89024),
    },
    # Sealed 42: a forty-fifth agent (regatta: the planscope SDK's decorators in a synchronous
    # app whose steps run in a thread pool, its services on an MCP server over streamable HTTP,
    # under OpenInference's MCP and OpenAI instrumentors), labels committed alone before any
    # detector ran on it, scored once (``--sealed42``).
    "sealed42": {
        "regatta": range(93000, 93024),
    },
    # Sealed 41: a forty-fourth agent (bindery: Mistral's SDK by hand, a structured-output
    # worksheet planner and a function-calling conversation per operation attempt, under
    # OpenLLMetry's Mistral instrumentor), labels committed alone before any detector ran on it,
    # scored once (``--sealed41``).
    "sealed41": {
        "bindery": range(92000, 92024),
    },
    # Sealed 40: a forty-third agent (bigtop: the Amazon Bedrock Converse API by hand with
    # boto3, a planner forced through a tool and a tool-use loop, under OpenInference's Bedrock
    # instrumentor), labels committed alone before any detector ran on it, scored once
    # (``--sealed40``).
    "sealed40": {
        "bigtop": range(91000, 91024),
    },
    # Sealed 43: a forty-sixth agent (balloon: an AutoGen AgentChat SelectorGroupChat, a planner
    # writing a flight card and clearing legs to tool-using executors, under OpenInference's
    # autogen-agentchat instrumentor), labels committed alone before any detector ran on it,
    # scored once (``--sealed43``).
    "sealed43": {
        "balloon": range(94000, 94024),
    },
    # Sealed 44: a forty-seventh agent (mural: AG2 1.x agents, a planner writing a work sheet of
    # Python assignments and tool-using executors asked once per step attempt, under AG2's own
    # OpenTelemetry telemetry), labels committed alone before any detector ran on it, scored once
    # (``--sealed44``).
    "sealed44": {
        "mural": range(95000, 95024),
    },
    # Sealed 45: a forty-eighth agent (fresco: the openai client's Chat Completions by hand, a TOML
    # planner and a function-calling loop per stage attempt, under the official OpenTelemetry GenAI
    # instrumentation, opentelemetry-instrumentation-openai-v2), labels committed alone before any
    # detector ran on it, scored once (``--sealed45``).
    "sealed45": {
        "fresco": range(96000, 96024),
    },
    # Sealed 46: a forty-ninth agent (busyard: langgraph-supervisor's create_supervisor over
    # create_react_agent workers, a run-sheet planner worker, traced by LangSmith's OpenTelemetry
    # export), labels committed alone before any detector ran on it, scored once (``--sealed46``).
    "sealed46": {
        "busyard": range(97000, 97024),
    },
    # Sealed 47: a fiftieth agent (linen: LangChain 1.x, a structured-output planner answering a
    # rota and a create_agent runner per task attempt, under Langfuse's LangChain callback
    # handler), labels committed alone before any detector ran on it, scored once
    # (``--sealed47``).
    "sealed47": {
        "linen": range(98000, 98024),
    },
    # Sealed 48: a fifty-first agent (brewhouse: Haystack 3.x, a Pipeline planner answering an
    # s-expression brew sheet and an Agent per step attempt, under Haystack's own OpenTelemetry
    # tracer), labels committed alone before any detector ran on it, scored once (``--sealed48``).
    "sealed48": {
        "brewhouse": range(99000, 99024),
    },
    # Sealed 49: a fifty-second agent (liftline: Google ADK 1.10, a planner LlmAgent writing a
    # markdown task-list checklist and a LoopAgent crew with an app shift boss, under
    # OpenInference's Google ADK instrumentor), labels committed alone before any detector ran on
    # it, scored once (``--sealed49``).
    "sealed49": {
        "liftline": range(99100, 99124),
    },
    # Sealed 50: a fifty-third agent (hauler: a pydantic-graph state machine whose nodes run
    # pydantic-ai agents, a planner answering command lines and a crew runner per move attempt,
    # traced by Logfire), labels committed alone before any detector ran on it, scored once
    # (``--sealed50``).
    "sealed50": {
        "hauler": range(99200, 99224),
    },
    # Sealed 51: a fifty-fourth agent (surgery: LangGraph's Functional API, an entrypoint with a
    # plan task answering a CSV plan and an execute task per step attempt running a tool-calling
    # ChatOpenAI, traced by OpenInference's LangChain instrumentor), labels committed alone before
    # any detector ran on it, scored once (``--sealed51``).
    "sealed51": {
        "surgery": range(99300, 99324),
    },
    # Sealed 52: a fifty-fifth agent (shoot: the Traceloop SDK's decorators over a
    # planner-executor app on the openai client, a planner answering CSV and a unit runner per
    # step attempt), labels committed alone before any detector ran on it, scored once
    # (``--sealed52``).
    "sealed52": {
        "shoot": range(99400, 99424),
    },
    # Sealed 53: a fifty-sixth agent (marathon: an asyncio app on the planscope SDK's context
    # managers, a Mermaid flowchart DAG plan, steps run concurrently with an explicit context,
    # the LLM calls under OpenLLMetry's OpenAI instrumentor), labels committed alone before any
    # detector ran on it, scored once (``--sealed53``).
    "sealed53": {
        "marathon": range(99500, 99524),
    },
    # Sealed 54: a fifty-seventh agent (orchard: Agno agents under OpenLLMetry's Agno and OpenAI
    # instrumentors, a planner answering an Org-mode outline, an executor agent per step
    # attempt), labels committed alone before any detector ran on it, scored once
    # (``--sealed54``).
    "sealed54": {
        "orchard": range(99600, 99624),
    },
    # Sealed 55: a fifty-eighth agent (ferrier: a LlamaIndex app, a planner call answering an
    # Org-mode plan and a FunctionAgent per step attempt, under LlamaIndex's native OpenTelemetry
    # integration), labels committed alone before any detector ran on it, scored once
    # (``--sealed55``).
    "sealed55": {
        "ferrier": range(99700, 99724),
    },
    # Sealed 56: a fifty-ninth agent (ropeway: the Anthropic SDK by hand, its tools on an MCP
    # server run over stdio, a planner answering an Org-mode outline and an executor conversation
    # per step attempt, traced by OpenLLMetry's Anthropic and MCP instrumentors), labels committed
    # alone before any detector ran on it, scored once (``--sealed56``).
    "sealed56": {
        "ropeway": range(99800, 99824),
    },
    # Sealed 58: a sixty-first agent (assay: the Google Gen AI SDK by hand, a planner answering a
    # bullet outline with ``after:`` dependencies and a chat with automatic function calling per
    # step attempt, traced by the official OpenTelemetry google-genai instrumentation), labels
    # committed alone before any detector ran on it, scored once (``--sealed58``).
    "sealed58": {
        "assay": range(99930, 99954),
    },
    # Sealed 59: a sixtieth agent (touring: a hand-written app calling LiteLLM by hand, a planner
    # answering a Python list of call expressions and an executor conversation per step attempt,
    # traced by OpenInference's LiteLLM instrumentor and the app's own spans), labels committed
    # alone before any detector ran on it, scored once (``--sealed59``).
    "sealed59": {
        "touring": range(99960, 99984),
    },
    # Sealed 57: a sixty-first agent (kennel: the OpenAI Agents SDK, a planner agent answering JSON
    # Lines and an executor agent run per step attempt, traced by OpenLLMetry's openai-agents
    # instrumentor), labels committed alone before any detector ran on it, scored once
    # (``--sealed57``).
    "sealed57": {
        "kennel": range(99900, 99924),
    },
    # Sealed 61: a sixty-third agent (vessel: the Amazon Bedrock Converse API by hand with boto3,
    # a planner answering HCL blocks and an executor tool-use loop per step attempt, traced by
    # OpenLLMetry's Bedrock instrumentor and the app's own spans), labels committed alone before
    # any detector ran on it, scored once (``--sealed61``).
    "sealed61": {
        "vessel": range(100024, 100048),
    },
    # Sealed 60: a sixty-fourth agent (florist: the Ollama Python client by hand, a planner
    # answering a GraphViz DOT digraph and an executor conversation per step attempt, traced by
    # OpenLLMetry's Ollama instrumentor and the app's own spans), labels committed alone before
    # any detector ran on it, scored once (``--sealed60``).
    "sealed60": {
        "florist": range(100000, 100024),
    },
    # Sealed 62: a sixty-fifth agent (fieldtrip: the Groq Python SDK by hand, a planner forced to
    # call submit_plan with tasks holding {{tasks.<id>.output.<field>}} references and an
    # executor conversation per task attempt, traced by OpenInference's Groq instrumentor and the
    # app's own OpenInference-kind spans), labels committed alone before any detector ran on it,
    # scored once (``--sealed62``).
    "sealed62": {
        "fieldtrip": range(100048, 100072),
    },
    # Sealed 65: a sixty-sixth agent (sawmill: the OpenAI Python client's Chat Completions with
    # tools by hand, a planner answering a Gherkin feature and an executor conversation per step
    # attempt, its telemetry written with the official opentelemetry-util-genai handler), labels
    # committed alone before any detector ran on it, scored once (``--sealed65``).
    "sealed65": {
        "sawmill": range(100120, 100144),
    },
    # Sealed 63: a sixty-seventh agent (signalbox: the OpenAI Agents SDK, a planner agent answering
    # markdown step sections with fenced json calls and a track runner agent run per step
    # attempt, traced by OpenInference's openai-agents instrumentor and the app's own spans),
    # labels committed alone before any detector ran on it, scored once (``--sealed63``).
    "sealed63": {
        "signalbox": range(100072, 100096),
    },
    # Sealed 64: a sixty-eighth agent (pantry: the Cohere Python SDK v2 by hand, a planner
    # answering a GitHub Actions-style YAML workflow with ${{ jobs.<id>.outputs.<field> }}
    # references and an executor conversation per job attempt, traced by OpenLLMetry's Cohere
    # instrumentor and the app's own spans), labels committed alone before any detector ran on
    # it, scored once (``--sealed64``).
    "sealed64": {
        "pantry": range(100096, 100120),
    },
    # Sealed 68: a sixty-ninth agent (tannery: the Anthropic SDK with tool use by hand, a
    # planner answering a Semantic Kernel Handlebars plan and an executor conversation per step
    # attempt, traced by Logfire's Anthropic instrumentation and the app's own Logfire spans),
    # labels committed alone before any detector ran on it, scored once (``--sealed68``).
    "sealed68": {
        "tannery": range(100192, 100216),
    },
    # Sealed 66: a sixty-ninth agent (ferrule: a LangGraph app, a planner node answering an
    # Ansible-style YAML playbook with "{{ var.field }}" references and a counter_hand subgraph
    # run per task attempt, traced by MLflow's LangChain autologging and the app's own MLflow
    # spans), labels committed alone before any detector ran on it, scored once (``--sealed66``).
    "sealed66": {
        "ferrule": range(100144, 100168),
    },
    # Sealed 67: a sixty-ninth agent (chorale: a DSPy program, a ChainOfThought planner answering
    # an Argo Workflows DAG in YAML and a ReAct task runner per task attempt, traced by MLflow's
    # DSPy autologging and the app's own MLflow spans), labels committed alone before any
    # detector ran on it, scored once (``--sealed67``).
    "sealed67": {
        "chorale": range(100168, 100192),
    },
    # Sealed 71: a seventy-second agent (sequencer: a genomics core's sequencing order on
    # Haystack, a planner pipeline answering a Snakemake workflow and an Agent run per rule
    # attempt, traced by MLflow's Haystack span processor and the app's own MLflow spans), labels
    # committed alone before any detector ran on it, scored once (``--sealed71``).
    "sealed71": {
        "sequencer": range(100264, 100288),
    },
    # Sealed 69: a seventy-second agent (caravan: the openai client's AsyncOpenAI by hand, a
    # planner answering an AWS Step Functions state machine in Amazon States Language with a
    # Parallel state whose branches run concurrently, an executor conversation per task-state
    # attempt, traced by MLflow's OpenAI autologging and the app's own MLflow spans, exported in
    # MLflow's GenAI semantic-convention translation), labels committed alone before any detector
    # ran on it, scored once (``--sealed69``).
    "sealed69": {
        "caravan": range(100216, 100240),
    },
    # Sealed 70: a seventy-second agent (hatchery: real smolagents ToolCallingAgents, a planner
    # answering a GraphQL mutation document with @export'ed results and a shipment runner per
    # field attempt, traced by MLflow's smolagents autologging and the app's own MLflow spans),
    # labels committed alone before any detector ran on it, scored once (``--sealed70``).
    "sealed70": {
        "hatchery": range(100240, 100264),
    },
    # Sealed 72: a seventy-fifth agent (upholstery: a re-upholstery workshop's job desk on
    # LlamaIndex, a plain achat planner answering a declarative Jenkinsfile and a FunctionAgent
    # run per stage attempt consumed through its event stream, traced by MLflow's LlamaIndex
    # autologging and the app's own MLflow spans), labels committed alone before any detector
    # ran on it, scored once (``--sealed72``).
    "sealed72": {
        "upholstery": range(100288, 100312),
    },
    # Sealed 73: a seventy-fourth agent (planetarium: the Google Gen AI SDK by hand with streaming,
    # a planner answering a PlantUML activity diagram and an executor conversation per action
    # attempt, traced by OpenLLMetry's Google Generative AI instrumentor and the app's own spans),
    # labels committed alone before any detector ran on it, scored once (``--sealed73``).
    "sealed73": {
        "planetarium": range(100312, 100336),
    },
    # Sealed 74: a seventy-fifth agent (cooperage: an oak-barrel cooperage filling a
    # distillery's order with an Agno Team, a planner member answering a Nextflow DSL2 workflow
    # and a cooper member run per process attempt, traced by MLflow's Agno autologging and the
    # app's own MLflow spans), labels committed alone before any detector ran on it, scored once
    # (``--sealed74``).
    "sealed74": {
        "cooperage": range(100336, 100360),
    },
    # Sealed 75: a seventy-sixth agent (winepress: a winery's crush desk booking a grower's
    # harvest intake with Pydantic AI, a planner Agent whose structured output holds a BPMN 2.0
    # XML process and a cellarhand Agent run per service-task attempt, traced by MLflow's Pydantic
    # AI autologging and the app's own MLflow spans), labels committed alone before any detector
    # ran on it, scored once (``--sealed75``).
    "sealed75": {
        "winepress": range(100360, 100384),
    },
    # Sealed 76: a seventy-seventh agent (bookmobile: a county library's outreach desk running a
    # bookmobile's week with Strands Agents, a planner Agent answering a Markdown table and an
    # executor Agent run per step attempt, traced by MLflow's Strands autologging and the app's
    # own MLflow spans), labels committed alone before any detector ran on it, scored once
    # (``--sealed76``).
    "sealed76": {
        "bookmobile": range(100384, 100408),
    },
    # Sealed 77: a seventy-eighth agent (menagerie: a zoo's animal-transfer desk on the OpenAI
    # Agents SDK, a planner Agent answering an Apache Airflow DAG file as its structured output
    # and a runner Agent run per task try, traced by MLflow's OpenAI autologging and the app's own
    # MLflow spans), labels committed alone before any detector ran on it, scored once
    # (``--sealed77``).
    "sealed77": {
        "menagerie": range(100408, 100432),
    },
    # Sealed 78: a seventy-ninth agent (bakehouse: a wholesale bakery's order desk filling a
    # hotel's weekend bread order with AutoGen AgentChat, a planner AssistantAgent answering a
    # todo.txt file and a baker AssistantAgent with FunctionTools run per task attempt, traced by
    # MLflow's AutoGen autologging and the app's own MLflow spans), labels committed alone before
    # any detector ran on it, scored once (``--sealed78``).
    "sealed78": {
        "bakehouse": range(100432, 100456),
    },
    # Sealed 79: an eightieth agent (playhouse: a community theatre's production desk staging a
    # touring play's one-night booking with Semantic Kernel, a planner ChatCompletionAgent
    # answering a Graphviz DOT digraph and a crew ChatCompletionAgent with a kernel-function
    # plugin run per step attempt, Semantic Kernel's own diagnostics bridged into MLflow's tracer
    # provider plus the app's own MLflow spans), labels committed alone before any detector ran
    # on it, scored once (``--sealed79``).
    "sealed79": {
        "playhouse": range(100456, 100480),
    },
    # Sealed 80: an eighty-first agent (infirmary: a veterinary clinic's surgery desk scheduling
    # a dog's knee operation with the Anthropic Python SDK by hand, a planner messages.create call
    # answering an iCalendar VCALENDAR of VTODOs and an executor tool-use loop per task attempt,
    # traced by MLflow's Anthropic autologging and the app's own MLflow spans), labels committed
    # alone before any detector ran on it, scored once (``--sealed80``).
    "sealed80": {
        "infirmary": range(100480, 100504),
    },
    # Sealed 81: an eighty-second agent (chairlift: a ski resort's lift maintenance desk replacing a
    # chairlift sheave, the Google Gen AI SDK by hand, a planner call answering a Mermaid flowchart
    # and an executor conversation with manual function calling per step attempt, traced by
    # MLflow's Gemini autologging and the app's own MLflow spans), labels committed alone before
    # any detector ran on it, scored once (``--sealed81``).
    "sealed81": {
        "chairlift": range(100504, 100528),
    },
    # Sealed 82: an eighty-third agent (manuscript: a university library's interlibrary-loan
    # desk on AG2 1.2.1, a planner Agent answering a CSV table and an executor Agent run per step
    # attempt, traced by AG2's own telemetry on MLflow's tracer provider); 12 scenarios x 2
    # seeds, labels committed alone before any detector ran on it.
    "sealed82": {
        "manuscript": range(100528, 100552),
    },
    # Sealed 83: an eighty-fourth agent (vineyard: a wine estate's harvest desk getting a parcel
    # picked, pressed and a tank booked with the OpenAI Python SDK by hand, a planner call
    # answering a protobuf text-format plan and an executor conversation with function calling
    # per step attempt, traced by OpenLLMetry's OpenAI instrumentor and the app's own
    # OpenTelemetry spans); 12 scenarios x 2 seeds, labels committed alone before any detector
    # ran on it.
    "sealed83": {
        "vineyard": range(100552, 100576),
    },
    # Sealed 84: an eighty-fifth agent (tailor: a bespoke tailor's order desk making a wedding
    # suit with the openai client by hand, a planner call whose structured output is a pydantic
    # Plan and an executor conversation with function calling per step attempt, traced by
    # OpenInference's OpenAI instrumentor under one app root span a request); 12 scenarios x 2
    # seeds, labels committed alone before any detector ran on it.
    "sealed84": {
        "tailor": range(100576, 100600),
    },
    # Sealed 85: an eighty-sixth agent (lighthouse: a coastguard's lighthouse maintenance desk
    # replacing a lamp's rotation motor, the Groq Python SDK by hand, a planner call answering a
    # Mermaid gantt chart and an executor conversation with function calling per step attempt,
    # traced by OpenLLMetry's Groq instrumentor and the app's own OpenTelemetry spans); 12
    # scenarios x 2 seeds, labels committed alone before any detector ran on it (``--sealed85``).
    "sealed85": {
        "lighthouse": range(100600, 100624),
    },
    # Sealed 39: a forty-second agent (vinyl: the OpenAI Chat Completions API by hand, its tools
    # on an MCP server run over stdio, under OpenInference's MCP and OpenAI instrumentors), labels
    # committed alone before any detector ran on it, scored once (``--sealed39``).
    "sealed39": {
        "vinyl": range(90000, 90024),
    },
}

_ERRORS = (
    "upstream timeout after {n} ms",
    "HTTP 503 from gateway (request {hex})",
    "connection reset by peer at {n} bytes",
    "rate limited, retry after {n}s",
    "internal error ref {hex}",
)


def varying_errors(rng: random.Random, count: int) -> list[str]:
    """``count`` transient error texts that differ in wording, ids and numbers."""
    out = []
    for _ in range(count):
        template = rng.choice(_ERRORS)
        out.append(template.format(n=rng.randint(100, 9999), hex=f"{rng.getrandbits(32):08x}"))
    return out


@dataclass(frozen=True)
class Label:
    """One labelled run: the scenario to play and the findings expected from it."""

    run: str
    agent: str
    split: str
    seed: int
    scenario: str
    kind: str
    """The failure kind, or ``healthy``."""
    step: str
    """The plan step to blame ('' when healthy)."""
    trap: str = ""
    """For healthy runs built to trip a detector, the kind they must not get."""
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"params": dict(self.params)}


Scenario = Callable[[random.Random], tuple[str, str, str, dict[str, Any]]]
"""rng -> (kind, step, trap, params)."""


# --- travel: flights and a hotel, booked by an SDK-decorated planner-executor agent ----------
def _travel_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _travel_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["find_flight", "find_hotel"])
    return "healthy", "", RUNAWAY, {"step": step, "errors": varying_errors(rng, rng.randint(1, 2))}


def _travel_tool_retry_ok(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"errors": varying_errors(rng, rng.randint(1, 2))}


def _travel_replan_ok(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"sold_out": rng.randint(1, 2)}


def _travel_external_cancel(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _travel_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _travel_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["find_flight", "find_hotel"])
    n = rng.randint(4, 7)
    return RUNAWAY, step, "", {"step": step, "errors": varying_errors(rng, n)}


def _travel_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    n = rng.randint(4, 7)
    return RUNAWAY, "book_flight", "", {"errors": varying_errors(rng, n)}


def _travel_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    versions = rng.randint(3, 4)
    return RUNAWAY, "book_hotel", "", {"versions": versions, "errors": varying_errors(rng, 12)}


def _travel_starved_empty(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["book_hotel", "send_itinerary"])
    return STARVED, step, "", {"step": step, "given": []}


def _travel_starved_partial(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return STARVED, "book_hotel", "", {"step": "book_hotel", "given": ["hotel"]}


def _travel_wrong_checkin(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "find_hotel", "", {"offset_days": rng.choice([-1, 1, 2])}


def _travel_wrong_airport(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "find_flight", "", {"airport_index": rng.randint(0, 2)}


# --- etl: a data pipeline traced with plain OpenTelemetry GenAI spans ------------------------
def _etl_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {"pages": rng.randint(1, 3)}


def _etl_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"pages": rng.randint(5, 12)}


def _etl_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _etl_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"errors": varying_errors(rng, rng.randint(1, 2))}


def _etl_tool_retry_ok(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"errors": varying_errors(rng, rng.randint(1, 2))}


def _etl_loop_stage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    n = rng.randint(4, 7)
    return RUNAWAY, "transform", "", {"errors": varying_errors(rng, n)}


def _etl_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    n = rng.randint(4, 8)
    return RUNAWAY, "load", "", {"errors": varying_errors(rng, n)}


def _etl_wrong_column(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "extract", "", {"column": rng.choice(["amount", "total_amt", "sum"])}


# --- support: tickets handled by an SDK agent written with context managers ------------------
def _support_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _support_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 7)}


def _support_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"errors": varying_errors(rng, rng.randint(1, 2))}


def _support_replan_ok(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {}


def _support_external_reopen(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", PROPAGATION, {}


def _support_loop_lookup(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    n = rng.randint(4, 7)
    return RUNAWAY, "lookup_order", "", {"errors": varying_errors(rng, n)}


def _support_loop_refund_calls(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    n = rng.randint(4, 7)
    return RUNAWAY, "refund", "", {"errors": varying_errors(rng, n)}


def _support_starved(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return STARVED, "draft_reply", "", {"given": rng.choice([[], ["ticket"]])}


def _support_wrong_order(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "lookup_order", "", {"wrong_order": rng.randint(1, 3)}


def _support_wrong_email(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "lookup_customer", "", {"typo": rng.randint(0, 2)}


# --- refund: the openai client under OpenInference, a fake model server (framework spans) -----
def _refund_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _refund_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["lookup", "refund"])
    return "healthy", "", RUNAWAY, {"step": step, "errors": varying_errors(rng, rng.randint(1, 2))}


def _refund_loop(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["lookup", "refund"])
    return RUNAWAY, step, "", {"step": step, "errors": varying_errors(rng, 5)}


# --- restock: a warehouse agent with OpenLLMetry (Traceloop) spans; sealed split only ---------
def _restock_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _restock_flaky_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    at = rng.choice(["inventory_lookup", "schedule_delivery"])
    return "healthy", "", RUNAWAY, {"at": at, "errors": varying_errors(rng, rng.randint(1, 2))}


def _restock_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"at": "supplier_quotes", "errors": errors}


def _restock_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _restock_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", PROPAGATION, {}


def _restock_external_lost(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _restock_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step, at = rng.choice(
        [("check_stock", "inventory_lookup"), ("book_delivery", "schedule_delivery")]
    )
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "at": at, "errors": errors}


def _restock_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, "place_order", "", {"at": "create_purchase_order", "errors": errors}


def _restock_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    versions = rng.randint(3, 4)
    errors = varying_errors(rng, 12)
    return (
        RUNAWAY,
        "book_delivery",
        "",
        {"at": "schedule_delivery", "versions": versions, "errors": errors},
    )


def _restock_wrong_warehouse(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the planner's warehouse first reaches the world through check_stock's lookup
    return PROPAGATION, "check_stock", "", {"index": rng.randint(0, 2)}


def _restock_wrong_quantity(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "place_order", "", {"factor": rng.choice([2, 10])}


def _restock_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "book_delivery", "", {"late_days": rng.randint(1, 4)}


# --- release: a DAG planner with parallel tasks, pydantic-ai spans; sealed-2 split only -------
def _release_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _release_flaky_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    at = rng.choice(["build_image", "scan_image", "run_migrations"])
    return "healthy", "", RUNAWAY, {"at": at, "errors": varying_errors(rng, rng.randint(1, 2))}


def _release_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"at": "rollout", "errors": errors}


def _release_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _release_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the cluster refuses a rolling update and asks for a canary: one re-plan fixes it
    return "healthy", "", PROPAGATION, {}


def _release_external_incident(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    rate = rng.choice([7.5, 9.2, 12.8])
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3), "rate": rate}


def _release_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["scan", "migrate"])
    at = {"scan": "scan_image", "migrate": "run_migrations"}[step]
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "at": at, "errors": errors}


def _release_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the rollout tool asks the model to retry (ModelRetry) every time; the arguments vary
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, "deploy", "", {"at": "rollout", "errors": errors}


def _release_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return RUNAWAY, "deploy", "", {"versions": rng.randint(3, 4), "errors": varying_errors(rng, 12)}


def _release_wrong_version(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the planner's previous patch version is first carried by the build; the final check fails
    return PROPAGATION, "build", "", {}


def _release_wrong_cluster(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wrong cluster is first carried by the migration (parallel with the scan); the
    # roll-out then fails on it
    return PROPAGATION, "migrate", "", {"index": rng.randint(0, 2)}


def _release_wrong_replicas(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "deploy", "", {"factor": rng.choice([2, 10])}


def _release_wrong_window(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return PROPAGATION, "book_window", "", {"late_days": rng.randint(1, 3)}


# --- analyst: a data-analysis agent on the real OpenAI Agents SDK; sealed-3 split only -------
# The world: weekly active users of one product, per region and month, in a warehouse whose
# queries are jobs; a catalog searched page by page; a wiki the report is published to. A tool
# error's suffix says what it is: none (transient, the model calls the tool again with new
# arguments), "(retry later)" (the model gives up, the app re-runs the step), "(replan)" (the
# app asks the planner again) or "(permanent)" (nothing more is tried).
def _suffixed(errors: list[str], suffix: str, last: str = "") -> list[str]:
    out = [f"{e} {suffix}".strip() for e in errors]
    if last and out:
        out[-1] = f"{errors[-1]} {last}"
    return out


def _analyst_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _analyst_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's executor gives up on attempt 1 (and 2); the app's re-run works
    step = rng.choice(["pull_current", "pull_baseline", "compute_change"])
    errors = _suffixed(varying_errors(rng, rng.randint(1, 2)), "(retry later)")
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors}


def _analyst_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the model calls the tool again (new arguments) and the 2nd or 3rd call works
    step = rng.choice(["locate_source", "pull_current", "publish_report"])
    return "healthy", "", RUNAWAY, {"step": step, "errors": varying_errors(rng, rng.randint(1, 2))}


def _analyst_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wiki space was archived and the error names its successor: one re-plan fixes it
    space = rng.choice(["ANALYTICS-2026", "ANALYTICS-NEW", "DATA-REPORTS"])
    return "healthy", "", PROPAGATION, {"moved_to": space}


def _analyst_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _analyst_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the query job reports the same RUNNING state 3-8 times, then it is done
    step = rng.choice(["pull_current", "pull_baseline"])
    return "healthy", "", RUNAWAY, {"step": step, "polls": rng.randint(3, 8)}


def _analyst_external_removed(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the report was published and audited, a retention bot removes the page
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _analyst_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["pull_current", "pull_baseline", "compute_change"])
    errors = _suffixed(varying_errors(rng, rng.randint(4, 7)), "(retry later)", "(permanent)")
    return RUNAWAY, step, "", {"step": step, "errors": errors}


def _analyst_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["locate_source", "pull_current", "publish_report"])
    errors = _suffixed(varying_errors(rng, rng.randint(4, 7)), "", "(permanent)")
    return RUNAWAY, step, "", {"step": step, "errors": errors}


def _analyst_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # publish_report fails in every plan version: a re-run, then a re-plan; the last is final
    versions = rng.randint(3, 4)
    texts = varying_errors(rng, 2 * versions)
    errors = [t + (" (retry later)" if i % 2 == 0 else " (replan)") for i, t in enumerate(texts)]
    errors[-1] = f"{texts[-1]} (permanent)"
    return RUNAWAY, "publish_report", "", {"versions": versions, "errors": errors}


def _analyst_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the query job never leaves RUNNING: the model polls until it gives up, no progress
    step = rng.choice(["pull_current", "pull_baseline"])
    return RUNAWAY, step, "", {"step": step}


def _analyst_wrong_product(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a stale note names another product: the catalog search finds its dataset, and the next
    # step's query fails on that dataset's schema
    product = rng.choice(["Atlas Lite", "Atlas Mobile", "Atlas Classic"])
    return PROPAGATION, "locate_source", "", {"product": product}


def _analyst_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a region code the warehouse does not have: both pulls return 0, compute_change fails
    region = rng.choice(["EMEA", "EU-West", "Europe"])
    return PROPAGATION, "pull_current", "", {"region": region}


def _analyst_wrong_baseline(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the baseline month is not the same month a year earlier: every step works, the audit
    # of the published figure fails
    month = rng.choice(["2025-09", "2025-11", "2024-10"])
    return PROPAGATION, "pull_baseline", "", {"baseline": month}


def _analyst_wrong_space(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a stale note names a wiki space the bot may not write to: publishing fails for good
    space = rng.choice(["FINANCE", "EXEC", "SALES"])
    return PROPAGATION, "publish_report", "", {"space": space}


# --- oncall: incident remediation, a LangGraph graph under OpenLLMetry; sealed-5 split only ---
# The world: an alerting service, a metrics store, hosts in regions, a deploy/restart API whose
# jobs are polled, an incident tracker. Error suffixes as for the analyst: none (transient, the
# model calls the tool again), "(retry later)" (the app re-runs the step), "(replan)" (the app
# asks the planner again) or "(permanent)".
def _oncall_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _oncall_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["fetch_metrics", "diagnose", "remediate"])
    errors = _suffixed(varying_errors(rng, rng.randint(1, 2)), "(retry later)")
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors}


def _oncall_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["find_alert", "fetch_metrics", "close_incident"])
    return "healthy", "", RUNAWAY, {"step": step, "errors": varying_errors(rng, rng.randint(1, 2))}


def _oncall_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the host is being drained and the error names the host that took over: one re-plan
    return "healthy", "", PROPAGATION, {"moved_to": rng.choice(["web-07", "web-11", "web-12"])}


def _oncall_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _oncall_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the restart job reports RUNNING 3-8 times, then it is done
    return "healthy", "", RUNAWAY, {"step": "remediate", "polls": rng.randint(3, 8)}


def _oncall_external_refire(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the incident was closed and the service was healthy, another team's deploy
    # re-opens it: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _oncall_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["fetch_metrics", "diagnose", "remediate"])
    errors = _suffixed(varying_errors(rng, rng.randint(4, 7)), "(retry later)", "(permanent)")
    return RUNAWAY, step, "", {"step": step, "errors": errors}


def _oncall_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    step = rng.choice(["find_alert", "diagnose", "close_incident"])
    errors = _suffixed(varying_errors(rng, rng.randint(4, 7)), "", "(permanent)")
    return RUNAWAY, step, "", {"step": step, "errors": errors}


def _oncall_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # remediate fails in every plan version: a re-run, then a re-plan; the last is final
    versions = rng.randint(3, 4)
    texts = varying_errors(rng, 2 * versions)
    errors = [t + (" (retry later)" if i % 2 == 0 else " (replan)") for i, t in enumerate(texts)]
    errors[-1] = f"{texts[-1]} (permanent)"
    return RUNAWAY, "remediate", "", {"versions": versions, "errors": errors}


def _oncall_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the restart job never leaves RUNNING: the model polls until it gives up, no progress
    return RUNAWAY, "remediate", "", {"step": "remediate"}


def _oncall_wrong_service(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a stale runbook names the old service: find_alert finds that service's (resolved)
    # incident, and closing it fails for good
    service = rng.choice(["checkout-v1", "checkout-legacy", "cart"])
    return PROPAGATION, "find_alert", "", {"service": service}


def _oncall_wrong_host(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a stale runbook names a decommissioned host: its metrics are empty, diagnose fails
    host = rng.choice(["web-01", "web-02", "db-03"])
    return PROPAGATION, "fetch_metrics", "", {"host": host}


def _oncall_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the runbook names another region: the restart works there, every step succeeds, and the
    # app's final health check of the real region fails
    region = rng.choice(["us-east-1", "ap-south-1", "eu-central-1"])
    return PROPAGATION, "remediate", "", {"region": region}


def _oncall_wrong_threshold(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the runbook's error-rate threshold is far too high: the diagnosis finds no regression,
    # the remediation does nothing, every step succeeds and the final health check fails
    return PROPAGATION, "diagnose", "", {"threshold": rng.choice([20.0, 35.0, 50.0])}


# --- claims: insurance-claim adjudication, the real pydantic-ai Agent; sealed-6 split only ----
# The world: a policy system, a coverage service, a prior-claims index read page by page, field
# inspections that are jobs (polled), a payout calculator, a payments rail. Its tools have
# their own error semantics (not suffixes): ``ModelRetry`` (transient: the model calls the tool
# again with other arguments, inside one executor run), ``Unavailable`` (the executor run
# fails, the app re-runs the step), ``Rerouted`` (the app asks the planner again for the steps
# not done) and ``ClaimRejected`` (final). The plan is a numbered markdown list.
def _claims_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _claims_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's executor run fails with Unavailable once or twice; the app's re-run works
    step = rng.choice(["lookup_policy", "check_coverage", "compute_payout"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "unavailable"}


def _claims_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tool asks for a retry (ModelRetry) once or twice; the model's 2nd or 3rd call works
    step = rng.choice(["screen_history", "order_inspection", "issue_payment"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "retry"}


def _claims_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the claimant's bank migrated the account and the rail names the new IBAN: one re-plan
    iban = rng.choice(["DE02 1203 0000 0000 2020 51", "DE75 5121 0800 1245 1261 99"])
    return "healthy", "", PROPAGATION, {"moved_to": iban}


def _claims_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _claims_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the field inspection reports IN_PROGRESS 3-8 times, then it is complete
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _claims_external_reversal(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the payment was made and the app's audit passed, the claimant's bank returns the
    # transfer (a court's freeze on the account): not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _claims_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step fails with Unavailable (varying texts), re-run by the app;
    # the last error is final (ClaimRejected)
    step = rng.choice(["lookup_policy", "check_coverage", "compute_payout"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "unavailable"}


def _claims_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the tool asks for a retry again and again (the model varies its
    # arguments), the last error is final (ClaimRejected)
    step = rng.choice(["check_coverage", "order_inspection", "issue_payment"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "retry"}


def _claims_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # issue_payment fails in every plan version: Unavailable (re-run), then Rerouted (re-plan);
    # the last error is final
    versions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "issue_payment",
        "",
        {
            "step": "issue_payment",
            "versions": versions,
            "errors": varying_errors(rng, 2 * versions),
            "raise": "replans",
        },
    )


def _claims_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the field inspection never leaves IN_PROGRESS: the model polls until it gives up
    return RUNAWAY, "order_inspection", "", {"step": "order_inspection"}


def _claims_wrong_policy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the intake note's policy number has two digits swapped: lookup_policy finds another
    # holder's lapsed policy, and check_coverage rejects the claim on it
    return PROPAGATION, "lookup_policy", "", {"swap": rng.randint(0, 3)}


def _claims_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another adjuster region: the inspection completes without an estimate
    # (no such property there), and compute_payout fails on it
    region = rng.choice(["northeast", "southwest", "pacific"])
    return PROPAGATION, "order_inspection", "", {"region": region}


def _claims_wrong_deductible(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's deductible is an old one: every step succeeds, the app's payout audit fails
    return PROPAGATION, "compute_payout", "", {"deductible": rng.choice([0, 250, 500])}


def _claims_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account is a closed one: the payment is rejected for good
    iban = rng.choice(["DE44 5001 0517 5407 3249 31", "DE12 5001 0517 0648 4898 90"])
    return PROPAGATION, "issue_payment", "", {"account": iban}


# --- lab: clinical-lab sample scheduling, smolagents under OpenInference; sealed-7 split only -
# The world: a LIMS that registers a sample for an assay, an analyzer catalogue read page by
# page per site, analyzer booking, assay runs (a job polled until it has a result), report
# delivery to the clinician; the app then verifies the report and watches it. The planner
# trusts the requisition notes over the order: the scenario's wrong value comes from a note.
def _lab_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # one or two transient failures: either the executor run fails and the app re-runs the
    # step ("unavailable"), or the tool errors and the model calls it again in the same run
    step = rng.choice(["register_sample", "find_analyzer", "book_slot", "send_report"])
    errors = varying_errors(rng, rng.randint(1, 2))
    how = rng.choice(["unavailable", "retry"])
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": how}


def _lab_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the analyzer found is taken down for maintenance when booked, the error names its
    # replacement: one re-plan with it, then everything works
    return "healthy", "", PROPAGATION, {"replacement": rng.choice(["AN-207", "AN-311"])}


def _lab_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the site's analyzer catalogue has 4-9 pages; the free analyzer is on the last one
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _lab_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the assay run reports RUNNING 3-8 times, then it has a result
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _lab_external_recall(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the report was sent and the app's check passed, the reagent maker recalls the lot
    # used by the run: the report is withdrawn, not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _lab_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _lab_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step fails (varying texts), re-run by the app; the last error
    # is final
    step = rng.choice(["register_sample", "book_slot", "send_report"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "unavailable"}


def _lab_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the tool errors again and again while the model varies its
    # arguments; the last error is final
    step = rng.choice(["find_analyzer", "book_slot", "send_report"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "retry"}


def _lab_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # book_slot fails in every plan version: a failed run (re-run), then a reroute (re-plan);
    # the last error is final
    versions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "book_slot",
        "",
        {
            "step": "book_slot",
            "versions": versions,
            "errors": varying_errors(rng, 2 * versions),
            "raise": "replans",
        },
    )


def _lab_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the assay run never leaves RUNNING: the model polls until it gives up
    return RUNAWAY, "run_assay", "", {"step": "run_assay"}


def _lab_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another site: find_analyzer returns an analyzer there, and book_slot
    # fails because the sample is stored at the ordering site
    return PROPAGATION, "find_analyzer", "", {"site": rng.choice(["north", "riverside", "east"])}


def _lab_wrong_assay(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's assay code is a neighbouring panel: every step succeeds, the app's check of
    # the report against the order fails
    return PROPAGATION, "register_sample", "", {"assay": rng.choice(["BMP", "LFT", "TSH"])}


def _lab_wrong_volume(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note asks for ten times the sample's volume: run_assay is refused at once
    return PROPAGATION, "run_assay", "", {"volume_ul": rng.choice([400, 500, 800])}


# --- lease: rental leasing, Agno under OpenInference's Agno instrumentor; sealed-8 split only --
# The world: a listing of vacant units read page by page per building, a screening bureau (a
# check polled until it clears), a lease register, a payment processor, an e-signature service;
# the app then verifies the lease and watches its signature. The planner (one add_step tool
# call per step) trusts the leasing agent's notes over the application: the scenario's wrong
# value comes from a note.
def _lease_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _lease_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service is UNAVAILABLE once or twice; the app's re-run of the step works
    step = rng.choice(["find_unit", "screen_applicant", "draft_lease", "collect_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "unavailable"}


def _lease_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # DEADLINE_EXCEEDED once or twice inside one executor run; the model's 2nd or 3rd call
    # (a longer timeout) works
    step = rng.choice(["screen_applicant", "draft_lease", "collect_deposit", "send_for_signature"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "retry"}


def _lease_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the unit found is taken off the market when the lease is drafted; the error names a held
    # unit of the same floor plan: one re-plan with it, then everything works
    return "healthy", "", PROPAGATION, {"held_unit": rng.choice(["U-ha712", "U-ha902"])}


def _lease_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the building's listing has 4-9 pages; the vacant unit is on the last one
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _lease_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the screening check is PENDING 3-8 times, then it clears
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _lease_external_void(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the lease was sent, verified and signed, the city posts a vacate order for the
    # building: the lease is voided, not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(3, 4)}


def _lease_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets UNAVAILABLE (varying texts), re-run by the app; the
    # last error is final
    step = rng.choice(["find_unit", "draft_lease", "collect_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "unavailable"}


def _lease_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers DEADLINE_EXCEEDED again and again while the
    # model raises its timeout; the last error is final
    step = rng.choice(["screen_applicant", "collect_deposit", "send_for_signature"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "retry"}


def _lease_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # collect_deposit fails in every plan version: UNAVAILABLE (re-run), then a rotated
    # merchant account (re-plan); the last error is final
    versions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "collect_deposit",
        "",
        {
            "step": "collect_deposit",
            "versions": versions,
            "errors": varying_errors(rng, 2 * versions),
            "raise": "replans",
        },
    )


def _lease_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the screening check never leaves PENDING: the model polls until it gives up
    return RUNAWAY, "screen_applicant", "", {"step": "screen_applicant"}


def _lease_wrong_building(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another building: find_unit returns a unit there, and draft_lease is
    # refused because the application is for the applicant's building
    building = rng.choice(["elm-court", "northgate", "the-foundry"])
    return PROPAGATION, "find_unit", "", {"building": building}


def _lease_wrong_applicant(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's applicant id has two digits swapped: the bureau screens that id, and
    # draft_lease is refused (no application on file for it)
    applicant = rng.choice(["AP-58123", "AP-85213", "AP-58231"])
    return PROPAGATION, "screen_applicant", "", {"applicant": applicant}


def _lease_wrong_rent(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's rent has two digits swapped: every step succeeds (the lease and the deposit
    # carry it), the app's check of the lease against the listing fails
    return PROPAGATION, "draft_lease", "", {"rent": rng.choice([1850, 1508, 5180])}


def _lease_wrong_email(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's e-mail address is misspelt: sending the lease bounces for good
    email = rng.choice(
        ["m.okafor@mailbox.exmaple", "m.okafr@mailbox.example", "m.okafor@mailbx.example"]
    )
    return PROPAGATION, "send_for_signature", "", {"email": email}


# --- customs: import clearance on DSPy under OpenInference's DSPy instrumentor (sealed-9) -----
# A tariff read page by page, a chamber of commerce's certificate of origin polled until issued,
# the customs declaration system, the duty ledger (a deferment account) and the port's
# collection bookings; the app then checks the declaration against the invoice and watches the
# container. The planner (a YAML checklist revised in place) trusts the broker's notes over the
# shipment file: the scenario's wrong value comes from a note.
def _customs_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _customs_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the item's service answers 503 once or twice; the app's re-run of the item works
    step = rng.choice(["classify_goods", "origin_certificate", "file_declaration", "pay_duties"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "unavailable"}


def _customs_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # 504 once or twice inside one clerk run; the model's 2nd or 3rd call (a longer timeout)
    # works
    step = rng.choice(["origin_certificate", "file_declaration", "pay_duties", "book_collection"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "timeout"}


def _customs_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vessel was diverted: lodging the declaration at the planned port answers 409 naming
    # the port of discharge; the checklist is revised once (both ports), then everything works
    return "healthy", "", PROPAGATION, {"diverted_to": rng.choice(["london-gateway", "tilbury"])}


def _customs_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tariff search has 4-9 pages of headings; the code is on the last one
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _customs_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate request is PENDING 3-8 times, then it is issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _customs_external_hold(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the goods were declared, paid, released, booked and verified, Border Force holds
    # the container at the depot for a post-clearance audit: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _customs_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every clerk run of the item meets 503 (varying texts), re-run by the app; the last error
    # is final
    step = rng.choice(["classify_goods", "file_declaration", "pay_duties"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "unavailable"}


def _customs_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one clerk run the service answers 504 again and again while the model raises its
    # timeout; the last error is final
    step = rng.choice(["origin_certificate", "file_declaration", "book_collection"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "timeout"}


def _customs_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_duties fails in every revision of the checklist: 503 (re-run), then 409 naming
    # another deferment account (revision); the last error is final
    versions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_duties",
        "",
        {
            "step": "pay_duties",
            "versions": versions,
            "errors": varying_errors(rng, 2 * versions),
            "raise": "replans",
        },
    )


def _customs_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate request never leaves PENDING: the model polls until it gives up
    return RUNAWAY, "origin_certificate", "", {"step": "origin_certificate"}


def _customs_wrong_goods(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note describes other goods: classify_goods finds another commodity code; the
    # declaration and the duties go through under it, and the port refuses the release at
    # book_collection (a documentary check), for good
    goods = rng.choice(
        [
            "corded drills, mains powered, 230 V",
            "hammer drills, pneumatic",
            "drill bits, tungsten carbide",
        ]
    )
    return PROPAGATION, "classify_goods", "", {"goods": goods}


def _customs_wrong_origin(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another origin: the chamber issues a certificate of that origin, and
    # file_declaration is refused (the bill of lading shows the real one)
    return PROPAGATION, "origin_certificate", "", {"origin": rng.choice(["CN", "TH", "MY"])}


def _customs_wrong_value(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's customs value has two digits swapped: every item succeeds (the duties are
    # assessed on it), the app's check of the declaration against the invoice fails
    return PROPAGATION, "file_declaration", "", {"customs_value": rng.choice([42800, 84200, 48020])}


def _customs_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's deferment account has two digits swapped: paying the duties is refused for
    # good
    account = rng.choice(["DAN-8241037", "DAN-2814037", "DAN-8214073"])
    return PROPAGATION, "pay_duties", "", {"account": account}


# --- venue: conference venue booking on Haystack under OpenInference's instrumentor (sealed-10)
# A venue platform searched page by page, a hold the venue confirms later (polled), the
# platform's caterer, deposits from the organiser's billing account and the invitations; the app
# then checks the booking against the brief and watches the event. The planner (a Haystack
# pipeline answering a markdown table) trusts the organiser's notes over the brief: the
# scenario's wrong value comes from a note.
def _venue_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _venue_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the row's service answers EBUSY once or twice; the app's re-run of the row works
    step = rng.choice(["find_venue", "hold_dates", "order_catering", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "busy"}


def _venue_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # EAGAIN once or twice inside one executor run; the model's 2nd or 3rd call (a longer
    # timeout) works
    step = rng.choice(["hold_dates", "order_catering", "pay_deposit", "send_invites"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _venue_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the caterer withdrew the brief's menu: ordering answers ESTALE naming the menu it serves
    # now; one new table (the rows not done, the new menu), then everything works
    return "healthy", "", PROPAGATION, {"new_menu": rng.choice(["bowl-food-veg", "buffet-mixed"])}


def _venue_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the venue search has 4-9 pages of booked-out venues; the free one is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _venue_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hold is PENDING 3-8 times, then the venue confirms it
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _venue_external_strike(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the venue was held, catered, paid for, the invitations sent and the booking
    # verified, the venue's staff strike and the venue cancels the event: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _venue_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the row meets EBUSY (varying texts), re-run by the app; the last
    # error is final
    step = rng.choice(["find_venue", "hold_dates", "order_catering", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "busy"}


def _venue_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers EAGAIN again and again while the model raises
    # its timeout; the last error is final
    step = rng.choice(["hold_dates", "order_catering", "send_invites"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _venue_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_deposit fails in every version of the table: EBUSY (re-run), then ESTALE naming
    # another billing account (a new table); the last error is final
    versions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_deposit",
        "",
        {
            "step": "pay_deposit",
            "versions": versions,
            "errors": varying_errors(rng, 2 * versions),
            "raise": "replans",
        },
    )


def _venue_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hold never leaves PENDING: the model polls until it gives up
    return RUNAWAY, "hold_dates", "", {"step": "hold_dates"}


def _venue_wrong_city(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another city: find_venue finds a venue there and the hold goes through;
    # the caterer, who delivers only in the brief's city, refuses the order for good
    return PROPAGATION, "find_venue", "", {"city": rng.choice(["leeds", "lincoln", "luton"])}


def _venue_wrong_dates(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's dates are a week or a month off: every row succeeds (the hold, the catering,
    # the deposit and the invitations carry them), the app's check against the brief fails
    start, end = rng.choice(
        [("2027-03-18", "2027-03-19"), ("2027-04-11", "2027-04-12"), ("2027-03-04", "2027-03-05")]
    )
    return PROPAGATION, "hold_dates", "", {"start": start, "end": end}


def _venue_wrong_headcount(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's catering headcount has two digits swapped or a zero too many: the caterer
    # takes the order, and the deposit is refused for good (over the billing approval limit)
    return PROPAGATION, "order_catering", "", {"covers": rng.choice([420, 402, 2400])}


def _venue_wrong_billing(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's billing account has two digits swapped: paying the deposit is refused for good
    account = rng.choice(["BA-51520", "BA-55210", "BA-55102"])
    return PROPAGATION, "pay_deposit", "", {"billing": account}


# --- fleet: delivery-van servicing on Semantic Kernel under its own diagnostics (sealed-11)
# A workshop directory searched page by page, parts the supplier ships later (polled), workshop
# bays, the fleet card and the driver app; the app then checks the job sheet against the van's
# spec and watches the van back on the road. The planner (a ChatCompletionAgent answering
# "Step N — slug: goal" prose) trusts the fleet manager's notes over the van's record: the
# scenario's wrong value comes from a note.
def _fleet_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _fleet_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers a W (wait) message once or twice; the app's re-run works
    step = rng.choice(["find_workshop", "order_parts", "book_bay", "charge_card"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "wait"}


def _fleet_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a T (transient) message once or twice inside one clerk run; the model's 2nd or 3rd call
    # (a longer wait) works
    step = rng.choice(["order_parts", "book_bay", "charge_card", "notify_driver"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _fleet_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the supplier superseded the service part: ordering answers an R (revise) message naming
    # the new number; one revised work order, then everything works
    return "healthy", "", PROPAGATION, {"new_part": rng.choice(["BRK-4418", "BRK-5017"])}


def _fleet_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the workshop directory has 4-9 pages of workshops with no free bay; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _fleet_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the parts order is BACKORDERED 3-8 times, then delivered
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _fleet_external_recall(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the van was booked in, charged, its driver told and the job sheet verified, the
    # manufacturer recalls the make and the van is grounded: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _fleet_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every clerk run of the step meets a W message (varying texts), re-run by the app; the
    # last error is final
    step = rng.choice(["find_workshop", "order_parts", "book_bay", "charge_card"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "wait"}


def _fleet_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one clerk run the service answers T messages again and again while the model
    # raises its wait; the last error is final
    step = rng.choice(["order_parts", "book_bay", "notify_driver"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _fleet_loop_revisions(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # charge_card fails in every revision of the work order: a W message (re-run), then an R
    # message naming another fleet card (a revision); the last error is final
    revisions = rng.randint(3, 4)
    return (
        RUNAWAY,
        "charge_card",
        "",
        {
            "step": "charge_card",
            "revisions": revisions,
            "errors": varying_errors(rng, 2 * revisions),
            "raise": "revisions",
        },
    )


def _fleet_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the parts order never leaves BACKORDERED: the clerk checks until it abandons the step
    return RUNAWAY, "order_parts", "", {"step": "order_parts"}


def _fleet_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another region: find_workshop finds a workshop there and the parts are
    # ordered to it; booking the van into its bay is refused for good (out of range)
    return PROPAGATION, "find_workshop", "", {"region": rng.choice(["cumbria", "kent", "devon"])}


def _fleet_wrong_part(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's part number has two digits swapped: every step succeeds (the bay, the charge
    # and the notice carry it), the app's job-sheet check against the van's spec fails
    return PROPAGATION, "order_parts", "", {"part": rng.choice(["BRK-4147", "BRK-4471"])}


def _fleet_wrong_van(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's registration has two characters swapped: the workshop books that van in, and
    # charging the job is refused for good (the van is not on the fleet card)
    return PROPAGATION, "book_bay", "", {"registration": rng.choice(["YK17-FVX", "YK71-VFX"])}


def _fleet_wrong_card(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's fleet card has two digits swapped: charging the job is refused for good
    return PROPAGATION, "charge_card", "", {"card": rng.choice(["FC-820214", "FC-802241"])}


# --- solar: home-solar installation on Microsoft Agent Framework under its own instrumentation
# (sealed-12). A registry of certified installers searched page by page, the utility's
# interconnection approval (given later: polled), installers' crews, the homeowner's solar loan
# and the homeowner portal; the app then checks the approval against the home's meter and
# watches the system come online. The planner (an Agent answering a ReWOO plan) trusts the
# sales notes over the homeowner's record: the scenario's wrong value comes from a note.
def _solar_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _solar_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers a backlog problem once or twice; the app's re-run works
    step = rng.choice(["find_installer", "apply_interconnect", "book_install", "draw_loan"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "backlog"}


def _solar_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a throttled problem once or twice inside one worker run; the model's 2nd or 3rd call (a
    # doubled timeout) works
    step = rng.choice(["apply_interconnect", "book_install", "draw_loan", "notify_owner"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _solar_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the utility replaced the home's meter: the application answers a conflict naming the new
    # meter; one new plan, then everything works
    return "healthy", "", PROPAGATION, {"new_meter": rng.choice(["MTR-55190", "MTR-61207"])}


def _solar_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the installer registry has 4-9 pages of fully booked installers; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _solar_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the interconnection application is PENDING 3-8 times, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _solar_external_hail(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the installation was booked, funded, its owner told and the approval verified, a
    # hailstorm breaks the panels and the system goes offline: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _solar_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every worker run of the step meets a backlog problem (varying texts), re-run by the app;
    # the last problem is final
    step = rng.choice(["find_installer", "apply_interconnect", "book_install", "draw_loan"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "backlog"}


def _solar_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one worker run the service answers throttled problems again and again while the
    # model doubles its timeout; the last problem is final
    step = rng.choice(["apply_interconnect", "book_install", "notify_owner"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _solar_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # draw_loan fails in every plan: a backlog problem (re-run), then a conflict naming another
    # solar loan (a new plan); the last problem is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "draw_loan",
        "",
        {
            "step": "draw_loan",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _solar_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the interconnection application never leaves PENDING: the worker checks until it stalls
    return RUNAWAY, "apply_interconnect", "", {"step": "apply_interconnect"}


def _solar_wrong_county(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another county: find_installer finds an installer there and the
    # interconnection is applied for with it; booking its crew is refused for good (outside its
    # service area)
    return PROPAGATION, "find_installer", "", {"county": rng.choice(["hays", "bastrop", "bexar"])}


def _solar_wrong_meter(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's meter number has two digits swapped: every step succeeds (the booking, the
    # draw and the notice carry the approval), the app's interconnection check fails
    return PROPAGATION, "apply_interconnect", "", {"meter": rng.choice(["MTR-55210", "MTR-51520"])}


def _solar_wrong_address(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's house number has its digits swapped: the crew is booked at that address, and
    # drawing the loan is refused for good (not the property securing it)
    return (
        PROPAGATION,
        "book_install",
        "",
        {"address": rng.choice(["41 Larkspur Rd", "14 Larkspur Dr"])},
    )


def _solar_wrong_loan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's loan number has two digits swapped: the draw is refused for good
    return PROPAGATION, "draw_loan", "", {"loan": rng.choice(["SL-602418", "SL-620481"])}


# --- moving: a household move on the Langfuse Python SDK (sealed-13). A directory of licensed
# movers searched page by page, the city's curbside parking permit for the truck (granted
# later: polled), the mover's crew, the customer's card for the deposit and the customer
# portal; the app then checks the permit against the moving day and watches the move to
# delivery. The planner (an XML plan) trusts the sales call's notes over the customer's order:
# the scenario's wrong value comes from a note.
def _moving_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _moving_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers a queued error once or twice; the app's re-run works
    step = rng.choice(["find_mover", "request_permit", "book_crew", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "queued"}


def _moving_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a throttle error once or twice inside one executor run; the model's 2nd or 3rd call (a
    # later slot) works
    step = rng.choice(["request_permit", "book_crew", "pay_deposit", "notify_customer"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _moving_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the city closed the street on the moving day: the permit request answers a conflict
    # naming the next free day; one new plan, then everything works
    return "healthy", "", PROPAGATION, {"new_day": rng.choice(["2027-06-22", "2027-06-23"])}


def _moving_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mover directory has 4-9 pages of fully booked movers; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _moving_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the parking permit is PENDING 3-8 times, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _moving_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the crew was booked, the deposit paid, the customer told and the permit verified,
    # a highway closure stops the loaded truck: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _moving_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets a queued error (varying texts), re-run by the app;
    # the last error is final
    step = rng.choice(["find_mover", "request_permit", "book_crew", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "queued"}


def _moving_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers throttle errors again and again while the
    # model asks for a later slot; the last error is final
    step = rng.choice(["request_permit", "book_crew", "notify_customer"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _moving_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_deposit fails in every plan: a queued error (re-run), then a conflict naming another
    # card on file (a new plan); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_deposit",
        "",
        {
            "step": "pay_deposit",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _moving_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the parking permit never leaves PENDING: the executor checks until it stalls
    return RUNAWAY, "request_permit", "", {"step": "request_permit"}


def _moving_wrong_city(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another city: find_mover finds a mover licensed there and the permit is
    # requested with it; booking its crew is refused for good (not licensed in the city)
    return PROPAGATION, "find_mover", "", {"city": rng.choice(["oakland", "berkeley", "alameda"])}


def _moving_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's moving day has its day digits swapped: every step succeeds (the booking, the
    # deposit and the notice carry the permit), the app's permit check fails
    return PROPAGATION, "request_permit", "", {"day": rng.choice(["2027-06-12", "2027-06-02"])}


def _moving_wrong_address(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's address has its house number's digits swapped or the wrong street type: the
    # crew is booked at that address, and the deposit is refused for good (not the address on
    # the quote)
    return (
        PROPAGATION,
        "book_crew",
        "",
        {"address": rng.choice(["72 Alder St", "27 Alder Ave"])},
    )


def _moving_wrong_card(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's card token has two digits swapped: the deposit is refused for good
    return PROPAGATION, "pay_deposit", "", {"card": rng.choice(["CARD-4471", "CARD-4714"])}


# --- grants: a research grant funded on the Logfire SDK (sealed-14). A registry of oversight
# reviewers searched page by page, the ethics board's clearance (decided later: polled), the
# award panel, the institution's bank account for the first tranche and the grantee portal;
# the app then checks the clearance against the grant's start and watches the grant's first
# quarter. The planner (a Makefile) trusts the program officer's notes over the proposal: the
# scenario's wrong value comes from a note.
def _grants_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _grants_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers a serialization failure (40001) once or twice; the app's
    # re-run works
    step = rng.choice(["find_reviewer", "request_clearance", "convene_panel", "disburse_tranche"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "queued"}


def _grants_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # too many connections (53300) once or twice inside one executor run; the model's 2nd or
    # 3rd call (a later slot) works
    step = rng.choice(["request_clearance", "convene_panel", "disburse_tranche", "notify_grantee"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _grants_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ethics board does not sit before the grant's start: the clearance request answers
    # 55000 naming the earliest start; one new plan, then everything works
    return "healthy", "", PROPAGATION, {"new_start": rng.choice(["2027-04-05", "2027-05-03"])}


def _grants_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the reviewer registry has 4-9 pages of conflicted reviewers; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _grants_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the clearance is PENDING 3-8 times, then cleared
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _grants_external_freeze(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the panel, the tranche, the letter and a passed check, a federal funding freeze on
    # the institution suspends the grant: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _grants_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets a serialization failure (varying texts), re-run by
    # the app; the last error is final (57014)
    step = rng.choice(["find_reviewer", "request_clearance", "convene_panel", "disburse_tranche"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "queued"}


def _grants_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers 53300 again and again while the model asks
    # for a later slot; the last error is final
    step = rng.choice(["request_clearance", "convene_panel", "notify_grantee"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _grants_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # disburse_tranche fails in every plan: a serialization failure (re-run), then 55000 naming
    # another account (a new plan); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "disburse_tranche",
        "",
        {
            "step": "disburse_tranche",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _grants_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the clearance never leaves PENDING: the executor checks until it stalls
    return RUNAWAY, "request_clearance", "", {"step": "request_clearance"}


def _grants_wrong_field(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another field: find_reviewer finds a reviewer of that field and the
    # clearance goes through with them; convening the panel is refused for good (42501)
    return PROPAGATION, "find_reviewer", "", {"field": rng.choice(["economics", "ecotoxicology"])}


def _grants_wrong_start(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's start date has its digits swapped: every step succeeds, the app's award check
    # fails (the clearance is from another date)
    return PROPAGATION, "request_clearance", "", {"start": rng.choice(["2027-01-03", "2027-03-10"])}


def _grants_wrong_institution(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's institution id has two digits swapped: the panel awards it, the tranche is
    # refused for good (not the institution on the proposal)
    return (
        PROPAGATION,
        "convene_panel",
        "",
        {"institution": rng.choice(["INST-3871", "INST-8317"])},
    )


def _grants_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's bank account has two digits swapped: the tranche is refused for good (02000)
    return (
        PROPAGATION,
        "disburse_tranche",
        "",
        {"account": rng.choice(["IBAN-DE44-5012", "IBAN-DE44-5201"])},
    )


# --- museum: a painting lent to another museum's exhibition, traced only through MLflow Tracing
# (sealed-15). A registry of fine-art shippers searched page by page, the state indemnity that
# insures the loan (approved later: polled), the shipper's climate-controlled transport, the loans
# office's fee invoice and the borrower's registrar; the app then checks the indemnity's cover
# against the agreed valuation and watches the shipment to the gallery wall. The planner (RFC 822
# stanzas, amendments after a failure) trusts the registrar's notes over the loan agreement: the
# scenario's wrong value comes from a note.
def _museum_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _museum_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers EX_UNAVAILABLE once or twice; the app's re-run works
    step = rng.choice(["find_shipper", "request_indemnity", "book_transport", "invoice_fee"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "unavailable"}


def _museum_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # EX_TEMPFAIL once or twice inside one executor run; the model's 2nd or 3rd call (a later
    # window) works
    step = rng.choice(["request_indemnity", "book_transport", "invoice_fee", "confirm_loan"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _museum_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no climate-controlled truck is free on the shipping day: the booking answers EX_CONFIG
    # naming the next slot; one amendment, then everything works
    return "healthy", "", PROPAGATION, {"new_slot": rng.choice(["2027-03-15", "2027-03-22"])}


def _museum_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the shipper registry has 4-9 pages of shippers whose accreditation lapsed; the good one
    # is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _museum_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the indemnity application is UNDER_REVIEW 3-8 times, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _museum_external_flood(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the transport was booked, the fee invoiced, the registrar told and the indemnity
    # verified, a burst main floods the gallery and the lender recalls the painting: not the
    # agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(2, 4)}


def _museum_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets EX_UNAVAILABLE (varying texts), re-run by the app;
    # the last error is final
    step = rng.choice(["find_shipper", "request_indemnity", "book_transport", "invoice_fee"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "unavailable"}


def _museum_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers EX_TEMPFAIL again and again while the model
    # asks for a later window; the last error is final
    step = rng.choice(["request_indemnity", "book_transport", "confirm_loan"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _museum_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # invoice_fee fails in every revision: EX_UNAVAILABLE (re-run), then EX_CONFIG naming
    # another of the borrower's accounts (an amendment); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "invoice_fee",
        "",
        {
            "step": "invoice_fee",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _museum_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the indemnity application never leaves UNDER_REVIEW: the executor checks until it stalls
    return RUNAWAY, "request_indemnity", "", {"step": "request_indemnity"}


def _museum_wrong_country(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names a neighbouring country: find_shipper finds a shipper accredited there and
    # the indemnity is applied for with it; booking its transport is refused for good (no
    # accreditation for the route)
    return PROPAGATION, "find_shipper", "", {"country": rng.choice(["se", "no", "de"])}


def _museum_wrong_valuation(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's valuation has two digits swapped: every step succeeds (the booking, the
    # invoice and the confirmation carry the indemnity), the app's indemnity check fails
    return (
        PROPAGATION,
        "request_indemnity",
        "",
        {"valuation": rng.choice([4080000, 8400000])},
    )


def _museum_wrong_venue(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another of the borrower's galleries: the transport is booked to it, and
    # the fee invoice is refused for good (not the venue on the loan agreement)
    return PROPAGATION, "book_transport", "", {"venue": rng.choice(["KHN-GAL5", "KHN-GAL8"])}


def _museum_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account number has two digits swapped: the fee invoice is refused for good
    return PROPAGATION, "invoice_fee", "", {"account": rng.choice(["ACC-7371", "ACC-7713"])}


# --- marina: a boat owner's seasonal berth, a LangGraph graph under OpenInference's LangChain
# instrumentor (sealed-16). A registry of free berths read page by page, the harbor master's
# mooring permit (granted later: polled), the berth lease, the owner's card for the season's fee
# and the owner portal; the app then checks the permit against the season's opening and watches
# the vessel to its berth. The planner (a URI plan) trusts the broker's notes over the owner's
# order: the scenario's wrong value comes from a note.
def _marina_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _marina_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers a NACK/later once or twice; the supervisor's re-run works
    step = rng.choice(["find_berth", "request_permit", "lease_berth", "pay_fee"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _marina_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a NACK/busy once or twice inside one executor sub-graph run; the model's 2nd or 3rd call
    # (a later slot) works
    step = rng.choice(["request_permit", "lease_berth", "pay_fee", "notify_owner"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _marina_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the moorings are dredged past the season's start: the permit request answers a clash
    # naming the next free start; one revision, then everything works
    return "healthy", "", PROPAGATION, {"new_start": rng.choice(["2027-04-08", "2027-04-15"])}


def _marina_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the berth registry has 4-9 pages of taken berths; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _marina_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mooring permit is PENDING 3-8 times, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _marina_external_gale(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the lease was signed, the fee paid, the owner told and the permit verified, a gale
    # warning closes the harbor mouth on the vessel's passage: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 3)}


def _marina_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets a NACK/later (varying texts), re-run by the
    # supervisor; the last error is final
    step = rng.choice(["find_berth", "request_permit", "lease_berth", "pay_fee"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _marina_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor sub-graph run the service answers NACK/busy again and again while the
    # model asks for a later slot; the last error is final
    step = rng.choice(["request_permit", "lease_berth", "notify_owner"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _marina_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_fee fails in every plan: a NACK/later (re-run), then a NACK/clash naming another card
    # on file (a revision); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_fee",
        "",
        {
            "step": "pay_fee",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _marina_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mooring permit never leaves PENDING: the executor checks until it stalls
    return RUNAWAY, "request_permit", "", {"step": "request_permit"}


def _marina_wrong_harbor(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another harbor: find_berth finds a berth there and the permit is granted
    # for it; signing its lease is refused for good (not the owner's harbor)
    return PROPAGATION, "find_berth", "", {"harbor": rng.choice(["tiburon", "richmond", "alameda"])}


def _marina_wrong_start(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's season start has its month and day swapped or a digit moved: every step
    # succeeds (the lease, the fee and the notice carry the permit), the app's permit check fails
    return PROPAGATION, "request_permit", "", {"start": rng.choice(["2027-01-04", "2027-04-10"])}


def _marina_wrong_vessel(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's vessel registration has two digits swapped: the lease is signed for it, and
    # the fee is refused for good (not the insured vessel)
    return PROPAGATION, "lease_berth", "", {"vessel": rng.choice(["CF-4471-ZK", "CF-1447-ZK"])}


def _marina_wrong_card(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's card token has two digits swapped: the fee is refused for good
    return PROPAGATION, "pay_fee", "", {"card": rng.choice(["CARD-8532", "CARD-3852"])}


# --- harvest: a grower's grape harvest, the ``openai`` client under OpenLLMetry's OpenAI
# instrumentor plus the app's plain spans (sealed-17). A roster of picking crews read page by
# page, the winery's press booked for the pick day (confirmed later: polled), run in parallel;
# then the pick schedule, the deposit on the grower's card and the grower portal; the app then
# checks the press day and watches the fruit's truck. The planner (a shell script plan) trusts
# the field manager's notes over the grower's order: the scenario's wrong value comes from a note.
def _harvest_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _harvest_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers FAULT[transient] once or twice; the app's re-run works
    step = rng.choice(["find_crew", "book_press", "schedule_pick", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _harvest_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a FAULT[hold] once or twice inside one executor conversation; the model's 2nd or 3rd call
    # (a later window) works
    step = rng.choice(["book_press", "schedule_pick", "pay_deposit", "notify_grower"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _harvest_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the press is full on the pick day: the booking answers a conflict naming the next open
    # day; one revision, then everything works
    return "healthy", "", PROPAGATION, {"open_day": rng.choice(["2027-09-16", "2027-09-21"])}


def _harvest_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the crew roster has 4-9 pages of booked crews; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _harvest_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the press booking is TENTATIVE 3-8 times, then confirmed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _harvest_external_hail(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the pick was scheduled, the deposit paid, the grower told and the press day checked,
    # hail closes the valley road on the fruit's truck: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _harvest_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets a FAULT[transient] (varying texts), re-run by the
    # app; the last error is final
    step = rng.choice(["find_crew", "book_press", "schedule_pick", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _harvest_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation the service answers FAULT[hold] again and again while
    # the model asks for a later window; the last error is final
    step = rng.choice(["book_press", "schedule_pick", "notify_grower"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _harvest_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_deposit fails in every plan: a FAULT[transient] (re-run), then a FAULT[conflict]
    # naming another card on file (a revision); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_deposit",
        "",
        {
            "step": "pay_deposit",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _harvest_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the press booking never leaves TENTATIVE: the executor checks until it is stuck
    return RUNAWAY, "book_press", "", {"step": "book_press"}


def _harvest_wrong_block(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another block: find_crew finds a crew for it; scheduling the pick is
    # refused for good (not the grower's block)
    block = rng.choice(["oakville-3", "stags-leap-2", "carneros-5"])
    return PROPAGATION, "find_crew", "", {"block": block}


def _harvest_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pick day has a digit moved or month and day swapped: every step succeeds (the
    # pick, the deposit and the notice carry the booking), the app's press day check fails
    return PROPAGATION, "book_press", "", {"pick_day": rng.choice(["2027-09-04", "2027-09-13"])}


def _harvest_wrong_variety(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another variety: the pick is scheduled for it, and the deposit is refused
    # for good (not on the grower's contract)
    return PROPAGATION, "schedule_pick", "", {"variety": rng.choice(["merlot", "cabernet-franc"])}


def _harvest_wrong_card(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's card token has two digits swapped: the deposit is refused for good
    return PROPAGATION, "pay_deposit", "", {"card": rng.choice(["CARD-6612", "CARD-2661"])}


# --- hives: an almond grower's pollination contract, a Magentic-One team (AutoGen AgentChat)
# under AutoGen's own tracing (sealed-18). An apiary registry read page by page, the hives'
# inspection (certified later: polled), the hive truck for the placement day, the rental on the
# grower's account and the placement notice; the app then checks the placement day and sees
# the bloom. The orchestrator (a bullet plan) trusts the grower's field notes over the order:
# the scenario's wrong value comes from a note.
def _hives_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _hives_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers E_HIVE_RETRY once or twice; the orchestrator asks again, it works
    step = rng.choice(["find_apiary", "inspect_hives", "book_haul", "pay_rental"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _hives_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # an E_HIVE_PENDING once or twice inside one executor turn; the model's 2nd or 3rd call
    # (a later slot) works
    step = rng.choice(["inspect_hives", "book_haul", "pay_rental", "notify_grower"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _hives_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no truck on the bloom day: the booking answers a conflict naming the truck's free day;
    # Magentic-One re-plans once, then everything works
    return "healthy", "", PROPAGATION, {"free_day": rng.choice(["2027-02-16", "2027-02-20"])}


def _hives_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the apiary registry has 4-9 pages of full apiaries; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _hives_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the inspection is SCHEDULED 3-8 times, then certified
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _hives_external_frost(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the colonies were placed, paid, the grower told and the placement day checked, a
    # frost kills the bloom and the grower cancels: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _hives_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every turn of the step meets an E_HIVE_RETRY (varying texts), asked again by the
    # orchestrator; the last error is final
    step = rng.choice(["find_apiary", "inspect_hives", "book_haul", "pay_rental"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _hives_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor turn the service answers E_HIVE_PENDING again and again while the
    # model asks for a later slot; the last error is final
    step = rng.choice(["inspect_hives", "book_haul", "notify_grower"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _hives_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_rental fails in every plan: an E_HIVE_RETRY (asked again), then an E_HIVE_CONFLICT
    # naming another account (a re-plan); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_rental",
        "",
        {
            "step": "pay_rental",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _hives_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the inspection never leaves SCHEDULED: the executor checks until it is stuck
    return RUNAWAY, "inspect_hives", "", {"step": "inspect_hives"}


def _hives_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another region: find_apiary finds an apiary there; the hive truck is
    # refused for good at book_haul (no haul from that region)
    return PROPAGATION, "find_apiary", "", {"region": rng.choice(["tulare", "fresno", "merced"])}


def _hives_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's bloom day has a digit moved or month and day swapped: every step succeeds,
    # the app's placement day check fails
    return PROPAGATION, "book_haul", "", {"bloom_day": rng.choice(["2027-02-08", "2027-02-19"])}


def _hives_wrong_colonies(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's colony count lost or gained a digit: the first step finds an apiary all the
    # same, the inspection certifies that count, and the rental is refused for good. Labelled
    # at find_apiary, the first step whose inputs carried it (its registry query's colonies=):
    # the README's rule (relabelled 2026-12-05, see docs/analyzers.md "Sealed-19 split")
    return PROPAGATION, "find_apiary", "", {"colonies": rng.choice([40, 4000])}


def _hives_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account number has two digits swapped: the rental is refused for good
    return PROPAGATION, "pay_rental", "", {"account": rng.choice(["ACC-3370", "ACC-3037"])}


# --- foundry: a bell foundry casting a parish's bell, a Strands Agents planner and executor
# under Strands' own tracing (sealed-19). A bronze catalogue read page by page, the furnace
# booked for the pour day (confirmed later: polled), the casting, the deposit on the parish's
# account and the casting notice; the app then checks the pour day and watches the furnace's
# power. The planner (a LaTeX casting sheet) trusts the bellmaster's notes over the order: the
# scenario's wrong value comes from a note.
def _foundry_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _foundry_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service raises TryLaterException once or twice; the app's re-run works
    step = rng.choice(["find_bronze", "book_furnace", "schedule_casting", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _foundry_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a FurnaceBusyException once or twice inside one executor invocation; the model's 2nd or
    # 3rd call (a later slot) works
    step = rng.choice(["book_furnace", "schedule_casting", "pay_deposit", "notify_parish"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _foundry_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the furnace is relined on the pour day: the booking raises a ClashException naming the
    # furnace's free day; one revision, then everything works
    return "healthy", "", PROPAGATION, {"free_day": rng.choice(["2027-05-13", "2027-05-18"])}


def _foundry_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the bronze catalogue has 4-9 pages of reserved lots; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _foundry_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the furnace booking is PENCILLED 3-8 times, then confirmed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _foundry_external_outage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the casting was scheduled, the deposit paid, the parish told and the pour day
    # checked, a grid outage stops the furnace's blowers: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _foundry_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor invocation of the step meets a TryLaterException (varying texts), run
    # again by the app; the last error is final
    step = rng.choice(["find_bronze", "book_furnace", "schedule_casting", "pay_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _foundry_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor invocation the service raises FurnaceBusyException again and again
    # while the model asks for a later slot; the last error is final
    step = rng.choice(["book_furnace", "schedule_casting", "notify_parish"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _foundry_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_deposit fails in every sheet: a TryLaterException (run again), then a ClashException
    # naming another account (a revision); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_deposit",
        "",
        {
            "step": "pay_deposit",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _foundry_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the furnace booking never leaves PENCILLED: the executor checks until it is stuck
    return RUNAWAY, "book_furnace", "", {"step": "book_furnace"}


def _foundry_wrong_alloy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another alloy: find_bronze finds a lot of it; scheduling the casting is
    # refused for good (not the parish's bell metal)
    return PROPAGATION, "find_bronze", "", {"alloy": rng.choice(["80/20", "77/23", "90/10"])}


def _foundry_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pour day has a digit moved or month and day swapped: every step succeeds (the
    # casting, the deposit and the notice carry the booking), the app's pour day check fails
    return PROPAGATION, "book_furnace", "", {"pour_day": rng.choice(["2027-05-01", "2027-11-05"])}


def _foundry_wrong_weight(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's weight lost or gained a digit: the lot is found all the same (the catalogue
    # does not weigh), the casting is scheduled for it, and the deposit is refused for good.
    # Labelled at find_bronze, the first step whose inputs carried it (its catalogue call's
    # kg=): the README's rule (relabelled 2026-12-05, see docs/analyzers.md "Sealed-19 split")
    return PROPAGATION, "find_bronze", "", {"weight_kg": rng.choice([42, 4200])}


def _foundry_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account number has two digits swapped: the deposit is refused for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["ACC-5581", "ACC-5158"])}


# --- organ: an organ builder restoring a concert hall's pipe organ, Griptape Agents as planner
# and executor under Griptape's own OpenTelemetry driver (sealed-20). Pipe metal sourced from a
# stock list read page by page, the voicing loft booked for the install day (confirmed later:
# polled), the voicing scheduled, the deposit invoiced to the hall's account and the works
# notice sent; the app then checks the install day and watches the hall's humidity. The planner
# (a BibTeX work plan) trusts the voicer's notes over the order: the scenario's wrong value
# comes from a note. A step is named by its @step entry's key.
def _organ_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _organ_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers %...-E-RETRY once or twice; the app's re-run works
    step = rng.choice(["source_metal", "book_loft", "schedule_voicing", "invoice_deposit"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _organ_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a %...-W-BUSY once or twice inside one executor run; the model's 2nd or 3rd call (a later
    # slot) works
    step = rng.choice(["book_loft", "schedule_voicing", "invoice_deposit", "notify_hall"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _organ_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the loft is re-floored on the install day: the booking answers %LOFT-E-CLASH naming the
    # loft's free day; one revision, then everything works
    return "healthy", "", PROPAGATION, {"free_day": rng.choice(["2027-09-16", "2027-09-21"])}


def _organ_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the metal stock list has 4-9 pages of held lots; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _organ_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the loft booking is TENTATIVE 3-8 times, then confirmed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _organ_external_outage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the voicing was scheduled, the deposit invoiced, the hall told and the install day
    # checked, the hall's heating fails overnight: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _organ_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets %...-E-RETRY (varying texts), run again by the app;
    # the last condition is final
    step = rng.choice(["source_metal", "book_loft", "schedule_voicing", "invoice_deposit"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _organ_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run the service answers %...-W-BUSY again and again while the model
    # asks for a later slot; the last condition is final
    step = rng.choice(["book_loft", "schedule_voicing", "notify_hall"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _organ_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # invoice_deposit fails in every plan: %LEDGER-E-RETRY (run again), then %LEDGER-E-CLASH
    # naming another account (a revision); the last condition is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "invoice_deposit",
        "",
        {
            "step": "invoice_deposit",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _organ_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the loft booking never leaves TENTATIVE: the executor checks until it is stuck
    return RUNAWAY, "book_loft", "", {"step": "book_loft"}


def _organ_wrong_metal(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another pipe metal: source_metal finds a lot of it; scheduling the voicing
    # is refused for good (%SHOP-F-WRONGMETAL)
    return PROPAGATION, "source_metal", "", {"metal": rng.choice(["spotted-45", "common-30"])}


def _organ_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's install day has its month and day swapped or a digit moved: every step
    # succeeds, the app's install day check fails
    return PROPAGATION, "book_loft", "", {"install_day": rng.choice(["2027-09-04", "2027-04-19"])}


def _organ_wrong_ranks(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's rank count lost or gained a digit: it first enters schedule_voicing's call (the
    # stock list takes no count), the voicing is scheduled, the invoice is refused for good
    return PROPAGATION, "schedule_voicing", "", {"ranks": rng.choice([4, 41])}


def _organ_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account number has two digits swapped: the invoice is refused for good
    return PROPAGATION, "invoice_deposit", "", {"account": rng.choice(["ACC-7713", "ACC-7371"])}


# --- arbor: a city's street-tree crew removing a diseased tree, a Burr application (plan /
# execute_step / replan actions) under Burr's own OpenTelemetry bridge (sealed-21). An arborist
# directory read page by page, the street closed for the felling day (approved later: polled),
# the felling scheduled, the city's purchase order charged and the residents told; the app then
# checks the closure day and watches the street. The planner (structured output into a pydantic
# WorkPlan) trusts the tree officer's survey notes over the order: the scenario's wrong value
# comes from a note. A step is named by its plan step's ``name`` field.
def _arbor_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _arbor_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's service answers api_error once or twice; the app's re-run works
    step = rng.choice(["find_arborist", "close_road", "schedule_felling", "charge_po"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "later"}


def _arbor_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # an overloaded_error once or twice inside one executor conversation; the model's 2nd or
    # 3rd call (a later slot) works
    step = rng.choice(["close_road", "schedule_felling", "charge_po", "notify_residents"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "errors": errors, "raise": "again"}


def _arbor_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the street is resurfaced on the felling day: the closure answers a conflict_error naming
    # the next free day; one re-plan, then everything works
    return "healthy", "", PROPAGATION, {"free_day": rng.choice(["2027-10-14", "2027-10-19"])}


def _arbor_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the arborist directory has 4-9 pages of booked crews; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _arbor_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the road closure is pending 3-8 times, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _arbor_external_burst(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the felling was scheduled, charged, the residents told and the closure day checked,
    # a water main bursts under the street and the closure is revoked: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _arbor_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step meets an api_error (varying texts), re-run by the app; the
    # last error is final (cancelled_error)
    step = rng.choice(["find_arborist", "close_road", "schedule_felling", "charge_po"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "later"}


def _arbor_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation the service answers overloaded_error again and again
    # while the model asks for a later slot; the last error is final
    step = rng.choice(["close_road", "schedule_felling", "notify_residents"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "errors": errors, "raise": "again"}


def _arbor_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # charge_po fails in every plan: an api_error (re-run), then a conflict_error naming another
    # purchase order (a re-plan); the last error is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "charge_po",
        "",
        {
            "step": "charge_po",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "raise": "replans",
        },
    )


def _arbor_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the road closure never leaves pending: the executor checks until it gives up
    return RUNAWAY, "close_road", "", {"step": "close_road"}


def _arbor_wrong_ward(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another ward: find_arborist finds a crew licensed there; booking the
    # felling is refused for good (permission_error: not the tree's ward)
    return PROPAGATION, "find_arborist", "", {"ward": rng.choice(["ashby", "kelso", "marsh-end"])}


def _arbor_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's felling day has a digit moved or month and day swapped: every step succeeds,
    # the app's closure day check fails
    return PROPAGATION, "close_road", "", {"fell_day": rng.choice(["2027-10-21", "2027-12-10"])}


def _arbor_wrong_species(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another species: it first enters schedule_felling's call (the directory
    # search takes none), the felling is booked, the purchase order charge is refused for good
    return PROPAGATION, "schedule_felling", "", {"species": rng.choice(["oak", "elm"])}


def _arbor_wrong_po(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's purchase order has two digits swapped: the charge is refused for good
    return PROPAGATION, "charge_po", "", {"po": rng.choice(["PO-3381", "PO-3138"])}


# --- stocking: an angling trust stocking a river reach with hatchery trout, a hand-written app
# calling the model through LiteLLM under LiteLLM's own OpenTelemetry callback (sealed-22). A
# hatchery stock list read page by page, the river authority's release consent for the day
# (granted later: polled), the hatchery's tanker booked, the hatchery paid under the stocking
# licence, the angling club told; the app then checks the release day and watches the river.
# The planner (structured output into a pydantic StockingPlan) trusts the bailiff's notes over
# the order: the scenario's wrong value comes from a note. A step is named by its plan task's
# ``key`` field.
def _stocking_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _stocking_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the task's service declines once or twice with advice try_later; the app's re-run works
    task = rng.choice(["reserve_fish", "obtain_consent", "book_tanker", "pay_hatchery"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"task": task, "errors": errors, "advice": "later"}


def _stocking_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the service declines with advice wait once or twice inside one executor conversation; the
    # model's 2nd or 3rd call (a later window) works
    task = rng.choice(["obtain_consent", "book_tanker", "pay_hatchery", "notify_club"])
    errors = varying_errors(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"task": task, "errors": errors, "advice": "wait"}


def _stocking_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the reach is closed on the release day for a spawning survey: the consent is declined
    # with advice rethink naming the next open day; one revised plan, then everything works
    return "healthy", "", PROPAGATION, {"open_day": rng.choice(["2027-04-13", "2027-04-20"])}


def _stocking_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hatchery stock list has 4-9 pages of reserved lots; the free one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _stocking_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the release consent is under review 3-8 times, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _stocking_external_flood(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the fish were reserved, consented, carried, paid for, the club told and the release
    # day checked, the river floods and the authority suspends releases: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


def _stocking_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the task is declined with advice try_later (varying texts), re-run
    # by the app; the last refusal is final (advice stop)
    task = rng.choice(["reserve_fish", "obtain_consent", "book_tanker", "pay_hatchery"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, task, "", {"task": task, "errors": errors, "advice": "later"}


def _stocking_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation the service declines with advice wait again and again
    # while the model asks for a later window; the last refusal is final
    task = rng.choice(["obtain_consent", "book_tanker", "notify_club"])
    errors = varying_errors(rng, rng.randint(4, 7))
    return RUNAWAY, task, "", {"task": task, "errors": errors, "advice": "wait"}


def _stocking_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_hatchery fails in every plan: advice try_later (re-run), then advice rethink naming a
    # renewed licence (a revised plan); the last refusal is final
    plans = rng.randint(3, 4)
    return (
        RUNAWAY,
        "pay_hatchery",
        "",
        {
            "task": "pay_hatchery",
            "plans": plans,
            "errors": varying_errors(rng, 2 * plans),
            "advice": "replans",
        },
    )


def _stocking_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the release consent never leaves review: the executor checks until it gives up
    return RUNAWAY, "obtain_consent", "", {"task": "obtain_consent"}


def _stocking_wrong_species(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another species: reserve_fish reserves a lot of it; the release consent is
    # refused for good (the reach takes brown trout only)
    return PROPAGATION, "reserve_fish", "", {"species": rng.choice(["rainbow_trout", "grayling"])}


def _stocking_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's release day has a digit moved or month and day swapped: every task succeeds,
    # the app's release day check fails
    return (
        PROPAGATION,
        "obtain_consent",
        "",
        {"release_day": rng.choice(["2027-04-18", "2027-08-04"])},
    )


def _stocking_wrong_reach(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another reach: the consent is granted for it; booking the tanker is refused
    # for good (no access point there)
    return PROPAGATION, "obtain_consent", "", {"reach": rng.choice(["usk-reach-2", "wye-reach-4"])}


def _stocking_wrong_licence(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's licence number has two digits swapped: the payment is refused for good
    return PROPAGATION, "pay_hatchery", "", {"licence": rng.choice(["FSL-5512", "FSL-5251"])}


# --- refuge: an alpine hut resupplied by helicopter before its season, an asyncio DAG agent
# written from the planscope SDK's public docs only (sealed-23). The hut's stores counted and
# the mountain forecast read side by side, the provisions ordered, the helicopter lift and the
# supplier's payment side by side, the warden told; the app then checks the lift's day, pad and
# load. The planner trusts the hut-keeper's notes over the request: the scenario's wrong value
# comes from a note. A step is named by its ``PlanStep`` id.
_REFUGE_TROUBLES = (
    "gusts of {n} km/h over the col",
    "cloud base at {n} m, below the pad",
    "radio link to the valley dropped after {n} s",
    "the valley line is busy, {k} callers ahead",
    "the order clerk is away until {h:02d}:{m:02d}",
)
_REFUGE_WORK = ["order_provisions", "book_helicopter", "pay_supplier"]


def refuge_troubles(rng: random.Random, count: int) -> list[str]:
    """``count`` radio-log texts of passing trouble that differ in wording and numbers."""
    return [
        rng.choice(_REFUGE_TROUBLES).format(
            n=rng.randint(40, 3200),
            k=rng.randint(2, 19),
            h=rng.randint(6, 17),
            m=rng.randint(0, 59),
        )
        for _ in range(count)
    ]


def _refuge_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _refuge_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's attempt fails with passing trouble once or twice; attempt 2 or 3 works
    step = rng.choice(_REFUGE_WORK)
    troubles = refuge_troubles(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "troubles": troubles, "mode": "step"}


def _refuge_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's tool fails with passing trouble once or twice inside one attempt, the executor
    # calls it again for a later slot and the 2nd or 3rd call works
    step = rng.choice(_REFUGE_WORK)
    troubles = refuge_troubles(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"step": step, "troubles": troubles, "mode": "tool"}


def _refuge_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the pad is under snow: the charter asks for a new plan, version 2 has porters carry the
    # load up instead; everything works
    return "healthy", "", PROPAGATION, {}


def _refuge_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the supplier's catalogue has 4-9 pages; the provisions are on the last one
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _refuge_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the forecast run answers pending 3-8 times, then published
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _refuge_external_after(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after the lift, the payment, the notice and a passed check, a rockfall buries part of the
    # load on the pad overnight: not the agent's fault
    return "healthy", "", PROPAGATION, {"buried": rng.choice(["a third", "half", "the gas"])}


def _refuge_no_input_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the plan reads the avalanche bulletin for the notice: a step that needs no input, handed
    # (and recording) an empty context
    return "healthy", "", STARVED, {}


def _refuge_long_progressing(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the stores also lack a winter's firewood: the lift flies 10-15 rotations, each carrying
    # part of the load (less left each time)
    return "healthy", "", RUNAWAY, {"firewood_kg": rng.randint(4000, 6000)}


def _refuge_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the forecast run never leaves pending: the executor checks 15 times, then gives up
    return RUNAWAY, "get_weather_window", "", {}


def _refuge_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every attempt of the step fails with passing trouble (varying texts, a later slot each
    # attempt) until the run's budget (5 attempts a step) refuses the sixth
    step = rng.choice(_REFUGE_WORK)
    troubles = refuge_troubles(rng, 5)
    return RUNAWAY, step, "", {"step": step, "troubles": troubles, "mode": "step"}


def _refuge_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one attempt the step's tool fails 4-7 times with passing trouble, a later slot each
    # call, then the valley office closes the line for good
    step = rng.choice(_REFUGE_WORK)
    troubles = refuge_troubles(rng, rng.randint(4, 7))
    return RUNAWAY, step, "", {"step": step, "troubles": troubles, "mode": "tool"}


def _refuge_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_supplier asks for a new plan in every version (another payment route each time)
    # until the run's budget (3 re-plans) refuses the fourth
    troubles = refuge_troubles(rng, 4)
    return (
        RUNAWAY,
        "pay_supplier",
        "",
        {"step": "pay_supplier", "troubles": troubles, "mode": "replans"},
    )


def _refuge_starved_empty(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's executor is handed {}: it orders the standard hamper from no supplier, charters
    # a lift to no pad, or radios no warden, and is refused
    step = rng.choice(["order_provisions", "book_helicopter", "notify_warden"])
    return STARVED, step, "", {"step": step, "given": []}


def _refuge_starved_partial(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # one required key missing: the lift booked for tomorrow (no window; the check fails), the
    # invoice paid with no order (refused), the hamper ordered for no hut (no shortfall; the
    # lift refuses the consignment)
    step, given = rng.choice(
        [
            ("book_helicopter", ["order", "hut_pad"]),
            ("pay_supplier", ["account"]),
            ("order_provisions", ["supplier", "valley_depot"]),
        ]
    )
    return STARVED, step, "", {"step": step, "given": given}


def _refuge_starved_crossed(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a step of a parallel wave handed its sibling's context: the forecast asked for the hut
    # (count_stores's) instead of the col, the payment given the lift's (no account); refused
    step, given = rng.choice(
        [("get_weather_window", ["hut"]), ("pay_supplier", ["order", "window", "hut_pad"])]
    )
    return STARVED, step, "", {"step": step, "given": given}


def _refuge_wrong_hut(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names the neighbouring hut: count_stores counts its stores, the order is for it,
    # the lift to our pad refuses the consignment for good
    return PROPAGATION, "count_stores", "", {"hut": "cabane-des-vignettes"}


def _refuge_wrong_season(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's opening day has month and day swapped or a digit moved: every step works, the
    # app's check of the lift's day fails
    day = rng.choice(["2027-12-06", "2027-06-21"])
    return PROPAGATION, "get_weather_window", "", {"season_start": day}


def _refuge_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the payment is refused for good
    return PROPAGATION, "pay_supplier", "", {"account": "CH44-0912-7731"}


def _refuge_wrong_supplier(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another valley supplier: the order is placed with it (and the lift flies
    # it), the payment is refused for good (no ledger for the hut's account there)
    return PROPAGATION, "order_provisions", "", {"supplier": "bagnes-provisions"}


# --- seedbank: a botanic garden depositing wild seed at a national seed vault, a hand-written app
# whose spans follow the current OpenTelemetry GenAI conventions by hand (sealed-24). An
# accession selected in the garden's seed catalogue (read page by page), a phytosanitary
# certificate for the shipping day (issued later: polled), a cold-chain courier booked to the
# vault's intake site, the deposit fee paid from the garden's depositor account, the manifest
# sent; the app then checks the courier arrives on the vault's intake day and awaits the
# vault's receipt. The planner trusts the curator's notes over the job sheet: the scenario's
# wrong value comes from a note. A step is named by its plan step's ``name`` field; the
# labelled step of a wrong value is the first plan step whose tool call's arguments carried
# it. Faults first: the split's 24 seeds over the 15 scenarios play every fault twice.
_SEEDBANK_ERRORS = (
    "the intake bench is full until {h}:{m}0",
    "inspector {n} is out on a field visit",
    "the courier's cold room reads {t} degrees above setpoint",
    "the ledger is being reconciled, batch {n}",
    "the catalogue is being reindexed from shelf {n}",
)


def _seedbank_errors(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SEEDBANK_ERRORS).format(
            h=rng.randint(9, 16), m=rng.randint(0, 5), n=rng.randint(2, 980), t=rng.randint(2, 9)
        )
        for _ in range(count)
    ]


def _seedbank_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every executor run of the step is refused #later (varying texts), run again by the app;
    # the last refusal is final
    step = rng.choice(
        ["select_accessions", "get_phyto_certificate", "book_cold_courier", "pay_deposit_fee"]
    )
    return (
        RUNAWAY,
        step,
        "",
        {"step": step, "errors": _seedbank_errors(rng, rng.randint(4, 7)), "how": "later"},
    )


def _seedbank_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation the desk is #busy again and again and the model calls
    # again; the last refusal is final
    step = rng.choice(["get_phyto_certificate", "book_cold_courier", "notify_vault"])
    return (
        RUNAWAY,
        step,
        "",
        {"step": step, "errors": _seedbank_errors(rng, rng.randint(4, 7)), "how": "busy"},
    )


def _seedbank_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # pay_deposit_fee fails in every plan: #later (run again), then #revise naming the account
    # the garden's deposits moved to (a new plan of the rest); the last refusal is final
    plans = rng.randint(3, 4)
    errors = _seedbank_errors(rng, 2 * plans)
    return (
        RUNAWAY,
        "pay_deposit_fee",
        "",
        {"step": "pay_deposit_fee", "errors": errors, "how": "replans"},
    )


def _seedbank_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate is never issued: the executor checks until it gives up
    return RUNAWAY, "get_phyto_certificate", "", {"step": "get_phyto_certificate"}


def _seedbank_wrong_taxon(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another primrose: select_accessions selects seed of it, the certificate is
    # issued for that accession, booking the courier is refused for good (not the vault's call)
    taxon = rng.choice(["Primula veris", "Primula elatior"])
    return PROPAGATION, "select_accessions", "", {"taxon": taxon}


def _seedbank_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's shipping day has month and day swapped or a digit moved: every step succeeds,
    # the app's intake-day check fails
    day = rng.choice(["2027-09-03", "2027-03-19"])
    return PROPAGATION, "get_phyto_certificate", "", {"ship_day": day}


def _seedbank_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another vault site: the courier is booked to it, the manifest is refused
    # for good (the booking delivers elsewhere)
    site = rng.choice(["VAULT-KEW", "VAULT-WAKEHURST-2"])
    return PROPAGATION, "book_cold_courier", "", {"site": site}


def _seedbank_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's depositor account has two digits swapped: the fee is refused for good
    account = rng.choice(["DEP-31787", "DEP-13877"])
    return PROPAGATION, "pay_deposit_fee", "", {"account": account}


def _seedbank_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _seedbank_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step is refused #later once or twice; the app's next run works
    step = rng.choice(
        ["select_accessions", "get_phyto_certificate", "book_cold_courier", "pay_deposit_fee"]
    )
    return (
        "healthy",
        "",
        RUNAWAY,
        {"step": step, "errors": _seedbank_errors(rng, rng.randint(1, 2)), "how": "later"},
    )


def _seedbank_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the desk is #busy once or twice inside one executor conversation; the next call works
    step = rng.choice(
        ["get_phyto_certificate", "book_cold_courier", "pay_deposit_fee", "notify_vault"]
    )
    return (
        "healthy",
        "",
        RUNAWAY,
        {"step": step, "errors": _seedbank_errors(rng, rng.randint(1, 2)), "how": "busy"},
    )


def _seedbank_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no inspector on the shipping day (a quarantine audit): the certificate is refused #revise
    # naming the next inspection day, the vault's intake day too; one new plan of the rest works
    return "healthy", "", PROPAGATION, {"intake_day": rng.choice(["2027-03-11", "2027-03-16"])}


def _seedbank_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the seed catalogue has 4-9 pages of spent accessions; the usable one is last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _seedbank_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate is pending 3-8 times, then issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _seedbank_external_freezer(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the intake day checked, the vault's drying room fails and the
    # consignment is destroyed in intake: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- wool: a sheep station consigning its spring clip to a wool auction, built as LangGraph's
# Plan-and-Execute tutorial builds its agent, traced by OpenInference (sealed-25). The planner's
# steps are free-text sentences; a step is named by its sentence exactly as the planner first
# wrote it (the item of ``Plan.steps``, before the replanner writes results into it). The
# labelled step of a wrong value is the first plan step whose tool call's arguments carried it.
# The planner trusts the station's notes over the job sheet: a wrong value comes from a note.
# Faults first: the split's 24 seeds over the 15 scenarios play every fault twice.
_WOOL_JOB = {
    "clip": "GR-S27",
    "store": "WS-GEELONG",
    "day": "2027-10-14",
    "sale": "S-31",
    "account": "LV-40213",
}
_WOOL_STEPS = {
    "find_bales": "Find the bales of clip mark {clip} in the Glenrock shed register.",
    "order_fibre_test": (
        "Order a fibre test of the lot found in the shed register from the testing house."
    ),
    "book_carrier": (
        "Book a carrier truck for the lot found in the shed register to store {store} on {day}."
    ),
    "enter_in_sale": (
        "Enter the lot found in the shed register in sale {sale} with the fibre test certificate."
    ),
    "pay_levy": (
        "Pay the broker's levy for the lot found in the shed register from account {account}."
    ),
}
_WOOL_ERRORS = (
    "the press shed is full until {h}:{m}0",
    "the core sampler is out at station {n}",
    "no driver rostered for run {n}",
    "the ledger is closed for the {n} sale's tally",
    "register book {n} is out with the classer",
)


def _wool_step(tool: str, **notes: str) -> str:
    """The planner's first sentence for a tool's step, the notes trusted over the job sheet."""
    return _WOOL_STEPS[tool].format(**(_WOOL_JOB | notes))


def _wool_errors(rng: random.Random, verdict: str, count: int) -> list[str]:
    return [
        f"{verdict}: "
        + rng.choice(_WOOL_ERRORS).format(
            h=rng.randint(9, 16), m=rng.randint(0, 5), n=rng.randint(2, 980)
        )
        for _ in range(count)
    ]


def _wool_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's desk holds it over again and again (varying texts); the replanner issues the
    # same step again each time; the last refusal is passed in
    tool = rng.choice(["find_bales", "order_fibre_test", "book_carrier", "pay_levy"])
    errors = _wool_errors(rng, "hold over", rng.randint(4, 7)) + _wool_errors(rng, "passed in", 1)
    return RUNAWAY, _wool_step(tool), "", {"tool": tool, "errors": errors}


def _wool_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one ReAct run the desk says re-offer again and again and the model calls again;
    # the last refusal is passed in
    tool = rng.choice(["order_fibre_test", "book_carrier", "enter_in_sale"])
    errors = _wool_errors(rng, "re-offer", rng.randint(4, 7)) + _wool_errors(rng, "passed in", 1)
    return RUNAWAY, _wool_step(tool), "", {"tool": tool, "errors": errors}


def _wool_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the levy fails in every plan: held over, then re-catalogued to another levy account (the
    # replanner rewrites the step), 3-4 times; the last refusal is passed in
    errors = []
    for _ in range(rng.randint(3, 4)):
        errors += _wool_errors(rng, "hold over", 1)
        errors.append(f"re-catalogue: levies moved; take LV-{rng.randint(41000, 49999)}")
    errors += _wool_errors(rng, "passed in", 1)
    return RUNAWAY, _wool_step("pay_levy"), "", {"tool": "pay_levy", "errors": errors}


def _wool_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fibre test is never certified: the clerk checks until it gives up
    return RUNAWAY, _wool_step("order_fibre_test"), "", {}


def _wool_wrong_clip(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's clip mark is a neighbour's: another lot is found, tested and trucked, entering
    # it in the sale is passed in (not Glenrock wool)
    clip = rng.choice(["GR-S72", "GB-S27"])
    return PROPAGATION, _wool_step("find_bales", clip=clip), "", {"clip": clip}


def _wool_wrong_store(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another wool store: the truck is booked to it, the sale entry is passed in
    store = rng.choice(["WS-GEELONG-2", "WS-PORTLAND"])
    return PROPAGATION, _wool_step("book_carrier", store=store), "", {"store": store}


def _wool_wrong_sale(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's sale number has its digits swapped: every step works, the app's check of the
    # mill's contract fails after the graph
    sale = rng.choice(["S-13", "S-37"])
    return PROPAGATION, _wool_step("enter_in_sale", sale=sale), "", {"sale": sale}


def _wool_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's levy account has two digits swapped: the levy is passed in for good
    account = rng.choice(["LV-40231", "LV-04213"])
    return PROPAGATION, _wool_step("pay_levy", account=account), "", {"account": account}


def _wool_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _wool_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step is held over once or twice; the replanner's next issue of it works
    tool = rng.choice(["find_bales", "order_fibre_test", "book_carrier", "pay_levy"])
    errors = _wool_errors(rng, "hold over", rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _wool_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the desk says re-offer once or twice inside one ReAct run; the next call works
    tool = rng.choice(["order_fibre_test", "book_carrier", "enter_in_sale", "pay_levy"])
    errors = _wool_errors(rng, "re-offer", rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _wool_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no truck runs on the job's day: the carrier re-catalogues the booking to a later day
    # before the sale's receival, the replanner rewrites the step, the rest works
    day = rng.choice(["2027-10-16", "2027-10-18"])
    errors = [f"re-catalogue: no truck runs to {_WOOL_JOB['store']} that day; take {day}"]
    return "healthy", "", PROPAGATION, {"tool": "book_carrier", "errors": errors}


def _wool_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the shed register has 4-9 pages of other clips; the clip's lot is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _wool_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fibre test is pending 3-8 times, then certified
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _wool_external_strike(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the contract checked, the sale is cancelled (the wool stores
    # strike): not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- glazier: a parish restoring a stained-glass window, built as LangGraph's Plan-and-Execute
# tutorial builds its agent, traced by OpenLLMetry (sealed-26). The planner's steps are
# free-text sentences; a step is named by its sentence exactly as the planner first wrote it
# (the item of ``Plan.steps``). The labelled step of a wrong value is the first plan step whose
# tool call's arguments carried it. The planner trusts the parish notes over the job sheet: a
# wrong value comes from a note. Faults first: the split's 24 seeds over the 15 scenarios play
# every fault twice. Offices refuse ``not now`` (the ReAct agent calls again), ``come back
# later`` (the replanner issues the step again), ``plan again`` (a new value) or ``no``.
_GLAZIER_JOB = {
    "window": "N3",
    "church": "St Aldhelm's",
    "glass": "ruby flashed",
    "day": "2027-05-18",
    "account": "PCC-5521",
}
_GLAZIER_STEPS = {
    "survey_lookup": "Find window {window} of {church} in the diocesan survey register.",
    "apply_faculty": "Apply to the diocesan registry for a faculty to restore window {window}.",
    "order_glass": "Order {glass} glass from the glassworks for window {window}.",
    "book_scaffold": "Book the scaffold crew at {church} for {day}.",
    "pay_deposit": "Pay the conservator's deposit for window {window} from account {account}.",
}
_GLAZIER_TEXTS = (
    "the clerk is at a consistory court until {h}:{m}0",
    "the kiln is firing batch {n}",
    "the lorry is out at Wells with crew {n}",
    "box {n} of the survey is out for scanning",
    "the ledger is shut for the quarter day audit, sheet {n}",
)


def _glazier_step(tool: str, **notes: str) -> str:
    return _GLAZIER_STEPS[tool].format(**(_GLAZIER_JOB | notes))


def _glazier_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_GLAZIER_TEXTS).format(
            h=rng.randint(9, 16), m=rng.randint(0, 5), n=rng.randint(2, 980)
        )
        for _ in range(count)
    ]


def _glazier_refusals(rng: random.Random, verdict: str, count: int) -> list[str]:
    # ``count`` refusals of one verdict; the last one final
    texts = _glazier_texts(rng, count)
    return [f"{verdict} :: {t}" for t in texts[:-1]] + [f"no :: {texts[-1]}"]


def _glazier_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's office says come back later (varying texts), the replanner issues it again
    tool = rng.choice(["survey_lookup", "order_glass", "book_scaffold", "pay_deposit"])
    errors = _glazier_refusals(rng, "come back later", rng.randint(4, 7))
    return RUNAWAY, _glazier_step(tool), "", {"tool": tool, "errors": errors}


def _glazier_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one ReAct run the office says not now again and again and the model calls again
    tool = rng.choice(["apply_faculty", "order_glass", "book_scaffold"])
    errors = _glazier_refusals(rng, "not now", rng.randint(4, 7))
    return RUNAWAY, _glazier_step(tool), "", {"tool": tool, "errors": errors}


def _glazier_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails in every plan: come back later (issued again), then plan again naming
    # the account the deposits moved to (the replanner rewrites the step); the last is final
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _glazier_texts(rng, 2)
        account = f"PCC-{rng.randint(6000, 9999)}"
        errors.append(f"come back later :: {later}")
        # the world writes the account the refused call carried in for ``{old}``
        again = f"plan again :: {moved}, use {account} instead of {{old}}"
        errors.append(again if i < plans - 1 else f"no :: {moved}")
    tool = "pay_deposit"
    return RUNAWAY, _glazier_step(tool), "", {"tool": tool, "errors": errors}


def _glazier_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the faculty is never granted: the ReAct agent checks until it gives up
    return RUNAWAY, _glazier_step("apply_faculty"), "", {}


def _glazier_wrong_window(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another window: found in the survey, its faculty applied for and granted,
    # the glass order refused for good (that window is plain quarry glazing)
    window = rng.choice(["N5", "S2"])
    return PROPAGATION, _glazier_step("survey_lookup", window=window), "", {"window": window}


def _glazier_wrong_glass(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names a glass the window's cartoon does not have: refused for good at the order
    glass = rng.choice(["amber streaky", "cobalt slab"])
    return PROPAGATION, _glazier_step("order_glass", glass=glass), "", {"glass": glass}


def _glazier_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's day has a digit moved: every step works, the app's bench-day check fails
    day = rng.choice(["2027-05-08", "2027-08-15"])
    return PROPAGATION, _glazier_step("book_scaffold", day=day), "", {"day": day}


def _glazier_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the deposit is refused for good
    account = rng.choice(["PCC-5512", "PCC-2551"])
    return PROPAGATION, _glazier_step("pay_deposit", account=account), "", {"account": account}


def _glazier_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _glazier_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # come back later once or twice; the step issued again works
    tool = rng.choice(["survey_lookup", "order_glass", "book_scaffold", "pay_deposit"])
    errors = [f"come back later :: {t}" for t in _glazier_texts(rng, rng.randint(1, 2))]
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _glazier_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # not now once or twice inside one ReAct run; the next call works
    tool = rng.choice(["apply_faculty", "order_glass", "book_scaffold", "pay_deposit"])
    errors = [f"not now :: {t}" for t in _glazier_texts(rng, rng.randint(1, 2))]
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _glazier_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the scaffold crew cannot come that day: plan again with the crew's day, the conservator's
    # bench moves with it; the rewritten booking works
    return "healthy", "", PROPAGATION, {"crew_day": rng.choice(["2027-05-20", "2027-05-25"])}


def _glazier_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the survey register answers 4-9 pages; the window's record is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _glazier_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the faculty is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _glazier_external_frost(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the bench day checked, frost cracks the new leading: not the
    # agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- chandler: a chandlery filling a hotel chain's wholesale candle order, a LlamaIndex Workflow
# under OpenInference's LlamaIndex instrumentor (sealed-27). The planner answers a ``Plan`` of
# named sub-tasks (``name``, ``input``, ``expected_output``, ``dependencies``); a step is named
# by its sub-task's name, which re-plans keep. The labelled step of a wrong value is the first
# sub-task whose tool call's arguments carried it. The planner trusts the sales desk's notes over
# the order sheet: a wrong value comes from a note. Faults first: the split's 24 seeds over the
# 15 scenarios play every fault twice. Counterparts reply ``engaged`` (the agent calls again,
# at the slot they name), ``next round`` (the workflow runs the sub-task again), ``amend`` (a
# re-plan with the value they name) or ``declined``.
_CHANDLER_TEXTS = (
    "the tanker is unloading at bay {n}",
    "wick stock is being counted until {h}:{m}0",
    "the kettle for batch {n} is still heating",
    "the dispatch clerk is on the phone to depot {n}",
    "ledger {n} is being reconciled",
)
_CHANDLER_SLOTTED = ["submit_burn_test", "book_pour_line", "book_freight"]
_CHANDLER_STEPS = ["find_wax_lot", "book_pour_line", "book_freight", "send_invoice"]
_CHANDLER_SUB_TASK = {
    "find_wax_lot": "source_wax",
    "submit_burn_test": "burn_test",
    "book_pour_line": "pour_candles",
    "book_freight": "book_freight",
    "send_invoice": "invoice_retailer",
}


def _chandler_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_CHANDLER_TEXTS).format(
            h=rng.randint(9, 16), m=rng.randint(0, 5), n=rng.randint(2, 980)
        )
        for _ in range(count)
    ]


def _chandler_engaged(rng: random.Random, count: int) -> list[str]:
    # each reply names another slot: the agent calls again with different arguments
    slots = rng.sample(range(2, 48), count)
    texts = _chandler_texts(rng, count)
    return [f"engaged — {t}; try slot {s}" for t, s in zip(texts, slots, strict=True)]


def _chandler_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # next round again and again (varying texts), the workflow runs the sub-task again each
    # time; the last reply is declined
    tool = rng.choice(_CHANDLER_STEPS)
    texts = _chandler_texts(rng, rng.randint(4, 7))
    errors = [f"next round — {t}" for t in texts[:-1]] + [f"declined — {texts[-1]}"]
    return RUNAWAY, _CHANDLER_SUB_TASK[tool], "", {"tool": tool, "errors": errors}


def _chandler_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one FunctionAgent run: engaged again and again, each time naming another slot the
    # model calls at; the last reply is declined
    tool = rng.choice(_CHANDLER_SLOTTED)
    count = rng.randint(4, 7)
    errors = [*_chandler_engaged(rng, count - 1), f"declined — {_chandler_texts(rng, 1)[0]}"]
    return RUNAWAY, _CHANDLER_SUB_TASK[tool], "", {"tool": tool, "errors": errors}


def _chandler_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the invoice fails in every plan: next round (run again), then amend to the account the
    # retailer's ledgers moved to (a re-plan rewrites the sub-task), 3-4 times; the last declined
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _chandler_texts(rng, 2)
        account = f"HH-{rng.randint(50000, 99999)}"
        errors.append(f"next round — {later}")
        # the world writes the account the refused call carried in for ``{old}``
        amend = f"amend — {moved}; amend to {account} from {{old}}"
        errors.append(amend if i < plans - 1 else f"declined — {moved}")
    tool = "send_invoice"
    return RUNAWAY, _CHANDLER_SUB_TASK[tool], "", {"tool": tool, "errors": errors}


def _chandler_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the test pillar never finishes burning: the agent checks until it gives up
    return RUNAWAY, "burn_test", "", {}


def _chandler_wrong_wax(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another blend: a lot of it is found and burn-tested, the pouring shed
    # declines it for good (not the retailer's spec)
    wax = rng.choice(["soy 446", "palm 464"])
    return PROPAGATION, "source_wax", "", {"wax": wax}


def _chandler_wrong_scent(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names a scent not on the retailer's approved list: the burn lab declines it
    scent = rng.choice(["fig and cypress", "fig and amber"])
    return PROPAGATION, "burn_test", "", {"scent": scent}


def _chandler_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's day has a digit changed: every sub-task works, the app's check of the
    # retailer's delivery window fails after the workflow
    day = rng.choice(["2027-09-04", "2027-09-24"])
    return PROPAGATION, "pour_candles", "", {"day": day}


def _chandler_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the invoice is declined for good
    account = rng.choice(["HH-40971", "HH-49017"])
    return PROPAGATION, "invoice_retailer", "", {"account": account}


def _chandler_healthy(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    return "healthy", "", "", {}


def _chandler_flaky_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # next round once or twice; the sub-task run again works
    tool = rng.choice(_CHANDLER_STEPS)
    errors = [f"next round — {t}" for t in _chandler_texts(rng, rng.randint(1, 2))]
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _chandler_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # engaged once or twice inside one agent run; the call at the slot named works
    tool = rng.choice(_CHANDLER_SLOTTED)
    errors = _chandler_engaged(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"tool": tool, "errors": errors}


def _chandler_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the pouring line is down on the order's day: amend to the line's next day (the retailer's
    # window moves with it); the re-planned booking works
    return "healthy", "", PROPAGATION, {"line_day": rng.choice(["2027-09-16", "2027-09-21"])}


def _chandler_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wax merchant's catalogue answers 4-9 pages; the lot is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _chandler_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the test pillar burns for 3-8 checks, then passes
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _chandler_external_heatwave(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every sub-task worked and the delivery window checked, a heatwave softens the
    # pallets at the depot: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- ferry: a ferry operator's freight desk rebooking a lorry after a cancelled sailing, the
# OpenAI Agents SDK traced by Logfire (sealed-28). A step is the planner's ``task_id``. The
# labelled step of a wrong value is the first plan task whose inputs carried it. The planner
# trusts the dispatcher's notes over the booking: a wrong value comes from a note. Faults
# first: the split's 24 seeds over the 12 scenarios play each twice. Services answer ``STANDBY``
# (the desk's model calls again for a later slot), ``DELAYED`` (the manager runs the task
# again), ``REBOOK ... use X instead of Y`` (a new plan) or ``REFUSED`` (final).
_FERRY_TEXTS = (
    "the linkspan at berth {n} is being lowered",
    "the loadmaster is on the car deck of the {h}:{m}0 arrival",
    "gale warning {n} is in force for the Irish Sea",
    "the port system is replaying message batch {n}",
    "the freight office queue stands at {n} bookings",
)


def _ferry_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FERRY_TEXTS).format(
            h=rng.randint(6, 22), m=rng.randint(0, 5), n=rng.randint(2, 980)
        )
        for _ in range(count)
    ]


def _ferry_errors(rng: random.Random, kind: str, count: int) -> list[str]:
    # ``count`` errors of one kind; the last one final
    texts = _ferry_texts(rng, count)
    return [f"{kind}: {t}" for t in texts[:-1]] + [f"REFUSED: {texts[-1]}"]


def _ferry_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the task's desk meets DELAYED (varying texts) in every run, the manager runs it again
    task = rng.choice(["find_sailing", "hold_deck", "file_manifest", "charge_fare"])
    errors = _ferry_errors(rng, "DELAYED", rng.randint(4, 7))
    return RUNAWAY, task, "", {"task": task, "errors": errors}


def _ferry_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # STANDBY again and again inside one desk run; the model calls again for a later slot
    task = rng.choice(["hold_deck", "file_manifest", "charge_fare"])
    errors = _ferry_errors(rng, "STANDBY", rng.randint(4, 7))
    return RUNAWAY, task, "", {"task": task, "errors": errors}


def _ferry_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the charge fails in every plan: DELAYED (run again), then REBOOK naming the account the
    # haulier moved to (a new plan); the last is final
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _ferry_texts(rng, 2)
        account = f"HAUL-{rng.randint(8000, 9999)}"
        errors.append(f"DELAYED: {later}")
        # the world writes the account the refused call carried in for ``{old}``
        again = f"REBOOK: {moved}; use {account} instead of {{old}}"
        errors.append(again if i < plans - 1 else f"REFUSED: {moved}")
    return RUNAWAY, "charge_fare", "", {"task": "charge_fare", "errors": errors}


def _ferry_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the loadmaster never confirms the hold: the desk checks until it stalls
    return RUNAWAY, "hold_deck", "", {}


def _ferry_wrong_route(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another route: a sailing on it is found and held, customs refuses the
    # manifest for good (the export declaration is lodged for the booked route)
    route = rng.choice(["Heysham-Dublin", "Liverpool-Warrenpoint"])
    return PROPAGATION, "find_sailing", "", {"route": route}


def _ferry_wrong_length(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's length has a digit slipped: every task works, the loading check fails
    length = rng.choice([15.6, 6.5])
    return PROPAGATION, "hold_deck", "", {"length_m": length}


def _ferry_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is refused for good
    account = rng.choice(["HAUL-7370", "HAUL-3770"])
    return PROPAGATION, "charge_fare", "", {"account": account}


def _ferry_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # STANDBY once or twice inside one desk run; the next call works
    task = rng.choice(["hold_deck", "file_manifest", "charge_fare"])
    errors = [f"STANDBY: {t}" for t in _ferry_texts(rng, rng.randint(1, 2))]
    return "healthy", "", RUNAWAY, {"task": task, "errors": errors}


def _ferry_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the timetable answers 4-9 pages; the first sailing with deck space is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _ferry_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hold is PENDING 3-8 checks, then confirmed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _ferry_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a vessel swap: the loadmaster answers REBOOK naming a later sailing; the new plan holds
    # the deck there and the rest works
    return "healthy", "", PROPAGATION, {"swap_to": rng.choice(["0230", "0945"])}


def _ferry_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the loading checked, a storm cancels the sailing while the
    # lorry boards: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- observatory: an observatory's night desk booking a visiting astronomer's observing run, a
# LlamaIndex AgentWorkflow of FunctionAgents handing off to each other under OpenLLMetry's
# LlamaIndex instrumentor (sealed-29). A step is the ``step`` of the planner's ``write_plan``
# call (re-plans keep the names). The labelled step of a wrong value is the first plan step
# whose service call's params carried it. The planner trusts the programme office's notes over
# the proposal sheet: a wrong value comes from a note. Faults first: the split's 24 seeds over
# the 12 scenarios play each twice. Facilities reply ``hold`` (the executor calls again, at the
# window they name), ``defer`` (the planner hands the step off again), ``revise ... use X
# instead of Y`` (a new plan) or ``denied`` (final).
_OBSERVATORY_TEXTS = (
    "the dome is rotating to azimuth {n}",
    "the night assistant is filling the dewar on unit {n}",
    "humidity at the {h}:{m}0 reading is above the dome limit",
    "the queue scheduler is recomputing block {n}",
    "the finance ledger is locked for batch {n}",
)
_OBSERVATORY_STEP = {
    "find_instrument": "find_instrument",
    "book_night": "book_night",
    "charge_grant": "charge_grant",
    "send_schedule": "notify_observer",
}


def _observatory_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_OBSERVATORY_TEXTS).format(
            h=rng.randint(18, 23), m=rng.randint(0, 5), n=rng.randint(2, 990)
        )
        for _ in range(count)
    ]


def _observatory_holds(rng: random.Random, count: int) -> list[str]:
    # each hold names another window: the executor calls again with different params
    windows = rng.sample(range(2, 40), count)
    texts = _observatory_texts(rng, count)
    return [f"[hold] {t}; window {w}" for t, w in zip(texts, windows, strict=True)]


def _observatory_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # defer again and again (varying texts), the planner hands the step off again each time;
    # the last reply is denied
    service = rng.choice(list(_OBSERVATORY_STEP))
    texts = _observatory_texts(rng, rng.randint(4, 7))
    errors = [f"[defer] {t}" for t in texts[:-1]] + [f"[denied] {texts[-1]}"]
    return RUNAWAY, _OBSERVATORY_STEP[service], "", {"service": service, "errors": errors}


def _observatory_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor turn: hold again and again, each naming another window the model
    # calls at; the last reply is denied
    service = rng.choice(["book_night", "charge_grant", "send_schedule"])
    count = rng.randint(4, 7)
    errors = [*_observatory_holds(rng, count - 1), f"[denied] {_observatory_texts(rng, 1)[0]}"]
    return RUNAWAY, _OBSERVATORY_STEP[service], "", {"service": service, "errors": errors}


def _observatory_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the charge fails in every plan: defer (handed off again), then revise naming the grant
    # the hours moved to (a new plan), 3-4 plans; the last reply is denied
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _observatory_texts(rng, 2)
        grant = f"ERC-{rng.randint(800000, 999999)}"
        errors.append(f"[defer] {later}")
        # the world writes the grant the refused call carried in for ``{old}``
        revise = f"[revise] {moved}; use {grant} instead of {{old}}"
        errors.append(revise if i < plans - 1 else f"[denied] {moved}")
    service = "charge_grant"
    return RUNAWAY, _OBSERVATORY_STEP[service], "", {"service": service, "errors": errors}


def _observatory_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the committee never decides: the scheduler checks until it gives up
    return RUNAWAY, "secure_time", "", {}


def _observatory_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note names another mountain: a unit there is found and time granted on it; dome
    # scheduling denies the night for good (the award is for La Palma)
    site = rng.choice(["Calar Alto", "Tenerife"])
    return PROPAGATION, "find_instrument", "", {"site": site}


def _observatory_wrong_night(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's night has a digit changed: every step works, the app's dark-time check fails
    night = rng.choice(["2027-08-09", "2027-08-29"])
    return PROPAGATION, "book_night", "", {"night": night}


def _observatory_wrong_grant(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's grant has two digits swapped: the charge is denied for good
    grant = rng.choice(["ERC-771240", "ERC-717204"])
    return PROPAGATION, "charge_grant", "", {"grant": grant}


def _observatory_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # hold once or twice inside one executor turn; the call at the window named works
    service = rng.choice(["book_night", "charge_grant", "send_schedule"])
    errors = _observatory_holds(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _observatory_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the catalogue answers 4-9 pages; the unit is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _observatory_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the committee's decision is in review for 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _observatory_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the aluminising crew holds the dome on the run's night: revise to a later night (the
    # astronomer's window moves with it); the re-planned booking works
    return "healthy", "", PROPAGATION, {"dome_night": rng.choice(["2027-08-20", "2027-08-22"])}


def _observatory_external_ash(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the night verified, an ash plume closes the dome during the
    # observation: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- reel: a film production's locations office securing a street location for a shoot day, a
# Google ADK custom agent traced by ADK's own OpenTelemetry tracing (sealed-30). A step is the
# planner's ``step`` name, which revisions keep. The labelled step of a wrong value is the first
# plan step whose inputs carried it. The planner trusts the location manager's notes over the
# production sheet: a wrong value comes from a note. Faults first: the split's 24 seeds over the
# 12 scenarios play each twice. Services answer an error dict: ``LINE_BUSY`` (the runner's model
# calls again at the slot named), ``COME_BACK`` (the coordinator runs the step again),
# ``CHANGE_REQUIRED ... use X instead of Y`` (a revised plan) or ``DENIED`` (final).
_REEL_TEXTS = (
    "the film office duty officer is at a site visit on {street}",
    "the council's permit system is reindexing batch {n}",
    "parking enforcement is rerouting bays around roadworks {n}",
    "the duty manager is in the {h}:{m}0 licensing meeting",
    "the queue for the filming desk stands at {n} applications",
)
_REEL_STREETS = ("Wharf Road", "Canal Street", "Mare Street", "Orsman Road", "Andrews Road")
_REEL_STEP = {
    "find_location": "scout_location",
    "apply_for_permit": "apply_permit",
    "book_unit_base": "book_unit_base",
    "pay_permit_fee": "pay_fee",
    "send_resident_letters": "notify_residents",
}
_REEL_SLOTTED = ["apply_for_permit", "book_unit_base", "send_resident_letters"]
_REEL_AGAIN = ["apply_for_permit", "book_unit_base", "pay_permit_fee", "send_resident_letters"]


def _reel_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_REEL_TEXTS).format(
            h=rng.randint(9, 17),
            m=rng.randint(0, 5),
            n=rng.randint(2, 980),
            street=rng.choice(_REEL_STREETS),
        )
        for _ in range(count)
    ]


def _reel_busy(rng: random.Random, count: int) -> list[str]:
    # each answer names another slot: the model calls again with different arguments
    slots = rng.sample(range(2, 60), count)
    texts = _reel_texts(rng, count)
    return [f"LINE_BUSY: {t}; try slot {s}" for t, s in zip(texts, slots, strict=True)]


def _reel_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # COME_BACK again and again (varying texts), the coordinator runs the step again each time;
    # the last answer is DENIED
    service = rng.choice(_REEL_AGAIN)
    texts = _reel_texts(rng, rng.randint(4, 7))
    errors = [f"COME_BACK: {t}" for t in texts[:-1]] + [f"DENIED: {texts[-1]}"]
    return RUNAWAY, _REEL_STEP[service], "", {"service": service, "errors": errors}


def _reel_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one runner run: LINE_BUSY again and again, each time naming another slot the model
    # calls at; the last answer is DENIED
    service = rng.choice(_REEL_SLOTTED)
    count = rng.randint(4, 7)
    errors = [*_reel_busy(rng, count - 1), f"DENIED: {_reel_texts(rng, 1)[0]}"]
    return RUNAWAY, _REEL_STEP[service], "", {"service": service, "errors": errors}


def _reel_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fee fails in every plan: COME_BACK (run again), then CHANGE_REQUIRED naming the
    # account the production's ledger moved to (a revised plan), 3-4 plans; the last DENIED
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _reel_texts(rng, 2)
        account = f"PR-{rng.randint(50000, 99999)}"
        errors.append(f"COME_BACK: {later}")
        # the world writes the account the refused call carried in for ``{old}``
        change = f"CHANGE_REQUIRED: {moved}; use {account} instead of {{old}}"
        errors.append(change if i < plans - 1 else f"DENIED: {moved}")
    service = "pay_permit_fee"
    return RUNAWAY, _REEL_STEP[service], "", {"service": service, "errors": errors}


def _reel_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the film office never decides: the runner checks the application until it gives up
    return RUNAWAY, "apply_permit", "", {}


def _reel_wrong_crew(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's crew size has its digits swapped or one changed: a location that takes it is
    # found, the film office denies the permit for good (the certificate covers the real crew)
    return PROPAGATION, "scout_location", "", {"crew": rng.choice([85, 68])}


def _reel_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's shoot date has a digit changed: every step works, the app's check of the call
    # sheet against the permit fails after the run
    return PROPAGATION, "apply_permit", "", {"shoot_date": rng.choice(["2027-05-13", "2027-05-28"])}


def _reel_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the fee is denied for good
    return PROPAGATION, "pay_fee", "", {"account": rng.choice(["PR-30471", "PR-34017"])}


def _reel_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # LINE_BUSY once or twice inside one runner run; the call at the slot named works
    service = rng.choice(_REEL_SLOTTED)
    return (
        "healthy",
        "",
        RUNAWAY,
        {"service": service, "errors": _reel_busy(rng, rng.randint(1, 2))},
    )


def _reel_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the film office's register answers 4-9 pages; the location is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _reel_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the application is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _reel_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the bays on the sheet's street are suspended that day: CHANGE_REQUIRED naming another
    # street; the revised plan books the unit base there and the rest works
    return "healthy", "", PROPAGATION, {"street_to": rng.choice(["Orsman Road", "Andrews Road"])}


def _reel_external_watermain(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the call sheet checked, a water main bursts in the unit base's
    # street on the shoot day: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- quarry: a marble quarry's dispatch office sending a commissioned block, the OpenAI Agents
# SDK with handoffs (a dispatcher handing each step off to a desk, which hands back) and the
# planner as the dispatcher's tool, traced by OpenLLMetry's openai-agents instrumentor
# (sealed-31). A step is the planner's ``step`` name, which re-plans keep. The labelled step of a
# wrong value is the first plan step whose inputs carried it. The planner trusts the yard
# foreman's notes over the commission: a wrong value comes from a note. Faults first: the
# split's 24 seeds over the 12 scenarios play each twice. Services raise a signal: ``amber``
# (busy: the desk calls again at the slot named), ``hold`` (the dispatcher hands the step off
# again), ``detour`` (``take X in place of Y``: a new plan) or ``red`` (final).
_QUARRY_TEXTS = (
    "the {crew} crew is still wire-sawing bench {n}",
    "the weighbridge is being recalibrated after load {n}",
    "blasting on the upper face until {h}:{m}0",
    "the highways clerk is out on a bridge survey near km {n}",
    "the ledger is closing the month, batch {n} of {k}",
)
_QUARRY_CREWS = ("north", "Canalgrande", "Fantiscritti", "night", "Ravaccione")
_QUARRY_STEP = {
    "search_blocks": "find_block",
    "book_crane": "book_crane",
    "apply_haul_permit": "haul_permit",
    "charge_account": "charge_deposit",
    "send_delivery_notice": "notify_studio",
}
_QUARRY_SLOTTED = ["book_crane", "apply_haul_permit", "send_delivery_notice"]
_QUARRY_AGAIN = ["book_crane", "apply_haul_permit", "charge_account", "send_delivery_notice"]


def _quarry_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_QUARRY_TEXTS).format(
            crew=rng.choice(_QUARRY_CREWS),
            h=rng.randint(7, 18),
            m=rng.randint(0, 5),
            n=rng.randint(3, 940),
            k=rng.randint(941, 990),
        )
        for _ in range(count)
    ]


def _quarry_amber(rng: random.Random, count: int) -> list[str]:
    # each answer names another slot: the desk calls again with different arguments
    slots = rng.sample(range(4, 64), count)
    texts = _quarry_texts(rng, count)
    return [f"amber: {t}; free at slot {s}" for t, s in zip(texts, slots, strict=True)]


def _quarry_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # hold again and again (varying texts), the dispatcher hands the step off again each time;
    # the last answer is red
    service = rng.choice(_QUARRY_AGAIN)
    texts = _quarry_texts(rng, rng.randint(4, 7))
    errors = [f"hold: {t}" for t in texts[:-1]] + [f"red: {texts[-1]}"]
    return RUNAWAY, _QUARRY_STEP[service], "", {"service": service, "errors": errors}


def _quarry_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one desk turn: amber again and again, each naming another slot the desk calls at;
    # the last answer is red
    service = rng.choice(_QUARRY_SLOTTED)
    count = rng.randint(4, 7)
    errors = [*_quarry_amber(rng, count - 1), f"red: {_quarry_texts(rng, 1)[0]}"]
    return RUNAWAY, _QUARRY_STEP[service], "", {"service": service, "errors": errors}


def _quarry_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails in every plan: hold (handed off again), then detour naming the account
    # the studio's ledger moved to (a new plan), 3-4 plans; the last red
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _quarry_texts(rng, 2)
        account = f"ST-{rng.randint(10000, 99999)}"
        errors.append(f"hold: {later}")
        # the world writes the account the refused call carried in for ``{old}``
        detour = f"detour: {moved}; take {account} in place of {{old}}"
        errors.append(detour if i < plans - 1 else f"red: {moved}")
    service = "charge_account"
    return RUNAWAY, _QUARRY_STEP[service], "", {"service": service, "errors": errors}


def _quarry_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the highways office never decides: the permit desk checks until it gives up
    return RUNAWAY, "haul_permit", "", {}


def _quarry_wrong_tonnes(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's weight has its digits swapped or one changed: a block that heavy is found, the
    # highways office refuses the permit for good (over the route's axle limit)
    return PROPAGATION, "find_block", "", {"tonnes": rng.choice([18.5, 17.8])}


def _quarry_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's haul day has a digit changed: every step works, the app's check of the crane
    # booking against the commission fails after the run
    return PROPAGATION, "book_crane", "", {"haul_day": rng.choice(["2027-04-19", "2027-04-08"])}


def _quarry_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the deposit is refused for good
    return PROPAGATION, "charge_deposit", "", {"account": rng.choice(["ST-64082", "ST-60428"])}


def _quarry_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # amber once or twice inside one desk turn; the call at the slot named works
    service = rng.choice(_QUARRY_SLOTTED)
    return (
        "healthy",
        "",
        RUNAWAY,
        {"service": service, "errors": _quarry_amber(rng, rng.randint(1, 2))},
    )


def _quarry_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the yard's inventory answers 4-9 pages; the block is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _quarry_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit application is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _quarry_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the commission's crane is down for an inspection that day: detour naming another crane;
    # the new plan books it and the rest works
    return "healthy", "", PROPAGATION, {"crane_to": rng.choice(["G3", "G4"])}


def _quarry_external_landslide(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the crane booking checked, a landslide closes the road during
    # the haul: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- beacon: a lighthouse trust's lens overhaul, a smolagents CodeAgent keeper that plans
# (planning_interval) and hands each step to a managed CodeAgent crew -----------------------
_BEACON_TEXTS = (
    "the boatmen are out at the {rock} buoy, back in about {n} minutes",
    "swell of {m}.{k} m at the landing, coxswain will not commit",
    "the duty officer is on channel {ch} with a vessel in distress",
    "clerk {n} is checking the tide tables for springs",
    "the ledger is being reconciled, batch {n} of {k}",
    "relay station {rock} lost power at {h}:{mm}",
)
_BEACON_ROCKS = ("Skerry", "Carraig", "Dubh", "Sgeir", "Stack")
_BEACON_STEP = {
    "book_boat": "book_crossing",
    "file_outage_notice": "file_notice",
    "charge_account": "charge_trust",
    "send_harbour_notice": "notify_harbour",
}
_BEACON_WINDOWED = ["book_boat", "file_outage_notice", "send_harbour_notice"]


def _beacon_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BEACON_TEXTS).format(
            rock=rng.choice(_BEACON_ROCKS),
            n=rng.randint(3, 95),
            m=rng.randint(1, 4),
            k=rng.randint(0, 9),
            ch=rng.randint(6, 73),
            h=rng.randint(0, 23),
            mm=f"{rng.randint(0, 59):02d}",
        )
        for _ in range(count)
    ]


def _beacon_wait(rng: random.Random, count: int) -> list[str]:
    # each answer names another window: the crew calls again with different arguments
    minutes = rng.sample(range(6 * 60, 20 * 60, 5), count)
    texts = _beacon_texts(rng, count)
    return [
        f"WAIT ONE — {t}; next window {m // 60:02d}:{m % 60:02d}"
        for t, m in zip(texts, minutes, strict=True)
    ]


def _beacon_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # STAND BY again and again (varying texts), the keeper hands the step to the crew again
    # each time; the last answer is NEGATIVE
    service = rng.choice(sorted(_BEACON_STEP))
    texts = _beacon_texts(rng, rng.randint(4, 7))
    errors = [f"STAND BY — {t}" for t in texts[:-1]] + [f"NEGATIVE — {texts[-1]}"]
    return RUNAWAY, _BEACON_STEP[service], "", {"service": service, "errors": errors}


def _beacon_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one crew run: WAIT ONE again and again, each naming another window the crew calls
    # at; the last answer is NEGATIVE
    service = rng.choice(_BEACON_WINDOWED)
    count = rng.randint(4, 7)
    errors = [*_beacon_wait(rng, count - 1), f"NEGATIVE — {_beacon_texts(rng, 1)[0]}"]
    return RUNAWAY, _BEACON_STEP[service], "", {"service": service, "errors": errors}


def _beacon_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the charge fails under every plan: STAND BY (handed to the crew again), then ALTER COURSE
    # naming the account the trust moved to (the keeper takes it, its plan updates too), 3-4
    # accounts; the last answer NEGATIVE
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _beacon_texts(rng, 2)
        account = f"TR-{rng.randint(10000, 99999)}"
        errors.append(f"STAND BY — {later}")
        # the world writes the account the refused call carried in for ``{old}``
        alter = f"ALTER COURSE — {moved}; charge {account} instead of {{old}}"
        errors.append(alter if i < plans - 1 else f"NEGATIVE — {moved}")
    service = "charge_account"
    return RUNAWAY, _BEACON_STEP[service], "", {"service": service, "errors": errors}


def _beacon_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the maritime authority never publishes the notice: the crew checks until it gives up
    return RUNAWAY, "file_notice", "", {}


def _beacon_wrong_lens(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's lens order is a neighbour of the station's: a technician certified for it is
    # found and the crossing booked; the outage notice is refused for good (wrong certificate)
    return PROPAGATION, "find_technician", "", {"lens_order": rng.choice([2, 4])}


def _beacon_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's outage day has a digit changed: every step works, the app's check of the
    # crossing against the outage window fails after the run
    day = rng.choice(["2027-05-19", "2027-05-04"])
    return PROPAGATION, "book_crossing", "", {"outage_day": day}


def _beacon_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is refused for good
    return PROPAGATION, "charge_trust", "", {"account": rng.choice(["TR-15736", "TR-51763"])}


def _beacon_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # WAIT ONE once or twice inside one crew run; the call at the window named works
    service = rng.choice(_BEACON_WINDOWED)
    return (
        "healthy",
        "",
        RUNAWAY,
        {"service": service, "errors": _beacon_wait(rng, rng.randint(1, 2))},
    )


def _beacon_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the registry answers 4-9 pages (read in one code blob's loop); the technician is on the
    # last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _beacon_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the notice is pending 3-8 checks, then published
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _beacon_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's pier is closed for dredging: ALTER COURSE naming another pier; the keeper
    # books from it (its plan update carries it) and the rest works
    return "healthy", "", PROPAGATION, {"pier_to": rng.choice(["P5", "P7"])}


def _beacon_external_lightning(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the crossing day checked, lightning strikes the lantern
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- turret: a turret-clock workshop, a pydantic-ai foreman delegating to a planner agent and
# a fitter agent per task attempt. Service errors are logfmt lines: ``busy`` (a ModelRetry
# naming the time to call again), ``postponed`` (the foreman carries the task out again),
# ``superseded`` (``use=X instead_of=Y``: a new plan) or ``refused`` (final).
_TURRET_TEXTS = (
    "the rope team is aloft on the {church} spire until {h}:{m}0",
    "the wheelwright's lathe is re-cutting batch {n}",
    "the archdeacon is at a consistory court sitting, case {n}",
    "bell practice in the tower until {h}:{m}0",
    "the fund's ledger is closed for the quarter, batch {n} of {k}",
    "a kestrel is nesting on the {church} louvres",
)
_TURRET_CHURCHES = ("St Mary's", "Holy Trinity", "St Edmund's", "St Nicholas'", "All Saints'")
_TURRET_STEP = {
    "search_wheels": "source_wheel",
    "book_rope_team": "book_steeplejacks",
    "apply_faculty": "get_faculty",
    "charge_fund": "charge_fund",
    "send_notice": "notify_wardens",
}
_TURRET_TIMED = ["book_rope_team", "apply_faculty", "send_notice"]


def _turret_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_TURRET_TEXTS).format(
            church=rng.choice(_TURRET_CHURCHES),
            h=rng.randint(8, 17),
            m=rng.randint(0, 5),
            n=rng.randint(3, 480),
            k=rng.randint(481, 520),
        )
        for _ in range(count)
    ]


def _turret_busy(rng: random.Random, count: int) -> list[str]:
    # each answer names another time: the fitter calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    texts = _turret_texts(rng, count)
    return [
        f'status=busy msg="{t}" retry_at={m // 60:02d}:{m % 60:02d}'
        for t, m in zip(texts, minutes, strict=True)
    ]


def _turret_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # postponed again and again (varying texts), the foreman carries the task out again each
    # time; the last answer is refused
    service = rng.choice(sorted(_TURRET_STEP))
    texts = _turret_texts(rng, rng.randint(4, 7))
    errors = [f'status=postponed msg="{t}"' for t in texts[:-1]]
    errors.append(f'status=refused msg="{texts[-1]}"')
    return RUNAWAY, _TURRET_STEP[service], "", {"service": service, "errors": errors}


def _turret_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one fitter run: busy again and again, each naming another time the fitter calls
    # at; the last answer is refused
    service = rng.choice(_TURRET_TIMED)
    count = rng.randint(4, 7)
    errors = [*_turret_busy(rng, count - 1), f'status=refused msg="{_turret_texts(rng, 1)[0]}"']
    return RUNAWAY, _TURRET_STEP[service], "", {"service": service, "errors": errors}


def _turret_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the charge fails under every plan: postponed (carried out again), then superseded naming
    # the fund the parish moved to (a new plan), 3-4 plans; the last refused
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _turret_texts(rng, 2)
        account = f"PX-{rng.randint(10000, 99999)}"
        errors.append(f'status=postponed msg="{later}"')
        # the world writes the account the refused call carried in for ``{old}``
        superseded = f'status=superseded msg="{moved}" use={account} instead_of={{old}}'
        errors.append(superseded if i < plans - 1 else f'status=refused msg="{moved}"')
    service = "charge_fund"
    return RUNAWAY, _TURRET_STEP[service], "", {"service": service, "errors": errors}


def _turret_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the diocese never decides the faculty: the fitter checks until it gives up
    return RUNAWAY, "get_faculty", "", {}


def _turret_wrong_teeth(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's tooth count has a digit changed: a wheel with it is sourced and the rope team
    # booked; the diocese refuses the faculty for good (not like for like)
    return PROPAGATION, "source_wheel", "", {"teeth": rng.choice([86, 64])}


def _turret_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's lift day has a digit changed: every task works, the app's check of the lift
    # against the order fails after the run
    day = rng.choice(["2027-06-16", "2027-06-05"])
    return PROPAGATION, "book_steeplejacks", "", {"lift_day": day}


def _turret_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's fund account has two digits swapped: the charge is refused for good
    return PROPAGATION, "charge_fund", "", {"account": rng.choice(["PX-40791", "PX-04719"])}


def _turret_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # busy once or twice inside one fitter run; the call at the time named works
    service = rng.choice(_TURRET_TIMED)
    return (
        "healthy",
        "",
        RUNAWAY,
        {"service": service, "errors": _turret_busy(rng, rng.randint(1, 2))},
    )


def _turret_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the catalogue answers 4-9 pages; the wheel is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _turret_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the faculty is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _turret_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's rope team is grounded (its insurance lapsed): superseded naming another
    # team; the new plan books it and the rest works
    return "healthy", "", PROPAGATION, {"crew_to": rng.choice(["Wessex Access", "Dorset Spires"])}


def _turret_external_frame(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the lift day checked, the oak bell frame cracks and jams the
    # striking train during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- kiln: a ceramics studio on the Anthropic SDK by hand, a planner forced through a
# submit_plan tool and an executor conversation per step attempt. Service errors come back as
# is_error tool results in bang-prefixed kiln words: ``!cooling`` (the model calls again at
# the time named), ``!deferred`` (the app runs the step again), ``!moved`` (``use X instead of
# Y``: a new plan) or ``!refused`` (final).
_KILN_TEXTS = (
    "kiln {k} is still cooling from the {h}:{m}0 glost firing",
    "the pug mill is re-wedging batch {n}",
    "the glaze lab's frost chamber is on cycle {n} of {c}",
    "the ledger is being reconciled, batch {n}",
    "the merchant's lorry is stuck at the {place} weighbridge",
    "shelf {n} of kiln {k} is being kiln-washed",
)
_KILN_PLACES = ("Sheffield", "Stoke", "Leek", "Buxton", "Macclesfield")
_KILN_STEP = {
    "search_clay_bodies": "source_clay",
    "reserve_kiln": "book_firing",
    "submit_glaze_test": "test_glaze",
    "charge_deposit": "take_deposit",
    "send_confirmation": "notify_client",
}
_KILN_TIMED = ["reserve_kiln", "submit_glaze_test", "send_confirmation"]


def _kiln_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_KILN_TEXTS).format(
            k=rng.randint(1, 6),
            h=rng.randint(8, 17),
            m=rng.randint(0, 5),
            n=rng.randint(3, 480),
            c=rng.randint(481, 520),
            place=rng.choice(_KILN_PLACES),
        )
        for _ in range(count)
    ]


def _kiln_cooling(rng: random.Random, count: int) -> list[str]:
    # each answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    texts = _kiln_texts(rng, count)
    return [
        f"!cooling: {t} (again at {m // 60:02d}:{m % 60:02d})"
        for t, m in zip(texts, minutes, strict=True)
    ]


def _kiln_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # deferred again and again (varying texts), the app runs the step again each time; the
    # last answer is refused
    service = rng.choice(sorted(_KILN_STEP))
    texts = _kiln_texts(rng, rng.randint(4, 7))
    errors = [f"!deferred: {t}" for t in texts[:-1]] + [f"!refused: {texts[-1]}"]
    return RUNAWAY, _KILN_STEP[service], "", {"service": service, "errors": errors}


def _kiln_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: cooling again and again, each naming another time the
    # model calls at; the last answer is refused
    service = rng.choice(_KILN_TIMED)
    count = rng.randint(4, 7)
    errors = [*_kiln_cooling(rng, count - 1), f"!refused: {_kiln_texts(rng, 1)[0]}"]
    return RUNAWAY, _KILN_STEP[service], "", {"service": service, "errors": errors}


def _kiln_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails under every plan: deferred (run again), then moved naming the account
    # the trust moved to (a new plan), 3-4 plans; the last refused
    plans, errors = rng.randint(3, 4), []
    for i in range(plans):
        later, moved = _kiln_texts(rng, 2)
        account = f"HB-{rng.randint(10000, 99999)}"
        errors.append(f"!deferred: {later}")
        # the world writes the account the refused call carried in for ``{old}``
        errors.append(
            f"!moved: {moved} (use {account} instead of {{old}})"
            if i < plans - 1
            else f"!refused: {moved}"
        )
    service = "charge_deposit"
    return RUNAWAY, _KILN_STEP[service], "", {"service": service, "errors": errors}


def _kiln_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the glaze lab never finishes the test: the model checks until it gives up
    return RUNAWAY, "test_glaze", "", {}


def _kiln_wrong_cone(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's firing cone is wrong: a body of that cone is sourced and the firing booked;
    # the glaze lab refuses to test it for good
    return PROPAGATION, "source_clay", "", {"cone": rng.choice([10, 5])}


def _kiln_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's firing day has a digit changed: every step works, the app's check of the
    # firing against the order fails after the run
    day = rng.choice(["2027-03-08", "2027-08-09"])
    return PROPAGATION, "book_firing", "", {"firing_day": day}


def _kiln_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the deposit is refused for good
    return PROPAGATION, "take_deposit", "", {"account": rng.choice(["HB-58230", "HB-85203"])}


def _kiln_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # cooling once or twice inside one executor conversation; the call at the time named works
    service = rng.choice(_KILN_TIMED)
    return (
        "healthy",
        "",
        RUNAWAY,
        {"service": service, "errors": _kiln_cooling(rng, rng.randint(1, 2))},
    )


def _kiln_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the catalogue answers 4-9 pages; the body is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _kiln_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the glaze test is pending 3-8 checks, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _kiln_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's kiln is cold (a cracked burner block): moved naming another kiln; the new
    # plan books it and the rest works
    return "healthy", "", PROPAGATION, {"kiln_to": rng.choice(["Kiln 5", "Kiln 1"])}


def _kiln_external_frost(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the firing day checked, a hard frost spalls the wall's render
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- summit: an expedition agency outfitting a climbing team, a LangGraph DAG plan whose ready
# tasks run in parallel (``Send``). Service errors are SMTP reply lines: ``451 4.4.x ...; try
# again at HH:MM`` (the outfitter calls again at that time), other ``4xx`` (the task runs again),
# ``551 5.1.6 ...; forward <arg>=<value>`` (a new plan version), other ``5xx`` (final).
_SUMMIT_TEXTS = (
    "the Lukla strip is socked in by cloud until {h}:{m}0",
    "the porters' cooperative is sitting on docket {n}",
    "the ministry's clerk is away for Dashain, queue position {n}",
    "rotor set {n} is in for its hundred-hour check",
    "oxygen consignment {n} of {k} is still held at Tribhuvan customs",
    "a yak train blocks the trail above Namche until {h}:{m}0",
    "the bank's settlement run {n} has not cleared",
)
_SUMMIT_TASK = {
    "guide_roster": "find_guide",
    "permit_office": "apply_permit",
    "gear_depot": "rent_gear",
    "heli_charter": "book_flight",
    "deposit_charge": "charge_deposit",
    "team_bulletin": "notify_team",
}
_SUMMIT_TIMED = ["gear_depot", "heli_charter", "team_bulletin"]
_SUMMIT_AGAIN = ("450 4.2.1", "421 4.3.2", "452 4.2.2", "450 4.4.7")
_SUMMIT_FINAL = ("554 5.7.1", "550 5.2.0", "553 5.3.4")


def _summit_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SUMMIT_TEXTS).format(
            h=rng.randint(6, 17),
            m=rng.randint(0, 5),
            n=rng.randint(3, 480),
            k=rng.randint(481, 520),
        )
        for _ in range(count)
    ]


def _summit_wait(rng: random.Random, count: int) -> list[str]:
    # each reply names another time: the outfitter calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        f"451 4.4.{rng.randint(1, 5)} {t}; try again at {m // 60:02d}:{m % 60:02d}"
        for t, m in zip(_summit_texts(rng, count), minutes, strict=True)
    ]


def _summit_final(rng: random.Random) -> str:
    return f"{rng.choice(_SUMMIT_FINAL)} {_summit_texts(rng, 1)[0]}"


def _summit_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a transient 4xx again and again (varying codes and texts), the join running the task again
    # in each wave; the last reply is final. The first three tasks run in parallel.
    service = rng.choice(["guide_roster", "permit_office", "gear_depot", "deposit_charge"])
    texts = _summit_texts(rng, rng.randint(3, 6))
    errors = [f"{rng.choice(_SUMMIT_AGAIN)} {t}" for t in texts]
    errors.append(_summit_final(rng))
    return RUNAWAY, _SUMMIT_TASK[service], "", {"service": service, "errors": errors}


def _summit_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one outfitter run: 451 again and again, each naming another time it calls at; the
    # last reply is final
    service = rng.choice(_SUMMIT_TIMED)
    errors = [*_summit_wait(rng, rng.randint(3, 6)), _summit_final(rng)]
    return RUNAWAY, _SUMMIT_TASK[service], "", {"service": service, "errors": errors}


def _summit_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails under every plan version: a 4xx (run again), then 551 forwarding to
    # another account (a new version), 3-4 versions; the last reply is final
    versions, errors = rng.randint(3, 4), []
    for i in range(versions):
        later, moved = _summit_texts(rng, 2)
        errors.append(f"{rng.choice(_SUMMIT_AGAIN)} {later}")
        account = f"EXP-{rng.randint(10000, 99999)}"
        errors.append(
            f"551 5.1.6 {moved}; forward account={account}"
            if i < versions - 1
            else f"{rng.choice(_SUMMIT_FINAL)} {moved}"
        )
    service = "deposit_charge"
    return RUNAWAY, _SUMMIT_TASK[service], "", {"service": service, "errors": errors}


def _summit_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ministry never decides the permit (a task in parallel with the guide and the kit): the
    # outfitter checks until it gives up
    return RUNAWAY, "apply_permit", "", {}


def _summit_wrong_range(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's range is a neighbouring one: a guide licensed there is found, the permit and
    # kit come through; the charter refuses the guide for good
    return PROPAGATION, "find_guide", "", {"range": rng.choice(["Rolwaling", "Langtang"])}


def _summit_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's flight date has a digit changed: every task works, the app's check of the
    # flight against the permit's window fails after the graph
    return PROPAGATION, "book_flight", "", {"date": rng.choice(["2027-04-13", "2027-04-19"])}


def _summit_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is refused for good
    return PROPAGATION, "charge_deposit", "", {"account": rng.choice(["EXP-25817", "EXP-52871"])}


def _summit_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a 451 once or twice inside one outfitter run (the call at the time named works), or a 4xx
    # once or twice at the task level (the next wave's attempt works)
    service = rng.choice(_SUMMIT_TIMED)
    count = rng.randint(1, 2)
    if rng.random() < 0.5:
        errors = _summit_wait(rng, count)
    else:
        errors = [f"{rng.choice(_SUMMIT_AGAIN)} {t}" for t in _summit_texts(rng, count)]
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _summit_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the guides' roster answers 4-9 pages; a free guide is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _summit_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is pending 3-8 checks, then issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _summit_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the booked operator is grounded for a rotor inspection: 551 forwards to another operator,
    # the new plan version charters it and the rest works
    return (
        "healthy",
        "",
        PROPAGATION,
        {"operator_to": rng.choice(["Kailash Helicopters", "Manang Air"])},
    )


def _summit_external_avalanche(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the permit window checked, an avalanche sweeps the route during
    # the ascent: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- luthier: a guitar maker's commission, LangChain 1.x ``create_agent`` whose plan is the todo
# list of ``TodoListMiddleware`` and whose items run in a bench-hand sub-agent per attempt.
# Services answer in musical directions: ``tacet`` (``ToolRetryMiddleware`` calls again),
# ``fermata`` (``resume at cue HH:MM``: the bench hand calls again with that cue), ``caesura``
# (the lead sends the item again), ``dacapo`` (``take X, not Y``: rewritten todos), ``fine``
# (final). An error is ``<direction>|<text>``.
_LUTHIER_TEXTS = (
    "the ledger clerk is re-weighing stack {n} of the drying loft",
    "humidity in the {room} is at {p}% and climbing",
    "the bandsaw's blade {n} is being re-tensioned",
    "the permit desk is closed for the {h}:{m}0 audit",
    "the courier's van is held at the {place} depot",
    "bench {k} is still clamped on a {wood} top",
    "the till is reconciling batch {n} of the fair takings",
)
_LUTHIER_PLACES = ("Valencia", "Granada", "Cordoba", "Almeria", "Murcia")
_LUTHIER_ITEM = {
    "search_tonewood": "find_tonewood",
    "file_permit": "apply_permit",
    "book_bench": "book_bench",
    "charge_deposit": "charge_client",
    "send_notice": "notify_player",
}
_LUTHIER_CUED = ["file_permit", "book_bench", "send_notice"]


def _luthier_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_LUTHIER_TEXTS).format(
            n=rng.randint(3, 480),
            k=rng.randint(1, 9),
            p=rng.randint(61, 88),
            h=rng.randint(8, 17),
            m=rng.randint(0, 5),
            room=rng.choice(["Torres room", "varnish room", "spraying booth"]),
            place=rng.choice(_LUTHIER_PLACES),
            wood=rng.choice(["cedar", "spruce", "redwood"]),
        )
        for _ in range(count)
    ]


def _luthier_fermata(rng: random.Random, count: int) -> list[str]:
    # each answer names another cue: the bench hand calls again with different arguments
    minutes = rng.sample(range(8 * 60, 19 * 60, 5), count)
    return [
        f"fermata|{t} (resume at cue {m // 60:02d}:{m % 60:02d})"
        for t, m in zip(_luthier_texts(rng, count), minutes, strict=True)
    ]


def _luthier_loop_item(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a caesura again and again (varying texts), the lead sending the item again each time; the
    # last answer is fine
    service = rng.choice(sorted(_LUTHIER_ITEM))
    texts = _luthier_texts(rng, rng.randint(4, 7))
    errors = [f"caesura|{t}" for t in texts[:-1]] + [f"fine|{texts[-1]}"]
    return RUNAWAY, _LUTHIER_ITEM[service], "", {"service": service, "errors": errors}


def _luthier_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one bench hand's run: a fermata again and again, each naming another cue the bench
    # hand calls at; the last answer is fine
    service = rng.choice(_LUTHIER_CUED)
    count = rng.randint(4, 7)
    errors = [*_luthier_fermata(rng, count - 1), f"fine|{_luthier_texts(rng, 1)[0]}"]
    return RUNAWAY, _LUTHIER_ITEM[service], "", {"service": service, "errors": errors}


def _luthier_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails under every todo list: a caesura (sent again), then da capo naming the
    # account the client moved to (rewritten todos), 3-4 lists; the last answer is fine
    lists, errors = rng.randint(3, 4), []
    for i in range(lists):
        later, moved = _luthier_texts(rng, 2)
        account = f"CL-{rng.randint(10000, 99999)}"
        errors.append(f"caesura|{later}")
        # the world writes the account the refused call carried in for ``{old}``
        errors.append(
            f"dacapo|{moved}; take {account}, not {{old}}" if i < lists - 1 else f"fine|{moved}"
        )
    service = "charge_deposit"
    return RUNAWAY, _LUTHIER_ITEM[service], "", {"service": service, "errors": errors}


def _luthier_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit desk never decides: the bench hand checks until its model-call limit ends it
    return RUNAWAY, "apply_permit", "", {}


def _luthier_wrong_species(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's species is a neighbouring rosewood: a set of it is found; the permit desk
    # refuses it for good (the buyer's import licence names the ordered species)
    species = rng.choice(["Dalbergia nigra", "Dalbergia retusa"])
    return PROPAGATION, "find_tonewood", "", {"species": species}


def _luthier_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's build day has a digit changed: every item works, the app's check of the bench
    # against the master's calendar fails after the run
    return PROPAGATION, "book_bench", "", {"day": rng.choice(["2027-04-16", "2027-04-29"])}


def _luthier_flaky_paged_polled(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ledger answers 3-8 pages and the permit is pending 3-7 checks, and one service
    # falters once or twice: a tacet (ToolRetryMiddleware's next call works), a fermata (the
    # call at the cue works) or a caesura (the item's next attempt works)
    kind = rng.choice(["tacet", "fermata", "caesura"])
    count = rng.randint(1, 2)
    if kind == "fermata":
        service = rng.choice(_LUTHIER_CUED)
        errors = _luthier_fermata(rng, count)
    else:
        service = rng.choice(sorted(_LUTHIER_ITEM))
        errors = [f"{kind}|{t}" for t in _luthier_texts(rng, count)]
    params = {"pages": rng.randint(3, 8), "polls": rng.randint(3, 7)}
    return "healthy", "", RUNAWAY, {**params, "service": service, "errors": errors}


def _luthier_legit_replan_then_burst(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ordered room's dehumidifier fails: da capo names another room, the rewritten todos
    # book it and the rest works; then, after the bench day checked, a burst pipe soaks the set
    # during the app's watch: not the agent's fault
    room = rng.choice(["Hauser room", "Romanillos room"])
    return "healthy", "", PROPAGATION, {"room_to": room, "watch": rng.randint(1, 2)}


# --- cellar: a winery's bottling run on the Google Gen AI SDK by hand, a structured-output
# planner and an executor conversation with function calling per task attempt. Services raise;
# the app answers ``{"error": text, "reason": ...}`` function responses: ``held`` with
# ``retry_at`` (the model calls again at that time), ``backlog`` (the app runs the task again),
# ``substitute`` with ``use`` (a new plan) or ``refused`` (final).
_CELLAR_TEXTS = (
    "the filler on truck {k} is being sanitised after lot {n}",
    "the supplier's QA hold is still on pallet {n}",
    "the lab's centrifuge is on run {n} of {c}",
    "the bank is settling batch {n}",
    "the corking head's vacuum pump is down to {n} kPa",
    "the tanker from {place} is {n} minutes out",
)
_CELLAR_PLACES = ("Clare", "Eden Valley", "Barossa", "McLaren Vale", "Coonawarra")
_CELLAR_TASK = {
    "search_closures": "pick_closures",
    "book_bottling_line": "book_line",
    "request_stability_panel": "run_panel",
    "charge_account": "pay_deposit",
    "send_release_notice": "notify_buyer",
}
_CELLAR_TIMED = ["book_bottling_line", "request_stability_panel", "send_release_notice"]


def _cellar_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_CELLAR_TEXTS).format(
            k=rng.randint(1, 6),
            n=rng.randint(3, 480),
            c=rng.randint(481, 520),
            place=rng.choice(_CELLAR_PLACES),
        )
        for _ in range(count)
    ]


def _cellar_held(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # each error names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 18 * 60, 5), count)
    return [
        {"error": t, "reason": "held", "retry_at": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_cellar_texts(rng, count), minutes, strict=True)
    ]


def _cellar_refused(rng: random.Random) -> dict[str, Any]:
    return {"error": _cellar_texts(rng, 1)[0], "reason": "refused"}


def _cellar_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # backlog again and again (varying texts), the app runs the task again each time; the last
    # error is refused
    service = rng.choice(sorted(_CELLAR_TASK))
    texts = _cellar_texts(rng, rng.randint(3, 6))
    errors = [{"error": t, "reason": "backlog"} for t in texts] + [_cellar_refused(rng)]
    return RUNAWAY, _CELLAR_TASK[service], "", {"service": service, "errors": errors}


def _cellar_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: held again and again, each naming another time the
    # model calls at; the last error is refused
    service = rng.choice(_CELLAR_TIMED)
    errors = [*_cellar_held(rng, rng.randint(3, 6)), _cellar_refused(rng)]
    return RUNAWAY, _CELLAR_TASK[service], "", {"service": service, "errors": errors}


def _cellar_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails under every plan: backlog (run again), then substitute naming another
    # account of the winery (a new plan), 3-4 plans; the last refused
    plans = rng.randint(3, 4)
    errors: list[dict[str, Any]] = []
    for i in range(plans):
        later, moved = _cellar_texts(rng, 2)
        errors.append({"error": later, "reason": "backlog"})
        account = f"AG-{rng.randint(10000, 99999)}"
        errors.append(
            {"error": moved, "reason": "substitute", "use": {"account": account}}
            if i < plans - 1
            else {"error": moved, "reason": "refused"}
        )
    service = "charge_account"
    return RUNAWAY, _CELLAR_TASK[service], "", {"service": service, "errors": errors}


def _cellar_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lab never finishes the stability panel: the model checks until it gives up
    return RUNAWAY, "run_panel", "", {}


def _cellar_wrong_format(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's bottle format is wrong: closures for it are picked and the line booked; the
    # lab refuses the panel for good
    return PROPAGATION, "pick_closures", "", {"format_ml": rng.choice([375, 1500])}


def _cellar_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's bottling day has a digit changed: every task works, the app's check of the
    # booking against the order fails after the run
    return PROPAGATION, "book_line", "", {"bottling_day": rng.choice(["2027-04-17", "2027-07-14"])}


def _cellar_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is refused for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["AG-40761", "AG-04716"])}


def _cellar_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # held once or twice inside one executor conversation; the call at the time named works
    service = rng.choice(_CELLAR_TIMED)
    errors = _cellar_held(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _cellar_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the closure catalogue answers 4-9 pages; a lot in stock is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _cellar_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the stability panel is queued 3-8 checks, then cleared
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _cellar_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's line is stripped down for a seal change: substitute names another line; the
    # new plan books it and the rest works
    return "healthy", "", PROPAGATION, {"line_to": rng.choice(["truck-5", "truck-1"])}


def _cellar_external_heat(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the bottling day checked, a heat spike in transit pushes the
    # corks during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- railtour: a railway society's steam railtour on the OpenAI Responses API by hand, a
# structured-output planner and a function-calling loop per leg attempt. Services raise signals;
# the app answers the text ``<ASPECT> signal on <tool>: <text> -- <hint>``: ``yellow`` with
# ``after`` (the model calls again after that time), ``red`` (the app runs the leg again),
# ``diverted`` with ``use`` (a new plan) or ``blocked`` (final).
_RAILTOUR_TEXTS = (
    "{box} signal box is switched out until the relief signaller arrives",
    "engineering possession {n} overruns at {box}",
    "a points failure at {box} (fault {n})",
    "the coaching stock diagram {n} is being reissued",
    "the bank's payment run {n} is still clearing",
    "the mail relay holds {n} messages for {box}",
)
_RAILTOUR_BOXES = ("Hellifield", "Settle Junction", "Blea Moor", "Garsdale", "Appleby")
_RAILTOUR_LEG = {
    "search_locomotives": "find_loco",
    "request_train_path": "request_path",
    "reserve_coaches": "book_coaches",
    "pay_hire_fee": "pay_hire",
    "email_passengers": "notify",
}
_RAILTOUR_TIMED = ["request_train_path", "reserve_coaches", "email_passengers"]


def _railtour_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_RAILTOUR_TEXTS).format(box=rng.choice(_RAILTOUR_BOXES), n=rng.randint(12, 9800))
        for _ in range(count)
    ]


def _railtour_yellow(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # each signal names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 20 * 60, 5), count)
    return [
        {"aspect": "yellow", "text": t, "after": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_railtour_texts(rng, count), minutes, strict=True)
    ]


def _railtour_blocked(rng: random.Random) -> dict[str, Any]:
    return {"aspect": "blocked", "text": _railtour_texts(rng, 1)[0]}


def _railtour_loop_leg(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # red again and again (varying texts), the app runs the leg again each time; the last
    # signal is blocked
    service = rng.choice(sorted(_RAILTOUR_LEG))
    reds = [{"aspect": "red", "text": t} for t in _railtour_texts(rng, rng.randint(3, 6))]
    errors = [*reds, _railtour_blocked(rng)]
    return RUNAWAY, _RAILTOUR_LEG[service], "", {"service": service, "errors": errors}


def _railtour_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor loop: yellow again and again, each naming another time the model
    # calls after; the last signal is blocked
    service = rng.choice(_RAILTOUR_TIMED)
    errors = [*_railtour_yellow(rng, rng.randint(3, 6)), _railtour_blocked(rng)]
    return RUNAWAY, _RAILTOUR_LEG[service], "", {"service": service, "errors": errors}


def _railtour_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hire fee fails under every plan: red (run again), then diverted naming another
    # account of the society (a new plan), 3-4 plans; the last blocked
    plans = rng.randint(3, 4)
    errors: list[dict[str, Any]] = []
    for i in range(plans):
        later, moved = _railtour_texts(rng, 2)
        errors.append({"aspect": "red", "text": later})
        account = f"WRS-{rng.randint(10000, 99999)}"
        errors.append(
            {"aspect": "diverted", "text": moved, "use": {"account": account}}
            if i < plans - 1
            else {"aspect": "blocked", "text": moved}
        )
    service = "pay_hire_fee"
    return RUNAWAY, _RAILTOUR_LEG[service], "", {"service": service, "errors": errors}


def _railtour_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the timetable office never offers the path: the model checks until it gives up
    return RUNAWAY, "request_path", "", {}


def _railtour_wrong_ra(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's route availability is too high: a heavier engine is found; the timetable
    # office refuses its path for good
    return PROPAGATION, "find_loco", "", {"max_ra": rng.choice([9, 10])}


def _railtour_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's day has digits changed: every leg works, the app's check of the path's day
    # against the booking form fails after the run
    return PROPAGATION, "request_path", "", {"date": rng.choice(["2027-06-21", "2027-06-13"])}


def _railtour_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the fee is refused for good
    return PROPAGATION, "pay_hire", "", {"account": rng.choice(["WRS-38241", "WRS-83214"])}


def _railtour_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # yellow once or twice inside one executor loop; the call after the time named works
    service = rng.choice(_RAILTOUR_TIMED)
    errors = _railtour_yellow(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _railtour_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the locomotive register answers 4-9 pages; a free engine is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _railtour_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the path request is pending 3-8 checks, then offered
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _railtour_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the form's depot has its rake stopped for a brake examination: diverted names another
    # depot; the new plan reserves there and the rest works
    return "healthy", "", PROPAGATION, {"depot_to": rng.choice(["Southall", "Crewe"])}


def _railtour_external_fire(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every leg worked and the path's day checked, a lineside fire closes the line during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- bindery: a conservation bindery on Mistral's SDK by hand, a structured-output worksheet
# planner and a function-calling conversation per operation attempt. Services raise; the app's
# loop answers the tool message ``ERR <KIND>|<hint>|<text>``: ``HOLD`` with a time (the model
# calls again with ``at`` that time), ``LATER`` (the app runs the operation again), ``SWAP`` with
# ``use X for Y`` (a new worksheet) or ``STOP`` (final).
_BINDERY_TEXTS = (
    "the glue pot is being brought back to {t} degrees",
    "the {place} tannery's van is held at the weighbridge, docket {n}",
    "the lab's humidity cabinet {k} is cycling, run {n} of {c}",
    "the paring machine's blade {k} is out for regrinding",
    "the ledger is locked for the month-end close, batch {n}",
    "the mail relay is throttled, {n} messages queued",
)
_BINDERY_PLACES = ("Northampton", "Walsall", "Grampound", "Bermondsey", "Colyton")
_BINDERY_OP = {
    "search_skins": "find_skin",
    "reserve_press": "book_press",
    "submit_ageing_test": "test_ageing",
    "bill_account": "charge_fee",
    "email_archivist": "send_notice",
}
_BINDERY_TIMED = ["reserve_press", "submit_ageing_test", "email_archivist"]


def _bindery_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BINDERY_TEXTS).format(
            t=rng.randint(55, 68),
            place=rng.choice(_BINDERY_PLACES),
            n=rng.randint(11, 7400),
            k=rng.randint(1, 4),
            c=rng.randint(7401, 7600),
        )
        for _ in range(count)
    ]


def _bindery_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"kind": "HOLD", "hint": f"{m // 60:02d}:{m % 60:02d}", "text": t}
        for t, m in zip(_bindery_texts(rng, count), minutes, strict=True)
    ]


def _bindery_stop(rng: random.Random) -> dict[str, str]:
    return {"kind": "STOP", "text": _bindery_texts(rng, 1)[0]}


def _bindery_loop_op(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # LATER again and again (varying texts), the app runs the operation again each time; the
    # last record is STOP
    service = rng.choice(sorted(_BINDERY_OP))
    laters = [{"kind": "LATER", "text": t} for t in _bindery_texts(rng, rng.randint(4, 6))]
    errors = [*laters, _bindery_stop(rng)]
    return RUNAWAY, _BINDERY_OP[service], "", {"service": service, "errors": errors}


def _bindery_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: HOLD again and again, each naming another time the
    # model calls at; the last record is STOP
    service = rng.choice(_BINDERY_TIMED)
    errors = [*_bindery_holds(rng, rng.randint(4, 6)), _bindery_stop(rng)]
    return RUNAWAY, _BINDERY_OP[service], "", {"service": service, "errors": errors}


def _bindery_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fee fails under every worksheet: LATER (run again), then SWAP naming another account
    # of the record office (a new worksheet), 3-4 worksheets; the last STOP
    plans = rng.randint(3, 4)
    errors: list[dict[str, str]] = []
    for i in range(plans):
        later, moved = _bindery_texts(rng, 2)
        errors.append({"kind": "LATER", "text": later})
        account = f"WCRO-{rng.randint(10000, 99999)}"
        # the world writes the account the refused call carried in for ``{old}``
        errors.append(
            {"kind": "SWAP", "hint": f"use {account} for {{old}}", "text": moved}
            if i < plans - 1
            else {"kind": "STOP", "text": moved}
        )
    service = "bill_account"
    return RUNAWAY, _BINDERY_OP[service], "", {"service": service, "errors": errors}


def _bindery_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lab never finishes the ageing test: the model checks until it gives up
    return RUNAWAY, "test_ageing", "", {}


def _bindery_wrong_tannage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's tannage is wrong: a skin of that tannage is found and the press booked; the
    # lab refuses to age-test it for good
    return PROPAGATION, "find_skin", "", {"tannage": rng.choice(["chrome-tanned", "oak-bark"])}


def _bindery_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's bench day has a digit changed: every operation works, the app's check of the
    # booking against the job ticket fails after the run
    return PROPAGATION, "book_press", "", {"bench_day": rng.choice(["2027-05-13", "2027-06-18"])}


def _bindery_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the bill is refused for good
    return PROPAGATION, "charge_fee", "", {"account": rng.choice(["WCRO-31764", "WCRO-13746"])}


def _bindery_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # HOLD once or twice inside one executor conversation; the call at the time named works
    service = rng.choice(_BINDERY_TIMED)
    errors = _bindery_holds(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _bindery_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tannery's catalogue answers 4-9 pages; a free skin is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _bindery_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ageing test is queued 3-8 checks, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _bindery_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ticket's press has a cracked platen: SWAP names another press; the new worksheet
    # books it and the rest works
    return (
        "healthy",
        "",
        PROPAGATION,
        {"press_to": rng.choice(["Standing Press 4", "Nipping Press 1"])},
    )


def _bindery_external_flood(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every operation worked and the bench day checked, a burst pipe floods the strongroom
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- bigtop: a travelling circus pitching its big top on the Amazon Bedrock Converse API by
# hand, a planner forced through a tool and a tool-use loop per act attempt. Services raise
# hitches; the app answers a ``toolResult`` with ``status: "error"`` and a json block ``{"cue",
# "message", ...}``: ``standby`` with ``not_before`` (the model calls again from that time),
# ``delay`` (the app runs the act again), ``reroute`` with ``instead`` (a new running order) or
# ``curtain`` (final).
_BIGTOP_TEXTS = (
    "the {place} licensing clerk is at a hearing until {n} past",
    "ground inspection {n} at {place} overran",
    "the {place} plant yard's booking system is rebuilding index {n}",
    "the bank's faster-payments batch {n} is still settling",
    "the mail house has {n} letters queued for {place}",
    "a council officer must sign off job {n} at {place}",
)
_BIGTOP_PLACES = ("Kettlewick", "Aysgarth", "Hawes", "Masham", "Bedale")
_BIGTOP_ACT = {
    "search_grounds": "find_ground",
    "apply_event_licence": "license_show",
    "hire_generators": "hire_power",
    "pay_ground_rent": "pay_rent",
    "notify_ticket_holders": "tell_audience",
}
_BIGTOP_TIMED = ["apply_event_licence", "hire_generators", "notify_ticket_holders"]


def _bigtop_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BIGTOP_TEXTS).format(place=rng.choice(_BIGTOP_PLACES), n=rng.randint(11, 9900))
        for _ in range(count)
    ]


def _bigtop_standby(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # each standby names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"cue": "standby", "text": t, "not_before": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_bigtop_texts(rng, count), minutes, strict=True)
    ]


def _bigtop_curtain(rng: random.Random) -> dict[str, Any]:
    return {"cue": "curtain", "text": _bigtop_texts(rng, 1)[0]}


def _bigtop_loop_act(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # delay again and again (varying texts), the app runs the act again each time; the last
    # hitch is a curtain
    service = rng.choice(sorted(_BIGTOP_ACT))
    delays = [{"cue": "delay", "text": t} for t in _bigtop_texts(rng, rng.randint(3, 6))]
    hitches = [*delays, _bigtop_curtain(rng)]
    return RUNAWAY, _BIGTOP_ACT[service], "", {"service": service, "hitches": hitches}


def _bigtop_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor loop: standby again and again, each naming another time the model
    # calls from; the last hitch is a curtain
    service = rng.choice(_BIGTOP_TIMED)
    hitches = [*_bigtop_standby(rng, rng.randint(3, 6)), _bigtop_curtain(rng)]
    return RUNAWAY, _BIGTOP_ACT[service], "", {"service": service, "hitches": hitches}


def _bigtop_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the ground rent fails under every running order: delay (run again), then reroute naming
    # another account of the circus (a new plan), 3-4 plans; the last a curtain
    plans = rng.randint(3, 4)
    hitches: list[dict[str, Any]] = []
    for i in range(plans):
        later, moved = _bigtop_texts(rng, 2)
        hitches.append({"cue": "delay", "text": later})
        account = f"LTC-{rng.randint(10000, 99999)}"
        hitches.append(
            {"cue": "reroute", "text": moved, "instead": {"account": account}}
            if i < plans - 1
            else {"cue": "curtain", "text": moved}
        )
    service = "pay_ground_rent"
    return RUNAWAY, _BIGTOP_ACT[service], "", {"service": service, "hitches": hitches}


def _bigtop_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the council never decides the licence: the model checks until it gives up
    return RUNAWAY, "license_show", "", {}


def _bigtop_wrong_seats(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's seat count is too high: a ground laid out for it is found; the council refuses
    # the licence for good (over its cap)
    return PROPAGATION, "find_ground", "", {"seats": rng.choice([2100, 2400])}


def _bigtop_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's day has digits changed: every act works, the app's check of the licence's day
    # against the booking sheet fails after the run
    return PROPAGATION, "license_show", "", {"date": rng.choice(["2027-09-28", "2027-09-19"])}


def _bigtop_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the rent is refused for good
    return PROPAGATION, "pay_rent", "", {"account": rng.choice(["LTC-40971", "LTC-04917"])}


def _bigtop_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # standby once or twice inside one executor loop; the call from the time named works
    service = rng.choice(_BIGTOP_TIMED)
    hitches = _bigtop_standby(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "hitches": hitches}


def _bigtop_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the council's register answers 4-9 pages; a free ground is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _bigtop_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the licence application is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _bigtop_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the sheet's depot has its gensets out on a festival: reroute names another depot; the new
    # running order hires there and the rest works
    return "healthy", "", PROPAGATION, {"depot_to": rng.choice(["Skipton", "Thirsk"])}


def _bigtop_external_gale(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every act worked and the licence's day checked, a gale warning keeps the big top
    # down during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- vinyl: a record label's LP pressing, the plant's services on an MCP server over stdio, a
# Chat Completions planner answering an INI plan and a tool-calling loop per step attempt.
# Services raise defect codes; FastMCP returns ``Error executing tool {tool}: <CODE> <text>``:
# ``non-fill`` with ``slot`` (the model calls again at that slot), ``warp`` (the app runs the
# step again), ``re-cut`` with ``use`` (a new plan) or ``scrap`` (final).
_VINYL_TEXTS = (
    "the {press} stamper {n} cracked at the run-out groove",
    "the {press} boiler is below pressure (reading {n} kPa)",
    "lacquer {n} shows groove echo on side B",
    "the PVC hopper on {press} is empty after batch {n}",
    "the plant's ledger run {n} is still posting",
    "the outbound mail queue holds {n} messages for {press}",
)
_VINYL_PRESSES = ("No. 1 press", "No. 3 press", "Toolex", "Finebilt", "SMT line")
_VINYL_STEP = {
    "search_plants": "find_plant",
    "order_test_pressing": "test_press",
    "book_pressing_run": "book_run",
    "pay_deposit": "pay_deposit",
    "notify_distributor": "notify",
}
_VINYL_SLOTTED = ["order_test_pressing", "book_pressing_run", "notify_distributor"]


def _vinyl_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_VINYL_TEXTS).format(press=rng.choice(_VINYL_PRESSES), n=rng.randint(11, 9900))
        for _ in range(count)
    ]


def _vinyl_non_fills(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # each non-fill names another slot: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 19 * 60, 10), count)
    return [
        {"defect": "non-fill", "text": t, "slot": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_vinyl_texts(rng, count), minutes, strict=True)
    ]


def _vinyl_scrap(rng: random.Random) -> dict[str, Any]:
    return {"defect": "scrap", "text": _vinyl_texts(rng, 1)[0]}


def _vinyl_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # warp again and again (varying texts), the app runs the step again each time; the last
    # defect is scrap
    service = rng.choice(sorted(_VINYL_STEP))
    warps = [{"defect": "warp", "text": t} for t in _vinyl_texts(rng, rng.randint(3, 6))]
    errors = [*warps, _vinyl_scrap(rng)]
    return RUNAWAY, _VINYL_STEP[service], "", {"service": service, "errors": errors}


def _vinyl_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor loop: non-fill again and again, each naming another slot the model
    # calls at; the last defect is scrap
    service = rng.choice(_VINYL_SLOTTED)
    errors = [*_vinyl_non_fills(rng, rng.randint(3, 6)), _vinyl_scrap(rng)]
    return RUNAWAY, _VINYL_STEP[service], "", {"service": service, "errors": errors}


def _vinyl_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the deposit fails under every plan: warp (run again), then re-cut naming another account
    # of the label (a new plan), 3-4 plans; the last scrap
    plans = rng.randint(3, 4)
    errors: list[dict[str, Any]] = []
    for i in range(plans):
        later, moved = _vinyl_texts(rng, 2)
        errors.append({"defect": "warp", "text": later})
        account = f"HAL-{rng.randint(10000, 99999)}"
        errors.append(
            {"defect": "re-cut", "text": moved, "use": {"account": account}}
            if i < plans - 1
            else {"defect": "scrap", "text": moved}
        )
    service = "pay_deposit"
    return RUNAWAY, _VINYL_STEP[service], "", {"service": service, "errors": errors}


def _vinyl_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the test pressings are never approved: the model checks until it gives up
    return RUNAWAY, "test_press", "", {}


def _vinyl_wrong_speed(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's speed is wrong: a plant whose lathe cuts that speed is found; the test
    # pressing order is scrapped for good (the master's sides need 33 rpm)
    return PROPAGATION, "find_plant", "", {"speed": rng.choice([45, 78])}


def _vinyl_wrong_ship_by(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's ship-by day has a digit changed: every step works, the app's check of the
    # booked run's day against the order form fails after the job
    return PROPAGATION, "book_run", "", {"ship_by": rng.choice(["2027-04-19", "2027-04-06"])}


def _vinyl_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the deposit is scrapped for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["HAL-52781", "HAL-25718"])}


def _vinyl_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # non-fill once or twice inside one executor loop; the call at the slot named works
    service = rng.choice(_VINYL_SLOTTED)
    errors = _vinyl_non_fills(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _vinyl_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the plant directory answers 4-9 pages; a free lathe is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _vinyl_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the test pressings are pressing for 3-8 checks, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _vinyl_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the plant has no compound of the form's colour: re-cut names another colour; the new
    # plan books the run in it and the rest works
    return "healthy", "", PROPAGATION, {"colour_to": rng.choice(["black", "clear"])}


def _vinyl_external_boiler(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the ship-by day checked, the plant's boiler fails and the
    # booked run is cancelled during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- balloon: a balloon operator's festival flight as an AutoGen AgentChat SelectorGroupChat (a
# planner writing a flight card and clearing legs, two tool-using executors) under OpenInference's
# autogen-agentchat instrumentor. Services raise air-traffic calls whose text AutoGen hands the
# model as the tool result: ``HOLD SHORT UNTIL HH:MM`` (the model calls again at that slot), ``GO
# AROUND`` (the planner clears the leg again), ``DIVERT: use X instead of Y`` (a new card) or
# ``GROUNDED`` (final).
_BALLOON_TEXTS = (
    "surface wind at {place} gusting {n} knots",
    "the {place} registry clerk is out on a site visit until {k} o'clock",
    "airspace desk queue is {n} requests deep",
    "a NOTAM for {place} glider winching is under review",
    "card terminal {c} lost its line to the bank",
    "chase radio channel {k} is jammed by the fiesta's PA",
    "the mail relay deferred {n} messages",
    "the authority's duty officer is briefing crews at {place}",
)
_BALLOON_PLACES = ("Ashcombe", "Wedmore", "Chew Magna", "Priddy", "Nempnett")
_BALLOON_STEP = {
    "field_registry": "find_field",
    "airspace_permit": "file_permit",
    "chase_booking": "book_chase",
    "charge_account": "charge_pilot",
    "passenger_notice": "notify_passengers",
}
_BALLOON_SLOTTED = ["airspace_permit", "chase_booking", "passenger_notice"]


def _balloon_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BALLOON_TEXTS).format(
            place=rng.choice(_BALLOON_PLACES),
            n=rng.randint(12, 48),
            k=rng.randint(1, 9),
            c=rng.randint(100, 999),
        )
        for _ in range(count)
    ]


def _balloon_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another slot: the model calls again with different arguments
    minutes = rng.sample(range(5 * 60, 20 * 60, 5), count)
    return [
        {"kind": "HOLD", "hint": f"{m // 60:02d}:{m % 60:02d}", "text": t}
        for t, m in zip(_balloon_texts(rng, count), minutes, strict=True)
    ]


def _balloon_grounded(rng: random.Random) -> dict[str, str]:
    return {"kind": "GROUNDED", "text": _balloon_texts(rng, 1)[0]}


def _balloon_loop_leg(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # GO AROUND again and again (varying texts), the planner clears the leg again each time;
    # the last call is GROUNDED
    service = rng.choice(sorted(_BALLOON_STEP))
    arounds = [{"kind": "GOAROUND", "text": t} for t in _balloon_texts(rng, rng.randint(4, 6))]
    errors = [*arounds, _balloon_grounded(rng)]
    return RUNAWAY, _BALLOON_STEP[service], "", {"service": service, "errors": errors}


def _balloon_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor turn: HOLD SHORT again and again, each naming another slot the model
    # calls at; the last call is GROUNDED
    service = rng.choice(_BALLOON_SLOTTED)
    errors = [*_balloon_holds(rng, rng.randint(4, 6)), _balloon_grounded(rng)]
    return RUNAWAY, _BALLOON_STEP[service], "", {"service": service, "errors": errors}


def _balloon_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fare fails under every card: GO AROUND (cleared again), then DIVERT naming another
    # account of the pilot (a new card), 3-4 cards; the last GROUNDED
    cards = rng.randint(3, 4)
    errors: list[dict[str, str]] = []
    for i in range(cards):
        around, moved = _balloon_texts(rng, 2)
        errors.append({"kind": "GOAROUND", "text": around})
        account = f"PIL-{rng.randint(10000, 99999)}"
        # the world writes the account the refused call carried in for ``{old}``
        errors.append(
            {"kind": "DIVERT", "hint": f"use {account} instead of {{old}}", "text": moved}
            if i < cards - 1
            else {"kind": "GROUNDED", "text": moved}
        )
    service = "charge_account"
    return RUNAWAY, _BALLOON_STEP[service], "", {"service": service, "errors": errors}


def _balloon_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the authority never decides the permit: the model checks until it gives up
    return RUNAWAY, "file_permit", "", {}


def _balloon_wrong_county(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's county is a neighbour: a field there is found; the authority grounds the permit
    # for good (outside the festival's control zone)
    return PROPAGATION, "find_field", "", {"county": rng.choice(["Dorset", "Wiltshire"])}


def _balloon_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's flight date has a digit changed: every leg lands, the app's check of the chase
    # booking against the flight order fails after the team is done
    return PROPAGATION, "book_chase", "", {"date": rng.choice(["2027-08-15", "2027-09-14"])}


def _balloon_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is grounded for good
    return PROPAGATION, "charge_pilot", "", {"account": rng.choice(["PIL-52510", "PIL-55201"])}


def _balloon_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # HOLD SHORT once or twice inside one executor turn; the call at the slot named works
    service = rng.choice(_BALLOON_SLOTTED)
    errors = _balloon_holds(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _balloon_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the registry answers 4-9 pages; a free field is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _balloon_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _balloon_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's chase crew is off the road: DIVERT names another crew; the new card books it
    # and the rest lands
    return (
        "healthy",
        "",
        PROPAGATION,
        {"crew_to": rng.choice(["Blue chase crew", "Green chase crew"])},
    )


def _balloon_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every leg landed and the chase date checked, a thunderstorm grounds the fiesta
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- fresco: a city arts office commissioning a public fresco, the openai client's Chat
# Completions by hand (a TOML planner, a function-calling loop per stage attempt) under the
# official OpenTelemetry GenAI instrumentation. The desk's services raise errors the loop answers
# as ``[fresco-desk] <KIND>: <text>; advice: ...``: ``WET PAINT`` (the model calls again after the
# time named), ``SCAFFOLD DOWN`` (the app runs the stage again), ``RESKETCH`` with ``use k=v`` (a
# new draft of the plan) or ``REFUSED`` (final).
_FRESCO_TEXTS = (
    "the {street} render is still curing after the rain ({n} % damp)",
    "scaffold tag {n} failed its weekly inspection at {street}",
    "the heritage officer is on a site visit at {street} until {k} o'clock",
    "the plant yard's telematics lost lift {n}",
    "the fund ledger batch {n} is still posting",
    "the council mail relay deferred {n} notices",
    "a street market blocks {street} access until {k} pm",
)
_FRESCO_STREETS = ("Quay Lane", "Ropewalk", "Tanner's Row", "Chandlery Yard", "Mill Steps")
_FRESCO_STAGE = {
    "search_walls": "scout_wall",
    "apply_consent": "seek_consent",
    "book_lift": "hire_lift",
    "pay_fee": "pay_artist",
    "notify_residents": "notify_street",
}
_FRESCO_TIMED = ["book_lift", "pay_fee", "notify_residents"]


def _fresco_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FRESCO_TEXTS).format(
            street=rng.choice(_FRESCO_STREETS), n=rng.randint(12, 980), k=rng.randint(1, 6)
        )
        for _ in range(count)
    ]


def _fresco_wet(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each wet-paint answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 18 * 60, 15), count)
    return [
        {"kind": "WET PAINT", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_fresco_texts(rng, count), minutes, strict=True)
    ]


def _fresco_refused(rng: random.Random) -> dict[str, str]:
    return {"kind": "REFUSED", "text": _fresco_texts(rng, 1)[0]}


def _fresco_loop_stage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # SCAFFOLD DOWN again and again (varying texts), the app runs the stage again each time;
    # the last answer is REFUSED
    service = rng.choice(sorted(_FRESCO_STAGE))
    downs = [{"kind": "SCAFFOLD DOWN", "text": t} for t in _fresco_texts(rng, rng.randint(4, 6))]
    errors = [*downs, _fresco_refused(rng)]
    return RUNAWAY, _FRESCO_STAGE[service], "", {"service": service, "errors": errors}


def _fresco_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one crew loop: WET PAINT again and again, each naming another time the model calls
    # after; the last answer is REFUSED
    service = rng.choice(_FRESCO_TIMED)
    errors = [*_fresco_wet(rng, rng.randint(4, 6)), _fresco_refused(rng)]
    return RUNAWAY, _FRESCO_STAGE[service], "", {"service": service, "errors": errors}


def _fresco_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fee fails under every draft: SCAFFOLD DOWN (run again), then RESKETCH naming another
    # fund of the office (a new draft), 3-4 drafts; the last REFUSED
    drafts = rng.randint(3, 4)
    errors: list[dict[str, str]] = []
    for i in range(drafts):
        down, moved = _fresco_texts(rng, 2)
        errors.append({"kind": "SCAFFOLD DOWN", "text": down})
        fund = f"ARTS-{rng.randint(10000, 99999)}"
        errors.append(
            {"kind": "RESKETCH", "text": moved, "hint": f"fund={fund}"}
            if i < drafts - 1
            else {"kind": "REFUSED", "text": moved}
        )
    service = "pay_fee"
    return RUNAWAY, _FRESCO_STAGE[service], "", {"service": service, "errors": errors}


def _fresco_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the heritage consent stays pending: the crew reads it until it gives up
    return RUNAWAY, "seek_consent", "", {"stuck": True}


def _fresco_wrong_district(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's district is a neighbour: a wall there is found; the consent is refused for good
    # (outside the commission's conservation ward)
    return PROPAGATION, "scout_wall", "", {"district": rng.choice(["Old Town", "Dockside"])}


def _fresco_wrong_start(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's start date has a digit changed: every stage finishes, the app's check of the
    # lift booking against the commission form fails after the job
    return PROPAGATION, "hire_lift", "", {"start": rng.choice(["2027-05-19", "2027-06-10"])}


def _fresco_wrong_fund(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's fund has two digits swapped: the fee is refused for good
    return PROPAGATION, "pay_artist", "", {"fund": rng.choice(["ARTS-41735", "ARTS-17435"])}


def _fresco_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice WET PAINT inside one crew loop or SCAFFOLD DOWN (the stage run again); the
    # call after the time named, or the next attempt, works
    service = rng.choice(_FRESCO_TIMED)
    count = rng.randint(1, 2)
    errors = (
        _fresco_wet(rng, count)
        if rng.random() < 0.5
        else [{"kind": "SCAFFOLD DOWN", "text": t} for t in _fresco_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _fresco_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wall register answers 4-9 pages; a free wall is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _fresco_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the consent is pending 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _fresco_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the form's plant yard has no lift tall enough free: RESKETCH names another yard; the new
    # draft hires there and the rest works
    yard = rng.choice(["Northgate", "Saltmarsh"])
    moved = {"kind": "RESKETCH", "text": _fresco_texts(rng, 1)[0], "hint": f"yard={yard}"}
    return "healthy", "", PROPAGATION, {"service": "book_lift", "errors": [moved], "yard_to": yard}


def _fresco_external_survey(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every stage finished and the lift date checked, the wall's owner closes it after a
    # structural survey during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"days_watched": rng.randint(1, 2)}


# --- busyard: a school district's transport office re-routing its buses for a term,
# langgraph-supervisor's create_supervisor over create_react_agent workers (a run-sheet planner,
# a depot clerk and a fleet clerk) under LangSmith's OpenTelemetry export. The yard's services
# raise radio ten-codes the workers read from ToolNode's error messages: ``10-6`` (busy: the
# worker calls again after the time named), ``10-7`` (out of service: the supervisor assigns the
# leg again), ``10-22`` with ``use k=v`` (divert: a new run sheet) or ``10-99`` (denied: final).
_BUSYARD_TEXTS = (
    "yard gate {n} is jammed behind a fuel tanker on {road}",
    "dispatch console {n} lost its radio link near {road}",
    "the council's permit desk is answering queue {n} on {road} works",
    "depot roster board {n} is being re-synced",
    "budget ledger batch {n} is still posting",
    "family text gateway deferred {n} messages",
    "roadworks on {road} close the lane until {k} pm",
)
_BUSYARD_ROADS = ("Canal Road", "Hollins Way", "Eastbrook Lane", "Orchard Rise", "Station Hill")
_BUSYARD_LEG = {
    "find_routes": "survey_routes",
    "request_permit": "secure_permit",
    "book_drivers": "book_drivers",
    "charge_budget": "charge_route",
    "notify_families": "notify_families",
}
_BUSYARD_TIMED = ["book_drivers", "charge_budget", "notify_families"]


def _busyard_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BUSYARD_TEXTS).format(
            road=rng.choice(_BUSYARD_ROADS), n=rng.randint(11, 970), k=rng.randint(1, 6)
        )
        for _ in range(count)
    ]


def _busyard_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each 10-6 names another time: the worker calls again with different arguments
    minutes = rng.sample(range(6 * 60, 17 * 60, 5), count)
    return [
        {"code": "10-6", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_busyard_texts(rng, count), minutes, strict=True)
    ]


def _busyard_out(rng: random.Random, count: int) -> list[dict[str, str]]:
    return [{"code": "10-7", "text": t} for t in _busyard_texts(rng, count)]


def _busyard_denied(rng: random.Random) -> dict[str, str]:
    return {"code": "10-99", "text": _busyard_texts(rng, 1)[0]}


def _busyard_loop_leg(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # 10-7 again and again (varying texts), the supervisor assigns the leg again each time; the
    # last answer is 10-99
    service = rng.choice(sorted(_BUSYARD_LEG))
    errors = [*_busyard_out(rng, rng.randint(4, 6)), _busyard_denied(rng)]
    return RUNAWAY, _BUSYARD_LEG[service], "", {"service": service, "errors": errors}


def _busyard_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one worker run: 10-6 again and again, each naming another time the worker calls
    # after; the last answer is 10-99
    service = rng.choice(_BUSYARD_TIMED)
    errors = [*_busyard_busy(rng, rng.randint(4, 6)), _busyard_denied(rng)]
    return RUNAWAY, _BUSYARD_LEG[service], "", {"service": service, "errors": errors}


def _busyard_loop_resheets(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the driver booking fails under every run sheet: 10-7 (assigned again), then 10-22 naming
    # another depot (a new sheet), 3-4 sheets; the last 10-99
    sheets = rng.randint(3, 4)
    depots = rng.sample(["Northfold", "Ashgrove", "Kelby", "Fenwick", "Draycott"], sheets)
    errors: list[dict[str, str]] = []
    for i in range(sheets):
        out, moved = _busyard_texts(rng, 2)
        errors.append({"code": "10-7", "text": out})
        errors.append(
            {"code": "10-22", "text": moved, "hint": f"depot={depots[i]}"}
            if i < sheets - 1
            else {"code": "10-99", "text": moved}
        )
    service = "book_drivers"
    return RUNAWAY, _BUSYARD_LEG[service], "", {"service": service, "errors": errors}


def _busyard_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the road permit stays under review: the depot clerk reads it until it gives up
    return RUNAWAY, "secure_permit", "", {"stuck": True}


def _busyard_wrong_zone(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's zone is a neighbour: a route there is found; the permit is denied for good (the
    # route runs outside the school's zone)
    return PROPAGATION, "survey_routes", "", {"zone": rng.choice(["Westmoor", "Kingsholm"])}


def _busyard_wrong_start(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's first day of term is a week out: every leg clears, the app's check of the roster
    # against the term form fails after the job
    return PROPAGATION, "book_drivers", "", {"term_start": rng.choice(["2027-04-26", "2027-04-12"])}


def _busyard_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget account has two digits swapped: the charge is denied for good
    return PROPAGATION, "charge_route", "", {"account": rng.choice(["TRN-53018", "TRN-50381"])}


def _busyard_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice 10-6 inside one worker run or 10-7 (the leg assigned again); the call after
    # the time named, or the next attempt, works
    service = rng.choice(_BUSYARD_TIMED)
    count = rng.randint(1, 2)
    errors = _busyard_busy(rng, count) if rng.random() < 0.5 else _busyard_out(rng, count)
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _busyard_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the route register answers 4-9 pages; a free route is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _busyard_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is under review 3-8 reads, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _busyard_legit_resheet(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the form's depot has no drivers free for the term: 10-22 names another depot; the new run
    # sheet books there and the rest works
    depot = rng.choice(["Northfold", "Ashgrove"])
    moved = {"code": "10-22", "text": _busyard_texts(rng, 1)[0], "hint": f"depot={depot}"}
    return "healthy", "", PROPAGATION, {"service": "book_drivers", "errors": [moved]}


def _busyard_external_bridge(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every leg cleared and the roster checked, the council closes a bridge on the route
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"weeks_watched": rng.randint(1, 2)}


# --- linen: a hospital's linen service scheduling a ward's changeover with LangChain 1.x (a
# structured-output planner answering a rota, a create_agent runner per task attempt) under
# Langfuse's LangChain callback handler. Services raise laundry-bag faults a middleware hands the
# model as ``<tool> bagged <COLOUR>: <text> (<advice>)``: ``AMBER`` (the model calls again
# ``not_before`` the time named), ``RED`` (the app runs the task again), ``BLUE`` with ``use k=v``
# (a new revision of the rota) or ``BLACK`` (final).
_LINEN_TEXTS = (
    "tunnel washer {n} is mid-cycle on {ward}'s soiled load",
    "the clean store at {ward} reads {n} carts short after the night count",
    "infection control is swabbing bay {k} of {ward}",
    "porters' lift {k} is out of service for {n} minutes",
    "the finance batch {n} is still posting to the ledger",
    "the bleep system dropped {n} messages to {ward}",
    "a hazardous spill in corridor {k} blocks {ward}'s route",
)
_LINEN_WARDS = ("Ward 7B", "Ward 7A", "the day unit", "theatre recovery", "Ward 9")
_LINEN_TASK = {
    "search_linen_stock": "find_linen",
    "request_clearance": "clear_ward",
    "book_porters": "book_porters",
    "charge_cost_centre": "charge_ward",
    "notify_sister": "tell_sister",
}
_LINEN_TIMED = ["book_porters", "charge_cost_centre", "notify_sister"]


def _linen_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_LINEN_TEXTS).format(
            ward=rng.choice(_LINEN_WARDS), n=rng.randint(2, 950), k=rng.randint(1, 9)
        )
        for _ in range(count)
    ]


def _linen_amber(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 20 * 60, 10), count)
    return [
        {"bag": "AMBER", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_linen_texts(rng, count), minutes, strict=True)
    ]


def _linen_black(rng: random.Random) -> dict[str, str]:
    return {"bag": "BLACK", "text": _linen_texts(rng, 1)[0]}


def _linen_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RED again and again (varying texts), the app runs the task again each time; the last
    # answer is BLACK
    tool = rng.choice(sorted(_LINEN_TASK))
    reds = [{"bag": "RED", "text": t} for t in _linen_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _LINEN_TASK[tool], "", {"tool": tool, "faults": [*reds, _linen_black(rng)]}


def _linen_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one runner conversation: AMBER again and again, each naming another time the model
    # calls again after; the last answer is BLACK
    tool = rng.choice(_LINEN_TIMED)
    faults = [*_linen_amber(rng, rng.randint(4, 6)), _linen_black(rng)]
    return RUNAWAY, _LINEN_TASK[tool], "", {"tool": tool, "faults": faults}


def _linen_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the charge fails under every revision: RED (run again), then BLUE naming another cost
    # centre of the trust (a new revision), 3-4 revisions; the last BLACK
    revisions = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    for i in range(revisions):
        red, moved = _linen_texts(rng, 2)
        faults.append({"bag": "RED", "text": red})
        centre = f"CC-{rng.randint(10000, 99999)}"
        faults.append(
            {"bag": "BLUE", "text": moved, "hint": f"cost_centre={centre}"}
            if i < revisions - 1
            else {"bag": "BLACK", "text": moved}
        )
    return RUNAWAY, "charge_ward", "", {"tool": "charge_cost_centre", "faults": faults}


def _linen_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the clearance's swabs never come back from the lab: the runner reads it until it stalls
    return RUNAWAY, "clear_ward", "", {"stuck": True}


def _linen_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's wing is another one: a cart there is found; infection control condemns it for
    # good (the ward draws only from its own wing's clean store)
    return PROPAGATION, "find_linen", "", {"site": rng.choice(["South Wing", "East Annex"])}


def _linen_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's day has a digit changed: every task is laundered, the app's check of the
    # porters' day against the job sheet fails after the job
    return PROPAGATION, "book_porters", "", {"date": rng.choice(["2027-03-18", "2027-03-26"])}


def _linen_wrong_cost_centre(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's cost centre has two digits swapped: the charge is condemned for good
    return PROPAGATION, "charge_ward", "", {"cost_centre": rng.choice(["CC-84120", "CC-48210"])}


def _linen_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice AMBER inside one runner conversation or RED (the task run again); the call
    # after the time named, or the next attempt, works
    tool = rng.choice(_LINEN_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _linen_amber(rng, count)
        if rng.random() < 0.5
        else [{"bag": "RED", "text": t} for t in _linen_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _linen_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the stock register answers 4-9 pages; a cart big enough is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _linen_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the swabs are at the lab 3-8 reads, then the ward is cleared
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _linen_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the job sheet's porter pool has no crew free that day: BLUE names another pool; the next
    # revision books there and the rest works
    pool = rng.choice(["East Portering", "Night Portering"])
    moved = {"bag": "BLUE", "text": _linen_texts(rng, 1)[0], "hint": f"pool={pool}"}
    return "healthy", "", PROPAGATION, {"tool": "book_porters", "faults": [moved], "pool_to": pool}


def _linen_external_outbreak(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task was laundered and the porters' day checked, a norovirus outbreak closes
    # the ward during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- liftline: a ski resort readying a chairlift and its run for opening day with Google ADK (a
# planner LlmAgent writing a markdown task-list checklist, a LoopAgent over a crew LlmAgent and an
# app shift boss per job) under OpenInference's Google ADK instrumentor. Services answer ADK's
# recommended error dicts with a lift-board sign (``WIND HOLD`` with ``reopens``: the crew calls
# again ``not_before`` it; ``STANDBY``: the crew loop runs the job again; ``DETOUR`` with ``use
# key=value``: a new checklist; ``CLOSED``: final), or raise a lift-control ``OUTAGE`` that ends
# the ADK run (the app runs the job again).
_LIFTLINE_TEXTS = (
    "gusts of {k}0 km/h at the {place} top station",
    "the {place} haul rope tension reads {n} kN, outside the band",
    "rime ice on tower {k} of the {place} line",
    "the {place} snowmaking pumphouse is {n} minutes into a restart",
    "the ops ledger is closing batch {n} for the {place} cost centre",
    "patrol radio channel {k} is down between {place} and the summit",
    "a cornice above the {place} traverse awaits control work at {n} m",
)
_LIFTLINE_PLACES = ("Ptarmigan", "Corrie", "Summit Express", "Lower Glen", "Hare's Gully")
_LIFTLINE_JOB = {
    "search_inspectors": "find_inspector",
    "request_lift_certificate": "certify_lift",
    "book_groomer": "groom_run",
    "charge_snowmaking": "fund_snowmaking",
    "request_patrol_signoff": "patrol_signoff",
}
_LIFTLINE_TIMED = ["book_groomer", "charge_snowmaking", "request_patrol_signoff"]


def _liftline_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_LIFTLINE_TEXTS).format(
            place=rng.choice(_LIFTLINE_PLACES), n=rng.randint(12, 960), k=rng.randint(2, 19)
        )
        for _ in range(count)
    ]


def _liftline_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each wind hold names another reopening time: the crew calls again with other arguments
    minutes = rng.sample(range(7 * 60, 16 * 60, 5), count)
    return [
        {"sign": "WIND HOLD", "detail": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_liftline_texts(rng, count), minutes, strict=True)
    ]


def _liftline_down(rng: random.Random, count: int) -> list[dict[str, str]]:
    # a job to run again: STANDBY read by the crew (its loop runs it again) or a raised
    # lift-control outage (the app runs it again), drawn per attempt
    return [
        {"sign": rng.choice(["STANDBY", "OUTAGE"]), "detail": t}
        for t in _liftline_texts(rng, count)
    ]


def _liftline_closed(rng: random.Random) -> dict[str, str]:
    return {"sign": "CLOSED", "detail": _liftline_texts(rng, 1)[0]}


def _liftline_loop_job(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # STANDBY or an outage again and again (varying texts), the job run again each time; the
    # last answer is CLOSED
    tool = rng.choice(sorted(_LIFTLINE_JOB))
    faults = [*_liftline_down(rng, rng.randint(4, 6)), _liftline_closed(rng)]
    return RUNAWAY, _LIFTLINE_JOB[tool], "", {"tool": tool, "faults": faults}


def _liftline_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one crew turn: WIND HOLD again and again, each reopening at another time the crew
    # calls again at; the last answer is CLOSED
    tool = rng.choice(_LIFTLINE_TIMED)
    faults = [*_liftline_holds(rng, rng.randint(4, 6)), _liftline_closed(rng)]
    return RUNAWAY, _LIFTLINE_JOB[tool], "", {"tool": tool, "faults": faults}


def _liftline_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the snowmaking charge fails under every checklist: STANDBY or an outage (run again), then
    # DETOUR naming another operations account (a new revision), 3-4 revisions; the last CLOSED
    revisions = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    for i in range(revisions):
        faults += _liftline_down(rng, 1)
        moved = _liftline_texts(rng, 1)[0]
        account = f"MO-{rng.randint(10000, 99999)}"
        faults.append(
            {"sign": "DETOUR", "detail": moved, "hint": f"account={account}"}
            if i < revisions - 1
            else {"sign": "CLOSED", "detail": moved}
        )
    return RUNAWAY, "fund_snowmaking", "", {"tool": "charge_snowmaking", "faults": faults}


def _liftline_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tramway board's inspection never happens: the crew reads the application until stuck
    return RUNAWAY, "certify_lift", "", {"stuck": True}


def _liftline_wrong_sector(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's sector is another one: an inspector certified there is found; the tramway board
    # refuses the certificate for good (not certified for the lift's sector)
    return PROPAGATION, "find_inspector", "", {"sector": rng.choice(["South Face", "West Ridge"])}


def _liftline_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's opening day has a digit changed: every job is done, the app's check of the
    # certificate's day against the opening order fails after the job
    day = rng.choice(["2027-12-14", "2027-12-07"])
    return PROPAGATION, "certify_lift", "", {"opening_day": day}


def _liftline_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's operations account has two digits swapped: the charge is closed for good
    return PROPAGATION, "fund_snowmaking", "", {"account": rng.choice(["MO-58517", "MO-55871"])}


def _liftline_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a WIND HOLD inside one crew turn, or STANDBY / an outage (the job run
    # again); the call after the reopening, or the next attempt, works
    tool = rng.choice(_LIFTLINE_TIMED)
    count = rng.randint(1, 2)
    faults = _liftline_holds(rng, count) if rng.random() < 0.5 else _liftline_down(rng, count)
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _liftline_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the inspectors' register answers 4-9 pages; a free inspector is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _liftline_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the application awaits its inspection 3-8 reads, then the lift is certified
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _liftline_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's grooming depot has both snowcats in the workshop: DETOUR names another depot;
    # the next checklist books there and the rest works
    depot = rng.choice(["Corrie Depot", "Glen Lodge Depot"])
    return "healthy", "", PROPAGATION, {"depot_to": depot}


def _liftline_external_avalanche(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every job was done and the opening day checked, avalanche control shuts the run
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"closes_after": rng.randint(1, 2)}


# --- brewhouse: a craft brewery scheduling a brew week with Haystack 3.x (a Pipeline planner
# answering an s-expression brew sheet, an Agent per step attempt with @tool services) under
# Haystack's own OpenTelemetry tracer. Services raise syslog-style cellar alarms the Agent hands
# the model as ``Failed to invoke Tool ... Error: cellar[<unit>] <level>: <text>``: ``notice``
# with ``-- resume HH:MM`` (the model calls again with that time), ``warning`` (the app runs the
# step again), ``err`` with ``-- suggest key=value`` (a new revision of the sheet) or ``crit``
# (final).
_BREWHOUSE_TEXTS = (
    "mash tun {k} still at {n} C after the CIP rinse",
    "glycol chiller loop {k} reads {n} kPa, below setpoint",
    "the maltster's weighbridge queue holds {n} lorries",
    "dissolved oxygen at {n} ppb on the {line} filler",
    "seamer {k} rejected {n} cans in the last check",
    "the duty office's batch {n} is still posting",
    "CO2 delivery for {line} is {n} minutes late",
)
_BREWHOUSE_LINES = ("can line A", "keg line", "brite tank 2", "bright beer main", "FV-7")
_BREWHOUSE_TIMED = ["brewhouse_slot", "canning_run", "duty_payment"]


def _brewhouse_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BREWHOUSE_TEXTS).format(
            line=rng.choice(_BREWHOUSE_LINES), n=rng.randint(3, 990), k=rng.randint(1, 6)
        )
        for _ in range(count)
    ]


def _brewhouse_alarm(rng: random.Random, level: str, text: str, hint: str = "") -> dict[str, str]:
    alarm = {"level": level, "text": text, "unit": str(rng.randint(100, 9999))}
    return alarm | {"hint": hint} if hint else alarm


def _brewhouse_notices(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each notice names another time to resume at: the model calls again with other arguments
    minutes = rng.sample(range(5 * 60, 22 * 60, 5), count)
    return [
        _brewhouse_alarm(rng, "notice", t, f"{m // 60:02d}:{m % 60:02d}")
        for t, m in zip(_brewhouse_texts(rng, count), minutes, strict=True)
    ]


def _brewhouse_crit(rng: random.Random) -> dict[str, str]:
    return _brewhouse_alarm(rng, "crit", _brewhouse_texts(rng, 1)[0])


_BREWHOUSE_STEP = {
    "malt_catalogue": "reserve_malt",
    "brewhouse_slot": "book_brew_day",
    "cellar_transfer": "transfer_tank",
    "canning_run": "book_canning",
    "duty_payment": "pay_duty",
}


def _brewhouse_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # a warning again and again (varying texts), the app runs the step again each time; the
    # last alarm is crit
    tool = rng.choice(sorted(_BREWHOUSE_STEP))
    warnings = [
        _brewhouse_alarm(rng, "warning", t) for t in _brewhouse_texts(rng, rng.randint(4, 6))
    ]
    faults = [*warnings, _brewhouse_crit(rng)]
    return RUNAWAY, _BREWHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _brewhouse_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run: notices again and again, each naming another time the model
    # calls again at; the last alarm is crit
    tool = rng.choice(_BREWHOUSE_TIMED)
    faults = [*_brewhouse_notices(rng, rng.randint(4, 6)), _brewhouse_crit(rng)]
    return RUNAWAY, _BREWHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _brewhouse_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the duty payment fails under every revision: a warning (run again), then err suggesting
    # another duty account (a new revision), 3-4 revisions; the last crit
    revisions = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    for i in range(revisions):
        warned, moved = _brewhouse_texts(rng, 2)
        faults.append(_brewhouse_alarm(rng, "warning", warned))
        account = f"DA-{rng.randint(10000, 99999)}"
        faults.append(
            _brewhouse_alarm(rng, "err", moved, f"account={account}")
            if i < revisions - 1
            else _brewhouse_alarm(rng, "crit", moved)
        )
    return RUNAWAY, "pay_duty", "", {"tool": "duty_payment", "faults": faults}


def _brewhouse_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the transfer never racks (the gravity stays put): the executor reads it until it stalls
    return RUNAWAY, "transfer_tank", "", {"stuck": True}


def _brewhouse_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's site is the brewery's other one: a malt lot delivered there is found and the
    # brewhouse booked; the transfer to the fermenter fails for good (no wort main between sites)
    return PROPAGATION, "reserve_malt", "", {"site": rng.choice(["Mill Yard", "Arch 12"])}


def _brewhouse_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's brew day has a digit changed: every step is done, the app's check of the
    # brew day against the week's job sheet fails after the duty is paid
    return PROPAGATION, "book_brew_day", "", {"brew_day": rng.choice(["2027-04-21", "2027-04-02"])}


def _brewhouse_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's duty account has two digits swapped: the payment is refused for good (crit)
    return PROPAGATION, "pay_duty", "", {"account": rng.choice(["DA-40471", "DA-04417"])}


def _brewhouse_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a notice inside one executor run or a warning (the step run again); the
    # call at the resume time, or the next attempt, works
    tool = rng.choice(_BREWHOUSE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _brewhouse_notices(rng, count)
        if rng.random() < 0.5
        else [_brewhouse_alarm(rng, "warning", t) for t in _brewhouse_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _brewhouse_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the maltster's catalogue answers 4-9 pages of allocated lots; a free lot is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _brewhouse_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the transfer racks after 3-8 reads
    return "healthy", "", RUNAWAY, {"reads": rng.randint(3, 8)}


def _brewhouse_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the job sheet's canning line is booked out that day: err suggests another line; the next
    # revision books it and the rest works
    line = rng.choice(["Tin Shed Canning 1", "Canny Mobile 3"])
    moved = _brewhouse_alarm(rng, "err", _brewhouse_texts(rng, 1)[0], f"line={line}")
    return "healthy", "", PROPAGATION, {"tool": "canning_run", "faults": [moved], "line_to": line}


def _brewhouse_external_recall(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step was done and the brew day checked, the can supplier recalls the can lot
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"watch_reads": rng.randint(1, 2)}


# --- hauler: a municipal waste depot re-routing a collection round after a road closure, a
# pydantic-graph state machine whose nodes run pydantic-ai agents (a planner answering command
# lines, a crew runner per move attempt) under Logfire. Services raise ``«kind» text`` faults:
# ``kerbside-wait`` (a ``ModelRetry``: the model calls again ``--after`` the time named),
# ``tip-again`` (the app runs the move again), ``reroute`` with ``(use k=v)`` (a new plan) or
# ``scrap`` (final).
_HAULER_TEXTS = (
    "the compactor on {truck} jammed with {n} kg in the hopper",
    "{street} is coned off by a utility crew for {n} minutes",
    "the weighbridge at gate {k} is recalibrating",
    "telematics lost {truck} at the {street} junction",
    "the depot's fuel bowser is down to {n} litres",
    "a parked van blocks the bin store on {street}",
    "the highways desk queue is {n} requests long",
)
_HAULER_STREETS = ("Tanner Street", "Orchard Rise", "Quay Road", "Beck Lane", "Station Hill")
_HAULER_MOVE = {
    "bypass_routes": "find_bypass",
    "request_permit": "clear_permit",
    "assign_truck": "assign_truck",
    "book_landfill_ticket": "book_tip",
    "notify_crew": "notify_crew",
}
_HAULER_TIMED = ["assign_truck", "book_landfill_ticket", "notify_crew"]


def _hauler_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_HAULER_TEXTS).format(
            truck=f"RCV-{rng.randint(10, 99)}",
            street=rng.choice(_HAULER_STREETS),
            n=rng.randint(3, 900),
            k=rng.randint(1, 6),
        )
        for _ in range(count)
    ]


def _hauler_waits(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each wait names another time: the model calls again with different arguments
    minutes = rng.sample(range(5 * 60, 14 * 60, 5), count)
    return [
        {"kind": "kerbside-wait", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_hauler_texts(rng, count), minutes, strict=True)
    ]


def _hauler_scrap(rng: random.Random) -> dict[str, str]:
    return {"kind": "scrap", "text": _hauler_texts(rng, 1)[0]}


def _hauler_loop_move(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # tip-again again and again (varying texts), the app runs the move again each time; the
    # last answer is scrap
    tool = rng.choice(sorted(_HAULER_MOVE))
    again = [{"kind": "tip-again", "text": t} for t in _hauler_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _HAULER_MOVE[tool], "", {"tool": tool, "faults": [*again, _hauler_scrap(rng)]}


def _hauler_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one crew-runner run: kerbside-wait again and again, each naming another time the
    # model calls again after; the last answer is scrap
    tool = rng.choice(_HAULER_TIMED)
    faults = [*_hauler_waits(rng, rng.randint(4, 6)), _hauler_scrap(rng)]
    return RUNAWAY, _HAULER_MOVE[tool], "", {"tool": tool, "faults": faults}


def _hauler_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the landfill ticket fails under every plan: tip-again (run again), then reroute naming
    # another weighbridge account of the council (a new plan), 3-4 plans; the last scrap
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _hauler_texts(rng, 2)
        faults.append({"kind": "tip-again", "text": again})
        if i < plans - 1:
            accounts.append(f"WB-{rng.randint(10000, 99999)}")
            faults.append({"kind": "reroute", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "scrap", "text": moved})
    params = {"tool": "book_landfill_ticket", "faults": faults, "accounts": accounts}
    return RUNAWAY, "book_tip", "", params


def _hauler_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the highways permit stays queued: the crew runner reads it until it reports stalled
    return RUNAWAY, "clear_permit", "", {"stuck": True}


def _hauler_wrong_district(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's district is a neighbouring one: a bypass there is found; highways refuses the
    # permit for good (the route leaves the round's collection area)
    return PROPAGATION, "find_bypass", "", {"district": rng.choice(["Westbrook", "Northgate"])}


def _hauler_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's collection day has a digit changed: every move works, the app's roster check
    # against the job card fails after the job
    return PROPAGATION, "assign_truck", "", {"day": rng.choice(["2027-02-06", "2027-02-19"])}


def _hauler_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's weighbridge account has two digits swapped: the ticket is scrapped for good
    return PROPAGATION, "book_tip", "", {"account": rng.choice(["WB-47018", "WB-40781"])}


def _hauler_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice kerbside-wait inside one run or tip-again (the move run again); the call
    # after the time named, or the next attempt, works
    tool = rng.choice(_HAULER_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _hauler_waits(rng, count)
        if rng.random() < 0.5
        else [{"kind": "tip-again", "text": t} for t in _hauler_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _hauler_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the closure register answers 4-9 pages; a wide enough bypass is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _hauler_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is queued 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _hauler_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the job card's landfill cell is full: reroute names another site; the next plan books
    # there and the rest works
    site = rng.choice(["Brack Hill landfill", "Sowerby transfer station"])
    return "healthy", "", PROPAGATION, {"site_to": site}


def _hauler_external_main(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every move worked and the roster checked, a burst water main closes the bypass
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- surgery: a veterinary hospital scheduling an animal's operation with LangGraph's Functional
# API (an entrypoint, a plan task answering a CSV plan, an execute task per step attempt running a
# tool-calling ChatOpenAI) under OpenInference's LangChain instrumentor. Services raise triage-coded
# errors: ``[AMBER]`` (busy: the executor calls again ``retry_at`` the time named, in the same
# attempt), ``[YELLOW]`` (the app runs the step again), ``[BLUE]`` with ``(use key=value)`` (a new
# plan) or ``[BLACK]`` (final).
_SURGERY_TEXTS = (
    "the rota server at {ward} timed out after {n} ms",
    "theatre scheduler locked by {vet} for {n} seconds",
    "the lab courier for {ward} is {n} minutes late",
    "the card terminal at reception {k} dropped the session",
    "the SMS gateway queue holds {n} messages",
    "{vet} is mid-consult and the booking is held",
    "the practice system is re-indexing ward {ward}",
)
_SURGERY_WARDS = ("Kennel A", "Cattery", "ICU", "Recovery 2", "Isolation")
_SURGERY_VETS = ("Dr Okafor", "Dr Lindqvist", "Dr Marsh", "Dr Petrosyan", "Dr Achebe")
_SURGERY_STEP = {
    "surgeon_rota": "find_surgeon",
    "lab_order": "order_bloods",
    "theatre_booking": "book_theatre",
    "charge_account": "charge_estimate",
    "send_sms": "text_owner",
}
_SURGERY_TIMED = ["theatre_booking", "charge_account", "send_sms"]


def _surgery_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SURGERY_TEXTS).format(
            ward=rng.choice(_SURGERY_WARDS),
            vet=rng.choice(_SURGERY_VETS),
            n=rng.randint(3, 950),
            k=rng.randint(1, 4),
        )
        for _ in range(count)
    ]


def _surgery_ambers(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each busy answer names another time: the executor calls again with other arguments
    minutes = rng.sample(range(8 * 60, 17 * 60, 5), count)
    return [
        {"kind": "AMBER", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_surgery_texts(rng, count), minutes, strict=True)
    ]


def _surgery_black(rng: random.Random) -> dict[str, str]:
    return {"kind": "BLACK", "text": _surgery_texts(rng, 1)[0]}


def _surgery_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # YELLOW again and again (varying texts), the app runs the step again each time; the last
    # answer is BLACK
    tool = rng.choice(sorted(_SURGERY_STEP))
    again = [{"kind": "YELLOW", "text": t} for t in _surgery_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _SURGERY_STEP[tool], "", {"tool": tool, "faults": [*again, _surgery_black(rng)]}


def _surgery_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one execute task: AMBER again and again, each naming another time the executor
    # calls again at; the last answer is BLACK
    tool = rng.choice(_SURGERY_TIMED)
    faults = [*_surgery_ambers(rng, rng.randint(4, 6)), _surgery_black(rng)]
    return RUNAWAY, _SURGERY_STEP[tool], "", {"tool": tool, "faults": faults}


def _surgery_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the estimate's charge fails under every plan: YELLOW (run again), then BLUE naming another
    # account of the client (a new plan), 3-4 plans; the last BLACK
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _surgery_texts(rng, 2)
        faults.append({"kind": "YELLOW", "text": again})
        if i < plans - 1:
            accounts.append(f"CL-{rng.randint(10000, 99999)}")
            faults.append({"kind": "BLUE", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "BLACK", "text": moved})
    params = {"tool": "charge_account", "faults": faults, "accounts": accounts}
    return RUNAWAY, "charge_estimate", "", params


def _surgery_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the pre-op blood panel stays running: the executor reads it until it reports stalled
    return RUNAWAY, "order_bloods", "", {"stuck": True}


def _surgery_wrong_species(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the front desk's note gives the wrong species: a surgeon credentialed for it is found;
    # the theatre refuses the booking for good (the patient on file is a dog)
    return PROPAGATION, "find_surgeon", "", {"species": rng.choice(["feline", "equine"])}


def _surgery_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's operation day has a digit changed: every step works, the app's admission check
    # against the consent form fails after the last step
    return PROPAGATION, "book_theatre", "", {"day": rng.choice(["2027-03-18", "2027-03-26"])}


def _surgery_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's client account has two digits swapped: the charge is BLACK for good
    return PROPAGATION, "charge_estimate", "", {"account": rng.choice(["CL-58240", "CL-85204"])}


def _surgery_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice AMBER inside one attempt or YELLOW (the step run again); the call at the
    # time named, or the next attempt, works
    tool = rng.choice(_SURGERY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _surgery_ambers(rng, count)
        if rng.random() < 0.5
        else [{"kind": "YELLOW", "text": t} for t in _surgery_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _surgery_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hospital's surgeon rota answers 4-9 pages; a free orthopaedic surgeon is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _surgery_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the blood panel runs 3-8 reads, then the results are in
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _surgery_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the consent form's theatre is closed for a deep clean: BLUE names another theatre; the
    # next plan books there and the rest works
    theatre = rng.choice(["Theatre 1", "Theatre 3"])
    return "healthy", "", PROPAGATION, {"theatre_to": theatre}


def _surgery_external_anaesthesia(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the admission checked, the booked theatre's anaesthetic machine
    # fails its morning test during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- marathon: a city marathon's race-day logistics, an asyncio app instrumented with the
# planscope SDK's context managers (a planner answering a Mermaid flowchart DAG, a clerk LLM run
# per step attempt with OpenAI function tools) under OpenLLMetry's OpenAI instrumentor. Services
# raise race-result codes: ``HOLD`` (the clerk calls again ``at`` the time named, in the same
# attempt), ``DNF`` (the app runs the step again), ``DETOUR`` with ``(use k=v)`` (a new plan),
# ``DQ`` (final). Each step's clerk is handed the earlier results its step requires (the edges'
# labels); a starved clerk fills a missing reference with its name and is disqualified.
_MARATHON_TEXTS = (
    "the timing mats at km {km} lost sync with the {gate} gate",
    "the volunteer desk's rota sheet {n} is locked for editing",
    "the city permits office queue is {n} requests long",
    "the race account's bank feed is {n} minutes behind",
    "the SMS gateway throttled the {gate} sender after {n} messages",
    "a delivery van blocks the {gate} loading bay",
    "the supplier ledger export {n} is still running",
)
_MARATHON_GATES = ("North", "Harbour", "Stadium", "Riverside", "Old Town")
_MARATHON_STEP = {
    "search_suppliers": "find_supplier",
    "request_road_closure": "request_closure",
    "book_marshals": "book_marshals",
    "pay_supplier": "pay_supplier",
    "send_runner_notice": "send_notice",
}
_MARATHON_TIMED = ["book_marshals", "pay_supplier", "send_runner_notice"]


def _marathon_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_MARATHON_TEXTS).format(
            km=rng.randint(2, 41), gate=rng.choice(_MARATHON_GATES), n=rng.randint(3, 900)
        )
        for _ in range(count)
    ]


def _marathon_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the clerk calls again with different arguments
    minutes = rng.sample(range(6 * 60, 16 * 60, 5), count)
    return [
        {"code": "HOLD", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_marathon_texts(rng, count), minutes, strict=True)
    ]


def _marathon_dq(rng: random.Random) -> dict[str, str]:
    return {"code": "DQ", "text": _marathon_texts(rng, 1)[0]}


def _marathon_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # DNF again and again (varying texts), the app runs the step again each time; the last DQ
    tool = rng.choice(sorted(_MARATHON_STEP))
    dnf = [{"code": "DNF", "text": t} for t in _marathon_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _MARATHON_STEP[tool], "", {"tool": tool, "faults": [*dnf, _marathon_dq(rng)]}


def _marathon_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one clerk run: HOLD again and again, each naming another time the clerk calls
    # again at; the last answer is DQ
    tool = rng.choice(_MARATHON_TIMED)
    faults = [*_marathon_holds(rng, rng.randint(4, 6)), _marathon_dq(rng)]
    return RUNAWAY, _MARATHON_STEP[tool], "", {"tool": tool, "faults": faults}


def _marathon_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the supplier's payment fails under every plan: DNF (run again), then DETOUR naming another
    # race account (a new plan), 3-4 plans; the last DQ
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _marathon_texts(rng, 2)
        faults.append({"code": "DNF", "text": again})
        if i < plans - 1:
            accounts.append(f"RA-{rng.randint(10000, 99999)}")
            faults.append({"code": "DETOUR", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"code": "DQ", "text": moved})
    params = {"tool": "pay_supplier", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_supplier", "", params


def _marathon_wrong_zone(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the race director's note names a neighbouring course zone: a supplier there is found and
    # paid; the marshal desk disqualifies the booking for good (its stations are off the course)
    return PROPAGATION, "find_supplier", "", {"note": {"zone": rng.choice(["Z3", "Z5"])}}


def _marathon_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's race day has a digit changed: every step works, the app's check of the
    # closure order's day against the race card fails
    return (
        PROPAGATION,
        "request_closure",
        "",
        {"note": {"day": rng.choice(["2027-04-11", "2027-04-28"])}},
    )


def _marathon_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's race account has two digits swapped: the payment is disqualified for good
    return (
        PROPAGATION,
        "pay_supplier",
        "",
        {"note": {"account": rng.choice(["RA-51520", "RA-55102"])}},
    )


def _marathon_starved_empty(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the step's clerk is handed {}: it fills each reference with its name (a supplier called
    # "supplier", a closure order "closure") and is disqualified
    step = rng.choice(["book_marshals", "pay_supplier", "send_notice"])
    return STARVED, step, "", {"starve": {"step": step, "given": []}}


def _marathon_starved_partial(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # one required result missing (the supplier for the marshals, the payment or the marshals
    # for the notice): the same misreading
    step, given = rng.choice(
        [
            ("book_marshals", ["closure"]),
            ("send_notice", ["closure", "marshals"]),
            ("send_notice", ["closure", "payment"]),
        ]
    )
    return STARVED, step, "", {"starve": {"step": step, "given": given}}


def _marathon_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice HOLD inside one clerk run or DNF (the step run again); the call at the time
    # named, or the next attempt, works
    tool = rng.choice(_MARATHON_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _marathon_holds(rng, count)
        if rng.random() < 0.5
        else [{"code": "DNF", "text": t} for t in _marathon_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _marathon_paged_polled(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the supplier list answers 4-9 pages (a supplier with free stations on the last) while the
    # city's closure order is pending for 3-8 reads, then issued
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9), "polls": rng.randint(3, 8)}


def _marathon_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the card's volunteer pool is short of marshals: DETOUR names another pool; the next plan
    # books there and the rest works
    pool = rng.choice(["South volunteer pool", "University running club"])
    return "healthy", "", PROPAGATION, {"pool_to": pool}


def _marathon_external_heat(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the check passed, the city's heat alert stops the race during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- shoot: a film production company preparing a location shoot day, a planner-executor app
# on the openai client under the Traceloop SDK (a planner answering CSV, a unit runner per step
# attempt). Services raise ``WORD: text`` faults: ``STANDBY`` (``(try after HH:MM)``: the model
# calls again ``after`` the time named, in the same run), ``GO-AGAIN`` (the app runs the step
# again), ``RETHINK`` with ``(use k=v)`` (a new plan) or ``WRAP`` (final).
_SHOOT_TEXTS = (
    "the generator truck for {unit} is {n} minutes out",
    "{street} is closed for a half marathon until {n} past",
    "the location's keyholder on floor {k} is not answering",
    "{unit}'s tracking vehicle failed its pre-use check",
    "the film office's booking system shows {n} applications ahead",
    "a rigging inspection on {street} overran by {n} minutes",
    "the card reader at production accounts timed out after {k} tries",
)
_SHOOT_STREETS = (
    "Clyde Street",
    "Finnieston Quay",
    "Govan Road",
    "Anderston Quay",
    "Lancefield St",
)
_SHOOT_STEP = {
    "find_locations": "find_location",
    "apply_permit": "get_permit",
    "book_crew": "book_crew",
    "pay_location_fee": "pay_fee",
    "send_call_sheet": "send_call_sheet",
}
_SHOOT_TIMED = ["book_crew", "pay_location_fee", "send_call_sheet"]


def _shoot_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SHOOT_TEXTS).format(
            unit=rng.choice(["main unit", "second unit", "splinter unit"]),
            street=rng.choice(_SHOOT_STREETS),
            n=rng.randint(4, 95),
            k=rng.randint(2, 9),
        )
        for _ in range(count)
    ]


def _shoot_standbys(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each standby names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 22 * 60, 5), count)
    return [
        {"word": "STANDBY", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_shoot_texts(rng, count), minutes, strict=True)
    ]


def _shoot_wrap(rng: random.Random) -> dict[str, str]:
    return {"word": "WRAP", "text": _shoot_texts(rng, 1)[0]}


def _shoot_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # GO-AGAIN again and again (varying texts), the app runs the step again each time; the last
    # answer is WRAP
    tool = rng.choice(sorted(_SHOOT_STEP))
    again = [{"word": "GO-AGAIN", "text": t} for t in _shoot_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _SHOOT_STEP[tool], "", {"tool": tool, "faults": [*again, _shoot_wrap(rng)]}


def _shoot_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one unit-runner run: STANDBY again and again, each naming another time the model
    # calls again after; the last answer is WRAP
    tool = rng.choice(_SHOOT_TIMED)
    faults = [*_shoot_standbys(rng, rng.randint(4, 6)), _shoot_wrap(rng)]
    return RUNAWAY, _SHOOT_STEP[tool], "", {"tool": tool, "faults": faults}


def _shoot_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the location fee fails under every plan: GO-AGAIN (run again), then RETHINK naming
    # another of the production's accounts (a new plan), 3-4 plans; the last WRAP
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _shoot_texts(rng, 2)
        faults.append({"word": "GO-AGAIN", "text": again})
        if i < plans - 1:
            accounts.append(f"PRD-{rng.randint(10000, 99999)}")
            faults.append({"word": "RETHINK", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"word": "WRAP", "text": moved})
    params = {"tool": "pay_location_fee", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_fee", "", params


def _shoot_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the filming permit stays queued: the unit runner reads it until it reports stalled
    return RUNAWAY, "get_permit", "", {"stuck": True}


def _shoot_wrong_city(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's city is a neighbouring council's: a location there is found; the city's film
    # office refuses the permit for good (outside its jurisdiction)
    return PROPAGATION, "find_location", "", {"city": rng.choice(["Paisley", "Greenock"])}


def _shoot_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's shoot day has a digit changed: the permit is applied for (and granted) on it
    # first, every step works, the app's call-sheet check against the card fails after the job
    return PROPAGATION, "get_permit", "", {"day": rng.choice(["2027-03-13", "2027-03-28"])}


def _shoot_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's production account has two digits swapped: the fee is refused for good
    return PROPAGATION, "pay_fee", "", {"account": rng.choice(["PRD-51590", "PRD-55109"])}


def _shoot_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice STANDBY inside one run or GO-AGAIN (the step run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_SHOOT_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _shoot_standbys(rng, count)
        if rng.random() < 0.5
        else [{"word": "GO-AGAIN", "text": t} for t in _shoot_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _shoot_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the film office's register answers 4-9 pages; a free location is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _shoot_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is queued 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _shoot_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the card's grip house has every crew out: RETHINK names another house; the next plan
    # books there and the rest works
    house = rng.choice(["Lowland Lamps & Grip", "Northern Sparks Hire"])
    return "healthy", "", PROPAGATION, {"house_to": house}


def _shoot_external_surge(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the call sheet checked, the harbour authority closes the
    # quay for a storm surge during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- ferrier: an equestrian centre preparing horses for a three-day event, a LlamaIndex app (a
# planner LLM call answering an Org-mode plan, a FunctionAgent per step attempt) under LlamaIndex's
# native OpenTelemetry integration. Services raise ``YARD-<KIND>: text`` faults: ``HOLD`` with
# ``(again after HH:MM)`` (the model calls again ``after`` that time), ``RESADDLE`` (the app runs
# the step again), ``REROUTE`` with ``(use k=v)`` (a new plan) or ``SCRATCH`` (final).
_FERRIER_TEXTS = (
    "the lorry park at {venue} is flooded to {n} cm",
    "{horse} pulled a shoe in the warm-up arena",
    "the stable office at {venue} lost power for {n} minutes",
    "the register's licence lookup for box {k} timed out",
    "the club treasurer's card reader dropped {n} payments",
    "{horse} will not load into the ramp at bay {k}",
    "the county vets' queue is {n} horses long",
)
_FERRIER_VENUES = ("Hartley Park", "Bramham Moor", "Eskdale Down", "Pennock Field", "Caldbeck")
_FERRIER_HORSES = ("Juniper Blue", "Mister Tallow", "Quillon", "Sable Rock", "Hazel Cross")
_FERRIER_STEP = {
    "find_licensed_farrier": "farrier",
    "request_fitness_exam": "vet_exam",
    "book_transport": "transport",
    "pay_entry_fee": "entry_fee",
    "notify_riders": "riders",
}
_FERRIER_TIMED = ["book_transport", "pay_entry_fee", "notify_riders"]


def _ferrier_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FERRIER_TEXTS).format(
            venue=rng.choice(_FERRIER_VENUES),
            horse=rng.choice(_FERRIER_HORSES),
            n=rng.randint(3, 400),
            k=rng.randint(1, 40),
        )
        for _ in range(count)
    ]


def _ferrier_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"kind": "HOLD", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_ferrier_texts(rng, count), minutes, strict=True)
    ]


def _ferrier_scratch(rng: random.Random) -> dict[str, str]:
    return {"kind": "SCRATCH", "text": _ferrier_texts(rng, 1)[0]}


def _ferrier_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RESADDLE again and again (varying texts), the app runs the step again each time; the last
    # answer is SCRATCH
    tool = rng.choice(sorted(_FERRIER_STEP))
    again = [{"kind": "RESADDLE", "text": t} for t in _ferrier_texts(rng, rng.randint(4, 6))]
    faults = [*again, _ferrier_scratch(rng)]
    return RUNAWAY, _FERRIER_STEP[tool], "", {"tool": tool, "faults": faults}


def _ferrier_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one agent run: HOLD again and again, each naming another time the model calls
    # again after; the last answer is SCRATCH
    tool = rng.choice(_FERRIER_TIMED)
    faults = [*_ferrier_holds(rng, rng.randint(4, 6)), _ferrier_scratch(rng)]
    return RUNAWAY, _FERRIER_STEP[tool], "", {"tool": tool, "faults": faults}


def _ferrier_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the horse transport fails under every plan: RESADDLE (run again), then REROUTE naming
    # another horsebox operator (a new plan), 3-4 plans; the last SCRATCH
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    operators = rng.sample(["Dalesway Horseboxes", "Fellside Equine", "Ridgeway Lorries"], 3)
    for i in range(plans):
        again, moved = _ferrier_texts(rng, 2)
        faults.append({"kind": "RESADDLE", "text": again})
        if i < plans - 1:
            faults.append({"kind": "REROUTE", "text": moved, "hint": f"operator={operators[i]}"})
        else:
            faults.append({"kind": "SCRATCH", "text": moved})
    return RUNAWAY, "transport", "", {"tool": "book_transport", "faults": faults}


def _ferrier_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vet's fitness exam stays "in the stable queue": the executor reads it until it
    # reports stalled
    return RUNAWAY, "vet_exam", "", {"stuck": True}


def _ferrier_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the entry form's region is a neighbouring one: a farrier licensed there is found; the
    # event's vet refuses the exam for good (the farrier holds no licence for the event's region)
    return PROPAGATION, "farrier", "", {"region": rng.choice(["North Riding", "Westmorland"])}


def _ferrier_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the entry form's travel day has a digit changed: every step works, the app's check of the
    # transport booking against the event's travel day fails after the run
    return PROPAGATION, "transport", "", {"day": rng.choice(["2027-05-03", "2027-05-21"])}


def _ferrier_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the entry form's club account has two digits swapped: the entry fee is refused for good
    return PROPAGATION, "entry_fee", "", {"account": rng.choice(["CLUB-61527", "CLUB-62157"])}


def _ferrier_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice HOLD inside one run or RESADDLE (the step run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_FERRIER_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _ferrier_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "RESADDLE", "text": t} for t in _ferrier_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _ferrier_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the farriers' register answers 4-9 pages; a farrier licensed for the region is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _ferrier_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fitness exam is queued 3-8 reads, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _ferrier_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the entry form's horsebox operator is fully booked for the day: REROUTE names another;
    # the next plan books there and the rest works
    operator = rng.choice(["Fellside Equine", "Ridgeway Lorries"])
    return "healthy", "", PROPAGATION, {"operator_to": operator}


def _ferrier_external_abandoned(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the transport checked, the organisers abandon the
    # cross-country day for a waterlogged course during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- ropeway: a city cable-car operator replacing a cabin's haul rope in a maintenance window,
# the Anthropic SDK by hand with its tools on an MCP server (stdio), a planner answering an
# Org-mode outline and an executor conversation per step attempt, under OpenLLMetry's Anthropic
# and MCP instrumentors. Services raise ropeway signals: ``SLACK`` (``resume HH:MM``: the model
# calls again at that time, same conversation), ``SWAY`` (the app runs the step again),
# ``DIVERT`` with ``use key=value`` (a new plan) or ``DEROPE`` (final).
_ROPEWAY_TEXTS = (
    "wind at tower {k} gusting {n} km/h",
    "the {station} bullwheel brake is under inspection for {n} minutes",
    "the regulator's desk has {n} files ahead of this one",
    "cabin {cabin} is parked on the {station} siding",
    "the {station} control room lost the telemetry link",
    "the splice yard at {station} is {n} metres short of laydown space",
    "the budget ledger is locked for the {n}th period close",
)
_ROPEWAY_STATIONS = ("Harbour", "Old Town", "Cathedral", "Parkhill", "Summit")
_ROPEWAY_STEP = {
    "list_contractors": "find_splicer",
    "apply_for_approval": "get_approval",
    "book_crane": "book_crane",
    "charge_budget": "charge_parts",
    "notify_commuters": "notify_commuters",
}
_ROPEWAY_TIMED = ["book_crane", "charge_budget", "notify_commuters"]


def _ropeway_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_ROPEWAY_TEXTS).format(
            k=rng.randint(1, 14),
            n=rng.randint(3, 120),
            station=rng.choice(_ROPEWAY_STATIONS),
            cabin=f"C{rng.randint(1, 36):02d}",
        )
        for _ in range(count)
    ]


def _ropeway_slacks(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each slack names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 22 * 60, 5), count)
    return [
        {"signal": "SLACK", "text": t, "resume": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_ropeway_texts(rng, count), minutes, strict=True)
    ]


def _ropeway_derope(rng: random.Random) -> dict[str, str]:
    return {"signal": "DEROPE", "text": _ropeway_texts(rng, 1)[0]}


def _ropeway_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # SWAY again and again (varying texts), the app runs the step again each time; the last
    # answer is DEROPE
    tool = rng.choice(sorted(_ROPEWAY_STEP))
    sway = [{"signal": "SWAY", "text": t} for t in _ropeway_texts(rng, rng.randint(4, 6))]
    faults = [*sway, _ropeway_derope(rng)]
    return RUNAWAY, _ROPEWAY_STEP[tool], "", {"tool": tool, "faults": faults}


def _ropeway_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: SLACK again and again, each naming another time the
    # model calls again at; the last answer is DEROPE
    tool = rng.choice(_ROPEWAY_TIMED)
    faults = [*_ropeway_slacks(rng, rng.randint(4, 6)), _ropeway_derope(rng)]
    return RUNAWAY, _ROPEWAY_STEP[tool], "", {"tool": tool, "faults": faults}


def _ropeway_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the parts charge fails under every plan: SWAY (run again), then DIVERT naming another of
    # the operator's budget codes (a new plan), 3-4 plans; the last DEROPE
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    budgets: list[str] = []
    for i in range(plans):
        sway, moved = _ropeway_texts(rng, 2)
        faults.append({"signal": "SWAY", "text": sway})
        if i < plans - 1:
            budgets.append(f"MNT-{rng.randint(1000, 9999)}-{rng.choice('ABCDEF')}")
            faults.append({"signal": "DIVERT", "text": moved, "use": f"budget={budgets[-1]}"})
        else:
            faults.append({"signal": "DEROPE", "text": moved})
    params = {"tool": "charge_budget", "faults": faults, "budgets": budgets}
    return RUNAWAY, "charge_parts", "", params


def _ropeway_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the regulator's application stays under review: the executor reads it until it gives up
    return RUNAWAY, "get_approval", "", {"stuck": True}


def _ropeway_wrong_line(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the duty manager's note names another line: a splicer certified for that line's rope is
    # found; the regulator refuses the application for good (wrong rope certification)
    return PROPAGATION, "find_splicer", "", {"line": rng.choice(["Blue line", "Green line"])}


def _ropeway_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's window day has a digit changed: every step works, the app's check of the
    # crane booking against the maintenance window fails after the job
    return PROPAGATION, "book_crane", "", {"window": rng.choice(["2027-04-12", "2027-04-21"])}


def _ropeway_wrong_budget(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget code has two digits swapped: the charge is refused for good
    return PROPAGATION, "charge_parts", "", {"budget": rng.choice(["MNT-4172-R", "MNT-7412-R"])}


def _ropeway_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice SLACK inside one conversation or SWAY (the step run again); the call at
    # the time named, or the next attempt, works
    tool = rng.choice(_ROPEWAY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _ropeway_slacks(rng, count)
        if rng.random() < 0.5
        else [{"signal": "SWAY", "text": t} for t in _ropeway_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _ropeway_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the contractor list answers 4-9 pages; a certified splicer free in the window is on the
    # last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _ropeway_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the application is under review 3-8 reads, then approved
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _ropeway_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the work order's crane is out for its own inspection: DIVERT names another crane; the
    # next plan books it and the rest works
    crane = rng.choice(["Liebherr LTM-60 (Quayside Lifting)", "Grove GMK-4 (Parkhill Plant)"])
    return "healthy", "", PROPAGATION, {"crane_to": crane}


def _ropeway_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the crane booking checked, a thunderstorm warning closes the
    # line during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- kennel: an animal shelter transferring a dog to a rescue partner on the OpenAI Agents SDK
# (a planner agent answering JSON Lines, an executor agent run per step attempt) under
# OpenLLMetry's openai-agents instrumentor. Services raise RFC 9457-style problems the tools hand
# the model as JSON: ``hold`` (busy: the executor calls again with ``after`` the time named),
# ``again`` (the app runs the step again), ``redirect`` with ``(use k=v)`` (a new plan) or
# ``denied`` (final).
_KENNEL_TEXTS = (
    "the intake desk at {site} is handling {n} surrenders",
    "the vet's LIMS dropped request batch {k}",
    "van {van} is being disinfected after a parvo run",
    "the grant ledger is closing period {k}",
    "{site} lost power in kennel block {k}",
    "the SMS gateway throttled the shelter after {n} messages",
    "the network's partner directory is reindexing {n} records",
)
_KENNEL_SITES = ("Millbrook", "Harbour Lane", "Oakfield", "Riverside", "Ashby Cross")
_KENNEL_STEP = {
    "search_partners": "find_partner",
    "request_health_certificate": "vet_certificate",
    "book_transport": "book_van",
    "pay_transfer_fee": "pay_fee",
    "notify_adopter": "notify_adopter",
}
_KENNEL_TIMED = ["book_transport", "pay_transfer_fee", "notify_adopter"]


def _kennel_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_KENNEL_TEXTS).format(
            site=rng.choice(_KENNEL_SITES),
            van=f"V-{rng.randint(2, 9)}",
            n=rng.randint(3, 400),
            k=rng.randint(1, 60),
        )
        for _ in range(count)
    ]


def _kennel_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the executor calls again with different arguments
    minutes = rng.sample(range(8 * 60, 17 * 60, 5), count)
    return [
        {"kind": "hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_kennel_texts(rng, count), minutes, strict=True)
    ]


def _kennel_denied(rng: random.Random) -> dict[str, str]:
    return {"kind": "denied", "text": _kennel_texts(rng, 1)[0]}


def _kennel_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # again again and again (varying texts), the app runs the step again each time; the last
    # answer is denied
    tool = rng.choice(sorted(_KENNEL_STEP))
    again = [{"kind": "again", "text": t} for t in _kennel_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _KENNEL_STEP[tool], "", {"tool": tool, "faults": [*again, _kennel_denied(rng)]}


def _kennel_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run: hold again and again, each naming another time the executor calls
    # again after; the last answer is denied
    tool = rng.choice(_KENNEL_TIMED)
    faults = [*_kennel_holds(rng, rng.randint(4, 6)), _kennel_denied(rng)]
    return RUNAWAY, _KENNEL_STEP[tool], "", {"tool": tool, "faults": faults}


def _kennel_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the transfer fee fails under every plan: again (run again), then redirect naming another
    # grant account of the shelter (a new plan), 3-4 plans; the last denied
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _kennel_texts(rng, 2)
        faults.append({"kind": "again", "text": again})
        if i < plans - 1:
            accounts.append(f"GR-{rng.randint(10000, 99999)}")
            faults.append({"kind": "redirect", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "denied", "text": moved})
    params = {"tool": "pay_transfer_fee", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_fee", "", params


def _kennel_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vet's health certificate stays pending: the executor polls it until it reports stalled
    return RUNAWAY, "vet_certificate", "", {"stuck": True}


def _kennel_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the coordinator's note names a neighbouring region: a partner with room is found there; the
    # transport desk denies the van for good (outside the shelter's transport network)
    return PROPAGATION, "find_partner", "", {"region": rng.choice(["North Downs", "Fenland"])}


def _kennel_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's transfer day has a digit changed: every step works, the app's check of the van
    # booking against the partner's intake day fails after the job
    return PROPAGATION, "book_van", "", {"day": rng.choice(["2027-03-04", "2027-03-17"])}


def _kennel_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's grant account has two digits swapped: the fee is denied for good
    return PROPAGATION, "pay_fee", "", {"account": rng.choice(["GR-52814", "GR-58241"])}


def _kennel_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice hold inside one run or again (the step run again); the call after the time
    # named, or the next attempt, works
    tool = rng.choice(_KENNEL_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _kennel_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "again", "text": t} for t in _kennel_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _kennel_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the partner directory answers 4-9 pages; the partner with room is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _kennel_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate is pending 3-8 reads, then issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _kennel_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the case file's van is in the workshop: redirect names another van; the next plan books it
    # and the rest works
    return "healthy", "", PROPAGATION, {"van_to": rng.choice(["V-3", "V-7"])}


def _kennel_external_quarantine(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the check passed, the partner's kennels go into quarantine
    # (kennel cough) during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- vessel: a university research vessel's sampling cruise, the Amazon Bedrock Converse API by
# hand (a planner answering HCL blocks, an executor tool-use loop per step attempt) under
# OpenLLMetry's Bedrock instrumentor. Services raise harbour faults the app hands the model as an
# error ``toolResult``: ``TideWait`` (call again at the ``retryAt`` time named, in the same
# loop), ``Swell`` (the app runs the step again), ``Diversion`` with ``(use k=v)`` (a new plan)
# or ``Refusal`` (final).
_VESSEL_TEXTS = (
    "the harbour master's VHF desk on channel {k} is handling {n} calls",
    "pilot boat {pilot} is alongside another vessel at {quay}",
    "the bunker barge at {quay} is pumping {n} tonnes for a ferry",
    "the grant office's ledger batch {n} is still posting",
    "the lock gates at {quay} are closed for {n} minutes on the tide",
    "the Marine Directorate portal returned gateway error {n}",
    "the crew-list server at {quay} is restarting (job {k}{n})",
)
_VESSEL_QUAYS = (
    "Albert Dock",
    "Imperial Dock",
    "Western Harbour",
    "Edinburgh Dock",
    "Ocean Terminal",
)
_VESSEL_STEP = {
    "search_berths": "find_berth",
    "apply_permit": "get_permit",
    "book_bunkering": "book_fuel",
    "pay_port_dues": "pay_dues",
    "notify_science_crew": "notify_crew",
}
_VESSEL_TIMED = ["book_bunkering", "pay_port_dues", "notify_science_crew"]


def _vessel_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_VESSEL_TEXTS).format(
            quay=rng.choice(_VESSEL_QUAYS),
            pilot=f"PB-{rng.randint(1, 9)}",
            n=rng.randint(3, 900),
            k=rng.randint(1, 9),
        )
        for _ in range(count)
    ]


def _vessel_waits(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each tide wait names another time: the model calls again with different arguments
    minutes = rng.sample(range(4 * 60, 20 * 60, 5), count)
    return [
        {"kind": "TideWait", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_vessel_texts(rng, count), minutes, strict=True)
    ]


def _vessel_refusal(rng: random.Random) -> dict[str, str]:
    return {"kind": "Refusal", "text": _vessel_texts(rng, 1)[0]}


def _vessel_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # Swell again and again (varying texts), the app runs the step again each time; the last
    # answer is a Refusal
    tool = rng.choice(sorted(_VESSEL_STEP))
    again = [{"kind": "Swell", "text": t} for t in _vessel_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _VESSEL_STEP[tool], "", {"tool": tool, "faults": [*again, _vessel_refusal(rng)]}


def _vessel_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor loop: TideWait again and again, each naming another time the model
    # calls again at; the last answer is a Refusal
    tool = rng.choice(_VESSEL_TIMED)
    faults = [*_vessel_waits(rng, rng.randint(4, 6)), _vessel_refusal(rng)]
    return RUNAWAY, _VESSEL_STEP[tool], "", {"tool": tool, "faults": faults}


def _vessel_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the port dues fail under every plan: Swell (run again), then a Diversion naming another
    # grant code of the university (a new plan), 3-4 plans; the last a Refusal
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    grants: list[str] = []
    for i in range(plans):
        again, moved = _vessel_texts(rng, 2)
        faults.append({"kind": "Swell", "text": again})
        if i < plans - 1:
            grants.append(f"GR-{rng.randint(10000, 99999)}")
            faults.append({"kind": "Diversion", "text": moved, "hint": f"grant={grants[-1]}"})
        else:
            faults.append({"kind": "Refusal", "text": moved})
    params = {"tool": "pay_port_dues", "faults": faults, "grants": grants}
    return RUNAWAY, "pay_dues", "", params


def _vessel_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the sampling permit application stays under review: the executor reads it until it
    # reports stalled
    return RUNAWAY, "get_permit", "", {"stuck": True}


def _vessel_wrong_port(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's home port is another one: a berth there is found; the Marine Directorate
    # refuses the permit for good (the licence covers sailings from the cruise's port only)
    return PROPAGATION, "find_berth", "", {"port": rng.choice(["Rosyth", "Grangemouth"])}


def _vessel_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's sailing day has a digit changed: every step works, the app's bunkering check
    # against the cruise sheet fails after the last step
    return PROPAGATION, "book_fuel", "", {"sail_date": rng.choice(["2027-06-03", "2027-06-18"])}


def _vessel_wrong_grant(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's grant code has two digits swapped: the port dues are refused for good
    return PROPAGATION, "pay_dues", "", {"grant": rng.choice(["GR-51520", "GR-55102"])}


def _vessel_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a TideWait inside one loop or a Swell (the step run again); the call at the
    # time named, or the next attempt, works
    tool = rng.choice(_VESSEL_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _vessel_waits(rng, count)
        if rng.random() < 0.5
        else [{"kind": "Swell", "text": t} for t in _vessel_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _vessel_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the harbour master's berth listing answers 4-9 pages; a deep enough berth is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _vessel_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the permit is under review for 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _vessel_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the cruise sheet's bunker supplier has no barge on the sailing day: a Diversion names
    # another supplier; the next plan books with it and the rest works
    supplier = rng.choice(["Forth Marine Fuels", "Granton Bunker Services"])
    return "healthy", "", PROPAGATION, {"supplier_to": supplier}


def _vessel_external_gale(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the bunkering checked, a gale warning closes the port during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- tannery: a leather tannery's hide batch (a raw hide lot from a paged auction register, a
# drum slot in the tanning room, the lab's polled dye-fastness test, the crust's haulage to the
# finisher, the buyer's account charged, the dispatch notice), the Anthropic SDK by hand under
# Logfire's Anthropic instrumentation and the app's Logfire spans (a planner answering a Semantic
# Kernel Handlebars plan, an executor conversation per step attempt). Services answer batch-card
# words as ``is_error`` tool results: ``HOLD`` (call again ``not_before`` the time named),
# ``REWORK`` (the app runs the step again), ``RESORT`` with ``(use k=v)`` (a new plan) or
# ``REJECT`` (final).
_TANNERY_TEXTS = (
    "the fleshing machine on line {k} is being re-bladed",
    "drum {k} is still draining its {n} l chrome float",
    "the auction house's register is re-indexing {n} lots from {yard}",
    "the lab's xenon fade cabinet is at {n} of its cycle hours",
    "the haulier's curtainsider {k}{n} is stuck at the {yard} weighbridge",
    "the ledger is posting {n} hide-levy lines from {yard}",
    "the mail relay deferred batch {k}-{n} for a greylist",
    "the sammying press on line {k} tripped at {n} bar",
)
_TANNERY_YARDS = ("Kempten", "Memmingen", "Leutkirch", "Wangen", "Isny")
_TANNERY_STEP = {
    "Auction-search_lots": "hide_lot",
    "Tanroom-reserve_drum": "drum_slot",
    "Lab-submit_fastness_test": "dye_test",
    "Haulage-book_haul": "haulage",
    "Ledger-charge_account": "buyer_charge",
    "Mail-send_notice": "buyer_notice",
}
_TANNERY_TIMED = [
    "Tanroom-reserve_drum",
    "Haulage-book_haul",
    "Ledger-charge_account",
    "Mail-send_notice",
]


def _tannery_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_TANNERY_TEXTS).format(
            yard=rng.choice(_TANNERY_YARDS), n=rng.randint(12, 980), k=rng.randint(1, 9)
        )
        for _ in range(count)
    ]


def _tannery_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 17 * 60, 5), count)
    return [
        {"kind": "hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_tannery_texts(rng, count), minutes, strict=True)
    ]


def _tannery_reject(rng: random.Random) -> dict[str, str]:
    return {"kind": "reject", "text": _tannery_texts(rng, 1)[0]}


def _tannery_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # REWORK again and again (varying texts): the app runs the step again each time; the last
    # answer is REJECT
    tool = rng.choice(sorted(_TANNERY_STEP))
    again = [{"kind": "rework", "text": t} for t in _tannery_texts(rng, rng.randint(4, 6))]
    return (
        RUNAWAY,
        _TANNERY_STEP[tool],
        "",
        {"tool": tool, "faults": [*again, _tannery_reject(rng)]},
    )


def _tannery_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: HOLD again and again, each naming another time the
    # model calls again not before; the last answer is REJECT
    tool = rng.choice(_TANNERY_TIMED)
    faults = [*_tannery_holds(rng, rng.randint(4, 6)), _tannery_reject(rng)]
    return RUNAWAY, _TANNERY_STEP[tool], "", {"tool": tool, "faults": faults}


def _tannery_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the buyer's charge fails under every plan: REWORK (run again), then RESORT naming another
    # account of the buyer (a new plan), 3-4 plans; the last REJECT
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _tannery_texts(rng, 2)
        faults.append({"kind": "rework", "text": again})
        if i < plans - 1:
            accounts.append(f"AV-{rng.randint(60000, 99999)}")
            faults.append({"kind": "resort", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "reject", "text": moved})
    params = {"tool": "Ledger-charge_account", "faults": faults, "accounts": accounts}
    return RUNAWAY, "buyer_charge", "", params


def _tannery_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lab's fastness test never leaves the queue: the executor reads it until it reports
    # stalled
    return RUNAWAY, "dye_test", "", {"stuck": True}


def _tannery_wrong_origin(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tanner's note names a neighbouring origin: a lot from there is found and gets a drum
    # slot; the lab refuses to test it for the buyer's article for good
    return PROPAGATION, "hide_lot", "", {"origin": rng.choice(["Oberschwaben", "Vorarlberg"])}


def _tannery_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's tanning day has a digit changed: the drum slot is booked for it and every step
    # works; the app's drum-slot check against the order fails after the last step
    return PROPAGATION, "drum_slot", "", {"tanning_day": rng.choice(["2027-04-17", "2027-04-15"])}


def _tannery_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the charge is rejected for good
    return PROPAGATION, "buyer_charge", "", {"account": rng.choice(["AV-52814", "AV-58241"])}


def _tannery_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a HOLD inside one conversation, or REWORK (the step run again); the call
    # not before the time named, or the next attempt, works
    tool = rng.choice(_TANNERY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _tannery_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "rework", "text": t} for t in _tannery_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _tannery_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the auction register answers 4-9 pages; a lot of the grade and size is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _tannery_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fastness test is queued or running for 3-8 reads, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _tannery_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the finisher's goods-in dock is shut that week: RESORT names another finisher; the next
    # plan books the haulage there and the rest works
    finisher = rng.choice(["Arzignano Rifinizioni", "Lederfabrik Neumuenster Finish"])
    return "healthy", "", PROPAGATION, {"finisher_to": finisher}


def _tannery_external_quarantine(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the drum slot checked, a veterinary quarantine on the region's
    # hide consignments stops the haul during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- caravan: a touring-caravan hire depot sending a caravan to a hirer's campsite pitch, a
# hand-written AsyncOpenAI app (a planner answering an AWS Step Functions state machine in Amazon
# States Language, a Parallel state's branches run concurrently, an executor conversation per
# task-state attempt) under MLflow's OpenAI autologging. The depot's functions fail as Lambda
# errors ``{"errorType", "errorMessage"}``: ``Depot.Busy`` (the model calls again ``after`` the
# ``retry_after`` time), ``Depot.Transient`` (the state machine's ``Retry``: the app runs the
# state again), ``Depot.Conflict`` with ``(use k=v)`` (a new state machine) or ``Depot.Rejected``
# (final).
_CARAVAN_TEXTS = (
    "the fleet ledger is re-indexing batch {n}",
    "yard tractor YT-{k} is blocking bay {b}",
    "the {site} booking desk holds {n} queued requests",
    "the card gateway timed out after {n} ms",
    "the gas engineer's tablet lost signal at {site}",
    "the driver rota for {site} is being published ({n} shifts)",
    "the depot's weighbridge reads {n} kg off on axle {k}",
)
_CARAVAN_SITES = ("Kendal", "Windermere", "Penrith", "Keswick", "Ambleside")
_CARAVAN_STATE = {
    "fleet_register": "FindVan",
    "gas_inspection": "GasCheck",
    "book_pitch": "BookPitch",
    "book_driver": "BookDriver",
    "charge_card": "ChargeCard",
    "notify_hirer": "NotifyHirer",
}
_CARAVAN_TIMED = ["book_pitch", "book_driver", "charge_card", "notify_hirer"]


def _caravan_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_CARAVAN_TEXTS).format(
            site=rng.choice(_CARAVAN_SITES),
            n=rng.randint(12, 4800),
            k=rng.randint(1, 9),
            b=rng.randint(1, 24),
        )
        for _ in range(count)
    ]


def _caravan_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each Depot.Busy names another retry_after: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"error": "Depot.Busy", "text": t, "retry_after": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_caravan_texts(rng, count), minutes, strict=True)
    ]


def _caravan_transient(rng: random.Random, count: int) -> list[dict[str, str]]:
    return [{"error": "Depot.Transient", "text": t} for t in _caravan_texts(rng, count)]


def _caravan_rejected(rng: random.Random) -> dict[str, str]:
    return {"error": "Depot.Rejected", "text": _caravan_texts(rng, 1)[0]}


def _caravan_loop_state(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # Depot.Transient again and again (varying texts): the state's Retry runs it again each
    # time; the last answer is Depot.Rejected
    tool = rng.choice(sorted(_CARAVAN_STATE))
    faults = [*_caravan_transient(rng, rng.randint(4, 6)), _caravan_rejected(rng)]
    return RUNAWAY, _CARAVAN_STATE[tool], "", {"tool": tool, "faults": faults}


def _caravan_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: Depot.Busy again and again, each naming another time the
    # model calls again after; the last answer is Depot.Rejected
    tool = rng.choice(_CARAVAN_TIMED)
    faults = [*_caravan_busy(rng, rng.randint(4, 6)), _caravan_rejected(rng)]
    return RUNAWAY, _CARAVAN_STATE[tool], "", {"tool": tool, "faults": faults}


def _caravan_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hirer's charge fails under every state machine: Depot.Transient (run again), then
    # Depot.Conflict naming another card the hirer gave (a new state machine), 3-4 machines; the
    # last Depot.Rejected
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    cards: list[str] = []
    for i in range(plans):
        again, moved = _caravan_texts(rng, 2)
        faults.append({"error": "Depot.Transient", "text": again})
        if i < plans - 1:
            cards.append(f"CARD-{rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}")
            faults.append({"error": "Depot.Conflict", "text": moved, "use": f"card={cards[-1]}"})
        else:
            faults.append({"error": "Depot.Rejected", "text": moved})
    params = {"tool": "charge_card", "faults": faults, "cards": cards}
    return RUNAWAY, "ChargeCard", "", params


def _caravan_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the gas-safety inspection stays PENDING (in the Parallel state's first branch): the
    # executor reads it until it gives up with States.Timeout
    return RUNAWAY, "GasCheck", "", {"stuck": True}


def _caravan_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the desk note names another region: a van stationed at that region's depot is found, passes
    # its gas check and gets the pitch; the depot's drivers refuse to collect it, for good
    return PROPAGATION, "FindVan", "", {"region": rng.choice(["Northumberland", "Dumfries"])}


def _caravan_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's arrival day has a digit changed: the pitch and the driver are booked for it and
    # every state works; the app's pitch check against the hire sheet fails after the last state
    return PROPAGATION, "BookPitch", "", {"arrive": rng.choice(["2027-05-17", "2027-05-04"])}


def _caravan_wrong_card(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's card has two digits swapped: the charge is rejected for good
    return PROPAGATION, "ChargeCard", "", {"card": rng.choice(["CARD-4471-2093", "CARD-4417-2039"])}


def _caravan_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice Depot.Busy inside one conversation, or Depot.Transient (the state run
    # again); the call after the time named, or the next attempt, works
    tool = rng.choice(_CARAVAN_TIMED)
    count = rng.randint(1, 2)
    faults = _caravan_busy(rng, count) if rng.random() < 0.5 else _caravan_transient(rng, count)
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _caravan_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fleet register answers 4-9 pages (NextToken); a free van of the berths is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _caravan_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the gas-safety inspection is PENDING for 3-8 reads, then PASSED
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _caravan_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the sheet's campsite has no pitch long enough that week: Depot.Conflict names another
    # campsite; the next state machine books the pitch there and the rest works
    site = rng.choice(["Waterside House", "Park Cliffe"])
    return "healthy", "", PROPAGATION, {"campsite_to": site}


def _caravan_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every state worked and the pitch checked, a storm closes the campsite's access road
    # while the app watches the delivery: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- hatchery: a salmon hatchery shipping eyed ova and fry to a river trust, real smolagents
# ToolCallingAgents (a planner answering a GraphQL mutation document, a shipment runner per
# field attempt) under MLflow's smolagents autologging. Services raise GraphQL-style gateway
# errors whose ``extensions.code`` says what they are: ``BACKOFF`` (the model calls again
# ``after`` the time named, same run), ``UNAVAILABLE`` (the app runs the field again),
# ``STALE_PLAN`` with a ``use`` value (a new mutation document) or ``FORBIDDEN`` (final).
_HATCHERY_TEXTS = (
    "the nursery hall's chiller {k} tripped at {n} L/min",
    "the gateway's {tool} resolver timed out after {n} ms",
    "dissolved oxygen in trough {k} fell to {n}% saturation",
    "lorry tank {k} failed its {n} kPa pressure test",
    "the fish-health lab's LIMS queue is {n} cases long",
    "the trust's ledger is closing batch {n}",
    "the hatchery's borehole pump {k} is down for {n} minutes",
)
_HATCHERY_STEP = {
    "broodstock_register": "findBatch",
    "request_screening": "screenBatch",
    "book_tank": "reserveTank",
    "book_lorry": "bookLorry",
    "charge_account": "chargeTrust",
    "notify_trust": "notifyTrust",
}
_HATCHERY_TIMED = ["book_tank", "book_lorry", "charge_account", "notify_trust"]


def _hatchery_texts(rng: random.Random, tool: str, count: int) -> list[str]:
    return [
        rng.choice(_HATCHERY_TEXTS).format(tool=tool, n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _hatchery_backoffs(rng: random.Random, tool: str, count: int) -> list[dict[str, str]]:
    # each BACKOFF names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"code": "BACKOFF", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_hatchery_texts(rng, tool, count), minutes, strict=True)
    ]


def _hatchery_forbidden(rng: random.Random, tool: str) -> dict[str, str]:
    return {"code": "FORBIDDEN", "text": _hatchery_texts(rng, tool, 1)[0]}


def _hatchery_loop_field(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # UNAVAILABLE again and again (varying texts): the app runs the field again each time; the
    # last answer is FORBIDDEN
    tool = rng.choice(sorted(_HATCHERY_STEP))
    again = [
        {"code": "UNAVAILABLE", "text": t} for t in _hatchery_texts(rng, tool, rng.randint(4, 6))
    ]
    faults = [*again, _hatchery_forbidden(rng, tool)]
    return RUNAWAY, _HATCHERY_STEP[tool], "", {"tool": tool, "faults": faults}


def _hatchery_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one runner run: BACKOFF again and again, each naming another time the model calls
    # again after; the last answer is FORBIDDEN
    tool = rng.choice(_HATCHERY_TIMED)
    faults = [*_hatchery_backoffs(rng, tool, rng.randint(4, 6)), _hatchery_forbidden(rng, tool)]
    return RUNAWAY, _HATCHERY_STEP[tool], "", {"tool": tool, "faults": faults}


def _hatchery_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lorry booking fails under every plan: UNAVAILABLE (run again), then STALE_PLAN naming
    # another livestock haulier's yard (a new plan), 3-4 plans; the last FORBIDDEN
    tool = "book_lorry"
    plans = rng.randint(3, 4)
    yards = rng.sample(
        ["Blairgowrie yard", "Dunkeld yard", "Crieff yard", "Forfar yard"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _hatchery_texts(rng, tool, 2)
        faults.append({"code": "UNAVAILABLE", "text": again})
        if i < plans - 1:
            faults.append({"code": "STALE_PLAN", "text": moved, "hint": f"depot={yards[i]}"})
        else:
            faults.append({"code": "FORBIDDEN", "text": moved})
    return RUNAWAY, "bookLorry", "", {"tool": tool, "faults": faults, "depots": yards}


def _hatchery_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fish-health screening stays PENDING: the runner reads it until it reports stalled
    return RUNAWAY, "screenBatch", "", {"stuck": True}


def _hatchery_wrong_river(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the manager's note names another river: a batch of that river's stock is found and
    # screened; the nursery hall (biosecure per river stock) refuses its tank for good
    return PROPAGATION, "findBatch", "", {"river": rng.choice(["River Dee", "River Spey"])}


def _hatchery_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's stocking day is off: every field works, the app's check of the lorry against
    # the trust's stocking consent fails after the shipment
    return PROPAGATION, "bookLorry", "", {"day": rng.choice(["2027-04-03", "2027-04-18"])}


def _hatchery_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's trust account has two digits swapped: the charge is FORBIDDEN for good
    return PROPAGATION, "chargeTrust", "", {"account": rng.choice(["RT-58231", "RT-85213"])}


def _hatchery_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice BACKOFF inside one run or UNAVAILABLE (the field run again); the call after
    # the time named, or the next attempt, works
    tool = rng.choice(_HATCHERY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _hatchery_backoffs(rng, tool, count)
        if rng.random() < 0.5
        else [{"code": "UNAVAILABLE", "text": t} for t in _hatchery_texts(rng, tool, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _hatchery_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the broodstock register answers 4-9 pages; a batch with enough eyed ova is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _hatchery_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the screening is PENDING 3-8 reads, then cleared
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _hatchery_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order sheet's nursery hall is full: STALE_PLAN names another hall; the next plan
    # books there and the rest works
    return "healthy", "", PROPAGATION, {"hall_to": rng.choice(["C", "D"])}


def _hatchery_external_spate(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every field worked and the consent checked, a spate closes the river to stocking
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- upholstery: a furniture re-upholstery workshop's job desk on LlamaIndex (a plain achat
# planner answering a declarative Jenkinsfile, a FunctionAgent run per stage attempt) under
# MLflow's LlamaIndex autologging. Services raise ``<kind> (ref WS-nnnn): text`` faults:
# ``busy`` (the model calls again ``after`` the time named, same run), ``retry`` (the app runs
# the stage again), ``rework`` with ``(use k=v)`` (a new Jenkinsfile) or ``refused`` (final).
_UPHOLSTERY_TEXTS = (
    "the swatch catalogue's mirror at the {town} showroom answered {n} stale rows",
    "the test house's cone calorimeter {k} is being recalibrated for {n} minutes",
    "the joiner's bench scheduler is locked by job {n}",
    "van {k} is at the MOT station until the {n}th minute of the hour",
    "the card terminal lost its line after {n} ms",
    "the mail relay deferred message batch {n}",
    "the stockroom scanner {k} read bolt label {n} twice",
)
_UPHOLSTERY_STAGE = {
    "findFabric": "pick_fabric",
    "requestFireTest": "fire_test",
    "bookBench": "book_bench",
    "bookVan": "book_van",
    "chargeDeposit": "take_deposit",
    "notifyCustomer": "notify_customer",
}
_UPHOLSTERY_TIMED = ["bookBench", "bookVan", "chargeDeposit", "notifyCustomer"]


def _upholstery_texts(rng: random.Random, count: int) -> list[str]:
    towns = ("Headingley", "Otley", "Ilkley", "Pudsey", "Morley")
    return [
        rng.choice(_UPHOLSTERY_TEXTS).format(
            town=rng.choice(towns), n=rng.randint(3, 9000), k=rng.randint(1, 9)
        )
        for _ in range(count)
    ]


def _upholstery_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each busy names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 17 * 60, 5), count)
    return [
        {"kind": "busy", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_upholstery_texts(rng, count), minutes, strict=True)
    ]


def _upholstery_refused(rng: random.Random) -> dict[str, str]:
    return {"kind": "refused", "text": _upholstery_texts(rng, 1)[0]}


def _upholstery_loop_stage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # retry again and again (varying texts): the app runs the stage again each time; the last
    # answer is refused
    tool = rng.choice(sorted(_UPHOLSTERY_STAGE))
    again = [{"kind": "retry", "text": t} for t in _upholstery_texts(rng, rng.randint(4, 6))]
    faults = [*again, _upholstery_refused(rng)]
    return RUNAWAY, _UPHOLSTERY_STAGE[tool], "", {"tool": tool, "faults": faults}


def _upholstery_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one hand run: busy again and again, each naming another time the model calls again
    # after; the last answer is refused
    tool = rng.choice(_UPHOLSTERY_TIMED)
    faults = [*_upholstery_busy(rng, rng.randint(4, 6)), _upholstery_refused(rng)]
    return RUNAWAY, _UPHOLSTERY_STAGE[tool], "", {"tool": tool, "faults": faults}


def _upholstery_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the van booking fails under every Jenkinsfile: retry (run again), then rework naming
    # another depot (a new Jenkinsfile), 3-4 Jenkinsfiles; the last refused
    tool = "bookVan"
    plans = rng.randint(3, 4)
    depots = rng.sample(
        ["Armley depot", "Horsforth depot", "Seacroft depot", "Rothwell depot"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _upholstery_texts(rng, 2)
        faults.append({"kind": "retry", "text": again})
        if i < plans - 1:
            faults.append({"kind": "rework", "text": moved, "hint": f"depot={depots[i]}"})
        else:
            faults.append({"kind": "refused", "text": moved})
    return RUNAWAY, "book_van", "", {"tool": tool, "faults": faults, "depots": depots}


def _upholstery_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the flammability test stays RUNNING: the hand polls it until it reports NOT_BUILT
    return RUNAWAY, "fire_test", "", {"stuck": True}


def _upholstery_wrong_branch(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the foreman's note names another branch's store: a bolt held there is found and passes
    # its fire test, the bench is booked; the van refuses the bolt (off its round) for good
    return PROPAGATION, "pick_fabric", "", {"branch": rng.choice(["Harrogate", "York"])}


def _upholstery_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's van day is off: every stage works, the app's check of the van's day against
    # the day agreed with the customer fails after the job
    return PROPAGATION, "book_van", "", {"day": rng.choice(["2027-03-06", "2027-03-26"])}


def _upholstery_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's customer account has two digits swapped: the deposit is refused for good
    return PROPAGATION, "take_deposit", "", {"account": rng.choice(["CU-40971", "CU-49017"])}


def _upholstery_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice busy inside one run or retry (the stage run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_UPHOLSTERY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _upholstery_busy(rng, count)
        if rng.random() < 0.5
        else [{"kind": "retry", "text": t} for t in _upholstery_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _upholstery_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the swatch catalogue answers 4-9 pages; a bolt with enough metres is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _upholstery_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the flammability test is RUNNING 3-8 reads, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _upholstery_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the job sheet's joiner's bench is out of use that week: rework names another bench; the
    # next Jenkinsfile books there and the rest works
    return "healthy", "", PROPAGATION, {"bench_to": rng.choice(["J3", "J4"])}


def _upholstery_external_breakdown(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every stage worked and the van day checked, the van breaks down on its round and the
    # customer cancels during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- cooperage: an oak-barrel cooperage filling a distillery's order, an Agno Team (a planner
# member answering a Nextflow DSL2 workflow, a cooper member run per process attempt) under
# MLflow's Agno autologging. Services fail with Nextflow-style exit statuses: ``75`` (tempfail:
# the model calls again ``after`` the time named, same run), ``143`` (the task was killed: the
# app runs the process again), ``65`` with ``(use k=v)`` (a new workflow) or ``77`` (final).
_COOPERAGE_TEXTS = (
    "the stave jointer on line {k} lost its fence after {n} staves",
    "the toasting kiln's thermocouple {k} read {n} C off",
    "the yard's stock terminal timed out after {n} ms",
    "hoop press {k} dropped to {n} kPa",
    "the haulier's dispatch desk queue is {n} jobs long",
    "the distillery's purchase ledger is closing batch {n}",
    "the cooperage's compressor {k} is down for {n} minutes",
)
_COOPERAGE_STEP = {
    "select_staves": "staves",
    "toast_barrel": "toast",
    "leak_test": "leak",
    "book_pickup": "pickup",
    "charge_order": "payment",
    "notify_distillery": "notice",
}
_COOPERAGE_TIMED = ["toast_barrel", "book_pickup", "charge_order", "notify_distillery"]


def _cooperage_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_COOPERAGE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _cooperage_tempfails(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each exit 75 names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"exit": "75", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_cooperage_texts(rng, count), minutes, strict=True)
    ]


def _cooperage_final(rng: random.Random) -> dict[str, str]:
    return {"exit": "77", "text": _cooperage_texts(rng, 1)[0]}


def _cooperage_loop_process(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # exit 143 again and again (varying texts): the app runs the process again each time; the
    # last answer is exit 77
    tool = rng.choice(sorted(_COOPERAGE_STEP))
    killed = [{"exit": "143", "text": t} for t in _cooperage_texts(rng, rng.randint(4, 6))]
    faults = [*killed, _cooperage_final(rng)]
    return RUNAWAY, _COOPERAGE_STEP[tool], "", {"tool": tool, "faults": faults}


def _cooperage_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one cooper run: exit 75 again and again, each naming another time the model calls
    # again after; the last answer is exit 77
    tool = rng.choice(_COOPERAGE_TIMED)
    faults = [*_cooperage_tempfails(rng, rng.randint(4, 6)), _cooperage_final(rng)]
    return RUNAWAY, _COOPERAGE_STEP[tool], "", {"tool": tool, "faults": faults}


def _cooperage_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the haulier's pickup fails under every workflow: exit 143 (run again), then exit 65 naming
    # another haulage depot (a new workflow), 3-4 workflows; the last exit 77
    plans = rng.randint(3, 4)
    depots = rng.sample(["Elgin depot", "Keith depot", "Dufftown depot", "Huntly depot"], plans - 1)
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _cooperage_texts(rng, 2)
        faults.append({"exit": "143", "text": again})
        if i < plans - 1:
            faults.append({"exit": "65", "text": moved, "hint": f"depot={depots[i]}"})
        else:
            faults.append({"exit": "77", "text": moved})
    return RUNAWAY, "pickup", "", {"tool": "book_pickup", "faults": faults, "depots": depots}


def _cooperage_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the leak (pressure) test stays RUNNING: the cooper reads it until it reports stalled
    return RUNAWAY, "leak", "", {"stuck": True}


def _cooperage_wrong_forest(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the head cooper's note names another forest: a stave lot from there is found; the
    # toasting kiln, booked for the distillery's spec, refuses it for good
    return PROPAGATION, "staves", "", {"forest": rng.choice(["Limousin", "Vosges", "Bertranges"])}


def _cooperage_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's collection day is off: every process works, the app's check of the pickup
    # against the purchase order's delivery day fails after the order
    return (
        PROPAGATION,
        "pickup",
        "",
        {"day": rng.choice(["2027-05-04", "2027-05-11", "2027-05-24"])},
    )


def _cooperage_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's distillery account has two digits swapped: the charge exits 77 for good
    return PROPAGATION, "payment", "", {"account": rng.choice(["GA-61804", "GA-16840", "GA-68140"])}


def _cooperage_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice exit 75 inside one run or exit 143 (the process run again); the call after
    # the time named, or the next attempt, works
    tool = rng.choice(_COOPERAGE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _cooperage_tempfails(rng, count)
        if rng.random() < 0.5
        else [{"exit": "143", "text": t} for t in _cooperage_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _cooperage_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the timber yard's stock list answers 4-9 pages; a lot with enough staves is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _cooperage_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the leak test is RUNNING 3-8 reads, then passes
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _cooperage_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's toasting kiln is down for relining: exit 65 names another kiln; the next
    # workflow toasts there and the rest works
    return "healthy", "", PROPAGATION, {"kiln_to": rng.choice(["kiln 3", "kiln 4"])}


def _cooperage_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every process worked and the pickup checked, a snowstorm closes the road to the
    # distillery during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- playhouse: a community theatre's production desk staging a touring play's one-night
# booking, Semantic Kernel (a planner ChatCompletionAgent answering a Graphviz DOT digraph, a
# crew ChatCompletionAgent with a kernel-function plugin run per step attempt) traced into MLflow.
# Services raise stage-call faults: ``[HOLD]`` (the model calls again ``after`` the time named,
# same run), ``[RESET]`` (the app runs the step again), ``[REBLOCK]`` with ``(use k=v)`` (a new
# digraph) or ``[STRIKE]`` (final).
_PLAYHOUSE_TEXTS = (
    "the fly tower's counterweight {k} jammed at {n} kg",
    "the prop store's inventory terminal timed out after {n} ms",
    "the scene dock door {k} is stuck {n} cm open",
    "the fire office's queue is {n} requests long",
    "the box-office ledger is closing batch {n}",
    "dimmer rack {k} tripped after {n} seconds",
    "the haulage desk's phone line {k} dropped after {n} seconds",
)
_PLAYHOUSE_STEP = {
    "find_set_piece": "set",
    "book_rehearsal": "rehearsal",
    "fire_inspection": "inspection",
    "book_truck": "truck",
    "invoice_company": "invoice",
    "mail_stage_manager": "notice",
}
_PLAYHOUSE_TIMED = ["book_rehearsal", "book_truck", "invoice_company", "mail_stage_manager"]


def _playhouse_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_PLAYHOUSE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _playhouse_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each HOLD names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 22 * 60, 5), count)
    return [
        {"call": "HOLD", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_playhouse_texts(rng, count), minutes, strict=True)
    ]


def _playhouse_strike(rng: random.Random) -> dict[str, str]:
    return {"call": "STRIKE", "text": _playhouse_texts(rng, 1)[0]}


def _playhouse_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RESET again and again (varying texts): the app runs the step again each time; the last
    # answer is STRIKE
    tool = rng.choice(sorted(_PLAYHOUSE_STEP))
    resets = [{"call": "RESET", "text": t} for t in _playhouse_texts(rng, rng.randint(4, 6))]
    faults = [*resets, _playhouse_strike(rng)]
    return RUNAWAY, _PLAYHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _playhouse_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one crew run: HOLD again and again, each naming another time the model calls again
    # after; the last answer is STRIKE
    tool = rng.choice(_PLAYHOUSE_TIMED)
    faults = [*_playhouse_holds(rng, rng.randint(4, 6)), _playhouse_strike(rng)]
    return RUNAWAY, _PLAYHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _playhouse_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the truck fails under every digraph: RESET (run again), then REBLOCK naming another depot
    # (a new digraph), 3-4 digraphs; the last STRIKE
    plans = rng.randint(3, 4)
    depots = rng.sample(
        ["Canal scene dock", "North yard", "Mill Lane depot", "Quay store"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _playhouse_texts(rng, 2)
        faults.append({"call": "RESET", "text": again})
        if i < plans - 1:
            faults.append({"call": "REBLOCK", "text": moved, "hint": f"depot={depots[i]}"})
        else:
            faults.append({"call": "STRIKE", "text": moved})
    return RUNAWAY, "truck", "", {"tool": "book_truck", "faults": faults, "depots": depots}


def _playhouse_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fire inspection stays PENDING: the crew reads it until it reports stalled
    return RUNAWAY, "inspection", "", {"stuck": True}


def _playhouse_wrong_piece(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the stage manager's note names another show's piece: the prop store finds it (filed under
    # that show); the rehearsal hall, held for the touring play, refuses it for good
    piece = rng.choice(["Seagull jetty", "Arcadia garden wall", "Godot tree"])
    return PROPAGATION, "set", "", {"piece": piece}


def _playhouse_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's get-in day is off: every step works, the app's check of the truck against the
    # booking's night fails after the stage manager is mailed
    return PROPAGATION, "truck", "", {"day": rng.choice(["2027-06-01", "2027-06-08", "2027-06-21"])}


def _playhouse_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the invoice is struck for good
    return PROPAGATION, "invoice", "", {"account": rng.choice(["HL-30571", "HL-03517", "HL-35017"])}


def _playhouse_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice HOLD inside one run or RESET (the step run again); the call after the time
    # named, or the next attempt, works
    tool = rng.choice(_PLAYHOUSE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _playhouse_holds(rng, count)
        if rng.random() < 0.5
        else [{"call": "RESET", "text": t} for t in _playhouse_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _playhouse_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the prop store's inventory answers 4-9 pages; the piece is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _playhouse_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fire inspection is PENDING 3-8 reads, then passes
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _playhouse_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the booking's rehearsal hall is being re-rigged: REBLOCK names another hall; the next
    # digraph books there and the rest works
    return "healthy", "", PROPAGATION, {"hall_to": rng.choice(["Studio C", "Rehearsal Room 2"])}


def _playhouse_external_blackout(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the truck checked, a power cut blacks out the theatre during
    # the get-in and the company cancels: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- infirmary: a veterinary clinic's surgery desk scheduling a dog's knee operation, the
# Anthropic Python SDK by hand (a planner messages.create call answering an iCalendar of VTODOs,
# an executor tool-use loop per task attempt) under MLflow's Anthropic autologging. Services fail
# with iTIP request-status codes: ``5.1`` (service unavailable: the model calls again ``at`` the
# time named, same loop), ``5.2`` (the app runs the task again), ``4.0`` with ``(use k=v)`` (a new
# calendar) or ``3.8`` (final).
_INFIRMARY_TEXTS = (
    "the supplier's catalogue gateway timed out after {n} ms",
    "theatre {k}'s diary is locked by a booking in progress ({n} s)",
    "the lab courier's manifest {n} is still open",
    "the anaesthetists' rota server returned HTTP 50{k} (ref {n})",
    "the practice ledger is posting batch {n}",
    "the clinic's mail relay deferred message {n}",
    "the CalDAV server {k} is resyncing {n} events",
)
_INFIRMARY_STEP = {
    "find_implant": "implant",
    "book_theatre": "theatre",
    "order_blood_panel": "bloods",
    "book_anaesthetist": "anaesthetist",
    "invoice_owner": "invoice",
    "mail_referring_vet": "referral",
}
_INFIRMARY_TIMED = ["book_theatre", "book_anaesthetist", "invoice_owner", "mail_referring_vet"]


def _infirmary_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_INFIRMARY_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 4))
        for _ in range(count)
    ]


def _infirmary_unavailable(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each 5.1 names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 19 * 60, 5), count)
    return [
        {"code": "5.1", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_infirmary_texts(rng, count), minutes, strict=True)
    ]


def _infirmary_final(rng: random.Random) -> dict[str, str]:
    return {"code": "3.8", "text": _infirmary_texts(rng, 1)[0]}


def _infirmary_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # 5.2 again and again (varying texts): the app runs the task again each time; the last
    # answer is 3.8
    tool = rng.choice(sorted(_INFIRMARY_STEP))
    again = [{"code": "5.2", "text": t} for t in _infirmary_texts(rng, rng.randint(4, 6))]
    faults = [*again, _infirmary_final(rng)]
    return RUNAWAY, _INFIRMARY_STEP[tool], "", {"tool": tool, "faults": faults}


def _infirmary_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor loop: 5.1 again and again, each naming another time the model calls
    # again at; the last answer is 3.8
    tool = rng.choice(_INFIRMARY_TIMED)
    faults = [*_infirmary_unavailable(rng, rng.randint(4, 6)), _infirmary_final(rng)]
    return RUNAWAY, _INFIRMARY_STEP[tool], "", {"tool": tool, "faults": faults}


def _infirmary_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the anaesthetist's booking fails under every calendar: 5.2 (run again), then 4.0 naming
    # another rota (a new calendar), 3-4 calendars; the last 3.8
    plans = rng.randint(3, 4)
    rotas = rng.sample(
        ["Northgate locum pool", "Severn anaesthesia cover", "Vetcover nights", "Ashby rota"],
        plans - 1,
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _infirmary_texts(rng, 2)
        faults.append({"code": "5.2", "text": again})
        if i < plans - 1:
            faults.append({"code": "4.0", "text": moved, "hint": f"rota={rotas[i]}"})
        else:
            faults.append({"code": "3.8", "text": moved})
    return (
        RUNAWAY,
        "anaesthetist",
        "",
        {"tool": "book_anaesthetist", "faults": faults, "rotas": rotas},
    )


def _infirmary_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the pre-op blood panel stays PENDING: the executor reads it until it reports it stalled
    return RUNAWAY, "bloods", "", {"stuck": True}


def _infirmary_wrong_plate(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the surgeon's note names another plate size: a plate of that size is reserved; the
    # theatre's kit list, checked against the surgical plan, refuses it for good
    return PROPAGATION, "implant", "", {"plate": rng.choice(["2.7 mm TPLO", "3.5 mm broad TPLO"])}


def _infirmary_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's operation day is off: the theatre (the first task taking the day) and every
    # later task work, the app's check of the slot against the referral's day fails after
    return (
        PROPAGATION,
        "theatre",
        "",
        {"day": rng.choice(["2027-06-01", "2027-06-18", "2027-07-11"])},
    )


def _infirmary_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's owner account has two digits swapped: the invoice answers 3.8 for good
    return PROPAGATION, "invoice", "", {"account": rng.choice(["OK-39017", "OK-30971", "OK-03917"])}


def _infirmary_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice 5.1 inside one loop or 5.2 (the task run again); the call at the time
    # named, or the next attempt, works
    tool = rng.choice(_INFIRMARY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _infirmary_unavailable(rng, count)
        if rng.random() < 0.5
        else [{"code": "5.2", "text": t} for t in _infirmary_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _infirmary_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the implant supplier's catalogue answers 4-9 pages; the plate in stock is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _infirmary_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the blood panel is PENDING 3-8 reads, then reported
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _infirmary_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the referral's theatre is closed for its service: 4.0 names another theatre; the next
    # calendar books it and the rest works
    return "healthy", "", PROPAGATION, {"theatre_to": rng.choice(["Theatre 2", "Theatre 3"])}


def _infirmary_external_breakfast(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the slot checked, the dog eats a dropped breakfast on the ward
    # during the watch and the surgeon postpones: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- manuscript: a university library's interlibrary-loan desk obtaining a rare manuscript's
# facsimile, AG2 1.2.1 (a planner Agent answering a CSV table, an executor Agent conversation per
# step attempt) under AG2's own telemetry on MLflow's tracer provider. Services raise ISO
# 18626-style exceptions: ``RetryPossible`` (the model calls again ``after`` the time named, same
# conversation), ``ServiceInterrupted`` (the app runs the step again), ``Conditional`` with
# ``(use k=v)`` (a new table) or ``Unfilled`` (final).
_MANUSCRIPT_TEXTS = (
    "the union catalogue's Z39.50 gateway timed out after {n} ms",
    "the courier's dispatch board shows {n} rare-books jobs ahead",
    "the conservator's humidity logger {k} read {n} per mille off",
    "the reading room's booking system is reindexing shelf {n}",
    "the department's cost centre is closing batch {n}",
    "the mail relay {k} deferred {n} messages",
    "the ILL broker's request queue {k} is {n} requests long",
)
_MANUSCRIPT_STEP = {
    "search_union_catalogue": "holding",
    "book_courier": "courier",
    "start_conservation_check": "conservation",
    "reserve_reading_room": "reading_room",
    "charge_department": "charge",
    "mail_researcher": "notice",
}
_MANUSCRIPT_TIMED = ["book_courier", "reserve_reading_room", "charge_department", "mail_researcher"]


def _manuscript_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_MANUSCRIPT_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _manuscript_retries(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each RetryPossible names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 17 * 60, 5), count)
    return [
        {"kind": "retry", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_manuscript_texts(rng, count), minutes, strict=True)
    ]


def _manuscript_final(rng: random.Random) -> dict[str, str]:
    return {"kind": "unfilled", "text": _manuscript_texts(rng, 1)[0]}


def _manuscript_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # ServiceInterrupted again and again (varying texts): the app runs the step again each
    # time; the last answer is Unfilled
    tool = rng.choice(sorted(_MANUSCRIPT_STEP))
    dropped = [
        {"kind": "interrupted", "text": t} for t in _manuscript_texts(rng, rng.randint(4, 6))
    ]
    faults = [*dropped, _manuscript_final(rng)]
    return RUNAWAY, _MANUSCRIPT_STEP[tool], "", {"tool": tool, "faults": faults}


def _manuscript_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: RetryPossible again and again, each naming another time
    # the model calls again after; the last answer is Unfilled
    tool = rng.choice(_MANUSCRIPT_TIMED)
    faults = [*_manuscript_retries(rng, rng.randint(4, 6)), _manuscript_final(rng)]
    return RUNAWAY, _MANUSCRIPT_STEP[tool], "", {"tool": tool, "faults": faults}


def _manuscript_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the courier booking fails under every plan: ServiceInterrupted (run again), then
    # Conditional naming another courier (a new table), 3-4 tables; the last Unfilled
    plans = rng.randint(3, 4)
    couriers = rng.sample(
        ["Artcare fine-art van", "Hasenkamp museum shuttle", "Kortrijk book courier",
         "Brussels libraries van"],
        plans - 1,
    )  # fmt: skip
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _manuscript_texts(rng, 2)
        faults.append({"kind": "interrupted", "text": again})
        if i < plans - 1:
            faults.append({"kind": "conditional", "text": moved, "hint": f"courier={couriers[i]}"})
        else:
            faults.append({"kind": "unfilled", "text": moved})
    return RUNAWAY, "courier", "", {"tool": "book_courier", "faults": faults}


def _manuscript_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the conservation check stays IN_PROGRESS: the runner reads it until it answers pending
    return RUNAWAY, "conservation", "", {"stuck": True}


def _manuscript_wrong_library(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the subject librarian's note names another library: a holding there is found; the
    # courier, booked for the request's lending library, refuses it for good
    library = rng.choice(["Leiden University Library", "Bodleian Library", "KU Leuven Libraries"])
    return PROPAGATION, "holding", "", {"library": library}


def _manuscript_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's reading day is off: every step works, the app's check of the reading-room
    # booking against the request's day fails after the request
    return (
        PROPAGATION,
        "reading_room",
        "",
        {"day": rng.choice(["2027-06-01", "2027-06-18", "2027-08-06"])},
    )


def _manuscript_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's department account has two digits swapped: the charge is Unfilled for good
    account = rng.choice(["HIST-30471", "HIST-03417", "HIST-34017"])
    return PROPAGATION, "charge", "", {"account": account}


def _manuscript_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice RetryPossible inside one conversation or ServiceInterrupted (the step run
    # again); the call after the time named, or the next attempt, works
    tool = rng.choice(_MANUSCRIPT_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _manuscript_retries(rng, count)
        if rng.random() < 0.5
        else [{"kind": "interrupted", "text": t} for t in _manuscript_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _manuscript_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the union catalogue answers 4-9 pages of near matches; the holding is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _manuscript_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the conservation check is IN_PROGRESS 3-8 reads, then clears
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _manuscript_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the request's reading room is closed for its fire inspection: Conditional names another
    # room; the next table reserves there and the rest works
    room = rng.choice(["Manuscripts Seminar Room", "Rare Books Study Room"])
    return "healthy", "", PROPAGATION, {"room_to": room}


def _manuscript_external_strike(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the booking checked, a port strike halts the courier during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- vineyard: a wine estate's harvest desk getting one parcel's grapes picked, pressed and a
# tank booked, the OpenAI Python SDK by hand (a planner call answering a protobuf text-format
# plan, an executor conversation with function calling per step attempt) under OpenLLMetry's
# OpenAI instrumentor and the app's own OpenTelemetry spans. Services fail with gRPC status
# codes: ``UNAVAILABLE`` (the model calls again ``after`` the time named, same conversation),
# ``ABORTED`` (the app runs the step again), ``FAILED_PRECONDITION`` with ``(use k=v)`` (a new
# plan) or ``INTERNAL`` (final).
_VINEYARD_TEXTS = (
    "the press hall's PLC {k} timed out after {n} ms",
    "the picking-crew app's sync is {n} records behind",
    "the lab's autoanalyser {k} is recalibrating with {n} samples queued",
    "the cellar's tank-management server dropped {n} connections",
    "the estate's ERP is closing batch {n}",
    "the mail gateway {k} deferred {n} messages",
    "the weighbridge terminal {k} is {n} tickets behind",
)
_VINEYARD_STEP = {
    "schedule_pick": "pick",
    "book_press": "press",
    "order_must_analysis": "analysis",
    "book_tank": "tank",
    "charge_buyer": "charge",
    "mail_buyer": "notice",
}
_VINEYARD_TIMED = ["book_press", "book_tank", "charge_buyer", "mail_buyer"]


def _vineyard_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_VINEYARD_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _vineyard_unavailable(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each UNAVAILABLE names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 19 * 60, 5), count)
    return [
        {"code": "UNAVAILABLE", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_vineyard_texts(rng, count), minutes, strict=True)
    ]


def _vineyard_final(rng: random.Random) -> dict[str, str]:
    return {"code": "INTERNAL", "text": _vineyard_texts(rng, 1)[0]}


def _vineyard_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # ABORTED again and again (varying texts): the app runs the step again each time; the last
    # answer is INTERNAL
    tool = rng.choice(sorted(_VINEYARD_STEP))
    aborted = [{"code": "ABORTED", "text": t} for t in _vineyard_texts(rng, rng.randint(4, 6))]
    faults = [*aborted, _vineyard_final(rng)]
    return RUNAWAY, _VINEYARD_STEP[tool], "", {"tool": tool, "faults": faults}


def _vineyard_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: UNAVAILABLE again and again, each naming another time
    # the model calls again after; the last answer is INTERNAL
    tool = rng.choice(_VINEYARD_TIMED)
    faults = [*_vineyard_unavailable(rng, rng.randint(4, 6)), _vineyard_final(rng)]
    return RUNAWAY, _VINEYARD_STEP[tool], "", {"tool": tool, "faults": faults}


def _vineyard_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the tank booking fails under every plan: ABORTED (run again), then FAILED_PRECONDITION
    # naming another tank (a new plan), 3-4 plans; the last INTERNAL
    plans = rng.randint(3, 4)
    tanks = rng.sample(["tank 12", "tank 15", "tank 21", "tank 4"], plans - 1)
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _vineyard_texts(rng, 2)
        faults.append({"code": "ABORTED", "text": again})
        if i < plans - 1:
            faults.append(
                {"code": "FAILED_PRECONDITION", "text": moved, "hint": f"tank={tanks[i]}"}
            )
        else:
            faults.append({"code": "INTERNAL", "text": moved})
    return RUNAWAY, "tank", "", {"tool": "book_tank", "faults": faults, "tanks": tanks}


def _vineyard_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the must analysis stays RUNNING: the executor reads it until it reports the deadline
    return RUNAWAY, "analysis", "", {"stuck": True}


def _vineyard_wrong_parcel(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vineyard manager's note names another parcel: its grapes are picked; the press, whose
    # cycle is booked for the contract's parcel, refuses the lot for good
    parcel = rng.choice(["Les Combettes", "Champ Rond", "La Vigne Haute"])
    return PROPAGATION, "pick", "", {"parcel": parcel}


def _vineyard_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's fill day is off: every step works, the app's check of the tank booking against
    # the contract's fill day fails after the errand
    return (
        PROPAGATION,
        "tank",
        "",
        {"day": rng.choice(["2027-09-04", "2027-09-21", "2027-09-24"])},
    )


def _vineyard_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's buyer account has two digits swapped: the charge is NOT_FOUND for good
    account = rng.choice(["MV-57206", "MV-25706", "MV-52760"])
    return PROPAGATION, "charge", "", {"account": account}


def _vineyard_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice UNAVAILABLE inside one conversation or ABORTED (the step run again); the
    # call after the time named, or the next attempt, works
    tool = rng.choice(_VINEYARD_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _vineyard_unavailable(rng, count)
        if rng.random() < 0.5
        else [{"code": "ABORTED", "text": t} for t in _vineyard_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _vineyard_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the picking-crew roster answers 4-9 pages of booked crews; a free crew is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _vineyard_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the must analysis is RUNNING 3-8 reads, then reports
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _vineyard_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the contract's press is down for a membrane change: FAILED_PRECONDITION names another
    # press; the next plan presses there and the rest works
    return "healthy", "", PROPAGATION, {"press_to": rng.choice(["press 3", "press 4"])}


def _vineyard_external_outage(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the tank checked, a storm cuts the cellar's power during the
    # watch; the tank's cooling fails and the buyer refuses the warm juice: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- tailor: a bespoke tailor's order desk making a wedding suit, the openai client by hand (a
# planner call whose structured output is a pydantic Plan, an executor conversation with function
# calling per step attempt) under OpenInference's OpenAI instrumentor. Services answer workroom
# faults: ``busy`` (the model calls again ``after`` the time named, same conversation),
# ``dropped`` (the app runs the step again), ``revise`` with ``(use k=v)`` (a new plan) or
# ``refused`` (final).
_TAILOR_TEXTS = (
    "the mill's warehouse terminal timed out after {n} ms",
    "cutting table {k} is {n} minutes behind",
    "the fitting-room diary is locked by branch {k} for {n} seconds",
    "the courier's depot scanner {k} lost {n} parcels from its manifest",
    "the accounts ledger is closing batch {n}",
    "the shop's mail relay {k} deferred {n} messages",
    "the steam press on bench {k} tripped after {n} seconds",
)
_TAILOR_STEP = {
    "find_cloth": "cloth",
    "book_cutter": "cut",
    "start_fitting": "fitting",
    "book_courier": "courier",
    "invoice_account": "invoice",
    "mail_customer": "notice",
}
_TAILOR_TIMED = ["book_cutter", "book_courier", "invoice_account", "mail_customer"]


def _tailor_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_TAILOR_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _tailor_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each busy answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(9 * 60, 18 * 60, 5), count)
    return [
        {"kind": "busy", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_tailor_texts(rng, count), minutes, strict=True)
    ]


def _tailor_refused(rng: random.Random) -> dict[str, str]:
    return {"kind": "refused", "text": _tailor_texts(rng, 1)[0]}


def _tailor_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # dropped again and again (varying texts): the app runs the step again each time; the last
    # answer is refused
    tool = rng.choice(sorted(_TAILOR_STEP))
    dropped = [{"kind": "dropped", "text": t} for t in _tailor_texts(rng, rng.randint(4, 6))]
    faults = [*dropped, _tailor_refused(rng)]
    return RUNAWAY, _TAILOR_STEP[tool], "", {"tool": tool, "faults": faults}


def _tailor_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: busy again and again, each naming another time the model
    # calls again after; the last answer is refused
    tool = rng.choice(_TAILOR_TIMED)
    faults = [*_tailor_busy(rng, rng.randint(4, 6)), _tailor_refused(rng)]
    return RUNAWAY, _TAILOR_STEP[tool], "", {"tool": tool, "faults": faults}


def _tailor_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the courier booking fails under every plan: dropped (run again), then revise naming another
    # courier branch (a new plan), 3-4 plans; the last refused
    plans = rng.randint(3, 4)
    branches = rng.sample(
        ["Soho branch", "Marylebone branch", "Holborn branch", "Clerkenwell branch"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _tailor_texts(rng, 2)
        faults.append({"kind": "dropped", "text": again})
        if i < plans - 1:
            faults.append({"kind": "revise", "text": moved, "hint": f"branch={branches[i]}"})
        else:
            faults.append({"kind": "refused", "text": moved})
    return RUNAWAY, "courier", "", {"tool": "book_courier", "faults": faults, "branches": branches}


def _tailor_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the baste fitting stays AWAITING_ALTERATIONS: the executor reads it until it gives up
    return RUNAWAY, "fitting", "", {"stuck": True}


def _tailor_wrong_mill(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the head cutter's note names another mill: a cloth lot from there is found; the cutter,
    # booked for the order's cloth from the order's mill, refuses it for good
    mill = rng.choice(["Lanark Mill", "Biella Vitale Mill", "Kirkburton Mill"])
    return PROPAGATION, "cloth", "", {"mill": mill}


def _tailor_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's delivery day is off: every step works, the app's check of the courier booking
    # against the order's delivery day fails after the order
    return (
        PROPAGATION,
        "courier",
        "",
        {"day": rng.choice(["2027-06-02", "2027-06-16", "2027-07-09"])},
    )


def _tailor_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's customer account has two digits swapped: the invoice is refused for good
    return PROPAGATION, "invoice", "", {"account": rng.choice(["RE-48231", "RE-84213", "RE-42813"])}


def _tailor_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice busy inside one conversation or dropped (the step run again); the call after
    # the time named, or the next attempt, works
    tool = rng.choice(_TAILOR_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _tailor_busy(rng, count)
        if rng.random() < 0.5
        else [{"kind": "dropped", "text": t} for t in _tailor_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _tailor_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mill's stock list answers 4-9 pages of short ends; a bolt long enough is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _tailor_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the baste fitting awaits alterations 3-8 reads, then is signed off
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _tailor_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's cutter is away at the cloth fair: revise names another cutter; the next plan
    # books that cutter and the rest works
    return "healthy", "", PROPAGATION, {"cutter_to": rng.choice(["Ms. Lindqvist", "Mr. Daventry"])}


def _tailor_external_flood(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the courier checked, the wedding venue floods during the watch
    # and the couple postpones: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- winepress: a winery's crush desk booking a grower's harvest intake, Pydantic AI (a planner
# Agent whose structured output holds a BPMN 2.0 process, a cellarhand Agent run per service-task
# attempt) under MLflow's Pydantic AI autologging. Services fail with Zeebe-style job errors:
# ``BUSY`` (the model calls again ``after`` the time named, same run), ``JOB_TIMEOUT`` (the app
# runs the task again), ``BPMN_ERROR`` with ``(use k=v)`` (a new process) or ``INCIDENT`` (final).
_WINEPRESS_TEXTS = (
    "the sorting table on line {k} jammed after {n} bins",
    "the lab's refractometer {k} drifted {n} hundredths off",
    "the block register timed out after {n} ms",
    "press {k}'s membrane held only {n} kPa",
    "the trucking dispatcher's queue is {n} loads long",
    "the grower ledger is closing batch {n}",
    "the crush pad's chiller {k} is down for {n} minutes",
)
_WINEPRESS_STEP = {
    "select_block": "block",
    "reserve_press": "press",
    "brix_test": "brix",
    "book_truck": "truck",
    "charge_grower": "charge",
    "mail_cellar_master": "notice",
}
_WINEPRESS_TIMED = ["reserve_press", "book_truck", "charge_grower", "mail_cellar_master"]


def _winepress_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_WINEPRESS_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _winepress_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each BUSY names another time: the model calls again with different arguments
    minutes = rng.sample(range(5 * 60, 19 * 60, 5), count)
    return [
        {"code": "BUSY", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_winepress_texts(rng, count), minutes, strict=True)
    ]


def _winepress_incident(rng: random.Random) -> dict[str, str]:
    return {"code": "INCIDENT", "text": _winepress_texts(rng, 1)[0]}


def _winepress_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # JOB_TIMEOUT again and again (varying texts): the app runs the task again each time; the
    # last answer is an INCIDENT
    tool = rng.choice(sorted(_WINEPRESS_STEP))
    timeouts = [
        {"code": "JOB_TIMEOUT", "text": t} for t in _winepress_texts(rng, rng.randint(4, 6))
    ]
    faults = [*timeouts, _winepress_incident(rng)]
    return RUNAWAY, _WINEPRESS_STEP[tool], "", {"tool": tool, "faults": faults}


def _winepress_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one cellarhand run: BUSY again and again, each naming another time the model calls
    # again after; the last answer is an INCIDENT
    tool = rng.choice(_WINEPRESS_TIMED)
    faults = [*_winepress_busy(rng, rng.randint(4, 6)), _winepress_incident(rng)]
    return RUNAWAY, _WINEPRESS_STEP[tool], "", {"tool": tool, "faults": faults}


def _winepress_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the truck fails under every process: JOB_TIMEOUT (run again), then BPMN_ERROR naming
    # another vineyard gate (a new process), 3-4 processes; the last an INCIDENT
    plans = rng.randint(3, 4)
    gates = rng.sample(
        [
            "Hollis Ridge south gate",
            "Hollis Ridge east gate",
            "Dry Creek Road gate",
            "Mill lane gate",
        ],
        plans - 1,
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _winepress_texts(rng, 2)
        faults.append({"code": "JOB_TIMEOUT", "text": again})
        if i < plans - 1:
            faults.append({"code": "BPMN_ERROR", "text": moved, "hint": f"gate={gates[i]}"})
        else:
            faults.append({"code": "INCIDENT", "text": moved})
    return RUNAWAY, "truck", "", {"tool": "book_truck", "faults": faults, "gates": gates}


def _winepress_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the Brix test stays SAMPLING: the cellarhand reads it until it reports stalled
    return RUNAWAY, "brix", "", {"stuck": True}


def _winepress_wrong_variety(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the grower's note names another variety: a block of it is found; the press slot, booked
    # for the grower's Pinot Noir programme, refuses it for good
    return PROPAGATION, "block", "", {"variety": rng.choice(["Chardonnay", "Syrah", "Zinfandel"])}


def _winepress_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pick day is off: every task works, the app's check of the truck against the
    # intake's pick day fails after the intake
    return (
        PROPAGATION,
        "truck",
        "",
        {"day": rng.choice(["2027-09-07", "2027-09-19", "2027-09-27"])},
    )


def _winepress_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's grower account has two digits swapped: the charge is an INCIDENT for good
    return PROPAGATION, "charge", "", {"account": rng.choice(["HR-40271", "HR-04217", "HR-42017"])}


def _winepress_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice BUSY inside one run or JOB_TIMEOUT (the task run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_WINEPRESS_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _winepress_busy(rng, count)
        if rng.random() < 0.5
        else [{"code": "JOB_TIMEOUT", "text": t} for t in _winepress_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _winepress_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the block register answers 4-9 pages; a block with enough tonnes is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _winepress_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the Brix test is SAMPLING 3-8 reads, then read
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _winepress_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the intake's press is down for a membrane change: BPMN_ERROR names another press; the
    # next process reserves it and the rest works
    return "healthy", "", PROPAGATION, {"press_to": rng.choice(["press 3", "press 4"])}


def _winepress_external_washout(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the truck checked, a washout closes the road to the winery
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- bookmobile: a county library's outreach desk running a bookmobile's week with Strands
# Agents (a planner Agent answering a Markdown table, an executor Agent run per step attempt)
# under MLflow's Strands autologging. Services fail with desk codes: ``HOLD`` (the model calls
# again ``at`` the time named, same invocation), ``RESTART`` (the app runs the step again),
# ``REROUTE`` with ``(use k=v)`` (a new plan) or ``DENIED`` (final).
_BOOKMOBILE_TEXTS = (
    "the depot's routing terminal timed out after {n} ms",
    "the stock room's picking scanner {k} lost its cradle after {n} items",
    "the fleet garage's lift {k} is locked out for {n} minutes",
    "the driver roster is being rebuilt for shift {n}",
    "the county ledger is closing batch {n}",
    "the library's mail relay deferred {n} messages",
    "the outreach desk's phone line {k} dropped after {n} seconds",
)
_BOOKMOBILE_STEP = {
    "plan_route": "route",
    "pull_stock": "pull",
    "inspect_vehicle": "inspection",
    "book_driver": "driver",
    "charge_budget": "charge",
    "mail_manager": "mail",
}
_BOOKMOBILE_TIMED = ["pull_stock", "book_driver", "charge_budget", "mail_manager"]


def _bookmobile_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BOOKMOBILE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _bookmobile_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each HOLD names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 18 * 60, 5), count)
    return [
        {"code": "HOLD", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_bookmobile_texts(rng, count), minutes, strict=True)
    ]


def _bookmobile_denied(rng: random.Random) -> dict[str, str]:
    return {"code": "DENIED", "text": _bookmobile_texts(rng, 1)[0]}


def _bookmobile_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RESTART again and again (varying texts): the app runs the step again each time; the last
    # answer is DENIED
    tool = rng.choice(sorted(_BOOKMOBILE_STEP))
    restarts = [{"code": "RESTART", "text": t} for t in _bookmobile_texts(rng, rng.randint(4, 6))]
    faults = [*restarts, _bookmobile_denied(rng)]
    return RUNAWAY, _BOOKMOBILE_STEP[tool], "", {"tool": tool, "faults": faults}


def _bookmobile_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor invocation: HOLD again and again, each naming another time the model
    # calls again at; the last answer is DENIED
    tool = rng.choice(_BOOKMOBILE_TIMED)
    faults = [*_bookmobile_holds(rng, rng.randint(4, 6)), _bookmobile_denied(rng)]
    return RUNAWAY, _BOOKMOBILE_STEP[tool], "", {"tool": tool, "faults": faults}


def _bookmobile_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the driver booking fails under every plan: RESTART (run again), then REROUTE naming
    # another depot (a new plan), 3-4 plans; the last DENIED
    plans = rng.randint(3, 4)
    depots = rng.sample(["Fenwick depot", "Marden depot", "Hallow depot", "Stoke depot"], plans - 1)
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _bookmobile_texts(rng, 2)
        faults.append({"code": "RESTART", "text": again})
        if i < plans - 1:
            faults.append({"code": "REROUTE", "text": moved, "hint": f"depot={depots[i]}"})
        else:
            faults.append({"code": "DENIED", "text": moved})
    return RUNAWAY, "driver", "", {"tool": "book_driver", "faults": faults, "depots": depots}


def _bookmobile_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vehicle inspection stays OPEN: the executor reads it until it reports stalled
    return RUNAWAY, "inspection", "", {"stuck": True}


def _bookmobile_wrong_depot(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the librarian's note names another depot: a route from there is planned; the stock pull,
    # loading at the week's depot, refuses it for good
    depot = rng.choice(["Fenwick depot", "Marden depot", "Hallow depot"])
    return PROPAGATION, "route", "", {"depot": depot}


def _bookmobile_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's round day is off: the driver is booked for it, every step works, the app's
    # check of the driver booking against the round day fails after the week
    day = rng.choice(["2027-05-04", "2027-05-12", "2027-05-18"])
    return PROPAGATION, "driver", "", {"day": day}


def _bookmobile_wrong_code(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget code has two characters swapped: the charge is DENIED for good
    code = rng.choice(["OUT-4417-BM", "OUT-7441-BM", "OTU-4471-BM"])
    return PROPAGATION, "charge", "", {"code": code}


def _bookmobile_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice HOLD inside one invocation or RESTART (the step run again); the call at the
    # time named, or the next attempt, works
    tool = rng.choice(_BOOKMOBILE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _bookmobile_holds(rng, count)
        if rng.random() < 0.5
        else [{"code": "RESTART", "text": t} for t in _bookmobile_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _bookmobile_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the depot's stop list answers 4-9 pages; the route comes with the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _bookmobile_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vehicle inspection is OPEN 3-8 reads, then passes
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _bookmobile_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the branch's stock room is shut for stocktake: REROUTE names another branch; the next plan
    # pulls from there and the rest works
    return (
        "healthy",
        "",
        PROPAGATION,
        {"branch_to": rng.choice(["Holloway Branch", "Kingsmead Branch"])},
    )


def _bookmobile_external_flood(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the booking checked, flood water closes a lane on the round:
    # not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- menagerie: a zoo's animal-transfer desk moving two red pandas, the OpenAI Agents SDK (a
# planner Agent answering an Airflow DAG file, a runner Agent run per task try) under MLflow's
# OpenAI autologging. Services raise Airflow-style exceptions: ``AirflowRescheduleException``
# (the model calls again ``after`` the time named, same run), ``AirflowException`` (up for retry:
# the app runs the task again), ``AirflowBadRequest`` with ``(use k=v)`` (a new DAG) or
# ``AirflowFailException`` (final).
_MENAGERIE_TEXTS = (
    "the keeper's inventory terminal timed out after {n} ms",
    "the CITES e-permitting portal returned gateway error {n}",
    "the vet lab's sample courier is {n} minutes late on round {k}",
    "van rota desk {k} has {n} bookings queued",
    "the zoo's finance ledger is closing batch {n}",
    "the mail relay deferred message {n} (queue {k})",
    "the animal-records database lock {k} held for {n} s",
)
_MENAGERIE_STEP = {
    "find_crate": "crate",
    "apply_cites_permit": "cites",
    "request_health_certificate": "vet",
    "book_van": "van",
    "invoice_partner": "invoice",
    "mail_curator": "mail",
}
_MENAGERIE_TIMED = ["apply_cites_permit", "book_van", "invoice_partner", "mail_curator"]


def _menagerie_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_MENAGERIE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _menagerie_reschedules(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each reschedule names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"kind": "AirflowRescheduleException", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_menagerie_texts(rng, count), minutes, strict=True)
    ]


def _menagerie_retries(rng: random.Random, count: int) -> list[dict[str, str]]:
    return [{"kind": "AirflowException", "text": t} for t in _menagerie_texts(rng, count)]


def _menagerie_final(rng: random.Random) -> dict[str, str]:
    return {"kind": "AirflowFailException", "text": _menagerie_texts(rng, 1)[0]}


def _menagerie_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # AirflowException again and again (varying texts): the app runs the task again each time;
    # the last answer is AirflowFailException
    tool = rng.choice(sorted(_MENAGERIE_STEP))
    faults = [*_menagerie_retries(rng, rng.randint(4, 6)), _menagerie_final(rng)]
    return RUNAWAY, _MENAGERIE_STEP[tool], "", {"tool": tool, "faults": faults}


def _menagerie_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one runner run: reschedule again and again, each naming another time the model calls
    # again after; the last answer is AirflowFailException
    tool = rng.choice(_MENAGERIE_TIMED)
    faults = [*_menagerie_reschedules(rng, rng.randint(4, 6)), _menagerie_final(rng)]
    return RUNAWAY, _MENAGERIE_STEP[tool], "", {"tool": tool, "faults": faults}


def _menagerie_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the van booking fails under every DAG: up for retry (run again), then a bad request naming
    # another van depot (a new DAG), 3-4 DAGs; the last AirflowFailException
    plans = rng.randint(3, 4)
    depots = rng.sample(
        ["Dunstable depot", "Luton depot", "Milton Keynes depot", "Bedford depot"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _menagerie_texts(rng, 2)
        faults.append({"kind": "AirflowException", "text": again})
        if i < plans - 1:
            faults.append(
                {"kind": "AirflowBadRequest", "text": moved, "hint": f"depot={depots[i]}"}
            )
        else:
            faults.append({"kind": "AirflowFailException", "text": moved})
    return RUNAWAY, "van", "", {"tool": "book_van", "faults": faults, "depots": depots}


def _menagerie_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the vet lab's certificate request stays pending: the runner reads it until the sensor
    # times out
    return RUNAWAY, "vet", "", {"stuck": True}


def _menagerie_wrong_taxon(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the keeper's note names another red panda subspecies (or the other genus' name): a crate
    # logged for it is found; the CITES permit, issued for the transfer's taxon, refuses it for
    # good
    taxa = ["Ailurus fulgens styani", "Ailurus styani", "Ailurus fulgens refulgens"]
    return PROPAGATION, "crate", "", {"taxon": rng.choice(taxa)}


def _menagerie_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's transfer day is off: every task works, the app's check of the van against the
    # partner's intake day fails after the curator is mailed
    return PROPAGATION, "van", "", {"day": rng.choice(["2027-06-02", "2027-06-16", "2027-06-19"])}


def _menagerie_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's partner account has two digits swapped: the invoice fails for good
    return (
        PROPAGATION,
        "invoice",
        "",
        {"account": rng.choice(["PZL-30471", "PZL-03417", "PZL-34017"])},
    )


def _menagerie_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a reschedule inside one run or up for retry (the task run again); the call
    # after the time named, or the next try, works
    tool = rng.choice(_MENAGERIE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _menagerie_reschedules(rng, count) if rng.random() < 0.5 else _menagerie_retries(rng, count)
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _menagerie_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the keeper's inventory answers 4-9 pages; a free crate is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _menagerie_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the certificate request is pending 3-8 reads, then issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _menagerie_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the transfer file's CITES office takes no applications this month: a bad request names
    # another office; the next DAG applies there and the rest works
    return "healthy", "", PROPAGATION, {"office_to": rng.choice(["APHA Carlisle", "APHA Leeds"])}


def _menagerie_external_border(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the van checked, a border post closes for an animal-health
    # alert during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- bakehouse: a wholesale bakery's order desk filling a hotel's weekend bread order, AutoGen
# AgentChat (a planner AssistantAgent answering a todo.txt file, a baker AssistantAgent with
# FunctionTools run per task attempt) under MLflow's AutoGen autologging. Services fail with
# desk codes: ``BUSY`` (the model calls again ``after`` the time named, same run), ``ABORTED``
# (the app runs the task again), ``CHANGE`` with ``(use k=v)`` (a new plan) or ``REFUSED`` (final).
_BAKEHOUSE_TEXTS = (
    "the spiral mixer on line {k} tripped after {n} kg",
    "deck oven {k}'s probe read {n} C off",
    "the mill's stock portal timed out after {n} ms",
    "proofing cabinet {k} dropped to {n} percent humidity",
    "the van dispatcher's queue is {n} jobs long",
    "the hotel's ledger is closing batch {n}",
    "the bakery's blast chiller {k} is down for {n} minutes",
)
_BAKEHOUSE_STEP = {
    "select_flour": "flour",
    "book_oven": "oven",
    "proof_check": "proof",
    "book_van": "van",
    "invoice_account": "invoice",
    "mail_chef": "mail",
}
_BAKEHOUSE_TIMED = ["book_oven", "book_van", "invoice_account", "mail_chef"]


def _bakehouse_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_BAKEHOUSE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _bakehouse_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each BUSY names another time: the model calls again with different arguments
    minutes = rng.sample(range(2 * 60, 20 * 60, 5), count)
    return [
        {"code": "BUSY", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_bakehouse_texts(rng, count), minutes, strict=True)
    ]


def _bakehouse_final(rng: random.Random) -> dict[str, str]:
    return {"code": "REFUSED", "text": _bakehouse_texts(rng, 1)[0]}


def _bakehouse_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # ABORTED again and again (varying texts): the app runs the task again each time; the last
    # answer is REFUSED
    tool = rng.choice(sorted(_BAKEHOUSE_STEP))
    aborted = [{"code": "ABORTED", "text": t} for t in _bakehouse_texts(rng, rng.randint(4, 6))]
    faults = [*aborted, _bakehouse_final(rng)]
    return RUNAWAY, _BAKEHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _bakehouse_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one baker run: BUSY again and again, each naming another time the model calls again
    # after; the last answer is REFUSED
    tool = rng.choice(_BAKEHOUSE_TIMED)
    faults = [*_bakehouse_busy(rng, rng.randint(4, 6)), _bakehouse_final(rng)]
    return RUNAWAY, _BAKEHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _bakehouse_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the van booking fails under every plan: ABORTED (run again), then CHANGE naming another
    # depot (a new plan), 3-4 plans; the last REFUSED
    plans = rng.randint(3, 4)
    depots = rng.sample(
        ["Ivry depot", "Orly depot", "Gennevilliers depot", "Bercy depot"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _bakehouse_texts(rng, 2)
        faults.append({"code": "ABORTED", "text": again})
        if i < plans - 1:
            faults.append({"code": "CHANGE", "text": moved, "hint": f"depot={depots[i]}"})
        else:
            faults.append({"code": "REFUSED", "text": moved})
    return RUNAWAY, "van", "", {"tool": "book_van", "faults": faults, "depots": depots}


def _bakehouse_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the proof check stays RISING: the baker reads it until it reports the check stalled
    return RUNAWAY, "proof", "", {"stuck": True}


def _bakehouse_wrong_mill(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hotel baker's note names another mill: a flour lot from there is found; the oven,
    # programmed for the order's flour, refuses it for good
    return (
        PROPAGATION,
        "flour",
        "",
        {"mill": rng.choice(["Minoterie Bourgeois", "Moulin Decollogne", "Grands Moulins"])},
    )


def _bakehouse_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's delivery day is off: every task works, the app's check of the van against the
    # order's delivery day fails after the chef is mailed
    return PROPAGATION, "van", "", {"day": rng.choice(["2027-06-04", "2027-06-12", "2027-05-29"])}


def _bakehouse_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's hotel account has two digits swapped: the invoice is REFUSED for good
    return PROPAGATION, "invoice", "", {"account": rng.choice(["HB-30571", "HB-35017", "HB-03517"])}


def _bakehouse_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice BUSY inside one run or ABORTED (the task run again); the call after the time
    # named, or the next attempt, works
    tool = rng.choice(_BAKEHOUSE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _bakehouse_busy(rng, count)
        if rng.random() < 0.5
        else [{"code": "ABORTED", "text": t} for t in _bakehouse_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _bakehouse_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mill's stock list answers 4-9 pages; a lot with enough flour is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _bakehouse_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the proof check is RISING 3-8 reads, then READY
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _bakehouse_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's oven is down for a new sole: CHANGE names another oven; the next plan bakes
    # there and the rest works
    return "healthy", "", PROPAGATION, {"oven_to": rng.choice(["oven 3", "oven 4"])}


def _bakehouse_external_closure(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the van checked, a burst water main closes the road to the
    # hotel during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- chorale: a chamber choir's concert-tour desk on DSPy (a ChainOfThought planner answering an
# Argo Workflows DAG, a ReAct task runner per task attempt) under MLflow's DSPy autologging.
# Services raise ``«marking» text`` faults: ``fermata`` (the model calls again ``after`` the time
# named), ``da capo`` (the app runs the task again), ``modulate`` with ``(use k=v)`` (a new
# workflow) or ``tacet`` (final).
_CHORALE_TEXTS = (
    "the booking office at {hall} is closed for a {n}-minute sound check",
    "the directory's mirror in {town} answered {n} stale rows",
    "dispatcher {k} at the coach depot is on another line",
    "the sponsor's finance desk queue is {n} invoices long",
    "the mailing gateway throttled batch {n}",
    "{hall}'s calendar is locked by the organist's booking for {n} minutes",
    "a tachograph upload for coach {k} is still running",
)
_CHORALE_HALLS = ("Thomaskirche", "Gewandhaus annexe", "Michaeliskirche", "Peterskirche")
_CHORALE_TASK = {
    "search_venues": "find-venue",
    "request_hold": "hold-venue",
    "book_coach": "book-coach",
    "invoice_sponsor": "invoice-sponsor",
    "notify_choir": "notify-choir",
}
_CHORALE_TIMED = ["request_hold", "book_coach", "invoice_sponsor", "notify_choir"]


def _chorale_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_CHORALE_TEXTS).format(
            hall=rng.choice(_CHORALE_HALLS),
            town=rng.choice(["Halle", "Jena", "Gera", "Zwickau"]),
            n=rng.randint(3, 400),
            k=rng.randint(2, 29),
        )
        for _ in range(count)
    ]


def _chorale_fermatas(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each fermata names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"kind": "fermata", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_chorale_texts(rng, count), minutes, strict=True)
    ]


def _chorale_tacet(rng: random.Random) -> dict[str, str]:
    return {"kind": "tacet", "text": _chorale_texts(rng, 1)[0]}


def _chorale_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # da capo again and again (varying texts), the app runs the task again each time; the last
    # answer is tacet
    tool = rng.choice(sorted(_CHORALE_TASK))
    again = [{"kind": "da-capo", "text": t} for t in _chorale_texts(rng, rng.randint(4, 6))]
    params = {"tool": tool, "faults": [*again, _chorale_tacet(rng)]}
    return RUNAWAY, _CHORALE_TASK[tool], "", params


def _chorale_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one ReAct run: fermata again and again, each naming another time the model calls
    # again after; the last answer is tacet
    tool = rng.choice(_CHORALE_TIMED)
    faults = [*_chorale_fermatas(rng, rng.randint(4, 6)), _chorale_tacet(rng)]
    return RUNAWAY, _CHORALE_TASK[tool], "", {"tool": tool, "faults": faults}


def _chorale_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the sponsor's invoice fails under every workflow: da capo (run again), then modulate
    # naming another of the sponsor's accounts (a new workflow), 3-4 workflows; the last tacet
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _chorale_texts(rng, 2)
        faults.append({"kind": "da-capo", "text": again})
        if i < plans - 1:
            accounts.append(f"SPN-{rng.randint(10000, 99999)}")
            faults.append({"kind": "modulate", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "tacet", "text": moved})
    params = {"tool": "invoice_sponsor", "faults": faults, "accounts": accounts}
    return RUNAWAY, "invoice-sponsor", "", params


def _chorale_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hall's booking office never confirms the hold: the runner reads it until it reports
    # Stalled
    return RUNAWAY, "hold-venue", "", {"stuck": True}


def _chorale_wrong_city(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the manager's note names another tour city: a hall there is found and held; the tour's
    # coach contract (one route) refuses the coach for good
    return PROPAGATION, "find-venue", "", {"city": rng.choice(["Dresden", "Erfurt"])}


def _chorale_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the manager's note has the concert day with a digit changed: every task works (the coach
    # follows the hold's date), the app's hold check against the itinerary fails
    return PROPAGATION, "hold-venue", "", {"date": rng.choice(["2027-05-04", "2027-05-17"])}


def _chorale_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the manager's note has the sponsor's account with two digits swapped: tacet for good
    account = rng.choice(["SPN-25817", "SPN-52871"])
    return PROPAGATION, "invoice-sponsor", "", {"sponsor_account": account}


def _chorale_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # fermata once or twice inside one run, or da capo once or twice (the task run again); the
    # call after the time named, or the next attempt, works
    tool = rng.choice(_CHORALE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _chorale_fermatas(rng, count)
        if rng.random() < 0.5
        else [{"kind": "da-capo", "text": t} for t in _chorale_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _chorale_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the venue directory answers 4-9 pages; a hall large enough is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _chorale_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the hold is Pending for 3-8 reads, then confirmed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _chorale_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every coach at the itinerary's depot is out on the day: modulate names another depot; the
    # next workflow hires there and the rest works
    depot = rng.choice(["Merseburg coach depot", "Leipzig-Nord coach depot"])
    return "healthy", "", PROPAGATION, {"depot_to": depot}


def _chorale_external_power(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the hold checked, a power cut closes the hall during the
    # ticketing watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 3)}


# --- mural: a borough arts office commissioning a street mural with AG2 1.x (a planner writing a
# work sheet of Python assignments, two tool-using executors asked once per step attempt) under
# AG2's own OpenTelemetry telemetry. Services raise painters' exceptions whose traceback AG2 hands
# the model as the tool result: ``WetPaint`` (``dry at HH:MM``: the model calls again after that
# time), ``RainedOff`` (the app runs the step again), ``Repaint`` (``use X instead of Y``: a new
# plan) or ``Whitewashed`` (final).
_MURAL_TEXTS = (
    "primer on the {place} wall is still tacky at {n}% humidity",
    "the {place} scaffold gang is {n} minutes behind on another job",
    "council planning desk has {n} applications ahead of this one",
    "a street-works permit on {place} blocks the pavement until {k} o'clock",
    "arts-fund terminal {c} cannot reach the borough ledger",
    "the lift depot's van {c} is stuck on the {place} ring road",
    "the franking machine jammed after {n} letters",
    "conservation officer for {place} is out on a listed-building visit",
)
_MURAL_PLACES = ("Dalston", "Clapton", "Homerton", "De Beauvoir", "Stamford Hill")
_MURAL_STEP = {
    "wall_registry": "survey_wall",
    "art_consent": "seek_consent",
    "lift_hire": "book_lift",
    "pay_fee": "pay_artist",
    "resident_letter": "notify_residents",
}
_MURAL_TIMED = ["art_consent", "lift_hire", "resident_letter"]


def _mural_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_MURAL_TEXTS).format(
            place=rng.choice(_MURAL_PLACES),
            n=rng.randint(11, 97),
            k=rng.randint(1, 9),
            c=rng.randint(100, 999),
        )
        for _ in range(count)
    ]


def _mural_wet(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each WetPaint names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 19 * 60, 5), count)
    return [
        {"kind": "WETPAINT", "hint": f"{m // 60:02d}:{m % 60:02d}", "text": t}
        for t, m in zip(_mural_texts(rng, count), minutes, strict=True)
    ]


def _mural_whitewashed(rng: random.Random) -> dict[str, str]:
    return {"kind": "WHITEWASHED", "text": _mural_texts(rng, 1)[0]}


def _mural_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RainedOff again and again (varying texts), the app runs the step again each time; the last
    # run is Whitewashed
    service = rng.choice(sorted(_MURAL_STEP))
    rained = [{"kind": "RAINEDOFF", "text": t} for t in _mural_texts(rng, rng.randint(4, 6))]
    errors = [*rained, _mural_whitewashed(rng)]
    return RUNAWAY, _MURAL_STEP[service], "", {"service": service, "errors": errors}


def _mural_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run: WetPaint again and again, each naming another time the model calls
    # again after; the last call is Whitewashed
    service = rng.choice(_MURAL_TIMED)
    errors = [*_mural_wet(rng, rng.randint(4, 6)), _mural_whitewashed(rng)]
    return RUNAWAY, _MURAL_STEP[service], "", {"service": service, "errors": errors}


def _mural_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the fee fails under every plan: RainedOff (run again), then Repaint naming another arts
    # fund (a new plan), 3-4 plans; the last Whitewashed
    plans = rng.randint(3, 4)
    errors: list[dict[str, str]] = []
    for i in range(plans):
        rained, moved = _mural_texts(rng, 2)
        errors.append({"kind": "RAINEDOFF", "text": rained})
        fund = f"ARTS-{rng.randint(10000, 99999)}"
        # the world writes the fund the refused call carried in for ``{old}``
        errors.append(
            {"kind": "REPAINT", "hint": f"use {fund} instead of {{old}}", "text": moved}
            if i < plans - 1
            else {"kind": "WHITEWASHED", "text": moved}
        )
    service = "pay_fee"
    return RUNAWAY, _MURAL_STEP[service], "", {"service": service, "errors": errors}


def _mural_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the council never decides the consent: the model checks until it gives up
    return RUNAWAY, "seek_consent", "", {}


def _mural_wrong_borough(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's borough is a neighbour: a wall there is found; the council refuses consent for
    # good (outside the borough's scheme)
    return PROPAGATION, "survey_wall", "", {"borough": rng.choice(["Islington", "Haringey"])}


def _mural_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's painting date has a digit changed: every step works, the app's check of the lift
    # hire against the commission fails after the job
    return PROPAGATION, "book_lift", "", {"date": rng.choice(["2027-05-08", "2027-06-03"])}


def _mural_wrong_fund(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's fund has two digits swapped: the fee is refused for good
    return PROPAGATION, "pay_artist", "", {"fund": rng.choice(["ARTS-47018", "ARTS-40781"])}


def _mural_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # WetPaint once or twice inside one executor run; the call after the time named works
    service = rng.choice(_MURAL_TIMED)
    errors = _mural_wet(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": service, "errors": errors}


def _mural_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wall register answers 4-9 pages; a tall enough wall is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _mural_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the consent is pending 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _mural_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the commission's lift failed its examination: Repaint names another lift; the new plan
    # hires it and the rest works
    lift = rng.choice(["Clapton Plant 16m boom", "Lea Valley Hire 12m scissor"])
    return "healthy", "", PROPAGATION, {"lift_to": lift}


def _mural_external_tagged(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the painting date checked, the finished mural is tagged during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"polls": rng.randint(1, 2)}


# --- regatta: a rowing club's secretary organising a head race, the planscope SDK's decorators
# in a synchronous app whose steps run in a thread pool, its services on an MCP server
# (streamable HTTP); flags: yellow call again at the hinted time, red run the step again, blue
# a new plan with the hinted value, black final
_REGATTA_TEXTS = (
    "the {reach} reach is closed for dredging (buoy {n})",
    "the harbour master's desk is away until {n} minutes past",
    "tide gauge {n} at {reach} reads above the racing limit",
    "the authority's ledger batch {n} is still posting",
    "a barge convoy of {n} t holds the {reach} lock",
    "the launch register for {reach} is being re-indexed (job {n})",
)
_REGATTA_REACHES = ("Newburn", "Scotswood", "Dunston", "Bill Quay", "Ryton")
_REGATTA_SERVICE = {
    "find_course": "search_courses",
    "request_closure": "apply_for_closure",
    "pay_fee": "pay_course_fee",
    "hire_launches": "hire_launches",
    "notify_clubs": "send_notice",
}
# the steps whose service takes a time to call again at (the course register does not)
_REGATTA_TIMED = ["request_closure", "pay_fee", "hire_launches", "notify_clubs"]


def _regatta_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_REGATTA_TEXTS).format(
            reach=rng.choice(_REGATTA_REACHES), n=rng.randint(12, 9800)
        )
        for _ in range(count)
    ]


def _regatta_yellows(rng: random.Random, count: int) -> list[dict[str, Any]]:
    # each yellow flag names another time: the steward calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"flag": "yellow", "text": t, "hint": f"at={m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_regatta_texts(rng, count), minutes, strict=True)
    ]


def _regatta_black(rng: random.Random) -> dict[str, Any]:
    return {"flag": "black", "text": _regatta_texts(rng, 1)[0]}


def _regatta_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # red flags again and again (varying texts), the app runs the step again each time until
    # the black flag or the SDK's budget (5 attempts a step) refuses the sixth
    step = rng.choice(sorted(_REGATTA_SERVICE))
    reds = [{"flag": "red", "text": t} for t in _regatta_texts(rng, rng.randint(3, 6))]
    params = {"service": _REGATTA_SERVICE[step], "errors": [*reds, _regatta_black(rng)]}
    return RUNAWAY, step, "", params


def _regatta_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one attempt: yellow flags again and again, each naming another time the steward
    # calls at; then a black flag
    step = rng.choice(_REGATTA_TIMED)
    errors = [*_regatta_yellows(rng, rng.randint(4, 7)), _regatta_black(rng)]
    return RUNAWAY, step, "", {"service": _REGATTA_SERVICE[step], "errors": errors}


def _regatta_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the course fee fails under every plan: red (run again), then blue naming another club
    # account (a new plan), 3-4 plans; the last flag black
    plans = rng.randint(3, 4)
    errors: list[dict[str, Any]] = []
    for i in range(plans):
        again, moved = _regatta_texts(rng, 2)
        errors.append({"flag": "red", "text": again})
        account = f"ARA-{rng.randint(10000, 99999)}"
        errors.append(
            {"flag": "blue", "text": moved, "hint": f"account={account}"}
            if i < plans - 1
            else {"flag": "black", "text": moved}
        )
    return RUNAWAY, "pay_fee", "", {"service": "pay_course_fee", "errors": errors}


def _regatta_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the closure application never leaves pending: the steward checks 15 times, then gives up
    return RUNAWAY, "request_closure", "", {"polls": -1}


def _regatta_starved_empty(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the steward is handed {}: it takes the step's wording for its result, and the later step
    # that quotes it is refused for good
    step = rng.choice(["request_closure", "pay_fee", "hire_launches"])
    return STARVED, step, "", {"starve": {"step": step, "given": []}}


def _regatta_starved_partial(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # one required key missing (the race day, the account, the yard): the same misreading
    step, given = rng.choice(
        [("request_closure", ["course"]), ("pay_fee", ["course"]), ("hire_launches", ["closure"])]
    )
    return STARVED, step, "", {"starve": {"step": step, "given": given}}


def _regatta_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's race day is wrong: every step works, the app's check of the closure's day
    # against the entry form fails
    day = rng.choice(["2027-05-25", "2027-06-15"])
    return PROPAGATION, "request_closure", "", {"note": {"race_day": day}}


def _regatta_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's account has two digits swapped: the fee is refused for good (black)
    account = rng.choice(["ARA-40371", "ARA-43017"])
    return PROPAGATION, "pay_fee", "", {"note": {"account": account}}


def _regatta_flaky_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # yellow once or twice inside one attempt; the call at the time named works
    step = rng.choice(_REGATTA_TIMED)
    errors = _regatta_yellows(rng, rng.randint(1, 2))
    return "healthy", "", RUNAWAY, {"service": _REGATTA_SERVICE[step], "errors": errors}


def _regatta_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the course register answers 4-9 pages; the free six-lane course is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _regatta_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the entry form's boatyard has no launches free: blue names another yard; the new plan
    # hires there and the rest works
    yard = rng.choice(["Wylam", "Blaydon", "Lemington"])
    blue = {"flag": "blue", "text": _regatta_texts(rng, 1)[0], "hint": f"yard={yard}"}
    return "healthy", "", PROPAGATION, {"service": "hire_launches", "errors": [blue]}


def _regatta_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the closure application is pending for 3-8 checks, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _regatta_external_storm(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the race day checked, a storm surge makes the authority
    # abandon the regatta during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"storm": True}


# --- orchard: a fruit orchard organising a harvest-to-cider-press run on Agno (a planner agent
# answering an Org-mode outline, an executor agent run per step attempt) under OpenLLMetry's Agno
# and OpenAI instrumentors. Services raise ``[kind] text`` faults: ``frost-hold`` (the model calls
# again ``after`` the time named), ``windfall`` (the app runs the step again), ``regraft`` with
# ``(use k=v)`` (a new plan) or ``blight`` (final).
_ORCHARD_TEXTS = (
    "the {lane} gate is locked and the key is with the {who}",
    "the agency's roster server timed out after {n} ms",
    "tractor {tractor} threw a hydraulic hose in the {lane}",
    "the co-op's booking desk has {n} calls queued",
    "the estate's bank gateway returned code {n}",
    "a {who} is blocking the {lane} with a trailer of bins",
    "the county registry is re-indexing {n} licences",
)
_ORCHARD_LANES = (
    "Bramley row",
    "Kingston lane",
    "Dabinett block",
    "Yarlington yard",
    "north drive",
)
_ORCHARD_WHO = ("bailiff", "head picker", "vet", "farrier", "ranger")
_ORCHARD_STEP = {
    "search_crews": "find_crew",
    "request_inspection": "book_inspection",
    "reserve_press": "book_press",
    "pay_advance": "pay_crew",
    "notify_cooperative": "notify_coop",
}
_ORCHARD_TIMED = ["reserve_press", "pay_advance", "notify_cooperative"]


def _orchard_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_ORCHARD_TEXTS).format(
            lane=rng.choice(_ORCHARD_LANES),
            who=rng.choice(_ORCHARD_WHO),
            tractor=f"MF-{rng.randint(100, 999)}",
            n=rng.randint(40, 9000),
        )
        for _ in range(count)
    ]


def _orchard_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"kind": "frost-hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_orchard_texts(rng, count), minutes, strict=True)
    ]


def _orchard_blight(rng: random.Random) -> dict[str, str]:
    return {"kind": "blight", "text": _orchard_texts(rng, 1)[0]}


def _orchard_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # windfall again and again (varying texts), the app runs the step again each time; the last
    # answer is blight
    tool = rng.choice(sorted(_ORCHARD_STEP))
    again = [{"kind": "windfall", "text": t} for t in _orchard_texts(rng, rng.randint(4, 6))]
    faults = [*again, _orchard_blight(rng)]
    return RUNAWAY, _ORCHARD_STEP[tool], "", {"tool": tool, "faults": faults}


def _orchard_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run: frost-hold again and again, each naming another time the model
    # calls again after; the last answer is blight
    tool = rng.choice(_ORCHARD_TIMED)
    faults = [*_orchard_holds(rng, rng.randint(4, 6)), _orchard_blight(rng)]
    return RUNAWAY, _ORCHARD_STEP[tool], "", {"tool": tool, "faults": faults}


def _orchard_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the crew's advance fails under every plan: windfall (run again), then regraft naming
    # another estate account (a new plan), 3-4 plans; the last blight
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _orchard_texts(rng, 2)
        faults.append({"kind": "windfall", "text": again})
        if i < plans - 1:
            accounts.append(f"EST-{rng.randint(10000, 99999)}")
            faults.append({"kind": "regraft", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "blight", "text": moved})
    params = {"tool": "pay_advance", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_crew", "", params


def _orchard_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the food-safety inspection stays queued: the executor reads it until it gives up
    return RUNAWAY, "book_inspection", "", {"stuck": True}


def _orchard_wrong_county(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the foreman's note names a neighbouring county: a crew licensed there is found; the
    # inspectorate refuses the inspection for good (the crew is not licensed for the orchard)
    return PROPAGATION, "find_crew", "", {"county": rng.choice(["Worcestershire", "Shropshire"])}


def _orchard_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pressing day has a digit changed: every step works, the app's check of the
    # press booking against the harvest sheet fails after the run
    return PROPAGATION, "book_press", "", {"day": rng.choice(["2027-10-04", "2027-10-17"])}


def _orchard_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's estate account has two digits swapped: the advance is refused for good
    return PROPAGATION, "pay_crew", "", {"account": rng.choice(["EST-31702", "EST-37012"])}


def _orchard_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice frost-hold inside one run or windfall (the step run again); the call after
    # the time named, or the next attempt, works
    tool = rng.choice(_ORCHARD_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _orchard_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "windfall", "text": t} for t in _orchard_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _orchard_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the labour agency's list answers 4-9 pages; a crew licensed for the county is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _orchard_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the inspection is queued 3-8 reads, then passed
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _orchard_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the harvest sheet's pressing yard is waterlogged: regraft names another yard; the next
    # plan books the press there and the rest works
    yard = rng.choice(["Long Barn yard", "Cider House court"])
    return "healthy", "", PROPAGATION, {"yard_to": yard}


def _orchard_external_hail(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the booking checked, a hailstorm shuts the press site during
    # the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- touring: a community theatre booking a tour date, a hand-written app calling LiteLLM under
# OpenInference's LiteLLM instrumentor (a planner answering a Python list of call expressions,
# an executor conversation per step attempt). Services raise stage-door errors handed to the
# model as the tool's result: ``Intermission`` (call again after the time named), ``Rehearse``
# (the app runs the step again), ``Recast`` with ``(use k=v)`` (a new plan) or ``FinalCurtain``
# (final).
_TOURING_TEXTS = (
    "the box office at {venue} is counting a {n}-seat return",
    "the get-in crew is still striking {show} on dock {k}",
    "the rights agency's portal timed out after {n} ms",
    "the truck hire desk is on a call about van {k}{n}",
    "the budget holder is signing {n} cheques for {show}",
    "the venue's technical manager is up a {k}-metre ladder",
    "the stage door keeper put {venue}'s post in pigeonhole {n}",
)
_TOURING_SHOWS = ("Blithe Spirit", "Our Town", "The Rivals", "Hay Fever", "Under Milk Wood")
_TOURING_VENUES = ("the Corn Exchange", "St Cuthbert's Hall", "the Lyceum", "the Drill Hall")
_TOURING_STEP = ["find_venue", "apply_licence", "book_truck", "pay_deposit", "notify_cast"]
_TOURING_TIMED = ["book_truck", "pay_deposit", "notify_cast"]


def _touring_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_TOURING_TEXTS).format(
            venue=rng.choice(_TOURING_VENUES),
            show=rng.choice(_TOURING_SHOWS),
            n=rng.randint(3, 900),
            k=rng.randint(1, 9),
        )
        for _ in range(count)
    ]


def _touring_intermissions(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each intermission names another time: the model calls again with different arguments
    minutes = rng.sample(range(9 * 60, 18 * 60, 5), count)
    return [
        {"kind": "intermission", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_touring_texts(rng, count), minutes, strict=True)
    ]


def _touring_curtain(rng: random.Random) -> dict[str, str]:
    return {"kind": "final-curtain", "text": _touring_texts(rng, 1)[0]}


def _touring_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # Rehearse again and again (varying texts), the app runs the step again each time; the
    # last answer is FinalCurtain
    tool = rng.choice(_TOURING_STEP)
    again = [{"kind": "rehearse", "text": t} for t in _touring_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, tool, "", {"tool": tool, "faults": [*again, _touring_curtain(rng)]}


def _touring_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: Intermission again and again, each naming another time
    # the model calls again after; the last answer is FinalCurtain
    tool = rng.choice(_TOURING_TIMED)
    faults = [*_touring_intermissions(rng, rng.randint(4, 6)), _touring_curtain(rng)]
    return RUNAWAY, tool, "", {"tool": tool, "faults": faults}


def _touring_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the venue deposit fails under every plan: Rehearse (run again), then Recast naming another
    # touring-budget account (a new plan), 3-4 plans; the last FinalCurtain
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _touring_texts(rng, 2)
        faults.append({"kind": "rehearse", "text": again})
        if i < plans - 1:
            accounts.append(f"TB-{rng.randint(10000, 99999)}")
            faults.append({"kind": "recast", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "final-curtain", "text": moved})
    params = {"tool": "pay_deposit", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_deposit", "", params


def _touring_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the licence application stays pending: the executor reads it until it reports stalled
    return RUNAWAY, "apply_licence", "", {"stuck": True}


def _touring_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's touring region is another one: a venue there is found; the rights agency
    # refuses the licence for good (the rights cover the north circuit only)
    return PROPAGATION, "find_venue", "", {"region": rng.choice(["south", "midlands"])}


def _touring_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's get-in date has a digit changed: every step works, the app's truck-booking
    # check against the tour sheet fails after the last step
    return PROPAGATION, "book_truck", "", {"date": rng.choice(["2027-05-11", "2027-05-24"])}


def _touring_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget account has two digits swapped: the deposit is refused for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["TB-32107", "TB-31270"])}


def _touring_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice an Intermission inside one conversation or Rehearse (the step run again);
    # the call after the time named, or the next attempt, works
    tool = rng.choice(_TOURING_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _touring_intermissions(rng, count)
        if rng.random() < 0.5
        else [{"kind": "rehearse", "text": t} for t in _touring_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _touring_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the venue listing answers 4-9 pages; a thrust stage is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _touring_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the licence is pending 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _touring_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the venue's dock takes no 7.5t truck: Recast names another size; the next plan books that
    # truck and the rest works
    return "healthy", "", PROPAGATION, {"size_to": rng.choice(["luton", "3.5t"])}


def _touring_external_closure(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the truck booking checked, the council's fire officer closes
    # the venue during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- florist: a wedding florist supplying an event (a grower with the wedding's flower in stock
# from a paged growers' listing, the plant-health import permit as a polled application, the
# refrigerated van for the delivery day, the grower's deposit paid from the event budget, the
# couple told), the Ollama Python client by hand under OpenLLMetry's Ollama instrumentor (a
# planner answering a GraphViz DOT digraph, an executor conversation per step attempt). Services
# raise florist-desk errors handed to the model as the tool's result: ``ColdRoomHold`` (call
# again ``after`` the time named), ``Requeue`` (the app runs the step again), ``Substitute``
# with ``(use k=v)`` (a new plan) or ``Refused`` (final).
_FLORIST_TEXTS = (
    "cold room {k} at {grower} is defrosting, {n} minutes left",
    "the auction clock at {place} is still running lot {n}",
    "the plant-health inspector is at bench {k} with {n} stems",
    "the van depot's dispatcher is loading chiller {k}{n}",
    "the event budget is locked while {n} invoices post",
    "the grower's packing line stopped at crate {n}",
    "the couple's mail relay deferred message {k}-{n}",
)
_FLORIST_GROWERS = ("Van Dijk Bloemen", "Hollyhock Farm", "Rosarium Kwekerij", "Petal & Stem")
_FLORIST_PLACES = ("Aalsmeer", "Naaldwijk", "Rijnsburg", "Spalding", "Venlo")
_FLORIST_STEP = ["find_grower", "apply_permit", "book_van", "pay_deposit", "notify_couple"]
_FLORIST_TIMED = ["book_van", "pay_deposit", "notify_couple"]


def _florist_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FLORIST_TEXTS).format(
            grower=rng.choice(_FLORIST_GROWERS),
            place=rng.choice(_FLORIST_PLACES),
            n=rng.randint(12, 940),
            k=rng.randint(1, 9),
        )
        for _ in range(count)
    ]


def _florist_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(5 * 60, 16 * 60, 5), count)
    return [
        {"kind": "hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_florist_texts(rng, count), minutes, strict=True)
    ]


def _florist_refused(rng: random.Random) -> dict[str, str]:
    return {"kind": "refused", "text": _florist_texts(rng, 1)[0]}


def _florist_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # Requeue again and again (varying texts): the app runs the step again each time; the last
    # answer is Refused
    tool = rng.choice(_FLORIST_STEP)
    again = [{"kind": "requeue", "text": t} for t in _florist_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, tool, "", {"tool": tool, "faults": [*again, _florist_refused(rng)]}


def _florist_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: ColdRoomHold again and again, each naming another time
    # the model calls again after; the last answer is Refused
    tool = rng.choice(_FLORIST_TIMED)
    faults = [*_florist_holds(rng, rng.randint(4, 6)), _florist_refused(rng)]
    return RUNAWAY, tool, "", {"tool": tool, "faults": faults}


def _florist_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the grower's deposit fails under every plan: Requeue (run again), then Substitute naming
    # another event-budget account (a new plan), 3-4 plans; the last Refused
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _florist_texts(rng, 2)
        faults.append({"kind": "requeue", "text": again})
        if i < plans - 1:
            accounts.append(f"EV-{rng.randint(1000, 9999)}-{rng.choice('ABCDK')}")
            faults.append({"kind": "substitute", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "refused", "text": moved})
    params = {"tool": "pay_deposit", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_deposit", "", params


def _florist_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the import-permit application stays under inspection: the executor reads it until it
    # reports stalled
    return RUNAWAY, "apply_permit", "", {"stuck": True}


def _florist_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the wedding planner's note names another growing region: a grower there with the flower
    # is found; the plant-health authority refuses the import permit for good (the permit's
    # phytosanitary zone covers the event sheet's region only)
    return PROPAGATION, "find_grower", "", {"region": rng.choice(["rijnsburg", "venlo"])}


def _florist_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's delivery day has a digit changed: the van is booked for it and every step
    # works; the app's van-booking check against the event sheet fails after the last step
    return PROPAGATION, "book_van", "", {"day": rng.choice(["2027-06-16", "2027-06-29"])}


def _florist_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's event-budget account has two digits swapped: the deposit is refused for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["EV-4417-K", "EV-7441-K"])}


def _florist_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a ColdRoomHold inside one conversation, or Requeue (the step run again);
    # the call after the time named, or the next attempt, works
    tool = rng.choice(_FLORIST_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _florist_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "requeue", "text": t} for t in _florist_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _florist_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the growers' listing answers 4-9 pages; a grower with the flower in stock is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _florist_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the import permit is under inspection for 3-8 reads, then issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _florist_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the depot has no chiller of the planned size free that day: Substitute names another
    # size; the next plan books that van and the rest works
    return "healthy", "", PROPAGATION, {"van_to": rng.choice(["chiller-3.5t", "chiller-7.5t"])}


def _florist_external_frost(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the van booking checked, a frost in the grower's glasshouse
    # spoils the crop during the watch and the grower cancels: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- assay: a mining company's ore-sample assay (a lab from a paged registry, the courier for
# the sample crates, the lab's polled assay job, the invoice paid from the exploration budget,
# the site geologist told), the Google Gen AI SDK by hand under the official OpenTelemetry
# google-genai instrumentation. Services raise ``ASSAY-<KIND>: text`` faults that the SDK's
# automatic function calling hands the model as ``{"error": ...}``: ``HOLD`` (``retry after
# HH:MM``: the model calls again ``after`` that time in the same chat), ``RESUBMIT`` (the app
# runs the step again), ``REROUTE`` with ``(use key=value)`` (a new plan) or ``VOID`` (final).
_ASSAY_TEXTS = (
    "the crusher at prep bay {k} tripped on a {n} g oversize",
    "fire-assay furnace {k} is cooling after a {n} degree overshoot",
    "the LIMS queue holds {n} jobs ahead of batch {ref}",
    "courier dispatch lost contact with truck {ref} near {place}",
    "the finance ledger is locked for month-end posting ({n} entries)",
    "the road to {place} is closed by a grader for {n} minutes",
    "crate seal {ref} failed the chain-of-custody scan",
)
_ASSAY_PLACES = ("Bulong", "Kanowna", "Coolgardie", "Kambalda", "Menzies")
_ASSAY_STEP = {
    "find_lab": "lab",
    "book_courier": "courier",
    "submit_assay": "assay",
    "pay_invoice": "pay",
    "notify_geologist": "notify",
}
_ASSAY_TIMED = ["book_courier", "submit_assay", "pay_invoice", "notify_geologist"]


def _assay_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_ASSAY_TEXTS).format(
            k=rng.randint(1, 9),
            n=rng.randint(12, 980),
            ref=f"{rng.choice('BCKLMT')}{rng.randint(100, 999)}",
            place=rng.choice(_ASSAY_PLACES),
        )
        for _ in range(count)
    ]


def _assay_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 17 * 60, 5), count)
    return [
        {"kind": "HOLD", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_assay_texts(rng, count), minutes, strict=True)
    ]


def _assay_void(rng: random.Random) -> dict[str, str]:
    return {"kind": "VOID", "text": _assay_texts(rng, 1)[0]}


def _assay_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # RESUBMIT again and again (varying texts): the app runs the step again each time; the last
    # answer is VOID
    tool = rng.choice(sorted(_ASSAY_STEP))
    again = [{"kind": "RESUBMIT", "text": t} for t in _assay_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _ASSAY_STEP[tool], "", {"tool": tool, "faults": [*again, _assay_void(rng)]}


def _assay_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one chat: HOLD again and again, each naming another time the model calls again
    # after; the last answer is VOID
    tool = rng.choice(_ASSAY_TIMED)
    faults = [*_assay_holds(rng, rng.randint(4, 6)), _assay_void(rng)]
    return RUNAWAY, _ASSAY_STEP[tool], "", {"tool": tool, "faults": faults}


def _assay_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the invoice fails under every plan: RESUBMIT (run again), then REROUTE naming another
    # exploration budget code (a new plan), 3-4 plans; the last VOID
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    budgets: list[str] = []
    for i in range(plans):
        again, moved = _assay_texts(rng, 2)
        faults.append({"kind": "RESUBMIT", "text": again})
        if i < plans - 1:
            budgets.append(f"EXP-{rng.randint(1000, 9999)}-GF")
            faults.append({"kind": "REROUTE", "text": moved, "hint": f"budget={budgets[-1]}"})
        else:
            faults.append({"kind": "VOID", "text": moved})
    params = {"tool": "pay_invoice", "faults": faults, "budgets": budgets}
    return RUNAWAY, "pay", "", params


def _assay_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lab's assay job stays queued: the executor reads it until it reports STALLED
    return RUNAWAY, "assay", "", {"stuck": True}


def _assay_wrong_region(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the geologist's note names another region: a lab there is found; the courier, whose
    # network runs from the batch's camp within its own region, voids the booking for good
    return PROPAGATION, "lab", "", {"region": rng.choice(["Murchison", "Pilbara"])}


def _assay_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pickup day has a digit changed: every step works, the app's check of the
    # courier booking against the job card fails after the last step
    return PROPAGATION, "courier", "", {"pickup_day": rng.choice(["2027-03-13", "2027-03-19"])}


def _assay_wrong_budget(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget code has two digits swapped: finance voids the payment for good
    return PROPAGATION, "pay", "", {"budget": rng.choice(["EXP-2921-GF", "EXP-2219-GF"])}


def _assay_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice HOLD inside one chat or RESUBMIT (the step run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_ASSAY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _assay_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "RESUBMIT", "text": t} for t in _assay_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _assay_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the lab registry answers 4-9 pages; an accredited lab with capacity is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _assay_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the assay job is queued 3-8 reads, then certified
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _assay_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the job card's core yard is cut off: the courier's REROUTE names another pickup site; the
    # next plan books the pickup there and the rest works
    site = rng.choice(["Kanowna core shed", "Kalgoorlie field depot"])
    return "healthy", "", PROPAGATION, {"site_to": site}


def _assay_external_recall(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the check passed, the lab recalls the certificate during the
    # watch (a certified reference standard failed its QC): not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- fieldtrip: a primary school's museum field trip, a hand-written app on the Groq Python SDK
# under OpenInference's Groq instrumentor (a planner forced to call ``submit_plan`` with tasks
# whose parameters hold ``{{tasks.<id>.output.<field>}}`` references, an executor conversation
# per task attempt). Services raise errors handed to the model as the tool's result: ``busy``
# (call again after the ``retry_at`` time), ``transient`` (the app runs the task again),
# ``conflict`` with ``use`` ``k=v`` (a new plan) or ``rejected`` (final).
_FIELDTRIP_TEXTS = (
    "{museum}'s bookings desk is on a call with {n} other schools",
    "the insurer's portal timed out after {n} ms",
    "coach depot {k} is re-fuelling its {n}-seater fleet",
    "the PTA treasurer's card reader declined a {n}p test charge",
    "the school office's mail queue holds {n} letters for Year {k}",
    "{museum}'s learning team is running a workshop until {k} o'clock",
    "the booking system locked record {k}{n} for another user",
)
_FIELDTRIP_MUSEUMS = ("the Thackray", "the Royal Armouries", "Abbey House", "the Discovery Centre")
_FIELDTRIP_TASK = {
    "search_museums": "find_museum",
    "apply_insurance": "insure_trip",
    "book_coach": "book_coach",
    "pay_deposit": "pay_deposit",
    "notify_parents": "notify_parents",
}
_FIELDTRIP_TIMED = ["book_coach", "pay_deposit", "notify_parents"]


def _fieldtrip_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FIELDTRIP_TEXTS).format(
            museum=rng.choice(_FIELDTRIP_MUSEUMS), n=rng.randint(3, 900), k=rng.randint(1, 9)
        )
        for _ in range(count)
    ]


def _fieldtrip_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each busy answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 16 * 60, 5), count)
    return [
        {"kind": "busy", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_fieldtrip_texts(rng, count), minutes, strict=True)
    ]


def _fieldtrip_rejected(rng: random.Random) -> dict[str, str]:
    return {"kind": "rejected", "text": _fieldtrip_texts(rng, 1)[0]}


def _fieldtrip_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # transient again and again (varying texts), the app runs the task again each time; the
    # last answer is rejected
    tool = rng.choice(sorted(_FIELDTRIP_TASK))
    again = [{"kind": "transient", "text": t} for t in _fieldtrip_texts(rng, rng.randint(4, 6))]
    faults = [*again, _fieldtrip_rejected(rng)]
    return RUNAWAY, _FIELDTRIP_TASK[tool], "", {"tool": tool, "faults": faults}


def _fieldtrip_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: busy again and again, each naming another time the
    # model calls again after; the last answer is rejected
    tool = rng.choice(_FIELDTRIP_TIMED)
    faults = [*_fieldtrip_busy(rng, rng.randint(4, 6)), _fieldtrip_rejected(rng)]
    return RUNAWAY, _FIELDTRIP_TASK[tool], "", {"tool": tool, "faults": faults}


def _fieldtrip_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the museum deposit fails under every plan: transient (run again), then conflict naming
    # another parents' association account (a new plan), 3-4 plans; the last rejected
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _fieldtrip_texts(rng, 2)
        faults.append({"kind": "transient", "text": again})
        if i < plans - 1:
            accounts.append(f"PTA-{rng.randint(10000, 99999)}")
            faults.append({"kind": "conflict", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "rejected", "text": moved})
    params = {"tool": "pay_deposit", "faults": faults, "accounts": accounts}
    return RUNAWAY, "pay_deposit", "", params


def _fieldtrip_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the insurance application stays pending: the executor reads it until it reports stalled
    return RUNAWAY, "insure_trip", "", {"stuck": True}


def _fieldtrip_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's trip day has a digit changed (a school-holiday day): a museum slot that day is
    # found; the insurer, handed the visit day by reference, refuses the certificate for good
    return PROPAGATION, "find_museum", "", {"day": rng.choice(["2027-03-28", "2027-08-18"])}


def _fieldtrip_wrong_pickup(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's pickup postcode is garbled: every task works, the app's coach-booking check
    # against the trip form fails after the last task
    pickup = rng.choice(["Hollins Lane Primary, LS6 4BJ", "Hollins Lane Primary, LS16 4JB"])
    return PROPAGATION, "book_coach", "", {"pickup": pickup}


def _fieldtrip_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's budget account has two digits swapped: the deposit is rejected for good
    return PROPAGATION, "pay_deposit", "", {"account": rng.choice(["PTA-52814", "PTA-58241"])}


def _fieldtrip_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice busy inside one conversation or transient (the task run again); the call
    # after the time named, or the next attempt, works
    tool = rng.choice(_FIELDTRIP_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _fieldtrip_busy(rng, count)
        if rng.random() < 0.5
        else [{"kind": "transient", "text": t} for t in _fieldtrip_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _fieldtrip_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the museum listing answers 4-9 pages; a free group slot is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _fieldtrip_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the insurance application is pending 3-8 reads, then the certificate is issued
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _fieldtrip_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no 33-seat coach is free that day: conflict names a bigger coach; the next plan books it
    # and the rest works
    return "healthy", "", PROPAGATION, {"seats_to": rng.choice([49, 53])}


def _fieldtrip_external_closure(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the coach booking checked, the museum closes its galleries
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- sawmill: a timber mill's order run, a hand-written app on the OpenAI Python client with
# its GenAI telemetry written through opentelemetry-util-genai (a planner answering a Gherkin
# feature whose ``And <key> is the <field> of "<scenario>"`` lines refer to earlier results, a
# mill hand conversation per step attempt). Services raise faults handed to the model as the
# tool's result: ``stacked`` (call again after the time named), ``resaw`` (the app runs the step
# again), ``regrade`` with ``use`` ``k=v`` (a new plan) or ``condemned`` (final).
_SAWMILL_TEXTS = (
    "the log deck's stacker is lifting {n} t of {species} for another order",
    "kiln {k}'s fans tripped at {n} degrees",
    "the haulage desk is rerouting lorry SX{k}{n} round a closed bridge",
    "the ledger's nightly close has {n} postings queued",
    "the bandsaw on line {k} is being re-tensioned after {n} cuts",
    "the mail relay deferred {n} messages for the sales office",
    "yard scanner {k} lost the tally for stack {n}",
)
_SAWMILL_SPECIES = ("oak", "larch", "Douglas fir", "sweet chestnut", "Sitka spruce")
_SAWMILL_STEP = {
    "search_log_yard": "find_logs",
    "book_kiln": "dry_lot",
    "book_haulage": "book_haulage",
    "charge_account": "take_payment",
    "notify_customer": "notify_customer",
}
_SAWMILL_TIMED = ["book_haulage", "charge_account", "notify_customer"]


def _sawmill_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SAWMILL_TEXTS).format(
            species=rng.choice(_SAWMILL_SPECIES), n=rng.randint(3, 900), k=rng.randint(1, 9)
        )
        for _ in range(count)
    ]


def _sawmill_stacked(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each stacked answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 17 * 60, 5), count)
    return [
        {"kind": "stacked", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_sawmill_texts(rng, count), minutes, strict=True)
    ]


def _sawmill_condemned(rng: random.Random) -> dict[str, str]:
    return {"kind": "condemned", "text": _sawmill_texts(rng, 1)[0]}


def _sawmill_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # resaw again and again (varying texts), the app runs the step again each time; the last
    # answer is condemned
    tool = rng.choice(sorted(_SAWMILL_STEP))
    again = [{"kind": "resaw", "text": t} for t in _sawmill_texts(rng, rng.randint(4, 6))]
    faults = [*again, _sawmill_condemned(rng)]
    return RUNAWAY, _SAWMILL_STEP[tool], "", {"tool": tool, "faults": faults}


def _sawmill_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one mill-hand conversation: stacked again and again, each naming another time the
    # model calls again after; the last answer is condemned
    tool = rng.choice(_SAWMILL_TIMED)
    faults = [*_sawmill_stacked(rng, rng.randint(4, 6)), _sawmill_condemned(rng)]
    return RUNAWAY, _SAWMILL_STEP[tool], "", {"tool": tool, "faults": faults}


def _sawmill_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the trade-account charge fails under every plan: resaw (run again), then regrade naming
    # another of the customer's trade accounts (a new plan), 3-4 plans; the last condemned
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _sawmill_texts(rng, 2)
        faults.append({"kind": "resaw", "text": again})
        if i < plans - 1:
            accounts.append(f"TMB-{rng.randint(10000, 99999)}")
            faults.append({"kind": "regrade", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "condemned", "text": moved})
    params = {"tool": "charge_account", "faults": faults, "accounts": accounts}
    return RUNAWAY, "take_payment", "", params


def _sawmill_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the kiln charge never reaches its moisture: the mill hand reads it until it reports stalled
    return RUNAWAY, "dry_lot", "", {"stuck": True}


def _sawmill_wrong_yard(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's yard is another of the estate's yards: a lot there is found; the kilns, handed
    # the lot's yard by reference, condemn the charge for good (their haul permit covers Ettrick)
    return PROPAGATION, "find_logs", "", {"yard": rng.choice(["Yarrow yard", "Ettrickbridge yard"])}


def _sawmill_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's delivery day has a digit changed: every step works, the app's haulage check
    # against the order form fails after the last step
    return PROPAGATION, "book_haulage", "", {"day": rng.choice(["2027-04-11", "2027-04-24"])}


def _sawmill_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's trade account has two digits swapped: the charge is condemned for good
    return PROPAGATION, "take_payment", "", {"account": rng.choice(["TMB-30416", "TMB-34061"])}


def _sawmill_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice stacked inside one conversation or resaw (the step run again); the call
    # after the time named, or the next attempt, works
    tool = rng.choice(_SAWMILL_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _sawmill_stacked(rng, count)
        if rng.random() < 0.5
        else [{"kind": "resaw", "text": t} for t in _sawmill_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _sawmill_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the yard's stock answers 4-9 pages of stacks; a lot of the grade is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _sawmill_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the kiln charge is drying 3-8 reads, then dry
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _sawmill_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # no 8-wheel rigid is free on the day: regrade names another lorry; the next plan books it
    # and the rest works
    return "healthy", "", PROPAGATION, {"vehicle_to": rng.choice(["artic", "rigid and drawbar"])}


def _sawmill_external_landslip(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the haulage checked, a landslip shuts the A7 and the haulier
    # cancels the run during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- signalbox: a rail signalling depot planning a night's track-side job (signal SB-114's LED
# head) on the OpenAI Agents SDK under OpenInference's openai-agents instrumentor: a planner
# agent answering markdown step sections with fenced json calls (``"@slug"`` an earlier result),
# a track runner agent run per step attempt. Services raise ``«aspect» text`` faults: ``caution``
# (the runner calls again ``after`` the time named, in the same run), ``danger`` (the app runs
# the step again), ``diverging`` with ``(use k=v)`` (a new plan) or ``stop`` (final).
_SIGNALBOX_TEXTS = (
    "the axle counter at {sig} reset with {n} disturbances logged",
    "the ECR desk at {place} has {n} isolations in its queue",
    "track circuit {sig}T dropped out for {n} seconds",
    "the roster server at {place} timed out after {n} ms",
    "RRV on-track machine {n} failed its brake test at {place}",
    "the lineside phone at {sig} is out of order",
    "a heat speed restriction covers {n} yards near {place}",
)
_SIGNALBOX_PLACES = ("Slochd summit", "Tomatin", "Moy", "Culloden", "Dalwhinnie")
_SIGNALBOX_STEP = {
    "search_possessions": "find-possession",
    "request_isolation": "isolate-line",
    "book_crew": "book-crew",
    "hire_plant": "hire-rrv",
    "notify_signaller": "notify-signaller",
}
_SIGNALBOX_TIMED = ["book_crew", "hire_plant", "notify_signaller"]


def _signalbox_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SIGNALBOX_TEXTS).format(
            sig=f"SB-{rng.randint(100, 199)}",
            place=rng.choice(_SIGNALBOX_PLACES),
            n=rng.randint(3, 900),
        )
        for _ in range(count)
    ]


def _signalbox_cautions(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each caution names another time: the runner calls again with different arguments
    minutes = rng.sample(range(21 * 60, 24 * 60, 5), count)
    return [
        {"aspect": "caution", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_signalbox_texts(rng, count), minutes, strict=True)
    ]


def _signalbox_stop(rng: random.Random) -> dict[str, str]:
    return {"aspect": "stop", "text": _signalbox_texts(rng, 1)[0]}


def _signalbox_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # danger again and again (varying texts), the app runs the step again each time; the last
    # answer is stop
    tool = rng.choice(sorted(_SIGNALBOX_STEP))
    again = [{"aspect": "danger", "text": t} for t in _signalbox_texts(rng, rng.randint(4, 6))]
    params = {"tool": tool, "faults": [*again, _signalbox_stop(rng)]}
    return RUNAWAY, _SIGNALBOX_STEP[tool], "", params


def _signalbox_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one runner run: caution again and again, each naming another time the runner calls
    # again after; the last answer is stop
    tool = rng.choice(_SIGNALBOX_TIMED)
    faults = [*_signalbox_cautions(rng, rng.randint(4, 6)), _signalbox_stop(rng)]
    return RUNAWAY, _SIGNALBOX_STEP[tool], "", {"tool": tool, "faults": faults}


def _signalbox_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the road-rail vehicle hire fails under every plan: danger (run again), then diverging
    # naming another cost centre of the depot (a new plan), 3-4 plans; the last stop
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    centres: list[str] = []
    for i in range(plans):
        again, moved = _signalbox_texts(rng, 2)
        faults.append({"aspect": "danger", "text": again})
        if i < plans - 1:
            centres.append(f"CC-{rng.randint(10000, 99999)}")
            faults.append(
                {"aspect": "diverging", "text": moved, "hint": f"cost_centre={centres[-1]}"}
            )
        else:
            faults.append({"aspect": "stop", "text": moved})
    params = {"tool": "hire_plant", "faults": faults, "cost_centres": centres}
    return RUNAWAY, "hire-rrv", "", params


def _signalbox_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the overhead-line isolation stays pending: the runner reads it until it reports stalled
    return RUNAWAY, "isolate-line", "", {"stuck": True}


def _signalbox_wrong_section(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's track section is a neighbouring one: a possession there is found; the
    # electrical control room refuses the isolation for good (the signal is not in it)
    section = rng.choice(["Aviemore-Kingussie", "Moy-Carrbridge"])
    return PROPAGATION, "find-possession", "", {"section": section}


def _signalbox_wrong_night(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's night has a digit changed: every step works, the app's crew-booking check
    # against the work order fails after the job
    return PROPAGATION, "book-crew", "", {"night": rng.choice(["2027-03-11", "2027-03-27"])}


def _signalbox_wrong_cost_centre(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's cost centre has two digits swapped: the hire is stopped for good
    return PROPAGATION, "hire-rrv", "", {"cost_centre": rng.choice(["CC-42107", "CC-41270"])}


def _signalbox_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice caution inside one run or danger (the step run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_SIGNALBOX_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _signalbox_cautions(rng, count)
        if rng.random() < 0.5
        else [{"aspect": "danger", "text": t} for t in _signalbox_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _signalbox_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the possession register answers 4-9 pages; a long enough possession is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _signalbox_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the isolation is pending 3-8 reads, then granted
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _signalbox_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the work order's depot has no crew free: diverging names another depot; the next plan
    # books from there and the rest works
    depot = rng.choice(["Perth signalling depot", "Aberdeen signalling depot"])
    return "healthy", "", PROPAGATION, {"depot_to": depot}


def _signalbox_external_theft(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the crew booking checked, cable theft puts the signal back to
    # danger during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- pantry: a food bank's weekly distribution (a donor's offer from a paged offers board, a
# cold-storage slot as a polled request, the volunteers' shift on the distribution day, the
# delivery route's van, the van hire paid from a grant fund, the partner agencies told), the
# Cohere Python SDK v2 by hand under OpenLLMetry's Cohere instrumentor (a planner answering a
# GitHub Actions-style YAML workflow, an executor conversation per job attempt). Services answer
# failures handed to the model as the tool's result ``{"ok": false, "reason", "detail"}``:
# ``hold`` (call again ``after`` the ``retry_at`` time), ``retry`` (the app runs the job again),
# ``reassign`` with ``(use k=v)`` (a new plan) or ``declined`` (final).
_PANTRY_TEXTS = (
    "the offers board is re-syncing {n} listings from {donor}",
    "cold store bay {k} is being defrosted, {n} minutes to go",
    "forklift {k} is charging at the {place} dock",
    "the volunteer rota is locked while {n} sign-ups are merged",
    "the van pool's dispatcher is checking in van {k}{n}",
    "the grant ledger is posting {n} receipts from {place}",
    "the agencies' mailing list bounced batch {k}-{n}",
)
_PANTRY_DONORS = ("FreshWay Hollins", "Dale Dairy Co-op", "Northgate Market", "Bakers of Eastgate")
_PANTRY_PLACES = ("Hollins Road", "Mill Lane", "Station Yard", "Canal Street", "Eastgate")
_PANTRY_JOBS = [
    "find_donation",
    "reserve_cold",
    "book_shift",
    "book_route",
    "pay_route",
    "notify_agencies",
]
_PANTRY_TIMED = ["book_shift", "book_route", "pay_route", "notify_agencies"]


def _pantry_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_PANTRY_TEXTS).format(
            donor=rng.choice(_PANTRY_DONORS),
            place=rng.choice(_PANTRY_PLACES),
            n=rng.randint(11, 960),
            k=rng.randint(1, 9),
        )
        for _ in range(count)
    ]


def _pantry_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"kind": "hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_pantry_texts(rng, count), minutes, strict=True)
    ]


def _pantry_declined(rng: random.Random) -> dict[str, str]:
    return {"kind": "declined", "text": _pantry_texts(rng, 1)[0]}


def _pantry_loop_job(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # retry again and again (varying texts): the app runs the job again each time; the last
    # answer is declined
    job = rng.choice(_PANTRY_JOBS)
    again = [{"kind": "retry", "text": t} for t in _pantry_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, job, "", {"tool": job, "faults": [*again, _pantry_declined(rng)]}


def _pantry_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: hold again and again, each naming another time the
    # model calls again after; the last answer is declined
    job = rng.choice(_PANTRY_TIMED)
    faults = [*_pantry_holds(rng, rng.randint(4, 6)), _pantry_declined(rng)]
    return RUNAWAY, job, "", {"tool": job, "faults": faults}


def _pantry_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the van hire fails under every plan: retry (run again), then reassign naming another grant
    # fund (a new plan), 3-4 plans; the last declined
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    funds: list[str] = []
    for i in range(plans):
        again, moved = _pantry_texts(rng, 2)
        faults.append({"kind": "retry", "text": again})
        if i < plans - 1:
            funds.append(f"GF-{rng.randint(1000, 9999)}-{rng.choice(['CF', 'LT', 'NL'])}")
            faults.append({"kind": "reassign", "text": moved, "hint": f"fund={funds[-1]}"})
        else:
            faults.append({"kind": "declined", "text": moved})
    params = {"tool": "pay_route", "faults": faults, "funds": funds}
    return RUNAWAY, "pay_route", "", params


def _pantry_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the cold store's slot request stays queued: the executor reads it until it reports
    # timed_out
    return RUNAWAY, "reserve_cold", "", {"stuck": True}


def _pantry_wrong_area(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the coordinator's note names another collection area: a donor's offer there is found; the
    # cold store declines the slot for good (its cold chain takes the sheet's area's donors only)
    return PROPAGATION, "find_donation", "", {"area": rng.choice(["westbrook", "millfield"])}


def _pantry_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's distribution day has a digit changed: the volunteers' shift is booked for it and
    # every job works; the app's shift check against the sheet fails after the last job
    return PROPAGATION, "book_shift", "", {"day": rng.choice(["2027-06-15", "2027-06-21"])}


def _pantry_wrong_fund(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's grant fund has two digits swapped: the van hire is declined for good
    return PROPAGATION, "pay_route", "", {"fund": rng.choice(["GF-2219-CF", "GF-2921-CF"])}


def _pantry_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice a hold inside one conversation, or retry (the job run again); the call
    # after the time named, or the next attempt, works
    job = rng.choice(_PANTRY_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _pantry_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "retry", "text": t} for t in _pantry_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": job, "faults": faults}


def _pantry_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the offers board answers 4-9 pages; an unclaimed offer of the week's food is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _pantry_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the cold store's slot request is queued for 3-8 reads, then allocated
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _pantry_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the van pool has no van of the planned size free that day: reassign names another size;
    # the next plan books that van and the rest works
    return "healthy", "", PROPAGATION, {"van_to": rng.choice(["swb-van", "luton-tail-lift"])}


def _pantry_external_recall(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every job worked and the shift checked, the donor recalls the batch for a
    # food-safety check during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- sequencer: a genomics core facility's sequencing order on Haystack (a planner pipeline
# answering a Snakemake workflow, an executor Agent run per rule attempt). The facility's LIMS
# raises ``[lims:<kind>] text`` faults: ``hold`` (``retry at HH:MM``: the model calls again at
# that time, in the same run), ``requeue`` (the app runs the rule again), ``amend`` with
# ``(use k=v)`` (a new workflow) or ``reject`` (final).
_SEQUENCER_TEXTS = (
    "the {inst} flow-cell loader reports a seal error on lane {k}",
    "the -80 freezer rack {k} is being defrosted for {n} minutes",
    "the LIMS sample sheet lock is held by {user}",
    "the Bioanalyzer on bench {k} lost its chip after {n} wells",
    "the cold-chain courier's dispatch desk has {n} waybills queued",
    "finance's grant ledger is reconciling batch {n}",
    "the facility mail relay deferred {n} messages from {user}",
)
_SEQUENCER_USERS = ("a.mensah", "j.kowalski", "r.iyer", "t.lindqvist", "s.oduya")
_SEQUENCER_INSTRUMENTS = ("NovaSeq-A", "NovaSeq-B", "NextSeq-2", "MiSeq-1")
_SEQUENCER_RULE = {
    "intake_batch": "pull_samples",
    "library_qc": "library_qc",
    "book_lane": "book_lane",
    "ship_leftovers": "ship_leftovers",
    "charge_grant": "charge_grant",
    "notify_group": "notify_group",
}
_SEQUENCER_TIMED = ["book_lane", "ship_leftovers", "charge_grant", "notify_group"]


def _sequencer_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_SEQUENCER_TEXTS).format(
            inst=rng.choice(_SEQUENCER_INSTRUMENTS),
            user=rng.choice(_SEQUENCER_USERS),
            n=rng.randint(3, 900),
            k=rng.randint(1, 8),
        )
        for _ in range(count)
    ]


def _sequencer_holds(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each hold names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 18 * 60, 5), count)
    return [
        {"kind": "hold", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_sequencer_texts(rng, count), minutes, strict=True)
    ]


def _sequencer_reject(rng: random.Random) -> dict[str, str]:
    return {"kind": "reject", "text": _sequencer_texts(rng, 1)[0]}


def _sequencer_loop_rule(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # requeue again and again (varying texts), the app runs the rule again each time; the last
    # answer is reject
    tool = rng.choice(sorted(_SEQUENCER_RULE))
    again = [{"kind": "requeue", "text": t} for t in _sequencer_texts(rng, rng.randint(4, 6))]
    faults = [*again, _sequencer_reject(rng)]
    return RUNAWAY, _SEQUENCER_RULE[tool], "", {"tool": tool, "faults": faults}


def _sequencer_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor run: hold again and again, each naming another time the model calls
    # again at; the last answer is reject
    tool = rng.choice(_SEQUENCER_TIMED)
    faults = [*_sequencer_holds(rng, rng.randint(4, 6)), _sequencer_reject(rng)]
    return RUNAWAY, _SEQUENCER_RULE[tool], "", {"tool": tool, "faults": faults}


def _sequencer_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the grant charge fails under every workflow: requeue (run again), then amend naming
    # another of the lab's grant accounts (a new workflow), 3-4 workflows; the last reject
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _sequencer_texts(rng, 2)
        faults.append({"kind": "requeue", "text": again})
        if i < plans - 1:
            accounts.append(f"GR-{rng.randint(10000, 99999)}")
            faults.append({"kind": "amend", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "reject", "text": moved})
    params = {"tool": "charge_grant", "faults": faults, "accounts": accounts}
    return RUNAWAY, "charge_grant", "", params


def _sequencer_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the library QC never finishes: the executor reads it until it reports stalled
    return RUNAWAY, "library_qc", "", {"stuck": True}


def _sequencer_wrong_site(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the PI's note names the group's other campus: a sample batch there is pulled; the QC lab
    # rejects it for good (the batch is in another campus's freezer)
    return PROPAGATION, "pull_samples", "", {"site": rng.choice(["Hinxton", "Granta Park"])}


def _sequencer_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the PI's note has the run date with a digit changed: every rule works, the app's check of
    # the lane booking against the order form fails after the workflow
    return PROPAGATION, "book_lane", "", {"date": rng.choice(["2027-03-06", "2027-03-19"])}


def _sequencer_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the PI's note has the grant account with two digits swapped: the charge is rejected
    return PROPAGATION, "charge_grant", "", {"account": rng.choice(["GR-52381", "GR-25318"])}


def _sequencer_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice hold inside one run or requeue (the rule run again); the call at the time
    # named, or the next attempt, works
    tool = rng.choice(_SEQUENCER_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _sequencer_holds(rng, count)
        if rng.random() < 0.5
        else [{"kind": "requeue", "text": t} for t in _sequencer_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _sequencer_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the intake queue answers 4-9 pages; the project's batch is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _sequencer_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the library QC runs 3-8 reads, then passes
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _sequencer_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order form's sequencer is down for service: amend names another instrument; the next
    # workflow books a lane there and the rest works
    return "healthy", "", PROPAGATION, {"instrument_to": rng.choice(["NovaSeq-B", "NextSeq-2"])}


def _sequencer_external_flowcell(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every rule worked and the booking checked, the flow cell fails on the instrument
    # during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- ferrule: a hardware wholesaler's trade counter filling a building site's order, a LangGraph
# app (a planner node answering an Ansible-style YAML playbook, a counter_hand subgraph run per
# task attempt) under MLflow's LangChain autologging. The ERP answers ``CP-nnnn [KIND] text``
# faults: ``BUSY`` (the model calls again ``after`` the time named), ``REQUEUE`` (the app runs the
# task again), ``SUBSTITUTE`` with ``(use k=v)`` (a new playbook) or ``VOID`` (final).
_FERRULE_TEXTS = (
    "the bandsaw on bench {k} is changing blades ({n} cuts queued)",
    "picker {name} is short {n} lengths at bin B{k}",
    "the yard gate scanner lost van VAN-{v}",
    "the trade ledger is posting batch {n}",
    "the threading head on lathe {k} is overheating",
    "forklift FL-{k} is charging for {n} minutes",
    "the {name} shift hand-off holds {n} tickets",
)
_FERRULE_NAMES = ("Dev", "Aisha", "Marek", "Kerry", "Tomasz", "Bev")
_FERRULE_TASK = {
    "stock_search": "stock_pick",
    "workshop_job": "cut_job",
    "book_van": "van_slot",
    "charge_trade_account": "account_charge",
    "notify_site": "site_notice",
}
_FERRULE_TIMED = ["book_van", "charge_trade_account", "notify_site"]


def _ferrule_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_FERRULE_TEXTS).format(
            name=rng.choice(_FERRULE_NAMES),
            n=rng.randint(3, 480),
            k=rng.randint(1, 9),
            v=rng.randint(10, 89),
        )
        for _ in range(count)
    ]


def _ferrule_busy(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each busy answer names another time: the model calls again with different arguments
    minutes = rng.sample(range(7 * 60, 16 * 60, 5), count)
    return [
        {"kind": "BUSY", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_ferrule_texts(rng, count), minutes, strict=True)
    ]


def _ferrule_void(rng: random.Random) -> dict[str, str]:
    return {"kind": "VOID", "text": _ferrule_texts(rng, 1)[0]}


def _ferrule_loop_task(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # REQUEUE again and again (varying texts), the app runs the task again each time; the last
    # answer is VOID
    tool = rng.choice(sorted(_FERRULE_TASK))
    again = [{"kind": "REQUEUE", "text": t} for t in _ferrule_texts(rng, rng.randint(4, 6))]
    return RUNAWAY, _FERRULE_TASK[tool], "", {"tool": tool, "faults": [*again, _ferrule_void(rng)]}


def _ferrule_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one counter_hand run: BUSY again and again, each naming another time the model
    # calls again after; the last answer is VOID
    tool = rng.choice(_FERRULE_TIMED)
    faults = [*_ferrule_busy(rng, rng.randint(4, 6)), _ferrule_void(rng)]
    return RUNAWAY, _FERRULE_TASK[tool], "", {"tool": tool, "faults": faults}


def _ferrule_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the account charge fails under every playbook: REQUEUE (run again), then SUBSTITUTE naming
    # another trade account of the customer (a new playbook), 3-4 playbooks; the last VOID
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _ferrule_texts(rng, 2)
        faults.append({"kind": "REQUEUE", "text": again})
        if i < plans - 1:
            accounts.append(f"TA-{rng.randint(10000, 99999)}")
            faults.append({"kind": "SUBSTITUTE", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "VOID", "text": moved})
    params = {"tool": "charge_trade_account", "faults": faults, "accounts": accounts}
    return RUNAWAY, "account_charge", "", params


def _ferrule_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the workshop job stays queued: the counter hand reads it until it reports stalled
    return RUNAWAY, "cut_job", "", {"stuck": True}


def _ferrule_wrong_branch(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's branch is another of the wholesaler's: a lot is found there; the order's
    # branch workshop refuses to cut stock it does not hold, for good
    return PROPAGATION, "stock_pick", "", {"branch": rng.choice(["Wakefield", "Bradford"])}


def _ferrule_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's delivery day has a digit changed: every task works, the app's van booking
    # check against the order card fails after the last task
    return PROPAGATION, "van_slot", "", {"day": rng.choice(["2027-03-18", "2027-03-26"])}


def _ferrule_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's trade account has two digits swapped: the charge is VOID for good
    return PROPAGATION, "account_charge", "", {"account": rng.choice(["TA-35072", "TA-30527"])}


def _ferrule_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice BUSY inside one run or REQUEUE (the task run again); the call after the
    # time named, or the next attempt, works
    tool = rng.choice(_FERRULE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _ferrule_busy(rng, count)
        if rng.random() < 0.5
        else [{"kind": "REQUEUE", "text": t} for t in _ferrule_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _ferrule_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the stock ledger answers 4-9 pages; a lot with enough free lengths is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _ferrule_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the workshop job is queued 3-8 reads, then done
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _ferrule_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # every van of the order card's kind is out on the day: SUBSTITUTE names another vehicle;
    # the next playbook books it and the rest works
    vehicle = rng.choice(["3.5t Luton", "18t rigid with HIAB"])
    return "healthy", "", PROPAGATION, {"vehicle_to": vehicle}


def _ferrule_external_notice(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every task worked and the van booking checked, an HSE prohibition notice shuts the
    # site gate during the watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- planetarium: a planetarium's education desk booking a school group's show on the Google Gen
# AI SDK by hand (a planner answering a PlantUML activity diagram, a streamed executor
# conversation per action attempt) under OpenLLMetry's Google Generative AI instrumentor. Services
# raise ``[kind] text`` faults: ``cloud-cover`` (the model calls again ``after`` the time named),
# ``eclipse`` (the app runs the action again), ``retrograde`` with ``(use k=v)`` (a new diagram)
# or ``supernova`` (final).
_PLANETARIUM_TEXTS = (
    "the star ball's lamp change is running {n} minutes late",
    "box office till {k} is reconciling {n} transactions",
    "the rail operator's booking API answered 50{k} for request {hex}",
    "projector {p} overheated at {n} lumens",
    "the school finance portal is in a {n}-minute maintenance window",
    "the {dome} seating plan is locked by another user",
    "the mail relay holds {n} messages for the council's schools domain",
)
_PLANETARIUM_DOMES = ("Main Dome", "Star Theatre", "Digital Studio")
_PLANETARIUM_ACTION = {
    "find_show": "findShow",
    "book_dome": "bookDome",
    "calibrate_projector": "calibrate",
    "book_travel": "bookTravel",
    "invoice_school": "invoiceSchool",
    "notify_teacher": "notifyTeacher",
}
_PLANETARIUM_TIMED = ["book_dome", "book_travel", "invoice_school", "notify_teacher"]


def _planetarium_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_PLANETARIUM_TEXTS).format(
            n=rng.randint(3, 900),
            k=rng.randint(1, 4),
            hex=f"{rng.getrandbits(24):06x}",
            p=rng.choice(("P1", "P2", "P3", "P4", "P5")),
            dome=rng.choice(_PLANETARIUM_DOMES),
        )
        for _ in range(count)
    ]


def _planetarium_waits(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each wait names another time: the model calls again with different arguments
    minutes = rng.sample(range(8 * 60, 17 * 60, 5), count)
    return [
        {"kind": "cloud-cover", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_planetarium_texts(rng, count), minutes, strict=True)
    ]


def _planetarium_supernova(rng: random.Random) -> dict[str, str]:
    return {"kind": "supernova", "text": _planetarium_texts(rng, 1)[0]}


def _planetarium_loop_action(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # eclipse again and again (varying texts), the app runs the action again each time; the
    # last answer is supernova
    tool = rng.choice(sorted(_PLANETARIUM_ACTION))
    again = [{"kind": "eclipse", "text": t} for t in _planetarium_texts(rng, rng.randint(4, 6))]
    faults = [*again, _planetarium_supernova(rng)]
    return RUNAWAY, _PLANETARIUM_ACTION[tool], "", {"tool": tool, "faults": faults}


def _planetarium_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: cloud-cover again and again, each naming another time
    # the model calls again after; the last answer is supernova
    tool = rng.choice(_PLANETARIUM_TIMED)
    faults = [*_planetarium_waits(rng, rng.randint(4, 6)), _planetarium_supernova(rng)]
    return RUNAWAY, _PLANETARIUM_ACTION[tool], "", {"tool": tool, "faults": faults}


def _planetarium_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the school's invoice fails under every diagram: eclipse (run again), then retrograde
    # naming another account of the school's trust (a new diagram), 3-4 diagrams; the last
    # supernova
    plans = rng.randint(3, 4)
    faults: list[dict[str, str]] = []
    accounts: list[str] = []
    for i in range(plans):
        again, moved = _planetarium_texts(rng, 2)
        faults.append({"kind": "eclipse", "text": again})
        if i < plans - 1:
            accounts.append(f"SCH-{rng.randint(10000, 99999)}")
            faults.append({"kind": "retrograde", "text": moved, "hint": f"account={accounts[-1]}"})
        else:
            faults.append({"kind": "supernova", "text": moved})
    params = {"tool": "invoice_school", "faults": faults, "accounts": accounts}
    return RUNAWAY, "invoiceSchool", "", params


def _planetarium_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the projector calibration stays aligning: the executor reads it until it answers stalled
    return RUNAWAY, "calibrate", "", {"stuck": True}


def _planetarium_wrong_dome(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the coordinator's note names a smaller auditorium: a show for it is found in the
    # catalogue; the dome booking for the group's seats is refused for good
    return PROPAGATION, "findShow", "", {"dome": rng.choice(["Star Theatre", "Digital Studio"])}


def _planetarium_wrong_date(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's visit date has a digit changed: every action works, the app's check of the
    # dome booking against the school's request fails after the job
    return PROPAGATION, "bookDome", "", {"date": rng.choice(["2027-03-13", "2027-03-19"])}


def _planetarium_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's school account has two digits swapped: the invoice is refused for good
    return PROPAGATION, "invoiceSchool", "", {"account": rng.choice(["SCH-51520", "SCH-55210"])}


def _planetarium_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice cloud-cover inside one conversation or eclipse (the action run again);
    # the call after the time named, or the next attempt, works
    tool = rng.choice(_PLANETARIUM_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _planetarium_waits(rng, count)
        if rng.random() < 0.5
        else [{"kind": "eclipse", "text": t} for t in _planetarium_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _planetarium_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the programme catalogue answers 4-9 pages; a show for the dome is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _planetarium_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the projector calibration is aligning for 3-8 reads, then ready
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _planetarium_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the requested slot is closed for a press preview: retrograde names another slot the same
    # day; the next diagram books it and the rest works
    return "healthy", "", PROPAGATION, {"slot_to": rng.choice(["11:45", "13:15"])}


def _planetarium_external_snow(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every action worked and the booking checked, the school closes for snow during the
    # watch: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- chairlift: a ski resort's lift maintenance desk replacing a chairlift sheave, the Google Gen
# AI SDK by hand (a planner call answering a Mermaid flowchart whose nodes ``s1``..``s6`` are the
# steps, an executor conversation with manual function calling per step attempt) under MLflow's
# Gemini autologging. Services fail with codes: ``RETRY_LATER`` (the model calls again ``at`` the
# time named, same conversation), ``INTERRUPTED`` (the app runs the step again), ``CONFLICT``
# with ``(use k=v)`` (a new flowchart) or ``REFUSED`` (final).
_CHAIRLIFT_TEXTS = (
    "the depot's stock terminal timed out after {n} ms",
    "the lift desk's scheduler is re-indexing {n} closures",
    "the crane firm's dispatcher has {n} calls queued",
    "radio relay {k} on the ridge dropped after {n} s",
    "the resort ledger is posting batch {n}",
    "the mail gateway deferred {n} messages",
    "the summit anemometer {k} lost power for {n} s",
)
_CHAIRLIFT_STEP = {
    "depot.stock": "s1",
    "lift.close": "s2",
    "wind.reading": "s3",
    "crane.book": "s4",
    "ledger.charge": "s5",
    "mail.send": "s6",
}
_CHAIRLIFT_TIMED = ["lift.close", "crane.book", "ledger.charge", "mail.send"]


def _chairlift_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_CHAIRLIFT_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _chairlift_retries(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each RETRY_LATER names another time: the model calls again with different arguments
    minutes = rng.sample(range(5 * 60, 17 * 60, 5), count)
    return [
        {"code": "RETRY_LATER", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_chairlift_texts(rng, count), minutes, strict=True)
    ]


def _chairlift_refused(rng: random.Random) -> dict[str, str]:
    return {"code": "REFUSED", "text": _chairlift_texts(rng, 1)[0]}


def _chairlift_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # INTERRUPTED again and again (varying texts): the app runs the step again each time; the
    # last answer is REFUSED
    tool = rng.choice(sorted(_CHAIRLIFT_STEP))
    again = [{"code": "INTERRUPTED", "text": t} for t in _chairlift_texts(rng, rng.randint(4, 6))]
    faults = [*again, _chairlift_refused(rng)]
    return RUNAWAY, _CHAIRLIFT_STEP[tool], "", {"tool": tool, "faults": faults}


def _chairlift_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: RETRY_LATER again and again, each naming another time
    # the model calls again at; the last answer is REFUSED
    tool = rng.choice(_CHAIRLIFT_TIMED)
    faults = [*_chairlift_retries(rng, rng.randint(4, 6)), _chairlift_refused(rng)]
    return RUNAWAY, _CHAIRLIFT_STEP[tool], "", {"tool": tool, "faults": faults}


def _chairlift_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the crane booking fails under every flowchart: INTERRUPTED (run again), then CONFLICT
    # naming another crane crew (a new flowchart), 3-4 flowcharts; the last REFUSED
    plans = rng.randint(3, 4)
    crews = rng.sample([f"Alpine Crane crew {n}" for n in (1, 3, 4, 5, 6)], plans - 1)
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _chairlift_texts(rng, 2)
        faults.append({"code": "INTERRUPTED", "text": again})
        if i < plans - 1:
            faults.append({"code": "CONFLICT", "text": moved, "hint": f"crew={crews[i]}"})
        else:
            faults.append({"code": "REFUSED", "text": moved})
    return RUNAWAY, "s4", "", {"tool": "crane.book", "faults": faults, "crews": crews}


def _chairlift_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the summit wind stays GUSTING: the executor reads it until it logs the reading stalled
    return RUNAWAY, "s3", "", {"stuck": True}


def _chairlift_wrong_series(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the mechanic's note names another sheave series: an assembly of it is fetched, the lift
    # closed and the wind read; the crane crew's rigging plan for tower T7 refuses it for good
    return PROPAGATION, "s1", "", {"series": rng.choice(["PX-420", "PX-500", "QX-450"])}


def _chairlift_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's work day is off: the lift is closed on it, every step works, the app's check
    # of the closure against the work order fails after the work order
    return PROPAGATION, "s2", "", {"day": rng.choice(["2027-06-02", "2027-06-16", "2027-09-06"])}


def _chairlift_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's cost centre has two digits swapped: the charge is REFUSED for good
    return (
        PROPAGATION,
        "s5",
        "",
        {"cost_centre": rng.choice(["LO-77241", "LO-72714", "LO-77124"])},
    )


def _chairlift_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice RETRY_LATER inside one conversation or INTERRUPTED (the step run again);
    # the call at the time named, or the next attempt, works
    tool = rng.choice(_CHAIRLIFT_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _chairlift_retries(rng, count)
        if rng.random() < 0.5
        else [{"code": "INTERRUPTED", "text": t} for t in _chairlift_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _chairlift_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the depot's stock list answers 4-9 pages; an assembly on hand is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _chairlift_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the summit wind is GUSTING for 3-8 reads, then calm
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _chairlift_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the closure window clashes with the race team's training: CONFLICT names other hours the
    # same day; the next flowchart closes the lift then and the rest works
    return "healthy", "", PROPAGATION, {"hours_to": rng.choice(["13:00-21:00", "04:00-12:00"])}


def _chairlift_external_lightning(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the closure checked, lightning shuts the upper mountain during
    # the reopening runs: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


# --- lighthouse: a coastguard's lighthouse maintenance desk replacing a lamp's rotation motor, the
# Groq Python SDK by hand (a planner call answering a Mermaid gantt chart whose task ids ``motor``,
# ``boat``, ``landing``, ``tech``, ``invoice``, ``notice`` are the steps, an executor conversation
# with function calling per step attempt) under OpenLLMetry's Groq instrumentor and the app's own
# OpenTelemetry spans. Services fail with codes: ``TRY_LATER`` (the model calls again ``at`` the
# time named, same conversation), ``LINK_LOST`` (the app runs the step again), ``CLASH`` with
# ``(use k=v)`` (a new chart) or ``REFUSED`` (final).
_LIGHTHOUSE_TEXTS = (
    "the supplier's order desk timed out after {n} ms",
    "the harbour office radio link dropped after {n} s",
    "the boat operator's booking system is reindexing {n} sailings",
    "the tide-gauge feed {k} went quiet for {n} s",
    "the engineers' rota service has {n} requests queued",
    "the coastguard ledger is posting batch {n}",
    "the hydrographic office's mail relay {k} deferred {n} messages",
    "satellite link {k} to the rock lost lock after {n} s",
)
_LIGHTHOUSE_STEP = {
    "order_motor": "motor",
    "book_boat": "boat",
    "landing_survey": "landing",
    "book_technician": "tech",
    "pay_invoice": "invoice",
    "issue_notice": "notice",
}
_LIGHTHOUSE_TIMED = ["book_boat", "book_technician", "pay_invoice", "issue_notice"]


def _lighthouse_texts(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(_LIGHTHOUSE_TEXTS).format(n=rng.randint(3, 9000), k=rng.randint(1, 9))
        for _ in range(count)
    ]


def _lighthouse_try_later(rng: random.Random, count: int) -> list[dict[str, str]]:
    # each TRY_LATER names another time: the model calls again with different arguments
    minutes = rng.sample(range(6 * 60, 18 * 60, 5), count)
    return [
        {"code": "TRY_LATER", "text": t, "hint": f"{m // 60:02d}:{m % 60:02d}"}
        for t, m in zip(_lighthouse_texts(rng, count), minutes, strict=True)
    ]


def _lighthouse_refused(rng: random.Random) -> dict[str, str]:
    return {"code": "REFUSED", "text": _lighthouse_texts(rng, 1)[0]}


def _lighthouse_loop_step(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # LINK_LOST again and again (varying texts): the app runs the step again each time; the
    # last answer is REFUSED
    tool = rng.choice(sorted(_LIGHTHOUSE_STEP))
    lost = [{"code": "LINK_LOST", "text": t} for t in _lighthouse_texts(rng, rng.randint(4, 6))]
    faults = [*lost, _lighthouse_refused(rng)]
    return RUNAWAY, _LIGHTHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _lighthouse_loop_tool(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # inside one executor conversation: TRY_LATER again and again, each naming another time the
    # model calls again at; the last answer is REFUSED
    tool = rng.choice(_LIGHTHOUSE_TIMED)
    faults = [*_lighthouse_try_later(rng, rng.randint(4, 6)), _lighthouse_refused(rng)]
    return RUNAWAY, _LIGHTHOUSE_STEP[tool], "", {"tool": tool, "faults": faults}


def _lighthouse_loop_replans(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the technician's booking fails under every chart: LINK_LOST (run again), then CLASH naming
    # another technician (a new chart), 3-4 charts; the last REFUSED
    plans = rng.randint(3, 4)
    techs = rng.sample(
        ["Ewan Halcrow", "Isla Sinclair", "Callum Jamieson", "Freya Leask"], plans - 1
    )
    faults: list[dict[str, str]] = []
    for i in range(plans):
        again, moved = _lighthouse_texts(rng, 2)
        faults.append({"code": "LINK_LOST", "text": again})
        if i < plans - 1:
            faults.append({"code": "CLASH", "text": moved, "hint": f"technician={techs[i]}"})
        else:
            faults.append({"code": "REFUSED", "text": moved})
    return RUNAWAY, "tech", "", {"tool": "book_technician", "faults": faults, "techs": techs}


def _lighthouse_loop_poll(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the swell at the landing stays too high: the executor reads the survey until it reports
    # it stalled
    return RUNAWAY, "landing", "", {"stuck": True}


def _lighthouse_wrong_motor(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the attendant's note names another motor model: one is ordered, the boat booked and the
    # landing surveyed; the technician's work pack for the lens pedestal refuses it for good
    return PROPAGATION, "motor", "", {"motor": rng.choice(["RM-180", "RM-220", "RX-240"])}


def _lighthouse_wrong_day(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's work day is off: the boat goes out on it, every step works, the app's check of
    # the boat trip against the work order fails after the work order
    return PROPAGATION, "boat", "", {"day": rng.choice(["2027-05-05", "2027-05-19", "2027-05-21"])}


def _lighthouse_wrong_account(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the note's coastguard budget account has two digits swapped: the invoice is REFUSED for good
    return (
        PROPAGATION,
        "invoice",
        "",
        {"account": rng.choice(["NLB-40371", "NLB-43017", "NLB-04317"])},
    )


def _lighthouse_flaky(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # once or twice TRY_LATER inside one conversation or LINK_LOST (the step run again); the
    # call at the time named, or the next attempt, works
    tool = rng.choice(_LIGHTHOUSE_TIMED)
    count = rng.randint(1, 2)
    faults = (
        _lighthouse_try_later(rng, count)
        if rng.random() < 0.5
        else [{"code": "LINK_LOST", "text": t} for t in _lighthouse_texts(rng, count)]
    )
    return "healthy", "", RUNAWAY, {"tool": tool, "faults": faults}


def _lighthouse_pagination(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the supplier's catalogue answers 4-9 pages; a motor in stock is on the last
    return "healthy", "", RUNAWAY, {"pages": rng.randint(4, 9)}


def _lighthouse_polling_ends(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the swell at the landing is too high for 3-8 reads, then it drops
    return "healthy", "", RUNAWAY, {"polls": rng.randint(3, 8)}


def _lighthouse_legit_replan(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # the order's tide window is taken by the lifeboat's exercise: CLASH names the afternoon
    # window the same day; the next chart books the boat then and the rest works
    return "healthy", "", PROPAGATION, {"window_to": rng.choice(["14:20-17:50", "15:05-18:30"])}


def _lighthouse_external_gale(rng: random.Random) -> tuple[str, str, str, dict[str, Any]]:
    # after every step worked and the boat trip checked, a gale's sea floods the rock's engine
    # room during the watch of the relit light: not the agent's fault
    return "healthy", "", PROPAGATION, {"reads": rng.randint(1, 2)}


SCENARIOS: dict[str, dict[str, Scenario]] = {
    "travel": {
        "healthy": _travel_healthy,
        "flaky_step": _travel_flaky,
        "tool_retry_recovers": _travel_tool_retry_ok,
        "legit_replan": _travel_replan_ok,
        "external_cancel": _travel_external_cancel,
        "pagination": _travel_pagination,
        "loop_step_varying": _travel_loop_step,
        "loop_tool_in_step": _travel_loop_tool,
        "loop_across_replans": _travel_loop_replans,
        "starved_empty": _travel_starved_empty,
        "starved_partial": _travel_starved_partial,
        "wrong_checkin": _travel_wrong_checkin,
        "wrong_airport": _travel_wrong_airport,
    },
    "etl": {
        "healthy": _etl_healthy,
        "pagination": _etl_pagination,
        "polling_ends": _etl_polling_ends,
        "flaky_stage": _etl_flaky,
        "tool_retry_recovers": _etl_tool_retry_ok,
        "loop_stage_varying": _etl_loop_stage,
        "loop_tool_varying_args": _etl_loop_tool,
        "wrong_column": _etl_wrong_column,
    },
    "support": {
        "healthy": _support_healthy,
        "polling_ends": _support_polling_ends,
        "flaky_lookup": _support_flaky,
        "legit_replan": _support_replan_ok,
        "external_reopen": _support_external_reopen,
        "loop_lookup_varying": _support_loop_lookup,
        "loop_refund_calls": _support_loop_refund_calls,
        "starved_reply": _support_starved,
        "wrong_order": _support_wrong_order,
        "wrong_email": _support_wrong_email,
    },
    "refund": {
        "healthy": _refund_healthy,
        "flaky_tool": _refund_flaky,
        "loop_tool": _refund_loop,
    },
    "restock": {
        "healthy": _restock_healthy,
        "flaky_task": _restock_flaky_task,
        "flaky_tool": _restock_flaky_tool,
        "polling_ends": _restock_polling_ends,
        "legit_replan": _restock_legit_replan,
        "external_lost": _restock_external_lost,
        "loop_task_varying": _restock_loop_task,
        "loop_tool_in_task": _restock_loop_tool,
        "loop_across_replans": _restock_loop_replans,
        "wrong_warehouse": _restock_wrong_warehouse,
        "wrong_quantity": _restock_wrong_quantity,
        "wrong_date": _restock_wrong_date,
    },
    "release": {
        "healthy": _release_healthy,
        "flaky_task": _release_flaky_task,
        "flaky_tool": _release_flaky_tool,
        "polling_ends": _release_polling_ends,
        "legit_replan": _release_legit_replan,
        "external_incident": _release_external_incident,
        "loop_task_varying": _release_loop_task,
        "loop_tool_in_task": _release_loop_tool,
        "loop_across_replans": _release_loop_replans,
        "wrong_version": _release_wrong_version,
        "wrong_cluster": _release_wrong_cluster,
        "wrong_replicas": _release_wrong_replicas,
        "wrong_window": _release_wrong_window,
    },
    "analyst": {
        "healthy": _analyst_healthy,
        "flaky_step": _analyst_flaky_step,
        "flaky_tool": _analyst_flaky_tool,
        "legit_replan": _analyst_legit_replan,
        "pagination": _analyst_pagination,
        "polling_ends": _analyst_polling_ends,
        "external_removed": _analyst_external_removed,
        "loop_step_varying": _analyst_loop_step,
        "loop_tool_in_step": _analyst_loop_tool,
        "loop_across_replans": _analyst_loop_replans,
        "loop_poll_stuck": _analyst_loop_poll,
        "wrong_product": _analyst_wrong_product,
        "wrong_region": _analyst_wrong_region,
        "wrong_baseline": _analyst_wrong_baseline,
        "wrong_space": _analyst_wrong_space,
    },
    "oncall": {
        "healthy": _oncall_healthy,
        "flaky_step": _oncall_flaky_step,
        "flaky_tool": _oncall_flaky_tool,
        "legit_replan": _oncall_legit_replan,
        "pagination": _oncall_pagination,
        "polling_ends": _oncall_polling_ends,
        "external_refire": _oncall_external_refire,
        "loop_step_varying": _oncall_loop_step,
        "loop_tool_in_step": _oncall_loop_tool,
        "loop_across_replans": _oncall_loop_replans,
        "loop_poll_stuck": _oncall_loop_poll,
        "wrong_service": _oncall_wrong_service,
        "wrong_host": _oncall_wrong_host,
        "wrong_region": _oncall_wrong_region,
        "wrong_threshold": _oncall_wrong_threshold,
    },
    "claims": {
        "healthy": _claims_healthy,
        "flaky_step": _claims_flaky_step,
        "flaky_tool": _claims_flaky_tool,
        "legit_replan": _claims_legit_replan,
        "pagination": _claims_pagination,
        "polling_ends": _claims_polling_ends,
        "external_reversal": _claims_external_reversal,
        "loop_step_varying": _claims_loop_step,
        "loop_tool_in_step": _claims_loop_tool,
        "loop_across_replans": _claims_loop_replans,
        "loop_poll_stuck": _claims_loop_poll,
        "wrong_policy": _claims_wrong_policy,
        "wrong_region": _claims_wrong_region,
        "wrong_deductible": _claims_wrong_deductible,
        "wrong_account": _claims_wrong_account,
    },
    "lab": {
        "healthy": _lab_healthy,
        "flaky": _lab_flaky,
        "legit_replan": _lab_legit_replan,
        "pagination": _lab_pagination,
        "polling_ends": _lab_polling_ends,
        "external_recall": _lab_external_recall,
        "loop_step_varying": _lab_loop_step,
        "loop_tool_in_step": _lab_loop_tool,
        "loop_across_replans": _lab_loop_replans,
        "loop_poll_stuck": _lab_loop_poll,
        "wrong_site": _lab_wrong_site,
        "wrong_assay": _lab_wrong_assay,
        "wrong_volume": _lab_wrong_volume,
    },
    "lease": {
        "healthy": _lease_healthy,
        "flaky_step": _lease_flaky_step,
        "flaky_tool": _lease_flaky_tool,
        "legit_replan": _lease_legit_replan,
        "pagination": _lease_pagination,
        "polling_ends": _lease_polling_ends,
        "external_void": _lease_external_void,
        "loop_step_varying": _lease_loop_step,
        "loop_tool_in_step": _lease_loop_tool,
        "loop_across_replans": _lease_loop_replans,
        "loop_poll_stuck": _lease_loop_poll,
        "wrong_building": _lease_wrong_building,
        "wrong_applicant": _lease_wrong_applicant,
        "wrong_rent": _lease_wrong_rent,
        "wrong_email": _lease_wrong_email,
    },
    "customs": {
        "healthy": _customs_healthy,
        "flaky_step": _customs_flaky_step,
        "flaky_tool": _customs_flaky_tool,
        "legit_replan": _customs_legit_replan,
        "pagination": _customs_pagination,
        "polling_ends": _customs_polling_ends,
        "external_hold": _customs_external_hold,
        "loop_step_varying": _customs_loop_step,
        "loop_tool_in_step": _customs_loop_tool,
        "loop_across_replans": _customs_loop_replans,
        "loop_poll_stuck": _customs_loop_poll,
        "wrong_goods": _customs_wrong_goods,
        "wrong_origin": _customs_wrong_origin,
        "wrong_value": _customs_wrong_value,
        "wrong_account": _customs_wrong_account,
    },
    "venue": {
        "healthy": _venue_healthy,
        "flaky_step": _venue_flaky_step,
        "flaky_tool": _venue_flaky_tool,
        "legit_replan": _venue_legit_replan,
        "pagination": _venue_pagination,
        "polling_ends": _venue_polling_ends,
        "external_strike": _venue_external_strike,
        "loop_step_varying": _venue_loop_step,
        "loop_tool_in_step": _venue_loop_tool,
        "loop_across_replans": _venue_loop_replans,
        "loop_poll_stuck": _venue_loop_poll,
        "wrong_city": _venue_wrong_city,
        "wrong_dates": _venue_wrong_dates,
        "wrong_headcount": _venue_wrong_headcount,
        "wrong_billing": _venue_wrong_billing,
    },
    "fleet": {
        "healthy": _fleet_healthy,
        "flaky_step": _fleet_flaky_step,
        "flaky_tool": _fleet_flaky_tool,
        "legit_replan": _fleet_legit_replan,
        "pagination": _fleet_pagination,
        "polling_ends": _fleet_polling_ends,
        "external_recall": _fleet_external_recall,
        "loop_step_varying": _fleet_loop_step,
        "loop_tool_in_step": _fleet_loop_tool,
        "loop_across_replans": _fleet_loop_revisions,
        "loop_poll_stuck": _fleet_loop_poll,
        "wrong_region": _fleet_wrong_region,
        "wrong_part": _fleet_wrong_part,
        "wrong_van": _fleet_wrong_van,
        "wrong_card": _fleet_wrong_card,
    },
    "solar": {
        "healthy": _solar_healthy,
        "flaky_step": _solar_flaky_step,
        "flaky_tool": _solar_flaky_tool,
        "legit_replan": _solar_legit_replan,
        "pagination": _solar_pagination,
        "polling_ends": _solar_polling_ends,
        "external_hail": _solar_external_hail,
        "loop_step_varying": _solar_loop_step,
        "loop_tool_in_step": _solar_loop_tool,
        "loop_across_replans": _solar_loop_replans,
        "loop_poll_stuck": _solar_loop_poll,
        "wrong_county": _solar_wrong_county,
        "wrong_meter": _solar_wrong_meter,
        "wrong_address": _solar_wrong_address,
        "wrong_loan": _solar_wrong_loan,
    },
    "moving": {
        "healthy": _moving_healthy,
        "flaky_step": _moving_flaky_step,
        "flaky_tool": _moving_flaky_tool,
        "legit_replan": _moving_legit_replan,
        "pagination": _moving_pagination,
        "polling_ends": _moving_polling_ends,
        "external_storm": _moving_external_storm,
        "loop_step_varying": _moving_loop_step,
        "loop_tool_in_step": _moving_loop_tool,
        "loop_across_replans": _moving_loop_replans,
        "loop_poll_stuck": _moving_loop_poll,
        "wrong_city": _moving_wrong_city,
        "wrong_day": _moving_wrong_day,
        "wrong_address": _moving_wrong_address,
        "wrong_card": _moving_wrong_card,
    },
    "grants": {
        "healthy": _grants_healthy,
        "flaky_step": _grants_flaky_step,
        "flaky_tool": _grants_flaky_tool,
        "legit_replan": _grants_legit_replan,
        "pagination": _grants_pagination,
        "polling_ends": _grants_polling_ends,
        "external_freeze": _grants_external_freeze,
        "loop_step_varying": _grants_loop_step,
        "loop_tool_in_step": _grants_loop_tool,
        "loop_across_replans": _grants_loop_replans,
        "loop_poll_stuck": _grants_loop_poll,
        "wrong_field": _grants_wrong_field,
        "wrong_start": _grants_wrong_start,
        "wrong_institution": _grants_wrong_institution,
        "wrong_account": _grants_wrong_account,
    },
    "museum": {
        "healthy": _museum_healthy,
        "flaky_step": _museum_flaky_step,
        "flaky_tool": _museum_flaky_tool,
        "legit_replan": _museum_legit_replan,
        "pagination": _museum_pagination,
        "polling_ends": _museum_polling_ends,
        "external_flood": _museum_external_flood,
        "loop_step_varying": _museum_loop_step,
        "loop_tool_in_step": _museum_loop_tool,
        "loop_across_replans": _museum_loop_replans,
        "loop_poll_stuck": _museum_loop_poll,
        "wrong_country": _museum_wrong_country,
        "wrong_valuation": _museum_wrong_valuation,
        "wrong_venue": _museum_wrong_venue,
        "wrong_account": _museum_wrong_account,
    },
    "marina": {
        "healthy": _marina_healthy,
        "flaky_step": _marina_flaky_step,
        "flaky_tool": _marina_flaky_tool,
        "legit_replan": _marina_legit_replan,
        "pagination": _marina_pagination,
        "polling_ends": _marina_polling_ends,
        "external_gale": _marina_external_gale,
        "loop_step_varying": _marina_loop_step,
        "loop_tool_in_step": _marina_loop_tool,
        "loop_across_replans": _marina_loop_replans,
        "loop_poll_stuck": _marina_loop_poll,
        "wrong_harbor": _marina_wrong_harbor,
        "wrong_start": _marina_wrong_start,
        "wrong_vessel": _marina_wrong_vessel,
        "wrong_card": _marina_wrong_card,
    },
    "harvest": {
        "healthy": _harvest_healthy,
        "flaky_step": _harvest_flaky_step,
        "flaky_tool": _harvest_flaky_tool,
        "legit_replan": _harvest_legit_replan,
        "pagination": _harvest_pagination,
        "polling_ends": _harvest_polling_ends,
        "external_hail": _harvest_external_hail,
        "loop_step_varying": _harvest_loop_step,
        "loop_tool_in_step": _harvest_loop_tool,
        "loop_across_replans": _harvest_loop_replans,
        "loop_poll_stuck": _harvest_loop_poll,
        "wrong_block": _harvest_wrong_block,
        "wrong_day": _harvest_wrong_day,
        "wrong_variety": _harvest_wrong_variety,
        "wrong_card": _harvest_wrong_card,
    },
    "hives": {
        "healthy": _hives_healthy,
        "flaky_step": _hives_flaky_step,
        "flaky_tool": _hives_flaky_tool,
        "legit_replan": _hives_legit_replan,
        "pagination": _hives_pagination,
        "polling_ends": _hives_polling_ends,
        "external_frost": _hives_external_frost,
        "loop_step_varying": _hives_loop_step,
        "loop_tool_in_step": _hives_loop_tool,
        "loop_across_replans": _hives_loop_replans,
        "loop_poll_stuck": _hives_loop_poll,
        "wrong_region": _hives_wrong_region,
        "wrong_day": _hives_wrong_day,
        "wrong_colonies": _hives_wrong_colonies,
        "wrong_account": _hives_wrong_account,
    },
    "foundry": {
        "healthy": _foundry_healthy,
        "flaky_step": _foundry_flaky_step,
        "flaky_tool": _foundry_flaky_tool,
        "legit_replan": _foundry_legit_replan,
        "pagination": _foundry_pagination,
        "polling_ends": _foundry_polling_ends,
        "external_outage": _foundry_external_outage,
        "loop_step_varying": _foundry_loop_step,
        "loop_tool_in_step": _foundry_loop_tool,
        "loop_across_replans": _foundry_loop_replans,
        "loop_poll_stuck": _foundry_loop_poll,
        "wrong_alloy": _foundry_wrong_alloy,
        "wrong_day": _foundry_wrong_day,
        "wrong_weight": _foundry_wrong_weight,
        "wrong_account": _foundry_wrong_account,
    },
    "organ": {
        "healthy": _organ_healthy,
        "flaky_step": _organ_flaky_step,
        "flaky_tool": _organ_flaky_tool,
        "legit_replan": _organ_legit_replan,
        "pagination": _organ_pagination,
        "polling_ends": _organ_polling_ends,
        "external_outage": _organ_external_outage,
        "loop_step_varying": _organ_loop_step,
        "loop_tool_in_step": _organ_loop_tool,
        "loop_across_replans": _organ_loop_replans,
        "loop_poll_stuck": _organ_loop_poll,
        "wrong_metal": _organ_wrong_metal,
        "wrong_day": _organ_wrong_day,
        "wrong_ranks": _organ_wrong_ranks,
        "wrong_account": _organ_wrong_account,
    },
    "arbor": {
        "healthy": _arbor_healthy,
        "flaky_step": _arbor_flaky_step,
        "flaky_tool": _arbor_flaky_tool,
        "legit_replan": _arbor_legit_replan,
        "pagination": _arbor_pagination,
        "polling_ends": _arbor_polling_ends,
        "external_burst": _arbor_external_burst,
        "loop_step_varying": _arbor_loop_step,
        "loop_tool_in_step": _arbor_loop_tool,
        "loop_across_replans": _arbor_loop_replans,
        "loop_poll_stuck": _arbor_loop_poll,
        "wrong_ward": _arbor_wrong_ward,
        "wrong_day": _arbor_wrong_day,
        "wrong_species": _arbor_wrong_species,
        "wrong_po": _arbor_wrong_po,
    },
    "stocking": {
        "healthy": _stocking_healthy,
        "flaky_step": _stocking_flaky_step,
        "flaky_tool": _stocking_flaky_tool,
        "legit_replan": _stocking_legit_replan,
        "pagination": _stocking_pagination,
        "polling_ends": _stocking_polling_ends,
        "external_flood": _stocking_external_flood,
        "loop_step_varying": _stocking_loop_step,
        "loop_tool_in_step": _stocking_loop_tool,
        "loop_across_replans": _stocking_loop_replans,
        "loop_poll_stuck": _stocking_loop_poll,
        "wrong_species": _stocking_wrong_species,
        "wrong_day": _stocking_wrong_day,
        "wrong_reach": _stocking_wrong_reach,
        "wrong_licence": _stocking_wrong_licence,
    },
    # the first half is played once, the second half (the faults) twice in sealed-23
    "refuge": {
        "healthy": _refuge_healthy,
        "flaky_step": _refuge_flaky_step,
        "flaky_tool": _refuge_flaky_tool,
        "legit_replan": _refuge_legit_replan,
        "pagination": _refuge_pagination,
        "polling_ends": _refuge_polling_ends,
        "external_after": _refuge_external_after,
        "no_input_step": _refuge_no_input_step,
        "long_progressing": _refuge_long_progressing,
        "loop_poll_stuck": _refuge_loop_poll,
        "loop_step_varying": _refuge_loop_step,
        "loop_tool_in_step": _refuge_loop_tool,
        "loop_across_replans": _refuge_loop_replans,
        "starved_empty": _refuge_starved_empty,
        "starved_partial": _refuge_starved_partial,
        "starved_crossed": _refuge_starved_crossed,
        "wrong_hut": _refuge_wrong_hut,
        "wrong_season": _refuge_wrong_season,
        "wrong_account": _refuge_wrong_account,
        "wrong_supplier": _refuge_wrong_supplier,
    },
    "seedbank": {
        "loop_step_varying": _seedbank_loop_step,
        "loop_tool_in_step": _seedbank_loop_tool,
        "loop_across_replans": _seedbank_loop_replans,
        "loop_poll_stuck": _seedbank_loop_poll,
        "wrong_taxon": _seedbank_wrong_taxon,
        "wrong_day": _seedbank_wrong_day,
        "wrong_site": _seedbank_wrong_site,
        "wrong_account": _seedbank_wrong_account,
        "healthy": _seedbank_healthy,
        "flaky_step": _seedbank_flaky_step,
        "flaky_tool": _seedbank_flaky_tool,
        "legit_replan": _seedbank_legit_replan,
        "pagination": _seedbank_pagination,
        "polling_ends": _seedbank_polling_ends,
        "external_freezer": _seedbank_external_freezer,
    },
    "wool": {
        "loop_step_varying": _wool_loop_step,
        "loop_tool_in_step": _wool_loop_tool,
        "loop_across_replans": _wool_loop_replans,
        "loop_poll_stuck": _wool_loop_poll,
        "wrong_clip": _wool_wrong_clip,
        "wrong_store": _wool_wrong_store,
        "wrong_sale": _wool_wrong_sale,
        "wrong_account": _wool_wrong_account,
        "healthy": _wool_healthy,
        "flaky_step": _wool_flaky_step,
        "flaky_tool": _wool_flaky_tool,
        "legit_replan": _wool_legit_replan,
        "pagination": _wool_pagination,
        "polling_ends": _wool_polling_ends,
        "external_strike": _wool_external_strike,
    },
    "glazier": {
        "loop_step_varying": _glazier_loop_step,
        "loop_tool_in_step": _glazier_loop_tool,
        "loop_across_replans": _glazier_loop_replans,
        "loop_poll_stuck": _glazier_loop_poll,
        "wrong_window": _glazier_wrong_window,
        "wrong_glass": _glazier_wrong_glass,
        "wrong_day": _glazier_wrong_day,
        "wrong_account": _glazier_wrong_account,
        "healthy": _glazier_healthy,
        "flaky_step": _glazier_flaky_step,
        "flaky_tool": _glazier_flaky_tool,
        "legit_replan": _glazier_legit_replan,
        "pagination": _glazier_pagination,
        "polling_ends": _glazier_polling_ends,
        "external_frost": _glazier_external_frost,
    },
    "chandler": {
        "loop_step_varying": _chandler_loop_step,
        "loop_tool_in_step": _chandler_loop_tool,
        "loop_across_replans": _chandler_loop_replans,
        "loop_poll_stuck": _chandler_loop_poll,
        "wrong_wax": _chandler_wrong_wax,
        "wrong_scent": _chandler_wrong_scent,
        "wrong_day": _chandler_wrong_day,
        "wrong_account": _chandler_wrong_account,
        "healthy": _chandler_healthy,
        "flaky_step": _chandler_flaky_step,
        "flaky_tool": _chandler_flaky_tool,
        "legit_replan": _chandler_legit_replan,
        "pagination": _chandler_pagination,
        "polling_ends": _chandler_polling_ends,
        "external_heatwave": _chandler_external_heatwave,
    },
    "ferry": {
        "loop_step_varying": _ferry_loop_step,
        "loop_tool_in_step": _ferry_loop_tool,
        "loop_across_replans": _ferry_loop_replans,
        "loop_poll_stuck": _ferry_loop_poll,
        "wrong_route": _ferry_wrong_route,
        "wrong_length": _ferry_wrong_length,
        "wrong_account": _ferry_wrong_account,
        "flaky_tool": _ferry_flaky_tool,
        "pagination": _ferry_pagination,
        "polling_ends": _ferry_polling_ends,
        "legit_replan": _ferry_legit_replan,
        "external_storm": _ferry_external_storm,
    },
    "observatory": {
        "loop_step_varying": _observatory_loop_step,
        "loop_tool_in_step": _observatory_loop_tool,
        "loop_across_replans": _observatory_loop_replans,
        "loop_poll_stuck": _observatory_loop_poll,
        "wrong_site": _observatory_wrong_site,
        "wrong_night": _observatory_wrong_night,
        "wrong_grant": _observatory_wrong_grant,
        "flaky_tool": _observatory_flaky_tool,
        "pagination": _observatory_pagination,
        "polling_ends": _observatory_polling_ends,
        "legit_replan": _observatory_legit_replan,
        "external_ash": _observatory_external_ash,
    },
    "reel": {
        "loop_step_varying": _reel_loop_step,
        "loop_tool_in_step": _reel_loop_tool,
        "loop_across_replans": _reel_loop_replans,
        "loop_poll_stuck": _reel_loop_poll,
        "wrong_crew": _reel_wrong_crew,
        "wrong_date": _reel_wrong_date,
        "wrong_account": _reel_wrong_account,
        "flaky_tool": _reel_flaky_tool,
        "pagination": _reel_pagination,
        "polling_ends": _reel_polling_ends,
        "legit_replan": _reel_legit_replan,
        "external_watermain": _reel_external_watermain,
    },
    "quarry": {
        "loop_step_varying": _quarry_loop_step,
        "loop_tool_in_step": _quarry_loop_tool,
        "loop_across_replans": _quarry_loop_replans,
        "loop_poll_stuck": _quarry_loop_poll,
        "wrong_tonnes": _quarry_wrong_tonnes,
        "wrong_day": _quarry_wrong_day,
        "wrong_account": _quarry_wrong_account,
        "flaky_tool": _quarry_flaky_tool,
        "pagination": _quarry_pagination,
        "polling_ends": _quarry_polling_ends,
        "legit_replan": _quarry_legit_replan,
        "external_landslide": _quarry_external_landslide,
    },
    "beacon": {
        "loop_step_varying": _beacon_loop_step,
        "loop_tool_in_step": _beacon_loop_tool,
        "loop_across_replans": _beacon_loop_replans,
        "loop_poll_stuck": _beacon_loop_poll,
        "wrong_lens": _beacon_wrong_lens,
        "wrong_day": _beacon_wrong_day,
        "wrong_account": _beacon_wrong_account,
        "flaky_tool": _beacon_flaky_tool,
        "pagination": _beacon_pagination,
        "polling_ends": _beacon_polling_ends,
        "legit_replan": _beacon_legit_replan,
        "external_lightning": _beacon_external_lightning,
    },
    "turret": {
        "loop_step_varying": _turret_loop_step,
        "loop_tool_in_step": _turret_loop_tool,
        "loop_across_replans": _turret_loop_replans,
        "loop_poll_stuck": _turret_loop_poll,
        "wrong_teeth": _turret_wrong_teeth,
        "wrong_day": _turret_wrong_day,
        "wrong_account": _turret_wrong_account,
        "flaky_tool": _turret_flaky_tool,
        "pagination": _turret_pagination,
        "polling_ends": _turret_polling_ends,
        "legit_replan": _turret_legit_replan,
        "external_frame": _turret_external_frame,
    },
    "kiln": {
        "loop_step_varying": _kiln_loop_step,
        "loop_tool_in_step": _kiln_loop_tool,
        "loop_across_replans": _kiln_loop_replans,
        "loop_poll_stuck": _kiln_loop_poll,
        "wrong_cone": _kiln_wrong_cone,
        "wrong_day": _kiln_wrong_day,
        "wrong_account": _kiln_wrong_account,
        "flaky_tool": _kiln_flaky_tool,
        "pagination": _kiln_pagination,
        "polling_ends": _kiln_polling_ends,
        "legit_replan": _kiln_legit_replan,
        "external_frost": _kiln_external_frost,
    },
    "summit": {
        "loop_task_varying": _summit_loop_task,
        "loop_tool_in_task": _summit_loop_tool,
        "loop_across_replans": _summit_loop_replans,
        "loop_poll_stuck": _summit_loop_poll,
        "wrong_range": _summit_wrong_range,
        "wrong_date": _summit_wrong_date,
        "wrong_account": _summit_wrong_account,
        "flaky_tool": _summit_flaky_tool,
        "pagination": _summit_pagination,
        "polling_ends": _summit_polling_ends,
        "legit_replan": _summit_legit_replan,
        "external_avalanche": _summit_external_avalanche,
    },
    "luthier": {
        "loop_step_varying": _luthier_loop_item,
        "loop_tool_in_step": _luthier_loop_tool,
        "loop_across_replans": _luthier_loop_replans,
        "loop_poll_stuck": _luthier_loop_poll,
        "wrong_species": _luthier_wrong_species,
        "wrong_day": _luthier_wrong_day,
        "flaky_paged_polled": _luthier_flaky_paged_polled,
        "legit_replan_then_burst": _luthier_legit_replan_then_burst,
    },
    "cellar": {
        "loop_step_varying": _cellar_loop_step,
        "loop_tool_in_step": _cellar_loop_tool,
        "loop_across_replans": _cellar_loop_replans,
        "loop_poll_stuck": _cellar_loop_poll,
        "wrong_format": _cellar_wrong_format,
        "wrong_day": _cellar_wrong_day,
        "wrong_account": _cellar_wrong_account,
        "flaky_tool": _cellar_flaky_tool,
        "pagination": _cellar_pagination,
        "polling_ends": _cellar_polling_ends,
        "legit_replan": _cellar_legit_replan,
        "external_heat": _cellar_external_heat,
    },
    "railtour": {
        "loop_step_varying": _railtour_loop_leg,
        "loop_tool_in_step": _railtour_loop_tool,
        "loop_across_replans": _railtour_loop_replans,
        "loop_poll_stuck": _railtour_loop_poll,
        "wrong_ra": _railtour_wrong_ra,
        "wrong_date": _railtour_wrong_date,
        "wrong_account": _railtour_wrong_account,
        "flaky_tool": _railtour_flaky_tool,
        "pagination": _railtour_pagination,
        "polling_ends": _railtour_polling_ends,
        "legit_replan": _railtour_legit_replan,
        "external_fire": _railtour_external_fire,
    },
    "bindery": {
        "loop_op_varying": _bindery_loop_op,
        "loop_tool_in_op": _bindery_loop_tool,
        "loop_across_replans": _bindery_loop_replans,
        "loop_poll_stuck": _bindery_loop_poll,
        "wrong_tannage": _bindery_wrong_tannage,
        "wrong_day": _bindery_wrong_day,
        "wrong_account": _bindery_wrong_account,
        "flaky_tool": _bindery_flaky_tool,
        "pagination": _bindery_pagination,
        "polling_ends": _bindery_polling_ends,
        "legit_replan": _bindery_legit_replan,
        "external_flood": _bindery_external_flood,
    },
    "bigtop": {
        "loop_step_varying": _bigtop_loop_act,
        "loop_tool_in_step": _bigtop_loop_tool,
        "loop_across_replans": _bigtop_loop_replans,
        "loop_poll_stuck": _bigtop_loop_poll,
        "wrong_seats": _bigtop_wrong_seats,
        "wrong_date": _bigtop_wrong_date,
        "wrong_account": _bigtop_wrong_account,
        "flaky_tool": _bigtop_flaky_tool,
        "pagination": _bigtop_pagination,
        "polling_ends": _bigtop_polling_ends,
        "legit_replan": _bigtop_legit_replan,
        "external_gale": _bigtop_external_gale,
    },
    "vinyl": {
        "loop_step_varying": _vinyl_loop_step,
        "loop_tool_in_step": _vinyl_loop_tool,
        "loop_across_replans": _vinyl_loop_replans,
        "loop_poll_stuck": _vinyl_loop_poll,
        "wrong_speed": _vinyl_wrong_speed,
        "wrong_ship_by": _vinyl_wrong_ship_by,
        "wrong_account": _vinyl_wrong_account,
        "flaky_tool": _vinyl_flaky_tool,
        "pagination": _vinyl_pagination,
        "polling_ends": _vinyl_polling_ends,
        "legit_replan": _vinyl_legit_replan,
        "external_boiler": _vinyl_external_boiler,
    },
    "balloon": {
        "loop_step_varying": _balloon_loop_leg,
        "loop_tool_in_step": _balloon_loop_tool,
        "loop_across_replans": _balloon_loop_replans,
        "loop_poll_stuck": _balloon_loop_poll,
        "wrong_county": _balloon_wrong_county,
        "wrong_date": _balloon_wrong_date,
        "wrong_account": _balloon_wrong_account,
        "flaky_tool": _balloon_flaky_tool,
        "pagination": _balloon_pagination,
        "polling_ends": _balloon_polling_ends,
        "legit_replan": _balloon_legit_replan,
        "external_storm": _balloon_external_storm,
    },
    "mural": {
        "loop_step_varying": _mural_loop_step,
        "loop_tool_in_step": _mural_loop_tool,
        "loop_across_replans": _mural_loop_replans,
        "loop_poll_stuck": _mural_loop_poll,
        "wrong_borough": _mural_wrong_borough,
        "wrong_date": _mural_wrong_date,
        "wrong_fund": _mural_wrong_fund,
        "flaky_tool": _mural_flaky_tool,
        "pagination": _mural_pagination,
        "polling_ends": _mural_polling_ends,
        "legit_replan": _mural_legit_replan,
        "external_tagged": _mural_external_tagged,
    },
    "regatta": {
        "loop_step_varying": _regatta_loop_step,
        "loop_tool_in_step": _regatta_loop_tool,
        "loop_across_replans": _regatta_loop_replans,
        "loop_poll_stuck": _regatta_loop_poll,
        "starved_empty": _regatta_starved_empty,
        "starved_partial": _regatta_starved_partial,
        "wrong_day": _regatta_wrong_day,
        "wrong_account": _regatta_wrong_account,
        "flaky_tool": _regatta_flaky_tool,
        "pagination": _regatta_pagination,
        "legit_replan": _regatta_legit_replan,
        "polling_ends": _regatta_polling_ends,
        "external_storm": _regatta_external_storm,
    },
    "fresco": {
        "loop_step_varying": _fresco_loop_stage,
        "loop_tool_in_step": _fresco_loop_tool,
        "loop_across_replans": _fresco_loop_replans,
        "loop_poll_stuck": _fresco_loop_poll,
        "wrong_district": _fresco_wrong_district,
        "wrong_start": _fresco_wrong_start,
        "wrong_fund": _fresco_wrong_fund,
        "flaky": _fresco_flaky,
        "pagination": _fresco_pagination,
        "polling_ends": _fresco_polling_ends,
        "legit_replan": _fresco_legit_replan,
        "external_survey": _fresco_external_survey,
    },
    "busyard": {
        "loop_step_varying": _busyard_loop_leg,
        "loop_tool_in_step": _busyard_loop_tool,
        "loop_across_replans": _busyard_loop_resheets,
        "loop_poll_stuck": _busyard_loop_poll,
        "wrong_zone": _busyard_wrong_zone,
        "wrong_start": _busyard_wrong_start,
        "wrong_account": _busyard_wrong_account,
        "flaky": _busyard_flaky,
        "pagination": _busyard_pagination,
        "polling_ends": _busyard_polling_ends,
        "legit_replan": _busyard_legit_resheet,
        "external_bridge": _busyard_external_bridge,
    },
    "liftline": {
        "loop_step_varying": _liftline_loop_job,
        "loop_tool_in_step": _liftline_loop_tool,
        "loop_across_replans": _liftline_loop_replans,
        "loop_poll_stuck": _liftline_loop_poll,
        "wrong_sector": _liftline_wrong_sector,
        "wrong_opening_day": _liftline_wrong_day,
        "wrong_account": _liftline_wrong_account,
        "flaky": _liftline_flaky,
        "pagination": _liftline_pagination,
        "polling_ends": _liftline_polling_ends,
        "legit_replan": _liftline_legit_replan,
        "external_avalanche": _liftline_external_avalanche,
    },
    "linen": {
        "loop_step_varying": _linen_loop_task,
        "loop_tool_in_step": _linen_loop_tool,
        "loop_across_replans": _linen_loop_replans,
        "loop_poll_stuck": _linen_loop_poll,
        "wrong_site": _linen_wrong_site,
        "wrong_date": _linen_wrong_date,
        "wrong_cost_centre": _linen_wrong_cost_centre,
        "flaky": _linen_flaky,
        "pagination": _linen_pagination,
        "polling_ends": _linen_polling_ends,
        "legit_replan": _linen_legit_replan,
        "external_outbreak": _linen_external_outbreak,
    },
    "brewhouse": {
        "loop_step_varying": _brewhouse_loop_step,
        "loop_tool_in_step": _brewhouse_loop_tool,
        "loop_across_replans": _brewhouse_loop_replans,
        "loop_poll_stuck": _brewhouse_loop_poll,
        "wrong_site": _brewhouse_wrong_site,
        "wrong_day": _brewhouse_wrong_day,
        "wrong_account": _brewhouse_wrong_account,
        "flaky": _brewhouse_flaky,
        "pagination": _brewhouse_pagination,
        "polling_ends": _brewhouse_polling_ends,
        "legit_replan": _brewhouse_legit_replan,
        "external_recall": _brewhouse_external_recall,
    },
    "hauler": {
        "loop_step_varying": _hauler_loop_move,
        "loop_tool_in_step": _hauler_loop_tool,
        "loop_across_replans": _hauler_loop_replans,
        "loop_poll_stuck": _hauler_loop_poll,
        "wrong_district": _hauler_wrong_district,
        "wrong_day": _hauler_wrong_day,
        "wrong_account": _hauler_wrong_account,
        "flaky": _hauler_flaky,
        "pagination": _hauler_pagination,
        "polling_ends": _hauler_polling_ends,
        "legit_replan": _hauler_legit_replan,
        "external_main": _hauler_external_main,
    },
    "chorale": {
        "loop_step_varying": _chorale_loop_task,
        "loop_tool_in_step": _chorale_loop_tool,
        "loop_across_replans": _chorale_loop_replans,
        "loop_poll_stuck": _chorale_loop_poll,
        "wrong_city": _chorale_wrong_city,
        "wrong_date": _chorale_wrong_date,
        "wrong_account": _chorale_wrong_account,
        "flaky": _chorale_flaky,
        "pagination": _chorale_pagination,
        "polling_ends": _chorale_polling_ends,
        "legit_replan": _chorale_legit_replan,
        "external_power": _chorale_external_power,
    },
    "upholstery": {
        "loop_step_varying": _upholstery_loop_stage,
        "loop_tool_in_step": _upholstery_loop_tool,
        "loop_across_replans": _upholstery_loop_replans,
        "loop_poll_stuck": _upholstery_loop_poll,
        "wrong_branch": _upholstery_wrong_branch,
        "wrong_day": _upholstery_wrong_day,
        "wrong_account": _upholstery_wrong_account,
        "flaky": _upholstery_flaky,
        "pagination": _upholstery_pagination,
        "polling_ends": _upholstery_polling_ends,
        "legit_replan": _upholstery_legit_replan,
        "external_breakdown": _upholstery_external_breakdown,
    },
    "hatchery": {
        "loop_step_varying": _hatchery_loop_field,
        "loop_tool_in_step": _hatchery_loop_tool,
        "loop_across_replans": _hatchery_loop_replans,
        "loop_poll_stuck": _hatchery_loop_poll,
        "wrong_river": _hatchery_wrong_river,
        "wrong_day": _hatchery_wrong_day,
        "wrong_account": _hatchery_wrong_account,
        "flaky": _hatchery_flaky,
        "pagination": _hatchery_pagination,
        "polling_ends": _hatchery_polling_ends,
        "legit_replan": _hatchery_legit_replan,
        "external_spate": _hatchery_external_spate,
    },
    "cooperage": {
        "loop_step_varying": _cooperage_loop_process,
        "loop_tool_in_step": _cooperage_loop_tool,
        "loop_across_replans": _cooperage_loop_replans,
        "loop_poll_stuck": _cooperage_loop_poll,
        "wrong_forest": _cooperage_wrong_forest,
        "wrong_day": _cooperage_wrong_day,
        "wrong_account": _cooperage_wrong_account,
        "flaky": _cooperage_flaky,
        "pagination": _cooperage_pagination,
        "polling_ends": _cooperage_polling_ends,
        "legit_replan": _cooperage_legit_replan,
        "external_storm": _cooperage_external_storm,
    },
    "chairlift": {
        "loop_step_varying": _chairlift_loop_step,
        "loop_tool_in_step": _chairlift_loop_tool,
        "loop_across_replans": _chairlift_loop_replans,
        "loop_poll_stuck": _chairlift_loop_poll,
        "wrong_series": _chairlift_wrong_series,
        "wrong_day": _chairlift_wrong_day,
        "wrong_account": _chairlift_wrong_account,
        "flaky": _chairlift_flaky,
        "pagination": _chairlift_pagination,
        "polling_ends": _chairlift_polling_ends,
        "legit_replan": _chairlift_legit_replan,
        "external_lightning": _chairlift_external_lightning,
    },
    "winepress": {
        "loop_step_varying": _winepress_loop_task,
        "loop_tool_in_step": _winepress_loop_tool,
        "loop_across_replans": _winepress_loop_replans,
        "loop_poll_stuck": _winepress_loop_poll,
        "wrong_variety": _winepress_wrong_variety,
        "wrong_day": _winepress_wrong_day,
        "wrong_account": _winepress_wrong_account,
        "flaky": _winepress_flaky,
        "pagination": _winepress_pagination,
        "polling_ends": _winepress_polling_ends,
        "legit_replan": _winepress_legit_replan,
        "external_washout": _winepress_external_washout,
    },
    "menagerie": {
        "loop_step_varying": _menagerie_loop_task,
        "loop_tool_in_step": _menagerie_loop_tool,
        "loop_across_replans": _menagerie_loop_replans,
        "loop_poll_stuck": _menagerie_loop_poll,
        "wrong_taxon": _menagerie_wrong_taxon,
        "wrong_day": _menagerie_wrong_day,
        "wrong_account": _menagerie_wrong_account,
        "flaky": _menagerie_flaky,
        "pagination": _menagerie_pagination,
        "polling_ends": _menagerie_polling_ends,
        "legit_replan": _menagerie_legit_replan,
        "external_border": _menagerie_external_border,
    },
    "playhouse": {
        "loop_step_varying": _playhouse_loop_step,
        "loop_tool_in_step": _playhouse_loop_tool,
        "loop_across_replans": _playhouse_loop_replans,
        "loop_poll_stuck": _playhouse_loop_poll,
        "wrong_piece": _playhouse_wrong_piece,
        "wrong_day": _playhouse_wrong_day,
        "wrong_account": _playhouse_wrong_account,
        "flaky": _playhouse_flaky,
        "pagination": _playhouse_pagination,
        "polling_ends": _playhouse_polling_ends,
        "legit_replan": _playhouse_legit_replan,
        "external_blackout": _playhouse_external_blackout,
    },
    "bakehouse": {
        "loop_step_varying": _bakehouse_loop_task,
        "loop_tool_in_step": _bakehouse_loop_tool,
        "loop_across_replans": _bakehouse_loop_replans,
        "loop_poll_stuck": _bakehouse_loop_poll,
        "wrong_mill": _bakehouse_wrong_mill,
        "wrong_day": _bakehouse_wrong_day,
        "wrong_account": _bakehouse_wrong_account,
        "flaky": _bakehouse_flaky,
        "pagination": _bakehouse_pagination,
        "polling_ends": _bakehouse_polling_ends,
        "legit_replan": _bakehouse_legit_replan,
        "external_closure": _bakehouse_external_closure,
    },
    "surgery": {
        "loop_step_varying": _surgery_loop_step,
        "loop_tool_in_step": _surgery_loop_tool,
        "loop_across_replans": _surgery_loop_replans,
        "loop_poll_stuck": _surgery_loop_poll,
        "wrong_species": _surgery_wrong_species,
        "wrong_day": _surgery_wrong_day,
        "wrong_account": _surgery_wrong_account,
        "flaky": _surgery_flaky,
        "pagination": _surgery_pagination,
        "polling_ends": _surgery_polling_ends,
        "legit_replan": _surgery_legit_replan,
        "external_anaesthesia": _surgery_external_anaesthesia,
    },
    "marathon": {
        "loop_step_varying": _marathon_loop_step,
        "loop_tool_in_step": _marathon_loop_tool,
        "loop_across_replans": _marathon_loop_replans,
        "wrong_zone": _marathon_wrong_zone,
        "wrong_day": _marathon_wrong_day,
        "wrong_account": _marathon_wrong_account,
        "starved_empty": _marathon_starved_empty,
        "starved_partial": _marathon_starved_partial,
        "flaky": _marathon_flaky,
        "paged_polled": _marathon_paged_polled,
        "legit_replan": _marathon_legit_replan,
        "external_heat": _marathon_external_heat,
    },
    "orchard": {
        "loop_step_varying": _orchard_loop_step,
        "loop_tool_in_step": _orchard_loop_tool,
        "loop_across_replans": _orchard_loop_replans,
        "loop_poll_stuck": _orchard_loop_poll,
        "wrong_county": _orchard_wrong_county,
        "wrong_day": _orchard_wrong_day,
        "wrong_account": _orchard_wrong_account,
        "flaky": _orchard_flaky,
        "pagination": _orchard_pagination,
        "polling_ends": _orchard_polling_ends,
        "legit_replan": _orchard_legit_replan,
        "external_hail": _orchard_external_hail,
    },
    "shoot": {
        "loop_step_varying": _shoot_loop_step,
        "loop_tool_in_step": _shoot_loop_tool,
        "loop_across_replans": _shoot_loop_replans,
        "loop_poll_stuck": _shoot_loop_poll,
        "wrong_city": _shoot_wrong_city,
        "wrong_day": _shoot_wrong_day,
        "wrong_account": _shoot_wrong_account,
        "flaky": _shoot_flaky,
        "pagination": _shoot_pagination,
        "polling_ends": _shoot_polling_ends,
        "legit_replan": _shoot_legit_replan,
        "external_surge": _shoot_external_surge,
    },
    "ferrier": {
        "loop_step_varying": _ferrier_loop_step,
        "loop_tool_in_step": _ferrier_loop_tool,
        "loop_across_replans": _ferrier_loop_replans,
        "loop_poll_stuck": _ferrier_loop_poll,
        "wrong_region": _ferrier_wrong_region,
        "wrong_day": _ferrier_wrong_day,
        "wrong_account": _ferrier_wrong_account,
        "flaky": _ferrier_flaky,
        "pagination": _ferrier_pagination,
        "polling_ends": _ferrier_polling_ends,
        "legit_replan": _ferrier_legit_replan,
        "external_abandoned": _ferrier_external_abandoned,
    },
    "ropeway": {
        "loop_step_varying": _ropeway_loop_step,
        "loop_tool_in_step": _ropeway_loop_tool,
        "loop_across_replans": _ropeway_loop_replans,
        "loop_poll_stuck": _ropeway_loop_poll,
        "wrong_line": _ropeway_wrong_line,
        "wrong_day": _ropeway_wrong_day,
        "wrong_budget": _ropeway_wrong_budget,
        "flaky": _ropeway_flaky,
        "pagination": _ropeway_pagination,
        "polling_ends": _ropeway_polling_ends,
        "legit_replan": _ropeway_legit_replan,
        "external_storm": _ropeway_external_storm,
    },
    "assay": {
        "loop_step_varying": _assay_loop_step,
        "loop_tool_in_step": _assay_loop_tool,
        "loop_across_replans": _assay_loop_replans,
        "loop_poll_stuck": _assay_loop_poll,
        "wrong_region": _assay_wrong_region,
        "wrong_day": _assay_wrong_day,
        "wrong_budget": _assay_wrong_budget,
        "flaky": _assay_flaky,
        "pagination": _assay_pagination,
        "polling_ends": _assay_polling_ends,
        "legit_replan": _assay_legit_replan,
        "external_recall": _assay_external_recall,
    },
    "touring": {
        "loop_step_varying": _touring_loop_step,
        "loop_tool_in_step": _touring_loop_tool,
        "loop_across_replans": _touring_loop_replans,
        "loop_poll_stuck": _touring_loop_poll,
        "wrong_region": _touring_wrong_region,
        "wrong_date": _touring_wrong_date,
        "wrong_account": _touring_wrong_account,
        "flaky": _touring_flaky,
        "pagination": _touring_pagination,
        "polling_ends": _touring_polling_ends,
        "legit_replan": _touring_legit_replan,
        "external_closure": _touring_external_closure,
    },
    "kennel": {
        "loop_step_varying": _kennel_loop_step,
        "loop_tool_in_step": _kennel_loop_tool,
        "loop_across_replans": _kennel_loop_replans,
        "loop_poll_stuck": _kennel_loop_poll,
        "wrong_region": _kennel_wrong_region,
        "wrong_day": _kennel_wrong_day,
        "wrong_account": _kennel_wrong_account,
        "flaky": _kennel_flaky,
        "pagination": _kennel_pagination,
        "polling_ends": _kennel_polling_ends,
        "legit_replan": _kennel_legit_replan,
        "external_quarantine": _kennel_external_quarantine,
    },
    "vessel": {
        "loop_step_varying": _vessel_loop_step,
        "loop_tool_in_step": _vessel_loop_tool,
        "loop_across_replans": _vessel_loop_replans,
        "loop_poll_stuck": _vessel_loop_poll,
        "wrong_port": _vessel_wrong_port,
        "wrong_day": _vessel_wrong_day,
        "wrong_grant": _vessel_wrong_grant,
        "flaky": _vessel_flaky,
        "pagination": _vessel_pagination,
        "polling_ends": _vessel_polling_ends,
        "legit_replan": _vessel_legit_replan,
        "external_gale": _vessel_external_gale,
    },
    "florist": {
        "loop_step_varying": _florist_loop_step,
        "loop_tool_in_step": _florist_loop_tool,
        "loop_across_replans": _florist_loop_replans,
        "loop_poll_stuck": _florist_loop_poll,
        "wrong_region": _florist_wrong_region,
        "wrong_day": _florist_wrong_day,
        "wrong_account": _florist_wrong_account,
        "flaky": _florist_flaky,
        "pagination": _florist_pagination,
        "polling_ends": _florist_polling_ends,
        "legit_replan": _florist_legit_replan,
        "external_frost": _florist_external_frost,
    },
    "fieldtrip": {
        "loop_step_varying": _fieldtrip_loop_task,
        "loop_tool_in_step": _fieldtrip_loop_tool,
        "loop_across_replans": _fieldtrip_loop_replans,
        "loop_poll_stuck": _fieldtrip_loop_poll,
        "wrong_day": _fieldtrip_wrong_day,
        "wrong_pickup": _fieldtrip_wrong_pickup,
        "wrong_account": _fieldtrip_wrong_account,
        "flaky": _fieldtrip_flaky,
        "pagination": _fieldtrip_pagination,
        "polling_ends": _fieldtrip_polling_ends,
        "legit_replan": _fieldtrip_legit_replan,
        "external_closure": _fieldtrip_external_closure,
    },
    "sawmill": {
        "loop_step_varying": _sawmill_loop_step,
        "loop_tool_in_step": _sawmill_loop_tool,
        "loop_across_replans": _sawmill_loop_replans,
        "loop_poll_stuck": _sawmill_loop_poll,
        "wrong_yard": _sawmill_wrong_yard,
        "wrong_day": _sawmill_wrong_day,
        "wrong_account": _sawmill_wrong_account,
        "flaky": _sawmill_flaky,
        "pagination": _sawmill_pagination,
        "polling_ends": _sawmill_polling_ends,
        "legit_replan": _sawmill_legit_replan,
        "external_landslip": _sawmill_external_landslip,
    },
    "signalbox": {
        "loop_step_varying": _signalbox_loop_step,
        "loop_tool_in_step": _signalbox_loop_tool,
        "loop_across_replans": _signalbox_loop_replans,
        "loop_poll_stuck": _signalbox_loop_poll,
        "wrong_section": _signalbox_wrong_section,
        "wrong_night": _signalbox_wrong_night,
        "wrong_cost_centre": _signalbox_wrong_cost_centre,
        "flaky": _signalbox_flaky,
        "pagination": _signalbox_pagination,
        "polling_ends": _signalbox_polling_ends,
        "legit_replan": _signalbox_legit_replan,
        "external_theft": _signalbox_external_theft,
    },
    "pantry": {
        "loop_step_varying": _pantry_loop_job,
        "loop_tool_in_step": _pantry_loop_tool,
        "loop_across_replans": _pantry_loop_replans,
        "loop_poll_stuck": _pantry_loop_poll,
        "wrong_area": _pantry_wrong_area,
        "wrong_day": _pantry_wrong_day,
        "wrong_fund": _pantry_wrong_fund,
        "flaky": _pantry_flaky,
        "pagination": _pantry_pagination,
        "polling_ends": _pantry_polling_ends,
        "legit_replan": _pantry_legit_replan,
        "external_recall": _pantry_external_recall,
    },
    "tannery": {
        "loop_step_varying": _tannery_loop_step,
        "loop_tool_in_step": _tannery_loop_tool,
        "loop_across_replans": _tannery_loop_replans,
        "loop_poll_stuck": _tannery_loop_poll,
        "wrong_origin": _tannery_wrong_origin,
        "wrong_day": _tannery_wrong_day,
        "wrong_account": _tannery_wrong_account,
        "flaky": _tannery_flaky,
        "pagination": _tannery_pagination,
        "polling_ends": _tannery_polling_ends,
        "legit_replan": _tannery_legit_replan,
        "external_quarantine": _tannery_external_quarantine,
    },
    "ferrule": {
        "loop_step_varying": _ferrule_loop_task,
        "loop_tool_in_step": _ferrule_loop_tool,
        "loop_across_replans": _ferrule_loop_replans,
        "loop_poll_stuck": _ferrule_loop_poll,
        "wrong_branch": _ferrule_wrong_branch,
        "wrong_day": _ferrule_wrong_day,
        "wrong_account": _ferrule_wrong_account,
        "flaky": _ferrule_flaky,
        "pagination": _ferrule_pagination,
        "polling_ends": _ferrule_polling_ends,
        "legit_replan": _ferrule_legit_replan,
        "external_notice": _ferrule_external_notice,
    },
    "sequencer": {
        "loop_step_varying": _sequencer_loop_rule,
        "loop_tool_in_step": _sequencer_loop_tool,
        "loop_across_replans": _sequencer_loop_replans,
        "loop_poll_stuck": _sequencer_loop_poll,
        "wrong_site": _sequencer_wrong_site,
        "wrong_day": _sequencer_wrong_day,
        "wrong_account": _sequencer_wrong_account,
        "flaky": _sequencer_flaky,
        "pagination": _sequencer_pagination,
        "polling_ends": _sequencer_polling_ends,
        "legit_replan": _sequencer_legit_replan,
        "external_flowcell": _sequencer_external_flowcell,
    },
    "caravan": {
        "loop_step_varying": _caravan_loop_state,
        "loop_tool_in_step": _caravan_loop_tool,
        "loop_across_replans": _caravan_loop_replans,
        "loop_poll_stuck": _caravan_loop_poll,
        "wrong_region": _caravan_wrong_region,
        "wrong_day": _caravan_wrong_day,
        "wrong_card": _caravan_wrong_card,
        "flaky": _caravan_flaky,
        "pagination": _caravan_pagination,
        "polling_ends": _caravan_polling_ends,
        "legit_replan": _caravan_legit_replan,
        "external_storm": _caravan_external_storm,
    },
    "planetarium": {
        "loop_step_varying": _planetarium_loop_action,
        "loop_tool_in_step": _planetarium_loop_tool,
        "loop_across_replans": _planetarium_loop_replans,
        "loop_poll_stuck": _planetarium_loop_poll,
        "wrong_dome": _planetarium_wrong_dome,
        "wrong_date": _planetarium_wrong_date,
        "wrong_account": _planetarium_wrong_account,
        "flaky": _planetarium_flaky,
        "pagination": _planetarium_pagination,
        "polling_ends": _planetarium_polling_ends,
        "legit_replan": _planetarium_legit_replan,
        "external_snow": _planetarium_external_snow,
    },
    "infirmary": {
        "loop_step_varying": _infirmary_loop_task,
        "loop_tool_in_step": _infirmary_loop_tool,
        "loop_across_replans": _infirmary_loop_replans,
        "loop_poll_stuck": _infirmary_loop_poll,
        "wrong_plate": _infirmary_wrong_plate,
        "wrong_day": _infirmary_wrong_day,
        "wrong_account": _infirmary_wrong_account,
        "flaky": _infirmary_flaky,
        "pagination": _infirmary_pagination,
        "polling_ends": _infirmary_polling_ends,
        "legit_replan": _infirmary_legit_replan,
        "external_breakfast": _infirmary_external_breakfast,
    },
    "bookmobile": {
        "loop_step_varying": _bookmobile_loop_step,
        "loop_tool_in_step": _bookmobile_loop_tool,
        "loop_across_replans": _bookmobile_loop_replans,
        "loop_poll_stuck": _bookmobile_loop_poll,
        "wrong_depot": _bookmobile_wrong_depot,
        "wrong_day": _bookmobile_wrong_day,
        "wrong_code": _bookmobile_wrong_code,
        "flaky": _bookmobile_flaky,
        "pagination": _bookmobile_pagination,
        "polling_ends": _bookmobile_polling_ends,
        "legit_replan": _bookmobile_legit_replan,
        "external_flood": _bookmobile_external_flood,
    },
    "manuscript": {
        "loop_step_varying": _manuscript_loop_step,
        "loop_tool_in_step": _manuscript_loop_tool,
        "loop_across_replans": _manuscript_loop_replans,
        "loop_poll_stuck": _manuscript_loop_poll,
        "wrong_library": _manuscript_wrong_library,
        "wrong_day": _manuscript_wrong_day,
        "wrong_account": _manuscript_wrong_account,
        "flaky": _manuscript_flaky,
        "pagination": _manuscript_pagination,
        "polling_ends": _manuscript_polling_ends,
        "legit_replan": _manuscript_legit_replan,
        "external_strike": _manuscript_external_strike,
    },
    "vineyard": {
        "loop_step_varying": _vineyard_loop_step,
        "loop_tool_in_step": _vineyard_loop_tool,
        "loop_across_replans": _vineyard_loop_replans,
        "loop_poll_stuck": _vineyard_loop_poll,
        "wrong_parcel": _vineyard_wrong_parcel,
        "wrong_day": _vineyard_wrong_day,
        "wrong_account": _vineyard_wrong_account,
        "flaky": _vineyard_flaky,
        "pagination": _vineyard_pagination,
        "polling_ends": _vineyard_polling_ends,
        "legit_replan": _vineyard_legit_replan,
        "external_outage": _vineyard_external_outage,
    },
    "tailor": {
        "loop_step_varying": _tailor_loop_step,
        "loop_tool_in_step": _tailor_loop_tool,
        "loop_across_replans": _tailor_loop_replans,
        "loop_poll_stuck": _tailor_loop_poll,
        "wrong_mill": _tailor_wrong_mill,
        "wrong_day": _tailor_wrong_day,
        "wrong_account": _tailor_wrong_account,
        "flaky": _tailor_flaky,
        "pagination": _tailor_pagination,
        "polling_ends": _tailor_polling_ends,
        "legit_replan": _tailor_legit_replan,
        "external_flood": _tailor_external_flood,
    },
    "lighthouse": {
        "loop_step_varying": _lighthouse_loop_step,
        "loop_tool_in_step": _lighthouse_loop_tool,
        "loop_across_replans": _lighthouse_loop_replans,
        "loop_poll_stuck": _lighthouse_loop_poll,
        "wrong_motor": _lighthouse_wrong_motor,
        "wrong_day": _lighthouse_wrong_day,
        "wrong_account": _lighthouse_wrong_account,
        "flaky": _lighthouse_flaky,
        "pagination": _lighthouse_pagination,
        "polling_ends": _lighthouse_polling_ends,
        "legit_replan": _lighthouse_legit_replan,
        "external_gale": _lighthouse_external_gale,
    },
}


# Splits whose few seeds per agent start halfway through its scenarios (where the faults are)
# rather than at its healthy ones.
FROM_MIDDLE = {
    "sealed7",
    "sealed8",
    "sealed9",
    "sealed10",
    "sealed11",
    "sealed12",
    "sealed13",
    "sealed14",
    "sealed15",
    "sealed16",
    "sealed17",
    "sealed18",
    "sealed19",
    "sealed20",
    "sealed21",
    "sealed22",
    "sealed23",
}


def scenarios(agent: str, split: str) -> list[Label]:
    """The labelled runs of one agent in one split; scenario ``i mod n`` for the i-th seed
    (``(i + n // 2) mod n`` in the splits of ``FROM_MIDDLE``)."""
    names = list(SCENARIOS[agent])
    first = len(names) // 2 if split in FROM_MIDDLE else 0
    out = []
    for i, seed in enumerate(SPLITS[split].get(agent, ())):
        name = names[(i + first) % len(names)]
        rng = random.Random(f"{agent}/{seed}")
        kind, step, trap, params = SCENARIOS[agent][name](rng)
        params["seed"] = seed
        out.append(
            Label(f"{agent}-{split}-{i:03d}", agent, split, seed, name, kind, step, trap, params)
        )
    return out


def all_labels() -> list[Label]:
    """Every labelled run of the corpus, dev first."""
    return [lab for split in SPLITS for agent in SPLITS[split] for lab in scenarios(agent, split)]


def read_labels(path: Path = LABELS_FILE) -> list[Label]:
    """The committed labels (written before any detector was run on the corpus)."""
    with path.open(encoding="utf-8") as f:
        return [Label(**json.loads(line)) for line in f if line.strip()]


def write_labels(path: Path = LABELS_FILE) -> int:
    """Write every label to ``path`` (one JSON object a line); the number written."""
    labels = all_labels()
    path.write_text("".join(json.dumps(lab.to_dict(), sort_keys=True) + "\n" for lab in labels))
    return len(labels)
