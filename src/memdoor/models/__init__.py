"""Model clients: OpenAI-compatible HTTP (``openai``), embedded GGUF (``local``), and ``scripted`` for tests."""
