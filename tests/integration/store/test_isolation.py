"""Tenant isolation with look-alike user ids, and erasure that leaves no residue anywhere."""

from __future__ import annotations

import pytest

from tests.integration.store.conftest import Driver, open_store, rows_mentioning

pytestmark = pytest.mark.postgres

LOOKALIKES = ["u_1", "u_10", "u%1", "u'1", "U_1", "u_1x", "u_", "u", "u 1", "ü_1"]
USERS = LOOKALIKES + [f"user-{index}" for index in range(30 - len(LOOKALIKES))]


def marker(index: int) -> str:
    return f"mk{index:02d}qz"


@pytest.mark.parametrize("backend", ["exact", "pgvector"], indirect=True)
async def test_no_user_sees_another_users_memories(dsn: str, backend: str) -> None:
    async with open_store(dsn, "sync") as raw:
        store = Driver(raw, "sync", backend, dsn)
        for index, user in enumerate(USERS):
            for slot in range(2):
                await store(
                    "put",
                    ("memories", user),
                    f"m{slot}",
                    {"content": f"{marker(index)} likes hiking, fact {slot}", "owner": user},
                )
        for index, user in enumerate(USERS):
            prefix = ("memories", user)
            searches = [
                await store("search", prefix),
                await store("search", prefix, query="likes hiking fact", limit=50),
                await store("search", prefix, query=f"{marker((index + 1) % 30)} hiking"),
                await store("search", prefix, filter={"owner": {"$ne": user}}),
                await store("search", prefix, filter={"$or": [{"owner": "u_10"}, {"owner": "u"}]}),
            ]
            for hits in searches:
                assert all(hit.value["owner"] == user for hit in hits), (user, hits)
                assert all(hit.namespace == prefix for hit in hits)
            assert len(searches[0]) == 2 and len(searches[1]) == 2
            assert await store("list_namespaces", prefix=prefix) == [prefix]

        erased = await store("forget", ("memories", "u_1"))
        assert erased == 2
        assert set(rows_mentioning(dsn, marker(0)).values()) == {0}
        for index, user in enumerate(USERS[1:], start=1):
            assert len(await store("search", ("memories", user))) == 2, user
            assert sum(rows_mentioning(dsn, marker(index)).values()) > 0
