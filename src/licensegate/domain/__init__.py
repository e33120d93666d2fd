"""Business rules, one module per concept. Knows nothing of HTTP."""
