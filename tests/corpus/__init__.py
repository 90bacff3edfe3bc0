"""An independent, labelled corpus of agent runs for scoring the detectors (see README.md).

>>> len(read_labels()) >= 150
True
"""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.sdk.trace import TracerProvider

from . import (
    analyst,
    arbor,
    assay,
    bakehouse,
    balloon,
    beacon,
    bigtop,
    bindery,
    bookmobile,
    brewhouse,
    busyard,
    caravan,
    cellar,
    chairlift,
    chandler,
    chorale,
    claims,
    cooperage,
    customs,
    etl,
    ferrier,
    ferrule,
    ferry,
    fieldtrip,
    fleet,
    florist,
    foundry,
    fresco,
    glazier,
    grants,
    harvest,
    hatchery,
    hauler,
    hives,
    infirmary,
    kennel,
    kiln,
    lab,
    lease,
    lighthouse,
    linen,
    luthier,
    manuscript,
    marathon,
    marina,
    menagerie,
    moving,
    mural,
    museum,
    observatory,
    oncall,
    orchard,
    organ,
    pantry,
    planetarium,
    playhouse,
    quarry,
    railtour,
    refuge,
    refund,
    regatta,
    release,
    restock,
    ropeway,
    sawmill,
    seedbank,
    sequencer,
    shoot,
    signalbox,
    solar,
    stocking,
    summit,
    support,
    surgery,
    tailor,
    tannery,
    touring,
    travel,
    turret,
    upholstery,
    venue,
    vessel,
    vineyard,
    vinyl,
    winepress,
    wool,
)
from ._labels import KINDS, LABELS_FILE, Label, all_labels, read_labels, scenarios, write_labels

AGENTS = {"travel": travel.run, "support": support.run}
"""SDK-instrumented agents (planscope decorators, planscope context managers)."""


