"""Assay's rubric_scorer in an Inspect AI eval of HealthBench, offline against the fake judge.

Run from the repository root:  .venv/bin/python examples/integrations/inspect_healthbench.py

inspect_evals turns HealthBench rows into samples (its own record_to_sample); the fake server
plays the model under test too, reached through Inspect's OpenAI-compatible provider; Assay grades each answer with simple-evals' grader template and scores it with
the official HealthBench formula. With real models: model="openai/gpt-4o-mini" and
rubric_scorer("openai:gpt-4.1-mini") with OPENAI_API_KEY set.
"""

import json
import tempfile
from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import get_model
from inspect_ai.solver import generate
from inspect_evals.healthbench.dataset import record_to_sample

from assay.integrations.inspect import rubric_scorer
from assay.testing import FakeJudgeServer, ModelScript

ROWS = Path(__file__).parents[1] / "healthbench" / "examples.jsonl"
rows = [json.loads(line) for line in ROWS.read_text().splitlines()[:2]]


patient_bot = ModelScript(answers={  # the model under test: an answer per question
    "bee": "Scrape the stinger out, wash the area, use a cold pack; seek emergency care for "
           "swelling of the face or trouble breathing.",
}, default="Oxytocin is the first-line medication to prevent postpartum hemorrhage.")


def verdict(view):  # the fake judge: MET when the answer shares a long word with the criterion
    words = {w.strip(".,").lower() for w in (view.criterion_text or "").split() if len(w) > 5}
    return "MET" if words & set((view.response_text or "").lower().split()) else "UNMET"


with FakeJudgeServer.run_in_thread(policy=verdict, models={"patient-bot": patient_bot}) as server:
    task = Task(dataset=MemoryDataset([record_to_sample(row) for row in rows]),
                solver=generate(),
                scorer=rubric_scorer(f"openai-compatible:fake@{server.base_url}"))
    model = get_model("openai-api/fake/patient-bot", base_url=server.base_url, api_key="unused")
    [log] = eval(task, model=model, log_dir=tempfile.mkdtemp(), display="none")

for sample in log.samples:
    score = sample.scores["rubric_scorer"]
    met = sum(c["verdict"] == "MET" for c in score.metadata["criteria"])
    print(f"{sample.id[:8]}  score {score.value:.3f}  ({met} of "
          f"{len(score.metadata['criteria'])} criteria met)")
metrics = log.results.scores[0].metrics
print(f"HealthBench overall {metrics['overall'].value:.3f}  mean {metrics['mean'].value:.3f}  "
      f"stderr {metrics['stderr'].value:.3f}")
