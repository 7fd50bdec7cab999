"""Measured against modelled, side by side (issue 41, item 4): an nccl-tests / rccl-tests log of a machine set
beside the runtime model of every applicable synthesizer on the same design, in the same prices.

``measured_vs_model(topo, log, algos)`` first fits the runtime model's uniform prices (alpha per send and a node's
bandwidth B) to the log for the schedule the measured library ran (``measured_algo``, NCCL's rings by default;
``solvers.runtime.calibrate``), then times, on those same calibrated prices, the schedule of each synthesizer of
``algos`` that applies to the design and collective at every size of the log (``solvers.runtime.Model.times``).
A synthesizer that does not apply (``NotApplicable``), is too slow for this view (TE-CCL's MILP), would exceed the
time budget or returns a schedule that fails verification is skipped and listed with its reason; no curve is
drawn from an unverified schedule: every schedule comes from ``solvers.synthesize``, which verifies what it returns
(``core.verify``, ``raise_if_failed``), and the view checks ``verification.ok`` once more before timing it.

The figures are nccl-tests' bus bandwidths: algbw = bytes / time and busbw = algbw x the collective's bus factor
(``solvers.runtime.busbw_factor``: 2(n-1)/n for allreduce, (n-1)/n for allgather, reduce-scatter and all-to-all)
with n the log's ranks; the measured busbw is the log's own column. ``MeasuredView.figure()`` draws busbw against
bytes (log x-axis), ``summary`` says in one line how far the studio's best schedule would go on these prices, and
``as_dict()`` is the CLI's JSON. Nothing here imports streamlit at module level: ``panel`` (the Schedule and
Compare pages' expander) imports it when called.
"""
from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from solvers.core.errors import NotApplicable, ScheduleError
from solvers.core.schedule import Collective
from solvers.registry import ALGORITHMS, Progress
from solvers.runtime import Model, busbw_factor
from solvers.runtime.calibrate import Calibration, calibrate
from solvers.runtime.measured import MAX_LOG_BYTES, BenchLog, read_bench_log
from solvers.synthesize import synthesize
from topologies.model import Topology

__all__ = ["BUDGET_S", "DEFAULT_MEASURED_ALGO", "MAX_TRANSFERS", "REASON_CHARS", "SAMPLE_LOG", "SLOW",
           "MeasuredError", "MeasuredView", "ModelCurve", "default_algos", "measured_figure", "measured_vs_model",
           "not_drawn_caption", "panel", "short_reason"]

DEFAULT_MEASURED_ALGO = "ring"          # NCCL's and RCCL's rings: what nccl-tests times at large sizes
BUDGET_S = 20.0                         # seconds for all the synthesizers' builds; the rest are listed as skipped
MAX_TRANSFERS = 2_000_000               # a larger schedule is skipped (its message graph takes seconds to build)
SLOW = {"teccl": "its MILP takes minutes: not timed beside a log"}
REASON_CHARS = 140                      # a longer "Not drawn" reason is cut at a word; its tooltip has it all
SAMPLE_LOG = Path(__file__).resolve().parents[2] / "examples" / "nccl-tests-allreduce-16.log"
PLACEMENTS = ("out-of-place", "in-place")
_AMD = ("AMD", "Instinct", "Radeon", "MI100", "MI200", "MI210", "MI250", "MI300", "gfx9")


class MeasuredError(ValueError):
    """A log that cannot be set beside the design (another collective, another number of ranks, a fit that
    fails); the message is one line."""


@dataclass(frozen=True)
class ModelCurve:
    """One verified schedule's runtime-model figures at every size of the log, on the calibrated prices;
    ``built_for_bytes``: the M its synthesizer was told where its schedule depends on M (else None)."""

    algo: str
    times_us: tuple[float, ...]
    busbw_gbs: tuple[float, ...]
    transfers: int
    verified: bool
    built_for_bytes: float | None = None


