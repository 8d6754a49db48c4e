"""The simulated board controller and virtual players."""
