"""The audit's door and its live run: budgets, the sampler, the schedule, the pipeline loop, refined runs, sessions."""
