"""``assay grade --repeats R``: the same items graded R times, one ordinary run per repeat.

The study's directory holds ``repeats.json`` (the master seed, and each repeat's seed and run
directory) and ``repeat-1`` … ``repeat-R``, each a complete run (store, manifest, resume). Repeat
``r`` (from 0) runs with its own recorded seed and :attr:`RunOptions.repeat` = ``r``, so its
calls are sent as ``JudgeRequest.sample = r``: their own cache key, and judge seed + ``r`` when
the judge config sets a seed, so the R runs are R draws, not one answer replayed from the cache.
Repeat 0 is the plain run (its master seed, sample 0).

Resuming the study (``assay grade --resume STUDY``) resumes every repeat that has a store and
starts those that have none; the seeds come from ``repeats.json``, never drawn again.

Example:
    >>> seeds = repeat_seeds(7, 3)
    >>> seeds[0], len(set(seeds)), seeds == repeat_seeds(7, 3)
    (7, 3, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import InputError, Issue
from assay.grading.seeding import derive_seed
from assay.runs.options import RunOptions
from assay.runs.sources import ItemSource

REPEATS_FILE = "repeats.json"
MAX_SEED = 2**31 - 1  # stored seeds stay in every backend's integer range


def repeat_seeds(master_seed: int, repeats: int) -> list[int]:
    """Repeat 0 keeps ``master_seed``; repeat r > 0 gets a seed derived from it and r."""
    return [master_seed] + [derive_seed(master_seed, "repeat", str(r)) % MAX_SEED
                            for r in range(1, repeats)]


@dataclass(frozen=True)
class Repeat:
    """One repeat of a study: its index (from 0), master seed and run directory."""

    index: int
    seed: int
    run_dir: Path

    @property
    def label(self) -> str:
        return self.run_dir.name


def plan_repeats(study: Path, master_seed: int, repeats: int) -> list[Repeat]:
    """The repeats of a new study in ``study`` (``repeat-1`` … ``repeat-R``)."""
    if repeats < 1:
        raise InputError(Issue(None, None, "--repeats", f"expected a count >= 1, got {repeats}"))
    return [Repeat(r, seed, study / f"repeat-{r + 1}")
            for r, seed in enumerate(repeat_seeds(master_seed, repeats))]


def write_repeats(study: Path, repeats: list[Repeat]) -> None:
    study.mkdir(parents=True, exist_ok=True)
    record = {"master_seed": repeats[0].seed,
              "repeats": [{"repeat": r.index, "seed": r.seed, "run_dir": r.run_dir.name}
                          for r in repeats]}
    (study / REPEATS_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def is_study(path: str | Path) -> bool:
    """True if ``path`` is the directory of a repeats study."""
    return (Path(path) / REPEATS_FILE).is_file()


def read_repeats(study: str | Path) -> list[Repeat]:
    """The repeats recorded in ``study``; an InputError naming the file when it is bad."""
    path = Path(study) / REPEATS_FILE
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return [Repeat(int(r["repeat"]), int(r["seed"]), Path(study) / str(r["run_dir"]))
                for r in record["repeats"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(Issue(str(path), None, "repeats", f"not a repeats record: {exc}")) from None


def repeat_options(options: RunOptions, repeat: Repeat) -> RunOptions:
    """The options of one repeat's run."""
    return options.replace(seed=repeat.seed, repeat=repeat.index, run_dir=str(repeat.run_dir))


async def arun_repeats(source: ItemSource | None, options: RunOptions | None, repeats: int, *,
                       resume: str | Path | None = None) -> list[Any]:
    """Grade ``source`` ``repeats`` times (a new study in ``options.run_dir``), or continue the
    study ``resume`` (``source`` and ``options`` then come from each repeat's store, with this
    session's operational settings from ``options``). Returns each repeat's
    :class:`~assay.runs.runner.RunReport`, in order."""
    from assay.runs.runner import arun, new_run_dir, restore

    if resume is not None:
        plan = read_repeats(resume)
        first_store = next((r.run_dir for r in plan if (r.run_dir / "run.sqlite").exists()), None)
        if first_store is None:
            raise InputError(Issue(str(resume), None, "--resume", "no repeat of this study has "
                                   "a run yet: start it again with the items"))
        operational = RunOptions(**(options or RunOptions()).operational())
        source, base = restore(first_store, operational)
    else:
        if source is None or options is None:
            raise InputError(Issue(None, None, "ITEMS", "give the items to grade (or --resume)"))
        base = options
        plan = plan_repeats(new_run_dir(options), options.seed, repeats)
        write_repeats(plan[0].run_dir.parent, plan)
    reports = []
    for repeat in plan:
        started = (repeat.run_dir / "run.sqlite").exists()
        reports.append(await arun(source, repeat_options(base, repeat),
                                  resume=repeat.run_dir if started else None))
    return reports
