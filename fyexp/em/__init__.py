"""EM for Gaussian mixtures as one loop with pluggable E-steps: standard, hard, ρ-sparse (FYVI §3.3, eq. 21) and
truncated variational (Lücke 2019, Alg. 2)."""

from fyexp.em.estep import EStep, EStepResult, HardEStep, SparseEStep, StandardEStep, TruncatedEStep
from fyexp.em.gaussian import MixtureParams, gaussian_m_step, log_gaussian_density
from fyexp.em.init import authors_torch_init
from fyexp.em.mixture import EMResult, GaussianMixtureEM, zeros_per_sample

__all__ = ["EStep", "EStepResult", "StandardEStep", "HardEStep", "SparseEStep", "TruncatedEStep", "MixtureParams",
           "log_gaussian_density", "gaussian_m_step", "authors_torch_init", "EMResult", "GaussianMixtureEM", "zeros_per_sample"]
