"""The training wing (issue 57; the direct-connect paper's App. A.4): the job model, the FLOPs model against public
and hand-computed figures, profiles (and hostile ones), the iteration simulator's exact invariants, the best bucket
against brute force, expert parallelism's collectives and refusals, and the design prices' cache."""
from __future__ import annotations

import os

import pytest

from solvers.results_cache import ResultsCache
from solvers.training import (BUCKETS, TrainingError, build_layers, design_prices, model_presets, parameters,
                              parse_profile, preset, read_profile, simulate_iteration)
from solvers.training.timeline import _caps
from topologies import parse_topology

SMALL = [("gpt2-small", "biring(8)", "dp"), ("resnet50", "torus(4,4)", "dp"), ("vgg16", "biring(8)", "dp"),
         ("switch-base-128", "gkautz(2,16)", "ep"), ("switch-base-128", "torus(4,4)", "dp"),
         ("gpt2-small", "torus(4,4)", "tp"), ("gpt2-medium", "biring(8)", "pp")]


@pytest.fixture(scope="module")
def runs():
    return {key: simulate_iteration(key[0], key[1], key[2], cache=None) for key in SMALL}


# ------------------------------------------------------------------------------------------------ invariants
@pytest.mark.parametrize("key", SMALL)
def test_breakdown_adds_up_exactly(runs, key):
    it = runs[key]
    assert it.compute_ms + it.allreduce_exposed_ms + it.alltoall_ms == it.iteration_ms
    assert max(e.end_ms for e in it.timeline) == it.iteration_ms
    assert it.allreduce_exposed_ms >= 0 and it.compute_ms > 0
    # the compute stream's bars never overlap and add up to compute_ms
    bars = sorted((e.start_ms, e.end_ms) for e in it.timeline if e.stream == "compute")
    assert all(a[1] <= b[0] for a, b in zip(bars, bars[1:]))
    assert sum(e - s for s, e in bars) == it.compute_ms
    # the communication stream runs one collective at a time
    comm = sorted((e.start_ms, e.end_ms) for e in it.timeline if e.stream == "comm")
    assert all(a[1] <= b[0] for a, b in zip(comm, comm[1:]))


@pytest.mark.parametrize("key", [k for k in SMALL if k[2] in ("dp", "ep")])
def test_best_bucket_is_brute_force(runs, key):
    it = runs[key]
    times = {cap: simulate_iteration(key[0], key[1], key[2], bucket=name, cache=None).iteration_ms
             for name, cap in BUCKETS.items()}
    best = min(times.values())
    assert it.iteration_ms == best
    assert it.bucket_bytes == min(cap for cap, t in times.items() if t == best)
    assert dict(it.buckets_tried) == times


def test_alltoall_blocks_compute_and_never_overlaps_allreduce(runs):
    it = runs[("switch-base-128", "gkautz(2,16)", "ep")]
    a2a = [e for e in it.timeline if e.kind == "alltoall"]
    experts = [l for l in build_layers(preset("switch-base-128"), 16) if l.expert]
    assert len(a2a) == 4 * len(experts)                 # before and after each expert layer, forward and backward
    assert sum(e.end_ms - e.start_ms for e in a2a) == it.alltoall_ms
    compute = [e for e in it.timeline if e.stream == "compute"]
    for e in a2a:                                       # no compute runs while an all-to-all does
        assert not any(c.start_ms < e.end_ms and e.start_ms < c.end_ms for c in compute)
    assert {c.priced_by for c in it.collectives if c.collective == "alltoall" and c.count} == {"MCF"}
    shown = [c for c in it.collectives if c.priced_by.startswith("alltoall schedule")]
    assert shown and all(c.count == 0 and c.algo == "direct" for c in shown)


def test_expert_parameters_are_not_allreduced():
    spec = preset("switch-base-128")
    ep = simulate_iteration(spec, "gkautz(2,16)", "ep", bucket="1GB", cache=None)
    dp = simulate_iteration(spec, "gkautz(2,16)", "dp", bucket="1GB", cache=None)
    dense, expert = parameters(spec)
    reduced = lambda it: sum(e.bytes for e in it.timeline if e.kind == "allreduce")  # noqa: E731
    assert reduced(ep) == 2 * dense                                  # BF16: 2 bytes a parameter
    assert reduced(dp) == 2 * (dense + expert)
    assert dp.alltoall_ms == 0 and not any(e.kind == "alltoall" for e in dp.timeline)


