"""shredfold: benchmarks for multimodal reasoning about shredded and folded paper."""

__version__ = "0.1.0"
