"""Settings -> options, without pytest: typed builders that read the resolved settings.

Each module declares the settings of one concern (:mod:`.roots`, :mod:`.validation`,
:mod:`.sources`) and builds that concern's options from any
:class:`~pytest_agent_skills.settings.SettingValues`: the pytest plugin's
(:class:`~pytest_agent_skills.settings.PluginSettings`) or a command's
(:class:`~pytest_agent_skills.config.file_settings.FileSettings`).  The pytest glue and
``agent-skills`` both call these builders, so both turn one configuration into the same
options and the same messages; nothing here imports pytest.

The package imports nothing itself: each module loads when first used.
"""
