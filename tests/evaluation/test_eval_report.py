"""The eval's report is about the model under test: titled for it, with its sampling settings,
prompts and samples counted apart, the worst-at-k curve, and each sampled answer with its
grading (in the page's item data)."""

from __future__ import annotations

import base64
import gzip
import json
import re

from tests.evaluation.test_resume_every_stage import items

from assay.evaluation import aevaluate
from assay.testing import ModelScript


def item_data(html: str) -> dict:
    """The items of the page's run, as its script reads them (gzip + base64 JSON)."""
    blob = re.search(r'class="run-data" data-run="0">([^<]+)</script>', html).group(1)
    return json.loads(gzip.decompress(base64.b64decode(blob)))


async def test_the_report_names_the_model_its_settings_the_counts_and_the_curve(serve,
                                                                               tmp_path):
    answers = ModelScript(answers={"BEE": ["a good answer <b>", "a bad answer"]},
                          default="fine")
    server = await serve(policy=lambda v: "MET" if "good" in (v.response_text or "") else "UNMET",
                         models={"bot": answers})
    model = f"openai-compatible:bot@{server.base_url}"
    result = await aevaluate(items(tmp_path), healthbench=True, n=2, temperature=0.7,
                             max_tokens=300, run_dir=tmp_path / "ev", model=model,
                             judges=[f"openai-compatible:fake@{server.base_url}"])
    html = (tmp_path / "ev" / "report.html").read_text()
    assert f"<title>Assay eval · {model}</title>" in html and "Assay report ·" not in html
    assert re.search(r'id="eval-model">[^<]*openai-compatible:bot@', html)
    sampling = re.search(r'id="eval-sampling">([^<]+)<', html).group(1)
    assert "temperature 0.7" in sampling and "max_tokens 300" in sampling
    assert "5 prompts × 2 samples = 10 answers graded" in html
    assert 'id="worst-at-k"' in html and html.count("<svg") >= 2
    curve = result.worst_at_k
    assert f"{curve[2]:.4f}" in html and f"{curve[1]:.4f}" in html
    data = item_data(html)
    graded = {i["id"]: i for i in data["items"]}
    assert len(graded) == 10
    bee = [i for k, i in graded.items() if k.startswith("93f54838")]
    assert sorted(i["response"] for i in bee) == ["a bad answer", "a good answer <b>"]
    assert all(len(i["criteria"]) == 3 for i in bee)  # each answer with every verdict
    assert "a good answer <b>" not in html  # model text travels as data, never as markup
