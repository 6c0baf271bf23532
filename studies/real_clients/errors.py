"""``SetupError``: a real client, its catalog or its server could not be set up here (a package or a tool
missing, a server that did not start, a store it cannot write). Its message is one line, shown as it is."""


class SetupError(RuntimeError):
    """One line naming what is missing or failed, and what to do."""
