"""The conventions an OTLP span is read by, one module each."""
