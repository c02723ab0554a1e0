"""Sample sources: mechanisms wrapped as samplers, the executors that draw from them, and their tallies."""
