"""The direct-connect paper's training results (§8.4, Figs. 8 and 9, App. A.4) from this studio's training simulator
(``solvers.training``; see bench/papers/__init__.py for the Spec format). Its rows are the direct-connect paper's
(``paper`` "directconnect", tables "Fig. 8" and "Fig. 9"): bench/papers/directconnect.py appends them to its own.

**Fig. 9** (simulated expert-parallel Switch Transformers, alpha = 10 us, B = 100 Gb/s, d = 4): Switch-Base-256
(14.7B) on 256 nodes and Switch-C (1.571T, 2048 experts) on 1024 nodes, each on Table 7's Pareto designs at that N
(the best = the one with the smallest iteration time, as App. A.4 chooses), ShiftedRing (``shifted_ring(N)``) and the
2-D torus (``torus(16,16)``, ``torus(32,32)``). Ours: every allreduce priced by the design's cheapest verified
schedule (step model), every all-to-all by LP (3)'s MCF rate; compute by the FLOPs model on an A100-SXM-80GB at the
default efficiency 0.5 (the paper measured its layers on that GPU), BF16 parameters and activations, the Switch
paper's batch of 2048 sequences of 512 input and 114 target tokens. The ratios printed in §8.4 are checked within
25 %. The MCF is ``mcf_rate``'s Frank-Wolfe solve stopped at ``MCF_TIME_LIMIT_S`` = 20 s a design, its certified
lower end used (measured brackets: within 1-3 % at N = 256, 1.5-9 % at N = 1024; the ratios moved by less than 1 %
against 120 s solves); every row is slow (the MCF of 13 designs and BFB at 1024 nodes: about 4 minutes in all).

**Fig. 8** is a testbed figure (12 A100-PCIe GPUs, PyTorch DDP over MSCCL). Ours is a Fig. 8-style comparison from
the model, priced with App. A.2's testbed fit (alpha 13.33 us, 1/B = 1.018e-4 us a byte, i.e. B = 9.82 GB/s): each
design runs its own schedule as the paper's baselines do (ShiftedRing its two rings, ``shifted_ring``; DBT NCCL's
double binary tree, ``dbt``; ours BFB on Table 5's design), priced by the runtime model (pipelined over the best
number of slices, as MSCCL's swept pipelining; the schedules are small); models ResNet-50, ResNet-101, VGG-16 and
VGG-19 at batch 64 on 8 nodes (K_{4,4} = ``bipartite(4)``, Table 5's N = 8) and GPT-2 small/medium/large at
batch 8/4/1 on 12 nodes (``circulant(12,[2,3])``, Table 5's N = 12). Improvement = 1 - ours / baseline, averaged
over the models.
"""
from __future__ import annotations

from functools import cache

from bench.papers import Spec

PAPER = "directconnect"
ALPHA_US, GBS = 10.0, 12.5
TESTBED_ALPHA_US, TESTBED_GBS = 13.33, 1.0 / 1.018e-4 / 1e3
MCF_TIME_LIMIT_S = 20.0
MCF_METHOD = "fw"

FIG9 = {
    256: ("switch-base-256", ["debruijn(4,4)", "line(dbjmod(4,2),2)", "line(power(diamond(),2))",
                              "power(dbjmod(2,4),2)"], "torus(16,16)"),
    1024: ("switch-c-2048", ["gkautz(4,1024)", "line(circulant(16,[3,4]),3)", "line(power(diamond(),2),2)",
                             "line(power(dbjmod(2,4),2))", "power(product(uniring(1,4),uniring(1,8)),2)"],
           "torus(32,32)"),
}


@cache
def _topology(expr: str):
    from topologies import parse_topology

    return parse_topology(expr, max_nodes=4096)


def _workload(testbed: bool):
    from solvers.runtime import Workload

    return Workload(1.0, "uniform", TESTBED_ALPHA_US if testbed else ALPHA_US, TESTBED_GBS if testbed else GBS)


@cache
def iteration(model: str, expr: str, parallel: str = "ep", algos: tuple | None = None, testbed: bool = False,
              bucket: str = "best"):
    """One iteration; on the testbed (Fig. 8) allreduces are priced by the runtime model (pipelined, as MSCCL
    runs them), in Fig. 9 by the step model (the paper's alpha-beta model)."""
    from solvers.training import design_prices, simulate_iteration

    topo = _topology(expr)
    try:
        prices = design_prices(topo, algos, alltoall=parallel == "ep", mcf_time_limit=MCF_TIME_LIMIT_S,
                               mcf_method=MCF_METHOD if parallel == "ep" else None)
    except ValueError:              # an MCF without the Frank-Wolfe method: its own default, unlimited
        prices = design_prices(topo, algos, alltoall=parallel == "ep")
    return simulate_iteration(model, topo, parallel, "A100", bucket, workload=_workload(testbed), prices=prices,
                              runtime=testbed)


@cache
def fig9(n: int) -> dict:
    """{"best": Iteration, "shifted_ring": Iteration, "torus": Iteration, "designs": {expr: Iteration}}."""
    model, designs, torus = FIG9[n]
    its = {e: iteration(model, e) for e in designs}
    best = min(its.values(), key=lambda it: it.iteration_ms)
    return {"best": best, "shifted_ring": iteration(model, f"shifted_ring({n})"), "torus": iteration(model, torus),
            "designs": its}


def _ratio(n: int, who: str, what: str) -> float:
    f = fig9(n)
    return getattr(f[who], what) / getattr(f["best"], what)


