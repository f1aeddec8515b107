"""Fenchel-Young losses used as observation models and regularizers."""
