"""Verdict policies: how the fake judge decides its answer for one criterion.

An answer is ``"MET"``, ``"UNMET"``, ``"CANNOT_ASSESS"`` or the label of an option. A policy is
any callable ``(CriterionView) -> str``; the built-ins are below, and :func:`as_policy` turns a
plain string (fixed answer), a dict (per criterion id or text) or a callable into one.

Example:
    >>> from assay.testing.prompts import CriterionView
    >>> view = CriterionView("c1", "Mentions dosage", "Take 200 mg.")
    >>> FixedPolicy("MET")(view), PerCriterionPolicy({"c1": "UNMET"})(view)
    ('MET', 'UNMET')
    >>> RandomErrorPolicy(FixedPolicy("MET"), error_rate=1.0)(view)
    'UNMET'
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import InputError, Issue
from assay.testing.prompts import CriterionView

LABELS = ("MET", "UNMET", "CANNOT_ASSESS")
Policy = Callable[[CriterionView], str]


def normalize(answer: str) -> str:
    upper = answer.strip().upper().replace(" ", "_")
    return upper if upper in LABELS else answer.strip()


@dataclass(frozen=True)
class FixedPolicy:
    """Always the same answer."""

    answer: str

    def __call__(self, view: CriterionView) -> str:
        return normalize(self.answer)


@dataclass(frozen=True)
class PerCriterionPolicy:
    """Answers looked up by criterion id, then by criterion text; ``default`` otherwise."""

    answers: Mapping[str, str]
    default: str = "UNMET"

    def __call__(self, view: CriterionView) -> str:
        for key in (view.criterion_id, view.criterion_text):
            if key is not None and key in self.answers:
                return normalize(self.answers[key])
        return normalize(self.default)


@dataclass(frozen=True)
class _Truth:
    criterion_id: str | None
    criterion: str | None
    response: str | None
    answer: str


@dataclass
class GroundTruthPolicy:
    """Answers from a ground-truth JSONL file: lines ``{"criterion_id" or "criterion": ...,
    optional "response": substring of the graded response, "verdict": ... or "option": ...}``.
    A line with ``response`` wins over one without; ``default`` when nothing matches."""

    rows: list[_Truth] = field(default_factory=list)
    default: str = "CANNOT_ASSESS"

    @classmethod
    def from_file(cls, path: str | Path, default: str = "CANNOT_ASSESS") -> GroundTruthPolicy:
        from assay.io.jsonl import iter_jsonl

        path = Path(path)
        rows, issues = [], []
        for number, record in iter_jsonl(path, source=str(path)):
            if isinstance(record, Issue):
                issues.append(record)
                continue
            answer = record.get("verdict", record.get("option")) if isinstance(record, dict) else None
            if answer is None:
                issues.append(Issue(str(path), number, "verdict", "give verdict or option"))
                continue
            if record.get("criterion_id") is None and record.get("criterion") is None:
                issues.append(Issue(str(path), number, "criterion_id", "give criterion_id or criterion"))
                continue
            rows.append(_Truth(record.get("criterion_id"), record.get("criterion"),
                               record.get("response"), normalize(str(answer))))
        if issues:
            raise InputError(issues)
        return cls(rows, default)

    def __call__(self, view: CriterionView) -> str:
        fallback = None
        for row in self.rows:
            same = (row.criterion_id is not None and row.criterion_id == view.criterion_id) or (
                row.criterion is not None and row.criterion == view.criterion_text)
            if not same:
                continue
            if row.response is None:
                fallback = fallback or row.answer
            elif view.response_text is not None and row.response in view.response_text:
                return row.answer
        return fallback or normalize(self.default)


@dataclass(frozen=True)
class RandomErrorPolicy:
    """Wraps a truth policy and answers wrongly with probability ``error_rate``, deterministically
    for a seed and request (criterion and response). A wrong binary answer flips MET/UNMET; a
    wrong option answer picks another displayed option."""

    truth: Policy
    error_rate: float
    seed: int = 0

    def __call__(self, view: CriterionView) -> str:
        right = self.truth(view)
        draw = _unit(self.seed, view.criterion_id, view.criterion_text, view.response_text)
        if draw >= self.error_rate:
            return right
        if right == "MET":
            return "UNMET"
        if right == "UNMET":
            return "MET"
        others = [o for o in view.options if o != right]
        if others:
            return others[int(draw * 1e9) % len(others)]
        return "MET" if right == "CANNOT_ASSESS" else right


@dataclass
class CoinPolicy:
    """A judge with no signal: MET with probability ``p_met``, a fresh draw for every request,
    whatever the criterion or the response (``--policy coin:P``). The n-th request for one
    criterion and response takes the n-th draw of its own seeded stream, so repeated runs
    disagree as a coin does, and the same study gives the same figures whatever order its
    calls arrive in.

    >>> coin = CoinPolicy(0.9)
    >>> view = CriterionView("c1", "Mentions dosage", "Take 200 mg.")
    >>> "".join(coin(view)[0] for _ in range(12))  # the same request, asked 12 times
    'MMMMMMMMMMMU'
    """

    p_met: float
    seed: int = 0
    _seen: dict[tuple[str | None, ...], int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_met <= 1.0:
            raise InputError(f"coin:{self.p_met}: P(MET) must be in [0, 1]")

    def __call__(self, view: CriterionView) -> str:
        key = (view.criterion_id, view.criterion_text, view.response_text)
        with self._lock:
            n = self._seen[key] = self._seen.get(key, 0) + 1
        return "MET" if _unit(self.seed, *key, str(n)) < self.p_met else "UNMET"


@dataclass(frozen=True)
class CallablePolicy:
    """Any user function of the criterion view."""

    function: Policy

    def __call__(self, view: CriterionView) -> str:
        return normalize(self.function(view))


def _unit(seed: int, *parts: str | None) -> float:
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def as_policy(policy: str | Mapping[str, str] | Policy | None) -> Policy:
    """A policy from a fixed answer, a per-criterion mapping or a callable (None → MET)."""
    if policy is None:
        return FixedPolicy("MET")
    if isinstance(policy, str):
        return FixedPolicy(policy)
    if isinstance(policy, Mapping):
        return PerCriterionPolicy(policy)
    if callable(policy):
        return policy
    raise TypeError(f"not a policy: {policy!r}")


def policy_from_string(text: str, *, error_rate: float = 0.0, seed: int = 0) -> Policy:
    """The CLI's policy syntax: ``MET`` | ``UNMET`` | ``CANNOT_ASSESS`` | ``fixed:LABEL`` |
    ``truth:FILE.jsonl`` | ``dataset:FILE.json`` (an Autorubric dataset's ground truth) |
    ``perturbed:RATE:FILE.json`` (a seeded perturbed copy of it) | ``coin:P`` (MET with
    probability P on every request: :class:`CoinPolicy`); ``error_rate`` > 0 wraps it in a
    :class:`RandomErrorPolicy`.

        >>> policy_from_string("fixed:well")(CriterionView(None, None, None))
        'well'
    """
    kind, _, arg = text.partition(":")
    if kind.lower() == "truth" and arg:
        policy: Policy = GroundTruthPolicy.from_file(arg)
    elif kind.lower() in ("dataset", "perturbed") and arg:
        from assay.testing.dataset_policy import dataset_policy

        policy = dataset_policy(kind.lower(), arg, seed=seed)
    elif kind.lower() == "fixed" and arg:
        policy = FixedPolicy(arg)
    elif kind.lower() == "coin" and arg:
        try:
            policy = CoinPolicy(float(arg), seed=seed)
        except ValueError:
            raise InputError(f"--policy {text!r}: coin:P needs P(MET), a number in [0, 1]"
                             ) from None
    elif not arg:
        policy = FixedPolicy(text)
    else:
        raise InputError(f"--policy {text!r}: expected LABEL, fixed:LABEL, truth:FILE.jsonl, "
                         "dataset:FILE.json, perturbed:RATE:FILE.json or coin:P")
    return RandomErrorPolicy(policy, error_rate, seed) if error_rate > 0 else policy
