"""Example graphs built with langgraph_recall (runnable services and agents)."""
