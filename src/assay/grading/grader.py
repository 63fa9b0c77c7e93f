"""The grader: turns (item, rubric, judge) into planned judge calls, and replies into verdicts.

Two call modes:

* ``per-criterion`` (default): one call per criterion, so each verdict is judged in isolation
  (Autorubric's and HealthBench's protocol);
* ``per-item``: one call for all criteria of an item, answered as ``{"verdicts": {id: ...}}``;
  cheaper, at the price of criteria influencing each other.

Each :class:`PlannedCall` has a stable ``key`` (item, judge, criteria) that the run store uses
to know which calls are finished, so a resumed run never repeats one. Option permutations are
seeded per (master seed, item, criterion, judge) and kept on the call.

Example:
    >>> from assay.item import Item
    >>> from assay.rubric import Rubric
    >>> rubric = Rubric(criteria=[{"id": "stinger", "text": "Explains how to remove the stinger."}])
    >>> item = Item(id="q1", prompt="Bee sting?", response="Scrape it out.")
    >>> grader = Grader(GradingConfig(seed=1))
    >>> [call] = grader.plan(item, rubric, judge="j")
    >>> call.criterion_ids, call.messages[-1]["content"].count('<criterion id="stinger">')
    (('stinger',), 1)
    >>> grader.interpret(call, {"verdict": "MET", "explanation": "yes"})[0].decision
    <Decision.MET: 'MET'>
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import orjson

from assay.errors import ConfigError
from assay.grading import schemas
from assay.grading.fewshot import Example, FewShot, select_examples
from assay.grading.parse import (
    ReplyError,
    parse_bracket_reply,
    parse_criterion_reply,
    parse_item_reply,
)
from assay.grading.prompts import (
    criterion_messages,
    healthbench_messages,
    item_messages,
    shared_head,
)
from assay.grading.shuffle import identity, option_permutation
from assay.grading.templates import Template, builtin_template, is_builtin, load_template
from assay.item import Item
from assay.judges.completion import CompletionBudget
from assay.rubric import Criterion, Rubric
from assay.verdict import Verdict

Mode = Literal["per-criterion", "per-item"]
SLOTS = ("binary", "multi_choice", "per_item")


@dataclass(frozen=True)
class GradingConfig:
    """What shapes the judge calls (everything here is part of a run's config hash).

    ``templates`` maps a slot (binary, multi_choice, per_item) to a built-in template name or a
    template file, or is ``{"all": "healthbench"}`` (or ``{"all": FILE}`` with a healthbench-style
    file) for HealthBench's grader protocol on every criterion.
    """

    mode: Mode = "per-criterion"
    templates: Mapping[str, str] = field(default_factory=dict)
    shuffle: bool = True
    seed: int = 0
    few_shot: FewShot | None = None
    # which repeat of a consistency study (assay grade --repeats) this run is, from 0: its calls
    # are sent as JudgeRequest.sample, so they are new draws (own cache key, judge seed + repeat)
    repeat: int = 0
    # an evaluator role (e.g. one of RubricsTree's P3a-e headers): sent as a system message
    # before every call's own messages (None: the templates alone)
    role: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("per-criterion", "per-item"):
            raise ConfigError(f"unknown call mode {self.mode!r}; use per-criterion or per-item")
        unknown = set(self.templates) - {*SLOTS, "all"}
        if unknown:
            raise ConfigError(f"unknown template slot(s) {sorted(unknown)}; slots: {', '.join(SLOTS)}")
        if "all" in self.templates and _template(self, "all").style != "healthbench":
            raise ConfigError("only a healthbench-style template serves every criterion; give "
                              "assay-style templates per slot (binary, multi_choice, per_item)")
        if self.healthbench and self.mode == "per-item":
            raise ConfigError("the HealthBench template grades one rubric item per call: use per-criterion")
        if self.few_shot and self.few_shot.n and self.mode == "per-item":
            raise ConfigError("few-shot examples are per criterion: use the per-criterion mode")

    @property
    def healthbench(self) -> bool:
        return "all" in self.templates

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "templates": {slot: _template(self, slot).version for slot in self._slots()},
            "shuffle": self.shuffle,
            "seed": self.seed,
            "few_shot": None if not self.few_shot else vars(self.few_shot).copy(),
            **({"repeat": self.repeat} if self.repeat else {}),  # a plain run's hash unchanged
            **({"role": self.role} if self.role else {}),
        }

    def _slots(self) -> tuple[str, ...]:
        return ("all",) if self.healthbench else SLOTS

    def sampling_defaults(self) -> dict[str, Any]:
        """The sampling settings the templates in use declare (see ``assay.grading.templates``)."""
        defaults: dict[str, Any] = {}
        for slot in self._slots():
            defaults.update(_template(self, slot).sampling)
        return defaults

    def sampling_origins(self) -> dict[str, str]:
        """Where each of :meth:`sampling_defaults` comes from and how to change it, in words
        (what a failure caused by one says).

        >>> GradingConfig(templates={"all": "healthbench"}).sampling_origins()["max_tokens"]
        "simple-evals' grader max_tokens, which the healthbench template sends; a larger max_tokens in the judge's config allows more, and departs from simple-evals' request"
        """
        origins: dict[str, str] = {}
        for slot in self._slots():
            template = _template(self, slot)
            for key in template.sampling:
                origins[key] = (
                    f"simple-evals' grader {key}, which the {template.name} template sends; a "
                    f"larger {key} in the judge's config allows more, and departs from "
                    "simple-evals' request" if template.style == "healthbench" else
                    f"the {template.name} template's {key}; set {key} in the judge's config "
                    "to change it")
        return origins


def _template(config: GradingConfig, slot: str) -> Template:
    source = config.templates.get("all", config.templates.get(slot))
    if source is None:
        return builtin_template(slot)
    if is_builtin(source):
        return builtin_template(source)
    return load_template(Path(source))


@dataclass(frozen=True)
class PlannedCall:
    """One judge call to make: its stable key, messages, reply schema and permutations."""

    key: str
    item_id: str
    judge: str
    criteria: tuple[Criterion, ...]
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any] | None
    template_version: str
    perms: dict[str, tuple[int, ...]]
    per_item: bool = False
    strict_bool: bool = False
    bracket: bool = False  # a "Reason: ... [1]" reply (RubricsTree's auditor), not a verdict
    schema_name: str | None = None  # None: "verdict" / "verdicts"
    sample: int = 0  # the run's repeat (GradingConfig.repeat): its own cache key and judge seed
    # characters at the start of the user message shared by every call of the item with this
    # template (prompts.shared_head): what an Anthropic judge marks for prompt caching
    cache_prefix: int = 0

    @property
    def criterion_ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.criteria)

    @property
    def budget(self) -> CompletionBudget:
        """The completion budget of the call's reply."""
        return schemas.reply_budget(criteria=len(self.criteria), bracket=self.bracket)

    @property
    def bool_field(self) -> str | None:
        """HealthBench's ``criteria_met``, which the reply must hold as a boolean (else it is
        asked again as simple-evals asks: the same request, quoting nothing)."""
        return "criteria_met" if self.strict_bool else None

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.messages)


