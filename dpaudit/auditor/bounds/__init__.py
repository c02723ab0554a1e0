"""Confidence bounds on ε and δ: exact binomial bounds, sequential looks, weighted (importance-sampled) bounds."""
