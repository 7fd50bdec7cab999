"""The Topology model and its file formats: round trips, parallel links, and validation messages."""
import json
from fractions import Fraction

import pytest

from topologies import Topology, TopologyError
from topologies.families import biring, uniring
from topologies.files import from_graphml, from_json, load, read_topology, to_json, write_topology
from topologies.model import COMPUTE, SWITCH, Link


def test_parallel_links_stay_distinct():
    t = uniring(3, 4)
    assert len(t.links) == 12
    assert len(t.out_links[0]) == 3 and len({t.links[i].dst for i in t.out_links[0]}) == 1


def test_json_round_trip_keeps_everything():
    t = Topology(("g0", "g1", "sw"), (COMPUTE, COMPUTE, SWITCH),
                 (Link(0, 2, Fraction(25), Fraction(1, 2)), Link(2, 1, Fraction(25)), Link(2, 1, Fraction(25)),
                  Link(1, 2, Fraction(12)), Link(2, 0, Fraction(1, 10))), name="tiny")
    back = from_json(to_json(t))
    assert back.names == t.names and back.kinds == t.kinds and back.links == t.links and back.name == "tiny"


def test_graphml_round_trip_keeps_parallel_links_and_kinds(tmp_path):
    t = Topology(("a", "b", "s"), (COMPUTE, COMPUTE, SWITCH),
                 (Link(0, 2, Fraction(5)), Link(0, 2, Fraction(5)), Link(2, 1, Fraction(5)), Link(1, 0)))
    path = tmp_path / "t.graphml"
    write_topology(t, path)
    back = read_topology(path)
    assert back.kinds == t.kinds
    assert sorted((back.names[l.src], back.names[l.dst], l.bandwidth) for l in back.links) == \
        sorted((t.names[l.src], t.names[l.dst], l.bandwidth) for l in t.links)


def test_json_defaults_bandwidth_alpha_and_kind():
    t = from_json(json.dumps({"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"src": "a", "dst": "b"}]}))
    assert t.kinds == (COMPUTE, COMPUTE) and t.links[0].bandwidth == 1 and t.links[0].alpha == 0


@pytest.mark.parametrize("doc, message", [
    ({"nodes": [{"id": "a"}], "links": [{"src": "a", "dst": "zz"}]}, "unknown node 'zz'"),
    ({"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": -3}]}, "bandwidth"),
    ({"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": 0}]}, "positive"),
    ({"nodes": [{"id": "a"}, {"id": "a"}], "links": []}, "duplicate node id 'a'"),
    ({"nodes": [{"id": "a", "kind": "router"}], "links": []}, "unknown kind 'router'"),
    ({"nodes": [{"id": "s", "kind": "switch"}], "links": []}, "at least one compute node"),
    ({"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"src": "a", "dst": "b", "alpha": -1}]}, "negative alpha"),
    ({"nodes": [{"id": "a"}, {"id": "b"}], "links": [{"src": "a", "dst": "b", "bandwidth": "fast"}]}, "number"),
    ({"nodes": [], "links": []}, "non-empty"),
    ([1, 2, 3], "JSON object"),
])
def test_json_validation_names_the_problem(doc, message):
    with pytest.raises(TopologyError, match=message):
        from_json(json.dumps(doc))


def test_malformed_json_and_graphml_are_one_line_errors():
    with pytest.raises(TopologyError, match="not valid JSON") as e:
        from_json('{"nodes": [')
    assert "\n" not in str(e.value)
    with pytest.raises(TopologyError, match="not valid GraphML"):
        from_graphml("<graphml><node id=")
    with pytest.raises(TopologyError, match="DOCTYPE"):
        from_graphml('<!DOCTYPE x [<!ENTITY a "aaaa">]><graphml/>')


def test_file_too_large_is_refused(tmp_path, monkeypatch):
    import topologies.files as files
    path = tmp_path / "big.json"
    path.write_text(to_json(biring(8)))
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(TopologyError, match="above the limit"):
        read_topology(path)


def test_load_takes_files_and_expressions(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(to_json(biring(6)))
    assert load(str(path)).links == biring(6).links
    assert load("biring(6)").links == biring(6).links
    with pytest.raises(TopologyError, match="cannot read"):
        load(str(tmp_path / "missing.json"))


def test_transpose_reverses_links_and_keeps_indices():
    t = uniring(2, 5)
    tt = t.transpose()
    assert all((a.src, a.dst) == (b.dst, b.src) for a, b in zip(t.links, tt.links))
    assert tt.transpose().links == t.links


def test_reverse_link_pairing():
    assert uniring(1, 5).reverse_link is None
    pair = biring(4, 5).reverse_link
    t = biring(4, 5)
    assert pair is not None and len(set(pair)) == len(pair)
    assert all((t.links[pair[i]].src, t.links[pair[i]].dst) == (l.dst, l.src) for i, l in enumerate(t.links))


def test_link_ends_index_every_link_and_cannot_be_written():
    """The shared (src, dst) arrays: one entry per link in link order (parallel links and self-loops kept), made
    once, and read-only so that no caller can change what the others index."""
    topo = Topology(("a", "b", "s"), (COMPUTE, COMPUTE, SWITCH),
                    (Link(0, 2), Link(2, 1), Link(0, 2), Link(1, 1), Link(2, 0)))
    src, dst = topo.link_ends
    assert src.tolist() == [l.src for l in topo.links] == [0, 2, 0, 1, 2]
    assert dst.tolist() == [l.dst for l in topo.links] == [2, 1, 2, 1, 0]
    assert topo.link_ends[0] is src
    with pytest.raises(ValueError):
        src[0] = 1
    empty = Topology(("a",), (COMPUTE,), ())
    assert [len(a) for a in empty.link_ends] == [0, 0]
