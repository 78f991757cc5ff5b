"""Example graphs built with langgraph_memory (runnable services and agents)."""
