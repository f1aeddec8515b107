"""The bottom layer every package of fyexp speaks: the user-facing errors (:mod:`.errors`), every setting's domain
and the one check of it (:mod:`.constraints`), and how numbers and text are spelled for a reader
(:mod:`.words`, :mod:`.latex`).  It imports nothing else of fyexp."""
