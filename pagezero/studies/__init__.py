"""Questions answered from measurements and their analysis: advise, predict and the report."""
