"""Prompts: golden files (byte-stable for a seed), framing, optional blocks, HealthBench parity."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.grading.grader import Grader, GradingConfig
from assay.grading.prompts import NEGATIVE_BINARY, POSITIVE_BINARY, criterion_messages
from assay.grading.templates import TEMPLATE_DIR, builtin_template, load_template
from assay.item import Item

GOLDEN = Path(__file__).parent / "golden"
EXAMPLES = Path(__file__).parents[2] / "examples" / "healthbench" / "examples.jsonl"


def planned(rubric, item, **config):
    grader = Grader(GradingConfig(seed=7, **config))
    return [{"key": c.key, "messages": list(c.messages), "schema": c.schema,
             "perms": {k: list(v) for k, v in c.perms.items()}} for c in grader.plan(item, rubric, "j")]


def golden(name, value):
    """Compare with the golden file; ASSAY_UPDATE_GOLDEN=1 rewrites it after a deliberate change."""
    path = GOLDEN / f"{name}.json"
    text = json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("ASSAY_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    return path.read_text(encoding="utf-8") == text


def test_per_criterion_prompts_match_the_golden_file(rubric, item):
    assert golden("per_criterion_seed7", planned(rubric, item))


def test_per_item_prompt_matches_the_golden_file(rubric, item):
    assert golden("per_item_seed7", planned(rubric, item, mode="per-item"))


def test_prompts_are_byte_identical_for_the_same_seed(rubric, item):
    assert planned(rubric, item) == planned(rubric, item)


def test_another_seed_changes_only_the_option_order(rubric, item):
    calls = {seed: {c.key: c for c in Grader(GradingConfig(seed=seed)).plan(item, rubric, "j")}
             for seed in range(7, 12)}
    for key, call in calls[7].items():
        for seed in range(8, 12):
            other = calls[seed][key]
            if not call.perms:  # binary criteria: identical prompts
                assert other.messages == call.messages
    assert any(calls[s][k].perms != calls[7][k].perms for s in range(8, 12) for k in calls[7]
               if calls[7][k].perms)


def test_penalty_is_framed_so_that_met_means_the_undesirable_thing(penalty, binary, item):
    template = builtin_template("binary")
    bad = criterion_messages(template, item, penalty)[-1]["content"]
    good = criterion_messages(template, item, binary)[-1]["content"]
    assert NEGATIVE_BINARY in bad and POSITIVE_BINARY not in bad
    assert POSITIVE_BINARY in good and NEGATIVE_BINARY not in good


def test_reference_context_and_guidelines_appear_only_when_present(rubric, binary, item):
    template = builtin_template("binary")
    full = criterion_messages(template, item, binary, rubric=rubric)[-1]["content"]
    bare_item = Item(id="q2", prompt="Bee?", response="Ice it.")
    bare = criterion_messages(template, bare_item, binary)[-1]["content"]
    for tag in ("<reference_answer>", "<context>", "<guidelines>"):
        assert tag in full and tag not in bare
    assert bare.startswith("<conversation>\nuser: Bee?\n</conversation>\n\n<response>\nIce it.\n</response>")


def test_healthbench_template_file_is_simple_evals_grader_template_byte_for_byte():
    # GRADER_TEMPLATE.strip() from openai/simple-evals' healthbench_eval.py at commit
    # 9e2fafd122f057f373467fc0d45901889d8c4926 hashes to this value (compared byte for byte with
    # that file's text); any edit to our copy fails here.
    text = (TEMPLATE_DIR / "healthbench.txt").read_text(encoding="utf-8").strip()
    assert hashlib.sha256(text.encode()).hexdigest() == (
        "2adffd51fd259554ebcd036ad1072d4aa2b7ce3aec2bbffe36271f911632ed3c")


def test_healthbench_prompt_is_built_exactly_as_simple_evals_builds_it():
    from assay.io import load_items

    example = json.loads(EXAMPLES.read_text(encoding="utf-8").splitlines()[1])
    item = load_items(EXAMPLES)[1]
    item = item.model_copy(update={"response": item.reference})
    grader = Grader(GradingConfig(templates={"all": "healthbench"}))
    calls = grader.plan(item, item.rubric, "j")
    # simple-evals' grade_sample, step by step:
    convo = example["prompt"] + [dict(content=example["ideal_completions_data"]["ideal_completion"],  # noqa: C408  (simple-evals' own spelling)
                                      role="assistant")]
    convo_str = "\n\n".join([f"{m['role']}: {m['content']}" for m in convo])
    grader_template = (TEMPLATE_DIR / "healthbench.txt").read_text(encoding="utf-8").strip()
    for call, rubric_item in zip(calls, example["rubrics"], strict=True):
        expected = grader_template.replace("<<conversation>>", convo_str).replace(
            "<<rubric_item>>", f"[{rubric_item['points']}] {rubric_item['criterion']}")
        assert call.messages == ({"role": "system", "content": "You are a helpful assistant."},
                                 {"role": "user", "content": expected})
        assert call.schema is None and call.strict_bool


def test_a_template_file_overrides_the_built_in_one(tmp_path, binary, item):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nsystem: Be strict.\nuser: |\n  R={{response}} C={{criterion}}\n")
    template = load_template(path)
    messages = criterion_messages(template, item, binary)
    assert messages[0]["content"] == "Be strict."
    assert messages[1]["content"].startswith("R=Scrape the stinger out sideways")
    assert template.version.startswith("mine:")


def test_unknown_placeholder_in_a_template_file_names_the_file(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("{{response}} {{colour}}")
    with pytest.raises(ConfigError, match=r"bad.txt: user: unknown placeholder\(s\) \{\{colour\}\}"):
        load_template(path)


def test_plain_text_template_with_simple_evals_placeholders_is_healthbench_style(tmp_path):
    path = tmp_path / "hb.txt"
    path.write_text("C: <<conversation>>\nR: <<rubric_item>>\n")
    assert load_template(path).style == "healthbench"


def test_a_template_file_can_declare_the_sampling_it_was_written_for(tmp_path):
    path = tmp_path / "strict.yaml"
    path.write_text("user: 'Judge {{criterion}} in {{response}}'\n"
                    "sampling: {temperature: 0, max_tokens: 300}\n")
    config = GradingConfig(templates={"binary": str(path)})
    assert config.sampling_defaults() == {"temperature": 0, "max_tokens": 300}
    path.write_text("user: 'Judge {{criterion}} in {{response}}'\nsampling: {top_k: 5}\n")
    with pytest.raises(ConfigError, match="strict.yaml: sampling"):
        GradingConfig(templates={"binary": str(path)}).sampling_defaults()


def test_the_fast_prompt_hash_is_the_hash_of_the_standard_librarys_json():
    import hashlib
    import json
    import random

    from assay.grading.grader import prompt_hash

    rng = random.Random(1)
    alphabet = [*map(chr, range(0x80)), "é", "漢", "\u2028", "\u2029", "\U0001f600", "\x7f"]
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        messages = ({"role": "system", "content": text}, {"role": "user", "content": text[::-1]})
        expected = hashlib.sha256(json.dumps(messages, ensure_ascii=False).encode()).hexdigest()
        assert prompt_hash(messages) == expected, repr(text)
    for shape in [(), ({},), ({"role": "user", "content": "a", "name": "n"}, {"content": ""})]:
        expected = hashlib.sha256(json.dumps(shape, ensure_ascii=False).encode()).hexdigest()
        assert prompt_hash(shape) == expected, shape
    odd = ({"role": "user", "content": [{"type": "text", "text": "x"}]},)  # not str -> str
    assert prompt_hash(odd) == hashlib.sha256(json.dumps(odd, ensure_ascii=False).encode()).hexdigest()


def test_healthbench_calls_render_the_conversation_once_with_the_same_bytes():
    from assay.io import load_items
    from assay.rubric import Rubric

    grader = Grader(GradingConfig(templates={"all": "healthbench"}))
    template = builtin_template("healthbench")
    for item in load_items(EXAMPLES)[:3]:
        # a response quoting the template's placeholders is filled as it always was
        item = item.model_copy(update={"response": f"{item.reference} <<rubric_item>> <<conversation>>"})
        rubric = Rubric(criteria=item.rubric.criteria)
        calls = grader.plan(item, rubric, "j")
        assert [call.messages for call in calls] == [
            criterion_messages(template, item, c, rubric=rubric) for c in rubric.criteria]
