"""MSCCL++ execution plans: exported plans pass the executor parser's rules and simulate to their collective;
hand-broken plans are rejected for the right reason; the reader refuses what is not a plan."""
import copy
import json

import pytest

from solvers import synthesize
from solvers.export.lower import lower
from solvers.export.mscclpp import (MAX_OPERATION, OP_NAMES, PlanError, check_plan, export_plan, parse_plan,
                                    plan_json, to_plan)
from solvers.export.program import XmlError
from topologies import load


def _algo(expr, builder, collective, **kwargs):
    topo = load(expr)
    return lower(topo, synthesize(topo, builder, collective).schedule, **kwargs)


@pytest.fixture(scope="module")
def ring_allreduce():
    return _algo("ring(8)", "ring", "allreduce")


@pytest.fixture(scope="module")
def small_plan():
    return to_plan(_algo("ring(4)", "ring", "allgather"))


def _ops(plan, name):
    """(rank, tb, op index, op) of every op called ``name``."""
    return [(g["id"], tb["id"], k, op) for g in plan["gpus"] for tb in g["threadblocks"]
            for k, op in enumerate(tb["ops"]) if op["name"] == name]


def _data_signal(plan):
    """The first signal that follows a put (a data signal, not the receiver's "ready")."""
    for g in plan["gpus"]:
        for tb in g["threadblocks"]:
            for k, op in enumerate(tb["ops"]):
                if op["name"] == "signal" and k >= 2 and tb["ops"][k - 2]["name"] == "put":
                    return g["id"], tb["id"], k
    raise AssertionError("no data signal")


def _data_wait(plan):
    """The first wait that is followed by nop and a copy (a receive, not the sender's wait for "ready")."""
    for g in plan["gpus"]:
        for tb in g["threadblocks"]:
            for k, op in enumerate(tb["ops"][:-2]):
                if op["name"] == "wait" and tb["ops"][k + 2]["name"] in ("copy", "re"):
                    return g["id"], tb["id"], k
    raise AssertionError("no data wait")


def _check(plan):
    return check_plan(json.dumps(plan))


# ------------------------------------------------------------------------------------------------ exports pass
def test_ring_allreduce_8_ranks_passes(ring_allreduce):
    text = plan_json(ring_allreduce)
    report = check_plan(text)
    assert report.ok, report.first
    assert report.ngpus == 8 and len(report.threadblocks) == 8
    assert report.max_ops <= MAX_OPERATION
    plan = parse_plan(text)
    assert plan["collective"] == "allreduce" and plan["protocol"] == "Simple" and plan["inplace"] is True
    assert {op["name"] for g in plan["gpus"] for tb in g["threadblocks"] for op in tb["ops"]} <= OP_NAMES
    # both buffers carry the collective's chunk count (the executor takes sizes modulo them)
    assert all(g["input_chunks"] == g["output_chunks"] == 8 for g in plan["gpus"])
    # the MSCCL threadblocks are longer than 64 ops here: they were cut into semaphore-chained segments
    assert any(tb["ops"][0]["name"] == "sem_acquire" for g in plan["gpus"] for tb in g["threadblocks"])


def test_bfb_allgather_gkautz_2_16_passes():
    plan = to_plan(_algo("gkautz(2,16)", "bfb", "allgather"))
    report = check_plan(plan_json_of(plan))
    assert report.ok, report.first
    assert report.ngpus == 16 and report.max_ops <= MAX_OPERATION
    assert plan["collective"] == "allgather"
    assert all(g["input_chunks"] * 16 == g["output_chunks"] for g in plan["gpus"])


def plan_json_of(plan):
    return json.dumps(plan, sort_keys=True)


@pytest.mark.parametrize("expr, builder", [("ring(4)", "ring"), ("torus(3,3)", "bfb"), ("hypercube(3)", "bfb")])
@pytest.mark.parametrize("collective, in_place", [("reduce_scatter", False), ("reduce_scatter", True),
                                                  ("allgather", True), ("allgather", False),
                                                  ("allreduce", True), ("allreduce", False)])
def test_small_collectives_pass(expr, builder, collective, in_place):
    plan = to_plan(_algo(expr, builder, collective, in_place=in_place))
    assert plan["inplace"] is in_place
    report = _check(plan)
    assert report.ok, report.first


