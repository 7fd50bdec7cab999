"""Widgets the pages share. ``option_controls`` draws a synthesizer's options from its ``Options`` declaration
(``solvers.registry.option``), so that a synthesizer added in one file gets its controls on every page."""
from __future__ import annotations

from typing import Callable

import streamlit as st

from solvers.registry import OptionSpec, Synthesizer

Custom = Callable[[OptionSpec, object], object]
MISSING = object()          # a custom widget's answer when its value is missing (the page stops there)


def _sentence(text: str) -> str:
    """A declared help text (written for ``--help``, lower case) as a tooltip sentence."""
    return text[:1].upper() + text[1:]


def _number(spec: OptionSpec, where, prefix: str, default, disabled: bool):
    optional = spec.default is None                  # shown as 0 = automatic
    integer = spec.kind is int
    lo = spec.page_minimum if spec.page_minimum is not None else spec.minimum
    lo = 0 if optional else lo
    hi = spec.page_maximum if spec.page_maximum is not None else spec.maximum
    value = 0 if default is None else default
    cast = int if integer else float
    kwargs = {"step": cast(spec.step or 1)}
    if not integer and spec.step is not None and spec.step < 0.01:
        kwargs["format"] = "%.4g"
    got = where.number_input(spec.label, None if lo is None else cast(lo), None if hi is None else cast(hi),
                             cast(value), key=f"{prefix}{spec.key}", help=_sentence(spec.help),
                             disabled=disabled, **kwargs)
    got = cast(got)
    return None if optional and got == 0 else got


def option_controls(synth: type[Synthesizer], prefix: str, *, per_row: int = 4, defaults: dict | None = None,
                    custom: dict[str, Custom] | None = None, skip: tuple[str, ...] = (),
                    disabled: tuple[str, ...] = ()) -> dict | None:
    """The synthesizer's page options as widgets, ``per_row`` to a row (keys ``prefix + key``); returns
    {field: value}. ``defaults`` replaces declared defaults on the page; ``custom[widget]`` draws a field that
    declares ``widget`` (it returns the value, or MISSING to stop: then this returns None); ``skip`` leaves
    fields out, ``disabled`` greys them."""
    specs = [s for s in synth.option_specs() if s.page and s.name not in skip]
    values: dict = {}
    cols = []
    for i, spec in enumerate(specs):
        if i % per_row == 0:
            cols = st.columns(per_row)
        where = cols[i % per_row]
        default = (defaults or {}).get(spec.name, spec.default)
        off = spec.name in disabled
        if spec.widget is not None:
            value = (custom or {})[spec.widget](spec, where)
            if value is MISSING:
                return None
        elif spec.kind is bool:
            value = where.checkbox(spec.label, value=bool(default), key=f"{prefix}{spec.key}",
                                   help=_sentence(spec.help), disabled=off)
        elif spec.choices is not None:
            choices = list(spec.choices)
            text = where.selectbox(spec.label, choices, index=choices.index(str(default)),
                                   key=f"{prefix}{spec.key}", help=_sentence(spec.help),
                                   disabled=off)
            value = spec.parse(text) if spec.parse is not None else text
        else:
            value = _number(spec, where, prefix, default, off)
        values[spec.name] = value
    return values


HOW_TO_RUN = """**Running the file.** MSCCL executor (NCCL): copy it into `<build>/lib/msccl-algorithms/`. microsoft/msccl:
`mpirun -np <ngpus> -x MSCCL_XML_FILES=file.xml -x NCCL_ALGO=MSCCL,RING,TREE <nccl-tests binary> -b 1K -e 1G -f 2`.
RCCL: copy it into `<rccl>/build/release/msccl-algorithms/` and set `RCCL_MSCCL_FORCE_ENABLE=1`. The file serves
the call chosen above (nccl-tests runs out of place, then in place); its chunk count (`nchunksperloop`) must
divide the buffer's element count."""

_PLACES = {"default": None, "in place": True, "out of place": False}


def export_panel(topo, schedule, prefix: str, name: str, file_stem: str, *, request: tuple = ()) -> None:
    """The one MSCCL export widget every page uses: the runtime's settings (dialect, protocol, threadblock budget,
    in or out of place), a button, then the file lowered, validated against the runtime parser's rules and
    simulated (``solvers.export.export``) before its download appears, or one line saying why not.
    ``schedule`` is a verified Schedule or a function that builds one (called only when the button is pressed).

    Widget keys are ``prefix`` + dialect / proto / budget / place / export / download. The file is kept in the
    session under ``prefix + "xml"`` with ``request`` (whatever, beside the settings, the schedule depends on:
    expression, synthesizer, collective, options) and shown only while the page asks for the same."""
    from solvers.core.errors import NotApplicable
    from solvers.export import DEFAULT_SM_BUDGET, TARGETS, XmlError, export

    c1, c2, c3, c4 = st.columns(4)
    runtime = c1.selectbox("Runtime", list(TARGETS), key=f"{prefix}runtime",
                           help="The runtime that loads the file; the export meets its limits. "
                                + "; ".join(f"{t.name}: {t.max_steps} steps per threadblock, {t.max_tbs} "
                                            f"threadblocks per rank ({t.dialect} dialect)" for t in TARGETS.values()))
    proto = c2.selectbox("Protocol", ["Simple", "LL", "LL128"], key=f"{prefix}proto")
    budget = c3.number_input("Threadblocks per GPU", 1, 1024, DEFAULT_SM_BUDGET, key=f"{prefix}budget",
                             help="How many threadblocks can be resident at once (SMs); 108 on an A100.")
    place = c4.selectbox("Call", list(_PLACES), key=f"{prefix}place",
                         help="Default: in place for allgather and allreduce, out of place for reduce-scatter.")
    asked = request + (runtime, proto, int(budget), place)
    held_key = f"{prefix}xml"
    if st.button("Build MSCCL XML", key=f"{prefix}export"):
        st.session_state.pop(held_key, None)
        with st.spinner("Lowering, validating and simulating …"):
            try:
                built = schedule() if callable(schedule) else schedule
                text, report = export(topo, built, None, int(budget), runtime, proto=proto,
                                      in_place=_PLACES[place], name=name)
            except (XmlError, NotApplicable, ValueError) as exc:
                st.error(f"Not exported: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                return
        st.session_state[held_key] = (asked, text, report)
    held = st.session_state.get(held_key)
    if not held or held[0] != asked:
        return
    _, text, report = held
    limits = TARGETS[report.runtime]
    st.success(f"Validated against {report.runtime}'s rules and limits and simulated: {report.ranks} ranks, "
               f"{report.threadblocks} threadblocks, {report.steps} steps; at most {report.tbs_per_rank} "
               f"threadblocks per rank (limit {limits.max_tbs}) and {report.steps_per_tb} steps per threadblock "
               f"(limit {limits.max_steps}).")
    stem = "".join(c if c.isalnum() else "_" for c in file_stem)[:80]
    st.download_button("Download MSCCL XML", text, file_name=f"{stem}.xml", mime="application/xml",
                       key=f"{prefix}download", on_click="ignore")
    st.markdown(HOW_TO_RUN)
