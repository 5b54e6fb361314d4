"""Tournaments between agents: the config and schedule (`config`), parallel resumable
play and its storage (`play`), and the report with Elo and AIVAT (`report`)."""
from sog.eval.tournament.config import (
    CHECKDOWN,
    FORMAT,
    TournamentConfig,
    TournamentError,
    fingerprint,
    load_config,
    pairs,
    parse_config,
    read_raw,
    schedule,
)
from sog.eval.tournament.play import ResultStore, run_tournament
from sog.eval.tournament.report import format_report, make_report, write_report

__all__ = ["CHECKDOWN", "FORMAT", "ResultStore", "TournamentConfig", "TournamentError", "fingerprint",
           "format_report", "load_config", "make_report", "pairs", "parse_config", "read_raw", "run_tournament",
           "schedule", "write_report"]
