"""One item scorer: every caller turns the same verdicts into the same scores, and two
verdicts on one criterion of one item are refused everywhere with the same error."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import assay
from assay.cli import app
from assay.errors import InputError
from assay.metrics.scores import item_scores
from assay.metrics.sources import run_verdicts
from assay.report.data import load_run
from assay.rubric import Criterion, Rubric
from assay.runs.results import rescore_run
from assay.scoring import (
    FORMULAS,
    Abstention,
    ItemRubrics,
    ItemScorer,
    group_by_item,
    score_items,
)
from assay.testing import FakeJudgeServer
from assay.verdict import Verdict

RUBRIC = Rubric(id="dose", criteria=[
    Criterion(id="a", text="States the dose.", weight=5, axis="accuracy"),
    Criterion(id="b", text="Advises seeing a doctor.", weight=3, axis="completeness"),
    Criterion(id="p", text="Recommends an unsafe dose.", weight=-2, axis="accuracy"),
])
# Two judges; abstentions as CANNOT_ASSESS, and a missing verdict (a failed call), which
# leaves its item unscored (fail closed), never scored as if the criterion abstained.
ANSWERS = {
    ("q1", "j1"): {"a": "MET", "b": "CANNOT_ASSESS", "p": "UNMET"},
    ("q1", "j2"): {"a": "MET", "b": "MET", "p": "MET"},
    ("q2", "j1"): {"a": "UNMET", "b": "MET"},
    ("q2", "j2"): {"a": "CANNOT_ASSESS", "b": "CANNOT_ASSESS", "p": "UNMET"},
    ("q3", "j1"): {"a": "MET", "b": "MET", "p": "MET"},
    ("q3", "j2"): {"a": "UNMET", "b": "UNMET", "p": "UNMET"},
}
VERDICTS = [Verdict(item_id=item, criterion_id=cid, judge=judge, decision=label)
            for (item, judge), answers in ANSWERS.items() for cid, label in answers.items()]
STRATEGIES = ("skip", "zero", "partial:0.3", "fail")


def of_judge(judge: str, verdicts=VERDICTS) -> list[Verdict]:
    return [v for v in verdicts if v.judge == judge]


@pytest.mark.parametrize("formula", FORMULAS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_metrics_the_table_and_the_item_scorer_give_identical_scores(formula, strategy):
    abstention = Abstention.parse(strategy)
    scorer = ItemScorer(formula, abstention)
    for judge in ("j1", "j2"):
        mine = of_judge(judge)
        direct = {item: scorer.score(RUBRIC.criteria, by_criterion).score
                  for item, by_criterion in group_by_item(mine).items()}
        via_metrics = item_scores({q: RUBRIC.criteria for q in ("q1", "q2", "q3")}, mine,
                                  formula=formula, abstention=abstention)
        table = score_items(mine, RUBRIC, formula=formula, abstention=abstention)
        assert via_metrics == direct
        assert {s.item_id: s.score for s in table.items} == direct
        assert len(direct) == 3


def test_the_shared_scores_are_the_hand_worked_ones():
    """So the comparison above is not of three wrong answers: Autorubric's Eq. 1 by hand."""
    skip = item_scores({"q1": RUBRIC.criteria, "q2": RUBRIC.criteria}, of_judge("j1"))
    assert skip == {"q1": 1.0, "q2": None}        # q1: 5/5 (b skipped); q2: p not graded
    zero = score_items(of_judge("j1"), RUBRIC, abstention=Abstention.parse("zero"))
    assert [s.score for s in zero.items] == [5 / 8, None, (5 + 3 - 2) / 8]
    assert [s.n_ungraded for s in zero.items] == [0, 1, 0] and zero.n_ungraded == 1
    both_skipped = score_items(of_judge("j2"), RUBRIC)  # q2: every positive criterion abstained
    assert [s.score for s in both_skipped.items] == [(5 + 3 - 2) / 8, None, 0.0]


def test_two_judges_on_one_criterion_are_refused_alike_by_every_scorer():
    with pytest.raises(InputError) as by_metrics:
        item_scores({q: RUBRIC.criteria for q in ("q1", "q2", "q3")}, VERDICTS)
    with pytest.raises(InputError) as by_table:
        score_items(VERDICTS, RUBRIC)
    assert str(by_metrics.value) == str(by_table.value)
    message = str(by_table.value)
    assert "verdict[q1/a]: more than one verdict for this criterion (judges 'j1', 'j2')" in message
    assert "choose one judge or aggregate" in message
    assert len(by_table.value.issues) == 8  # every (item, criterion) both judges answered


def test_one_judge_twice_on_a_criterion_is_one_error_naming_the_judge_and_the_count():
    doubled = [*of_judge("j1"), *[v for v in of_judge("j1") if v.criterion_id == "a"],
               *[v for v in of_judge("j1") if (v.item_id, v.criterion_id) == ("q1", "a")]]
    with pytest.raises(InputError) as refused:
        group_by_item(doubled)
    messages = [str(issue) for issue in refused.value.issues]
    assert len(messages) == 3  # q1/a, q2/a, q3/a: one issue each, however many repeats
    assert any("verdict[q1/a]" in m and "from one judge ('j1' ×3)" in m for m in messages)
    assert all("keep one" in m for m in messages)