def prompt_hash(messages: Sequence[dict[str, Any]]) -> str:
    """SHA-256 of ``json.dumps(messages, ensure_ascii=False)``, UTF-8.

    Messages of string keys and values are serialised with orjson and joined with the standard
    library's separators: the same bytes, about ten times faster on HealthBench-sized prompts.

    >>> m = ({"role": "user", "content": 'Say "hi"\\n\u00e9\u2028\x01'},)
    >>> prompt_hash(m) == hashlib.sha256(json.dumps(m, ensure_ascii=False).encode()).hexdigest()
    True
    """
    try:
        payload = _plain_messages_json(messages)
    except orjson.JSONEncodeError:  # e.g. a lone surrogate: the standard library says what
        payload = None
    if payload is None:
        payload = json.dumps(messages, ensure_ascii=False).encode()
    return hashlib.sha256(payload).hexdigest()


def _plain_messages_json(messages: Sequence[Any]) -> bytes | None:
    """The standard library's JSON bytes for a list of str -> str dicts, else None.

    The pieces are joined once at the end (a prompt is kilobytes: each ``+`` would copy it)."""
    out = [b"["]
    for message in messages:
        if type(message) is not dict:
            return None
        out.append(b"{" if len(out) == 1 else b", {")
        first = True
        for key, value in message.items():
            if type(key) is not str or type(value) is not str:
                return None
            key_json = _KEY_JSON.get(key)
            if key_json is None:
                key_json = orjson.dumps(key) + b": "
                if len(_KEY_JSON) < 64:
                    _KEY_JSON[key] = key_json
            if not first:
                out.append(b", ")
            first = False
            out.append(key_json)
            out.append(orjson.dumps(value))
        out.append(b"}")
    out.append(b"]")
    return b"".join(out)


