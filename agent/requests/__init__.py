"""Is this message a request for a suggestion, and of what: the learned side of the plan."""
