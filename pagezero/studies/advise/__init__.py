"""pagezero advise: the kernel per extent, the knee and the batch per latency budget."""
