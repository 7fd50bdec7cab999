"""Training jobs on a design (issue 57): the direct-connect paper's simulated distributed training (App. A.4,
§8.4, Figs. 8, 9, 16).

- ``jobs``: GPUs (``GPUS``), layers (``Layer``), model presets (``model_presets``) and the FLOPs model;
- ``profile``: a measured per-layer profile (CSV) read through the studio's one input reader;
- ``pricing``: a design's verified allreduce schedules and all-to-all MCF rate, kept in the results cache;
- ``simulate``: one iteration on two streams (``simulate_iteration`` -> ``Iteration``: the breakdown, the
  collectives priced and the timeline).
"""
from .jobs import (DEFAULT_EFFICIENCY, GPU, GPUS, Layer, ModelSpec, TrainingError, build_layers, model_presets,
                   parameters, preset)
from .pricing import DesignPrices, design_prices
from .profile import COLUMNS as PROFILE_COLUMNS, parse_profile, read_profile
from .simulate import BUCKETS, PARALLEL, CollectiveCost, Event, Iteration, simulate_iteration

__all__ = ["BUCKETS", "CollectiveCost", "DEFAULT_EFFICIENCY", "DesignPrices", "Event", "GPU", "GPUS", "Iteration",
           "Layer", "ModelSpec", "PARALLEL", "PROFILE_COLUMNS", "TrainingError", "build_layers", "design_prices",
           "model_presets", "parameters", "parse_profile", "preset", "read_profile", "simulate_iteration"]
