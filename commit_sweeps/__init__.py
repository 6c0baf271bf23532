"""commit-sweeps: the one command line over the simulator, the sweeps, the store and the dashboard."""
