"""Shared by every test module.

pytester's inline runs (``runpytest``) drop the modules first imported during a run. The plugin
imports PyYAML only when a skill or scenario is parsed, so that would happen inside such a run;
PyYAML's C loader keeps the node classes of its first import, and a re-imported ``yaml`` module
would no longer recognise them. Importing it here, once, keeps one ``yaml`` for the session.
"""

import yaml  # noqa: F401

# The real model server's report hook: a failed test that used the server shows its log.
pytest_plugins = ["tests.support.realmodel"]
