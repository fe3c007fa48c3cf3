"""Thin translations between client libraries' wire types and the core model."""
