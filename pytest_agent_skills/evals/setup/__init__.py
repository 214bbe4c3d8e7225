"""What an eval starts from: the skill's eval files, the settings and options, the token
budget and the dry run's plan, where the commands run."""
