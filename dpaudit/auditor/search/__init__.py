"""The search for events: screening candidate events on the pairs' histograms."""
