-- learnable_tasks: an RL-ready task list, per run. Tasks whose pass rate p is strictly between
-- 0 and 1 (some graded attempts passed, some failed), with their counts and the chance that a
-- group-relative RL group (GRPO-style) of G rollouts is mixed, i.e. holds at least one success
-- and one failure and so has a nonzero advantage: 1 - p^G - (1-p)^G, for G = 8 and G = 64,
-- assuming the student solves it at the teachers' rate and rollouts are independent.
-- Most useful first. Export: `factory query learnable_tasks --format csv > tasks.csv`
-- (or --format json); `source` and `instance_id` find the task again, `language` says what it
-- needs (its image's toolchain and test framework).
SELECT
    p.run_id,
    p.instance_id,
    p.repo,
    p.language,
    t.source,
    t.image,
    p.graded,
    p.passed,
    p.pass_rate,
    1 - pow(p.pass_rate, 8) - pow(1 - p.pass_rate, 8) AS p_mixed_8,
    1 - pow(p.pass_rate, 64) - pow(1 - p.pass_rate, 64) AS p_mixed_64,
    p.teachers
FROM v_task_pass p
LEFT JOIN tasks t ON t.run_id = p.run_id AND t.instance_id = p.instance_id
WHERE p.pass_rate > 0 AND p.pass_rate < 1
ORDER BY p.run_id, p_mixed_8 DESC, p.instance_id;
