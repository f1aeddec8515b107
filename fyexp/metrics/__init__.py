"""Evaluation metrics of the fractional-posterior VAEs: the evidence breakdown of frac Tables 2, 6, 7, 9
(:mod:`.evidence`), the degeneracy statistics of Table 8 (:mod:`.degeneracy`) and FID with its offline proxy
(:mod:`.fid`); and the clustering scores of FYVI Table 1 (:mod:`.clustering`)."""
