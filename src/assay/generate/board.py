"""The Reference Board: the filtered atomic facts and the interaction intent, each with a label
(``P1`` positive fact, ``N1`` negative constraint, ``R1`` red flag, ``Q1`` missing-context
question, ``TONE`` persona and tone) and, for facts, the ids of the chunks it came from.

:func:`safety_override` is the filter stage's rule in code: every raw red flag and negative
constraint is kept whatever the filter returned (seed 000, Table 12, "ALWAYS retain all
safety_red_flags and negative_constraints"). :func:`attribute` ties a fact back to the chunks
whose words it uses, so a criterion citing the fact cites those chunks.

Example:
    >>> raw = {"positive_atomic_facts": ["a"], "negative_constraints": ["No aspirin under 16."],
    ...        "safety_red_flags": ["Stiff neck needs care now.", "Rash that does not fade."]}
    >>> kept = safety_override(raw, {"relevant_positive_facts": ["a"],
    ...                              "relevant_negative_constraints": [],
    ...                              "relevant_red_flags": ["Stiff neck needs care now."]})
    >>> kept["relevant_negative_constraints"], kept["relevant_red_flags"]
    (['No aspirin under 16.'], ['Stiff neck needs care now.', 'Rash that does not fade.'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.evidence.chunking import Chunk
from assay.evidence.tokens import overlap, tokens

KINDS = {"P": "positive", "N": "negative", "R": "red_flag", "Q": "question", "TONE": "tone"}
MIN_ATTRIBUTION = 0.5  # share of a fact's content words that must occur in a chunk


@dataclass(frozen=True)
class Fact:
    label: str
    kind: str
    text: str
    chunks: tuple[str, ...] = ()


@dataclass
class Board:
    facts: list[Fact] = field(default_factory=list)

    @property
    def by_label(self) -> dict[str, Fact]:
        return {f.label: f for f in self.facts}

    def of_kind(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]

    @property
    def has_medical_facts(self) -> bool:
        return any(f.kind in ("positive", "negative", "red_flag") for f in self.facts)

    def facts_text(self) -> str:
        sections = [("POSITIVE FACTS", "positive"), ("NEGATIVE CONSTRAINTS", "negative"),
                    ("SAFETY RED FLAGS", "red_flag")]
        lines = []
        for title, kind in sections:
            lines.append(f"{title}:")
            lines.extend(f"[{f.label}] {f.text}" for f in self.of_kind(kind))
            if not self.of_kind(kind):
                lines.append("(none)")
        return "\n".join(lines)

    def intent_text(self) -> str:
        lines = ["USER INTENT:"]
        lines.extend(f"[{f.label}] {f.text}" for f in self.of_kind("tone"))
        lines.append("Missing context questions:")
        lines.extend(f"[{f.label}] {f.text}" for f in self.of_kind("question"))
        return "\n".join(lines)

    def as_dict(self) -> list[dict[str, Any]]:
        return [{"label": f.label, "kind": f.kind, "text": f.text, "chunks": list(f.chunks)}
                for f in self.facts]


def _unique(values: Sequence[Any]) -> list[str]:
    seen: set[str] = set()
    out = []
    for value in values:
        text = " ".join(str(value).split())
        key = text.casefold()
        if text and key not in seen:
            seen.add(key)
            out.append(text)
    return out


def safety_override(raw: dict[str, Any], filtered: dict[str, Any]) -> dict[str, list[str]]:
    """The filtered facts with every raw negative constraint and red flag added back (filtered
    order first, then the raw ones the filter dropped; duplicates ignoring case and spaces)."""
    return {
        "relevant_positive_facts": _unique(filtered.get("relevant_positive_facts", [])),
        "relevant_negative_constraints": _unique([*filtered.get("relevant_negative_constraints", []),
                                                  *raw.get("negative_constraints", [])]),
        "relevant_red_flags": _unique([*filtered.get("relevant_red_flags", []),
                                       *raw.get("safety_red_flags", [])]),
    }


def attribute(text: str, chunks: Sequence[Chunk]) -> tuple[str, ...]:
    """Ids of the chunks that best carry ``text``: those sharing at least half its content
    words and within 80% of the best share; none if no chunk reaches half."""
    scored = [(overlap(text, set(tokens(f"{c.title} {c.text}"))), c.id) for c in chunks]
    best = max((s for s, _ in scored), default=0.0)
    if best < MIN_ATTRIBUTION:
        return ()
    return tuple(cid for s, cid in scored if s >= 0.8 * best)


def build_board(facts: dict[str, list[str]], intent: dict[str, Any] | None,
                chunks: Sequence[Chunk]) -> Board:
    """Label the (safety-overridden) facts and the intent, attributing facts to chunks."""
    board = Board()
    for prefix, key in (("P", "relevant_positive_facts"), ("N", "relevant_negative_constraints"),
                        ("R", "relevant_red_flags")):
        for i, text in enumerate(facts.get(key, []), start=1):
            board.facts.append(Fact(f"{prefix}{i}", KINDS[prefix], text, attribute(text, chunks)))
    if intent:
        persona, tone = str(intent.get("user_persona", "")), str(intent.get("tone", ""))
        board.facts.append(Fact("TONE", "tone", f"persona: {persona}; tone: {tone}"))
        for i, question in enumerate(_unique(intent.get("missing_context_questions", [])), 1):
            board.facts.append(Fact(f"Q{i}", "question", question))
    return board
