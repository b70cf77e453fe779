"""What a batch reports: outcomes per item and scorer, thresholds, gates, and the report fold."""
