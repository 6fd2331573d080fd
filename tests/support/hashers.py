from django.contrib.auth.hashers import Argon2PasswordHasher


class QuickArgon2PasswordHasher(Argon2PasswordHasher):
    """Argon2 with a tiny cost: same algorithm and format, milliseconds per hash."""

    algorithm = "argon2"
    time_cost = 1
    memory_cost = 64
    parallelism = 1
