"""Truncated variational EM (Lücke 2019) for multiple-cause models: truncated posteriors and free energy (shared
with the mixture's top-C′ E-step), the state search of Alg. 1 with Prop. 6, and the EM loop for binary sparse
coding."""

from fyexp.em.tvem.em import TVEM, TVEMResult, log_likelihood
from fyexp.em.tvem.search import StateSearch, init_states, merge, propose, state_codes
from fyexp.em.tvem.truncation import free_energy, keep_top, top_indices, truncated_posterior

__all__ = ["TVEM", "TVEMResult", "log_likelihood", "StateSearch", "init_states", "merge", "propose", "state_codes",
           "free_energy", "keep_top", "top_indices", "truncated_posterior"]
