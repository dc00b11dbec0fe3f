"""Tests of the table service, its store, its web API and speech."""
