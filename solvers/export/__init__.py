"""Exports of verified schedules to runtime formats (MSCCL XML today). See docs/ARCHITECTURE.md."""
from .msccl import XmlError, check_xml, export

__all__ = ["XmlError", "check_xml", "export"]
