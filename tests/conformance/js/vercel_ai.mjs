// The conformance suite's Vercel AI SDK source (`vercel_ai`): the suite's planner-executor
// agent (tests/conformance/agents/_common.py, _openai_loop.py) written with the AI SDK, run as
// `node tests/conformance/js/vercel_ai.mjs [--dump FILE] [--scenario NAME]...`.
//
// Environment (as for the Python agents): CONFORMANCE_MODEL, the fake model server's /v1 URL
// (tests/conformance/fake_openai.py, Chat Completions: hence `.chat(model)`), and
// CONFORMANCE_OTLP, the collector's http://host:port. Prints one JSON line: per scenario its
// trace_id, start_ns and end_ns; --dump writes the spans as OTLP/JSON in the shape the Python
// agents write (protobuf's MessageToDict: hex ids, int64 as strings, enum names).
//
// The spans: the app's own through the OTel API ("refund-agent" root, "step <id>" per step;
// ERROR when a step gave up), and the AI SDK's telemetry (experimental_telemetry) through the
// same global tracer provider: ai.generateText with ai.generateText.doGenerate per model call
// and ai.toolCall per tool call (a tool that throws: ERROR and an exception event).

import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { createOpenAI } from "@ai-sdk/openai";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";

// The scenario, as tests/conformance/agents/_common.py and fake_openai.py have it.
const MODEL = "gpt-4o-mini";
const OBJECTIVE = "Refund order 42";
const PLANNER_PROMPT =
  "You are the planner. Reply with a JSON list of steps: id, description, tool.";
const EXECUTOR_PROMPT = "You are the executor. Do the step you are given with your tools.";
const SCENARIOS = ["healthy", "loop"];
const SERVICE = "conformance-vercel-ai";
// the exporters' patience: a busy 2-core machine's collector can take longer than 10 s
const EXPORT_TIMEOUT_MS = 60_000;
// the executor's step budget: the loop needs 6 model calls (5 failed tool calls, then giving up)
const MAX_STEPS = 20;

class ToolFailure extends Error {
  name = "ToolFailure";
}

/** The scenario's tools: issue_refund always throws in `loop`. */
function toolsFor(scenario) {
  const orderId = z.object({ order_id: z.string() });
  return {
    lookup_order: tool({
      description: "Look up an order by its id.",
      inputSchema: orderId,
      execute: async ({ order_id }) =>
        JSON.stringify({ order_id, amount: 30, status: "delivered" }),
    }),
    issue_refund: tool({
      description: "Refund an order by its id.",
      inputSchema: orderId,
      execute: async ({ order_id }) => {
        if (scenario === "loop") throw new ToolFailure("error: payment gateway timeout");
        return `refund issued for order ${order_id}`;
      },
    }),
  };
}

function stepPrompt(step) {
  return `Step ${step.id}: ${step.description}`;
}

/** Plan with one generateText call, then one generateText tool loop per step; a step that
 * gives up fails (its span and the run's are ERROR). */
async function planAndExecute(model, tracer, scenario) {
  const tools = toolsFor(scenario);
  await tracer.startActiveSpan("refund-agent", async (run) => {
    try {
      const planned = await generateText({
        model,
        system: PLANNER_PROMPT,
        prompt: OBJECTIVE,
        experimental_telemetry: { isEnabled: true, functionId: "planner" },
      });
      const plan = JSON.parse(planned.text || "[]");
      const failed = [];
      for (const step of plan) {
        await tracer.startActiveSpan(`step ${step.id}`, async (span) => {
          try {
            const done = await generateText({
              model,
              system: EXECUTOR_PROMPT,
              prompt: stepPrompt(step),
              tools,
              stopWhen: stepCountIs(MAX_STEPS),
              experimental_telemetry: { isEnabled: true, functionId: "executor" },
            });
            if (done.text.startsWith("giving up")) {
              span.setStatus({ code: SpanStatusCode.ERROR, message: done.text });
              failed.push(step.id);
            }
          } finally {
            span.end();
          }
        });
      }
      if (failed.length) {
        run.setStatus({
          code: SpanStatusCode.ERROR,
          message: `steps failed: ${failed.join(", ")}`,
        });
      }
    } finally {
      run.end();
    }
  });
}

// ---- OTLP/JSON as the Python side writes it (MessageToDict of the protobuf request)

const KINDS = ["INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const CODES = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

function nanos([seconds, ns]) {
  return (BigInt(seconds) * 1_000_000_000n + BigInt(ns)).toString();
}

function anyValue(value) {
  if (typeof value === "string") return { stringValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") {
    return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  }
  if (Array.isArray(value)) return { arrayValue: { values: value.map(anyValue) } };
  return { stringValue: String(value) };
}

function keyValues(attributes) {
  return Object.entries(attributes ?? {})
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([key, value]) => ({ key, value: anyValue(value) }));
}

