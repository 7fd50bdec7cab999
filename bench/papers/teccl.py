"""Reproducible numbers of the teccl paper (see bench/papers/__init__.py)."""
from bench.papers import Spec

SPECS: list[Spec] = []
