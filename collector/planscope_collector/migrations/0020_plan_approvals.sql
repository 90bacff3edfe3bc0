-- Plan approvals (collector routes /api/approvals; docs/collector.md, "Plan approvals").
--
-- One row per state of one approval request: Revision 0 is the pending request an agent filed
-- (the plan it waits on), Revision 1 the decision (approved, edited, rejected) by a person or by
-- the agent's default policy on timeout. ReplacingMergeTree(Revision) keeps the decided row;
-- read with FINAL. The collector decides under a lock after reading the row, so the first
-- decision wins and a second one is refused (409). PlanJson is the plan as filed (planscope.Plan
-- JSON); EditedPlanJson the reviewer's version when edited.
CREATE TABLE IF NOT EXISTS {db}.planscope_plan_approvals {on_cluster} (
    Project LowCardinality(String) CODEC(ZSTD(1)),
    ApprovalId String CODEC(ZSTD(1)),
    Revision UInt8,
    Status LowCardinality(String) CODEC(ZSTD(1)),
    RunId String CODEC(ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    PlanId String CODEC(ZSTD(1)),
    PlanVersion UInt32 CODEC(T64, ZSTD(1)),
    Agent String CODEC(ZSTD(1)),
    Objective String CODEC(ZSTD(3)),
    PlanJson String CODEC(ZSTD(3)),
    EditedPlanJson String CODEC(ZSTD(3)),
    Reason String CODEC(ZSTD(3)),
    Reviewer String CODEC(ZSTD(1)),
    TimeoutSeconds Float64 CODEC(ZSTD(1)),
    DefaultDecision LowCardinality(String) CODEC(ZSTD(1)),
    CreatedAt DateTime64(3) CODEC(Delta(8), ZSTD(1)),
    DecidedAt DateTime64(3) CODEC(Delta(8), ZSTD(1))
) ENGINE = {engine:ReplacingMergeTree(Revision)}
ORDER BY (Project, ApprovalId)
TTL toDateTime(CreatedAt) + toIntervalDay({ttl_days})
SETTINGS non_replicated_deduplication_window = 10000;
