"""Link-by-link figures of a schedule: utilisation and load heatmaps, Gantt charts of the runtime model, TE-CCL's
epochs and TACOS's greedy steps. Pure functions of the model: no Streamlit here."""
from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Sequence

import plotly.graph_objects as go

from studio.figures.spec import FigureSpec
from topologies.model import Topology

from studio.figures.titles import place_title, titled
from studio.figures.topology import choose_layout, topology_figure


def _link_labels(topo: Topology, links: Sequence[int]) -> list[str]:
    """``a→b`` per link, with ``#k`` on the second and later of parallel links (a row label must be unique)."""
    seen: dict[tuple[int, int], int] = defaultdict(int)
    out = []
    for i in links:
        l = topo.links[i]
        k = seen[(l.src, l.dst)]
        seen[(l.src, l.dst)] += 1
        out.append(f"{topo.names[l.src]}→{topo.names[l.dst]}" + (f" #{k + 1}" if k else ""))
    return out


def utilisation_heatmap(topo: Topology, result, max_nodes: int = 64, max_links: int = 1024) -> FigureSpec:
    """How busy the runtime model keeps each link: busy time / completion time (``RuntimeResult.utilisation``,
    from 0 to 1; 1 is a link that never rests). Up to ``max_nodes`` nodes it is a matrix, source node down and
    destination node across, a cell the busiest of the links from one to the other (empty where there is no
    link, 0 for a link that carries nothing); above, a strip of the ``max_links`` busiest links, busiest
    first. Written as plotly's JSON (``spec``): Schedule makes it on every view."""
    util = result.utilisation()
    if topo.num_nodes <= max_nodes:
        names = list(topo.names)
        z: list[list[float | None]] = [[None] * topo.num_nodes for _ in range(topo.num_nodes)]
        count = [[0] * topo.num_nodes for _ in range(topo.num_nodes)]
        for i, l in enumerate(topo.links):
            u = util.get(i, 0.0)
            z[l.src][l.dst] = u if z[l.src][l.dst] is None else max(z[l.src][l.dst], u)
            count[l.src][l.dst] += 1
        text = [[f" (busiest of {c} links)" if c > 1 else "" for c in row] for row in count]
        trace = dict(type="heatmap", z=z, x=names, y=names, text=text, colorscale="Reds", zmin=0.0, zmax=1.0,
                     xgap=1, ygap=1, hoverongaps=False, colorbar=dict(title=dict(text="busy"), tickformat=".0%"),
                     hovertemplate="%{y} → %{x}: busy %{z:.1%} of the time%{text}<extra></extra>")
        layout = dict(xaxis=dict(title=dict(text="to"), showticklabels=topo.num_nodes <= 32, type="category",
                                 automargin=True),
                      yaxis=dict(title=dict(text="from"), autorange="reversed", showticklabels=topo.num_nodes <= 32,
                                 type="category", automargin=True),
                      height=min(700, max(380, 100 + 8 * topo.num_nodes)),
                      title="Link utilisation: busy / completion time")
    else:
        links = sorted(util, key=lambda i: (-util[i], i))[:max_links]
        labels = _link_labels(topo, links)
        trace = dict(type="bar", x=list(range(1, len(links) + 1)), y=[util[i] for i in links], text=labels,
                     marker=dict(color=[util[i] for i in links], colorscale="Reds", cmin=0.0, cmax=1.0,
                                 line=dict(width=0)),
                     hovertemplate="%{text}: busy %{y:.1%} of the time<extra></extra>")
        layout = dict(xaxis=dict(title=dict(text=f"links, busiest first ({len(links)} of {len(util)} that carry "
                                                 "data)"), automargin=True),
                      yaxis=dict(title=dict(text="busy"), range=[0, 1.05], tickformat=".0%", automargin=True),
                      bargap=0, height=380, title="Link utilisation (busiest links): busy / completion time")
    layout.update(margin=dict(l=60, r=10, t=40, b=50), plot_bgcolor="white")
    return FigureSpec([trace], titled(layout))


