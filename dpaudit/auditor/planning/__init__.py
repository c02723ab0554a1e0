"""The audit's options and plan: sample budgets per phase and seed streams."""