_KEY_JSON: dict[str, bytes] = {}  # "role" -> b'"role": ' (message keys are a handful of words)


def with_role(messages: Sequence[dict[str, str]], role: str) -> tuple[dict[str, str], ...]:
    """``messages`` under an evaluator role: the role as the system message, before a system
    message the template has.

    >>> with_role([{"role": "user", "content": "Grade this."}], "You are a bioethicist.")
    ({'role': 'system', 'content': 'You are a bioethicist.'}, {'role': 'user', 'content': 'Grade this.'})
    >>> with_role([{"role": "system", "content": "Reply in JSON."}], "You are an auditor.")[0]
    {'role': 'system', 'content': 'You are an auditor.\\n\\nReply in JSON.'}
    """
    if messages and messages[0].get("role") == "system":
        first = {**messages[0], "content": f"{role}\n\n{messages[0]['content']}"}
        return (first, *messages[1:])
    return ({"role": "system", "content": role}, *messages)


def _cache_prefix(template: Template, item: Item, rubric: Rubric,
                  messages: tuple[dict[str, str], ...], heads: dict[str, str]) -> int:
    """The length of the item's shared head in this call's user message (0 if, by a quirk of
    the text, the message does not start with it: nothing is marked then)."""
    head = heads.get(template.version)
    if head is None:
        head = heads[template.version] = shared_head(template, item, rubric)
    return len(head) if messages[-1]["content"].startswith(head) else 0


def call_key(item_id: str, judge: str, criterion_ids: Sequence[str]) -> str:
    payload = "\x1f".join([item_id, judge, *criterion_ids]).encode()
    return hashlib.sha256(payload).hexdigest()[:32]


