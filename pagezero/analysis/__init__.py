"""Statistics between runs, the knee of a rate over extents, and comparisons of result sets."""
