-- exit_reasons: how attempts ended, per run and teacher. `exit` is the agent loop's exit
-- (submitted, max_turns, max_tokens, format_error, timeout, sandbox_error, teacher_error,
-- budget; '(none)' without a trajectory); `outcome` adds what happened next: resolved,
-- unresolved:<verdict reason>, unverified:<exit> or error:<error class>.
-- `share` is the fraction of that teacher's attempts in the run.
SELECT
    run_id,
    teacher,
    coalesce(exit, '(none)') AS exit,
    outcome,
    count(*) AS attempts,
    count(*) / sum(count(*)) OVER (PARTITION BY run_id, teacher) AS share
FROM v_attempts
GROUP BY run_id, teacher, coalesce(exit, '(none)'), outcome
ORDER BY run_id, teacher, attempts DESC, exit, outcome;
