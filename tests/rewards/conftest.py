"""Reward tests: a judge on the fake server whose verdicts depend on the graded answer."""

from __future__ import annotations

import pytest

from assay.judges import make_judge
from assay.rubric import Criterion

DOC = Criterion(id="doc", text="Suggests consulting a doctor.")
REST = Criterion(id="rest", text="Recommends rest and fluids.")
HARM = Criterion(id="harm", text="Includes unsafe advice.", weight=-1)
CRITERIA = [DOC, REST, HARM]


def keyword_policy(view):
    """MET when the answer says what the criterion is about (the fake judge's verdict policy)."""
    answer = (view.response_text or "").lower()
    text = view.criterion_text or ""
    if "doctor" in text:
        return "MET" if "doctor" in answer else "UNMET"
    if "rest" in text:
        return "MET" if "rest" in answer else "UNMET"
    if "unsafe" in text:
        return "MET" if "double the dose" in answer else "UNMET"
    return "UNMET"


@pytest.fixture
async def judge_on(serve):
    """``await judge_on(**server_kwargs)`` -> (judge, server); judges closed after the test."""
    judges = []

    async def start(retries=None, **kwargs):
        kwargs.setdefault("policy", keyword_policy)
        server = await serve(**kwargs)
        overrides = {} if retries is None else {"retry": {"max_retries": retries}}
        judge = make_judge(f"openai-compatible:fake@{server.base_url}", **overrides)
        judges.append(judge)
        return judge, server

    yield start
    for judge in judges:
        await judge.aclose()


@pytest.fixture
async def server_at(serve):
    """``await server_at(**serve_config)`` -> (base URL, fake judge server): ``assay serve``'s
    server over :data:`CRITERIA` and the keyword policy (``judge_faults``, ``judge_latency``:
    the fake judge's), stopped after the test."""
    from assay.rewards import RewardScorer
    from assay.rewards.server import RewardServer, ServeConfig

    started = []

    async def start(judge_faults=None, judge_latency=0.0, **config):
        judge_server = await serve(policy=keyword_policy, faults=judge_faults,
                                   latency=judge_latency)
        judge = make_judge(f"openai-compatible:fake@{judge_server.base_url}")
        server = RewardServer(RewardScorer(judge, criteria=CRITERIA), ServeConfig(port=0, **config))
        started.append(server)
        return await server.start(), judge_server

    yield start
    for server in started:
        await server.stop()


@pytest.fixture
async def serving(serve):
    """``await serving(judge_latency=..., template=..., **serve_config)`` -> (base URL,
    RewardServer, fake judge server): ``assay serve``'s server over :data:`CRITERIA` and the
    keyword policy, stopped after the test."""
    from assay.rewards import RewardScorer
    from assay.rewards.server import RewardServer, ServeConfig

    started = []

    async def start(judge_latency=0.0, template="healthbench", **config):
        judge_server = await serve(policy=keyword_policy, latency=judge_latency)
        judge = make_judge(f"openai-compatible:fake@{judge_server.base_url}")
        server = RewardServer(RewardScorer(judge, criteria=CRITERIA, template=template),
                              ServeConfig(port=0, **config))
        started.append(server)
        return await server.start(), server, judge_server

    yield start
    for server in started:
        await server.stop()
