"""Partition weights: load profiles written by the pipeline, and live lag."""
