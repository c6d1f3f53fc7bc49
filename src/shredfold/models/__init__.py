"""Models: the request/response contract, the OpenAI-compatible adapter and built-ins."""
