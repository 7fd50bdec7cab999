"""Reproducible numbers of the directconnect paper (see bench/papers/__init__.py)."""
from bench.papers import Spec

SPECS: list[Spec] = []
