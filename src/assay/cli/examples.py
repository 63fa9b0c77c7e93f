"""One example per command, kept in one place: it ends the command's ``--help``, the manual's
"Every command" page lists them all (``docs/commands.md``, written by
``scripts/commands_page.py``), and the test suite runs each one, in this order, against the fake judge.

The examples name real judges (``openai:gpt-4.1-mini``). The suite points each such spec at a
fake judge started with the example's ``fake`` options, runs the line with bash from a fresh
directory holding the repository's ``examples/``, and requires exit 0 (a server is started,
asked for its ``server`` path and stopped). Later examples read what earlier ones wrote.

Example:
    >>> by_command()["grade"].line.startswith("assay grade examples/healthbench/examples.jsonl")
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import typer


@dataclass(frozen=True)
class Example:
    """One command's example.

    ``command`` is the command as typed after ``assay`` (``"bank build"``); ``line`` the whole
    shell line; ``fake`` the ``assay fake-judge`` options that script the replies this line needs
    (``None``: the line calls no model); ``server`` the path to request when the command serves
    until stopped; ``before`` a line the suite runs first (not shown: it makes a file the
    example reads that the repository cannot ship).
    """

    command: str
    line: str
    fake: str | None = None
    server: str | None = None
    before: str | None = None


HB = "examples/healthbench/examples.jsonl"
RE = "examples/rubric_eval"
TAX = "examples/taxonomy"

EXAMPLES: tuple[Example, ...] = (
    # Files
    Example("validate", f"assay validate {HB}"),
    Example("schema", "assay schema rubric"),
    Example("convert", f"assay convert {HB} items.jsonl --to items"),
    # Judges
    Example("judges estimate",
            "assay judges estimate --model gpt-4.1-mini --calls 6000 --prompt-tokens 1500"),
    Example("judges check", "assay judges check openai:gpt-4.1-mini", fake=""),
    Example("fake-judge", "assay fake-judge --port 8089 --latency-ms 50", server="/v1/models"),
    # Grading, scoring, comparing
    Example("grade",
            f"assay grade {HB} --healthbench --ideal --judge openai:gpt-4.1-mini --run-dir runs/mini "
            "--cache .assay/cache.sqlite",
            fake=""),
    Example("score", "assay score runs/mini --abstain zero --json scores.json"),
    Example("export", "assay export runs/mini --inspect -o mini.eval"),
    Example("cache stats", "assay cache stats"),
    Example("cache clear", "assay cache clear --older-than 604800"),
    # The model under test
    Example("sample",
            f"assay sample {HB} --model openai:gpt-4.1-mini --out responses.jsonl --n 2",
            fake="--model gpt-4.1-mini"),
    Example("eval",
            f"assay eval {HB} --healthbench --model openai:gpt-4.1-mini --judge openai:gpt-4.1 "
            "--run-dir runs/eval",
            fake="--model gpt-4.1-mini"),
    Example("compare", "assay compare runs/mini runs/eval/grade --items"),
    Example("report", "assay report runs/mini runs/eval/grade -o report.html"),
    Example("review", "assay review runs/mini --port 8765", server="/"),
    Example("data list", "assay data list"),
    Example("data fetch",
            "assay data fetch healthbench --subset hard --from hard_2025-05-08-21-00-10.jsonl "
            "--data-dir data",
            before="python -c \"from assay.testing import write_standin; "
                   "write_standin('hard', 'hard_2025-05-08-21-00-10.jsonl')\""),
    # Trusting a judge
    Example("agreement",
            "assay grade examples/autorubric/charm100_sample.json --judge openai:gpt-4.1-mini "
            "--run-dir runs/charm && assay agreement runs/charm --json agreement.json",
            fake="--policy dataset:examples/autorubric/charm100_sample.json"),
    Example("consistency",
            "assay grade examples/autorubric/charm100_sample.json --judge openai:gpt-4.1-mini "
            "--repeats 3 --run-dir runs/study && assay consistency runs/study",
            fake="--policy dataset:examples/autorubric/charm100_sample.json"),
    Example("meta-eval", "assay meta-eval examples/meta-eval/rows.jsonl --to-items meta_items.jsonl"),
    # Seed 000: generation, CIA, near misses, refinement
    Example("kb build", "assay kb build examples/generate/docs --out kb --chunk-chars 400"),
    Example("kb search", 'assay kb search kb "how do I get a bee sting out"'),
    Example("generate",
            "assay generate examples/generate/queries.txt --kb kb --model openai:gpt-4.1-mini "
            "--out rubrics.jsonl",
            fake="--stages examples/generate/stages.yaml"),
    Example("rubric stats", f"assay rubric stats {RE}/reference_rubrics.jsonl"),
    Example("cia",
            f"assay cia {RE}/our_rubrics.jsonl --gold {RE}/reference_rubrics.jsonl "
            "--judge openai:gpt-4.1 --out runs/cia",
            fake=f"--stages {RE}/stages.json"),
    Example("coverage",
            "assay coverage runs/cia/coverage.jsonl"),
    Example("nearmiss build",
            f"assay nearmiss build --gold {RE}/reference_rubrics.jsonl "
            f"--conversations {RE}/conversations.txt --references {RE}/reference_responses.jsonl "
            "--judge openai:gpt-4.1 --out runs/pairs",
            fake=f"--stages {RE}/stages.json"),
    Example("nearmiss judge",
            f"assay nearmiss judge runs/pairs/pairs.jsonl --rubrics ours={RE}/our_rubrics.jsonl "
            "--rubrics none --judge openai:gpt-4.1 --out runs/judge",
            fake=f"--stages {RE}/stages.json"),
    Example("discrimination", "assay discrimination runs/judge/pair_calls_ours.jsonl"),
    Example("refine",
            f"assay refine --gold {RE}/reference_rubrics.jsonl --conversations {RE}/conversations.txt "
            f"--base {RE}/base_responses.jsonl --rubrics ours={RE}/our_rubrics.jsonl "
            "--judge openai:gpt-4.1 --out runs/refine",
            fake=f"--stages {RE}/stages.json --policy MET"),
    # Seed 003: RubricsTree
    Example("taxonomy lint", f"assay taxonomy lint {TAX}/sleep-v2.yaml"),
    Example("taxonomy diff", f"assay taxonomy diff {TAX}/sleep-v1.yaml {TAX}/sleep-v2.yaml"),
    Example("route run",
            f"assay route run {TAX}/pha-items.jsonl --taxonomy starter --router tree "
            "--judge openai:gpt-4.1-mini -o routes.jsonl",
            fake=f"--stages {TAX}/fake-stages.yaml"),
    Example("route eval",
            f"assay route eval routes.jsonl --taxonomy starter --expert {TAX}/expert-selections.jsonl"),
    Example("stress make",  # the routes written by route run's example above
            f"assay stress make {TAX}/pha-items.jsonl --taxonomy starter --routing routes.jsonl "
            "--out stress"),
    Example("stress run",
            f"assay stress run {TAX}/pha-items.jsonl --taxonomy starter --router tree "
            "--judge openai:gpt-4.1-mini --run-dir runs/stress "
            f"--responses clean={TAX}/responses-clean.jsonl "
            f"--responses inaccurate_user_data={TAX}/responses-inaccurate_user_data.jsonl",
            fake=f"--stages {TAX}/fake-stages.yaml"),
    # Seed 004: Health-SCORE
    Example("bank build", f"assay bank build {HB} --out bank.yaml"),
    Example("bank show", "assay bank show health-score"),
    Example("bank select",
            f"assay bank select {HB} --judge openai:gpt-4.1-mini "
            "--out selections.jsonl",
            fake="--stages examples/health-score/relevance-replies.yaml"),
    Example("bank prompt", "assay bank prompt health-score"),
    Example("bank llm-rubrics",
            f"assay bank llm-rubrics {HB} --judge openai:gpt-4.1-mini --out llm-rubrics.jsonl",
            fake="--stages examples/health-score/llm-rubric-replies.yaml"),
    Example("serve", "assay serve --judge openai:gpt-4.1-mini --port 8766", fake="",
            server="/health"),
    # Seed 002: ASTRID
    Example("rag grade",
            "assay rag grade examples/rag/items.jsonl --judge openai:gpt-4.1 --out runs/rag",
            fake="--stages examples/rag/stages.json"),
    Example("rag train", "python examples/rag/make_synthetic.py --n 160 --seed 7 --out syn && "
            "assay rag train syn/train.jsonl --features human --models random_forest --no-grid "
            "--out rag-model"),
    Example("rag table2", "assay rag table2 syn/train.jsonl --features human --targets harmful,helpful"),
    Example("rag merge-labels",
            "assay rag merge-labels examples/rag/raw-annotations.jsonl "
            "--rules examples/rag/merge-rules.toml -o merged.jsonl"),
    Example("rag score", "assay rag score runs/rag --model rag-model --out predictions.jsonl"),
    Example("rag report", "assay rag report examples/rag/items.jsonl --grades runs/rag"),
)


def by_command() -> dict[str, Example]:
    """Each command's example, by the command as typed after ``assay``."""
    return {example.command: example for example in EXAMPLES}


