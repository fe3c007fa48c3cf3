"""The compatibility matrix: the tests that matter for compatibility, on other versions."""
