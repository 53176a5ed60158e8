-- mixed_groups: how many groups (one task, one teacher) hold both a resolved and an unresolved
-- graded attempt, per run and teacher and for the run as a whole (`teacher` = '(all)'). Only a
-- mixed group gives group-relative RL (GRPO) a nonzero advantage. `groups` counts groups with at
-- least two graded attempts (a group of one can never be mixed); `share_mixed` is mixed / groups;
-- `mean_reward_std` the mean within-group standard deviation of reward; `all_passed` and
-- `all_failed` the groups with nothing to learn from. The whole run's row comes first.
WITH groups AS (
    SELECT run_id, instance_id, teacher, count(*) AS n, stddev_pop(reward) AS reward_std,
           min(reward) < max(reward) AS mixed, min(reward) = 1 AS all_passed, max(reward) = 0 AS all_failed
    FROM v_rewards
    GROUP BY run_id, instance_id, teacher
    HAVING count(*) >= 2
)
SELECT
    run_id,
    coalesce(teacher, '(all)') AS teacher,
    count(*) AS groups,
    count(*) FILTER (WHERE mixed) AS mixed,
    count(*) FILTER (WHERE mixed) / count(*) AS share_mixed,
    avg(reward_std) AS mean_reward_std,
    count(*) FILTER (WHERE all_passed) AS all_passed,
    count(*) FILTER (WHERE all_failed) AS all_failed
FROM groups
GROUP BY GROUPING SETS ((run_id, teacher), (run_id))
ORDER BY run_id, grouping(teacher) DESC, teacher;
