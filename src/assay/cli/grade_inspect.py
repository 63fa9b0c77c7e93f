"""``assay grade --inspect-log LOG``: grade the samples of an Inspect eval log.

The log is read with Inspect's own ``read_eval_log`` (:mod:`assay.integrations.inspect.logs`):
each sample's output is the response; an ``inspect_evals`` HealthBench log brings its rubrics
and turns HealthBench mode on (simple-evals' template, the official formula) unless
``--rubric`` or ``--taxonomy`` gives other criteria. The rest is an ordinary run.
"""

from __future__ import annotations

from typing import Any

from assay.errors import InputError, Issue

INSTALL = "the inspect extra is not installed: pip install 'assay[inspect]'"


def with_inspect_log(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with the log's items read (``inspect_items``) and HealthBench mode set for a
    HealthBench log; an option that names other items is refused."""
    given = [flag for flag, key in (("ITEMS", "items"), ("--responses", "responses"),
                                    ("--ideal", "ideal"), ("--conversations", "conversations"))
             if args.get(key)]
    if given:
        raise InputError([Issue(None, None, flag, "--inspect-log gives the items and their "
                                "responses: drop it") for flag in given])
    try:
        from assay.integrations.inspect.logs import read_log_items
    except ImportError:
        raise InputError(Issue(str(args["inspect_log"]), None, "--inspect-log", INSTALL)) from None
    read = read_log_items(args["inspect_log"])
    healthbench = read.healthbench and args["rubric"] is None and args.get("taxonomy") is None
    return {**args, "healthbench": args["healthbench"] or healthbench,
            "inspect_items": read.items}


def log_source(args: dict[str, Any]):
    """The run's items: those read from the log."""
    from assay.runs.sources import ItemSource

    return ItemSource(items=args["inspect_items"])