class Grader:
    """Plans calls and reads replies for one run's :class:`GradingConfig`."""

    def __init__(
        self, config: GradingConfig, *, example_pools: Mapping[str, list[Example]] | None = None
    ) -> None:
        self.config = config
        self.example_pools = example_pools or {}
        self._templates = {slot: _template(config, slot) for slot in config._slots()}

    def template_for(self, criterion: Criterion | None) -> Template:
        if self.config.healthbench:
            return self._templates["all"]
        if criterion is None:
            return self._templates["per_item"]
        return self._templates["multi_choice" if criterion.is_multi_choice else "binary"]

    def perm(self, item_id: str, criterion: Criterion, judge: str) -> tuple[int, ...]:
        if not self.config.shuffle:
            return identity(criterion)
        return option_permutation(criterion, master_seed=self.config.seed, item_id=item_id, judge_id=judge)

    def plan(self, item: Item, rubric: Rubric, judge: str) -> list[PlannedCall]:
        calls = self._plan(item, rubric, judge)
        if not self.config.role:
            return calls
        return [replace(call, messages=with_role(call.messages, self.config.role))
                for call in calls]

    def _plan(self, item: Item, rubric: Rubric, judge: str) -> list[PlannedCall]:
        criteria = rubric.criteria
        if self.config.healthbench:
            multi = [c.id for c in criteria if c.is_multi_choice]
            if multi:
                raise ConfigError(f"the HealthBench template grades binary criteria only; {multi} are not")
        perms = {c.id: self.perm(item.id, c, judge) for c in criteria if c.is_multi_choice}
        if self.config.mode == "per-item":
            template = self.template_for(None)
            ids = [c.id for c in criteria]
            return [PlannedCall(
                key=call_key(item.id, judge, ids), item_id=item.id, judge=judge,
                criteria=tuple(criteria),
                messages=item_messages(template, item, criteria, rubric=rubric, perms=perms),
                schema=schemas.per_item_schema(list(criteria)),
                template_version=template.version, perms=perms, per_item=True,
                sample=self.config.repeat)]
        calls = []
        # HealthBench's one template serves every criterion: render the conversation once
        shared = self._templates["all"] if self.config.healthbench else None
        rendered = (healthbench_messages(shared, item, criteria)
                    if shared is not None and shared.reply != "bracket" else None)
        heads: dict[str, str] = {}  # template version -> the item's shared head
        for i, c in enumerate(criteria):
            template = self.template_for(c)
            if template.reply == "bracket":
                if c.is_multi_choice:
                    raise ConfigError(f"the {template.name} template grades binary criteria "
                                      f"only; {c.id!r} is {c.kind.value}")
                calls.append(self._bracket_call(template, item, c, rubric, judge, heads))
                continue
            examples = self._examples(c, item.id)
            perm = perms.get(c.id)
            hb = template.style == "healthbench"
            messages = rendered[i] if rendered is not None else criterion_messages(
                template, item, c, rubric=rubric, perm=perm, examples=examples,
                reasons=bool(self.config.few_shot and self.config.few_shot.include_reason))
            calls.append(PlannedCall(
                key=call_key(item.id, judge, [c.id]), item_id=item.id, judge=judge, criteria=(c,),
                messages=messages,
                # simple-evals asks for no response format: it parses the fenced JSON itself.
                schema=None if hb else schemas.criterion_schema(c),
                template_version=template.version,
                perms={c.id: perm} if perm is not None else {},
                strict_bool=hb, sample=self.config.repeat,
                cache_prefix=_cache_prefix(template, item, rubric, messages, heads)))
        return calls

    def _bracket_call(self, template: Template, item: Item, c: Criterion, rubric: Rubric,
                      judge: str, heads: dict[str, str]) -> PlannedCall:
        messages = criterion_messages(template, item, c, rubric=rubric)
        return PlannedCall(
            key=call_key(item.id, judge, [c.id]), item_id=item.id, judge=judge, criteria=(c,),
            messages=messages,
            schema=schemas.bracket_schema(), template_version=template.version, perms={},
            bracket=True, schema_name=schemas.BRACKET_SCHEMA_NAME, sample=self.config.repeat,
            cache_prefix=_cache_prefix(template, item, rubric, messages, heads))

    def _examples(self, criterion: Criterion, item_id: str) -> list[Example]:
        if not self.config.few_shot or not self.config.few_shot.n:
            return []
        return select_examples(criterion, self.config.few_shot, master_seed=self.config.seed,
                               extra_pool=self.example_pools, exclude_item=item_id)

    def interpret(
        self, call: PlannedCall, data: Mapping[str, Any] | None, raw: str = ""
    ) -> list[Verdict | ReplyError]:
        """One verdict or :class:`ReplyError` per criterion of the call, in order."""
        if data is None and raw:
            data = lenient_json(raw)
        if call.per_item:
            return parse_item_reply(data, call.criteria, item_id=call.item_id, judge=call.judge,
                                    perms=call.perms)
        c = call.criteria[0]
        if call.bracket:
            return [parse_bracket_reply(data, c, item_id=call.item_id, judge=call.judge)]
        return [parse_criterion_reply(data, c, item_id=call.item_id, judge=call.judge,
                                      perm=call.perms.get(c.id), strict_bool=call.strict_bool)]


_FENCES = re.compile(r"^```json\s*|\s*```$")


def lenient_json(raw: str) -> dict[str, Any] | None:
    """simple-evals' ``parse_json_to_dict``: strip ```json fences, then parse (None if not a dict)."""
    try:
        value = json.loads(_FENCES.sub("", raw.strip()))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