def test_trace_ops_depend_only_on_earlier_ops(runs):
    for it in runs.values():
        ops = it.trace_ops()
        assert len(ops) == len(it.timeline)
        for i, op in enumerate(ops):
            assert all(0 <= d < i for d in op["deps"])
            assert op["kind"] in ("compute", "allreduce", "alltoall")
            assert (op["ns"] >= 0) if op["kind"] == "compute" else (op["bytes"] > 0)


def test_as_dict_is_json(runs):
    import json

    d = runs[("switch-base-128", "gkautz(2,16)", "ep")].as_dict()
    json.dumps(d, allow_nan=False)
    assert {"iteration_ms", "compute_ms", "allreduce_exposed_ms", "alltoall_ms", "bucket_bytes", "collectives",
            "timeline"} <= set(d)


# ------------------------------------------------------------------------------------------------ the FLOPs model
def test_public_parameter_counts():
    # torchvision's published parameter counts (exact) and GMACs an image, and the papers' totals
    for name, params, gmacs in (("vgg16", 138_357_544, 15.47), ("vgg19", 143_667_240, 19.63),
                                ("resnet50", 25_557_032, 4.09), ("resnet101", 44_549_160, 7.80)):
        assert parameters(preset(name))[0] == params, name
        assert round(sum(row[2] for row in preset(name).cnn) / 1e9, 2) == gmacs, name
    for name, published, tol in (("switch-base-256", 14.7e9, 0.02), ("switch-c-2048", 1.571e12, 0.01),
                                 ("switch-base-128", 7.4e9, 0.03), ("gpt2-small", 124e6, 0.01),
                                 ("gpt2-medium", 355e6, 0.01), ("gpt2-large", 774e6, 0.01)):
        assert abs(sum(parameters(preset(name))) - published) <= tol * published, name


def test_flops_of_one_layer_by_hand():
    layers = {l.name: l for l in build_layers(preset("gpt2-small"), 8, "A100", 0.5)}
    attn = layers["h0.attn"]
    # 8 sequences x 1024 tokens; q, k, v, o: 4 x 768 x 768 weights; scores and values: 4 x 1024 x 768 a token
    assert attn.flops == 2 * 2_359_296 * 8192 + 25_769_803_776 == 64_424_509_440
    assert attn.forward_ms == pytest.approx(64_424_509_440 / (312e12 * 0.5) * 1e3, rel=1e-12)
    assert attn.backward_ms == 2 * attn.forward_ms
    conv = {l.name: l for l in build_layers(preset("vgg16"), 8, "H100", 0.25)}["conv1_1"]
    assert conv.param_bytes == 2 * 1792                 # 3x3x3x64 weights + 64 biases, BF16
    assert conv.flops == 2 * 86_704_128 * 64            # 3x3x3x64 MACs at each of 224x224 pixels, batch 64
    assert conv.forward_ms == pytest.approx(conv.flops / (989e12 * 0.25) * 1e3, rel=1e-12)


def test_switch_expert_layers_are_sharded():
    layers = build_layers(preset("switch-c-2048"), 1024)
    experts = [l for l in layers if l.expert]
    assert len(experts) == 30                                        # every FFN of 15 + 15 blocks
    assert experts[0].param_bytes == 2 * 2 * 2080 * 6144 * 2        # two experts a node, two matrices, BF16
    assert experts[0].tokens == 2 * 512                              # 2048 sequences / 1024 nodes
    assert experts[0].activation_bytes == 2 * 512 * 2080 * 2


