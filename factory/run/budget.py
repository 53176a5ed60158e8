"""The run's budget: whether one more attempt may start, so that money spent never passes
`budget.max_cost_usd` (docs/run.md, "Budget").

    Terms                  what the budget is given of the pipeline (the runner makes it)
    Budget(terms)          started / sampled / pay as attempts go; allows(teacher) before each
    first_ceiling(t, a)    the most one attempt of a teacher can cost, from its price and limits
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from factory.agent.config import AgentConfig
from factory.records import INFRA_EXITS, Attempt
from factory.teachers.prices import price_of


def first_ceiling(teacher: Any, agent: AgentConfig) -> float | None:
    """The most one attempt of `teacher` can cost, from its price and the agent's limits; None
    when its price is unknown.

    Output: at most `agent.max_turns` turns of the teacher's `max_tokens` each, and no more than
    `agent.max_tokens` plus one turn (the agent stops after the turn that passes its token cap).
    Input: every turn but the last reads at most `agent.max_tokens` in all (the same cap), and
    the last one re-reads the conversation, at most as many again, plus the tool output added
    since, which no setting bounds in tokens and is left out. Input is priced at its dearest
    rate, output at its own.
    """
    price = price_of(teacher)
    if price is None:
        return None
    per_turn = getattr(teacher, "max_tokens", None) or agent.max_tokens
    output = min(agent.max_turns * per_turn, agent.max_tokens + per_turn)
    return price.most(input_tokens=2 * agent.max_tokens, output_tokens=output)


@dataclass(frozen=True)
class Terms:
    """What the budget needs of the pipeline, and no more: made by the run
    (`factory.run.runner.terms_of`); the forecast reads the same."""

    limit: float | None
    """`budget.max_cost_usd`: None, no budget."""
    per_attempt: float | None
    """`agent.max_cost_usd`: when set, every attempt's ceiling."""
    first: dict[str, float | None]
    """Each teacher's `first_ceiling` by label, in the pipeline's order; None: its price is unknown."""

    def first_ceiling(self, teacher: str) -> float | None:
        """An attempt's ceiling before any attempt of `teacher` has finished."""
        return self.per_attempt if self.per_attempt is not None else self.first.get(teacher)


class Budget:
    """Whether a unit may start: spent + the ceilings of the attempts sampling now, the new one
    included, stay within `budget.max_cost_usd`.

    An attempt's ceiling is `agent.max_cost_usd` when set; else the largest cost an attempt of
    its teacher has had so far; else, before one has finished, `first_ceiling`. An attempt's
    cost counts once it is known (its sampling ended), once per attempt key however often it is
    recorded; an attempt of unknown cost counts as its ceiling.
    """

    def __init__(self, terms: Terms):
        self.terms = terms
        self.limit = terms.limit
        self.seen: dict[str, float] = {}  # largest cost of a sampled attempt, per teacher
        self.sampling: Counter[str] = Counter()  # attempts in flight (sampling), per teacher
        self.paid: dict[tuple[str, str, int], float] = {}
        self.spent = 0.0
        self.by_teacher: Counter[str] = Counter()  # cost paid, per teacher
        self.count: Counter[str] = Counter()  # attempts paid, per teacher

    def expected(self, teacher: str) -> float:
        """What the next attempt of `teacher` is taken to cost: the mean so far, else its ceiling."""
        if self.count[teacher]:
            return self.by_teacher[teacher] / self.count[teacher]
        return self.ceiling(teacher)

    def ceiling(self, teacher: str) -> float:
        if self.terms.per_attempt is None and teacher in self.seen:
            return self.seen[teacher]
        first = self.terms.first_ceiling(teacher)
        return math.inf if first is None else first  # no price, no ceiling: never launched on a budget

    def committed(self) -> float:
        """Spent plus the ceilings of the attempts sampling now."""
        return self.spent + sum(n * self.ceiling(t) for t, n in self.sampling.items())

    def allows(self, teacher: str) -> bool:
        if self.limit is None:
            return True
        return self.committed() + self.ceiling(teacher) <= self.limit + 1e-9  # float sums, not money

    def started(self, teacher: str) -> None:
        self.sampling[teacher] += 1

    def sampled(self, teacher: str) -> None:
        self.sampling[teacher] -= 1

    def pay(self, attempt: Attempt) -> None:
        """Count what `attempt` cost; again for the same key replaces, never adds."""
        if self.limit is None:
            return
        teacher, t = attempt.key.teacher, attempt.trajectory
        cost = t.cost_usd if t is not None else 0.0
        if cost is None:
            cost = self.ceiling(teacher)
        elif t is not None and t.exit not in INFRA_EXITS:  # infrastructure cut it short: not a model's attempt
            self.seen[teacher] = max(self.seen.get(teacher, 0.0), cost)
        if t is not None:  # requests cut off in flight may have been billed: the budget takes them as spent
            cost += t.possibly_billed_usd or 0.0
        key = (attempt.key.instance_id, attempt.key.teacher, attempt.key.index)
        self.spent += cost - self.paid.get(key, 0.0)
        self.by_teacher[teacher] += cost - self.paid.get(key, 0.0)
        self.count[teacher] += key not in self.paid
        self.paid[key] = cost
