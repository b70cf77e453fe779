"""Running a batch: checking the arguments, reading items, scoring each, the workers and writer."""
