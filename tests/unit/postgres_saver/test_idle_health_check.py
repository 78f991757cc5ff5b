"""The pool health check pings only connections that sat unused."""

from __future__ import annotations

import time

from langgraph_recall._pg.pool import IdleHealthCheck


class _Conn:
    """Stands in for a pooled connection (identity and weak references are all that matter)."""


def test_first_checkout_pings_then_busy_connections_are_not_pinged() -> None:
    health = IdleHealthCheck(idle=60.0)
    conn = _Conn()
    assert health.needs_ping(conn) is True
    assert health.needs_ping(conn) is False
    assert health.needs_ping(conn) is False
    assert health.needs_ping(_Conn()) is True  # another connection has its own clock


def test_a_connection_idle_longer_than_the_window_is_pinged() -> None:
    health = IdleHealthCheck(idle=0.01)
    conn = _Conn()
    health.needs_ping(conn)
    time.sleep(0.03)
    assert health.needs_ping(conn) is True
    assert health.needs_ping(conn) is False


def test_forgotten_connections_do_not_leak() -> None:
    health = IdleHealthCheck()
    for _ in range(100):
        health.needs_ping(_Conn())
    assert len(health._last) == 0
