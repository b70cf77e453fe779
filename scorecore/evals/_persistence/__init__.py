"""The storage port and what every store uses: sanitizing values, decoding rows, listing batches."""
