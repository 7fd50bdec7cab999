"""Per-paper panels and page sections that the pages compose: TE-CCL's epochs, TACOS's greedy steps, GenModel,
measured logs, failures, NCCL graph files, sweeps, tenants, and Learn's longer sections. Each draws with Streamlit;
the figures they show come from ``studio.figures``."""
