-- factory warehouse schema: one DuckDB file per run folder (runs/<run id>/warehouse.duckdb).
-- Every attempt is a row, kept or not, keyed by (run_id, instance_id, teacher, attempt_index):
-- the writer replaces a key's rows when it sees the attempt again, so writing twice is harmless.
-- Timestamps are UTC. Token counts by role (*_tokens_est) are estimates: characters / 4; a kept
-- row's exact counts (num_tokens, assistant_tokens) are the renderer's, written by the build.
-- Source of truth: factory/warehouse/sql/schema.sql (warehouse/schema.sql points to it).

CREATE TABLE IF NOT EXISTS meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);

CREATE TABLE IF NOT EXISTS runs (
    run_id          VARCHAR PRIMARY KEY,
    pipeline_name   VARCHAR,
    pipeline_yaml   VARCHAR,   -- the pipeline as loaded (environment values stay ${VAR} references)
    command         VARCHAR,   -- the command line that started or resumed the run
    started_at      TIMESTAMP, -- first start
    last_started_at TIMESTAMP  -- latest start or resume
);

-- The latest dataset build of each run (the run's own, or `factory build` with other settings):
-- the filter settings it used, so a report reads the limits the dataset was really cut with.
CREATE TABLE IF NOT EXISTS builds (
    run_id       VARCHAR PRIMARY KEY,
    built_at     TIMESTAMP,
    command      VARCHAR,  -- the `factory build ...` line; NULL for the run's own build
    filters_yaml VARCHAR   -- the `filters:` section with the build's overrides applied
);

CREATE TABLE IF NOT EXISTS tasks (
    run_id            VARCHAR,
    instance_id       VARCHAR,
    repo              VARCHAR,
    source            VARCHAR,
    image             VARCHAR,
    problem_statement VARCHAR,
    fail_to_pass      VARCHAR[],
    pass_to_pass      VARCHAR[],
    PRIMARY KEY (run_id, instance_id)
);

CREATE TABLE IF NOT EXISTS attempts (
    run_id             VARCHAR,
    instance_id        VARCHAR,
    teacher            VARCHAR,
    attempt_index      INTEGER,
    repo               VARCHAR,
    model              VARCHAR,
    scripted           BOOLEAN,   -- produced by the offline scripted teacher, not a real model
    exit               VARCHAR,   -- Trajectory.exit: submitted, max_turns, ..., NULL without a trajectory
    error_class        VARCHAR,   -- infrastructure failure (SandboxCrashed, TeacherError, ...), else NULL
    error              VARCHAR,
    resolved           BOOLEAN,   -- the verifier's verdict; NULL when never verified
    verdict_reason     VARCHAR,   -- why not resolved: patch_rejected, tests_failed, timeout, ...
    verdict_detail     VARCHAR,
    n_turns            INTEGER,
    input_tokens       BIGINT,
    output_tokens      BIGINT,
    cache_read_tokens  BIGINT,
    cache_write_tokens BIGINT,
    cost_usd           DOUBLE,    -- NULL when any turn had no known price (never 0 by default)
    wall_seconds       DOUBLE,    -- agent loop wall time
    verify_seconds     DOUBLE,
    patch_bytes        INTEGER,
    patch_files        INTEGER,
    flags              VARCHAR[], -- verifier flags a reviewer should see
    infra_failures     VARCHAR[], -- infrastructure failures retried before this outcome
    system_tokens_est    BIGINT,
    user_tokens_est      BIGINT,
    assistant_tokens_est BIGINT,
    tool_tokens_est      BIGINT,
    kept               BOOLEAN,   -- passed every filter; false when dropped; NULL before filtering
    dropped_by         VARCHAR,   -- the filter that dropped it (its first drop in filter order)
    drop_reason        VARCHAR,   -- that drop's reason code; every decision is in `drops`
    started_at         TIMESTAMP,
    finished_at        TIMESTAMP,
    PRIMARY KEY (run_id, instance_id, teacher, attempt_index)
);
-- Columns added since schema 1 shipped: ADD COLUMN keeps warehouse files written before them.
-- Paid requests cut off in flight (a kill, a cancel, a timeout), in no cost above yet maybe billed,
-- and the most they can have cost (NULL when one's price is unknown).
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS possibly_billed INTEGER;
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS possibly_billed_usd DOUBLE;
-- The machine that sampled the attempt: the host's name (local executor) or the Ray node's id.
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS node VARCHAR;
-- The harness the agent ran in (its tools and prompts): `factory`, or the agent an import came from.
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS harness VARCHAR;
-- Who judged the verdict: `factory` (its verifier ran the hidden tests) or `source` (an import's
-- source, taken at its word with --trust-source); NULL when never judged.
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS verified_by VARCHAR;
-- What `resolved` rests on: `patch` (the agent's diff applied in a fresh container) or `final-state`
-- (a terminal task's tests ran in the agent's frozen final state: a state it chose, docs/verify.md);
-- and a terminal task's reward as its tests wrote it (`resolved`: it reached verifier.reward_threshold).
-- NULL when never judged; reward is NULL for a patch's verdict.
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS guarantee VARCHAR;
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS reward DOUBLE;

-- A kept row's exact token counts, as the renderer made them (the dataset's `num_tokens` and
-- `assistant_tokens`: trained tokens); NULL for every other attempt and before a build. Each build
-- replaces the run's counts.
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS num_tokens BIGINT;
ALTER TABLE attempts ADD COLUMN IF NOT EXISTS assistant_tokens BIGINT;

-- The task's language as its task set names it (python, go, javascript, typescript, java, rust, ...).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS language VARCHAR;

-- One row per teacher call. Child tables have no index: the writer deletes an attempt's
-- rows before inserting them again, in the same transaction.
CREATE TABLE IF NOT EXISTS turns (
    run_id             VARCHAR,
    instance_id        VARCHAR,
    teacher            VARCHAR,
    attempt_index      INTEGER,
    turn_index         INTEGER,
    input_tokens       BIGINT,
    output_tokens      BIGINT,
    cache_read_tokens  BIGINT,
    cache_write_tokens BIGINT,
    cost_usd           DOUBLE,
    seconds            DOUBLE,
    retries            INTEGER,
    assistant_tokens_est BIGINT,  -- this turn's assistant message: text, reasoning, tool-call arguments
    tool_tokens_est      BIGINT,  -- tool results that answered it
    user_tokens_est      BIGINT   -- user messages after it (re-prompts after a format error)
);
-- What each turn called: the tool names of its assistant message, and the first call's command
-- (bash's `command`, else the arguments as sent, credentials redacted), cut at 200 characters;
-- `tool_calls` has every call whole.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS tools VARCHAR[];
ALTER TABLE turns ADD COLUMN IF NOT EXISTS command VARCHAR;

-- Every tool call of every turn, in order, and what running it did. A call that did not run (a
-- turn with a malformed call runs none; `submit` ends the attempt) has `ran` false and no outcome.
CREATE TABLE IF NOT EXISTS tool_calls (
    run_id        VARCHAR,
    instance_id   VARCHAR,
    teacher       VARCHAR,
    attempt_index INTEGER,
    turn_index    INTEGER,
    call_index    INTEGER,   -- its place among the turn's calls, from 0
    call_id       VARCHAR,
    tool          VARCHAR,   -- bash, str_replace_editor, submit, ...
    command       VARCHAR,   -- bash's `command`, else the arguments as sent; whole, credentials redacted
    ran           BOOLEAN,
    exit_code     INTEGER,   -- the shell's; NULL for the editor and for a command killed at its timeout
    timed_out     BOOLEAN,
    output_bytes  BIGINT,    -- the whole output, before it was cut for the model
    seconds       DOUBLE
);

CREATE TABLE IF NOT EXISTS test_results (
    run_id        VARCHAR,
    instance_id   VARCHAR,
    teacher       VARCHAR,
    attempt_index INTEGER,
    test_id       VARCHAR,  -- the test's name in its framework: pytest node id, Go TestX/sub, JUnit Class#method, ...
    status        VARCHAR,  -- passed, failed, error, skipped, xfailed, missing
    kind          VARCHAR   -- F2P, P2P, other; NULL while the task is not recorded
);

-- Filter decisions: which filter dropped which attempt and why (Drop.to_row()). The writer
-- copies each attempt's first drop onto its row (kept, dropped_by, drop_reason).
CREATE TABLE IF NOT EXISTS drops (
    run_id        VARCHAR,
    instance_id   VARCHAR,
    teacher       VARCHAR,
    attempt_index INTEGER,
    filter        VARCHAR,  -- resolved, loops, length, dedup, cap, secrets, render
    reason        VARCHAR,  -- DropReason code
    detail        VARCHAR
);

-- Allocation decisions (factory.allocation), one row per decision about a task: a stop
-- (at_cap, hopeless, gave_up), a tier of the cascade opened to it (escalated), or a tier it never
-- reached (not_escalated); `saved` counts the attempts never made because of it. Worked out
-- again from the attempts on every resume: the writer replaces a run's rows.
CREATE TABLE IF NOT EXISTS task_decisions (
    run_id      VARCHAR,
    instance_id VARCHAR,
    decision    VARCHAR,
    tier        INTEGER,  -- the task's highest open tier then, from 1
    attempts    INTEGER,  -- graded attempts finished when it was decided
    passes      INTEGER,  -- of those, passed the per-attempt filters
    failures    INTEGER,
    saved       INTEGER,
    detail      VARCHAR
);

-- Filter order of the funnel: factory.filters.FUNNEL_STEPS (the registry's filters, then the
-- renderer's `render` step), filled in by factory.warehouse.connect.schema_sql.
CREATE OR REPLACE VIEW filter_steps AS
SELECT * FROM (VALUES {funnel_steps})
    AS t(step, filter);

-- Attempts with derived columns; the named queries read this. `language` is the task's (NULL
-- while the task is not recorded).
CREATE OR REPLACE VIEW v_attempts AS
SELECT
    attempts.*,
    (SELECT t.language FROM tasks t
     WHERE t.run_id = attempts.run_id AND t.instance_id = attempts.instance_id) AS language,
    kept IS NOT NULL AS decided,                   -- a filter decision is recorded
    error_class IS NULL AS graded,                 -- infrastructure failures do not count against a task
    coalesce(resolved, false) AS passed,           -- a graded attempt never verified counts as failed
    input_tokens + output_tokens AS total_tokens,
    CASE
        WHEN error_class IS NOT NULL THEN 'error:' || error_class
        WHEN resolved THEN 'resolved'
        WHEN verdict_reason IS NOT NULL THEN 'unresolved:' || verdict_reason
        ELSE 'unverified:' || coalesce(exit, 'no_trajectory')
    END AS outcome
FROM attempts;

-- Per run and task: graded attempts and pass rate, the basis of the task-level queries.
CREATE OR REPLACE VIEW v_task_pass AS
SELECT
    run_id,
    instance_id,
    any_value(repo) AS repo,
    any_value(language) AS language,
    count(*) AS attempts,
    count(*) FILTER (WHERE graded) AS graded,
    count(*) FILTER (WHERE NOT graded) AS infra_errors,
    count(*) FILTER (WHERE graded AND passed) AS passed,
    count(*) FILTER (WHERE kept) AS kept,
    count(DISTINCT teacher) AS teachers,
    CASE WHEN count(*) FILTER (WHERE graded) > 0
         THEN count(*) FILTER (WHERE graded AND passed) / count(*) FILTER (WHERE graded) END AS pass_rate
FROM v_attempts
GROUP BY run_id, instance_id;

-- One reward per graded attempt: `reward` 1 when resolved, else 0 (never verified counts as 0);
-- `f2p_passed` the share of the task's FAIL_TO_PASS tests that passed (missing ones failed; NULL
-- while the task is not recorded). `factory export --format rollouts` gives the same two numbers.
CREATE OR REPLACE VIEW v_rewards AS
SELECT
    a.run_id,
    a.instance_id,
    a.teacher,
    a.attempt_index,
    a.started_at,
    a.finished_at,
    CASE WHEN a.passed THEN 1.0 ELSE 0.0 END::DOUBLE AS reward,
    (SELECT count(*) FROM test_results r
     WHERE r.run_id = a.run_id AND r.instance_id = a.instance_id AND r.teacher = a.teacher
       AND r.attempt_index = a.attempt_index AND r.kind = 'F2P' AND r.status = 'passed')
        / nullif(len(t.fail_to_pass), 0) AS f2p_passed
FROM v_attempts a
LEFT JOIN tasks t ON t.run_id = a.run_id AND t.instance_id = a.instance_id
WHERE a.graded;
