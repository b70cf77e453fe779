"""Calibrating scorers against human labels: the calibration values and how they are computed."""
