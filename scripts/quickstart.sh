#!/usr/bin/env bash
# The README's first command: set up .venv with what this job needs, start a fake judge on a
# free local port, grade the HealthBench examples shipped in examples/healthbench (their
# physicians' ideal completions) with simple-evals' grader protocol, print the official
# HealthBench summary, stop the server. No key and no network needed. It installs only
# Assay and the packages grading imports ([tool.assay.quickstart] in pyproject.toml);
# `bash scripts/setup.sh` installs the rest (statistics, reports, extras, test tools).
# With a real endpoint instead of the fake judge:
#   OPENAI_API_KEY=... .venv/bin/assay grade examples/healthbench/examples.jsonl \
#       --healthbench --ideal --judge openai:gpt-4.1-mini
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/assay ]; then
    python3 -m venv .venv
    # the quickstart's packages, at pyproject.toml's bounds
    mapfile -t NEEDED < <(python3 - <<'PY'
import re, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))
wanted = set(project["tool"]["assay"]["quickstart"]["dependencies"])
for spec in project["project"]["dependencies"]:
    if re.split(r"[<>=!~ \[;]", spec, maxsplit=1)[0].lower() in wanted:
        print(spec)
PY
)
    # hatchling (and editables, its editable builds') here: the editable install below builds
    # with them, without an isolated build environment that would look them up again each time
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "${NEEDED[@]}" "$(python3 -c \
        'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"][0])')" \
        "editables>=0.3"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
        --no-build-isolation -e . 2>/dev/null
fi

PORT=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.venv/bin/assay fake-judge --port "$PORT" 2>/dev/null &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT

# Wait until the fake judge accepts connections (at most ~20 s).
.venv/bin/python - "$PORT" <<'PY'
import socket, sys, time
for _ in range(200):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the fake judge did not start")
PY

echo "Grading with the fake judge: a stand-in that answers by rule, not a model. It marks every criterion MET, penalties (negative points) included, so the scores below show the pipeline working, not the answers' quality: an axis graded mostly by penalties (here context_awareness) scores 0." >&2
.venv/bin/assay grade examples/healthbench/examples.jsonl \
    --healthbench --ideal \
    --judge "openai-compatible:fake@http://127.0.0.1:$PORT/v1" \
    --run-dir "runs/quickstart-$(date +%Y%m%d-%H%M%S)" --quiet
echo "Next: bash scripts/setup.sh installs the rest (statistics, reports, the extras and the test tools) before assay report, assay review or the tests." >&2
