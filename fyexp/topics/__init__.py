"""Reading a document model's latent dimensions as topics: top words and embedding coherence."""

from fyexp.topics.coherence import (HashEmbedder, SentenceTransformerEmbedder, load_embedder, mean_pairwise_cosine,
                                    topic_coherence, top_words)

__all__ = ["top_words", "topic_coherence", "mean_pairwise_cosine", "HashEmbedder", "SentenceTransformerEmbedder",
           "load_embedder"]
