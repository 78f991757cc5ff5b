# Shared by scripts/test.sh and scripts/demo.sh: a project virtualenv with everything installed.
# Usage: source scripts/_env.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Run as root, the embedded Postgres runs as an account of its own, which must reach the
# server binaries inside the virtualenv: a checkout under a private folder (a 0700 mktemp
# directory, /root) keeps its virtualenv under /var/tmp, whose parents are open.
default_venv() {
  local dir="$ROOT"
  if [ "$(id -u)" = 0 ]; then
    while :; do
      case "$(stat -c %A "$dir")" in
        *x | *t) ;;
        *) echo "/var/tmp/langgraph-recall-venv-$(printf %s "$ROOT" | cksum | cut -d' ' -f1)"; return ;;
      esac
      [ "$dir" = / ] && break
      dir="$(dirname "$dir")"
    done
  fi
  echo "$ROOT/.venv"
}
VENV="${LANGGRAPH_RECALL_VENV:-$(default_venv)}"
PYTHON_BIN="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtualenv $VENV"
  "$PYTHON_BIN" -m venv "$VENV"
fi
# shellcheck disable=SC1091
source "$VENV/bin/activate"
if [ "${LANGGRAPH_RECALL_SKIP_INSTALL:-0}" != "1" ]; then
  echo "==> installing langgraph-recall[${EXTRAS:-dev}] into $VENV"
  # uv (from PyPI, into the virtualenv) resolves and installs the same versions in ~10 s where
  # pip takes 45-65 s; pip does it when uv cannot be had. Compiled to bytecode as pip does:
  # where PYTHONDONTWRITEBYTECODE is set, nothing else would, and every process would compile
  # its dependencies again.
  if ! { python -m pip install --quiet "uv>=0.13,<1" &&
    python -m uv pip install --quiet --compile-bytecode -e "$ROOT[${EXTRAS:-dev}]"; }; then
    echo "==> uv could not install: installing with pip"
    python -m pip install --quiet --upgrade pip
    python -m pip install --quiet -e "$ROOT[${EXTRAS:-dev}]"
  fi
fi
