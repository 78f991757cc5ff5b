"""One Postgres layer for the checkpointer, the store and the leases.

Statements and programs, runners, pools, errors and DSNs live here once.
"""
