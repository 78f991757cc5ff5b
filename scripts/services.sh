#!/usr/bin/env bash
# Start the local PostgreSQL and Redis servers if they are down (DESIGN.md §5), then wait for them.
set -euo pipefail

pg_up() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  echo "==> starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
fi
if ! redis_up; then
  echo "==> starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
fi
# PgBouncer (Debian's package) for the transaction-pooler tests; they start their own.
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ] && [ "$(id -u)" = 0 ]; then
  echo "==> installing pgbouncer"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q pgbouncer >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q pgbouncer >/dev/null; }
fi
for _ in $(seq 1 60); do
  if pg_up && redis_up; then
    echo "==> PostgreSQL and Redis are up"
    exit 0
  fi
  sleep 0.5
done
pg_up || echo "PostgreSQL is not reachable on 127.0.0.1:5432" >&2
redis_up || echo "Redis is not reachable on 127.0.0.1:6379" >&2
exit 1
