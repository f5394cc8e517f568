"""Results as values: Result (one run), ResultSet (what a user holds), their files and points."""
