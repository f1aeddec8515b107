"""Calibration of fractional posteriors for Gaussian mixtures (Chai & Bonilla, §3.1.3, §5.1, §C).

Modules, in the order an experiment composes them:

- :mod:`~fyexp.calibration.data`        replicated data sets, drawn as the authors drew them
- :mod:`~fyexp.calibration.gaussian`    closed-form Gaussian integrals behind the bound
- :mod:`~fyexp.calibration.cavi`        fractional CAVI and the bound L_γ of eq. (7), vectorized over data sets and γ
- :mod:`~fyexp.calibration.intervals`   credible intervals, coverage κ and length ℓ
- :mod:`~fyexp.calibration.strategies`  choosing γ: R_ℓ, R_ℓ⁻², R_κ; interpolated fractional posteriors
- :mod:`~fyexp.calibration.study`       one setting's table rows (L_γ, C_γ, R_·)
- :mod:`~fyexp.calibration.importance`  importance-sampling estimates of the log-evidence
(the figures and the notes to the tables are the report's: :mod:`fyexp.report.figures.calibration`,
:mod:`fyexp.report.calibration_notes`)
"""
