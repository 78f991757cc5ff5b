"""``python -m langgraph_memory.cli`` — same as the ``langgraph-memory`` command."""

from __future__ import annotations

import sys

from langgraph_memory.cli import main

sys.exit(main())