def test_alltoall_with_relays_passes():
    from solvers.directconnect.direct_alltoall import direct_alltoall

    topo = load("torus(3,3)")
    algo = lower(topo, direct_alltoall(topo))
    assert any(g.s_chunks for g in algo.gpus)          # relayed pieces wait in the program's own scratch
    plan = to_plan(algo)
    assert plan["collective"] == "alltoall" and plan["inplace"] is False
    report = _check(plan)
    assert report.ok, report.first


def test_plan_text_is_deterministic_and_reads_back(ring_allreduce):
    text = plan_json(ring_allreduce)
    assert text == plan_json(ring_allreduce)
    assert parse_plan(text) == json.loads(json.dumps(to_plan(ring_allreduce)))
    assert check_plan(parse_plan(text)).ok          # a parsed dict is accepted as well


def test_mapping_shape(small_plan):
    """Memory puts name no channel (as the DSL writes them), both ends list a link's channel in the same order,
    and every receive lands in a scratch slot of its own."""
    plan = small_plan
    assert all("channel_ids" not in op and op["dst_buff"][0]["buffer_id"] >= 0 for _, _, _, op in _ops(plan, "put"))
    for g in plan["gpus"]:
        peers = [p for ch in g["channels"] for p in ch["connected_to"]]
        for p in set(peers):
            back = [q for ch in plan["gpus"][p]["channels"] for q in ch["connected_to"]]
            assert peers.count(p) == back.count(g["id"])
    slots = [(op_rank, op["dst_buff"][0]["index"]) for op_rank, _, _, op in _ops(plan, "put")]
    remote_rank = {}
    for g in plan["gpus"]:
        remote_rank[g["id"]] = [rb["rank"] for rb in g["remote_buffers"]]
    landed = [(remote_rank[r][0], slot) for r, slot in slots]
    assert len(landed) == len(set(landed))


def test_export_plan_round_trip():
    topo = load("ring(4)")
    text, report = export_plan(topo, synthesize(topo, "ring", "allreduce").schedule)
    assert report.ok and report.ngpus == 4 and parse_plan(text)["collective"] == "allreduce"


def test_to_plan_refuses_unmatched_programs():
    algo = _algo("ring(4)", "ring", "allgather")
    tb = next(t for t in algo.gpus[1].tbs if t.recv >= 0)
    tb.steps.pop()
    with pytest.raises(PlanError, match="receives"):
        to_plan(algo)
    algo = _algo("ring(4)", "ring", "allgather")
    algo.coll = "broadcast"
    with pytest.raises(PlanError, match="broadcast"):
        to_plan(algo)


