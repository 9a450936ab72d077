"""Finite differences shared by the Python tests (gradients are checked against these)."""


def central(f, v, h=1e-6):
    """The central difference (f(v + h) - f(v - h)) / 2h: f evaluated in float64 at shifted v."""
    return (f(v + h) - f(v - h)) / (2 * h)
