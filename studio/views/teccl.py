"""TE-CCL in the app, shared by the Schedule and Clusters pages: its knobs, a solve with a progress bar, the result
panel (transfer time, algbw, epochs, status, probes, notes) and the epoch-by-epoch view of which chunks move
where (figures in ``studio.figures``).

The solve goes through ``synthesize`` like every other algorithm; its ``Result.detail`` is the ``TecclResult``
(or ``Composed``) whose epoch table, with the per-link lags, feeds the epoch view.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from solvers.core.errors import NotApplicable
from solvers.core.schedule import Collective
from solvers.synthesize import ALGORITHMS
from solvers.teccl import Composed, TecclResult, read_demand_matrix
from solvers.teccl.instance import MAX_DEMAND_TEXT
from studio.figures.timelines import epoch_figure, epoch_gantt
from studio.figures.topology import MAX_DRAWN_NODES
from studio.metric_grid import metric_columns
from studio.uploads import UploadError, read_upload_text
from studio.widgets import MISSING, option_controls, synthesize_with_bar
from topologies.display import math_name

COLLECTIVES = [c.value for c in Collective.every()]
DEFAULT_TIME_LIMIT_S = 30.0
MAX_VIEW_TRANSFERS = 50_000          # epoch-table rows the epoch view draws
MAX_GANTT_CELLS = 400_000            # links x epochs in the heatmap

Options = tuple                      # sorted (name, value) pairs: hashable, for the caches


def knobs(prefix: str, collective: str) -> Options | None:
    """The TE-CCL settings as widgets (keys ``prefix + key``, from TE-CCL's declared options), in rows of four;
    None, after a message, when a custom demand matrix is missing or unreadable."""
    custom = collective == "custom"

    def demand(spec, where):
        matrix = _demand_matrix(prefix, where)
        return MISSING if matrix is None else matrix
    opts = option_controls(ALGORITHMS["teccl"], prefix, defaults={"time_limit": DEFAULT_TIME_LIMIT_S},
                           custom={"demand_matrix": demand}, skip=() if custom else ("matrix",),
                           disabled=("chunks",) if custom else ())
    if opts is None:
        return None
    if custom:
        del opts["chunks"]
    return tuple(sorted(opts.items()))


def _demand_matrix(prefix: str, where) -> tuple | None:
    upload = where.file_uploader("Demand matrix (CSV)", type=["csv", "txt"], key=f"{prefix}demand",
                                 help="Chunk counts, one row per source GPU and one column per destination, in "
                                      "compute-node order; '#' starts a comment")
    text = st.text_area("… or paste it", key=f"{prefix}demand_text", height=90, placeholder="0,1,0\n0,0,1\n1,0,0")
    if upload is not None:
        try:
            text = read_upload_text(upload, MAX_DEMAND_TEXT, "the demand matrix")
        except UploadError as exc:
            st.error(str(exc))
            return None
    if not text.strip():
        st.info("A custom collective needs a demand matrix: upload a CSV or paste one.")
        return None
    try:
        rows = read_demand_matrix(text)
    except NotApplicable as exc:
        st.error(str(exc).splitlines()[0])
        return None
    return tuple(tuple(r) for r in rows)


def _options(options: Options) -> dict:
    opts = dict(options)
    if opts.get("matrix") is not None:
        opts["matrix"] = [list(r) for r in opts["matrix"]]
    return opts


@st.cache_resource(show_spinner=False, max_entries=16)
def cached_solve(key: str, collective: str, options: Options, total_bytes: float, _load):
    """TE-CCL's ``collective`` with ``options`` and ``total_bytes`` (one GPU's output buffer) on the topology
    ``_load()`` (``key`` names it: an expression or an upload's digest): a
    ``studio.widgets.Solved`` from the results cache, or from a child process behind a progress bar that a Cancel
    or Stop ends (``studio.widgets.synthesize_with_bar``)."""
    return synthesize_with_bar("TE-CCL", _load(), "teccl", collective, _options(options), total_bytes)


# ------------------------------------------------------------------------------------------------- results
def parts(found) -> list[tuple[str, TecclResult]]:
    """(phase name, TecclResult) for each solve behind the result."""
    if isinstance(found, Composed):
        names = ["reduce-scatter (allgather on the reversed links, run backwards)", "allgather"]
        return list(zip(names, found.parts))
    return [(found.demand.collective.value, found)]


def epoch_rows(found) -> list[dict]:
    """The epoch table of the whole collective, with a ``phase`` column. A reduce-scatter part is an allgather on
    the transposed topology run backwards: its sends are mirrored in time (a send in epoch e arriving at a becomes
    one in epoch F - a arriving at F - e, F its finish) and in direction; an allreduce's allgather follows it."""
    if isinstance(found, TecclResult):
        return [{**r, "phase": found.demand.collective.value} for r in found.epoch_table()]
    rows, shift = [], 0
    for i, p in enumerate(found.parts):
        if i == 0:
            f = p.finish
            rows += [{**r, "epoch": f - r["arrives"], "arrives": f - r["epoch"], "from": r["to"], "to": r["from"],
                      "phase": "reduce-scatter"} for r in p.epoch_table()]
        else:
            rows += [{**r, "epoch": r["epoch"] + shift, "arrives": r["arrives"] + shift, "phase": "allgather"}
                     for r in p.epoch_table()]
        shift += p.finish
    rows.sort(key=lambda r: (r["epoch"], r["from"], r["to"]))
    return rows


def _us(x) -> str:
    return f"{float(x):.4g}"


def _status(p: TecclResult) -> str:
    if p.status == "feasible" and p.gap is not None:
        return f"feasible (gap {p.gap:.1%})"
    return p.status


def metrics(found) -> None:
    """Transfer time, algbw, epochs, status and whether K is proven minimal."""
    ps = parts(found)
    c = metric_columns(5)
    c[0].metric("TE-CCL's epoch time (µs)", _us(found.transfer_time_us),
                help="TE-CCL's own clock, a second figure: the epoch at whose start the last demand is met, times "
                     "the epoch length" + ("; the sum of the parts'" if len(ps) > 1 else "")
                     + ". The runtime model above is the figure every page and command shows.")
    if isinstance(found, TecclResult):
        c[1].metric("TE-CCL's algbw (GB/s)", f"{found.algbw_GBps:.4g}",
                    help="Output buffer of one GPU / TE-CCL's epoch time")
        c[2].metric("Epochs K / finish", f"{found.epochs} / {found.finish}",
                    help="K epochs in the final model; the last demand is met at the start of epoch 'finish'")
        c[3].metric("Epoch τ (µs)", _us(found.timing.tau_us))
    else:
        c[1].metric("Parts", len(ps), help="Reduce-scatter, then allgather for an allreduce")
        c[2].metric("Epochs (sum of finishes)", sum(p.finish for _, p in ps))
        c[3].metric("Epoch τ (µs)", " / ".join(_us(p.timing.tau_us) for _, p in ps))
    statuses = {_status(p) for _, p in ps}
    minimal = all(p.minimal for _, p in ps)
    c[4].metric("Status", " / ".join(sorted(statuses)),
                delta="K minimal: proven" if minimal else "K minimal: not proven",
                delta_color="off" if minimal else "inverse",
                help="optimal or feasible (stopped at the time limit, gap to the bound) for the final solve; "
                     "'proven' when K - 1 epochs were shown infeasible")


def details(found, total_bytes: float) -> None:
    """One caption per part (method, chunks, model size, seconds), the notes, the probes table."""
    ps = parts(found)
    for name, p in ps:
        d = p.as_dict()
        st.caption(f"{name}: {p.method.upper()}, {p.demand.chunks} chunk(s) per source of "
                   f"{float(p.timing.chunk_bytes):,.6g} B, epoch {_us(p.timing.tau_us)} µs, K = {p.epochs}, finish "
                   f"{p.finish}; {d['variables']:,} variables, {d['constraints']:,} constraints, "
                   f"{d['solver_seconds']:.2f} s.")
    st.caption(f"Output buffer {total_bytes:,.6g} B per GPU (the sidebar's M). TE-CCL's own clock times every link "
               "with its own bandwidth and alpha, in whole epochs; the runtime model above uses the sidebar's prices.")
    notes = [n for _, p in ps for n in p.notes]
    for n in notes:
        st.warning(n, icon=":material/info:")
    probes = [{"part": name, "epochs K": pr.epochs, "status": pr.status, "seconds": round(pr.seconds, 3)}
              for name, p in ps for pr in p.probes]
    with st.expander(f"Probes ({len(probes)} solves)"):
        frame = pd.DataFrame(probes)
        if len(ps) == 1:
            frame = frame.drop(columns="part")
        st.dataframe(frame, hide_index=True)


def epoch_view(topo, rows: list[dict], prefix: str, layout=None) -> dict:
    """A slider for the epoch, the topology with that epoch's sends labelled, the sends as a table, and links x
    epochs as a heatmap; refused in one line above the size limits. Returns the figures drawn."""
    figures: dict = {}
    if not rows:
        st.info("No transfers: every demand is met at the start.")
        return figures
    if len(rows) > MAX_VIEW_TRANSFERS:
        st.info(f"{len(rows):,} transfers are too many for the epoch view (limit {MAX_VIEW_TRANSFERS:,}); the numbers "
                "above are exact.")
        return figures
    last = max(r["epoch"] for r in rows)
    left, right = st.columns(2)
    with left:
        epoch = st.slider("Epoch", 0, last, 0, key=f"{prefix}epoch_slider") if last > 0 else 0
        if topo.num_nodes <= MAX_DRAWN_NODES:
            figures["epoch"] = epoch_figure(topo, rows, epoch, layout=layout)
            st.plotly_chart(figures["epoch"], key=f"{prefix}epoch_fig")
        else:
            st.info(f"{topo.num_nodes} nodes are too many to draw (limit {MAX_DRAWN_NODES}).")
        sent = [{"from": r["from"], "to": r["to"], "source": r["source"], "chunk": f"[{r['lo']}, {r['hi']})",
                 "arrives": r["arrives"], "phase": r["phase"]} for r in rows if r["epoch"] == epoch]
        with st.expander(f"Sends in epoch {epoch} ({len(sent)})"):
            st.dataframe(pd.DataFrame(sent), hide_index=True, key=f"{prefix}epoch_table")
    with right:
        pairs = len({(r["from"], r["to"]) for r in rows})
        if pairs * (last + 1) <= MAX_GANTT_CELLS:
            figures["epochs"] = epoch_gantt(topo, rows)
            st.plotly_chart(figures["epochs"], key=f"{prefix}gantt_fig")
        else:
            st.info(f"{pairs:,} links x {last + 1:,} epochs are too many cells for the heatmap "
                    f"(limit {MAX_GANTT_CELLS:,}).")
    return figures


def panel(result, found, prefix: str, total_bytes: float, layout=None) -> dict:
    """The result panel both pages show: verified line, metrics, details, epoch view. Returns its figures."""
    topo = result.topology
    coll = result.schedule.collective.value.replace("_", "-")
    from studio import workload
    from studio.widgets import runtime_metrics

    if result.verification.ok:
        st.success(f"Verified by the simulator: a correct {coll} on {math_name(topo.name or topo.expr)} "
                   f"({result.schedule.count:,} transfers).", icon=":material/verified:")
    if result.schedule.collective is not Collective.CUSTOM:
        runtime_metrics(result, workload.current())
    st.markdown("**TE-CCL's own figures**")
    metrics(found)
    details(found, total_bytes)
    st.markdown("**Epoch by epoch: which chunks move where**")
    return epoch_view(topo, epoch_rows(found), prefix, layout)
