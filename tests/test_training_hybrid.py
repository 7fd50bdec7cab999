"""Tensor parallel inside a box, data parallel across boxes (``tp-dp``, solvers.training.hybrid; issue 57)."""
from __future__ import annotations

import functools
import subprocess
import sys

import pytest

from solvers.core.verify import verify
from solvers.runtime import Workload
from solvers.training import BUCKETS, PARALLEL, TrainingError, build_layers, placement, preset, simulate_iteration
from solvers.training.hybrid import GroupPricer
from topologies import parse_topology

W = Workload(1.0, "uniform", 10.0, 12.5)


@functools.cache
def fabric(boxes: int):
    return parse_topology(f"dgx_a100(boxes={boxes})")


@functools.cache
def run(model: str, boxes: int, parallel: str = "tp-dp"):
    return simulate_iteration(model, fabric(boxes), parallel, workload=W, cache=None)


@functools.cache
def pricer(boxes: int) -> GroupPricer:
    topo = fabric(boxes)
    return GroupPricer(topo, placement(topo), W.execution)


def test_offered():
    assert "tp-dp" in PARALLEL


@pytest.mark.parametrize("model,boxes", [("gpt2-small", 2), ("gpt2-small", 4), ("switch-base-128", 2)])
def test_breakdown_adds_up_exactly(model, boxes):
    it = run(model, boxes)
    assert it.parallel == "tp-dp" and it.nodes == 8 * boxes
    assert it.compute_ms + it.allreduce_exposed_ms + it.alltoall_ms == it.iteration_ms
    assert it.alltoall_ms == 0
    assert max(e.end_ms for e in it.timeline) == it.iteration_ms
    assert it.bucket_bytes in BUCKETS.values() and len(it.buckets_tried) == 4
    assert it.iteration_ms == min(t for _, t in it.buckets_tried)
    # the same global batch as data parallelism on the same GPUs: the same compute per GPU
    dp = run(model, boxes, "dp")
    assert it.compute_ms == pytest.approx(dp.compute_ms, rel=1e-6)
    # every gradient byte of a replica's 1/8 share is allreduced once across the boxes
    spec = preset(model)
    layers = build_layers(spec, boxes, expert_parallel=False) if not spec.per_gpu_batch else \
        build_layers(spec, boxes)
    grads = sum(c.bytes * c.count for c in it.collectives if c.collective == "dp allreduce")
    assert grads == pytest.approx(sum(l.param_bytes for l in layers) / 8, rel=1e-9)
    # one TP allreduce after each layer with activations, forward and backward
    tp = sum(c.count for c in it.collectives if c.collective == "tp allreduce")
    assert tp == 2 * sum(1 for l in layers if l.activation_bytes > 0)
    assert any("placement" in n for n in it.notes)


@pytest.mark.parametrize("nbytes", [2 ** 20, 10 * 2 ** 20, 100 * 2 ** 20])
def test_dp_groups_together_between_alone_and_one_after_another(nbytes):
    p = pricer(2)
    together, _ = p.dp_us(nbytes)
    alone = p.dp_alone_us(nbytes)
    assert len(alone) == 8
    assert max(alone) * (1 - 1e-9) <= together <= sum(alone) * (1 + 1e-9)


def test_groups_stay_in_their_place():
    topo = fabric(2)
    p = pricer(2)
    box = set(p.place.boxes[0]) | {topo.index("b0.nvs")}
    assert p.tp_scheds
    for s in p.tp_scheds:
        assert s.group == tuple(sorted(p.place.boxes[0])) and verify(topo, s).ok
        for t in s.transfers:
            link = topo.links[t.link]
            assert link.src in box and link.dst in box, (s.algo, topo.names[link.src], topo.names[link.dst])
    for r, cands in enumerate(p.dp_scheds):
        rail = {topo.index(f"b{b}.g{r}") for b in range(2)} | {topo.index(f"b{b}.nic{r}") for b in range(2)} \
            | {topo.index(f"ib{r % 2}")}
        for s in cands:
            assert verify(topo, s).ok
            assert {topo.links[t.link].src for t in s.transfers} | {topo.links[t.link].dst for t in s.transfers} \
                <= rail
    assert not p.shared


