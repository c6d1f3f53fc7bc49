"""shredfold: benchmarks for multimodal reasoning about shredded and folded paper."""

from shredfold.numerics import pin as _pin_numerics

# Before anything loads NumPy: one BLAS kernel and thread count on every machine, so the
# same spec gives the same bytes anywhere (see shredfold.numerics).
_pin_numerics()

__version__ = "0.1.0"