@dataclass(frozen=True)
class MeasuredView:
    """The log beside the runtime model (module docstring): the calibration, the measured busbw per placement
    (bytes -> GB/s, as the log prints it), one ``ModelCurve`` per synthesizer timed and the skipped ones with
    their reasons."""

    design: str
    collective: Collective
    ranks: int
    library: str                                   # "NCCL" or "RCCL", from the log's device names
    program: str | None
    sizes: tuple[float, ...]
    measured: dict[str, tuple[tuple[float, float, float], ...]]     # placement -> (bytes, time_us, busbw) rows
    calibration: Calibration
    measured_algo: str
    curves: tuple[ModelCurve, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    elapsed_s: float = 0.0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def price_label(self) -> str:
        """The calibrated prices in a few words (every figure and line of the view names them)."""
        c = self.calibration
        return f"alpha {c.alpha_us:.3g} µs, B {c.bandwidth_gbs:.3g} GB/s per node ({c.source}, {c.placement})"

    def not_drawn(self) -> tuple[tuple[str, str], ...]:
        """Every registered synthesizer without a curve, with its reason, in the registry's order: the skipped
        ones (not applicable, over the budget, ...), the slow ones the view never runs (``SLOW``) and those not
        asked for."""
        drawn = {c.algo for c in self.curves}
        why = dict(self.skipped)
        return tuple((a, why.get(a) or SLOW.get(a) or "not chosen for this view") for a in ALGORITHMS
                     if a not in drawn) + tuple((a, r) for a, r in self.skipped if a not in ALGORITHMS)

    def measured_at_largest(self) -> tuple[float, float] | None:
        """(bytes, busbw) of the calibrated placement's largest size (the other placement's if it has none)."""
        for placement in (self.calibration.placement, *PLACEMENTS):
            rows = self.measured.get(placement)
            if rows:
                return rows[-1][0], rows[-1][2]
        return None

    def best_at_largest(self) -> ModelCurve | None:
        """The curve with the highest model busbw at the log's largest size."""
        return max(self.curves, key=lambda c: c.busbw_gbs[-1], default=None)

    @property
    def summary(self) -> str:
        """One line: the measured busbw at the largest size and the best model busbw on the same prices."""
        measured, best = self.measured_at_largest(), self.best_at_largest()
        if measured is None:
            return f"{self.library}'s log has no measured size"
        text = (f"{self.library} measured {measured[1]:.3g} GB/s busbw at the largest size "
                f"({bytes_text(measured[0])})")
        if best is None:
            return text + "; no schedule of the studio applies to this design"
        return (text + f"; the studio's best schedule ({best.algo}) would reach {best.busbw_gbs[-1]:.3g} GB/s on these "
                f"prices (alpha {self.calibration.alpha_us:.3g} µs, B {self.calibration.bandwidth_gbs:.3g} GB/s)")

    def rows(self) -> list[dict]:
        """One row per size of the log: the measured time and busbw of each placement (None where the log has
        none) and each synthesizer's model time and busbw."""
        by_place = {p: {r[0]: r for r in rows} for p, rows in self.measured.items()}
        out = []
        for k, m in enumerate(self.sizes):
            row: dict = {"bytes": m}
            for p in PLACEMENTS:
                got = by_place.get(p, {}).get(m)
                tag = p.replace("-", "_")
                row[f"measured_{tag}_time_us"] = None if got is None else got[1]
                row[f"measured_{tag}_busbw_GBps"] = None if got is None else got[2]
            row["model_time_us"] = {c.algo: c.times_us[k] for c in self.curves}
            row["model_busbw_GBps"] = {c.algo: c.busbw_gbs[k] for c in self.curves}
            out.append(row)
        return out

    def as_dict(self) -> dict:
        c = self.calibration
        return {"design": self.design, "collective": self.collective.value, "ranks": self.ranks,
                "library": self.library, "program": self.program, "measured_algo": self.measured_algo,
                "prices": {"alpha_us": c.alpha_us, "bandwidth_gbs": c.bandwidth_gbs, "source": c.source,
                           "placement": c.placement, "rms_relative_error": c.rms, "label": self.price_label},
                "busbw_factor": busbw_factor(self.collective, self.ranks),
                "schedules": [{"algo": m.algo, "verified": m.verified, "transfers": m.transfers,
                               "built_for_bytes": m.built_for_bytes} for m in self.curves],
                "skipped": [{"algo": a, "reason": r} for a, r in self.skipped],
                "summary": self.summary, "rows": self.rows(), "elapsed_s": round(self.elapsed_s, 3)}

    def figure(self):
        return measured_figure(self)


def bytes_text(m: float) -> str:
    """A byte count for reading, in binary units as nccl-tests' sizes are: 1073741824 -> '1 GiB'."""
    for unit, size in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if m >= size:
            return f"{m / size:.3g} {unit}"
    return f"{m:.3g} B"


def short_reason(text: str, limit: int = REASON_CHARS) -> str:
    """``text`` as it is when it has at most ``limit`` characters, else cut at the last word boundary before
    ``limit`` with an ellipsis (a single word longer than ``limit`` is cut inside it, still marked "…")."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    if text[limit] != " ":
        head = head.rsplit(" ", 1)[0] if " " in head else head[:limit - 1]
    return head.rstrip() + "…"


def not_drawn_caption(view: MeasuredView) -> tuple[str, str]:
    """("Not drawn: a (reason); ...", the same with every reason whole): the caption, each reason at most
    ``REASON_CHARS`` characters cut at a word (``short_reason``), and its tooltip with the full text."""
    items = view.not_drawn()
    short = "; ".join(f"{a} ({short_reason(r)})" for a, r in items)
    full = "; ".join(f"{a} ({r})" for a, r in items)
    return "Not drawn: " + short, "Not drawn: " + full


def default_algos() -> list[str]:
    """Every registered synthesizer but the slow ones (``SLOW``), cheap ones first: what the view runs unless
    told otherwise."""
    return [a for a in ALGORITHMS if a not in SLOW]


def _library(log: BenchLog) -> str:
    names = " ".join(d[2] for d in log.devices)
    return "RCCL" if any(word in names for word in _AMD) else "NCCL"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _collective(log: BenchLog, collective: Collective | str | None) -> Collective:
    asked = Collective.parse(collective) if isinstance(collective, str) else collective
    if log.collective is not None and asked is not None and asked is not log.collective:
        raise MeasuredError(f"the log times {log.collective.value} ({log.program}), not {asked.value}: ask for "
                            f"{log.collective.value}")
    coll = log.collective or asked
    if coll is None:
        raise MeasuredError("the log does not say which collective it times (no 'Collective test starting' line "
                            "naming all_reduce_perf, all_gather_perf, reduce_scatter_perf or alltoall_perf)")
    return coll


def _placement(log: BenchLog, placement: str) -> str:
    """``placement`` where the log has at least two timed sizes of it, else the other one (a trace replay prints
    in-place figures only)."""
    for p in (placement, *PLACEMENTS):
        rows = log.placement(p)
        if int((rows["time_us"] > 0).sum()) >= 2:
            return p
    raise MeasuredError("the log has fewer than two sizes with a time: at least two are needed to fit alpha and B")


def _busbw(sizes: Sequence[float], times_us: Sequence[float], factor: float) -> tuple[float, ...]:
    """nccl-tests' busbw: bytes / time (GB/s: bytes per µs / 1e3) times the bus factor."""
    return tuple(m / (t * 1e3) * factor if t > 0 else 0.0 for m, t in zip(sizes, times_us))


def measured_vs_model(topo: Topology, log: BenchLog, algos: Sequence[str] | None = None,
                      collective: Collective | str | None = None, measured_algo: str = DEFAULT_MEASURED_ALGO,
                      placement: str = "out-of-place", source: str = "", design: str | None = None,
                      budget_s: float = BUDGET_S, progress: Progress | None = None) -> MeasuredView:
    """The log beside every applicable synthesizer of ``algos`` (default ``default_algos()``) on ``topo``
    (module docstring). ``collective``: the one the log times (checked against the log's program where it names
    one); ``measured_algo``: the schedule the measured library ran, fitted to ``placement`` (the other placement
    where the log lacks it); ``source`` names the log in the prices' label; ``design`` names the topology.
    MeasuredError (one line) for a log of another collective or number of ranks, an unknown synthesizer, a
    measured schedule that does not apply and a fit that fails."""
    start = time.monotonic()
    design = design or topo.expr or topo.name or "the design"
    coll = _collective(log, collective)
    if log.ranks is not None and log.ranks != topo.n:
        raise MeasuredError(f"the log has {log.ranks} ranks and {design} has {topo.n} compute nodes: set the log "
                            "beside the machine it measured")
    ranks = log.ranks or topo.n
    asked = list(dict.fromkeys(default_algos() if algos is None else [a.strip() for a in algos if a.strip()]))
    unknown = [a for a in asked + [measured_algo] if a not in ALGORITHMS]
    if unknown:
        raise MeasuredError(f"unknown synthesizer {unknown[0][:40]!r} (choose from {', '.join(ALGORITHMS)})")
    fit_placement = _placement(log, placement)
    if progress is not None:
        progress(f"fitting alpha and B to the log ({measured_algo})", 0.0)
    try:
        measured_result = synthesize(topo, measured_algo, coll)
        fit = calibrate(measured_result.topology, measured_result.schedule, log, fit_placement,
                        source=(source or f"{measured_algo} fit to {log.program or 'the log'}")[:300],
                        detail=False)       # the curves use the uniform fit; the class and protocol fits are calibrate's
    except NotApplicable as exc:
        raise MeasuredError(f"{measured_algo}, the schedule the log is fitted to, does not apply to {design}: "
                            f"{_first_line(exc)}") from None
    except ValueError as exc:          # ScheduleError too: the measured schedule failed verification
        raise MeasuredError(f"cannot fit the log with {measured_algo}: {_first_line(exc)}") from None
    execution = fit.workload().execution
    sizes = tuple(float(m) for m in log.sizes())
    factor = busbw_factor(coll, ranks)
    curves, skipped = [], []
    for k, algo in enumerate(asked):
        if progress is not None:
            progress(f"{algo}: schedule and runtime model", (k + 1) / (len(asked) + 1))
        if algo in SLOW:
            skipped.append((algo, SLOW[algo]))
            continue
        if time.monotonic() - start > budget_s:
            skipped.append((algo, f"skipped: the {budget_s:g} s budget was spent"))
            continue
        uses = ALGORITHMS[algo].uses_bytes(topo)
        try:
            result = measured_result if algo == measured_algo and not uses else \
                synthesize(topo, algo, coll, total_bytes=sizes[-1])
        except NotApplicable as exc:
            skipped.append((algo, f"not applicable: {_first_line(exc)}"))
            continue
        except ScheduleError as exc:
            skipped.append((algo, f"failed verification: {_first_line(exc)}"))
            continue
        if not result.verification.ok:                     # synthesize raises first; checked again, never drawn
            skipped.append((algo, "not verified"))
            continue
        if result.schedule.count > MAX_TRANSFERS:
            skipped.append((algo, f"{result.schedule.count:,} transfers: above the view's {MAX_TRANSFERS:,}"))
            continue
        times, _ = Model(result.topology, result.schedule, execution).times(sizes)
        times = tuple(float(t) for t in times)
        curves.append(ModelCurve(algo, times, _busbw(sizes, times, factor), result.schedule.count, True,
                                 sizes[-1] if uses else None))
    if progress is not None:
        progress("done", 1.0)
    measured = {}
    for p in PLACEMENTS:
        rows = log.placement(p)
        if len(rows):
            measured[p] = tuple((float(b), float(t), float(w)) for b, t, w in
                                zip(rows["bytes"], rows["time_us"], rows["busbw_GBps"]))
    return MeasuredView(design, coll, ranks, _library(log), log.program, sizes, measured, fit, measured_algo,
                        tuple(curves), tuple(skipped), time.monotonic() - start, tuple(log.notes[:5]))


MEASURED_STYLE = {"out-of-place": dict(color="#111111", symbol="circle", dash="solid"),
                  "in-place": dict(color="#7f7f7f", symbol="diamond-open", dash="dot")}


def measured_figure(view: MeasuredView):
    """busbw (GB/s) against bytes (log x-axis): the log's placements as markers and lines ("measured
    (out-of-place)", "measured (in-place)"), each synthesizer's runtime model on the calibrated prices as a line
    ("model: ring"); the title names the prices."""
    import plotly.graph_objects as go

    from studio.figures.charts import SYNTH_PALETTE as PALETTE
    from studio.figures.compare import algo_color
    from studio.figures.titles import place_title

    colors: dict[str, str] = {}
    for c in view.curves:          # the Compare page's color per synthesizer, another where two would share one
        color = algo_color(c.algo)
        if color in colors.values():
            color = next((x for x in PALETTE if x not in colors.values()), color)
        colors[c.algo] = color
    same: dict[str, str] = {}
    for k, c in enumerate(view.curves):
        twin = next((d.algo for d in view.curves[:k] if d.busbw_gbs == c.busbw_gbs), None)
        if twin is not None:
            same[c.algo] = f" (the same curve as {twin})"
    fig = go.Figure()
    for p, rows in view.measured.items():
        style = MEASURED_STYLE[p]
        fig.add_trace(go.Scatter(
            x=[r[0] for r in rows], y=[r[2] for r in rows], mode="markers+lines", name=f"measured ({p})",
            marker=dict(symbol=style["symbol"], size=7, color=style["color"]),
            line=dict(color=style["color"], dash=style["dash"], width=1.5),
            customdata=[[r[1]] for r in rows],
            hovertemplate=f"measured ({p})<br>%{{x:.4g}} B<br>busbw %{{y:.4g}} GB/s<br>time %{{customdata[0]:.4g}} µs"
                          "<extra></extra>"))
    for c in view.curves:
        built = (f" (built for M = {bytes_text(c.built_for_bytes)})" if c.built_for_bytes else "") + \
            same.get(c.algo, "")
        fig.add_trace(go.Scatter(
            x=list(view.sizes), y=list(c.busbw_gbs), mode="lines", name=f"model: {c.algo}",
            line=dict(color=colors[c.algo], width=2.5 if c.algo == view.measured_algo else 1.8,
                      dash="solid" if c.algo == view.measured_algo else "dash"),
            customdata=[[t] for t in c.times_us],
            hovertemplate=f"model: {c.algo}{built}<br>%{{x:.4g}} B<br>busbw %{{y:.4g}} GB/s<br>time "
                          "%{customdata[0]:.4g} µs<extra></extra>"))
    fig.update_layout(xaxis=dict(title="message size (bytes)", type="log"),
                      yaxis=dict(title="busbw (GB/s)", rangemode="tozero"), height=480,
                      legend=dict(title=None), margin=dict(l=10, r=10, t=40, b=10))
    title = (f"{view.collective.value} busbw on {view.design} ({view.ranks} ranks): {view.library} measured and "
             f"the runtime model<br>prices fitted to the log: {view.price_label}")
    return place_title(fig, title)


# ------------------------------------------------------------------------------------------------ the pages' panel
@functools.cache
def _cached_view():
    """The cached computation of the pages (made on first use so that this module imports no streamlit):
    keyed on the log's digest, the design, the collective asked, the synthesizers and the measured algorithm;
    the log's bytes and the topology's loader are not hashed (the digest and the design stand for them)."""
    import streamlit as st

    @st.cache_data(show_spinner=False, max_entries=16)
    def view(digest: str, design: str, collective: str, algos: tuple[str, ...], measured_algo: str, name: str,
             _data: bytes, _load: Callable[[], Topology]) -> MeasuredView:
        log = read_bench_log(_data)
        bar = st.progress(0.0, text="Measured vs model …")

        def progress(label: str, fraction: float) -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=f"Measured vs model: {label}")
        try:
            return measured_vs_model(_load(), log, algos, collective if log.collective is None else None,
                                     measured_algo, source=f"{measured_algo} fit to {name}"[:300], design=design,
                                     progress=progress)
        finally:
            bar.empty()
    return view


