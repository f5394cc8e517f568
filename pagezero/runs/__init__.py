"""Fresh processes: runs=N around any measurement (the public memset, faults, ...), sweeps over
grids of parameters, and the worker processes both use."""
