"""The game rules as pure functions on small dataclasses; randomness is injected."""