def test_smaller_tp_degree():
    topo = fabric(2)
    place = placement(topo, 4)
    assert len(place.tp_groups) == 4 and len(place.dp_groups) == 4
    assert all(len(g) == 4 for g in place.dp_groups)
    it = simulate_iteration("gpt2-small", topo, "tp-dp", workload=W, bucket="10MB", tp_degree=4, cache=None)
    assert it.compute_ms + it.allreduce_exposed_ms + it.alltoall_ms == it.iteration_ms


@pytest.mark.parametrize("design,tp,words", [
    ("ring(8)", None, "made of boxes"),
    ("dgx_a100(boxes=1)", None, "two or more boxes"),
    ("fail(dgx_a100(boxes=2),gpus=[3])", None, "equal size"),
    ("dgx_a100(boxes=2)", 3, "divisor"),
])
def test_refusals_are_one_line(design, tp, words):
    with pytest.raises(TrainingError) as exc:
        simulate_iteration("gpt2-small", design, "tp-dp", workload=W, tp_degree=tp, cache=None)
    text = str(exc.value)
    assert words in text and "\n" not in text and len(text) < 200


def test_cli():
    out = subprocess.run([sys.executable, "-m", "studio", "train", "gpt2-small", "--topo", "ring(8)", "--parallel",
                          "tp-dp"], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and "made of boxes" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_cli_runs_tp_dp_on_four_boxes():
    import json

    out = subprocess.run([sys.executable, "-m", "studio", "train", "gpt2-small", "--topo", "dgx_a100(boxes=4)",
                          "--parallel", "tp-dp", "--bucket", "10MB", "--json"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)["results"][0]
    assert r["parallel"] == "tp-dp" and r["nodes"] == 32
    assert r["compute_ms"] + r["allreduce_exposed_ms"] + r["alltoall_ms"] == r["iteration_ms"]
    assert {c["collective"] for c in r["collectives"]} == {"tp allreduce", "dp allreduce"}


# ------------------------------------------------------------------------------------------------ tp-pp
@pytest.mark.parametrize("model,boxes", [("gpt2-small", 2), ("switch-base-128", 4)])
def test_tp_pp_breakdown_and_counts(model, boxes):
    it = run(model, boxes, "tp-pp")
    assert it.compute_ms + it.allreduce_exposed_ms + it.alltoall_ms == it.iteration_ms
    assert max(e.end_ms for e in it.timeline) == it.iteration_ms and it.bucket_bytes is None
    m = int(next(n for n in it.notes if n.startswith("PP:")).split(", ")[1].split()[0])
    layers = build_layers(preset(model), 1, expert_parallel=False)
    tp = sum(c.count for c in it.collectives if c.collective == "tp allreduce")
    assert tp == 2 * m * sum(1 for l in layers if l.activation_bytes > 0)
    sends = [c for c in it.collectives if c.collective.startswith("pp send")]
    assert len(sends) == 2 * (boxes - 1) and all(c.count == m for c in sends)
    # one replica with data parallelism's global batch: at least dp's compute per GPU, the pipeline's bubble on top
    assert it.compute_ms >= run(model, boxes, "dp").compute_ms * (1 - 1e-9)


def test_tp_pp_sends_stay_on_their_rail_and_share_fairly():
    topo = fabric(2)
    p = pricer(2)
    for backward in (False, True):
        for r, cands in enumerate(p.send_scheds(0, backward)):
            rail = {topo.index(f"b{b}.g{r}") for b in range(2)} | {topo.index(f"b{b}.nic{r}") for b in range(2)} \
                | {topo.index(f"ib{r % 2}")}
            for s in cands:
                assert verify(topo, s).ok and s.root == topo.index(f"b{1 if backward else 0}.g{r}")
                ends = {topo.links[t.link].src for t in s.transfers} | {topo.links[t.link].dst for t in s.transfers}
                assert ends <= rail
    together, _ = p.send_us(0, False, 2 ** 22)
    alone = [min(p._alone(s, 2 ** 22) for s in c) for c in p.send_scheds(0, False)]
    assert max(alone) * (1 - 1e-9) <= together <= sum(alone) * (1 + 1e-9)


def test_tp_pp_refusals():
    with pytest.raises(TrainingError, match="tp-pp makes each box one TP group"):
        simulate_iteration("gpt2-small", fabric(2), "tp-pp", workload=W, tp_degree=4, cache=None)
    with pytest.raises(TrainingError, match="tp-pp needs a design made of boxes"):
        simulate_iteration("gpt2-small", "ring(8)", "tp-pp", workload=W, cache=None)
