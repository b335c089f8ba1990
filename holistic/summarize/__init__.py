"""helm-summarize: groups, leaderboards, win rates with their uncertainty."""

from holistic.summarize.build import Summary, summarize_suite
from holistic.summarize.schema import SummarySchema, load_schema
from holistic.summarize.write import write_summary

__all__ = ["Summary", "SummarySchema", "load_schema", "summarize_suite", "write_summary"]
