from tests.export.tiny_export import tiny_export  # noqa: F401  (the session fixture)
