#!/usr/bin/env bash
# Set up everything and run the whole test suite: lint, types, unit, integration, conformance.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_env.sh
bash scripts/services.sh
export LANGGRAPH_RECALL_REQUIRE_SERVICES="${LANGGRAPH_RECALL_REQUIRE_SERVICES:-1}"
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
echo "==> ruff"
ruff check langgraph_recall graphs tests notebooks
ruff format --check langgraph_recall graphs tests notebooks
echo "==> mypy --strict"
mypy  # [tool.mypy] files: langgraph_recall (graphs/ and bench/ included), notebooks/src + build.py
# --- store-compat: LangGraph's own store test suites (tests/compat), fetched from the PyPI
# sdists pinned in tests/compat/langgraph_suites.lock (sha256-checked, cached in .cache/) ---
python -m tests.compat._suites
# --- end store-compat ---
echo "==> pytest"
python -m pytest -p no:cacheprovider --timeout=900 "$@"
# --- peer-suites: redis-developer/langgraph-redis's checkpointer tests against our Redis savers
# (tests/compat/redis_peer_run.py: the sdist pinned in tests/compat/redis_peer_suite.lock, a
# private redis-server, their fixtures replaced; not run: tests/compat/redis_peer.deselect).
# langgraph-checkpoint-postgres's saver suites run inside pytest (checkpointer_suites.lock).
# LangGraph's own graph tests with our savers as checkpointers (~1,300 tests, long) run with
# LANGGRAPH_RECALL_PEER_PREGEL=1: python -m tests.compat.pregel_peer_run.
if [ "$#" -eq 0 ]; then
  python -m tests.compat.redis_peer_run
  if [ "${LANGGRAPH_RECALL_PEER_PREGEL:-0}" = "1" ]; then python -m tests.compat.pregel_peer_run; fi
fi
# --- end peer-suites ---
# ---- Redis savers on Valkey and on the lowest redis-py allowed (issue 14 item 9) ------------
# Full runs only (no pytest arguments); LANGGRAPH_RECALL_SKIP_REDIS_COMPAT=1 skips it.
if [ "$#" -eq 0 ] && [ "${LANGGRAPH_RECALL_SKIP_REDIS_COMPAT:-0}" != "1" ]; then
  bash scripts/test_redis_compat.sh
fi
