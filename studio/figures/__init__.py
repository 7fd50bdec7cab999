"""The studio's figures: pure functions of the model that return plotly figures or ``spec.FigureSpec`` dicts (no
Streamlit, so notebooks use them too), the server's SVG drawing of them (``svg``), static images (``images``) and
how a page shows one (``charts``).

The functions a notebook reaches for are importable from here (``from studio.figures import topology_figure``);
the pages import them from their modules."""
from studio.figures.curves import bundle_plan_figure, frontier_figure, runtime_curve, sweep_figure
from studio.figures.images import ImageError, figure_bytes
from studio.figures.timelines import (epoch_figure, epoch_gantt, gantt_figure, load_heatmap, tacos_gantt,
                                      utilisation_heatmap)
from studio.figures.titles import place_title
from studio.figures.topology import choose_layout, topology_figure

__all__ = ["ImageError", "bundle_plan_figure", "choose_layout", "epoch_figure", "epoch_gantt", "figure_bytes",
           "frontier_figure", "gantt_figure", "load_heatmap", "place_title", "runtime_curve", "sweep_figure",
           "tacos_gantt", "topology_figure", "utilisation_heatmap"]
