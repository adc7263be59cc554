"""The terminal UI (SPEC §8): Textual screens over a run's journal. The only package that imports
textual."""
