"""Completion budgets: how many tokens a call's reply may take (sent as ``max_tokens``).

Every call Assay makes sends one, so a model that runs away inside valid JSON stops at a
bound instead of filling a local server's context. Each stage declares the budget its reply
needs (``tokens``) and the most it may be given (``cap``): a reply cut at ``tokens``
(finish reason ``length``) is asked once more with ``cap`` tokens, the same prompt, and is a
``truncated`` failure if that is cut too (:class:`~assay.judges.judge.Judge`). A judge whose
own config sets ``max_tokens`` sends that instead, on every call, and never grows it: a reply
cut at the user's limit is ``truncated`` at once.

Example:
    >>> budget = CompletionBudget(512, cap=2048)
    >>> budget.grown
    2048
    >>> CompletionBudget(256).grown is None   # no cap above the need: nothing to grow to
    True
    >>> per_criterion = CompletionBudget(300, cap=1200)
    >>> per_criterion.times(10)
    CompletionBudget(tokens=3000, cap=12000)
    >>> CompletionBudget.listing(5, each=60)   # 128 for the reply's frame, 60 per entry
    CompletionBudget(tokens=428, cap=1712)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CompletionBudget:
    """The completion tokens a reply needs and the cap a cut reply is asked again with."""

    tokens: int
    cap: int = 0  # 0: the same as ``tokens`` (no retry with a larger budget)

    def __post_init__(self) -> None:
        if self.tokens < 1:
            raise ValueError(f"a completion budget needs at least 1 token, got {self.tokens}")
        if self.cap < self.tokens:
            object.__setattr__(self, "cap", self.tokens)

    @property
    def grown(self) -> int | None:
        """The budget of the one retry of a cut reply (None: the cap is reached already)."""
        return self.cap if self.cap > self.tokens else None

    def times(self, n: int) -> CompletionBudget:
        """The budget of a reply holding ``n`` replies of this budget (e.g. per-item verdicts)."""
        return CompletionBudget(self.tokens * max(1, n), self.cap * max(1, n))

    @classmethod
    def listing(cls, n: int, *, each: int, frame: int = 128) -> CompletionBudget:
        """The budget of a reply listing ``n`` entries of about ``each`` tokens, capped at four
        times that (a verbose model)."""
        tokens = frame + each * n
        return cls(tokens, cap=4 * tokens)


DEFAULT_BUDGET = CompletionBudget(1024, cap=4096)
"""The budget of a call that declares none (a structured reply of a few sentences)."""
