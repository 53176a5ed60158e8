-- funnel: attempts left after each stage, per run.
--   attempts -> after each filter, in filter order (the first, `resolved`, keeps what the
--   verifier resolved) -> kept
-- Each stage has one meaning and each drop is counted once, by the filter that made it; the
-- filter stages carry the filters' names, as the run's summary and the card print them.
-- Filter stages start from the attempts whose filter decision is recorded ("decided"): while a
-- run is going they trail `attempts`; for a finished run they start from every attempt.
-- `dropped` is how many attempts that filter removed; `pct` is the share of all attempts left.
WITH per_run AS (
    SELECT run_id,
           count(*) AS attempts,
           count(*) FILTER (WHERE decided) AS decided,
           count(*) FILTER (WHERE kept) AS kept
    FROM v_attempts
    GROUP BY run_id
),
dropped AS (
    SELECT run_id, dropped_by AS filter, count(*) AS n
    FROM v_attempts
    WHERE dropped_by IS NOT NULL
    GROUP BY run_id, dropped_by
),
stages AS (
    SELECT run_id, 0 AS step, 'attempts' AS stage, attempts AS remaining, NULL::BIGINT AS dropped FROM per_run
    UNION ALL
    SELECT p.run_id, s.step, s.filter,
           p.decided - sum(coalesce(d.n, 0)) OVER (PARTITION BY p.run_id ORDER BY s.step),
           coalesce(d.n, 0)
    FROM per_run p
    CROSS JOIN filter_steps s
    LEFT JOIN dropped d ON d.run_id = p.run_id AND d.filter = s.filter
    UNION ALL
    SELECT run_id, 99, 'kept', kept, NULL FROM per_run
)
SELECT s.run_id, s.step, s.stage, s.remaining, s.dropped,
       round(100.0 * s.remaining / nullif(p.attempts, 0), 1) AS pct
FROM stages s
JOIN per_run p USING (run_id)
ORDER BY s.run_id, s.step;