def _share(n: int, who: str) -> float:
    return 100.0 * fig9(n)[who].alltoall_share


SPECS: list[Spec] = []


def add(table, row, paper, compute, tolerance=0.25, **kw) -> None:
    SPECS.append(Spec(PAPER, table, row, paper, compute, tolerance, **kw))


def _rows_9() -> None:
    for n, (sr_a2a, sr_it, t_a2a, t_it) in {256: (8.0, 4.0, 2.0, 1.5), 1024: (27.0, 9.0, 3.3, 1.7)}.items():
        model = FIG9[n][0]
        add("Fig. 9", f"N={n} {model} ShiftedRing/best all-to-all", sr_a2a,
            lambda n=n: _ratio(n, "shifted_ring", "alltoall_ms"), slow=True)
        add("Fig. 9", f"N={n} {model} ShiftedRing/best iteration", sr_it,
            lambda n=n: _ratio(n, "shifted_ring", "iteration_ms"), slow=True)
        add("Fig. 9", f"N={n} {model} torus/best all-to-all", t_a2a, lambda n=n: _ratio(n, "torus", "alltoall_ms"),
            slow=True)
        add("Fig. 9", f"N={n} {model} torus/best iteration", t_it, lambda n=n: _ratio(n, "torus", "iteration_ms"),
            slow=True)
    for who, share in (("shifted_ring", 91.0), ("torus", 58.0), ("best", 30.0)):
        add("Fig. 9", f"N=1024 switch-c-2048 all-to-all share of the iteration, {who} (%)", share,
            lambda who=who: _share(1024, who), slow=True)


# ---------------------------------------------------------------------------------------------------- Fig. 8
FIG8 = {
    8: (("resnet50", "resnet101", "vgg16", "vgg19"), "bipartite(4)"),
    12: (("gpt2-small", "gpt2-medium", "gpt2-large"), "circulant(12,[2,3])"),
}
OURS_ALGO, SR_ALGO, DBT_ALGO = ("bfb",), ("shifted_ring",), ("dbt",)


def _designs(n: int) -> dict[str, tuple[str, tuple]]:
    return {"ours": (FIG8[n][1], OURS_ALGO), "shifted_ring": (f"shifted_ring({n})", SR_ALGO),
            "dbt": (f"dbt_graph({n})", DBT_ALGO)}


@cache
def total_allreduce_ms(model: str, expr: str, algos: tuple) -> float:
    """Fig. 8(a)'s "total allreduce time": the sum over the model's layers of one allreduce of its gradients."""
    from solvers.training import build_layers, design_prices, preset
    from solvers.training.simulate import _Prices

    topo = _topology(expr)
    prices = _Prices(design_prices(topo, algos, alltoall=False), _workload(True), topo, runtime=True)
    layers = build_layers(preset(model), topo.n, expert_parallel=False)
    return sum(prices.allreduce(l.param_bytes) for l in layers if l.param_bytes > 0)


def improvement(n: int, baseline: str, what: str) -> float:
    """100 (1 - ours / baseline), averaged over Fig. 8's models at ``n`` nodes (percent)."""
    models, _ = FIG8[n]
    d = _designs(n)
    out = []
    for m in models:
        if what == "allreduce":
            ours, base = (total_allreduce_ms(m, *d[k]) for k in ("ours", baseline))
        else:
            ours, base = (iteration(m, d[k][0], "dp", d[k][1], True).iteration_ms for k in ("ours", baseline))
        out.append(1 - ours / base)
    return 100.0 * sum(out) / len(out)


FIG8_KNOWN = (
    "Fig. 8 is measured on the testbed; ours is the model with App. A.2's fitted alpha and B. In the model ours and "
    "ShiftedRing are both BW-optimal (T_B 7/4 at N = 8), so they differ only by (14 - 4) alpha an allreduce, and "
    "the runtime model pipelines NCCL's double binary tree, which it prices at 1.14x ours at 1 GB (204 vs 178 ms, "
    "N = 8) where the testbed measured about 2x (Fig. 6: ours ~50 % lower); per-collective overheads (A.2's "
    "epsilon = 21.6 us) and MSCCL's protocol choices are not modelled, and compute is the FLOPs model (BF16, 0.5 of "
    "the A100's peak), so our improvements are smaller than the testbed's.")


def _rows_8() -> None:
    rows = [
        ("N=8 small models: total allreduce improvement over ShiftedRing (%)", 30.0, 8, "shifted_ring", "allreduce",
         0.7141),
        ("N=8 small models: total allreduce improvement over DBT (%)", 50.0, 8, "dbt", "allreduce", 0.4857),
        ("N=8 small models: iteration improvement over ShiftedRing (%)", 10.0, 8, "shifted_ring", "iteration",
         0.2665),
        ("N=8 small models: iteration improvement over DBT (%)", 25.0, 8, "dbt", "iteration", 0.4840),
        ("N=12 GPT-2: iteration improvement over ShiftedRing (%)", 7.0, 12, "shifted_ring", "iteration", 0.4288),
        ("N=12 GPT-2: iteration improvement over DBT (%)", 25.0, 12, "dbt", "iteration", 0.3447),
    ]
    for row, paper, n, base, what, ratio in rows:
        add("Fig. 8", row, paper, lambda n=n, base=base, what=what: improvement(n, base, what), tolerance=0.05,
            known=FIG8_KNOWN, expect_ratio=ratio)


_rows_9()
_rows_8()
