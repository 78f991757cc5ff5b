#!/usr/bin/env bash
# Set up everything and run the demo on the embedded default (no server, no API key needed).
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS=all source scripts/_env.sh
langgraph-memory demo "$@"
