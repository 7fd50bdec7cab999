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
