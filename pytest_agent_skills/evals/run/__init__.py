"""One eval run: the conversation through its cassette, the grader, the run's files and
their bounds, its result."""
