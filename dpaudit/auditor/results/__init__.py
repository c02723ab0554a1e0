"""The audit result: its verdict, witnesses, evidence, text and versioned JSON format."""