# ------------------------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("model, design, why", [
    ("switch-base-128", "torus(4,6)", "whole multiple"),          # 128 experts over 24 nodes
    ("switch-base-128", "gkautz(2,256)", "whole multiple"),       # fewer experts than nodes
    ("gpt2-small", "biring(8)", "no experts"),
])
def test_ep_refusals(model, design, why):
    with pytest.raises(TrainingError, match=why) as exc:
        simulate_iteration(model, design, "ep", cache=None)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("kw, why", [({"gpu": "V100"}, "unknown GPU"), ({"efficiency": 0.0}, "efficiency"),
                                     ({"efficiency": 1.5}, "efficiency"), ({"parallel": "zp"}, "parallelism"),
                                     ({"bucket": "3 parsecs"}, "bucket"), ({"bucket": -1.0}, "bucket")])
def test_bad_requests(kw, why):
    with pytest.raises(TrainingError, match=why):
        simulate_iteration(kw.pop("model", "gpt2-small"), "biring(8)", cache=None, **kw)


def test_unknown_model_and_bucket_sizes():
    with pytest.raises(TrainingError, match="unknown model"):
        preset("gpt-5")
    assert _caps("10MB") == [10 * 2 ** 20] and _caps(3e6) == [3e6] and len(_caps("best")) == 4
    assert set(model_presets()) >= {"switch-base-256", "switch-c-2048", "gpt2-small", "resnet50", "vgg16"}


# ------------------------------------------------------------------------------------------------ profiles
GOOD = """# name, times in ms, bytes
name,forward_ms,backward_ms,param_bytes,activation_bytes,expert,tokens
embed,0.1,0.2,1000000,4096,0,0
moe,1.5,3.0,8000000,65536,1,16
head,0.5,1.0,2000000,4096,false,
"""


def test_profile_parses_and_runs(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text(GOOD)
    layers = read_profile(path)
    assert [l.name for l in layers] == ["embed", "moe", "head"]
    assert layers[1].expert and layers[1].tokens == 16 and not layers[2].expert
    it = simulate_iteration("mine", "gkautz(2,16)", "ep", profile=str(path), cache=None)
    assert abs(it.compute_ms - 6.3) <= 6 * 2 ** -20            # each bar a whole multiple of 2^-20 ms
    assert it.compute_ms + it.allreduce_exposed_ms + it.alltoall_ms == it.iteration_ms
    assert sum(e.bytes for e in it.timeline if e.kind == "allreduce") == 3_000_000    # the expert layer's kept


@pytest.mark.parametrize("text, why", [
    (GOOD.replace("1.5,3.0", "-1.5,3.0"), "forward_ms must be a finite number of at least 0"),
    (GOOD.replace("1.5,3.0", "nan,3.0"), "forward_ms must be a finite number"),
    (GOOD.replace("1.5,3.0", "1e999,3.0"), "forward_ms"),
    (GOOD.replace(",activation_bytes", ""), "lacks the column 'activation_bytes'"),
    (GOOD.replace("expert,tokens", "expert,tokens,colour"), "fields where the header has|unknown column"),
    (GOOD.replace("1,16", "2,16"), "expert must be 0 or 1"),
    (GOOD.replace("1,16", "1,0"), "routed tokens"),
    ("name,forward_ms,backward_ms,param_bytes,activation_bytes\n", "no layers"),
    ("", "no header"),
])
def test_hostile_profiles_are_one_line(text, why):
    with pytest.raises(TrainingError, match=why) as exc:
        parse_profile(text, "p.csv")
    assert "\n" not in str(exc.value)


def test_hostile_profile_files(tmp_path):
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * (10 * 2 ** 20))
    with pytest.raises(TrainingError, match="above the limit"):
        read_profile(big)
    link = tmp_path / "link.csv"
    good = tmp_path / "good.csv"
    good.write_text(GOOD)
    link.symlink_to(good)
    with pytest.raises(TrainingError, match="symbolic link"):
        read_profile(link)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    with pytest.raises(TrainingError, match="FIFO"):
        read_profile(fifo)
    with pytest.raises(TrainingError, match="cannot read"):
        read_profile(tmp_path / "missing.csv")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TrainingError, match="UTF-8"):
        read_profile(tmp_path / "bin.csv")


