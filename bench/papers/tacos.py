"""Reproducible numbers of the tacos paper (see bench/papers/__init__.py)."""
from bench.papers import Spec

SPECS: list[Spec] = []
