"""Training jobs on a design (issue 57): the direct-connect paper's simulated distributed training (App. A.4,
§8.4, Figs. 8, 9, 16).

- ``jobs``: GPUs (``GPUS``), layers (``Layer``), model presets (``model_presets``) and the FLOPs model;
- ``profile``: a measured per-layer profile (CSV) read through the studio's one input reader;
- ``pricing``: a design's verified allreduce schedules and all-to-all MCF rate, kept in the results cache;
- ``simulate``: one iteration on two streams (``simulate_iteration`` -> ``Iteration``: the breakdown, the
  collectives priced and the timeline);
- ``hybrid``: tensor parallel inside a box, data parallel across boxes (``tp-dp``): the placement of the groups
  on a switched cluster and their verified group schedules, timed together.
"""
from .jobs import (DEFAULT_EFFICIENCY, GPU, GPUS, Layer, ModelSpec, TrainingError, build_layers, model_presets,
                   parameters, preset)
from .hybrid import HYBRID, Placement, placement
from .pricing import DesignPrices, design_prices
from .profile import COLUMNS as PROFILE_COLUMNS, parse_profile, read_profile
from .simulate import BUCKETS, PARALLEL, CollectiveCost, Event, Iteration, simulate_iteration

__all__ = ["BUCKETS", "CollectiveCost", "DEFAULT_EFFICIENCY", "DesignPrices", "Event", "GPU", "GPUS", "HYBRID",
           "Iteration", "Layer", "ModelSpec", "PARALLEL", "PROFILE_COLUMNS", "Placement", "TrainingError",
           "build_layers", "design_prices", "model_presets", "parameters", "parse_profile", "placement", "preset",
           "read_profile", "simulate_iteration"]
