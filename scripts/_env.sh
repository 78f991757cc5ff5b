# Shared by scripts/test.sh and scripts/demo.sh: a project virtualenv with everything installed.
# Usage: source scripts/_env.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${LANGGRAPH_RECALL_VENV:-$ROOT/.venv}"
PYTHON_BIN="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtualenv $VENV"
  "$PYTHON_BIN" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
if [ "${LANGGRAPH_RECALL_SKIP_INSTALL:-0}" != "1" ]; then
  echo "==> installing langgraph-recall[${EXTRAS:-dev}] into $VENV"
  python -m pip install --quiet --upgrade pip
  python -m pip install --quiet -e "$ROOT[${EXTRAS:-dev}]"
fi
