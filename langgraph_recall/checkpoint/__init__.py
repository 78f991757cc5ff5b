"""Checkpointers (per-thread working memory): ``.redis`` and ``.postgres`` subpackages."""
