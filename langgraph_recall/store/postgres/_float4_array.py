"""Vectors on the wire: one binary ``real[]`` parameter for a whole batch (pure encoding).

A pgvector text literal is formatted float by float in Python and parsed again by the
server; on a batched put that cost more than the insert itself (``langgraph-recall bench
store`` measures puts/s). :class:`Float4Array` sends the batch's vectors as
ONE flat
``real[]`` parameter in Postgres' binary array format (a numpy view, no per-float work),
and SQL slices each row's vector out of it (``real[]`` casts to pgvector's ``vector``).
``real[]`` is a built-in type with a fixed OID, so nothing is registered per connection.

Example:
    ```python
    import numpy as np
    from langgraph_recall.store.postgres._float4_array import Float4Array, binary_float4_array

    batch = Float4Array(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    assert len(binary_float4_array(batch.values)) == 20 + 2 * 2 * 8
    ```
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

__all__ = ["FLOAT4_ARRAY_OID", "Float4Array", "binary_float4_array"]

FLOAT4_OID = 700
FLOAT4_ARRAY_OID = 1021
_ELEMENT = np.dtype([("length", ">i4"), ("value", ">f4")])


class Float4Array:
    """Float32 values sent to Postgres as one flat binary ``real[]`` parameter.

    Args:
        values: Any float array; it is flattened (row-major) to float32.
    """

    __slots__ = ("values",)

    def __init__(self, values: npt.ArrayLike) -> None:
        self.values = np.ascontiguousarray(values, dtype=np.float32).ravel()

    def __len__(self) -> int:
        return int(self.values.size)


def binary_float4_array(values: npt.NDArray[np.float32]) -> bytes:
    """Postgres' binary send format of a one-dimensional ``real[]`` without NULLs.

    Header: dimensions, has-nulls flag, element type OID, then (length, lower bound) of
    the one dimension; each element is its byte length (4) and the big-endian float.
    An empty array has zero dimensions.
    """
    if values.size == 0:
        return struct.pack(">iii", 0, 0, FLOAT4_OID)
    body = np.empty(values.size, dtype=_ELEMENT)
    body["length"] = 4
    body["value"] = values
    return struct.pack(">iiiii", 1, 0, FLOAT4_OID, values.size, 1) + body.tobytes()


class _Float4ArrayDumper(Dumper):
    format = Format.BINARY
    oid = FLOAT4_ARRAY_OID

    def dump(self, obj: Any) -> bytes:
        return binary_float4_array(obj.values)


# Our own wrapper type on a built-in OID: safe to register once, process-wide.
psycopg.adapters.register_dumper(Float4Array, _Float4ArrayDumper)
