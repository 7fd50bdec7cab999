"""Tables as the pages show them: pure pandas, no Streamlit.

``blank_missing`` turns every missing cell (None, NaN, pandas' NA, or a "None"/"nan" string that a number or an
absent value was printed as) into a dash, so no page shows a literal "None" or "nan". Columns with no missing
cell keep their type, so their numbers stay numbers (right-aligned, sortable).
"""
from __future__ import annotations

import pandas as pd

DASH = "—"
_PRINTED_MISSING = ("None", "nan", "NaN", "<NA>")


def blank_missing(frame: pd.DataFrame, dash: str = DASH) -> pd.DataFrame:
    """A copy of ``frame`` with every missing cell shown as ``dash``."""
    out = frame.copy()
    for col in out.columns:
        values = out[col]
        missing = values.isna()
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            missing |= values.map(lambda v: isinstance(v, str) and v.strip() in _PRINTED_MISSING)
        if missing.any():
            out[col] = values.astype(object).where(~missing, dash)
    return out