def panel(prefix: str, designs: Sequence[tuple[str, Callable[[], Topology]]], collective: str,
          algos: Sequence[str] | None = None, measured_algo: str = DEFAULT_MEASURED_ALGO) -> None:
    """The pages' expander "Measured (nccl-tests / rccl-tests log)": a log uploaded (read through
    ``studio.uploads.read_at_most``, at most ``MAX_LOG_BYTES``) or the sample (``SAMPLE_LOG``), set beside the
    runtime model of ``algos`` on one of ``designs`` ((name, loader) pairs; a choice where there are several):
    the figure, the summary and the skipped synthesizers. ``collective``: the page's, used where the log does not
    name its own. A bad log or a log of another machine is one ``st.error`` line. Widget keys start with
    ``prefix``.

    The box is made only while open (``expander.lazy_expander``, key ``{prefix}measured_open``): its uploader
    alone cost every browser about 0.3 CPU s per page view (issue 44). An uploaded log that reads is kept in the
    session (``{prefix}measured_kept``), so that closing the box, which removes the uploader and its file, does
    not lose it; reopened, the box shows it again until "Forget it"."""
    import streamlit as st

    from studio.uploads import read_at_most
    from studio.expander import lazy_expander

    sample_key, kept_key = f"{prefix}measured_sample", f"{prefix}measured_kept"
    with lazy_expander("Measured (nccl-tests / rccl-tests log)", f"{prefix}measured_open") as box:
        if not box:
            return
        names = [name for name, _ in designs]
        design, load = designs[0]
        if len(designs) > 1:
            picked = st.selectbox("The design the log measured", names, key=f"{prefix}measured_design")
            design, load = designs[names.index(picked) if picked in names else 0]
        st.caption(f"The output of all_reduce_perf and the like. alpha and B are fitted to it for the schedule the "
                   f"library ran ({measured_algo}), then every applicable synthesizer's runtime model is drawn on "
                   "those same prices: busbw as nccl-tests computes it, against the log's sizes.")
        left, right = st.columns([3, 1])
        upload = left.file_uploader("Benchmark log", key=f"{prefix}measured_log",
                                    help=f"nccl-tests / rccl-tests output, at most {MAX_LOG_BYTES // 2 ** 20} MiB")
        right.button("Use the sample log", key=f"{prefix}measured_sample_button",
                     on_click=lambda: st.session_state.__setitem__(sample_key, True),
                     help=f"examples/{SAMPLE_LOG.name}: a synthetic 16-rank all_reduce log (ring allreduce on "
                          "biring(16) in the runtime model, alpha 6 µs, B 40 GB/s, 3 % noise)")
        if upload is not None:
            name, data = upload.name, read_at_most(upload, MAX_LOG_BYTES)
        elif st.session_state.get(sample_key):
            name, data = SAMPLE_LOG.name, SAMPLE_LOG.read_bytes()
        elif st.session_state.get(kept_key):
            name, data = st.session_state[kept_key]
            note, forget = st.columns([3, 1])
            note.caption(f"{name}: the log uploaded before, kept for this session.")
            forget.button("Forget it", key=f"{prefix}measured_forget",
                          on_click=lambda: st.session_state.pop(kept_key, None))
        else:
            st.caption("Upload a log, or use the sample log (16 ranks: try biring(16) with allreduce).")
            return
        asked = tuple(default_algos() if algos is None else algos)
        try:
            view = _cached_view()(hashlib.sha256(data).hexdigest(), design, collective, asked, measured_algo, name,
                                  data, load)
        except ValueError as exc:           # LogError, MeasuredError, a design that does not load (TopologyError)
            from studio.messages import for_page

            st.error(f"{name}: {for_page(exc)}")
            return
        if upload is not None:                  # a log that reads: kept for when the box is closed and reopened
            st.session_state[kept_key] = (name, data)
        st.plotly_chart(view.figure(), key=f"{prefix}measured_chart")
        st.markdown(view.summary + ".")
        c = view.calibration
        st.caption(f"Prices fitted to the log's {c.placement} times for {view.measured_algo}: alpha {c.alpha_us:.4g} "
                   f"µs, B {c.bandwidth_gbs:.4g} GB/s per node, relative error rms {c.rms:.1%}. Every curve is a "
                   f"verified schedule's runtime model on these prices; busbw = bytes / time × "
                   f"{busbw_factor(view.collective, view.ranks):.4g} (nccl-tests' bus factor for "
                   f"{view.collective.value} on {view.ranks} ranks).")
        if view.not_drawn():
            short, full = not_drawn_caption(view)
            st.caption(short, help=full if full != short else None)
        use, save = st.columns(2)
        use.button("Price every page with these", key=f"{prefix}measured_use", on_click=_adopt, args=(c,),
                   icon=":material/price_check:", help="Sets the sidebar's link prices to this calibration, as a "
                   "price file would: every time on every page is then priced with it")
        save.download_button("Price file (JSON)", c.price_file(), file_name="prices.json", mime="application/json",
                             key=f"{prefix}measured_prices", on_click="ignore",
                             help="the CLI's --prices FILE and the sidebar's calibrated price file take it")


def _adopt(calibration) -> None:
    """The sidebar's calibrated prices set to ``calibration`` (a button's callback: it runs before the rerun, when
    the sidebar's widgets may still be set)."""
    import streamlit as st

    st.session_state["w_cal"] = (calibration.alpha_us, calibration.bandwidth_gbs, calibration.source)
    st.session_state["w_prices"] = "calibrated"
