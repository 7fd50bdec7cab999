"""Issue 59, findings 1 and 2: the design imported on Compose is the one Schedule schedules and names its
downloads after; Schedule's default synthesizer is one that applies to the design."""
from streamlit.testing.v1 import AppTest

from .conftest import ROOT, open_boxes, switch_page

SAMPLE = ROOT / "examples" / "nccl-topo-dgx-a100.xml"


def app():
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def test_the_import_on_compose_is_what_schedule_schedules_and_names(monkeypatch):
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator

    named = {}                          # each download button's file name, by label (AppTest does not show it)
    real = DeltaGenerator.download_button

    def recorded(self, label, data, file_name=None, *args, **kwargs):
        named[label] = file_name
        return real(self, label, data, file_name, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", recorded)
    monkeypatch.setattr(st, "download_button", lambda *a, **k: recorded(st._main, *a, **k))
    at = switch_page(app().run(), "compose").run()
    at.get("file_uploader")[0].set_value([(SAMPLE.name, SAMPLE.read_bytes(), "text/xml")]).run()
    assert not at.exception and not at.error
    assert at.subheader[0].value == "nccl-topo-dgx-a100.xml: 8 GPUs (NCCL topology)"
    assert at.text_input(key="expr").value == ""                 # the expression box no longer claims biring(8)
    at = open_boxes(switch_page(at, "schedule"), "export_open").run()
    assert not at.exception and not at.error
    at.selectbox(key="algo").set_value("forestcoll").run()
    at.selectbox(key="coll").set_value("allreduce").run()
    assert not at.exception and not at.error
    said = " ".join(m.value for m in at.markdown)
    assert "nccl-topo-dgx-a100.xml" in said and "biring" not in said
    assert "nccl-topo-dgx-a100.xml: 8 GPUs (NCCL topology)" in at.success[0].value
    at.button(key="x_export").click().run()
    assert not at.exception and not at.error
    assert named["Download MSCCL XML"] == "nccl_topo_dgx_a100__forestcoll_allreduce.xml"
    at = open_boxes(at, "downloads_open").run()
    assert named["Schedule JSON"] == "nccl_topo_dgx_a100__forestcoll.json"


def test_schedule_defaults_to_a_synthesizer_that_applies():
    at = switch_page(app().run(), "compose").run()
    at.text_input(key="expr").set_value("dgx_a100(boxes=2)").run()
    assert not at.exception and not at.error
    at = switch_page(at, "schedule").run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.selectbox(key="algo").value == "ring"              # the first in registry order that applies
    assert "Verified by the simulator" in at.success[0].value
    # a direct-connect design keeps BFB, and an explicit choice is kept even where it does not apply
    at = switch_page(app().run(), "schedule")
    at.query_params.update({"expr": "dgx_a100(boxes=2)", "algo": "bfb"})
    at.run()
    assert at.selectbox(key="algo").value == "bfb" and "bfb cannot schedule" in at.error[0].value


def test_the_import_stays_the_design_until_an_expression_replaces_it():
    at = switch_page(app().run(), "compose").run()
    at.get("file_uploader")[0].set_value([(SAMPLE.name, SAMPLE.read_bytes(), "text/xml")]).run()
    at = switch_page(at, "schedule").run()
    at = switch_page(at, "compose").run()                    # back on Compose: the import is still the design
    assert not at.exception and at.subheader[0].value == "nccl-topo-dgx-a100.xml: 8 GPUs (NCCL topology)"
    assert any("nccl-topo-dgx-a100.xml" in i.value for i in at.info)
    at.text_input(key="expr").set_value("torus(4,4)").run()  # typing an expression replaces it everywhere
    assert not at.exception and at.session_state["design_expr"] == "torus(4,4)"
    at = switch_page(at, "schedule").run()
    assert not at.exception and "torus(4,4)" in " ".join(m.value for m in at.markdown)
    assert at.selectbox(key="algo").value == "bfb"           # the page's own choice again on a direct-connect design


def _imported_session():
    """A session that uploaded the DGX A100 sample on Compose; (the AppTest, the import's key)."""
    at = switch_page(app().run(), "compose").run()
    at.get("file_uploader")[0].set_value([(SAMPLE.name, SAMPLE.read_bytes(), "text/xml")]).run()
    assert not at.exception and not at.error
    key = at.query_params["expr"]
    key = key[0] if isinstance(key, list) else key
    return at, key


def test_a_link_carries_the_import_by_its_digest_and_another_session_opens_it():
    import hashlib

    _, key = _imported_session()
    assert key == "import:" + hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    at = switch_page(app().run(), "schedule")        # another session, opened on the link
    at.query_params.update({"expr": key, "algo": "forestcoll", "coll": "allgather"})
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = " ".join(m.value for m in at.markdown)
    assert "nccl-topo-dgx-a100.xml" in said and "biring" not in said
    assert "8 GPUs (NCCL topology)" in at.success[0].value


def test_a_link_to_an_import_survives_a_restart_through_the_results_cache(tmp_path, monkeypatch):
    from studio import design

    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    design._HELD.clear()
    _, key = _imported_session()
    design._HELD.clear()                                # the process restarted: only the results cache holds it
    topo = design.load_design(key)
    assert topo.n == 8 and design.design_name(key) == SAMPLE.name
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", "off")
    design._HELD.clear()                                # a studio that never saw it says so in one line
    at = switch_page(app().run(), "compose")
    at.query_params["expr"] = key
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and "is not held here" in at.error[0].value and "upload the file" in at.error[0].value
    at = switch_page(app().run(), "schedule")
    at.query_params.update({"expr": key, "algo": "ring", "coll": "allgather"})
    at.run()
    assert not at.exception and "is not held here" in " ".join(e.value for e in at.error)


def test_every_page_opens_with_the_import():
    at, key = _imported_session()
    at = switch_page(at, "compare").run()
    assert not at.exception
    assert at.text_area(key="cmp_exprs").value == SAMPLE.name
    at = switch_page(at, "training").run()
    assert not at.exception
    assert at.text_area(key="tr_designs").value.splitlines()[:2] == [SAMPLE.name, "shifted_ring(8)"]
    at = switch_page(at, "clusters").run()
    assert not at.exception and at.radio(key="c_source").value == "current"
    assert not at.error, [e.value for e in at.error]
    at = switch_page(at, "failures").run()
    assert not at.exception and any(SAMPLE.name in i.value and "failures FILE" in i.value for i in at.info)


def test_every_page_opens_with_a_typed_design():
    at = switch_page(app().run(), "compose").run()
    at.text_input(key="expr").set_value("torus(4,4)").run()
    for page, key in (("compare", "cmp_exprs"), ("failures", "fl_designs")):
        at = switch_page(at, page).run()
        assert not at.exception and at.text_area(key=key).value == "torus(4,4)"
    at = switch_page(at, "training").run()
    assert at.text_area(key="tr_designs").value.splitlines()[0] == "torus(4,4)"


def test_a_link_or_a_box_never_reads_the_servers_files():
    """Review of issue 59: ``topologies.load`` takes paths, folders and globs (the CLI's user owns the machine);
    a shared studio's links and text boxes take expressions only, so a link cannot load or probe the server's
    files. One line says to upload the file instead."""
    import pytest

    from studio.design import load_expression
    from topologies import TopologyError

    for text in (str(SAMPLE), "/etc", "~/x.json", "a.graphml", "../x.xml"):
        with pytest.raises(TopologyError, match="not the server's files"):
            load_expression(text)
    with pytest.raises(TopologyError, match="expected"):      # a folder's bare name is only a bad expression
        load_expression("examples")
    assert load_expression("ring(4)").n == 4
    at = switch_page(app().run(), "compose")
    at.query_params["expr"] = str(SAMPLE)
    at.run()
    assert not at.exception and any("not the server's files" in e.value for e in at.error)
    at = switch_page(app().run(), "schedule")
    at.query_params.update({"expr": "/etc", "algo": "ring", "coll": "allgather"})
    at.run()
    assert not at.exception and any("not the server's files" in e.value for e in at.error)


def test_a_cache_record_not_shaped_as_an_import_is_not_one(tmp_path, monkeypatch):
    """A results-cache record under an import's key that does not hold a topology (another version's, or one over
    the node limit) is read as no record: the link is refused in one line, nothing raises past it."""
    import pytest

    from solvers.results_cache import ResultsCache
    from studio import design
    from topologies import TopologyError

    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", str(tmp_path / "cache"))
    design._HELD.clear()
    store = ResultsCache.default()
    for i, record in enumerate([{"name": "x.xml", "topology": {"nodes": "not a list"}},
                                {"name": "x.xml", "topology": ["a", "list"]}, {"name": 7}]):
        digest = f"{i:064x}"
        assert store.put_record(design.RECORD_PREFIX + digest, record)
        with pytest.raises(TopologyError, match="is not held here"):
            design.held_import(design.IMPORT_PREFIX + digest)
