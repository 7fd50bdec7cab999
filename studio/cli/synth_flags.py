"""The synthesizers' options as CLI flags, generated from their ``Options`` (``solvers.registry``): one argument
group per synthesizer; a flag two synthesizers share (``--chunks``) is defined once. A flag given to a
synthesizer that does not take it ends in one line naming the ones that do."""
from __future__ import annotations

import argparse

from solvers.core.errors import NotApplicable
from solvers.registry import OptionSpec, synthesizers

from .common import UsageError


def _dest(flag: str) -> str:
    return "opt_" + flag.lstrip("-").replace("-", "_")


def _cli_specs() -> dict[str, list[tuple[str, OptionSpec]]]:
    """flag -> [(synthesizer, spec)] over every registered synthesizer."""
    out: dict[str, list[tuple[str, OptionSpec]]] = {}
    for name, synth in synthesizers().items():
        for spec in synth.option_specs():
            if spec.cli:
                out.setdefault(spec.flag, []).append((name, spec))
    return out


def add_synthesizer_arguments(p: argparse.ArgumentParser) -> None:
    """``--algo`` and every synthesizer's option flags."""
    every = synthesizers()
    p.add_argument("--algo", required=True, choices=sorted(every), help="the synthesizer")
    seen: set[str] = set()
    for name, synth in every.items():
        specs = [s for s in synth.option_specs() if s.cli]
        if not specs:
            continue
        group = p.add_argument_group(f"{name} ({synth.summary})")
        for spec in specs:
            if spec.flag in seen:
                continue
            seen.add(spec.flag)
            owners = [n for n, _ in _cli_specs()[spec.flag]]
            help_text = spec.help + (f" [{', '.join(owners)}]" if len(owners) > 1 else "")
            if spec.default is False:
                group.add_argument(spec.flag, dest=_dest(spec.flag), action="store_true", help=help_text)
                continue
            kwargs = {"dest": _dest(spec.flag), "default": None, "help": help_text, "metavar": spec.metavar}
            if spec.parse is not None:
                kwargs["type"] = str
            elif spec.choices is not None:
                kwargs["choices"] = list(spec.choices)
            else:
                kwargs["type"] = spec.kind
            if kwargs["metavar"] is None:
                del kwargs["metavar"]
            group.add_argument(spec.flag, **kwargs)


def options_for(args: argparse.Namespace, algo: str) -> dict:
    """The options of synthesizer ``algo`` given on the command line (field name -> value). UsageError when a
    flag belongs to other synthesizers only or its text does not parse."""
    chosen: dict = {}
    for flag, owners in _cli_specs().items():
        value = getattr(args, _dest(flag), None)
        if value is None or value is False:
            continue
        spec = dict(owners).get(algo)
        if spec is None:
            names = [n for n, _ in owners]
            listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
            raise NotApplicable(f"{flag} applies to {listed} only")
        if spec.parse is not None:
            try:
                value = spec.parse(value)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        chosen[spec.name] = value
    return chosen
