"""Concrete assignors for kafka-python, one module per strategy."""
