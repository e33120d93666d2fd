"""Seller API group module (being written)."""
