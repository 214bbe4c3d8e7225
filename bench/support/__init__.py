"""Helpers the bench scripts and ``scripts/`` need, which the tests import too: the real model
server, a run as a normal user, eval output folders written by hand, the word-overlap routing
model and its repositories, recording options.  Nothing here imports ``tests`` (a test in
``tests/packaging`` keeps it so): the tests stand on these, not the other way round."""
