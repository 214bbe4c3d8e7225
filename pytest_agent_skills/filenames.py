"""The file names the plugin collects, in a module that imports nothing (pytest start-up reads
them before any skill or scenario needs parsing)."""

SKILL_FILE = "SKILL.md"
SCENARIO_SUFFIX = ".scenario.yaml"