def gantt_figure(topo: Topology, timeline: Sequence[dict], color_by: str = "slice", max_links: int = 64,
                 max_bars: int = 20000) -> go.Figure:
    """The runtime model's sends on its clock: one row per link (the ``max_links`` busiest that carry data), one
    bar per send from its start to its end (``RuntimeResult.timeline`` rows: slice, step, link, start_us,
    end_us), coloured by ``color_by`` ("slice", the pipelining slice k, or "step", the schedule's step t). At
    most ``max_bars`` bars are drawn (the earliest sends)."""
    if color_by not in ("slice", "step"):
        raise ValueError(f"colour by 'slice' or 'step', not {color_by!r}")
    busy: dict[int, float] = defaultdict(float)
    for r in timeline:
        busy[r["link"]] += r["end_us"] - r["start_us"]
    links = sorted(sorted(busy, key=lambda i: (-busy[i], i))[:max_links])
    labels = _link_labels(topo, links)
    row_of = dict(zip(links, labels))
    rows = sorted((r for r in timeline if r["link"] in row_of), key=lambda r: (r["start_us"], r["link"]))[:max_bars]
    top = max((r[color_by] for r in rows), default=0)
    fig = go.Figure(go.Bar(
        base=[r["start_us"] for r in rows], x=[r["end_us"] - r["start_us"] for r in rows],
        y=[row_of[r["link"]] for r in rows], orientation="h",
        marker=dict(color=[r[color_by] for r in rows], colorscale="Viridis", cmin=0, cmax=max(top, 1),
                    line=dict(width=1, color="white"),
                    colorbar=dict(title=color_by, dtick=1 if top <= 16 else None)),
        customdata=[[r["slice"], r["step"], r["start_us"], r["end_us"]] for r in rows],
        hovertemplate="%{y}<br>slice %{customdata[0]}, step %{customdata[1]}<br>%{customdata[2]:.4g} → "
                      "%{customdata[3]:.4g} µs<extra></extra>", name="sends"))
    fig.update_layout(title=f"Sends per link on the model's clock (colour: {color_by})",
                      xaxis=dict(title="time (µs)", automargin=True, rangemode="tozero"),
                      yaxis=dict(title="links", autorange="reversed", automargin=True, categoryorder="array",
                                 categoryarray=labels, showticklabels=len(labels) <= 80),
                      height=min(900, max(300, 80 + 26 * len(labels))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white", showlegend=False)
    return place_title(fig)


def load_heatmap(topo: Topology, loads: dict[int, dict[int, Fraction]], max_links: int = 4096) -> FigureSpec:
    """Per-step link loads (in shards) as a heatmap: steps down, links across (the busiest ``max_links``).
    Written as plotly's JSON (``spec``): Schedule makes it on every view."""
    totals: dict[int, Fraction] = defaultdict(Fraction)
    for per_link in loads.values():
        for link, v in per_link.items():
            totals[link] += v
    links = sorted(totals, key=lambda i: (-totals[i], i))[:max_links]
    links.sort()
    steps = sorted(loads)
    z = [[float(loads[t].get(i, 0)) for i in links] for t in steps]
    labels = [f"{topo.names[topo.links[i].src]}→{topo.names[topo.links[i].dst]}" for i in links]
    trace = dict(type="heatmap", z=z, x=labels, y=[f"step {t}" for t in steps], colorscale="Reds",
                 colorbar=dict(title=dict(text="shards")),
                 hovertemplate="%{y}, %{x}: %{z:.4g} shards<extra></extra>")
    layout = dict(title="Link load per step", xaxis=dict(showticklabels=len(links) <= 64, title=dict(text="links")),
                  height=320, margin=dict(l=10, r=10, t=40, b=10))
    return FigureSpec([trace], titled(layout))


# ------------------------------------------------------------------------------------------ TE-CCL epoch views
def chunk_label(source: str, lo: str, hi: str) -> str:
    """A chunk as ``source`` (the whole shard) or ``source[lo,hi)``."""
    return source if (lo, hi) == ("0", "1") else f"{source}[{lo},{hi})"


def _pair_indices(topo: Topology) -> dict[tuple[str, str], int]:
    """(from name, to name) -> the first link index between them."""
    out: dict[tuple[str, str], int] = {}
    for i, l in enumerate(topo.links):
        out.setdefault((topo.names[l.src], topo.names[l.dst]), i)
    return out


def epoch_figure(topo: Topology, rows: list[dict], epoch: int, layout: tuple[str, list] | None = None,
                 max_labels: int = 3, max_labelled_links: int = 48) -> go.Figure:
    """The topology with the links that start sending in ``epoch`` highlighted (thicker for more chunks) and
    labelled near their head with the chunks they carry (up to ``max_labelled_links`` links; hover always).
    ``rows`` are ``TecclResult.epoch_table()`` rows (epoch, arrives, from, to, source, lo, hi)."""
    sent = [r for r in rows if r["epoch"] == epoch]
    pairs = _pair_indices(topo)
    on: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in sent:
        on[(r["from"], r["to"])].append(r)
    weight = {pairs[p]: float(len(rs)) for p, rs in on.items() if p in pairs}
    title = (f"Epoch {epoch}: {len(sent)} chunk send(s) on {len(on)} link(s)" if sent
             else f"Epoch {epoch}: no link starts a send (chunks in flight or waiting)")
    fig = topology_figure(topo, title, link_weight=weight, weight_label="chunks", layout=layout)
    if on:
        _, pos = layout if layout is not None else choose_layout(topo)
        index = {name: u for u, name in enumerate(topo.names)}
        xs, ys, texts, hovers = [], [], [], []
        for j, ((a, b), rs) in enumerate(sorted(on.items())):
            (x0, y0), (x1, y1) = pos[index[a]], pos[index[b]]
            f = (0.72, 0.58)[j % 2]     # nearer the head (the two directions of a pair do not meet), staggered
            xs.append(x0 + f * (x1 - x0))
            ys.append(y0 + f * (y1 - y0))
            labels = [chunk_label(r["source"], r["lo"], r["hi"]) for r in rs]
            texts.append("<br>".join(labels[:max_labels]) + (f"<br>+{len(labels) - max_labels}"
                                                            if len(labels) > max_labels else ""))
            hovers.append(f"{a} → {b}<br>" + "<br>".join(
                f"{chunk_label(r['source'], r['lo'], r['hi'])}: arrives at the start of epoch {r['arrives']}"
                for r in rs[:20]) + ("<br>…" if len(rs) > 20 else ""))
        labelled = len(on) <= max_labelled_links
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="text" if labelled else "markers", text=texts,
                                 marker=dict(size=8, color="rgba(139, 26, 26, 0.6)"),
                                 textfont=dict(size=10, color="#8b1a1a"), hovertext=hovers, hoverinfo="text",
                                 showlegend=False, name="chunks"))
    return fig


