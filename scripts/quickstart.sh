#!/usr/bin/env bash
# The README's first command: set up .venv, start a fake judge on a free local port, grade the
# HealthBench examples shipped in examples/healthbench (their physicians' ideal completions)
# with simple-evals' grader protocol, print the official HealthBench summary, stop the server.
# No key and no network needed. With a real endpoint instead of the fake judge:
#   OPENAI_API_KEY=... .venv/bin/assay grade examples/healthbench/examples.jsonl \
#       --healthbench --ideal --judge openai:gpt-4.1-mini
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

PORT=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.venv/bin/assay fake-judge --port "$PORT" 2>/dev/null &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true' EXIT

# Wait until the fake judge accepts connections (at most ~10 s).
.venv/bin/python - "$PORT" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit("the fake judge did not start")
PY

echo "Grading with the fake judge: a stand-in that answers by rule (MET to every criterion), not a model." >&2
.venv/bin/assay grade examples/healthbench/examples.jsonl \
    --healthbench --ideal \
    --judge "openai-compatible:fake@http://127.0.0.1:$PORT/v1" \
    --run-dir "runs/quickstart-$(date +%Y%m%d-%H%M%S)" --quiet