def attach(app: typer.Typer, prefix: str = "") -> None:
    """End the help of every command of ``app`` (and of its groups) with its example; a
    group's help (``assay bank --help``) ends with the example of its first command."""
    from assay.cli.app import command_name

    examples = by_command()
    for command in app.registered_commands:
        example = examples.get(prefix + (command_name(command) or ""))
        if example is not None:
            command.epilog = f"Example: {example.line}"
    for group in app.registered_groups:
        if group.typer_instance is not None:
            inner = prefix + f"{group.name} "
            attach(group.typer_instance, inner)
            first = next((examples[inner + name] for command in group.typer_instance.registered_commands
                          if (name := command_name(command) or "") and inner + name in examples),
                         None)
            if first is not None:
                group.epilog = f"Example: {first.line}"


def commands_page() -> str:
    """The manual's "Every command" page (``docs/commands.md``)."""
    lines = [
        "# Every command",
        "",
        "One example per command, the one its `--help` ends with. Each runs in the test suite,",
        "in this order, from a directory holding the repository's `examples/`, with every",
        "`openai:MODEL` pointed at the fake judge (`assay fake-judge`) scripted for it.",
        "",
        "| command | example |",
        "|---|---|",
    ]
    for example in EXAMPLES:
        lines.append(f"| `assay {example.command}` | `{example.line}` |")
    return "\n".join(lines) + "\n"
