"""Jarvis's database backend: Django's sqlite3 backend plus sqlite-vec and pragmas."""
