"""``assay.sample``: the model under test answers every item, as a resumable job.

One free-text chat completion per item (``n`` per item with a sample index), made through the
judges layer like every other model call (clients, cache, limits, retries, cost, budget) and
traced in a job directory (``--job-dir``, by default ``OUT.job``): run the same command again
after a crash, ``kill -9`` or a spent budget and no finished call is made again (finished
answers are written together every 0.25 s, so a ``kill -9`` loses at most that window's, as
``assay grade`` does). Temperature,
max tokens, seed, reasoning effort and the system prompt are the job's config; a changed one is
refused, naming it.

Each sample keeps why the model stopped (``finish_reason``: ``stop``, ``length`` when cut at the
token limit, ``refusal``) and a reasoning model's thinking apart from the visible answer, which
is what gets graded. A content-filter stop or a reply with no visible text is a failed sample,
never an empty answer (:mod:`assay.judges.free_text`); an item with a failed sample is not
written, and the job ends ``incomplete``.

The output is what ``assay grade --responses`` reads: HealthBench lines
``{"prompt_id", "response", "finish_reason"}`` (with ``"sample"`` when ``n > 1``), or items with
their response (``output_format="items"``; sample ``k`` of item ``ID`` is item ``ID#k``).

Example (the shipped HealthBench examples, against the fake server playing the model)::

    import assay
    from assay.testing import FakeJudgeServer

    with FakeJudgeServer.run_in_thread(models={"patient-bot": {"default": "See a doctor."}}) as s:
        result = assay.sample("examples/healthbench/examples.jsonl",
                              model=f"openai-compatible:patient-bot@{s.base_url}",
                              out="responses.jsonl")
    result.status, result.written        # ('complete', 5)
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson

from assay.errors import ConfigError, InputError, Issue
from assay.item import Item
from assay.runs.sources import sample_id

STAGE = "sample"
OUTPUT_FORMATS = ("auto", "healthbench", "items")
EXECUTORS = ("local", "batch", "ray")
# finished samples are written in one transaction at least this often: a kill -9 loses at most
# this window of answers (asked again on resume), and sampling pays no commit per call
COMMIT_AFTER_S = 0.25
PROTOCOLS = ("assay", "simple-evals")


@dataclass
class SampleResult:
    """What a sampling job produced: samples by item id, failures, call totals, lines written."""

    job_dir: Path
    status: str
    samples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    resumed: int = 0
    totals: Any = None
    written: int = 0
    output_format: str = "healthbench"
    wall_s: float = 0.0

    @property
    def finish_reasons(self) -> dict[str, int]:
        """How many samples stopped for each reason (``stop``, ``length``, ``refusal``...)."""
        counts: dict[str, int] = {}
        for samples in self.samples.values():
            for s in samples:
                reason = str(s.get("finish_reason"))
                counts[reason] = counts.get(reason, 0) + 1
        return counts


async def asample(
    items: str | Path | Sequence[Item | Mapping[str, Any]],
    *,
    model: str,
    out: str | Path | None = None,
    job_dir: str | Path | None = None,
    n: int = 1,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    reasoning_effort: str | None = None,
    system: str | Path | None = None,
    condition: str | None = None,
    bank: str | Path | None = None,
    selection: str | Path | None = None,
    taxonomy: str | Path | None = None,
    output_format: str = "auto",
    budget: float | None = None,
    concurrency: int | None = None,
    cache: str | Path | None = None,
    config_file: str | Path | None = None,
    progress: bool = False,
    executor: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    batch_retry: str = "batch",
    batch_poll_s: float = 30.0,
    protocol: str = "assay",
    sampled_items: str | Path | None = None,
) -> SampleResult:
    """Sample ``model`` on every item; see the module docstring.

    ``items``: an item file (Assay JSONL/JSON/YAML, HealthBench JSONL) or a list of
    :class:`~assay.item.Item`. ``model``: a judge spec (``openai:gpt-4.1``,
    ``openai-compatible:M@URL``, a named ``[judges.NAME]`` of ``assay.toml``); ``temperature``,
    ``max_tokens``, ``seed`` and ``reasoning_effort`` override its config. ``system``: a file
    whose text is the system prompt, or ``condition``: a named one, with the ``bank``,
    ``selection`` or ``taxonomy`` it renders (:mod:`assay.sampling.conditions`). ``n``: samples
    per item (sample ``k`` is sent with ``seed + k`` when a seed is set). ``executor="batch"``
    asks through the model's batch API (OpenAI, Anthropic) at half price, the batches kept in
    the job: the same command again waits for them (``batch_retry``, ``batch_poll_s``: see
    :class:`~assay.judges.batch_judge.BatchJudge`); ``executor="ray"`` makes the calls on
    ``workers`` Ray actors (of the cluster at ``ray_address``, or a local instance) while this
    process keeps the job. ``protocol="simple-evals"`` asks the model as simple-evals' sampler
    for it does, byte for byte, with no preflight request (:mod:`assay.sampling.simple_evals`;
    ``sampled_items``: where to write the items as sent, for simple-evals' grader).
    The endpoint is checked (one request) only when some item still needs a call.
    """
    from assay.jobs import JobDir, StageCaller, StageError, run_batch
    from assay.judges import check_judges
    from assay.judges.secrets import redact, redact_data
    from assay.sampling.conditions import system_prompts

    started = time.perf_counter()
    if n < 1:
        raise ConfigError(f"--n {n}: at least one sample per item")
    if output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"--format {output_format!r}: unknown; use {', '.join(OUTPUT_FORMATS)}")
    if out is None and job_dir is None:
        raise ConfigError("give --out FILE (and/or --job-dir DIR)")
    if executor not in EXECUTORS or batch_retry not in ("batch", "live"):
        raise ConfigError(f"--executor {executor!r} --batch-retry {batch_retry!r}: expected "
                          "local, batch or ray, and batch or live")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"--protocol {protocol!r}: expected {' or '.join(PROTOCOLS)}")
    if executor == "batch" and budget is not None:
        raise ConfigError("--budget is not supported with --executor batch")
    # the assay protocol writing HealthBench lines needs each row's conversation only
    loaded, fingerprint, fmt = _read_items(items, conversations=protocol == "assay"
                                           and output_format in ("auto", "healthbench"))
    if output_format == "auto":
        output_format = "healthbench" if fmt == "healthbench" else "items"
    prompts = system_prompts(condition=condition, system_file=system, bank=bank,
                             selection=selection, taxonomy=taxonomy)
    for item in loaded:  # every item has its system prompt (an adaptive selection) before a call
        prompts.for_item(item.id)
    settings: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens,
                                "reasoning_effort": reasoning_effort}
    try:
        if protocol == "simple-evals":
            judge, entry, sampler = _simple_evals_judge(
                model, prompts.condition, config_file=config_file, concurrency=concurrency,
                cache=cache, budget=budget, seed=seed, **settings)
            ask = [sampler.queried(_sent_messages(item)) for item in loaded]
            chosen = {"sampler": entry, "system_message": sampler.system_message}
        else:
            judge = _model_judge(model, config_file=config_file, concurrency=concurrency,
                                 cache=cache, budget=budget, seed=seed, **settings)
            ask = [_with_system(item, prompts.for_item(item.id)) for item in loaded]
    except ConfigError as exc:
        raise model_under_test_error(exc) from None
    messages = {item.id: m for item, m in zip(loaded, ask)}
    if sampled_items is not None and protocol == "simple-evals":
        _write_sampled_items(loaded, messages, sampled_items)
    params = redact_data(judge.config.request_params())
    config = {"model": redact(model), "params": params, "n": n, "items": fingerprint,
              "condition": condition or "none", "system_sha256": prompts.fingerprint}
    if protocol != "assay":  # a job made before the protocol existed keeps its config
        config.update(protocol=protocol, **chosen)
    job = JobDir.open(Path(job_dir) if job_dir is not None else Path(f"{out}.job"),
                      kind="sample", config=config, commit_after_s=COMMIT_AFTER_S)
    pool = None
    try:
        pending = len(set(messages) - set(job.store.results()))
        if pending and protocol != "simple-evals":  # simple-evals sends no preflight
            await check_judges([judge])
        if pending and executor == "ray":  # workers that cannot start fail here
            from assay.distributed import WorkerPool

            pool = WorkerPool.start([judge.config], workers=workers or 2, address=ray_address,
                                    cache_path=str(cache) if cache is not None else None)
    except BaseException as exc:
        job.close()
        await _close(judge)
        if isinstance(exc, ConfigError):
            raise model_under_test_error(exc) from None
        raise
    via: Any = pool.judge(judge.config, judge.budget) if pool is not None else None
    if executor == "batch":  # the answers go out as batches, kept in the job's store
        from assay.jobs.batch_ledger import JobBatchLedger
        from assay.judges.batch_judge import BatchJudge, BatchRetry

        via = BatchJudge(judge, JobBatchLedger(job.store), retry=cast(BatchRetry, batch_retry),
                         poll_s=batch_poll_s)
    caller = StageCaller(judge, job.store, via=via)

    async def answer_all(item: Item) -> dict[str, Any]:
        stored = redact_data(messages[item.id])  # the trace's copy, scrubbed once for n samples
        answers = await asyncio.gather(
            *(caller.answer(STAGE, messages[item.id], item_id=item.id, sample=k, stored=stored)
              for k in range(n)),
            return_exceptions=True)  # every sample is tried (and stored) even if one fails
        for outcome in answers:
            if isinstance(outcome, BaseException) and not isinstance(outcome, StageError):
                raise outcome
        failures = [a for a in answers if isinstance(a, StageError)]
        if failures:
            raise StageError(STAGE, item.id, f"{len(failures)} of {n} samples failed: "
                             + failures[0].reason, failures[0].kind)
        return {"samples": [{"sample": k, "response": a["text"],
                             "finish_reason": a.get("finish_reason"),
                             "reasoning": a.get("reasoning")}
                            for k, a in enumerate(answers) if isinstance(a, dict)]}

    try:
        batch = await run_batch(loaded, answer_all, store=job.store, item_id=lambda i: i.id,
                                label=f"sample ({judge.model})", quiet=not progress,
                                max_items=len(loaded) if executor == "batch" else 64)
    except BaseException:
        job.close()  # the calls made are stored: the same command resumes
        raise
    finally:
        if executor == "batch":
            await via.aclose()  # stops polling (the batches stay in the job)
        if pool is not None:
            await pool.aclose()
        await _close(judge)
    spend = judge.budget
    status = "complete" if batch.complete else (
        "budget" if spend is not None and spend.exhausted else "incomplete")
    result = SampleResult(job.path, status, failed=dict(batch.failed), resumed=batch.resumed,
                          totals=batch.totals, output_format=output_format)
    result.samples = {key: value["samples"] for key, value in batch.results.items()}
    if out is not None:
        result.written = write_samples(loaded, result.samples, out, output_format, n=n)
    job.finish(status=status, extra={"failed": result.failed, "out": str(out) if out else None,
                                     "written": result.written,
                                     "finish_reasons": result.finish_reasons})
    result.wall_s = time.perf_counter() - started
    return result


def model_under_test_error(exc: ConfigError) -> ConfigError:
    """A judge-layer error about the model under test, saying so ("judge 'x': cannot reach"
    becomes "model under test 'x': cannot reach").

    >>> str(model_under_test_error(ConfigError("judge spec 'x': unknown provider 'x'")))
    "model under test spec 'x': unknown provider 'x'"
    """
    message = re.sub(r"^judge( spec)? ", r"model under test\1 ", str(exc))
    return ConfigError(message.replace("(or api_key_env", "(or api_key_env"))


def sample(items: Any, **kwargs: Any) -> SampleResult:
    """Blocking :func:`asample` (works in scripts and inside notebooks' running loops)."""
    from assay.judges.sync import run_sync

    return run_sync(asample(items, **kwargs))


def write_samples(items: list[Item], samples: dict[str, list[dict[str, Any]]], out: str | Path,
                  output_format: str, *, n: int) -> int:
    """Write the finished items' samples (input order) to ``out``, atomically; lines written."""
    lines: list[bytes] = []
    for item in items:
        for s in samples.get(item.id, ()):
            if output_format == "healthbench":
                record: dict[str, Any] = {"prompt_id": item.id, "response": s["response"],
                                          "finish_reason": s["finish_reason"]}
                if n > 1:
                    record["sample"] = s["sample"]
            else:
                update: dict[str, Any] = {"response": s["response"]}
                if n > 1:
                    update.update(id=sample_id(item.id, s["sample"]), metadata={
                        **item.metadata, "prompt_id": item.id, "sample": s["sample"]})
                record = item.model_copy(update=update).model_dump(mode="json", exclude_none=True)
            lines.append(orjson.dumps(record))
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(b"".join(line + b"\n" for line in lines))
    tmp.replace(target)
    return len(lines)


def _read_items(items: str | Path | Sequence[Item | Mapping[str, Any]], *,
                conversations: bool = False) -> tuple[list[Item], str, str]:
    """The items, a fingerprint of them (for the job config) and their file kind.
    ``conversations``: HealthBench rows are wanted for their conversations only (no rubric is
    built: the answers are written as ``{prompt_id, response}`` lines)."""
    if isinstance(items, (str, Path)):
        from assay.io import load_items
        from assay.io.formats import detect_format
        from assay.runs.sources import file_sha256

        path = Path(items)
        if not path.is_file():
            raise InputError(Issue(str(path), None, None, "no such file"))
        kind = detect_format(path).kind
        loaded = None
        if conversations and kind == "healthbench":
            from assay.io.healthbench import read_conversations

            loaded = read_conversations(path)
        if loaded is None:
            loaded = load_items(path)
        if not loaded:
            raise InputError(Issue(str(path), None, None, "no item in the file"))
        return loaded, file_sha256(path), kind
    loaded = [i if isinstance(i, Item) else Item.model_validate(i) for i in items]
    if not loaded:
        raise ConfigError("no item to sample")
    digest = hashlib.sha256(b"".join(i.model_dump_json().encode() for i in loaded)).hexdigest()
    return loaded, digest, "items"


def _model_judge(spec: str, *, config_file: Any, concurrency: int | None, cache: Any,
                 budget: float | None, **settings: Any):
    """The model under test as a judge of the judges layer; ``settings`` (temperature,
    max_tokens, seed, reasoning_effort) replace its config's where given."""
    from assay.judges.specs import config_from

    config = config_from(spec, config_file)
    return _make_judge(config, {k: v for k, v in settings.items() if v is not None},
                       concurrency=concurrency, cache=cache, budget=budget)


def _simple_evals_judge(spec: str, condition: str, *, config_file: Any, seed: int | None,
                        concurrency: int | None, cache: Any, budget: float | None,
                        **settings: Any):
    """The model under test asked as simple-evals' sampler for it asks it (its table entry,
    with the user's temperature, max_tokens or reasoning_effort where given), its table entry
    (None: not in the table) and that sampler."""
    from assay.judges.specs import config_from
    from assay.sampling.simple_evals import sampler_for

    if condition != "none":
        raise ConfigError("--protocol simple-evals: the system message is the sampler's (from "
                          "simple-evals' model table): leave --system and --condition out")
    if seed is not None:
        raise ConfigError("--protocol simple-evals: simple-evals' samplers send no seed; leave "
                          "--seed out")
    config = config_from(spec, config_file)
    entry, sampler = sampler_for(config.model, wire=config.wire)
    if (sampler.kind == "claude") != (config.wire == "anthropic"):
        raise ConfigError(f"--protocol simple-evals: simple-evals samples {sampler.model} "
                          f"through {'Anthropic' if sampler.kind == 'claude' else 'OpenAI'}'s "
                          f"API, not the {config.wire} endpoint of {spec!r}")
    sampler = sampler.with_overrides(**settings)
    fields = {**sampler.request_fields(), "structured": "simple-evals", "seed": None,
              "reasoning_effort": None}
    judge = _make_judge(config, fields, concurrency=concurrency, cache=cache, budget=budget)
    return judge, entry, sampler


def _make_judge(config: Any, updates: dict[str, Any], *, concurrency: int | None, cache: Any,
                budget: float | None):
    from assay.judges import Budget, JudgeConfig, Limits, make_judge
    from assay.judges.cache import ResponseCache

    if concurrency is not None:
        updates["limits"] = Limits(**{**config.limits.model_dump(), "max_in_flight": concurrency})
    if updates:
        config = JudgeConfig.model_validate({**config.model_dump(), **updates})
    return make_judge(config, cache=ResponseCache(cache) if cache is not None else None,
                      budget=Budget(budget) if budget is not None else None)


def _sent_messages(item: Item) -> list[dict[str, Any]]:
    """The item's conversation as its file holds it (a HealthBench row's own key order)."""
    if "healthbench" in item.metadata:
        from assay.io.healthbench import item_to_example

        return item_to_example(item)["prompt"]
    return [m.model_dump() for m in item.messages]


def _with_system(item: Item, system: str | None) -> list[dict[str, Any]]:
    messages = [m.model_dump() for m in item.messages]
    if system is None:  # the usual case: the bank's module (and NumPy) is not imported for it
        return messages
    from assay.bank.system_prompt import with_system_prompt

    return with_system_prompt(messages, system)


def _write_sampled_items(items: list[Item], messages: Mapping[str, list[dict[str, Any]]],
                         path: str | Path) -> None:
    """The items with the conversation the sampler sent (what simple-evals grades), whole or
    not at all: HealthBench rows for HealthBench items."""
    from assay.io.healthbench import item_to_example

    lines = []
    for item in items:
        if "healthbench" in item.metadata:
            record: dict[str, Any] = {**item_to_example(item), "prompt": messages[item.id]}
        else:
            record = item.model_copy(update={"messages": messages[item.id]}).model_dump(
                mode="json", exclude_none=True)
        lines.append(orjson.dumps(record) + b"\n")
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(b"".join(lines))
    tmp.replace(target)


async def _close(judge: Any) -> None:
    cache = judge.cache
    await judge.aclose()
    if cache is not None:
        cache.close()
