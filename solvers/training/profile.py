"""A measured per-layer profile (issue 57): the paper's own input, per-layer times measured on one GPU (App. A.4).

A profile is a CSV file, one row per layer in forward order, with a header naming the columns:

=================  ========  ==================================================================================
column             required  meaning
=================  ========  ==================================================================================
name               yes       the layer's name (at most 200 characters)
forward_ms         yes       forward compute time on one GPU, milliseconds, >= 0
backward_ms        yes       backward compute time, milliseconds, >= 0
param_bytes        yes       bytes of the layer's parameters on one node (its gradients are allreduced)
activation_bytes   yes       bytes of the activations the layer hands on (an expert layer: the routed tokens'
                             bytes, what each all-to-all moves per node)
expert             no        1 / true for a mixture-of-experts layer (its parameters are sharded, not
                             allreduced, under expert parallelism); default 0
tokens             no        tokens a node routes through an expert layer; default 0 (needed > 0 when expert)
=================  ========  ==================================================================================

Lines starting with ``#`` and blank lines are skipped. The file is read through the studio's one input reader
(``topologies.input_file``: a regular file only, never a FIFO or a device, at most ``MAX_PROFILE_BYTES``; a
symbolic link is refused too), numbers through ``read_figure`` (bounded before conversion, NaN and infinity
refused). Every refusal is a ``TrainingError`` of one line naming the file and the line.
"""
from __future__ import annotations

import csv
import io
import os

from .jobs import Layer, TrainingError

__all__ = ["COLUMNS", "MAX_PROFILE_BYTES", "MAX_LAYERS", "read_profile", "parse_profile"]

COLUMNS = ("name", "forward_ms", "backward_ms", "param_bytes", "activation_bytes", "expert", "tokens")
REQUIRED = COLUMNS[:5]
MAX_PROFILE_BYTES = 4 * 2 ** 20
MAX_LAYERS = 100_000
_TRUE, _FALSE = ("1", "true", "yes"), ("0", "false", "no", "")


def read_profile(path) -> list[Layer]:
    """The layers of the profile at ``path`` (module docstring)."""
    from topologies.input_file import InputFileError, display_name, read_input_text

    name = os.fspath(path)
    shown = display_name(name)
    try:
        if os.path.islink(name):
            raise TrainingError(f"{shown}: the profile is a symbolic link; name the file itself")
        text = read_input_text(name, MAX_PROFILE_BYTES, "profile")
    except InputFileError as exc:
        raise TrainingError(str(exc)) from None
    return parse_profile(text, shown)


def parse_profile(text: str, where: str = "profile") -> list[Layer]:
    """The layers of a profile's text (module docstring)."""
    from topologies.input_file import read_figure

    lines = [(i + 1, line) for i, line in enumerate(text.splitlines())
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise TrainingError(f"{where}: the profile has no header and no layers")
    try:
        rows = list(csv.reader(io.StringIO("\n".join(line for _, line in lines))))
    except csv.Error as exc:
        raise TrainingError(f"{where}: not a CSV file ({exc})") from None
    header = [h.strip().lower() for h in rows[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise TrainingError(f"{where}: line {lines[0][0]}: the header lacks the column {missing[0]!r} "
                            f"(columns: {', '.join(COLUMNS)})")
    unknown = [h for h in header if h not in COLUMNS]
    if unknown:
        raise TrainingError(f"{where}: line {lines[0][0]}: unknown column {unknown[0][:40]!r} "
                            f"(columns: {', '.join(COLUMNS)})")
    if len(rows) - 1 > MAX_LAYERS:
        raise TrainingError(f"{where}: more than {MAX_LAYERS} layers")
    col = {h: i for i, h in enumerate(header)}
    layers = []
    for (lineno, _), row in zip(lines[1:], rows[1:]):
        at = f"{where}: line {lineno}"
        if len(row) != len(header):
            raise TrainingError(f"{at}: {len(row)} fields where the header has {len(header)}")
        cell = {h: row[i].strip() for h, i in col.items()}
        if not cell["name"] or len(cell["name"]) > 200:
            raise TrainingError(f"{at}: a layer needs a name of 1 to 200 characters")
        try:
            nums = {c: float(read_figure(cell[c], c, at, 0.0, 1e18)) for c in REQUIRED[1:]}
            tokens = float(read_figure(cell["tokens"], "tokens", at, 0.0, 1e18)) if cell.get("tokens") else 0.0
        except ValueError as exc:
            raise TrainingError(str(exc).replace("\n", " ")) from None
        flag = cell.get("expert", "").lower()
        if flag not in _TRUE + _FALSE:
            raise TrainingError(f"{at}: expert must be 0 or 1 (true/false), got {flag[:20]!r}")
        try:
            layers.append(Layer(cell["name"], nums["forward_ms"], nums["backward_ms"], nums["param_bytes"],
                                nums["activation_bytes"], flag in _TRUE, tokens))
        except TrainingError as exc:
            raise TrainingError(f"{at}: {exc}") from None
    if not layers:
        raise TrainingError(f"{where}: the profile has a header but no layers")
    return layers
