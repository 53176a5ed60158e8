-- pass_rate_by_teacher: per run and teacher, how often it solved tasks and what it left.
--   pass_rate = passed / graded (attempts not ended by an infrastructure error);
--   tasks_solved = tasks with at least one resolved attempt by this teacher;
--   scripted = true marks the offline scripted teacher (not a real model).
SELECT
    run_id,
    teacher,
    model,
    scripted,
    count(*) AS attempts,
    count(*) FILTER (WHERE graded) AS graded,
    count(*) FILTER (WHERE graded AND passed) AS passed,
    count(*) FILTER (WHERE graded AND passed) / nullif(count(*) FILTER (WHERE graded), 0) AS pass_rate,
    count(DISTINCT instance_id) AS tasks,
    count(DISTINCT instance_id) FILTER (WHERE graded AND passed) AS tasks_solved,
    count(*) FILTER (WHERE kept) AS kept,
    avg(n_turns) AS mean_turns,
    sum(cost_usd) AS cost_usd
FROM v_attempts
GROUP BY run_id, teacher, model, scripted
ORDER BY run_id, pass_rate DESC NULLS LAST, teacher;
