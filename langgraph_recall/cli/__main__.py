"""``python -m langgraph_recall.cli`` — same as the ``langgraph-recall`` command."""

from __future__ import annotations

import sys

from langgraph_recall.cli import main

sys.exit(main())
