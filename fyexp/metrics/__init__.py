"""Evaluation metrics: the evidence breakdown of frac Tables 2, 6, 7, 9 (:mod:`.evidence`), the degeneracy
statistics of Table 8 (:mod:`.degeneracy`), FID with its offline proxy (:mod:`.fid`) and the generation scores
(:mod:`.generation`); the l1 reconstruction errors of FYVI Table 2 (:mod:`.reconstruction`); the clustering scores
of FYVI Table 1 (:mod:`.clustering`)."""
