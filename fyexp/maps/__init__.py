"""Tsallis ρ-entmax prediction maps (the Ω-regularized argmax of FYVI §2) and their fast variants."""