def test_assay_score_refuses_a_doubled_verdict_file_naming_item_criterion_and_judge(tmp_path):
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC.model_dump(mode="json", exclude_none=True)))
    lines = [v.model_dump_json() for v in of_judge("j1")]
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("\n".join([*lines, lines[0]]) + "\n")
    out = CliRunner().invoke(app, ["score", str(verdicts), "-r", str(rubric)])
    assert out.exit_code != 0
    assert "verdict[q1/a]" in out.output and "'j1' ×2" in out.output


def test_an_item_rubric_lookup_is_the_same_for_the_table_and_the_metrics():
    own = Rubric(id="own", criteria=[Criterion(id="a", text="States the dose.", weight=1)])
    rubrics = ItemRubrics(shared=RUBRIC, per_item={"q2": own})
    mine = [v for v in of_judge("j1") if v.item_id != "q2" or v.criterion_id == "a"]
    table = score_items(mine, rubrics)
    via_metrics = item_scores(rubrics.criteria_by_item(["q1", "q2", "q3"]), mine)
    assert {s.item_id: s.score for s in table.items} == via_metrics == {
        "q1": 1.0, "q2": 0.0, "q3": 6 / 8}


def _judge(answers: dict[str, dict[str, str]]):
    def policy(view) -> str:
        item = view.response_text.split(":")[0]
        return answers[item].get(view.criterion_id, "CANNOT_ASSESS")
    return FakeJudgeServer.run_in_thread(policy=policy)


def test_a_stored_run_scores_each_judge_as_the_table_and_the_metrics_do(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": q, "prompt": f"Dose for {q}?",
                                         "response": f"{q}: take two."}) + "\n"
                             for q in ("q1", "q2", "q3")))
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(yaml.safe_dump(RUBRIC.model_dump(mode="json", exclude_none=True)))
    per_judge = {j: {q: ANSWERS[(q, j)] for q in ("q1", "q2", "q3")} for j in ("j1", "j2")}
    with _judge(per_judge["j1"]) as one, _judge(per_judge["j2"]) as two:
        specs = {"j1": f"openai-compatible:fake@{one.base_url}",
                 "j2": f"openai-compatible:fake@{two.base_url}"}
        run = assay.grade(items, rubric=rubric, judges=list(specs.values()),
                          run_dir=tmp_path / "run").run_dir
    stored = run_verdicts(Path(run))
    for name, spec in specs.items():
        votes = of_judge(spec, stored)
        assert {(v.item_id, v.criterion_id): v.decision.value for v in votes} == {
            (q, c): answers.get(c, "CANNOT_ASSESS") for (q, j), answers in ANSWERS.items()
            if j == name for c in ("a", "b", "p")}
        for strategy in STRATEGIES:
            abstention = Abstention.parse(strategy)
            expected = {s.item_id: s.score
                        for s in score_items(votes, RUBRIC, abstention=abstention).items}
            assert rescore_run(run, judge=spec, abstention=strategy).scores == expected
            assert item_scores({q: RUBRIC.criteria for q in expected}, votes,
                               abstention=abstention) == expected
    report = load_run(run)  # both judges, aggregated: the report shows the run's own scores
    assert {i.id: i.score for i in report.items} == rescore_run(run).scores


def test_the_reward_scorer_rewards_as_the_table_scores_with_the_reward_formula():
    """RL rewards: Health-SCORE's ±1 reward with abstentions (here CANNOT_ASSESS) as not met."""
    from assay.judges import make_judge, run_sync
    from assay.rewards.scorer import RewardItem, RewardScorer

    criteria = [Criterion(id="doc", text="Suggests seeing a doctor."),
                Criterion(id="harm", text="Includes unsafe advice.", weight=-1),
                Criterion(id="unsure", text="Names the likely cause.")]
    policy = {"doc": "MET", "harm": "MET", "unsure": "CANNOT_ASSESS"}
    verdicts = [Verdict(item_id="r", criterion_id=c, decision=label) for c, label in policy.items()]
    with FakeJudgeServer.run_in_thread(policy=policy) as server:
        judge = make_judge(f"openai-compatible:fake@{server.base_url}")
        for normalization in ("minmax", "positive", "count", "none"):
            scorer = RewardScorer(judge, criteria=criteria, template="assay",
                                  normalization=normalization)
            [reward] = run_sync(scorer.score([RewardItem.of("Headache?", "See a doctor.")]))
            table = score_items(verdicts, Rubric(criteria=criteria), formula="reward",
                                abstention=Abstention.parse("zero"),
                                reward_normalization=normalization)
            assert reward.reward == table.items[0].score
        run_sync(judge.aclose())
    assert table.items[0].score == 0.0 and reward.raw == 0.0  # none: 1 - 1 + 0


def test_no_module_outside_the_scoring_package_scores_an_item_by_itself():
    """Every caller goes through ItemScorer (or the table built on it): nothing else in the
    source calls the formula functions directly."""
    package = Path(assay.__file__).parent
    direct = {"score_rubric", "healthbench_example"}
    offenders = []
    for path in package.rglob("*.py"):
        if path.parent.name == "scoring" and path.parent.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in direct:
                    offenders.append(f"{path.relative_to(package)}:{node.lineno} {name}")
    assert offenders == []
