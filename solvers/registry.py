"""The synthesizer registry: every synthesizer declares itself once, in one file of its wing, and the CLI, the
Schedule and Compare pages and the export pick it up from here.

A synthesizer is a subclass of ``Synthesizer`` decorated with ``@register``. It declares

* ``name``, ``summary`` (one line) and ``paper`` (where its algorithm is defined);
* ``rank``: where Compare runs it, cheap ones first;
* ``collectives``: what it builds (``build`` still refuses a fabric it cannot serve, with ``NotApplicable``);
* ``Options``: a dataclass whose fields are declared with ``option(...)``: default, bounds, choices, help text,
  the CLI flag and the page's label and widget key; ``options_from`` turns a mapping into a checked instance;
* ``build(topo, collective, options, work)``: the schedule, not yet verified, as a ``Built`` (the schedule, the
  fabric it runs on when that is not ``topo``, and a typed ``Detail`` of what else the algorithm found).

``solvers.synthesize.synthesize`` is lookup + build + verify + cost; nothing else dispatches on a name. Built-in
synthesizers live in ``solvers/<wing>/synthesizers.py`` and are imported by ``load_builtin``; a synthesizer
elsewhere (a notebook, a plug-in) calls ``register`` itself. See docs/ARCHITECTURE.md, "Adding a synthesizer".
"""
from __future__ import annotations

import dataclasses
import importlib
import numbers
import os
import pkgutil
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator, Mapping

from topologies.model import Topology

from .core.detail import Detail
from .core.errors import NotApplicable
from .core.schedule import Collective, Schedule
from .core.transform import build_collective

SKIP_BUDGET = "skipped: budget"
Progress = Callable[[str, float], None]
"""``progress(phase, fraction)``: the one progress type of every long computation (fraction in [0, 1])."""

_BUILT_COLLECTIVES = frozenset({Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE})


# ------------------------------------------------------------------------------------------------- options
def option(default: Any, help: str, *, minimum: float | None = None, maximum: float | None = None,  # noqa: A002
           choices: tuple | None = None, flag: str | None = None, label: str | None = None,
           key: str | None = None, step: float | None = None, page_minimum: float | None = None,
           page_maximum: float | None = None,
           parse: Callable[[str], Any] | None = None, metavar: str | None = None, widget: str | None = None,
           page: bool = True, cli: bool = True) -> Any:
    """A field of a synthesizer's ``Options`` dataclass with everything the CLI and the pages need to offer it.

    ``minimum``/``maximum`` bound numbers (checked in ``options_from``; ``page_minimum``/``page_maximum`` bound
    the page's widget only); ``choices`` lists the values a text option takes; ``flag`` is the CLI flag (default
    ``--`` + the field name with dashes); ``parse`` turns the flag's text into the value (ValueError with a
    message when it cannot); ``label``/``key``/``step`` shape the page's widget (key default: the field name);
    ``widget`` names a page widget that a view renders itself (for instance an upload); ``page``/``cli`` say
    where it is offered."""
    meta = {"help": help, "minimum": minimum, "maximum": maximum, "choices": choices, "flag": flag, "label": label,
            "key": key, "step": step, "page_minimum": page_minimum, "page_maximum": page_maximum, "parse": parse,
            "metavar": metavar, "widget": widget, "page": page, "cli": cli}
    return field(default=default, metadata={"option": meta})


@dataclass(frozen=True)
class OptionSpec:
    """One option as the CLI and the pages see it (``Synthesizer.option_specs``)."""

    name: str
    default: Any
    help: str
    minimum: float | None
    maximum: float | None
    choices: tuple | None
    flag: str
    label: str
    key: str
    step: float | None
    page_minimum: float | None
    page_maximum: float | None
    kind: type
    parse: Callable[[str], Any] | None
    metavar: str | None
    widget: str | None
    page: bool
    cli: bool

    def check(self, value: Any) -> None:
        """NotApplicable with one line when ``value`` is outside the declared bounds or choices."""
        if value is None:
            return
        if self.choices is not None and not isinstance(value, numbers.Real) and value not in self.choices:
            raise NotApplicable(f"{self.flag} takes {', '.join(map(str, self.choices))}, not {value!r}")
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if self.minimum is not None and value < self.minimum:
                raise NotApplicable(f"{self.flag} must be at least {self.minimum:g}")
            if self.maximum is not None and value > self.maximum:
                raise NotApplicable(f"{self.flag} must be at most {self.maximum:g}")


