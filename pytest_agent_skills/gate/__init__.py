"""The CI gate of a skill repository: the numbers a gate reads (the tokens each skill costs an
agent, which skills have evals and recordings), the Markdown job summary, and the steps of the
GitHub Action (``action.yml``) as ``agent-skills ci``."""
