"""GenModel parameters, the paper's presets and the options that expose its ambiguities.

GenModel (GenModel paper §3.3, Eq. 11) prices an AllReduce plan as

    T = A·alpha + B·beta + C·gamma + D·delta + max(w - w_t, 0)·B·epsilon

* ``alpha``   s per communication step (start-up and link delay);
* ``beta``    s per float sent over a link (inverse bandwidth);
* ``gamma``   s per float added (inverse reduction throughput);
* ``delta``   s per float read or written by a reduction (memory access, §3.1);
* ``epsilon`` s per float received per unit of fan-in above the incast threshold (§3.2, Eq. 7);
* ``w_t``     the incast threshold: no incast while the fan-in w <= w_t.

Sizes are counted in floats of ``FLOAT_BYTES`` = 4 bytes, as in every experiment of the paper ("400 MB means
100 million floats"). Table 5 prints no units; the digest's fits of Table 7 (its §3.6, §3.9) show that the rows are
seconds and seconds per float, which is what the presets below use.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from math import isfinite

FLOAT_BYTES = 4

FAN_IN_CONVENTIONS = ("group", "senders")
HCPS_FORMULAS = ("corrected", "printed")
RING_STEPS = ("paper", "simulator")


class ParamsError(ValueError):
    """A parameter set or option that cannot be used; the message names the problem in one line."""


@dataclass(frozen=True)
class GenModelParams:
    """The six GenModel parameters (units in the module docstring). Every value must be finite and >= 0."""

    alpha: float = 0.0
    beta: float = 0.0
    gamma: float = 0.0
    delta: float = 0.0
    epsilon: float = 0.0
    w_t: int = 9

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ParamsError(f"{f.name} must be a number, got {value!r}")
            if not isfinite(value) or value < 0:
                raise ParamsError(f"{f.name} must be finite and non-negative, got {value!r}")
        if int(self.w_t) != self.w_t:
            raise ParamsError(f"w_t must be a whole number, got {self.w_t!r}")
        object.__setattr__(self, "w_t", int(self.w_t))

    def with_(self, **changes) -> "GenModelParams":
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def classic(self) -> "GenModelParams":
        """The same parameters with delta = epsilon = 0: the (alpha, beta, gamma) model of Eq. 1."""
        return replace(self, delta=0.0, epsilon=0.0)

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def combine(link: GenModelParams, server: GenModelParams) -> GenModelParams:
    """One parameter set from a link tier (alpha, beta, epsilon, w_t) and the server row (gamma, delta): Table 5
    attaches the communication terms to links and the computation terms to servers (digest §2.2)."""
    return GenModelParams(alpha=link.alpha, beta=link.beta, gamma=server.gamma, delta=server.delta,
                          epsilon=link.epsilon, w_t=link.w_t)


# GenModel paper Table 5 (simulator parameters), one row per tier; "/" in the table is 0 here.
TABLE5: dict[str, GenModelParams] = {
    "cross_dc": GenModelParams(alpha=3.00e-2, beta=6.40e-9, epsilon=6.00e-11, w_t=9),
    "root_sw": GenModelParams(alpha=6.58e-3, beta=6.40e-10, epsilon=6.00e-12, w_t=9),
    "middle_sw": GenModelParams(alpha=6.58e-3, beta=6.40e-9, epsilon=1.22e-10, w_t=9),
    "server": GenModelParams(alpha=6.58e-3, gamma=6.00e-10, delta=1.87e-10, w_t=9),
}
TIERS = ("middle_sw", "root_sw", "cross_dc")
TABLE5["middle_sw+server"] = combine(TABLE5["middle_sw"], TABLE5["server"])

# The digest (§1.4.2, §3.9) infers that Table 5's Middle-SW + Server rows with w_t = 9 reproduce the plans the
# paper reports for its 15-server CPU testbed (§5.2: CPS for 8, 6 x 2 for 12, 5 x 3 for 15 servers).
CPU_TESTBED = TABLE5["middle_sw+server"].with_(w_t=9)

PRESETS: dict[str, GenModelParams] = {"cpu_testbed": CPU_TESTBED, **TABLE5}


def preset(name: str) -> GenModelParams:
    """A preset by name (``cpu_testbed``, ``middle_sw+server``, ``middle_sw``, ``root_sw``, ``cross_dc``,
    ``server``); dashes and case are ignored."""
    key = name.strip().lower().replace("-", "_")
    if key not in PRESETS:
        raise ParamsError(f"unknown preset {name!r} (choose from {', '.join(PRESETS)})")
    return PRESETS[key]


@dataclass(frozen=True)
class ModelOptions:
    """How to read the formulas where the paper is ambiguous (digest pitfalls P1, P3, §3.9).

    * ``fan_in``: the incast fan-in w of a receiver in a group of g. ``"group"``: w = g, as in the paper's
      Eq. 8 and x-to-x experiment; ``"senders"``: w = g - 1, the number of senders, which fits Table 7.
    * ``alpha_steps``: mu, the multiple of alpha charged per communication step. 1 reproduces the paper's
      formulas; the Table 7 simulator charges about 3 per step inside one switch and 5 through a root. On a
      tree, ``"path"`` charges the sum of the alphas along each flow's path (one per node passed, servers
      included), the step lasting as long as its longest path; on one switch that is 3.
    * ``hcps``: ``"corrected"`` (digest §1.4.2, the default) or ``"printed"`` (Table 2 as printed).
    * ``ring_steps``: ``"paper"``: 2(N-1) ring steps; ``"simulator"``: 2N, what the Table 7 intercepts show.
    """

    fan_in: str = "group"
    alpha_steps: float | str = 1
    hcps: str = "corrected"
    ring_steps: str = "paper"

    def __post_init__(self):
        if self.fan_in not in FAN_IN_CONVENTIONS:
            raise ParamsError(f"fan_in must be 'group' or 'senders', got {self.fan_in!r}")
        if self.hcps not in HCPS_FORMULAS:
            raise ParamsError(f"hcps must be 'corrected' or 'printed', got {self.hcps!r}")
        if self.ring_steps not in RING_STEPS:
            raise ParamsError(f"ring_steps must be 'paper' or 'simulator', got {self.ring_steps!r}")
        mu = self.alpha_steps
        if mu != "path":
            if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not isfinite(mu) or mu < 0:
                raise ParamsError(f"alpha_steps must be a non-negative number or 'path', got {mu!r}")

    def width(self, group: int) -> int:
        """The incast fan-in w of a receiver in a group of ``group`` participants."""
        return group if self.fan_in == "group" else group - 1

    def single_switch_mu(self) -> float:
        """mu on one switch: the number, or 3 (server, switch, server) for ``"path"``."""
        return 3.0 if self.alpha_steps == "path" else float(self.alpha_steps)


DEFAULT_OPTIONS = ModelOptions()