def epoch_gantt(topo: Topology, rows: list[dict], max_links: int = 400) -> go.Figure:
    """Links (the ones that carry anything, at most ``max_links`` busiest) against epochs: a cell is a link
    starting a send in that epoch, coloured by the source GPU of its (first) chunk; hover lists every chunk."""
    index = {name: u for u, name in enumerate(topo.names)}
    gpu = {topo.names[u]: j for j, u in enumerate(topo.compute_nodes)}
    busy: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        busy[(r["from"], r["to"])] += 1
    pairs = sorted(busy, key=lambda p: (-busy[p], index[p[0]], index[p[1]]))[:max_links]
    pairs.sort(key=lambda p: (index[p[0]], index[p[1]]))
    row_of = {p: i for i, p in enumerate(pairs)}
    last = max((r["epoch"] for r in rows), default=0)
    z: list[list[float | None]] = [[None] * (last + 1) for _ in pairs]
    text: list[list[str]] = [[""] * (last + 1) for _ in pairs]
    for r in rows:
        i = row_of.get((r["from"], r["to"]))
        if i is None:
            continue
        e = r["epoch"]
        if z[i][e] is None:
            z[i][e] = float(gpu.get(r["source"], 0))
        label = f"{chunk_label(r['source'], r['lo'], r['hi'])} → epoch {r['arrives']}"
        text[i][e] = f"{text[i][e]}<br>{label}" if text[i][e] else label
    n = max(len(topo.compute_nodes), 1)
    names = [topo.names[u] for u in topo.compute_nodes]
    ticks = list(range(0, n, max(1, n // 16)))
    fig = go.Figure(go.Heatmap(
        z=z, x=list(range(last + 1)), y=[f"{a}→{b}" for a, b in pairs], text=text, colorscale="Turbo", zmin=0,
        zmax=max(n - 1, 1), xgap=1, ygap=1, hoverongaps=False,
        colorbar=dict(title="source GPU", tickvals=ticks, ticktext=[names[j] for j in ticks]),
        hovertemplate="%{y}, epoch %{x}<br>%{text}<extra></extra>"))
    fig.update_layout(title="Sends per link and epoch (colour: source GPU)",
                      xaxis=dict(title="epoch", dtick=1 if last <= 40 else None, automargin=True),
                      yaxis=dict(title="links", autorange="reversed", showticklabels=len(pairs) <= 80,
                                 automargin=True),
                      height=min(900, max(320, 60 + 16 * len(pairs))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white")
    return place_title(fig)


def tacos_gantt(topo: Topology, rows: list[dict], max_links: int = 200) -> go.Figure:
    """TACOS's sends on a continuous clock: one row per link (the ``max_links`` busiest), one bar per send from
    its start to its arrival, coloured by the source NPU of the chunk; the reduce-scatter phase is drawn
    lighter. ``rows`` are ``TacosResult.timeline()`` entries."""
    busy: dict[int, int] = defaultdict(int)
    for r in rows:
        busy[r["link"]] += 1
    links = sorted(sorted(busy, key=lambda l: -busy[l])[:max_links])
    row_of = {l: i for i, l in enumerate(links)}
    labels = [f"{topo.names[topo.links[l].src]}→{topo.names[topo.links[l].dst]}" for l in links]
    n = max(topo.n, 1)
    fig = go.Figure()
    for phase, opacity in (("reduce_scatter", 0.55), ("allgather", 1.0)):
        part = [r for r in rows if r["phase"] == phase and r["link"] in row_of]
        if not part:
            continue
        fig.add_trace(go.Bar(
            base=[r["start_us"] for r in part], x=[r["end_us"] - r["start_us"] for r in part],
            y=[labels[row_of[r["link"]]] for r in part], orientation="h", opacity=opacity,
            marker=dict(color=[r["shard"] for r in part], colorscale="Turbo", cmin=0, cmax=max(n - 1, 1),
                        line=dict(width=0)),
            customdata=[[topo.names[r["shard"]], r["part"], r["start_us"], r["end_us"]] for r in part],
            hovertemplate="%{y}<br>chunk %{customdata[1]} of %{customdata[0]}<br>%{customdata[2]:.4g} → "
                          "%{customdata[3]:.4g} µs<extra>" + phase.replace("_", "-") + "</extra>",
            name=phase.replace("_", "-")))
    fig.update_layout(title="Sends per link (colour: source NPU; lighter: reduce-scatter)", barmode="overlay",
                      xaxis=dict(title="time (µs)", automargin=True, rangemode="tozero"),
                      yaxis=dict(title="links", autorange="reversed", showticklabels=len(links) <= 80,
                                 automargin=True, categoryorder="array", categoryarray=labels),
                      height=min(900, max(320, 60 + 14 * len(links))), margin=dict(l=10, r=10, t=40, b=10),
                      plot_bgcolor="white", legend=dict(orientation="h"))
    return place_title(fig)


# --------------------------------------------------------------------------------------------- finder figures
