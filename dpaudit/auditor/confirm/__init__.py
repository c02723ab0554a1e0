"""Confirmation: the chosen events tested on fresh samples, with value looks and futility stops."""
