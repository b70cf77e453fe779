"""Comparing two batches: the comparison values and the paired statistics behind the gate."""
