"""Numbers from runs: statistics, evidence and verdicts, benchmark.json and benchmark.md."""
