#!/usr/bin/env bash
# Set up everything and run the whole test suite: lint, types, unit, integration, conformance.
# Usage: bash scripts/test.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_env.sh
bash scripts/services.sh
export LANGGRAPH_MEMORY_REQUIRE_SERVICES="${LANGGRAPH_MEMORY_REQUIRE_SERVICES:-1}"
echo "==> ruff"
ruff check langgraph_memory graphs tests bench
ruff format --check langgraph_memory graphs tests bench
echo "==> mypy --strict"
mypy
echo "==> pytest"
python -m pytest -p no:cacheprovider --timeout=900 "$@"
