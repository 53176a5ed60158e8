-- cost_per_kept: what one kept trajectory cost, per run and teacher, plus a total row per run
-- (teacher = '(all)'). cost_usd adds the attempts with a known price; `unpriced` counts those
-- without one, and cost_per_kept is NULL while any attempt in the row is unpriced (a partial
-- sum would understate it). Tokens and agent seconds per kept count every attempt, kept or not.
WITH sums AS (
    SELECT
        run_id,
        CASE WHEN grouping(teacher) = 1 THEN '(all)' ELSE teacher END AS teacher,
        grouping(teacher) AS is_total,
        count(*) AS attempts,
        count(*) FILTER (WHERE kept) AS kept,
        sum(cost_usd) AS cost_usd,
        count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced,
        sum(total_tokens) AS tokens,
        sum(wall_seconds) AS agent_seconds
    FROM v_attempts
    GROUP BY GROUPING SETS ((run_id, teacher), (run_id))
)
SELECT
    run_id, teacher, attempts, kept, cost_usd, unpriced,
    CASE WHEN unpriced = 0 THEN cost_usd / nullif(kept, 0) END AS cost_per_kept,
    tokens / nullif(kept, 0) AS tokens_per_kept,
    agent_seconds / nullif(kept, 0) AS agent_seconds_per_kept
FROM sums
ORDER BY run_id, is_total, teacher;