# ------------------------------------------------------------------------------------------------ the prices' cache
def test_design_prices_come_back_from_the_cache(tmp_path, monkeypatch):
    from solvers.training import pricing

    store = ResultsCache(tmp_path / "cache")
    os.chmod(tmp_path, 0o700)
    topo = parse_topology("torus(4,4)")
    monkeypatch.setattr(pricing, "_MEMO", {})
    first = design_prices(topo, cache=store)
    assert not first.cached and first.mcf is not None and first.allreduce
    monkeypatch.setattr(pricing, "_MEMO", {})
    monkeypatch.setattr(pricing, "_candidates", lambda *a: pytest.fail("solved again"))
    second = design_prices(topo, cache=store)
    assert second.cached and second.allreduce == first.allreduce and second.mcf == first.mcf
    # the cheapest verified schedule at each size, by the step model
    for m in (1e3, 1e9):
        us, algo = second.allreduce_us(m, 10.0, 12.5)
        assert us == pytest.approx(min(10.0 * c.steps + c.tb_factor * m / 12.5e3 for c in first.allreduce), rel=1e-12)


@pytest.mark.parametrize("expr", ["biring(8)", "torus(4,4)"])
def test_alltoall_schedule_row_is_never_faster_than_the_mcf(expr):
    """The shown all-to-all schedule (every piece on a shortest path) sends N x what one node sends, priced as the
    runtime model prices it; LP (3)'s rate is the best any routing can do, so the schedule's time is at least the
    MCF's (it was N times too low before: 1.16 ms against the MCF's 7.17 ms on biring(8))."""
    from solvers.directconnect.direct_alltoall import direct_alltoall
    from solvers.runtime import Execution, Model

    topo = parse_topology(expr)
    prices = design_prices(topo, alltoall=True)
    per_node = 42.75 * 2 ** 20
    shown = prices.alltoall_schedule_us(per_node, 10.0, 12.5)
    assert shown >= prices.alltoall_us(per_node, 12.5)
    one_slice = Model(topo, direct_alltoall(topo), Execution.alpha_beta(10.0, 12.5, slices=1)).run(
        per_node * topo.n).time_us
    assert shown == pytest.approx(one_slice, rel=1e-9)


def test_tensor_parallel_divides_the_global_batch_once():
    """Under tp one replica runs the whole global batch split over the N GPUs, so each GPU computes what it
    computes under dp (the batch split N ways); the global batch was divided by N twice before."""
    topo = parse_topology("torus(4,4)")
    dp = simulate_iteration("switch-base-128", topo, "dp")
    tp = simulate_iteration("switch-base-128", topo, "tp")
    assert tp.compute_ms == pytest.approx(dp.compute_ms, rel=1e-9)


def test_an_iteration_too_long_to_add_exactly_is_one_line():
    """A profile of 1e18 ms layers (the reader takes numbers that large) was an AssertionError with a traceback."""
    layers = parse_profile("name,forward_ms,backward_ms,param_bytes,activation_bytes\na,3e17,1e18,1000,1\n"
                           "b,1e18,0.001,1000,1000\n")
    with pytest.raises(TrainingError, match="more than this simulator adds exactly"):
        simulate_iteration("profile", parse_topology("ring(8)"), "dp", profile=layers)


def test_tensor_parallel_never_allreduces_the_logits():
    """The output layer is vocabulary-parallel under tp (as tp-dp's): what is allreduced around it is the hidden
    states' size, not tokens x vocabulary (6 GB of logits for GPT-2 small before)."""
    it = simulate_iteration("gpt2-small", parse_topology("ring(8)"), "tp")
    sizes = [e.bytes for e in it.timeline if e.kind == "tp"]
    hidden = [e.bytes for e in it.timeline if e.kind == "tp" and e.label.startswith("h0.")]
    assert sizes and max(sizes) == max(hidden)


def test_a_model_that_does_not_fit_is_noted():
    """Switch-C's 1.57T parameters replicated on 8 GPUs need about 25 TB of model state a GPU: timed, with a note;
    GPT-2 small fits and has none."""
    ring = parse_topology("ring(8)")
    big = simulate_iteration("switch-c-2048", ring, "dp")
    assert any(n.startswith("memory: the model state alone is 25,1") for n in big.notes)
    assert not any(n.startswith("memory") for n in simulate_iteration("gpt2-small", ring, "dp").notes)
