"""What one ``assay serve`` request may ask for: items, criteria per item, judge calls.

A request over a limit is answered 413 with a message naming the limit and its flag, before
anything is scored, so what one request costs (judge calls, memory, time) is bounded by these
limits and not by what a client sends. The defaults fit a GRPO batch: 1,024 items, each graded
on the 29 criteria of the Health-SCORE bank (29,696 judge calls), or on its own rubric of up
to 128 criteria (HealthBench's longest rubrics have about 50).

Example:
    >>> from assay.rubric import Criterion
    >>> limits = RequestLimits(max_items=2, max_criteria=1, max_judge_calls=10)
    >>> limits.too_many_items(3)
    '3 items in one request, over the limit of 2 (assay serve --max-items)'
    >>> two = (Criterion(id="a", text="A."), Criterion(id="b", text="B."))
    >>> limits.refusal([two], bank_size=0, where=lambda i: f"items[{i}].criteria")
    'items[0].criteria: 2 criteria, over the limit of 1 per item (assay serve --max-criteria)'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay.errors import ConfigError
from assay.rubric import Criterion

DEFAULT_MAX_ITEMS = 1024
DEFAULT_MAX_CRITERIA = 128
DEFAULT_MAX_JUDGE_CALLS = 32_768


@dataclass(frozen=True)
class RequestLimits:
    max_items: int = DEFAULT_MAX_ITEMS
    max_criteria: int = DEFAULT_MAX_CRITERIA      # criteria an item brings (not the bank's)
    max_judge_calls: int = DEFAULT_MAX_JUDGE_CALLS

    def __post_init__(self) -> None:
        for name in ("max_items", "max_criteria", "max_judge_calls"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1")

    def too_many_items(self, count: int) -> str | None:
        """Why a request of ``count`` items is refused (checked before its items are read)."""
        if count > self.max_items:
            return (f"{count:,} items in one request, over the limit of {self.max_items:,} "
                    "(assay serve --max-items)")
        return None

    def refusal(self, criteria: Sequence[Sequence[Criterion] | None], *, bank_size: int,
                where: Callable[[int], str]) -> str | None:
        """Why a request whose items bring ``criteria`` (None: the server's, ``bank_size`` of
        them at most) is refused; ``where(i)`` names item ``i``'s criteria field."""
        calls = 0
        for i, given in enumerate(criteria):
            if given is not None and len(given) > self.max_criteria:
                return (f"{where(i)}: {len(given):,} criteria, over the limit of "
                        f"{self.max_criteria:,} per item (assay serve --max-criteria)")
            calls += bank_size if given is None else len(given)
        if calls > self.max_judge_calls:
            return (f"the request needs up to {calls:,} judge calls (one per item and "
                    f"criterion), over the limit of {self.max_judge_calls:,} per request "
                    "(assay serve --max-judge-calls)")
        return None