function otlpSpan(span) {
  const context = span.spanContext();
  const parent = span.parentSpanContext;
  const out = { traceId: context.traceId, spanId: context.spanId };
  if (parent?.spanId) out.parentSpanId = parent.spanId;
  out.name = span.name;
  out.kind = `SPAN_KIND_${KINDS[span.kind]}`;
  out.startTimeUnixNano = nanos(span.startTime);
  out.endTimeUnixNano = nanos(span.endTime);
  const attributes = keyValues(span.attributes);
  if (attributes.length) out.attributes = attributes;
  const events = span.events.map((e) => {
    const event = { timeUnixNano: nanos(e.time), name: e.name };
    const attrs = keyValues(e.attributes);
    if (attrs.length) event.attributes = attrs;
    return event;
  });
  if (events.length) out.events = events;
  const status = {};
  if (span.status.message) status.message = span.status.message;
  if (span.status.code) status.code = CODES[span.status.code];
  out.status = status;
  // as the Python exporter sets them: "has is_remote" (0x100), plus "is remote" (0x200)
  out.flags = 0x100 | (parent?.isRemote ? 0x200 : 0);
  return out;
}

function otlpJson(spans) {
  const resources = new Map();
  for (const span of spans) {
    const resource = span.resource;
    if (!resources.has(resource)) resources.set(resource, new Map());
    const scopes = resources.get(resource);
    const scope = span.instrumentationScope;
    const key = `${scope.name}@${scope.version ?? ""}`;
    if (!scopes.has(key)) scopes.set(key, { scope, spans: [] });
    scopes.get(key).spans.push(otlpSpan(span));
  }
  return {
    resourceSpans: [...resources].map(([resource, scopes]) => ({
      resource: { attributes: keyValues(resource.attributes) },
      scopeSpans: [...scopes.values()].map(({ scope, spans }) => ({
        scope: scope.version ? { name: scope.name, version: scope.version } : { name: scope.name },
        spans,
      })),
    })),
  };
}

// ---- the run

function nowNs(marginMs) {
  // wall-clock nanoseconds, as the model server logs them (time.time_ns()); Date.now() has
  // milliseconds, so a scenario's bounds are widened by one (scenarios are far more apart)
  return BigInt(Date.now() + marginMs) * 1_000_000n;
}

async function main() {
  const { values } = parseArgs({
    options: { dump: { type: "string" }, scenario: { type: "string", multiple: true } },
  });
  const target = process.env.CONFORMANCE_OTLP;
  if (!target?.startsWith("http")) throw new Error(`CONFORMANCE_OTLP must be http(s)://: ${target}`);
  const memory = new InMemorySpanExporter();
  const exporter = new OTLPTraceExporter({
    url: `${target}/v1/traces`,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ "service.name": SERVICE })),
    spanProcessors: [
      new BatchSpanProcessor(exporter, {
        scheduledDelayMillis: 200,
        exportTimeoutMillis: EXPORT_TIMEOUT_MS,
      }),
      new SimpleSpanProcessor(memory),
    ],
  });
  // the global provider (the AI SDK's tracer comes from it) and the async context manager
  // (its spans' parents: the app's span active when it was called)
  provider.register();
  const tracer = trace.getTracer("refund-agent");
  const openai = createOpenAI({ baseURL: process.env.CONFORMANCE_MODEL, apiKey: "test" });
  const model = openai.chat(MODEL);

  const traces = {};
  for (const scenario of values.scenario ?? SCENARIOS) {
    if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario ${scenario}`);
    const before = memory.getFinishedSpans().length;
    const start = nowNs(-1);
    await planAndExecute(model, tracer, scenario);
    const end = nowNs(1);
    await provider.forceFlush();
    const mine = memory.getFinishedSpans().slice(before);
    const ids = new Set(mine.map((s) => s.spanContext().traceId));
    if (ids.size !== 1) {
      throw new Error(`${scenario}: ${ids.size} traces: ${mine.map((s) => s.name).sort()}`);
    }
    traces[scenario] = { trace_id: [...ids][0], start_ns: String(start), end_ns: String(end) };
  }
  await provider.forceFlush();
  const finished = memory.getFinishedSpans();
  await provider.shutdown();
  if (values.dump) writeFileSync(values.dump, JSON.stringify(otlpJson(finished), null, 1));
  console.log(JSON.stringify(traces));
}

await main();
