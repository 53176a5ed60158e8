-- pass_rate_by_task: per run and task, how often the teachers solved it, and its band.
--   pass_rate = passed / graded, where graded attempts are those not ended by an infrastructure
--   error (sandbox crash, API outage); an attempt that was never verified counts as failed.
--   band: too_easy (pass rate 1), too_hard (0), learnable (in between), ungraded (no graded
--   attempt yet), not_attempted (a recorded task without attempts).
-- Hardest first. Filter to one run with `factory query pass_rate_by_task --run RUN_ID`.
SELECT
    coalesce(p.run_id, t.run_id) AS run_id,
    coalesce(p.instance_id, t.instance_id) AS instance_id,
    coalesce(p.repo, t.repo) AS repo,
    coalesce(p.attempts, 0) AS attempts,
    coalesce(p.graded, 0) AS graded,
    coalesce(p.infra_errors, 0) AS infra_errors,
    coalesce(p.passed, 0) AS passed,
    coalesce(p.kept, 0) AS kept,
    p.pass_rate,
    CASE
        WHEN p.attempts IS NULL THEN 'not_attempted'
        WHEN p.graded = 0 THEN 'ungraded'
        WHEN p.pass_rate = 0 THEN 'too_hard'
        WHEN p.pass_rate = 1 THEN 'too_easy'
        ELSE 'learnable'
    END AS band
FROM v_task_pass p
FULL JOIN tasks t ON t.run_id = p.run_id AND t.instance_id = p.instance_id
ORDER BY 1, p.pass_rate NULLS LAST, 2;
