"""What a run leaves on disk and how it is read back: the tidy results store (:mod:`.results`), the one atomic
write (:mod:`.io`), the one conversion to plain data (:mod:`.plain`), damaged and leftover files (:mod:`.damaged`),
each cell's run record and its freshness (:mod:`.provenance`), work folders (:mod:`.work_dirs`), the user cache
(:mod:`.user_cache`) and the one module that talks to git (:mod:`.gitinfo`).  Readers never write."""
