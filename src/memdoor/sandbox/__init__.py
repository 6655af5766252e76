"""Running untrusted candidate code against tests, isolated, with limits. Results are verdicts, never exceptions."""
