#!/usr/bin/env bash
# Set up everything and run the demo on the embedded default (no server, no API key needed).
#
# Usage: bash scripts/demo.sh [demo options]
#   --postgres DSN     store + checkpointer on a real Postgres (default: embedded Postgres 18 + pgvector)
#   --redis [URL]      conversation threads in Redis (default URL: $LANGGRAPH_RECALL_REDIS_URL)
#   --model NAME       a real model via langchain-openai (also used when OPENAI_API_KEY is set)
#   --offline          force offline mode; --user ID picks the user (default: a fresh one)
# The first run creates .venv and installs ".[all]"; LANGGRAPH_RECALL_SKIP_INSTALL=1 skips pip.
# Data lives in $LANGGRAPH_RECALL_HOME (default: the per-user data directory).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=all source scripts/_env.sh
langgraph-recall demo "$@"
