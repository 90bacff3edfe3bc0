-- Logfire's convention in the span model (issue #13): the Logfire SDK writes its logs
-- (`logfire.info` / `warn` / `error`, also a logging or structlog record it captures) as
-- zero-duration spans of `logfire.span_type` `log` under the span that was current, their level
-- in `logfire.level_num` (Logfire's numbers: info 9, warn 13, error 17, fatal 21) and their text
-- in `logfire.msg` (the span's name is the message template). A log is an event of its parent,
-- not work: no step attempt, no tool call (docs/semantic-conventions.md, "Spans planscope did
-- not shape").
--
--   * SpanModelLogLevel (MATERIALIZED): Logfire's level number on a log span (at least 1: a log
--     without a level is still a log), 0 on every other span. Binding (observed.bind) leaves
--     log spans out of the work and reads one at error level or above as its parent's failure,
--     its `logfire.msg` (SpanModelLogMessage) as what the parent said.
--
-- Logfire's other spans (`logfire.span`, `@logfire.instrument`) keep the span model's kinds as
-- before (an application's own spans, `other`); their status is OpenTelemetry's (Logfire sets
-- ERROR itself with the exception event) and their arguments are read where binding finds them
-- to be tool calls (analyzer _queries.LOAD_COMPONENT_CALLS: the attributes its
-- `logfire.json_schema` lists, `return` the result).
--
-- Rows already stored get the columns computed on read (ADD COLUMN: no rewrite).

ALTER TABLE {db}.otel_traces {on_cluster}
    ADD COLUMN IF NOT EXISTS SpanModelLogLevel UInt8 MATERIALIZED
        if(SpanAttributes['logfire.span_type'] = 'log',
           greatest(1, least(255, toUInt32OrZero(SpanAttributes['logfire.level_num']))), 0)
        CODEC(ZSTD(1)),
    ADD COLUMN IF NOT EXISTS SpanModelLogMessage String MATERIALIZED
        if(SpanModelLogLevel != 0, SpanAttributes['logfire.msg'], '') CODEC(ZSTD(1));
