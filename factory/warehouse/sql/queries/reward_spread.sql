-- reward_spread: the spread of reward within each group of rollouts, as the group grew. A group
-- is one task sampled by one teacher (GRPO's group: one prompt, one policy); its attempts come in
-- the order they finished. For each attempt: its reward (1 resolved, else 0) and FAIL_TO_PASS share,
-- then over the group so far the mean reward and the standard deviation of reward and of the
-- FAIL_TO_PASS share (population std: 0 for a group that all passed or all failed, which gives
-- GRPO no advantage), and whether the group is mixed yet. A spread that falls as runs go on
-- warns of collapse before pass rates move. Graded attempts only (infrastructure failures are not
-- rollouts). Per group and time: `... ORDER BY finished_at`.
SELECT
    run_id,
    instance_id,
    teacher,
    attempt_index,
    finished_at,
    row_number() OVER g AS nth,
    reward,
    f2p_passed,
    avg(reward) OVER g AS mean_reward,
    stddev_pop(reward) OVER g AS reward_std,
    stddev_pop(f2p_passed) OVER g AS f2p_std,
    min(reward) OVER g < max(reward) OVER g AS mixed
FROM v_rewards
WINDOW g AS (PARTITION BY run_id, instance_id, teacher ORDER BY finished_at, attempt_index
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
ORDER BY run_id, instance_id, teacher, nth;
