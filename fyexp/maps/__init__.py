"""Tsallis ρ-entmax prediction maps (the Ω-regularized argmax of FYVI §2) and their fast variants."""

from fyexp.maps.newton import entmax_newton
from fyexp.maps.tsallis import tsallis_bisect, tsallis_conjugate, tsallis_entmax, tsallis_log, tsallis_negentropy

__all__ = ["tsallis_entmax", "tsallis_bisect", "tsallis_negentropy", "tsallis_conjugate", "tsallis_log", "entmax_newton"]
