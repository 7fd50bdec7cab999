"""No literal "None" or "nan" in the tables of the Clusters, Learn and GenModel pages (issue 40): the shared
``studio.tables.blank_missing`` shows a missing cell as a dash, and every table those pages draw goes through it."""
import math

import pandas as pd
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, switch_page


def test_blank_missing_dashes_every_kind_of_gap_and_keeps_full_columns_numeric():
    from studio.tables import DASH, blank_missing

    frame = pd.DataFrame({"name": ["a", None, "None"], "time": [1.5, float("nan"), 2.0], "k": [1, 2, 3],
                          "n": pd.array([1, None, 3], dtype="Int64"), "text": ["x", "nan", "y"]})
    out = blank_missing(frame)
    assert list(out["name"]) == ["a", DASH, DASH] and list(out["time"]) == [1.5, DASH, 2.0]
    assert list(out["n"]) == [1, DASH, 3] and list(out["text"]) == ["x", DASH, "y"]
    assert out["k"].dtype == frame["k"].dtype and pd.isna(frame["name"][1])     # the input is left alone


def _bad_cells(at) -> list:
    bad = []
    for i, table in enumerate(at.dataframe):
        for col in table.value.columns:
            for v in table.value[col]:
                if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() in ("None", "nan",
                                                                                              "NaN", "<NA>"):
                    bad.append((i, col, v))
    return bad


def _open(page):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240).run()
    at = switch_page(at, page).run()
    assert not at.exception
    return at


def test_clusters_tables_have_no_none():
    at = _open("clusters")
    for view in ("Trees", "k vs throughput"):
        at.segmented_control(key="c_view").set_value(view).run()
        if view == "k vs throughput":
            at.button(key="c_scan").click().run()
        assert at.dataframe and not _bad_cells(at), view


def test_learn_and_genmodel_tables_have_no_none():
    at = _open("learn")
    assert at.dataframe and not _bad_cells(at)
    at = _open("genmodel")
    assert len(at.dataframe) >= 4 and not _bad_cells(at)
    at.selectbox(key="gm_tree").set_value("cdc384").run()
    assert not _bad_cells(at)
