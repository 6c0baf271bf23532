"""commit_sweeps: the command line, every command's flags, checks and printed answers (``commit-sweeps``)."""
