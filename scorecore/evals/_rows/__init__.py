"""Score rows: what one stored row holds, how rows are built, and the flat rows runners carry."""
