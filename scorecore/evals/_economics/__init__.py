"""A batch's judge economics and trials: the meter a batch runs with, and their report values."""
