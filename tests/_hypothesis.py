"""Hypothesis example counts from one place.

``$LANGGRAPH_RECALL_HYPOTHESIS`` picks the profile (default ``fast``):

* ``fast`` (local runs and the default CI job): every property runs, with at most
  ``FAST_EXAMPLES`` examples; :func:`thorough` caps a property's own count at that.
* ``thorough`` (``.ci/run slow``): every property with its full example count, its own
  ``max_examples`` (``thorough(N)`` returns ``N``) or Hypothesis' 100.

No deadlines in either: a deadline is a timing assert, and on a loaded 2-core machine an
example's first run (imports, caches) can take longer than any sane bound. Speed is measured
by the benchmarks (``langgraph_recall.bench``), never by the tests.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE_ENV = "LANGGRAPH_RECALL_HYPOTHESIS"
FAST_EXAMPLES = 20
PROFILE = os.environ.get(PROFILE_ENV) or "fast"
if PROFILE not in {"fast", "thorough"}:
    raise ValueError(f"{PROFILE_ENV}={PROFILE!r}: use 'fast' or 'thorough'")

settings.register_profile("thorough", deadline=None)
settings.register_profile("fast", deadline=None, max_examples=FAST_EXAMPLES)
settings.load_profile(PROFILE)


def thorough(examples: int) -> int:
    """A property's example count: ``examples`` under the thorough profile, else at most
    ``FAST_EXAMPLES``."""
    return examples if PROFILE == "thorough" else min(examples, FAST_EXAMPLES)
