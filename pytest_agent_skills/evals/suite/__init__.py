"""A skill's evals run many times in each configuration: the output folder, calibration,
several models."""
