"""RAG clinical QA metrics (seed 002, ASTRID)."""
