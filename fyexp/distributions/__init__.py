"""Probability distributions as ``torch.distributions.Distribution`` subclasses (β-Gaussian, ...)."""
