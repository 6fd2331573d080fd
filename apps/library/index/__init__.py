"""The search index beside the Chunk rows: embeddings, the FTS5 and vector
tables and the code that writes them (`tables`), bit codes for the KNN first
pass (`codes`), rebuilding under a new model (`reindex`) and health checks
(`doctor`)."""
