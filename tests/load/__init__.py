"""Deadlines and load: concurrent clients against a real streamable-HTTP server."""
