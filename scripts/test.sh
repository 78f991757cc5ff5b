#!/usr/bin/env bash
# Set up everything and run the whole test suite: lint, types, unit, integration, conformance.
# Usage: bash scripts/test.sh [pytest args]
#
# Without arguments (what CI runs): every test, once, in stages --
#   1. ruff; mypy --strict in the background;
#   2. pytest on $LANGGRAPH_RECALL_TEST_WORKERS processes (pytest-xdist, one module per
#      worker; default: twice the CPU count, at most 4 -- many tests wait on a server, a
#      sleep or a subprocess, and 4 on 2 cores took 594 s against 672 s with 3): every test
#      but those marked `serial` or `waits`, each
#      property with at most 20 examples (Hypothesis profile "fast"; `.ci/run slow` sets
#      LANGGRAPH_RECALL_HYPOTHESIS=thorough: every property with its full example count);
#   3. five lanes side by side, each one process at a time but the last (what runs there
#      mostly waits): LangGraph's store suites' `serial` tests | our Postgres-side `serial`
#      tests (timeouts and time bounds) | the Redis-side `serial` tests | langgraph-redis's
#      checkpointer tests, then the Redis tests on Valkey | the tests that mostly sleep
#      (`waits`), four processes, then the Redis tests on the lowest redis-py allowed.
# With arguments: one pytest run of those (profile "fast" unless LANGGRAPH_RECALL_HYPOTHESIS
# says otherwise), e.g. `bash scripts/test.sh tests/unit -n 2` or `-m "redis and not serial"`.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
stage() { echo "==> $1 ($((SECONDS - started)) s since start)"; }
# LangGraph's store and checkpointer suites (tests/compat), fetched from the PyPI sdists
# pinned in tests/compat/*.lock (sha256-checked, cached in .cache/), in the background from
# the start, beside the install (the fetch needs only the standard library and pip): the
# test runs below wait for it.
suites_log="$(mktemp)"
"${PYTHON:-python3}" -m tests.compat._suites >"$suites_log" 2>&1 &
suites_pid=$!
source scripts/_env.sh
stage "installed"
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on
# this machine): without it every test process compiles the package and pytest rewrites the
# asserts of every test module again -- ~13 s of CPU per pytest process (a collection: 18 s
# instead of 5), on a run that keeps both cores busy from start to end.
unset PYTHONDONTWRITEBYTECODE
suites_fetched() {
  local status=0
  wait "$suites_pid" || status=$?
  cat "$suites_log"
  rm -f "$suites_log"
  return "$status"
}
bash scripts/services.sh
export LANGGRAPH_RECALL_REQUIRE_SERVICES="${LANGGRAPH_RECALL_REQUIRE_SERVICES:-1}"
# Every test process on one thread of OpenMP (the bundled embedder) and of OpenBLAS: the
# test processes already keep both cores busy, and threads that spin waiting for each other
# there cost a query embedding ~100 ms of CPU instead of ~20 (docs/retrieval.md).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
# LoCoMo dev data lives beside the repository (../shared/data/locomo-dev). A clone made
# elsewhere (git clone /work/main /tmp/x) finds it beside the repository it was cloned from.
if [ -z "${LANGGRAPH_RECALL_LOCOMO_DIR:-}" ] && [ ! -d "../shared/data/locomo-dev" ]; then
  origin="$(git remote get-url origin 2>/dev/null || true)"
  if [ -n "$origin" ] && [ -d "$origin/../shared/data/locomo-dev" ]; then
    LANGGRAPH_RECALL_LOCOMO_DIR="$(cd "$origin/../shared/data/locomo-dev" && pwd)"
    export LANGGRAPH_RECALL_LOCOMO_DIR
    echo "==> LoCoMo data: $LANGGRAPH_RECALL_LOCOMO_DIR (beside the origin repository)"
  fi
fi
stage "ruff"
ruff check langgraph_recall graphs tests notebooks
ruff format --check langgraph_recall graphs tests notebooks
PYTEST=(python -m pytest -p no:cacheprovider --timeout=900)
if [ "$#" -gt 0 ]; then
  stage "mypy --strict"
  mypy
  suites_fetched
  stage "pytest $*"
  "${PYTEST[@]}" "$@"
  exit 0
fi
# [tool.mypy] files: langgraph_recall (graphs/ and bench/ included), notebooks/src + build.py;
# in the background, beside the parallel tests (its result is checked after them)
stage "mypy --strict (in the background)"
mypy_log="$(mktemp)"
mypy >"$mypy_log" 2>&1 &
mypy_pid=$!
# The run's shared folder (tests/_run_dir.py): the wheel's virtualenv of the packaging,
# README and notebook tests is built there once, starting now, beside mypy and the first
# test modules (tests/integration/packaging/_venv.py; a test that needs it first waits).
LANGGRAPH_RECALL_TEST_SHARED_DIR="$(mktemp -d /tmp/lgm-test-run-XXXXXX)"
chmod 755 "$LANGGRAPH_RECALL_TEST_SHARED_DIR"
export LANGGRAPH_RECALL_TEST_SHARED_DIR
venv_log="$LANGGRAPH_RECALL_TEST_SHARED_DIR/wheel-venv.log"
python -m tests.integration.packaging._venv >"$venv_log" 2>&1 &
venv_pid=$!
cleanup() {
  [ -n "$mypy_pid" ] && kill "$mypy_pid" 2>/dev/null
  [ -n "$venv_pid" ] && kill "$venv_pid" 2>/dev/null
  rm -rf "$mypy_log" "$LANGGRAPH_RECALL_TEST_SHARED_DIR"
}
trap cleanup EXIT
suites_fetched
export LANGGRAPH_RECALL_HYPOTHESIS="${LANGGRAPH_RECALL_HYPOTHESIS:-fast}"
workers="${LANGGRAPH_RECALL_TEST_WORKERS:-$(python -c 'import os; print(min(2 * (os.cpu_count() or 1), 4))')}"
# One collection first, beside mypy: it writes the rewritten test modules' bytecode, which
# every later pytest process (the workers below, the lanes) then reads instead of rewriting.
stage "pytest: collecting once (bytecode for every later process)"
collect_log="$LANGGRAPH_RECALL_TEST_SHARED_DIR/collect.log"
if ! "${PYTEST[@]}" --collect-only -q >"$collect_log" 2>&1; then
  cat "$collect_log"  # what could not be collected, and why
  exit 1
