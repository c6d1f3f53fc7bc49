"""Versioned prompt templates and answer parsing."""
