"""A run, from its tasks to its dataset: the orchestration between the stages, in one package.

    runner      `factory run` / `factory build`: load tasks, open the executor, schedule, build
    scheduler   the one owner of concurrency: which unit starts when, slots, retries, signals, resume
    allocation  where the next attempt goes and when a task needs no more (the cap, decided once)
    keeper      which finished runs the dataset keeps, by the pipeline's own filter chain
    budget      whether one more attempt fits `budget.max_cost_usd`
    forecast    the allocation played over simulated tasks, before a run (`--dry-run`)
    folder      the run folder: the source of truth for resume (`RunStore`)
    progress    the live display;  show: `factory show`

Nothing here is imported by a stage: the stages (and the executors, `factory.executor`) sit
below, the command line above (tests/test_layers.py draws the imports and holds that).
Importing this package loads nothing: each module is imported by its own name.
"""
