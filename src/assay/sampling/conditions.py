"""The system prompt a model under test is sampled with: none, a file, or a named condition.

Named conditions put rubrics in context:

* Health-SCORE's conditions (§3.5, Table 2), rendered by
  :func:`assay.bank.system_prompt.system_prompt`: ``single-axis``, ``multi-axes``,
  ``health-score`` (every criterion of a bank, the shipped Health-SCORE bank by default) and
  ``health-score-adaptive`` (per prompt, the criteria ``assay bank select`` chose for it: a
  selections JSONL, ``--selection FILE``; an item without a selection is an error);
* RubricsTree's ``handbook`` (§6.2, Prompt Optimization: "the rubrics tree is rendered as a
  structured clinical handbook and injected into the system prompt"; the paper gives no format,
  see :func:`render_handbook`), from ``--taxonomy starter|FILE``.

The system prompt goes before the item's conversation; a conversation that has its own system
message keeps it after the condition's text.

Example:
    >>> prompts = system_prompts(condition="single-axis")
    >>> prompts.for_item("q1")
    'You are a helpful assistant. Please generate a response that follows user instructions.'
    >>> system_prompts().for_item("q1") is None
    True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from assay.errors import ConfigError, InputError, Issue
from assay.rubric import Taxonomy

SAMPLING_CONDITIONS = ("none", "single-axis", "multi-axes", "health-score",
                       "health-score-adaptive", "handbook")
HANDBOOK_PREAMBLE = ("You are an expert personal health agent. Follow this clinical handbook: "
                     "each section lists what a good answer does when its condition applies.")


@dataclass(frozen=True)
class SystemPrompts:
    """The system prompt of each item: one for all (``shared``) or one per item id."""

    shared: str | None = None
    per_item: Mapping[str, str] = field(default_factory=dict)
    condition: str = "none"

    def for_item(self, item_id: str) -> str | None:
        if self.condition == "health-score-adaptive":
            if item_id not in self.per_item:
                raise InputError(Issue("--selection", None, item_id, "no selection for this "
                                       "item (run assay bank select on the same items)"))
            return self.per_item[item_id]
        return self.shared

    @property
    def fingerprint(self) -> str | None:
        """A hash of every text (part of a sampling job's config)."""
        if self.shared is None and not self.per_item:
            return None
        blob = json.dumps([self.shared, sorted(self.per_item.items())]).encode()
        return hashlib.sha256(blob).hexdigest()


def system_prompts(*, condition: str | None = None, system_file: str | Path | None = None,
                   bank: str | Path | None = None, selection: str | Path | None = None,
                   taxonomy: str | Path | None = None) -> SystemPrompts:
    """The system prompts of a sampling job; a file and a named condition together are
    refused, and so is an option the condition does not use."""
    if system_file is not None and condition not in (None, "none"):
        raise ConfigError("give --system FILE or --condition NAME, not both")
    condition = condition or "none"
    if condition not in SAMPLING_CONDITIONS:
        raise ConfigError(f"--condition {condition!r}: unknown; use "
                          f"{', '.join(SAMPLING_CONDITIONS)}")
    _refuse_unused(condition, bank=bank, selection=selection, taxonomy=taxonomy)
    if system_file is not None:
        return SystemPrompts(_read_system_file(Path(system_file)), condition="file")
    if condition == "none":
        return SystemPrompts()
    if condition == "handbook":
        from assay.io import read_taxonomy
        from assay.routing.data import resolve_taxonomy

        if taxonomy is None:
            raise ConfigError("--condition handbook renders a taxonomy: give --taxonomy "
                              "starter|FILE")
        return SystemPrompts(render_handbook(read_taxonomy(resolve_taxonomy(taxonomy))),
                             condition=condition)
    from assay.bank.shipped import load_bank
    from assay.bank.system_prompt import render_criteria, system_prompt

    if condition == "health-score-adaptive":
        if selection is None:
            raise ConfigError("--condition health-score-adaptive needs --selection FILE (the "
                              "output of assay bank select)")
        criteria = load_bank(bank or "health-score")
        chosen_ids = read_selections(Path(selection))
        empty = [Issue(str(selection), None, k, "no criterion selected")
                 for k, ids in chosen_ids.items() if not ids]
        if empty:
            raise InputError(empty)
        per_item = {item_id: render_criteria([criteria.criterion(i) for i in ids])
                    for item_id, ids in chosen_ids.items()}
        return SystemPrompts(per_item=per_item, condition=condition)
    chosen = load_bank(bank or "health-score").criteria if condition == "health-score" else None
    return SystemPrompts(system_prompt(condition, chosen), condition=condition)


def read_selections(path: Path) -> dict[str, list[str]]:
    """``item_id`` → selected criterion ids, from ``assay bank select``'s JSONL output."""
    from assay.io.jsonl import iter_jsonl

    out: dict[str, list[str]] = {}
    issues: list[Issue] = []
    for number, record in iter_jsonl(path, source=str(path)):
        if isinstance(record, Issue):
            issues.append(record)
        elif not isinstance(record, dict) or not isinstance(record.get("item_id"), str):
            issues.append(Issue(str(path), number, "item_id", "missing or not a string"))
        elif not isinstance(record.get("selected"), list) or not all(
                isinstance(i, str) for i in record["selected"]):
            issues.append(Issue(str(path), number, "selected", "expected a list of criterion "
                                "ids"))
        else:
            out[record["item_id"]] = record["selected"]
    if issues:
        raise InputError(issues)
    return out


def render_handbook(taxonomy: Taxonomy) -> str:
    """A taxonomy as a structured clinical handbook: the whole tree as nested Markdown headings
    (level 1 ``##``, level 2 ``###``, ...), each leaf a line with its criterion and, in
    brackets, when it applies (its trigger). RubricsTree gives no format (spec §6.2); this is
    Assay's, and it renders the whole tree (the routed subset is what grading sees).

    >>> from assay.rubric import Criterion, TaxonomyNode
    >>> tree = Taxonomy(id="t", root=TaxonomyNode(id="root", name="Health", children=[
    ...     TaxonomyNode(id="s", name="Sleep", children=[TaxonomyNode(id="s1", name="Hygiene",
    ...         criterion=Criterion(id="s1", text="Gives sleep hygiene advice.",
    ...                             trigger="the user sleeps badly"))])]))
    >>> print(render_handbook(tree))
    You are an expert personal health agent. Follow this clinical handbook: each section lists what a good answer does when its condition applies.
    <BLANKLINE>
    # Health
    <BLANKLINE>
    ## Sleep
    - Gives sleep hygiene advice. (When: the user sleeps badly)
    """
    lines = [HANDBOOK_PREAMBLE, ""]
    for node, path in taxonomy.walk():
        if node.criterion is not None:
            trigger = node.criterion.trigger
            lines.append(f"- {node.criterion.text}" + (f" (When: {trigger})" if trigger else ""))
        else:
            if lines[-1] != "":
                lines.append("")
            lines.extend([f"{'#' * (len(path) + 1)} {node.name}", ""])
    while lines[-1] == "":
        lines.pop()
    return "\n".join(lines).replace("\n\n-", "\n-")


def _read_system_file(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--system {path}: cannot read it ({exc.strerror})") from None
    if not text.strip():
        raise ConfigError(f"--system {path}: the file is empty")
    return text


def _refuse_unused(condition: str, **options: object) -> None:
    uses = {"bank": ("health-score", "health-score-adaptive"),
            "selection": ("health-score-adaptive",), "taxonomy": ("handbook",)}
    for name, value in options.items():
        if value is not None and condition not in uses[name]:
            raise ConfigError(f"--{name} is not used by --condition {condition}")
