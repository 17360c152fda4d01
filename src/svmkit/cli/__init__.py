"""Layer 5: the command line, one module per command; may import every layer below."""
