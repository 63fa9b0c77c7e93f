"""Judge prompts: what a judge sees for one criterion, or for all criteria of an item.

The built-in Assay templates show the conversation, the response in ``<response>``, and when
present the rubric's guidelines, the retrieved context and a reference answer; each criterion
sits in ``<criterion id="ID">TEXT</criterion>``, multi-choice options in ``<options>`` as lines
``N. LABEL`` in displayed (possibly shuffled) order. A penalty criterion (negative weight) is
framed so that MET means the undesirable behaviour happened. The HealthBench template renders
the conversation plus the response as simple-evals does (``role: content`` blocks joined by a
blank line) and the rubric item as ``[POINTS] TEXT`` (bare ``TEXT`` for meta-eval items, as
simple-evals' meta-eval does).

Everything here is a pure function of its inputs, so a prompt is byte-identical for the same
item, criterion, template, permutation and examples.

Example:
    >>> from assay.item import Item
    >>> from assay.rubric import Criterion
    >>> item = Item(id="q1", prompt="Bee sting. What now?", response="Scrape the stinger out.")
    >>> c = Criterion(id="tweezers", text="Recommends squeezing with tweezers.", weight=-3)
    >>> print(polarity_note(c))
    This criterion describes an undesirable behaviour (a penalty). Answer MET if the response does this undesirable thing and UNMET if it does not: a good response is UNMET here.
    >>> rubric_item_line(Criterion(text="Says to remove the stinger.", weight=7))
    '[7] Says to remove the stinger.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from assay.grading.fewshot import Example
from assay.grading.shuffle import displayed_labels, displayed_number
from assay.grading.templates import ASSAY_FIELD, Template
from assay.item import Item
from assay.rubric import Criterion, Rubric

POSITIVE_BINARY = (
    "This criterion describes a desirable behaviour. Answer MET if the response does what it "
    "asks and UNMET if it does not."
)
NEGATIVE_BINARY = (
    "This criterion describes an undesirable behaviour (a penalty). Answer MET if the response "
    "does this undesirable thing and UNMET if it does not: a good response is UNMET here."
)
NEGATIVE_MULTI = (
    "This question is scored as a penalty: choose the option that describes what the response "
    "does, not how good the response is."
)
EXAMPLES_INTRO = (
    "These graded examples show how this criterion is applied. Use them to calibrate, then "
    "judge the response above on its own merits."
)


def conversation_text(item: Item) -> str:
    return "\n\n".join(f"{m.role}: {m.content}" for m in item.messages)


def polarity_note(criterion: Criterion) -> str:
    if criterion.is_multi_choice:
        return NEGATIVE_MULTI if criterion.is_penalty else ""
    return NEGATIVE_BINARY if criterion.is_penalty else POSITIVE_BINARY


def criterion_tag(criterion: Criterion) -> str:
    tag = f'<criterion id="{criterion.id}">{criterion.text}</criterion>'
    if criterion.guidance:
        tag += f"\n<guidance>{criterion.guidance}</guidance>"
    return tag


def options_block(criterion: Criterion, perm: Sequence[int]) -> str:
    lines = [f"{n}. {label}" for n, label in enumerate(displayed_labels(criterion, tuple(perm)), 1)]
    return "<options>\n" + "\n".join(lines) + "\n</options>"


def examples_block(
    criterion: Criterion, examples: Sequence[Example], perm: Sequence[int] | None, reasons: bool
) -> str:
    if not examples:
        return ""
    parts = ["<examples>", EXAMPLES_INTRO]
    for i, example in enumerate(examples, 1):
        parts.append(f'<example index="{i}">')
        parts.append(f"<example_response>\n{example.response}\n</example_response>")
        if criterion.is_multi_choice and example.label != "CANNOT_ASSESS":
            number = displayed_number(criterion, tuple(perm or ()), example.label)
            parts.append(f"<selected_option>{number}. {example.label}</selected_option>")
        elif criterion.is_multi_choice:
            parts.append("<selected_option>0</selected_option>")
        else:
            parts.append(f"<verdict>{example.label}</verdict>")
        if reasons and example.reason:
            parts.append(f"<reason>{example.reason}</reason>")
        parts.append("</example>")
    parts.append("</examples>")
    return "\n".join(parts) + "\n\n"


def _shared_blocks(item: Item, rubric: Rubric | None) -> dict[str, str]:
    guidelines = rubric.guidelines if rubric is not None else None
    context = ""
    if item.context:
        passages = []
        for p in item.context:
            attrs = "".join(f' {k}="{v}"' for k, v in (("id", p.id), ("source", p.source)) if v)
            passages.append(f"<passage{attrs}>\n{p.text}\n</passage>")
        context = "<context>\n" + "\n".join(passages) + "\n</context>\n\n"
    memory = item.health_memory
    if memory is not None and not memory.is_empty:
        context = f"<health_memory>\n{memory.render()}\n</health_memory>\n\n" + context
    return {
        "guidelines": f"<guidelines>\n{guidelines}\n</guidelines>\n\n" if guidelines else "",
        "conversation": conversation_text(item),
        "context": context,
        "reference": (
            f"<reference_answer>\n{item.reference}\n</reference_answer>\n\n"
            if item.reference
            else ""
        ),
        "response": item.response or "",
    }


def criterion_messages(
    template: Template,
    item: Item,
    criterion: Criterion,
    *,
    rubric: Rubric | None = None,
    perm: Sequence[int] | None = None,
    examples: Sequence[Example] = (),
    reasons: bool = False,
) -> tuple[dict[str, str], ...]:
    """The messages of one call that grades ``criterion`` for ``item``."""
    if template.style == "healthbench":
        return template.messages(
            {"conversation": healthbench_conversation(item), "rubric_item": rubric_item_line(criterion)}
        )
    values = _shared_blocks(item, rubric)
    values["criterion"] = criterion_tag(criterion)
    values["criterion_text"] = criterion.text + (f"\n{criterion.guidance}" if criterion.guidance else "")
    values["polarity"] = polarity_note(criterion)
    values["options"] = ""
    if criterion.is_multi_choice:
        if perm is None:
            raise TypeError(f"criterion {criterion.id!r} is multi-choice: give perm, its option order")
        values["options"] = options_block(criterion, perm)
    values["examples"] = examples_block(criterion, examples, perm, reasons)
    return template.messages(values)


def item_messages(
    template: Template,
    item: Item,
    criteria: Sequence[Criterion],
    *,
    rubric: Rubric | None = None,
    perms: Mapping[str, Sequence[int]] | None = None,
) -> tuple[dict[str, str], ...]:
    """The messages of one call that grades every criterion of ``item``."""
    blocks = []
    for c in criteria:
        lines = [criterion_tag(c)]
        if c.is_multi_choice:
            lines.append(options_block(c, (perms or {})[c.id]))
        if c.is_penalty:
            lines.append(f"Penalty: {NEGATIVE_BINARY if not c.is_multi_choice else NEGATIVE_MULTI}")
        blocks.append("\n".join(lines))
    values = _shared_blocks(item, rubric)
    values["criteria"] = "\n\n".join(blocks)
    return template.messages(values)


PER_CRITERION = frozenset({"examples", "criterion", "criterion_text", "polarity", "options"})


def shared_head(template: Template, item: Item, rubric: Rubric | None = None) -> str:
    """The start of the user message that every per-criterion call of ``item`` with
    ``template`` shares byte for byte: the template up to its first per-criterion placeholder,
    filled (instructions, conversation, context, reference, response). Anthropic judges mark it
    for prompt caching (:attr:`~assay.grading.grader.PlannedCall.cache_prefix`); OpenAI caches
    such prefixes by itself. The HealthBench template keeps simple-evals' order: its head is
    the instructions and the conversation, up to ``<<rubric_item>>``.

    >>> from assay.grading.templates import builtin_template
    >>> item = Item(id="q1", prompt="Bee sting. What now?", response="Scrape the stinger out.")
    >>> shared_head(builtin_template("binary"), item).split()[-2:]
    ['out.', '</response>']
    """
    if template.style == "healthbench":
        head = template.user.split("<<rubric_item>>", 1)[0]
        return head.replace("<<conversation>>", healthbench_conversation(item))
    cut = next((m.start() for m in ASSAY_FIELD.finditer(template.user)
                if m.group(1) in PER_CRITERION), len(template.user))
    values = _shared_blocks(item, rubric)
    return ASSAY_FIELD.sub(lambda m: values.get(m.group(1), ""), template.user[:cut])


def healthbench_messages(
    template: Template, item: Item, criteria: Sequence[Criterion]
) -> list[tuple[dict[str, str], ...]]:
    """``criterion_messages(template, item, c)`` for each of ``criteria`` (a healthbench-style
    template), with the conversation rendered and put in the template once for all of them:
    the same bytes, as ``fill`` replaces the conversation first and the rubric item after."""
    head = template.user.replace("<<conversation>>", healthbench_conversation(item))
    return [template.wrap(head.replace("<<rubric_item>>", rubric_item_line(c))) for c in criteria]


def healthbench_conversation(item: Item) -> str:
    """simple-evals: the prompt plus the response as the last assistant turn.

    An item with a health memory (RubricsTree's items; HealthBench's have none, so their
    prompts stay byte for byte simple-evals') gets it first, in the block the other templates
    use: a taxonomy's health-memory leaves cannot be judged without it.

    >>> item = Item(id="q", prompt="Is my LDL ok?", response="Yes.",
    ...             health_memory={"labs": [{"name": "LDL-C", "value": 162, "unit": "mg/dL"}]})
    >>> print(healthbench_conversation(item))
    <health_memory>
    Labs:
    - LDL-C: 162 mg/dL
    </health_memory>
    <BLANKLINE>
    user: Is my LDL ok?
    <BLANKLINE>
    assistant: Yes.
    """
    turns = [*((m.role, m.content) for m in item.messages), ("assistant", item.response or "")]
    text = "\n\n".join(f"{role}: {content}" for role, content in turns)
    memory = item.health_memory
    if memory is not None and not memory.is_empty:
        text = f"<health_memory>\n{memory.render()}\n</health_memory>\n\n" + text
    return text


BARE_RUBRIC_ITEM = {"healthbench": {"rubric_item": "bare"}}  # criterion metadata, see below


def rubric_item_line(criterion: Criterion) -> str:
    """simple-evals' ``str(RubricItem)``: ``[points] criterion``, points as read from JSON.

    A criterion whose metadata holds :data:`BARE_RUBRIC_ITEM` (the items ``assay meta-eval
    --to-items`` writes) gives its bare text instead, as simple-evals' meta-eval fills
    ``<<rubric_item>>`` with the row's ``rubric`` string.

    >>> rubric_item_line(Criterion(text="Says hi.", weight=1, metadata=BARE_RUBRIC_ITEM))
    'Says hi.'
    """
    kept = criterion.metadata.get("healthbench", {})
    if kept.get("rubric_item") == "bare":
        return criterion.text
    weight = criterion.weight
    # The model stores floats; a HealthBench file's integer points print as integers, and the
    # reader flags the rare float point that has an integer value (e.g. 5.0).
    points = weight if kept.get("float_points") or not weight.is_integer() else int(weight)
    return f"[{points}] {criterion.text}"