def _kind(f: dataclasses.Field) -> type:
    """The value type of an option: its default's, or for a default of None the first of int/float named in the
    field's annotation (str otherwise)."""
    if f.default is not None:
        return type(f.default)
    annotation = str(f.type)
    return next((t for t in (int, float) if t.__name__ in annotation), str)


@dataclass(frozen=True)
class NoOptions:
    """The options of a synthesizer that takes none."""


# ------------------------------------------------------------------------------------------- what a build gives
@dataclass(frozen=True)
class Work:
    """What a build is told besides the topology: the vector size M (bytes, when known), where to report, and
    for a rooted collective its root (a compute node of the topology the build was given)."""

    total_bytes: float | None = None
    progress: Progress | None = None
    root: int | None = None

    def prefixed(self, prefix: str) -> Progress | None:
        """A progress callback that puts ``prefix: `` before every phase (None when nobody listens)."""
        if self.progress is None:
            return None
        return lambda phase, fraction: self.progress(f"{prefix}: {phase}", fraction)


@dataclass
class Built:
    """A build's output: the schedule (not yet verified), the fabric it runs on when that is not the input (TACOS
    schedules the fabric with its switches unwound) and the synthesizer's ``Detail``."""

    schedule: Schedule
    topology: Topology | None = None
    detail: Detail | None = None


# ---------------------------------------------------------------------------------------------- synthesizers
class Synthesizer:
    """A schedule synthesizer (module docstring). Subclasses set the class attributes and ``build``."""

    name: ClassVar[str]
    summary: ClassVar[str]
    paper: ClassVar[str] = ""
    rank: ClassVar[int] = 100
    collectives: ClassVar[frozenset[Collective]] = _BUILT_COLLECTIVES
    reports_progress: ClassVar[bool] = False
    Options: ClassVar[type] = NoOptions

    def build(self, topo: Topology, collective: Collective, options, work: Work) -> Built:
        raise NotImplementedError

    # -- options
    @classmethod
    def option_specs(cls) -> list[OptionSpec]:
        specs = []
        for f in dataclasses.fields(cls.Options):
            meta = dict(f.metadata.get("option") or {"help": ""})
            specs.append(OptionSpec(
                name=f.name, default=f.default, help=meta.get("help", ""), minimum=meta.get("minimum"),
                maximum=meta.get("maximum"), choices=meta.get("choices"),
                flag=meta.get("flag") or "--" + f.name.replace("_", "-"), label=meta.get("label") or f.name,
                key=meta.get("key") or f.name, step=meta.get("step"), page_minimum=meta.get("page_minimum"),
                page_maximum=meta.get("page_maximum"), kind=_kind(f),
                parse=meta.get("parse"), metavar=meta.get("metavar"), widget=meta.get("widget"),
                page=meta.get("page", True), cli=meta.get("cli", True)))
        return specs

    @classmethod
    def options_from(cls, values: Mapping[str, Any] | None = None):
        """A checked ``Options`` instance from a mapping of field names (None: the defaults). Unknown names and
        values outside the declared bounds raise NotApplicable with one line."""
        if isinstance(values, cls.Options):
            values = dataclasses.asdict(values)
        values = dict(values or {})
        specs = {s.name: s for s in cls.option_specs()}
        unknown = sorted(set(values) - set(specs))
        if unknown:
            takes = f"takes {', '.join(specs)}" if specs else "takes no options"
            raise NotApplicable(f"{cls.name} {takes}, not {', '.join(unknown)}")
        for name, value in values.items():
            specs[name].check(value)
        return cls.Options(**values)

    @classmethod
    def builds(cls, collective: Collective) -> bool:
        return collective in cls.collectives

    @classmethod
    def uses_bytes(cls, topo: Topology) -> bool:
        """Whether the schedule built for ``topo`` depends on the vector size M. ``synthesize`` hands M only to
        those that do, so that every door asking the same question builds the same schedule (and one that does
        not is solved and cached once for every M). Default: no."""
        return False

    @classmethod
    def compare_plan(cls, topo: Topology, collective: Collective, left_s: float) -> dict | str:
        """Compare asks before each run with ``left_s`` seconds of its budget left: the options to run with, or
        a status (``skipped: ...``) that says why this run is left out. Default: run with the defaults."""
        return {}


