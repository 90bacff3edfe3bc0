"""The conformance suite's agents: one module per source, each ``run(provider, base_url,
scenarios, mark)``; run one with ``python -m tests.conformance.agents SOURCE``. A source in
:data:`JS_SOURCES` is a Node.js script instead (same environment, arguments and output)."""

SOURCES = (
    "openinference_openai",
    "openinference_langgraph",
    "openllmetry_openai",
    "pydantic_ai",
    "pydantic_ai_typed",
    "openai_agents",
    "genai_semconv",
    "genai_grpc",
    "openllmetry_langgraph",
    "openinference_smolagents",
    "openinference_smolagents_planning",
    "openinference_plan_execute",
    "langfuse_sdk",
    "mlflow_tracing",
    "logfire_sdk",
    "autogen_agentchat",
    "strands_agents",
    "griptape_agents",
    "burr_agents",
    "litellm_otel",
    "vercel_ai",
)
"""Every source, in the order the suite runs them."""

JS_SOURCES = {"vercel_ai": "tests/conformance/js/vercel_ai.mjs"}
"""The sources written in JavaScript: their script, run by ``node`` from the repository root
(its packages: tests/conformance/js/package-lock.json, installed by ``make js``)."""
