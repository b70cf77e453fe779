"""Tests of the core pipeline (issues 2, 3 and the core half of 4)."""
