"""Fresh processes: runs=N around any measurement, sweeps, and their worker processes."""
