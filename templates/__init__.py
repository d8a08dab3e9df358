"""Files a new pair repository starts with, and prompt templates (package data)."""