def play(labels: Iterable[Label], provider: TracerProvider) -> dict[str, str]:
    """Run every labelled scenario with spans going to ``provider``; run name -> trace id.

    The SDK agents go through ``planscope.configure(tracer_provider=provider)``, the plain
    OpenTelemetry agent through ``provider.get_tracer``, the framework agent through
    OpenInference's instrumentor and tracer on ``provider`` (against a fake model server), the
    Traceloop-convention and pydantic-ai-style agents through ``provider.get_tracer``, the
    analyst (the OpenAI Agents SDK) through OpenInference's openai-agents instrumentor on
    ``provider``, the oncall LangGraph graph through OpenLLMetry's LangChain instrumentor, the
    claims agent through pydantic-ai's own instrumentation on ``provider``, the lab agent
    (smolagents) through OpenInference's smolagents instrumentor on ``provider``, the lease
    agent (Agno) through OpenInference's Agno instrumentor on ``provider``, the customs agent
    (DSPy) through OpenInference's DSPy instrumentor on ``provider``, the venue agent
    (Haystack) through OpenInference's Haystack instrumentor on ``provider``, the fleet agent
    (Semantic Kernel) through its own diagnostics and the solar agent (Microsoft Agent
    Framework) through its own instrumentation, both relayed from the global tracer provider to
    ``provider``, the moving agent through the Langfuse SDK's observations, its client's tracer
    provider relayed to ``provider``, the grants agent through the Logfire SDK's spans and logs,
    its additional span processor a relay to ``provider``'s processors, the museum agent
    through MLflow Tracing, the spans MLflow exports through OTLP relayed to ``provider``, the
    marina LangGraph graph through OpenInference's LangChain instrumentor on ``provider``, the
    harvest app through OpenLLMetry's OpenAI instrumentor and its own plain spans on
    ``provider``, the hives Magentic-One team through AutoGen's own tracing (its runtime on
    ``provider``, autogen-core's GenAI spans relayed from the global tracer provider), the
    foundry Strands Agents through Strands' own tracing (relayed from the global provider), the
    organ Griptape Agents through Griptape's own OpenTelemetry driver (its provider's one
    processor a relay to ``provider``'s), the arbor Burr applications through Burr's own
    OpenTelemetry bridge (a hook of each application, on a tracer of ``provider``), the stocking
    app through LiteLLM's own OpenTelemetry callback on ``provider`` (in LiteLLM's callback
    lists only while it plays) and its own plain spans, the refuge agent through the planscope
    SDK's decorators on asyncio (``planscope.configure(tracer_provider=provider)``), the seedbank
    app through its own spans written by hand as the GenAI conventions say
    (``provider.get_tracer``), the wool Plan-and-Execute graph through OpenInference's LangChain
    instrumentor on ``provider`` and its own root span per job, the glazier Plan-and-Execute graph
    through OpenLLMetry's LangChain instrumentor on ``provider`` and its own root span per job,
    the chandler LlamaIndex Workflow through OpenInference's LlamaIndex instrumentor on
    ``provider`` and its own root span per order, the ferry OpenAI Agents SDK desks through
    Logfire's openai-agents instrumentation (a local Logfire instance whose additional span
    processor relays to ``provider``'s processors), the observatory LlamaIndex AgentWorkflow
    through OpenLLMetry's LlamaIndex instrumentor on ``provider`` and its own root span per run,
    the quarry OpenAI Agents SDK dispatcher and desks (handoffs) through OpenLLMetry's
    openai-agents instrumentor on ``provider`` and its own root span per job, the beacon
    smolagents keeper (planning steps) and its managed crew through OpenInference's smolagents
    instrumentor on ``provider`` and its own root span per job, the turret pydantic-ai foreman
    and its delegate agents through pydantic-ai's own instrumentation converted by OpenInference's
    pydantic-ai span processor (on a provider of the play's own whose spans go on to
    ``provider``'s processors) and its own root span per job, the summit LangGraph DAG planner
    (parallel ``Send`` branches) through OpenInference's LangChain instrumentor on ``provider``
    and its own root span per job, the surgery app (LangGraph's Functional API: an entrypoint, a
    plan task and an execute task per step attempt) through OpenInference's LangChain
    instrumentor on ``provider`` and its own plain spans (root, check, watch), the kiln app (the
    Anthropic SDK with tool use, by hand) through OpenInference's Anthropic instrumentor on
    ``provider`` and its own spans through OpenInference's tracer (against a fake Messages API
    server), the cellar
    app (the Google Gen AI SDK with function calling, by hand) through OpenInference's
    google-genai instrumentor on ``provider`` and its own plain OpenTelemetry spans (against a
    fake Gemini API server), the
    luthier LangChain 1.x agent (``create_agent`` with the to-do middleware and a bench-hand
    sub-agent per item) through OpenLLMetry's LangChain instrumentor on ``provider`` and its own
    root span per commission, the railtour app (the OpenAI Responses API with function calling,
    by hand) through OpenInference's OpenAI instrumentor on ``provider`` and its own plain
    OpenTelemetry spans (against a fake Responses API server), the vinyl app (Chat Completions
    by hand, its tools on an MCP server run over stdio) through OpenInference's MCP and OpenAI
    instrumentors on ``provider``, its own spans through OpenInference's tracer and the MCP
    server process's own spans, read back from the OTLP JSON lines it writes, the bigtop app (the
    Amazon Bedrock Converse API with tool use, by hand with boto3) through OpenInference's Bedrock
    instrumentor on ``provider`` and its own plain OpenTelemetry spans (against a fake Bedrock
    Runtime API server), the bindery app (Mistral's SDK with structured output and function
    calling, by hand) through OpenLLMetry's Mistral instrumentor on ``provider`` and its own spans
    as traceloop-sdk's decorators write them (against a fake Mistral API server), the regatta app
    (the planscope SDK's decorators in a synchronous app whose steps run in a thread pool, its
    tools on an MCP server over streamable HTTP in this process) through planscope, OpenInference's
    MCP and OpenAI instrumentors and the server's own spans on ``provider``, the balloon AutoGen
    AgentChat team (a ``SelectorGroupChat``) through OpenInference's autogen-agentchat
    instrumentor on ``provider`` and its own spans through a tracer of ``provider``, the mural
    app (AG2 1.x agents) through AG2's own ``TelemetryMiddleware`` on ``provider`` and its own
    spans through a tracer of ``provider``, the fresco app (Chat Completions with function
    calling, by hand) through the official OpenTelemetry GenAI instrumentation
    (``opentelemetry-instrumentation-openai-v2``) on ``provider`` and its own spans written as the
    GenAI conventions name them, the linen app (LangChain 1.x: a structured-output planner and a
    ``create_agent`` runner) through Langfuse's LangChain callback handler on moving's Langfuse
    client, its tracer provider relayed to ``provider``, the busyard LangGraph supervisor app
    (``create_supervisor``) through LangSmith's OpenTelemetry export (LangChain's tracer on the
    environment LangSmith reads, its client's tracer taken from the global provider, relayed to
    ``provider``) and its own spans through a tracer of ``provider``, the hauler app (a
    pydantic-graph state machine running pydantic-ai agents) through the global Logfire
    (``instrument_pydantic_ai``, pydantic-graph's own spans, the app's ``logfire.span`` spans), its
    extra span processor handing each span to ``provider``'s processors, the brewhouse Haystack app
    (a ``Pipeline`` planner, an ``Agent`` per step attempt) through Haystack's own OpenTelemetry
    tracer (``opentelemetry-haystack``'s ``OpenTelemetryTracer`` on a tracer of ``provider``,
    content tracing on, both as they were after) and its own spans through a tracer of
    ``provider``, the marathon asyncio app through the SDK's context managers
    (``planscope.configure(tracer_provider=provider)``) and OpenLLMetry's OpenAI instrumentor on
    ``provider`` (its ``AsyncOpenAI`` calls), the shoot app through the Traceloop SDK
    (``Traceloop.init`` once per process on a private tracer provider whose exporter hands each
    span to ``provider``'s processors, its decorators on the app's functions, the OpenAI
    instrumentor it turns on relayed to that provider through the global relay while the play
    runs), the orchard Agno app through OpenLLMetry's Agno and OpenAI instrumentors on
    ``provider`` and its own spans through a tracer of ``provider``, the ropeway app (the
    Anthropic SDK with its tools on an MCP server over stdio) through OpenLLMetry's Anthropic and
    MCP instrumentors on ``provider`` (uninstrumented after, what the MCP instrumentor leaves
    wrapped put back by the play) and its own plain spans, the ferrier LlamaIndex app through
    LlamaIndex's native OpenTelemetry integration (``LlamaIndexOpenTelemetry(...)
    .start_registering()``: its span and event handlers on LlamaIndex's root dispatcher while the
    play runs, its tracer the global relay's, handing spans to ``provider``), the touring app
    (LiteLLM called by hand) through OpenInference's LiteLLM instrumentor on ``provider``
    (uninstrumented after) and its own plain spans through a tracer of ``provider``, the kennel
    OpenAI Agents SDK planner and runner through OpenLLMetry's openai-agents instrumentor on
    ``provider`` (the SDK's trace provider swapped for the play's own and put back, as quarry's)
    and its own plain spans through a tracer of ``provider``, the assay app (the
    Google Gen AI SDK by hand, automatic function calling on) through the official OpenTelemetry
    google-genai instrumentation on ``provider`` (uninstrumented after, the environment it reads
    and sets put back) and its own plain spans, the vessel app (the Amazon Bedrock Converse API by
    hand with boto3) through OpenLLMetry's Bedrock instrumentor on ``provider`` (uninstrumented
    after: bigtop's clients, made under OpenInference's, are not wrapped by it) and its own plain
    spans through a tracer of ``provider``, the florist app (the Ollama Python client by
    hand, against the corpus's fake Ollama server) through OpenLLMetry's Ollama instrumentor on
    ``provider`` (uninstrumented after, the ``Client._request`` wrappers its uninstrument leaves
    put back by the play) and its own plain spans through a tracer of ``provider``, the
    fieldtrip app (the Groq Python SDK by hand) through OpenInference's Groq instrumentor on
    ``provider`` (uninstrumented after) and its own OpenInference-kind spans through a tracer of
    ``provider``, the sawmill app (the OpenAI Python client by hand, no instrumentor) through its
    own GenAI telemetry, ``opentelemetry-util-genai``'s ``TelemetryHandler`` on ``provider`` (the
    content-capture switch it reads set for the play and put back) and its own plain spans, the
    signalbox OpenAI Agents SDK planner and runner through OpenInference's openai-agents
    instrumentor on ``provider`` (as analyst's: its exclusive processor in the SDK's place while
    the play runs, uninstrumented after) and its own plain spans through a tracer of
    ``provider``, the pantry app (the Cohere Python SDK v2 by hand, against the corpus's fake
    Cohere server) through OpenLLMetry's Cohere instrumentor on ``provider`` (its dependency
    check skipped, uninstrumented after) and its own plain spans through a tracer of
    ``provider``, the tannery app (the Anthropic SDK by hand, against the corpus's fake Messages
    API) through a local Logfire instance (``instrument_anthropic`` on its client, the app's
    ``logfire.span`` spans and logs) whose additional span processor hands each span to
    ``provider``'s processors, the ferrule LangGraph app through MLflow's LangChain autologging
    (museum's MLflow tracer provider, relayed to ``provider``; autologging off again after) and
    its own ``mlflow.start_span`` spans, the chorale DSPy program (a ChainOfThought planner, a
    ReAct task runner) through MLflow's DSPy autologging (its callback on DSPy's settings for the
    play, removed after) and its own ``mlflow.start_span`` spans, on the museum agent's MLflow
    tracer provider relayed to ``provider``, the caravan app (``AsyncOpenAI`` by hand, a Step
    Functions state machine's parallel branches run concurrently) through MLflow's OpenAI
    autologging and its own MLflow spans on the same MLflow provider, with MLflow's GenAI
    semantic-convention translation on for the play: its own relay after MLflow's OTLP processor
    hands ``provider`` each span as that processor translates it, the sequencer Haystack app (a
    planner ``Pipeline``, an ``Agent`` per rule attempt) through MLflow's Haystack span processor
    (Haystack's OpenTelemetry tracer on a provider of the play's own whose one processor hands
    each span to museum's MLflow provider, relayed to ``provider``; Haystack's tracer put back
    after) and its own ``mlflow.start_span`` spans, the hatchery smolagents app (a planner and a
    runner ``ToolCallingAgent``) through MLflow's smolagents autologging (smolagents' agent runs
    and tool calls patched for the play, unpatched after) and its own ``mlflow.start_span``
    spans, on the same MLflow tracer provider, the upholstery LlamaIndex app (a planner
    ``achat`` call, a ``FunctionAgent`` per stage attempt read through its event stream) through
    MLflow's LlamaIndex autologging (MLflow's handlers on LlamaIndex's root dispatcher for the
    play, taken off after) and its own ``mlflow.start_span`` spans, on the same MLflow provider,
    the planetarium app (the Google Gen AI SDK by hand, the executor's turns streamed with
    ``generate_content_stream``) through OpenLLMetry's Google Generative AI instrumentor on
    ``provider`` (uninstrumented after) and its own plain spans through a tracer of ``provider``,
    the cooperage Agno app (a ``Team`` whose leader delegates to a planner and a cooper member)
    through MLflow's Agno autologging (OpenInference's Agno instrumentor on MLflow's tracer for
    the play, uninstrumented after) and its own ``mlflow.start_span`` spans, on the same MLflow
    tracer provider as the other MLflow apps, the winepress Pydantic AI app (a planner ``Agent``
    with a structured output, a cellarhand ``Agent`` run per task attempt) through MLflow's
    Pydantic AI autologging (disabled after the play) and its own ``mlflow.start_span`` spans, on
    the same MLflow tracer provider, the bookmobile Strands Agents app (a planner
    ``Agent``, an executor ``Agent`` per step attempt) through MLflow's Strands autologging (its
    span processor on the provider the global relay hands Strands' spans to for the play, taken
    off after) and its own ``mlflow.start_span`` spans, on the same MLflow tracer provider, the
    menagerie OpenAI Agents SDK app (a planner ``Agent`` answering an Airflow DAG file, a runner
    ``Agent`` per task try) through MLflow's OpenAI autologging (``AgentRunner.run`` patched and
    MLflow's processor on a fresh SDK trace provider for the play, the previous provider put back
    and autologging off after) and its own ``mlflow.start_span`` spans, on the same MLflow tracer
    provider, the bakehouse AutoGen AgentChat app (a planner ``AssistantAgent`` answering a
    todo.txt file, a baker ``AssistantAgent`` with ``FunctionTool``\\ s per task attempt) through
    MLflow's AutoGen autologging (disabled after the play) and its own ``mlflow.start_span`` and
    ``mlflow.trace`` spans, on the same MLflow tracer provider, the playhouse Semantic Kernel app
    (a planner ``ChatCompletionAgent`` answering a DOT digraph, a crew ``ChatCompletionAgent`` with
    a kernel-function plugin per step attempt) through Semantic Kernel's own diagnostics, the
    global relay handing its spans to the same MLflow tracer provider for the play, and its own
    ``mlflow.start_span`` spans. The vineyard app (the OpenAI Python SDK by hand: a planner call
    answering a protobuf text-format plan, an executor conversation with function calling per
    step attempt) plays through OpenLLMetry's OpenAI instrumentor, content tracing on, and its own
    plain OpenTelemetry spans on ``provider`` (uninstrumented and unwrapped after, as harvest's).
    The tailor app (the openai client by hand: a planner
    ``chat.completions.parse`` call whose structured output is a pydantic ``Plan``, an executor
    conversation with function calling per step attempt) plays through OpenInference's OpenAI
    instrumentor on ``provider`` (uninstrumented after) and one root span of its own per order.
    The lighthouse app (the Groq Python SDK by hand, a planner call
    answering a Mermaid gantt chart, an executor conversation per step attempt) plays through
    OpenLLMetry's Groq instrumentor on ``provider`` (uninstrumented after) and its own plain spans
    through a tracer of ``provider``.

    The liftline Google ADK app (a planner ``LlmAgent`` and a ``LoopAgent`` crew) plays through
    OpenInference's Google ADK instrumentor on ``provider`` (which swaps ADK's own tracers for
    the play) and its own root span per opening; the reel Google ADK agent plays last, through
    ADK's own tracing (its tracer on the global provider, relayed to ``provider``). Both are
    imported only when they play (ADK imports google-cloud-aiplatform: seconds on every import of
    the corpus otherwise).
    """
    import planscope

    planscope.configure(tracer_provider=provider)
    tracer = provider.get_tracer("etl-agent")
    out = {}
    framework, traceloop, pydantic, agents_sdk, langgraph = [], [], [], [], []
    pydantic_ai, smol, agno, dspy, haystack, kernel, maf = [], [], [], [], [], [], []
    langfuse: list[Label] = []
    logfire: list[Label] = []
    mlflow_tracing: list[Label] = []
    openinference_langgraph: list[Label] = []
    openllmetry_openai: list[Label] = []
    autogen: list[Label] = []
    strands: list[Label] = []
    griptape: list[Label] = []
    burr: list[Label] = []
    litellm: list[Label] = []
    sdk_async: list[Label] = []
    genai_by_hand: list[Label] = []
    plan_and_execute: list[Label] = []
    plan_and_execute_openllmetry: list[Label] = []
    llama_index_workflow: list[Label] = []
    agents_sdk_logfire: list[Label] = []
    llama_index_agents: list[Label] = []
    google_adk: list[Label] = []
    agents_sdk_openllmetry: list[Label] = []
    smol_planning: list[Label] = []
    pydantic_ai_delegation: list[Label] = []
    langgraph_dag: list[Label] = []
    langgraph_functional: list[Label] = []
    anthropic_sdk: list[Label] = []
    google_genai_sdk: list[Label] = []
    langchain_todos: list[Label] = []
    responses_api: list[Label] = []
    mistral_sdk: list[Label] = []
    bedrock_converse: list[Label] = []
    mcp_tools: list[Label] = []
    agentchat_selector: list[Label] = []
    sdk_threads_mcp: list[Label] = []
    genai_instrumentor: list[Label] = []
    ag2_agents: list[Label] = []
    langgraph_supervisor: list[Label] = []
    langfuse_langchain: list[Label] = []
    traceloop_sdk: list[Label] = []
    llama_index_otel: list[Label] = []
    anthropic_mcp_openllmetry: list[Label] = []
    agents_sdk_kennel: list[Label] = []
    agents_sdk_markdown: list[Label] = []
    agno_openllmetry: list[Label] = []
    adk_openinference: list[Label] = []
    graph_logfire: list[Label] = []
    sdk_asyncio_openllmetry: list[Label] = []
    genai_sdk_otel: list[Label] = []
    haystack_tracer: list[Label] = []
    litellm_openinference: list[Label] = []
    bedrock_openllmetry: list[Label] = []
    ollama_openllmetry: list[Label] = []
    cohere_openllmetry: list[Label] = []
    dspy_mlflow: list[Label] = []
    async_openai_mlflow: list[Label] = []
    smolagents_mlflow: list[Label] = []
    llamaindex_mlflow: list[Label] = []
    genai_stream_openllmetry: list[Label] = []
    agno_team_mlflow: list[Label] = []
    pydantic_ai_mlflow: list[Label] = []
    strands_mlflow: list[Label] = []
    agents_sdk_mlflow: list[Label] = []
    autogen_mlflow: list[Label] = []
    kernel_mlflow: list[Label] = []
    anthropic_mlflow: list[Label] = []
    genai_mlflow: list[Label] = []
    ag2_mlflow: list[Label] = []
    openai_textproto: list[Label] = []
    openai_structured: list[Label] = []
    groq_openllmetry: list[Label] = []
    groq_openinference: list[Label] = []
    util_genai: list[Label] = []
    anthropic_logfire: list[Label] = []
    langgraph_mlflow: list[Label] = []
    haystack_mlflow: list[Label] = []
    for label in labels:
        if label.agent == "etl":
            out[label.run] = etl.run(label, tracer)
        elif label.agent == "refund":
            framework.append(label)
        elif label.agent == "restock":
            traceloop.append(label)
        elif label.agent == "release":
            pydantic.append(label)
        elif label.agent == "analyst":
            agents_sdk.append(label)
        elif label.agent == "oncall":
            langgraph.append(label)
        elif label.agent == "claims":
            pydantic_ai.append(label)
        elif label.agent == "lab":
            smol.append(label)
        elif label.agent == "lease":
            agno.append(label)
        elif label.agent == "customs":
            dspy.append(label)
        elif label.agent == "venue":
            haystack.append(label)
        elif label.agent == "fleet":
            kernel.append(label)
        elif label.agent == "solar":
            maf.append(label)
        elif label.agent == "moving":
            langfuse.append(label)
        elif label.agent == "grants":
            logfire.append(label)
        elif label.agent == "museum":
            mlflow_tracing.append(label)
        elif label.agent == "marina":
            openinference_langgraph.append(label)
        elif label.agent == "harvest":
            openllmetry_openai.append(label)
        elif label.agent == "hives":
            autogen.append(label)
        elif label.agent == "foundry":
            strands.append(label)
        elif label.agent == "organ":
            griptape.append(label)
        elif label.agent == "arbor":
            burr.append(label)
        elif label.agent == "stocking":
            litellm.append(label)
        elif label.agent == "refuge":
            sdk_async.append(label)
        elif label.agent == "seedbank":
            genai_by_hand.append(label)
        elif label.agent == "wool":
            plan_and_execute.append(label)
        elif label.agent == "glazier":
            plan_and_execute_openllmetry.append(label)
        elif label.agent == "chandler":
            llama_index_workflow.append(label)
        elif label.agent == "ferry":
            agents_sdk_logfire.append(label)
        elif label.agent == "observatory":
            llama_index_agents.append(label)
        elif label.agent == "reel":
            google_adk.append(label)
        elif label.agent == "quarry":
            agents_sdk_openllmetry.append(label)
        elif label.agent == "beacon":
            smol_planning.append(label)
        elif label.agent == "turret":
            pydantic_ai_delegation.append(label)
        elif label.agent == "summit":
            langgraph_dag.append(label)
        elif label.agent == "surgery":
            langgraph_functional.append(label)
        elif label.agent == "kiln":
            anthropic_sdk.append(label)
        elif label.agent == "cellar":
            google_genai_sdk.append(label)
        elif label.agent == "luthier":
            langchain_todos.append(label)
        elif label.agent == "railtour":
            responses_api.append(label)
        elif label.agent == "bindery":
            mistral_sdk.append(label)
        elif label.agent == "bigtop":
            bedrock_converse.append(label)
        elif label.agent == "vinyl":
            mcp_tools.append(label)
        elif label.agent == "balloon":
            agentchat_selector.append(label)
        elif label.agent == "regatta":
            sdk_threads_mcp.append(label)
        elif label.agent == "fresco":
            genai_instrumentor.append(label)
        elif label.agent == "mural":
            ag2_agents.append(label)
        elif label.agent == "busyard":
            langgraph_supervisor.append(label)
        elif label.agent == "linen":
            langfuse_langchain.append(label)
        elif label.agent == "liftline":
            adk_openinference.append(label)
        elif label.agent == "hauler":
            graph_logfire.append(label)
        elif label.agent == "marathon":
            sdk_asyncio_openllmetry.append(label)
        elif label.agent == "shoot":
            traceloop_sdk.append(label)
        elif label.agent == "ferrier":
            llama_index_otel.append(label)
        elif label.agent == "orchard":
            agno_openllmetry.append(label)
        elif label.agent == "brewhouse":
            haystack_tracer.append(label)
        elif label.agent == "ropeway":
            anthropic_mcp_openllmetry.append(label)
        elif label.agent == "touring":
            litellm_openinference.append(label)
        elif label.agent == "kennel":
            agents_sdk_kennel.append(label)
        elif label.agent == "fieldtrip":
            groq_openinference.append(label)
        elif label.agent == "sawmill":
            util_genai.append(label)
        elif label.agent == "assay":
            genai_sdk_otel.append(label)
        elif label.agent == "vessel":
            bedrock_openllmetry.append(label)
        elif label.agent == "florist":
            ollama_openllmetry.append(label)
        elif label.agent == "signalbox":
            agents_sdk_markdown.append(label)
        elif label.agent == "pantry":
            cohere_openllmetry.append(label)
        elif label.agent == "tannery":
            anthropic_logfire.append(label)
        elif label.agent == "ferrule":
            langgraph_mlflow.append(label)
        elif label.agent == "chorale":
            dspy_mlflow.append(label)
        elif label.agent == "sequencer":
            haystack_mlflow.append(label)
        elif label.agent == "caravan":
            async_openai_mlflow.append(label)
        elif label.agent == "hatchery":
            smolagents_mlflow.append(label)
        elif label.agent == "upholstery":
            llamaindex_mlflow.append(label)
        elif label.agent == "planetarium":
            genai_stream_openllmetry.append(label)
        elif label.agent == "cooperage":
            agno_team_mlflow.append(label)
        elif label.agent == "winepress":
            pydantic_ai_mlflow.append(label)
        elif label.agent == "bookmobile":
            strands_mlflow.append(label)
        elif label.agent == "menagerie":
            agents_sdk_mlflow.append(label)
        elif label.agent == "bakehouse":
            autogen_mlflow.append(label)
        elif label.agent == "playhouse":
            kernel_mlflow.append(label)
        elif label.agent == "infirmary":
            anthropic_mlflow.append(label)
        elif label.agent == "chairlift":
            genai_mlflow.append(label)
        elif label.agent == "manuscript":
            ag2_mlflow.append(label)
        elif label.agent == "vineyard":
            openai_textproto.append(label)
        elif label.agent == "tailor":
            openai_structured.append(label)
        elif label.agent == "lighthouse":
            groq_openllmetry.append(label)
        else:
            out[label.run] = AGENTS[label.agent](label)
    out.update(refund.play(framework, provider))
    out.update(restock.play(traceloop, provider))
    out.update(release.play(pydantic, provider))
    out.update(analyst.play(agents_sdk, provider))
    # before oncall: OpenLLMetry's uninstrument leaves its LangChain callback handler behind
    out.update(marina.play(openinference_langgraph, provider))
    out.update(summit.play(langgraph_dag, provider))  # marina's instrumentor, before oncall too
    out.update(surgery.play(langgraph_functional, provider))  # the same, before oncall too
    out.update(oncall.play(langgraph, provider))
    out.update(claims.play(pydantic_ai, provider))
    out.update(lab.play(smol, provider))
    out.update(lease.play(agno, provider))
    out.update(customs.play(dspy, provider))
    out.update(venue.play(haystack, provider))
    out.update(fleet.play(kernel, provider))
    out.update(solar.play(maf, provider))
    out.update(moving.play(langfuse, provider))
    out.update(grants.play(logfire, provider))
    out.update(museum.play(mlflow_tracing, provider))
    # OpenLLMetry's OpenAI instrumentor is uninstrumented when harvest's play returns: refund's
    # OpenInference-instrumented client (played earlier) never carries its spans
    out.update(harvest.play(openllmetry_openai, provider))
    out.update(hives.play(autogen, provider))
    out.update(foundry.play(strands, provider))
    out.update(organ.play(griptape, provider))
    out.update(arbor.play(burr, provider))
    out.update(stocking.play(litellm, provider))
    out.update(refuge.play(sdk_async, provider))
    out.update(seedbank.play(genai_by_hand, provider))
    out.update(wool.play(plan_and_execute, provider))
    out.update(glazier.play(plan_and_execute_openllmetry, provider))
    out.update(chandler.play(llama_index_workflow, provider))
    out.update(ferry.play(agents_sdk_logfire, provider))
    # after chandler: OpenLLMetry's and OpenInference's LlamaIndex handlers share the root
    # dispatcher; the observatory play puts back the handlers it found when it returns
    out.update(observatory.play(llama_index_agents, provider))
    # LlamaIndex's native OpenTelemetry integration: its handlers join the same root dispatcher
    # (its tracer the global relay's, to ``provider`` while it plays) and are taken off after
    out.update(ferrier.play(llama_index_otel, provider))
    # the Agents SDK's trace provider is swapped for the play's own and put back, as ferry's is
    out.update(quarry.play(agents_sdk_openllmetry, provider))
    # the same instrumentor as lab's: each play instruments on ``provider`` and uninstruments
    out.update(beacon.play(smol_planning, provider))
    # OpenInference's span processor rewrites every span ending on its provider: the turret play
    # gives it a provider of its own, and pydantic-ai's instrument_all is switched off after it
    out.update(turret.play(pydantic_ai_delegation, provider))
    # the instrumentor wraps the SDK's Messages.create on ``provider`` and puts it back after
    out.update(kiln.play(anthropic_sdk, provider))
    # the instrumentor wraps the SDK's Models.generate_content (and its API client's request) on
    # ``provider`` and puts them back after; before reel, whose ADK calls the same SDK
    out.update(cellar.play(google_genai_sdk, provider))
    # glazier's instrumentor (OpenLLMetry's LangChain), on ``provider`` until the play returns
    out.update(luthier.play(langchain_todos, provider))
    # refund's instrumentor (OpenInference's OpenAI): it wraps ``OpenAI.request`` on
    # ``provider`` and puts it back when the play returns
    out.update(railtour.play(responses_api, provider))
    # the instrumentor wraps the SDK's Chat.complete on ``provider`` and puts it back after
    out.update(bindery.play(mistral_sdk, provider))
    # the instrumentor wraps the converse of the clients made while it is on (boto3's client
    # creation patched on ``provider``); the play's client is made after, and both are put back
    out.update(bigtop.play(bedrock_converse, provider))
    # OpenInference's OpenAI instrumentor (railtour's), on ``provider`` until the play returns;
    # the MCP instrumentor wraps mcp's stdio client (and server session) there too, unwrapped after
    out.update(vinyl.play(mcp_tools, provider))
    # the same AgentChat as hives (whose runtime spans reach ``provider`` only while it plays);
    # OpenInference's autogen-agentchat instrumentor wraps AgentChat's agent, team and model
    # client methods on ``provider`` and puts them back when the play returns
    out.update(balloon.play(agentchat_selector, provider))
    # vinyl's two instrumentors again, instrumented on ``provider`` and uninstrumented after; the
    # MCP one wraps mcp's streamable-HTTP client and server transport this time
    out.update(regatta.play(sdk_threads_mcp, provider))
    # the official GenAI instrumentor wraps the openai client's chat completions on ``provider``
    # (its content settings read from the environment the play sets) and unwraps them after
    out.update(fresco.play(genai_instrumentor, provider))
    # AG2's TelemetryMiddleware is given ``provider`` on each agent: no global provider, no
    # instrumentor, nothing to put back
    out.update(mural.play(ag2_agents, provider))
    # LangSmith's export writes through the global provider (the relay, to ``provider`` while it
    # plays); the environment LangSmith reads and its cached client are put back after
    out.update(busyard.play(langgraph_supervisor, provider))
    # moving's Langfuse client (one per public key) under Langfuse's LangChain callback handler;
    # moving's langfuse.openai wrapper is told to skip ChatOpenAI's raw-response calls meanwhile
    out.update(linen.play(langfuse_langchain, provider))
    # the global Logfire (configured once, its extra processor relaying to ``provider`` only while
    # it plays) over the global tracer provider already taken by the relay; pydantic-ai's
    # instrument_all is put back when the play returns
    out.update(hauler.play(graph_logfire, provider))
    # venue's Haystack, under Haystack's own tracer this time: the play enables it on a tracer of
    # ``provider`` and puts back the tracer and content switch it found (venue's instrumentor is
    # off by then; it never uses Haystack's tracer)
    out.update(brewhouse.play(haystack_tracer, provider))
    # harvest's instrumentor (OpenLLMetry's OpenAI) on ``provider`` again, uninstrumented and its
    # wrappers taken off the completions classes when the play returns; planscope configured on
    # ``provider`` as above
    out.update(marathon.play(sdk_asyncio_openllmetry, provider))
    # Traceloop.init once per process on a private provider (its exporter hands spans to
    # ``provider`` only while it plays); the OpenAI instrumentor it turns on reaches that provider
    # through the global relay and is uninstrumented (and unwrapped, as harvest's) after
    out.update(shoot.play(traceloop_sdk, provider))
    # lease's Agno, under OpenLLMetry's Agno instrumentor this time (lease's OpenInference one was
    # uninstrumented when its play returned), with the OpenAI instrumentor shoot has just
    # uninstrumented: both on ``provider``, both uninstrumented (the completions classes
    # unwrapped, as harvest's) when the play returns
    out.update(orchard.play(agno_openllmetry, provider))
    # kiln's Anthropic SDK and vinyl's MCP client again, under OpenLLMetry's instrumentors this
    # time (both off before and after: kiln and vinyl have played); the MCP instrumentor's
    # uninstrument leaves BaseSession.send_request and the transports wrapped: the play puts
    # them back
    out.update(ropeway.play(anthropic_mcp_openllmetry, provider))
    # stocking's LiteLLM (and customs' DSPy, which calls it), under OpenInference's LiteLLM
    # instrumentor this time: it swaps litellm.completion and its siblings for wrappers on
    # ``provider`` and puts the originals back when the play returns
    out.update(touring.play(litellm_openinference, provider))
    # quarry's SDK and instrumentor again (both played): the SDK's trace provider is swapped for
    # the play's own and put back, OpenLLMetry's processor left only on the play's
    out.update(kennel.play(agents_sdk_kennel, provider))
    # cellar's Google Gen AI SDK again, under the official OpenTelemetry instrumentation this time
    # (cellar's OpenInference one is off by then): it wraps Models.generate_content on
    # ``provider`` and unwraps it after; before liftline and reel, whose ADK calls the same SDK
    out.update(assay.play(genai_sdk_otel, provider))
    # bigtop's boto3 Converse again, under OpenLLMetry's Bedrock instrumentor this time (bigtop's
    # OpenInference one is off by then): it wraps the clients made while it is on, unwrapped after
    out.update(vessel.play(bedrock_openllmetry, provider))
    # no other agent calls Ollama: OpenLLMetry's Ollama instrumentor wraps Client._request on
    # ``provider`` and the play puts it back (its uninstrument does not)
    out.update(florist.play(ollama_openllmetry, provider))
    # the Groq SDK (no other agent calls it) under OpenInference's Groq instrumentor: it wraps
    # Completions.create on ``provider`` and puts it back when the play returns
    out.update(fieldtrip.play(groq_openinference, provider))
    # the openai client with no instrumentor (every OpenAI instrumentor is off by then): the app
    # writes its GenAI spans through opentelemetry-util-genai's handler on ``provider``
    out.update(sawmill.play(util_genai, provider))
    # analyst's SDK and OpenInference instrumentor again (off by then): its exclusive processor
    # stands in for the SDK's processors during the play and they are put back when it returns
    out.update(signalbox.play(agents_sdk_markdown, provider))
    # the Cohere SDK (no other agent calls it) under OpenLLMetry's Cohere instrumentor: it wraps
    # ClientV2.chat and the other client methods on ``provider``, unwrapped when the play returns
    out.update(pantry.play(cohere_openllmetry, provider))
    # kiln's and ropeway's Anthropic SDK again, under Logfire's Anthropic instrumentation this
    # time (both their instrumentors are off by then): it wraps only the play's own client, which
    # is uninstrumented and closed when the play returns; grants' local-Logfire way, its own
    # service name
    out.update(tannery.play(anthropic_logfire, provider))
    # museum's MLflow tracer provider (one per process, relayed to ``provider`` only while a play
    # runs); mlflow.langchain.autolog() hooks LangChain's callbacks for the play and is disabled
    # when it returns
    out.update(ferrule.play(langgraph_mlflow, provider))
    # customs' DSPy again, under MLflow's DSPy autologging this time (OpenInference's DSPy and
    # LiteLLM instrumentors are off by then): the MlflowCallback joins dspy.settings.callbacks for
    # the play and is taken off after; MLflow's provider is museum's, made once per process
    out.update(chorale.play(dspy_mlflow, provider))
    # Haystack again (brewhouse's OpenTelemetry tracer and venue's OpenInference instrumentor are
    # off by then), its tracer on a provider whose one processor is MLflow's HaystackSpanProcessor
    # (museum's MLflow provider, relayed to ``provider``); Haystack's tracer is put back after
    out.update(sequencer.play(haystack_mlflow, provider))
    # museum's MLflow OpenAI autologging again, on an AsyncOpenAI client this time, with MLflow's
    # GenAI translation switched on for the play: caravan's own relay on museum's MLflow provider
    # hands the spans on as MLflow's OTLP processor translates them (museum's relay idle meanwhile)
    out.update(caravan.play(async_openai_mlflow, provider))
    # lab's and beacon's smolagents again, under MLflow's smolagents autologging this time
    # (OpenInference's smolagents instrumentor is off by then): MLflow patches the agents', tools'
    # and models' methods for the play and takes its patches off after; museum's MLflow provider
    out.update(hatchery.play(smolagents_mlflow, provider))
    # chandler's, observatory's and ferrier's LlamaIndex again, under MLflow's LlamaIndex
    # autologging this time (their instrumentors' handlers are off LlamaIndex's root dispatcher
    # by then): MLflow's span and event handlers join it for the play and leave after; museum's
    # MLflow provider
    out.update(upholstery.play(llamaindex_mlflow, provider))
    # cellar's and assay's Google Gen AI SDK again, streamed this time, under OpenLLMetry's Google
    # Generative AI instrumentor (cellar's and assay's instrumentors are off by then): it wraps
    # Models.generate_content and generate_content_stream on ``provider`` and unwraps them after;
    # before liftline and reel, whose ADK calls the same SDK
    out.update(planetarium.play(genai_stream_openllmetry, provider))
    # lease's and orchard's Agno again, an Agno Team this time, under MLflow's Agno autologging
    # (lease's OpenInference instrumentor, which MLflow's autologging drives on its own tracer,
    # and orchard's OpenLLMetry one are off by then); uninstrumented when the play returns;
    # museum's MLflow provider
    out.update(cooperage.play(agno_team_mlflow, provider))
    # release's, claims' and turret's pydantic-ai again, under MLflow's Pydantic AI autologging
    # this time (their plays are over by then): MLflow patches Agent.__init__/run_sync and
    # pydantic-ai's Instrumentation capability for the play (its patches pass through once
    # disabled after); museum's MLflow provider
    out.update(winepress.play(pydantic_ai_mlflow, provider))
    # foundry's Strands Agents again, under MLflow's Strands autologging this time: the global
    # relay hands Strands' spans to a provider of the play's own whose one processor, MLflow's,
    # passes them to museum's MLflow provider (relayed to ``provider``); autologging and MLflow's
    # propagation of its active span into OpenTelemetry's context end with the play
    out.update(bookmobile.play(strands_mlflow, provider))
    # analyst's and kennel's OpenAI Agents SDK again, under MLflow's OpenAI autologging this time
    # (museum's autologging, which patches AgentRunner.run and adds MLflow's processor to the
    # SDK's tracing, is off by then): the play runs on a fresh SDK trace provider, puts the
    # previous one back and turns autologging off when it returns; museum's MLflow provider
    out.update(menagerie.play(agents_sdk_mlflow, provider))
    # hives' and balloon's AutoGen AgentChat again, under MLflow's AutoGen autologging this time
    # (it patches AssistantAgent's run/on_messages and OpenAIChatCompletionClient.create for the
    # play and puts them back when it returns); museum's MLflow provider
    out.update(bakehouse.play(autogen_mlflow, provider))
    # fleet's Semantic Kernel again, traced into MLflow this time: the global relay (fleet's play,
    # which handed it ``provider``, is over by then) hands Semantic Kernel's diagnostics spans to
    # museum's MLflow provider for the play, MLflow's active span propagated into OpenTelemetry's
    # context; museum's MLflow provider, relayed to ``provider``
    out.update(playhouse.play(kernel_mlflow, provider))
    # kiln's, ropeway's and tannery's Anthropic SDK again, under MLflow's Anthropic autologging
    # this time (their OpenInference, OpenLLMetry and Logfire instrumentations are off by then):
    # MLflow patches Messages.create for the play and its patch passes through once autologging
    # is disabled after; museum's MLflow provider
    out.update(infirmary.play(anthropic_mlflow, provider))
    # cellar's, assay's and planetarium's Google Gen AI SDK again, under MLflow's Gemini
    # autologging this time (their instrumentors are off by then): MLflow patches
    # Models.generate_content and _generate_content for the play, and its patches pass through
    # once autologging is disabled when it returns; museum's MLflow provider; before liftline and
    # reel, whose ADK calls the same SDK
    out.update(chairlift.play(genai_mlflow, provider))
    # mural's AG2 1.x again, its TelemetryMiddleware given museum's MLflow provider this time
    # (relayed to ``provider``), with MLflow's active span propagated into OpenTelemetry's context
    # for the play only
    out.update(manuscript.play(ag2_mlflow, provider))
    # harvest's, marathon's, shoot's and orchard's instrumentor (OpenLLMetry's OpenAI) on
    # ``provider`` once more, content tracing on for the play (the environment put back after),
    # uninstrumented and its wrappers taken off the completions classes when the play returns
    out.update(vineyard.play(openai_textproto, provider))
    # refund's, railtour's and vinyl's instrumentor (OpenInference's OpenAI) again, on a
    # synchronous client's structured-output parse and chat completions this time: it wraps
    # ``OpenAI.request`` on ``provider`` and puts it back when the play returns
    out.update(tailor.play(openai_structured, provider))
    # fieldtrip's Groq SDK again, under OpenLLMetry's Groq instrumentor this time (fieldtrip's
    # OpenInference one is off by then): it wraps Completions.create on ``provider`` and unwraps
    # it when the play returns
    out.update(lighthouse.play(groq_openllmetry, provider))
    if adk_openinference:
        # the instrumentor swaps ADK's own tracers on ``provider`` and puts them back when the
        # play returns: reel, after it, traces through ADK's own tracing again
        from . import liftline

        out.update(liftline.play(adk_openinference, provider))
    if google_adk:
        from . import reel

        out.update(reel.play(google_adk, provider))
    return out


__all__ = [
    "KINDS",
    "LABELS_FILE",
    "Label",
    "all_labels",
    "play",
    "read_labels",
    "scenarios",
    "write_labels",
]
