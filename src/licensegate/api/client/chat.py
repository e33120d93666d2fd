"""Client API group module (being written)."""
