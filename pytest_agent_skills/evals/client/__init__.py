"""The one programmatic entry of evals: a client configured once, a method per job."""
