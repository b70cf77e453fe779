"""Trust in judges over a batch: panels' agreement and pairwise win rates, and their fold."""
