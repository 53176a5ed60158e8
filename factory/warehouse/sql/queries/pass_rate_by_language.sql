-- pass_rate_by_language: per run and task language, how often attempts solved tasks and how many
-- rows the dataset kept; a mixed-language run (Python, Go, JavaScript, Java, Rust, ...) shows here
-- which toolchains its teachers handle and where its rows come from.
--   language = the task's, as its task set names it ('(unknown)' while the task is not recorded);
--   pass_rate = passed / graded (attempts not ended by an infrastructure error);
--   tasks_solved = tasks with at least one resolved attempt; kept = rows in the dataset.
SELECT
    run_id,
    coalesce(language, '(unknown)') AS language,
    count(*) AS attempts,
    count(*) FILTER (WHERE graded) AS graded,
    count(*) FILTER (WHERE graded AND passed) AS passed,
    count(*) FILTER (WHERE graded AND passed) / nullif(count(*) FILTER (WHERE graded), 0) AS pass_rate,
    count(DISTINCT instance_id) AS tasks,
    count(DISTINCT instance_id) FILTER (WHERE graded AND passed) AS tasks_solved,
    count(*) FILTER (WHERE kept) AS kept,
    sum(cost_usd) AS cost_usd
FROM v_attempts
GROUP BY run_id, coalesce(language, '(unknown)')
ORDER BY run_id, language;
