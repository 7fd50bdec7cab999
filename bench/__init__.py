"""The benchmark scripts. Each runs as a module from the repository root, e.g. ``python -m bench.finder``;
``python -m bench.run_all`` runs them all."""
