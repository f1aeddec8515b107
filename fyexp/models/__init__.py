"""Neural network models (encoders, decoders) shared by the neural experiments."""
