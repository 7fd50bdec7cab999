"""Reproducible numbers of the genmodel paper (see bench/papers/__init__.py)."""
from bench.papers import Spec

SPECS: list[Spec] = []
