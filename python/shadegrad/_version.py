# python/shadegrad/_version.py — the package version, the one place it is written (pyproject.toml
# reads it through scikit-build-core's regex version provider).
__version__ = "0.1.0"
