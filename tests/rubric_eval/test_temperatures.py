"""Issue 30, point 6: the evaluation stages send the papers' temperatures unless the judge's
config sets one (seed 000's code: 0 for the atomiser, verifier, perturbation, judge and critic;
0.2 for the rewriting editor)."""

from __future__ import annotations

from assay.jobs import CallStore, StageCaller
from assay.rubric_eval.session import open_judges

ROLES = ("verifier", "perturber", "judge", "critic", "editor")


async def sent_temperatures(server, specs, tmp_path):
    store = CallStore.open(tmp_path / "calls.sqlite")
    async with open_judges(specs) as judges:
        for role, judge in judges.items():
            await StageCaller(judge, store).ask("probe", [{"role": "user", "content": role}],
                                               {"type": "object"}, item_id=role)
    return {r["body"]["messages"][0]["content"]: r["body"].get("temperature")
            for r in server.requests if r["stage"] == "probe"}


async def test_each_role_sends_the_papers_temperature(serve, tmp_path):
    server = await serve(stages={"probe": {"ok": True}})
    spec = f"openai-compatible:fake@{server.base_url}"
    sent = await sent_temperatures(server, dict.fromkeys(ROLES, spec), tmp_path)
    assert sent == {"verifier": 0.0, "perturber": 0.0, "judge": 0.0, "critic": 0.0,
                    "editor": 0.2}


async def test_a_temperature_in_the_judges_config_wins(serve, tmp_path, monkeypatch):
    server = await serve(stages={"probe": {"ok": True}})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "assay.toml").write_text(
        f'[judges.warm]\nspec = "openai-compatible:fake@{server.base_url}"\n'
        "temperature = 0.7\n")
    sent = await sent_temperatures(server, {"editor": "warm", "critic": "warm"}, tmp_path)
    assert sent == {"editor": 0.7, "critic": 0.7}
