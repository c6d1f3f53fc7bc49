"""Reference solvers of ShredBench (the built-in models that answer without a network)."""
