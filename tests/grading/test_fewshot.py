from collections import Counter

from assay.grading.fewshot import Example, FewShot, pools_from_labelled_items, select_examples
from assay.grading.prompts import criterion_messages
from assay.grading.templates import builtin_template
from assay.item import Item
from assay.rubric import Criterion
from assay.verdict import Verdict


def criterion_with(n_met, n_unmet):
    examples = [{"response": f"met {i}", "verdict": "MET", "reason": f"why met {i}"}
                for i in range(n_met)]
    examples += [{"response": f"unmet {i}", "verdict": "UNMET"} for i in range(n_unmet)]
    return Criterion(id="c", text="Says to scrape the stinger.", examples=examples)


def test_selection_is_balanced_across_verdicts_even_when_the_pool_is_not():
    picked = select_examples(criterion_with(9, 2), FewShot(n=4), master_seed=0)
    assert Counter(e.label for e in picked) == {"MET": 2, "UNMET": 2}


def test_an_odd_count_differs_by_at_most_one_per_class():
    counts = Counter(e.label for e in select_examples(criterion_with(5, 5), FewShot(n=3), master_seed=1))
    assert sorted(counts.values()) == [1, 2]


def test_selection_is_seeded():
    c = criterion_with(6, 6)
    assert select_examples(c, FewShot(n=4), master_seed=3) == select_examples(c, FewShot(n=4), master_seed=3)
    draws = {tuple(e.response for e in select_examples(c, FewShot(n=4), master_seed=s)) for s in range(10)}
    assert len(draws) > 1


def test_unbalanced_selection_follows_the_pool():
    picked = select_examples(criterion_with(20, 0), FewShot(n=3, balance=False), master_seed=0)
    assert [e.label for e in picked] == ["MET"] * 3


def test_labelled_items_feed_the_pool_and_the_graded_item_is_never_its_own_example():
    c = Criterion(id="c", text="Says to scrape the stinger.")
    items = [Item(id=f"i{k}", prompt="Bee?", response=f"answer {k}") for k in range(6)]
    labels = [Verdict(item_id=f"i{k}", criterion_id="c", decision="MET" if k % 2 else "UNMET")
              for k in range(6)]
    pools = pools_from_labelled_items(items, labels)
    picked = select_examples(c, FewShot(n=6), master_seed=0, extra_pool=pools, exclude_item="i3")
    assert len(picked) == 5 and "i3" not in {e.source_item for e in picked}


def test_multi_choice_examples_are_balanced_per_option(ordinal):
    pools = {"pain": [Example(f"r{k}", label) for k in range(4) for label in ("poorly", "partly", "well")]}
    picked = select_examples(ordinal, FewShot(n=3), master_seed=0, extra_pool=pools)
    assert sorted(e.label for e in picked) == ["partly", "poorly", "well"]


def test_examples_appear_in_the_prompt_with_reasons_only_when_asked(item):
    c = criterion_with(2, 2)
    picked = select_examples(c, FewShot(n=2), master_seed=0)
    template = builtin_template("binary")
    without = criterion_messages(template, item, c, examples=picked)[-1]["content"]
    with_reasons = criterion_messages(template, item, c, examples=picked, reasons=True)[-1]["content"]
    assert without.count("<example_response>") == 2 and "<reason>" not in without
    assert "<reason>why met" in with_reasons