fi
stage "pytest: all but the serial tests, $workers processes"
"${PYTEST[@]}" -n "$workers" --dist loadscope -m "not serial and not waits" --durations=30 \
  --junitxml="$LANGGRAPH_RECALL_TEST_SHARED_DIR/parallel.xml"
python -m tests._timings "$LANGGRAPH_RECALL_TEST_SHARED_DIR/parallel.xml"
venv_pid=""
stage "mypy --strict (result)"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
mypy_pid=""
cat "$mypy_log"
[ "$mypy_status" -eq 0 ] || exit "$mypy_status"
# The serial tests wait on timeouts, TTLs, frozen servers and failovers far more than they
# compute (the machine is ~90 % idle while they run): they and the peer / Redis compatibility
# runs go in lanes side by side, each lane one process at a time -- LangGraph's store
# suites' serial tests (their large batches); our Postgres-side serial tests; the
# Redis-side serial tests; langgraph-redis's suite, then Valkey; the `waits` tests, then the
# lowest redis-py. A lane's output is printed whole when it ends; all must pass.
serial_tests() {  # serial_tests NAME MARKER [pytest args]: one lane's serial tests, timings
  local name=$1 marker=$2
  shift 2
  "${PYTEST[@]}" -m "$marker" --durations=10 \
    --junitxml="$LANGGRAPH_RECALL_TEST_SHARED_DIR/serial-$name.xml" "$@"
  python -m tests._timings "$LANGGRAPH_RECALL_TEST_SHARED_DIR/serial-$name.xml" --top 8
}
# The Redis savers on Valkey and on the lowest redis-py allowed: full runs only;
# LANGGRAPH_RECALL_SKIP_REDIS_COMPAT=1 skips both.
redis_compat() {
  if [ "${LANGGRAPH_RECALL_SKIP_REDIS_COMPAT:-0}" != "1" ]; then
    echo "==> Redis savers: $1"
    bash scripts/test_redis_compat.sh "$1"
  fi
}
lane_store_suites() {
  serial_tests store-suites "serial and not redis" tests/compat
}
lane_postgres() {
  serial_tests postgres "serial and not redis" --ignore=tests/compat
}
lane_redis() {
  serial_tests redis "serial and redis"
}
# --- peer-suites: redis-developer/langgraph-redis's checkpointer tests against our Redis savers
# (tests/compat/redis_peer_run.py: the sdist pinned in tests/compat/redis_peer_suite.lock, a
# private redis-server, their fixtures replaced; not run: tests/compat/redis_peer.deselect).
# langgraph-checkpoint-postgres's saver suites run inside pytest (checkpointer_suites.lock).
# LangGraph's own graph tests with our savers as checkpointers (~1,300 tests, long) run with
# LANGGRAPH_RECALL_PEER_PREGEL=1: python -m tests.compat.pregel_peer_run.
lane_redis_peers() {
  echo "==> langgraph-redis's checkpointer tests"
  python -m tests.compat.redis_peer_run
  redis_compat valkey
}
# tests that mostly sleep (`waits`: TTLs to pass), four at a time: they would hold a
# parallel-stage worker's slot for their whole sleep; then the Redis tests on the lowest
# redis-py (they too mostly wait: frozen servers, timeouts), in the lane that ends first
# (LangGraph's large batches take ~95 s alone but ~190 s beside the other lanes)
lane_waits() {
  "${PYTEST[@]}" -m "waits and not serial" -n 4 --dist load --durations=5
  redis_compat lowest
}
lanes=(store_suites postgres redis redis_peers waits)
stage "the serial tests and the peer / Redis compatibility runs, ${#lanes[@]} lanes side by side"
declare -A lane_pid lane_log
for lane in "${lanes[@]}"; do
  lane_log[$lane]="$LANGGRAPH_RECALL_TEST_SHARED_DIR/lane-$lane.log"
  (set -e; lane_start=$SECONDS; "lane_$lane"; echo "==> lane $lane: $((SECONDS - lane_start)) s") \
    >"${lane_log[$lane]}" 2>&1 &
  lane_pid[$lane]=$!
done
lanes_status=0
for _ in "${lanes[@]}"; do
  finished_pid=""
  status=0
  wait -n -p finished_pid "${lane_pid[@]}" || status=$?
  for lane in "${lanes[@]}"; do
    if [ "${lane_pid[$lane]:-}" = "$finished_pid" ]; then
      stage "lane $lane ended (exit $status)"
      cat "${lane_log[$lane]}"
      unset "lane_pid[$lane]"
    fi
  done
  [ "$status" -eq 0 ] || lanes_status=$status
done
[ "$lanes_status" -eq 0 ] || exit "$lanes_status"
if [ "${LANGGRAPH_RECALL_PEER_PREGEL:-0}" = "1" ]; then
  stage "LangGraph's graph tests with our savers"
  python -m tests.compat.pregel_peer_run
fi
stage "done"
