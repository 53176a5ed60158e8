-- loop_rate: how often the loops filter caught a run repeating itself, per run and teacher.
--   checked = attempts that reached the loops filter (a recorded filter decision, not dropped by
--   the resolved filter before it); looped = dropped by the loops filter, split into
--   repeated_action (the same action again and again) and action_cycle (a short cycle);
--   loop_rate = looped / checked. max_turns_rate is the share of all attempts that ran out of
--   turns, where unverified loops usually end.
WITH counts AS (
    SELECT
        run_id,
        teacher,
        count(*) AS attempts,
        count(*) FILTER (WHERE decided AND coalesce(dropped_by, '') <> 'resolved') AS checked,
        count(*) FILTER (WHERE dropped_by = 'loops') AS looped,
        count(*) FILTER (WHERE dropped_by = 'loops' AND drop_reason = 'repeated_action') AS repeated_action,
        count(*) FILTER (WHERE dropped_by = 'loops' AND drop_reason = 'action_cycle') AS action_cycle,
        count(*) FILTER (WHERE exit = 'max_turns') AS max_turns
    FROM v_attempts
    GROUP BY run_id, teacher
)
SELECT
    run_id, teacher, attempts, checked, looped, repeated_action, action_cycle,
    looped / nullif(checked, 0) AS loop_rate,
    max_turns / attempts AS max_turns_rate
FROM counts
ORDER BY run_id, loop_rate DESC NULLS LAST, teacher;
