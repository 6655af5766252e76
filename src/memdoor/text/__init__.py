"""Answer clean-up: the code out of a model's answer, without demo lines or console output."""
