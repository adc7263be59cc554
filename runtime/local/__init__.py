"""Local models (SPEC §6): the catalog of bundled models, their weights assembled from package
chunks into a per-user cache, and the llama.cpp server that serves them on a loopback port."""