# ------------------------------------------------------------------------------------------------ mutations
def test_dropped_wait_is_a_race(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_wait(plan)
    del plan["gpus"][r]["threadblocks"][t]["ops"][k]
    report = _check(plan)
    assert not report.ok and report.first.startswith("race:") and f"gpu {r} tb {t}" in report.first


def test_ready_handshake_guards_the_next_launch(small_plan):
    """Without the receiver's "ready" signal (and the sender's wait for it) one launch is still right, but the
    next launch's puts can overwrite slots the previous launch is still reading: the second run reports it."""
    plan = copy.deepcopy(small_plan)
    for g in plan["gpus"]:
        for tb in g["threadblocks"]:
            ops = tb["ops"]
            if ops[0]["name"] == "signal":                     # the receiver's ready signal
                del ops[0]
            k = next((k for k, op in enumerate(ops) if op["name"] == "put"), None)
            if k is not None and ops[k - 2]["name"] == "wait":  # the sender's wait for it, and its nop
                del ops[k - 2:k]
    report = _check(plan)
    assert not report.ok and report.first.startswith("second launch: race:"), report.first


def test_dropped_signal_is_a_deadlock(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_signal(plan)
    del plan["gpus"][r]["threadblocks"][t]["ops"][k]
    report = _check(plan)
    assert not report.ok and report.first.startswith("deadlock:") and "never comes" in report.first


def test_dropped_put_breaks_the_postcondition(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k, _ = _ops(plan, "put")[0]
    del plan["gpus"][r]["threadblocks"][t]["ops"][k]
    report = _check(plan)
    assert not report.ok and "chunk" in report.first and ("empty" in report.first or "holds" in report.first)


def test_dropped_semaphore_release_is_a_deadlock():
    plan = to_plan(_algo("ring(4)", "ring", "reduce_scatter"))
    r, t, k, _ = _ops(plan, "sem_release")[0]
    del plan["gpus"][r]["threadblocks"][t]["ops"][k]
    report = _check(plan)
    assert not report.ok and "deadlock" in report.first and "semaphore" in report.first


def test_dropped_nop_before_signal_is_caught(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_signal(plan)
    assert plan["gpus"][r]["threadblocks"][t]["ops"][k - 1] == {"name": "nop"}
    del plan["gpus"][r]["threadblocks"][t]["ops"][k - 1]
    report = _check(plan)
    assert not report.ok and "only thread 0 signals" in report.first


def test_extra_signal_is_reported(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_signal(plan)
    ops = plan["gpus"][r]["threadblocks"][t]["ops"]
    ops.append(dict(ops[k]))                       # one signal more than the peer waits for, after the last put
    report = _check(plan)
    assert not report.ok and "1 more time(s) than" in report.first
    # the same extra signal early lets a wait end before its data is there
    plan = copy.deepcopy(small_plan)
    ops = plan["gpus"][r]["threadblocks"][t]["ops"]
    ops.insert(k + 1, dict(ops[k]))
    assert _check(plan).first.startswith("race:")


def test_wrong_op_channel_index(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_signal(plan)
    plan["gpus"][r]["threadblocks"][t]["ops"][k]["channel_ids"] = [5]
    report = _check(plan)
    assert not report.ok and "channel id 5 is not one of the threadblock's 1 memory channel(s)" in report.first


def test_wrong_threadblock_channel_index(small_plan):
    plan = copy.deepcopy(small_plan)
    plan["gpus"][0]["threadblocks"][0]["channels"][0]["channel_ids"] = [99]
    report = _check(plan)
    assert not report.ok and "memory channel id 99 is out of range" in report.first


def test_channel_type_must_match_the_threadblock_channels(small_plan):
    plan = copy.deepcopy(small_plan)
    r, t, k = _data_signal(plan)
    plan["gpus"][r]["threadblocks"][t]["ops"][k]["channel_type"] = "port"
    report = _check(plan)
    assert not report.ok and "threadblock's 0 port channel(s)" in report.first


def test_unknown_op_type(small_plan):
    plan = copy.deepcopy(small_plan)
    plan["gpus"][1]["threadblocks"][0]["ops"][0]["name"] = "send"
    report = _check(plan)
    assert not report.ok and "unknown operation type 'send'" in report.first


def test_peer_that_is_not_another_rank(small_plan):
    plan = copy.deepcopy(small_plan)
    plan["gpus"][2]["channels"][0]["connected_to"][0] = 2
    report = _check(plan)
    assert not report.ok and "connected_to 2 is not another rank" in report.first
    plan = copy.deepcopy(small_plan)
    plan["gpus"][1]["remote_buffers"][0]["rank"] = 7
    report = _check(plan)
    assert not report.ok and "rank 7 is not another rank" in report.first


def test_wrong_peer_breaks_the_pairing(small_plan):
    """A channel pointed at another (valid) rank pairs with nothing there: its waits never end."""
    plan = copy.deepcopy(small_plan)
    chans = plan["gpus"][0]["channels"][0]["connected_to"]
    others = [p for p in range(4) if p != 0 and p not in chans]
    chans[0] = others[0]
    report = _check(plan)
    assert not report.ok and ("deadlock" in report.first or "more time(s) than" in report.first)


def test_missing_keys(small_plan):
    plan = copy.deepcopy(small_plan)
    del plan["gpus"][0]["scratch_chunks"]
    report = _check(plan)
    assert not report.ok and report.first == 'gpu 0: missing key "scratch_chunks"'
    plan = copy.deepcopy(small_plan)
    del plan["inplace"]
    assert _check(plan).first.startswith('missing key "inplace"')
    plan = copy.deepcopy(small_plan)
    plan["inplace"] = 1
    assert _check(plan).first == '"inplace" must be a JSON bool, not integer'


def test_ids_buffers_and_limits(small_plan):
    plan = copy.deepcopy(small_plan)
    plan["gpus"][1]["id"] = 0
    assert "GPU rank does not match" in _check(plan).first
    plan = copy.deepcopy(small_plan)
    plan["gpus"][0]["input_chunks"] = 0
    assert "checkMessageSize" in _check(plan).first
    plan = copy.deepcopy(small_plan)
    r, t, k, op = _ops(plan, "copy")[0]
    op["src_buff"][0]["type"] = "x"
    assert "names no buffer" in _check(plan).first
    plan = copy.deepcopy(small_plan)
    op = _ops(plan, "copy")[0][3]
    op["dst_buff"][0]["index"] = 40
    assert "outside its 4 chunk(s)" in _check(plan).first
    plan = copy.deepcopy(small_plan)
    plan["gpus"][0]["threadblocks"][0]["ops"].extend({"name": "nop"} for _ in range(MAX_OPERATION))
    assert "MAX_OPERATION=64" in _check(plan).first
    plan = copy.deepcopy(small_plan)
    plan["gpus"][0]["threadblocks"][0]["id"] = 5
    assert "ids must be 0, 1, 2" in _check(plan).first


def test_older_format_is_named():
    old = {"name": "allreduce_pairs", "collective": "allreduce", "protocol": "Simple", "inplace": True,
           "gpus": [{"id": 0, "inputChunks": 8, "outputChunks": 0, "scratchChunks": 0, "chunkGroups": 4,
                     "threadblocks": [], "channels": [{"srcbuff": "i", "dstbuff": "i", "type": "sm",
                                                       "connectedTo": [1]}]}]}
    report = _check(old)
    assert not report.ok and "older plan format" in report.first


def test_out_of_place_plan_must_not_write_its_input():
    plan = to_plan(_algo("ring(4)", "ring", "allreduce", in_place=False))
    op = _ops(plan, "copy")[0][3]
    op["dst_buff"][0]["type"] = "i"
    report = _check(plan)
    assert not report.ok and "writes the input buffer" in report.first


def test_unsupported_ops_are_not_passed(small_plan):
    plan = copy.deepcopy(small_plan)
    plan["gpus"][0]["threadblocks"][0]["ops"].insert(0, {"name": "glres"})
    report = _check(plan)
    assert not report.ok and "not simulated" in report.first


# ------------------------------------------------------------------------------------------------ reading
@pytest.mark.parametrize("text, reason", [
    ('{"name": "x", ', "not JSON"),
    ("[1, 2]", "a plan is a JSON object"),
    ('{"a": NaN}', "NaN is not a JSON number"),
    (b"\xff\xfe", "not UTF-8"),
    ("[" * 100000 + "]" * 100000, "not JSON"),
])
def test_malformed_text(text, reason):
    with pytest.raises(PlanError, match=reason) as exc:
        parse_plan(text)
    assert isinstance(exc.value, (ValueError, XmlError)) and "\n" not in str(exc.value)
    report = check_plan(text)
    assert not report.ok and reason in report.first


def test_size_cap(monkeypatch, small_plan):
    import solvers.export.mscclpp.reader as mod

    monkeypatch.setattr(mod, "MAX_PLAN_BYTES", 100)
    with pytest.raises(PlanError, match="over the 100 bytes"):
        parse_plan(json.dumps(small_plan))


@pytest.mark.parametrize("plan", [
    {"name": "x", "collective": "allgather", "protocol": "Simple", "inplace": True, "gpus": [1, "a"]},
    {"name": "x", "collective": "allgather", "protocol": "Simple", "inplace": True,
     "gpus": [{"id": 0, "input_chunks": 1, "output_chunks": 1, "scratch_chunks": 0, "channels": {},
               "remote_buffers": [None], "threadblocks": [{"id": 0, "ops": [None, {"name": 3}], "channels": 5}]}]},
    {"name": "x", "collective": "allgather", "protocol": "Simple", "inplace": True,
     "gpus": [{"id": 0, "input_chunks": 1, "output_chunks": 1, "scratch_chunks": 0, "channels": [],
               "remote_buffers": [], "threadblocks": [{"id": 0, "channels": [], "ops": [
                   {"name": "put", "src_buff": [{"index": "a"}], "dst_buff": "b"},
                   {"name": "barrier", "barrier_id": 99}, {"name": "re", "src_buff": [{"type": "i", "index": 0,
                                                                                       "size": 1}]},
                   {"name": ["x"], "channel_type": {"a": 1}}, {"name": "copy", "src_buff": [{"type": ["i"]}]}]}]}]},
])
def test_garbage_never_raises(plan):
    report = check_plan(json.dumps(plan))
    assert not report.ok and report.problems


# ------------------------------------------------------------------------------------------------ hand-written
def _port_allgather(n=3):
    """A DSL-style in-place allgather over port channels: every rank puts-with-signal its shard into each
    peer's output, then waits for every peer."""
    gpus = []
    for r in range(n):
        peers = [p for p in range(n) if p != r]
        ops = [{"name": "pws", "channel_type": "port", "channel_ids": [i],
                "src_buff": [{"type": "o", "index": r, "size": 1}],
                "dst_buff": [{"buffer_id": i, "index": r, "size": 1}]} for i in range(len(peers))]
        ops += [{"name": "nop"}, {"name": "wait", "channel_type": "port", "channel_ids": list(range(len(peers)))},
                {"name": "nop"}]
        gpus.append({"id": r, "input_chunks": 1, "output_chunks": n, "scratch_chunks": 0,
                     "channels": [{"channel_type": "port", "connected_to": peers}],
                     "remote_buffers": [{"rank": p, "type": "o", "access_channel_types": ["port"]} for p in peers],
                     "threadblocks": [{"id": 0, "ops": ops,
                                       "channels": [{"channel_type": "port", "channel_ids": list(range(len(peers)))}],
                                       "remote_buffer_refs": [{"access_channel_type": "port",
                                                               "remote_buffer_ids": list(range(len(peers)))}]}]})
    return {"name": "ag", "collective": "allgather", "protocol": "Simple", "inplace": True, "gpus": gpus}


def test_hand_written_port_plan_passes_and_its_mutations_fail():
    plan = _port_allgather()
    report = _check(plan)
    assert report.ok, report.first
    bad = copy.deepcopy(plan)                       # the put's channel leads to the other peer
    bad["gpus"][0]["threadblocks"][0]["ops"][0]["channel_ids"] = [1]
    assert "must lead to the rank that owns its destination" in _check(bad).first
    bad = copy.deepcopy(plan)                       # a memory-channel pws does not signal (the kernel ignores it)
    for g in bad["gpus"]:
        g["channels"][0]["channel_type"] = "memory"
        g["remote_buffers"] = [dict(rb, access_channel_types=["memory"]) for rb in g["remote_buffers"]]
        tb = g["threadblocks"][0]
        tb["channels"][0]["channel_type"] = "memory"
        tb["remote_buffer_refs"][0]["access_channel_type"] = "memory"
        for op in tb["ops"]:
            if "channel_type" in op:
                op["channel_type"] = "memory"
    assert _check(bad).first.startswith("deadlock:")
    bad = copy.deepcopy(plan)                       # an allgather that forgets rank 2's shard to rank 0
    del bad["gpus"][2]["threadblocks"][0]["ops"][0]
    assert not _check(bad).ok


def test_cli_writes_and_checks_plans(tmp_path, capsys):
    from studio.cli import main

    out = tmp_path / "ring8.json"
    assert main(["export", "ring(8)", "--algo", "ring", "--collective", "allreduce", "--format", "mscclpp",
                 "-o", str(out)]) == 0
    assert "validated and simulated" in capsys.readouterr().err
    assert main(["check-plan", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ranks"] == 8
    plan = json.loads(out.read_text())
    plan["gpus"][0]["threadblocks"][0]["ops"].pop()          # a dropped op is caught from the command line too
    out.write_text(json.dumps(plan))
    assert main(["check-plan", str(out)]) == 1
    assert "rejected:" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"gpus": [')
    assert main(["check-plan", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