class AllgatherSynthesizer(Synthesizer):
    """A synthesizer defined by its allgather: the reduce-scatter is the allgather on the transposed topology run
    backwards and the allreduce their composition (``solvers.core.transform.build_collective``)."""

    def allgather(self, topo: Topology, options, work: Work, progress: Callable[[float], None] | None) -> Schedule:
        raise NotImplementedError

    def detail(self, schedule: Schedule) -> Detail | None:
        """The typed detail of the built schedule (default: none)."""
        return None

    def build(self, topo: Topology, collective: Collective, options, work: Work) -> Built:
        calls = iter(range(1, 3))

        def builder(g: Topology) -> Schedule:
            if work.progress is None or not self.reports_progress:
                return self.allgather(g, options, work, None)
            phase = f"{self.name} allgather {next(calls)}" if collective is Collective.ALLREDUCE else self.name
            return self.allgather(g, options, work, lambda f: work.progress(phase, f))
        schedule = build_collective(topo, collective, builder)
        return Built(schedule, detail=self.detail(schedule))


_REGISTRY: dict[str, type[Synthesizer]] = {}
_LOADED = False
_LOADING = False                 # this thread is importing the wings (a call from inside returns at once)
_LOAD_LOCK = threading.RLock()


def register(cls: type[Synthesizer]) -> type[Synthesizer]:
    """Add a synthesizer (a class decorator). A second registration under the same name replaces the first."""
    if not getattr(cls, "name", None) or not getattr(cls, "summary", None):
        raise TypeError(f"{cls.__name__} needs a name and a summary")
    if not dataclasses.is_dataclass(cls.Options):
        raise TypeError(f"{cls.__name__}.Options must be a dataclass")
    _REGISTRY[cls.name] = cls
    return cls


def unregister(name: str) -> None:
    """Remove a synthesizer (tests that register a toy one clean up with this)."""
    _REGISTRY.pop(name, None)


def load_builtin() -> None:
    """Import every ``solvers/<wing>/synthesizers.py``: each registers its wing's synthesizers. Thread-safe: the
    app serves several sessions from threads of one process, and a second session asking while the first one's
    imports ran used to see a registry still being filled (a page's algorithm list came out empty); it now
    waits for them. A call made by those imports themselves returns at once."""
    global _LOADED, _LOADING
    if _LOADED:
        return
    with _LOAD_LOCK:
        if _LOADED or _LOADING:
            return
        _LOADING = True
        try:
            for info in pkgutil.iter_modules([os.path.dirname(__file__)]):     # the wings beside this file
                if info.ispkg:
                    try:
                        importlib.import_module(f"solvers.{info.name}.synthesizers")
                    except ModuleNotFoundError as exc:
                        if exc.name != f"solvers.{info.name}.synthesizers":
                            raise
        finally:
            _LOADING = False
            _LOADED = True


def synthesizers() -> dict[str, type[Synthesizer]]:
    """Every registered synthesizer by name, in Compare's order (cheap first, then by name)."""
    load_builtin()
    return dict(sorted(_REGISTRY.items(), key=lambda kv: (kv[1].rank, kv[0])))


def get(name: str) -> type[Synthesizer]:
    """The synthesizer called ``name``; NotApplicable naming the choices otherwise."""
    every = synthesizers()
    try:
        return every[name]
    except KeyError:
        raise NotApplicable(f"unknown algorithm {name!r} (choose from {', '.join(every)})") from None


class _Names(Mapping):
    """``ALGORITHMS``: a read-only live view of the registry (name -> synthesizer class)."""

    def __getitem__(self, name: str) -> type[Synthesizer]:
        return synthesizers()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(synthesizers())

    def __len__(self) -> int:
        return len(synthesizers())


ALGORITHMS: Mapping[str, type[Synthesizer]] = _Names()
