"""Jarvis settings: one file, every knob a JARVIS_* environment variable.

See docs/configuration.md for the full list. A malformed value stops startup
with an error naming the variable (jarvis_site.env).
"""

from __future__ import annotations

# Must run before anything imports Django's sqlite backend: see sqlite_compat.
from jarvis_site.sqlite_compat import ensure_loadable_sqlite

SQLITE_MODULE = ensure_loadable_sqlite()

import os  # noqa: E402
import re  # noqa: E402
import secrets  # noqa: E402
from pathlib import Path  # noqa: E402

from django.core.exceptions import ImproperlyConfigured  # noqa: E402

from jarvis_site.env import (  # noqa: E402
    env_bool,
    env_channel_layers,
    env_choice,
    env_int,
    env_list,
    env_networks,
    env_origins,
    env_path,
    env_str,
    env_timezone,
    env_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("JARVIS_DEBUG", False)

# Every Jarvis process (web, worker, CLI) loads these settings first: from here
# on, what it creates is readable by this account only (apps/core/filemodes.py).
os.umask(0o077)

# --- Data directory: the database, the Huey queue, uploads and drafts live here.
DATA_DIR = env_path("JARVIS_DATA_DIR", BASE_DIR / "var")
DATA_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
DATABASE_FILE = env_path("JARVIS_DB_FILE", DATA_DIR / "jarvis.sqlite3")
HUEY_FILE = env_path("JARVIS_HUEY_FILE", DATA_DIR / "huey.sqlite3")
UPLOADS_DIR = DATA_DIR / "uploads"
DRAFTS_DIR = DATA_DIR / "drafts"
VAULTS_ROOT = env_path("JARVIS_VAULTS_ROOT", DATA_DIR / "vaults")


def _secret_key() -> str:
    """JARVIS_SECRET_KEY, else a key generated once into the data dir (0600)."""
    explicit = env_str("JARVIS_SECRET_KEY")
    if explicit:
        return explicit
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        # O_EXCL: two processes starting at once must not write different keys.
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(50))
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()

# Fernet keys for secrets at rest (API keys, SSH credentials): the first
# encrypts, all decrypt. Empty: a key generated into DATA_DIR/fernet.key.
FERNET_KEYS = env_list("JARVIS_FERNET_KEYS", [])

ALLOWED_HOSTS = env_list("JARVIS_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("JARVIS_CSRF_TRUSTED_ORIGINS", [])
# A websocket is accepted only from a page of this site: the Origin's scheme,
# host and port must be the ones the socket was opened on, or one of these
# (apps.core.origins).
ALLOWED_ORIGINS = env_origins("JARVIS_ALLOWED_ORIGINS", [])

# --- TLS. Production (DEBUG off) assumes HTTPS, normally terminated by nginx in
# front of daphne. A plain-HTTP LAN install sets JARVIS_HTTPS=false.
HTTPS = env_bool("JARVIS_HTTPS", not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("JARVIS_HSTS_SECONDS", 31_536_000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("JARVIS_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("JARVIS_HSTS_PRELOAD", False)
# --- The reverse proxy (nginx, deploy/). Its X-Forwarded-For (the client's
# address: sign-in throttling) and X-Forwarded-Proto (https) are believed only
# on connections from these addresses (apps.core.middleware.ClientAddressMiddleware);
# from anywhere else they are dropped. Behind nginx on the same host that is
# loopback, the default whenever Jarvis is served over HTTPS.
TRUSTED_PROXIES = env_networks(
    "JARVIS_TRUSTED_PROXIES",
    ["127.0.0.1", "::1"] if env_bool("JARVIS_TRUST_PROXY_HEADERS", HTTPS) else [],
)
if TRUSTED_PROXIES:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_PRELOAD:
    # HSTS preload lists are for public domains submitted to browser vendors; a
    # household server on a LAN name cannot be preloaded. Opt in with
    # JARVIS_HSTS_PRELOAD=true if yours is a public domain (docs/configuration.md).
    SILENCED_SYSTEM_CHECKS.append("security.W021")

SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_AGE = env_int("JARVIS_SESSION_DAYS", 30, minimum=1) * 24 * 3600
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the page, not the cookie
CSRF_FAILURE_VIEW = "apps.core.views.csrf_failure"

# --- Applications
INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "channels",
    "huey.contrib.djhuey",
    "apps.core",
    "apps.accounts",
    "apps.instance",
    "apps.llm",
    "apps.library",
    "apps.projects",
    "apps.chats",
    "apps.drafts",
    "apps.digest",
    "apps.agents",
    "apps.mcp",
    "apps.websearch",
    "apps.toolbox",
    "apps.voice",
    "apps.demo",
]

MIDDLEWARE = [
    # First: everything after it (the HTTPS redirect included) sees the client's
    # address and scheme, or the proxy's headers dropped when it is not trusted.
    "apps.core.middleware.ClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Before whitenoise so static files get the same headers as pages.
    "apps.core.middleware.SecurityHeadersMiddleware",
    "apps.core.middleware.StaticFilesMiddleware",  # whitenoise, async-capable
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "jarvis_site.urls"
ASGI_APPLICATION = "jarvis_site.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "apps.core.context_processors.shell",
            ],
        },
    },
]

# --- Database: one SQLite file shared by web, worker and CLI (docs/architecture.md).
DATABASES = {
    "default": {
        "ENGINE": "jarvis_site.db",
        "NAME": DATABASE_FILE,
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            # Python-level busy handler in seconds; the backend also sets the pragma.
            "timeout": 10,
        },
        "TEST": {"NAME": env_path("JARVIS_TEST_DB_FILE", DATA_DIR / "test_jarvis.sqlite3")},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Accounts
AUTH_USER_MODEL = "accounts.User"
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "accounts:login"
LOGIN_FAILURES_PER_USERNAME = env_int("JARVIS_LOGIN_FAILURES_PER_USERNAME", 5, minimum=1)
LOGIN_FAILURES_PER_IP = env_int("JARVIS_LOGIN_FAILURES_PER_IP", 10, minimum=1)
LOGIN_THROTTLE_SECONDS = env_int("JARVIS_LOGIN_THROTTLE_SECONDS", 300, minimum=1)

# --- Internationalisation
LANGUAGE_CODE = "en-us"
TIME_ZONE = env_timezone("JARVIS_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- Static files: whitenoise serves them from STATIC_ROOT (collectstatic).
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env_path("JARVIS_STATIC_ROOT", DATA_DIR / "static")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "apps.core.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = DEBUG
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
MEDIA_ROOT = UPLOADS_DIR

# --- Realtime: one web process, so the in-memory channel layer is enough.
# Running several daphne processes would need a shared layer (docs/architecture.md).
# The channel layer: in memory (one web process) unless JARVIS_CHANNEL_LAYER names a
# Redis (redis://host:port/db), which every web process and the worker then share:
# notices written by the worker reach open pages through it, a sign-out closes the
# session's sockets in every process (docs/deploy.md "More than one web process").
CHANNEL_LAYERS = env_channel_layers("JARVIS_CHANNEL_LAYER")
# How often an open websocket re-checks that its session still exists (a user
# disabled from the CLI loses their sockets within this many seconds).
WEBSOCKET_SESSION_CHECK_SECONDS = env_int("JARVIS_WS_SESSION_CHECK_SECONDS", 60, minimum=1)
# How often an open page asks for notices the channel layer could not bring it
# (the worker's, with the in-memory layer; apps/core/notices.py).
NOTICE_CATCH_UP_SECONDS = env_int("JARVIS_NOTICE_CATCH_UP_SECONDS", 10, minimum=1)

# --- Worker: Huey on its own SQLite file, never the app database.
HUEY = {
    "huey_class": "huey.SqliteHuey",
    "name": "jarvis",
    "filename": str(HUEY_FILE),
    "immediate": False,
    "results": False,
    "consumer": {
        "workers": env_int("JARVIS_WORKER_THREADS", 2, minimum=1),
        "worker_type": "thread",
        "periodic": True,
        "check_worker_health": True,
    },
}
JOB_RUNS_KEEP_DAYS = env_int("JARVIS_JOB_RUNS_KEEP_DAYS", 30, minimum=1)
# Liveness (apps/core/heartbeat.py): the worker writes a heartbeat this often;
# one older than the stale age turns the header badge and /healthz red.
HEARTBEAT_SECONDS = env_int("JARVIS_HEARTBEAT_SECONDS", 30, minimum=1)
HEARTBEAT_STALE_SECONDS = env_int("JARVIS_HEARTBEAT_STALE_SECONDS", 120, minimum=2)
if HEARTBEAT_STALE_SECONDS <= HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "JARVIS_HEARTBEAT_STALE_SECONDS: expected more than JARVIS_HEARTBEAT_SECONDS "
        f"({HEARTBEAT_SECONDS}), got {HEARTBEAT_STALE_SECONDS}"
    )
# A job still running after this long is marked failed (its work is abandoned).
JOB_TIME_LIMIT_MINUTES = env_int("JARVIS_JOB_TIME_LIMIT_MINUTES", 60, minimum=1)

# --- Library
EMBEDDING_MODEL = env_str("JARVIS_EMBEDDING_MODEL", "all-MiniLM-L6-v2-onnx-int8")
EMBEDDING_THREADS = env_int("JARVIS_EMBEDDING_THREADS", 2, minimum=1)
UPLOAD_MAX_MB = env_int("JARVIS_UPLOAD_MAX_MB", 50, minimum=1)
# A PDF inbox file modified more recently than this may still be being written.
INBOX_QUIET_SECONDS = env_int("JARVIS_INBOX_QUIET_SECONDS", 30, minimum=0)

# --- Parsing untrusted files: a child process with limits (docs/library.md "Limits").
# The long lane: one parse at a time, with the full limits.
PARSE_TIMEOUT_SECONDS = env_int("JARVIS_PARSE_TIMEOUT_SECONDS", 300, minimum=5)
PARSE_CPU_SECONDS = env_int("JARVIS_PARSE_CPU_SECONDS", 300, minimum=5)
# Address space a parse may add to the parser process's own (~1 GB mapped, mostly shared).
PARSE_MEMORY_MB = env_int("JARVIS_PARSE_MEMORY_MB", 1024, minimum=64)
# The quick lane every file tries first: a file that takes longer, or makes
# more passages than this, waits for the long lane instead of holding a thread.
PARSE_QUICK_SECONDS = env_int("JARVIS_PARSE_QUICK_SECONDS", 10, minimum=1)
PARSE_QUICK_MAX_CHUNKS = env_int("JARVIS_PARSE_QUICK_MAX_CHUNKS", 300, minimum=1)
# OCR (scanned PDF pages, images) runs only in the long lane. Its time limit
# there grows by OCR_PAGE_SECONDS for each scanned page (at most OCR_MAX_PAGES
# are read; later pages are skipped with a warning).
OCR_MAX_PAGES = env_int("JARVIS_OCR_MAX_PAGES", 100, minimum=0)
OCR_PAGE_SECONDS = env_int("JARVIS_OCR_PAGE_SECONDS", 6, minimum=1)
# Format caps, checked before parsing (apps/library/ingest/parsing/limits.py).
MAX_PDF_PAGES = env_int("JARVIS_MAX_PDF_PAGES", 2000, minimum=1)
MAX_UNPACKED_MB = env_int("JARVIS_MAX_UNPACKED_MB", 50, minimum=1)
MAX_ZIP_ENTRIES = env_int("JARVIS_MAX_ZIP_ENTRIES", 5000, minimum=1)
MAX_ZIP_RATIO = env_int("JARVIS_MAX_ZIP_RATIO", 100, minimum=2)
MAX_CHUNKS = env_int("JARVIS_MAX_CHUNKS", 5000, minimum=1)
MAX_TEXT_MB = env_int("JARVIS_MAX_TEXT_MB", 20, minimum=1)
# PDF page previews: rendered in the same kind of child, a few at a time.
PREVIEW_TIMEOUT_SECONDS = env_int("JARVIS_PREVIEW_TIMEOUT_SECONDS", 20, minimum=1)
PREVIEW_MEMORY_MB = env_int("JARVIS_PREVIEW_MEMORY_MB", 512, minimum=64)
PREVIEW_CONCURRENCY = env_int("JARVIS_PREVIEW_CONCURRENCY", 2, minimum=1)
PREVIEW_CACHE_DIR = DATA_DIR / "cache" / "previews"

# --- Chat
CHAT_MAX_CHARS = env_int("JARVIS_CHAT_MAX_CHARS", 32_000, minimum=100)
CHAT_MAX_TOOL_ROUNDS = env_int("JARVIS_CHAT_MAX_TOOL_ROUNDS", 6, minimum=1)
# Compact (summarise earlier turns) when the request passes this share of the
# model's context length (when the catalogue knows the length).
CHAT_COMPACT_PERCENT = env_int("JARVIS_CHAT_COMPACT_PERCENT", 75, minimum=10)
# A model whose context length the catalogue does not know is taken to have this many tokens.
CHAT_DEFAULT_CONTEXT_TOKENS = env_int("JARVIS_CHAT_DEFAULT_CONTEXT_TOKENS", 8192, minimum=1024)
CHAT_REQUEST_TIMEOUT_SECONDS = env_int("JARVIS_CHAT_TIMEOUT_SECONDS", 120, minimum=5)
# Jarvis searches the notes itself before the model's first round (apps/chats/first_search.py);
# off only to measure the path where the model must call the search tool.
CHAT_FIRST_SEARCH = env_bool("JARVIS_CHAT_FIRST_SEARCH", True)
# A reply's own budget, over all its rounds: tokens written and seconds of writing
# (a small model's greedy run-away otherwise writes for ten minutes).
CHAT_REPLY_MAX_TOKENS = env_int("JARVIS_CHAT_REPLY_MAX_TOKENS", 1500, minimum=64)
CHAT_REPLY_SECONDS = env_int("JARVIS_CHAT_REPLY_SECONDS", 300, minimum=10)
# One person's send flood (apps/chats/flood.py): replies of theirs running at once,
# and replies started in the last minute. Others are unaffected.
CHAT_MAX_RUNNING_PER_PERSON = env_int("JARVIS_CHAT_MAX_RUNNING_PER_PERSON", 3, minimum=1)
CHAT_MAX_REPLIES_PER_MINUTE = env_int("JARVIS_CHAT_MAX_REPLIES_PER_MINUTE", 20, minimum=1)

# --- Agent chats: the terminal panel (apps/agents/terminal/)
# A terminal nobody watches and nobody types into is closed after this long.
TERMINAL_IDLE_SECONDS = env_int("JARVIS_TERMINAL_IDLE_SECONDS", 1800, minimum=10)
# How often each open terminal is held against its owner's rights (apps/agents/access.py):
# a permission or a share taken away ends the shell within this many seconds.
TERMINAL_ACCESS_CHECK_SECONDS = env_int("JARVIS_TERMINAL_ACCESS_CHECK_SECONDS", 2, minimum=1)
# Output kept per terminal for a reload, a second tab or a dropped viewer
# (at most 512 KiB: a tab starts with all of it queued).
TERMINAL_SCROLLBACK_BYTES = env_int("JARVIS_TERMINAL_SCROLLBACK_BYTES", 512 * 1024, minimum=4096)

# --- Drafts: the sandbox the assistant writes into (apps/drafts/sandbox.py)
DRAFTS_ROOT = env_path("JARVIS_DRAFTS_DIR", DATA_DIR / "drafts")
DRAFTS_EXTENSIONS = tuple(
    env_list("JARVIS_DRAFTS_EXTENSIONS", [".md", ".tex", ".bib", ".txt", ".csv"])
)
DRAFTS_MAX_FILE_BYTES = env_int("JARVIS_DRAFTS_MAX_FILE_BYTES", 2_000_000, minimum=1_000)
# Snapshots kept per file; the oldest go first.
DRAFTS_SNAPSHOTS_KEPT = env_int("JARVIS_DRAFTS_SNAPSHOTS_KEPT", 50, minimum=1)
# Building PDFs (latexmk, pandoc) in a bwrap sandbox: apps/drafts/toolchain.py.
DRAFTS_COMPILE_TIMEOUT_SECONDS = env_int("JARVIS_DRAFTS_COMPILE_TIMEOUT_SECONDS", 180, minimum=5)
DRAFTS_PDF_MARGIN = env_str("JARVIS_DRAFTS_PDF_MARGIN", "2cm")
# Builds at a time: per person, and for the whole instance; others queue.
DRAFTS_BUILDS_PER_PERSON = env_int("JARVIS_DRAFTS_BUILDS_PER_PERSON", 1, minimum=1)
DRAFTS_BUILDS_AT_ONCE = env_int("JARVIS_DRAFTS_BUILDS_AT_ONCE", 2, minimum=1)
# The same rule as apps.drafts.toolchain.MARGIN: the value reaches pandoc's LaTeX.
if not re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{1,3})?(?:cm|mm|in|pt)", DRAFTS_PDF_MARGIN):
    raise ImproperlyConfigured(
        "JARVIS_DRAFTS_PDF_MARGIN: expected a length such as 2cm, 15mm, 0.75in or 36pt, "
        f"got {DRAFTS_PDF_MARGIN!r}"
    )

# --- Fetching from the web (SSRF-guarded: apps/core/fetch.py)
FETCH_TIMEOUT_SECONDS = env_int("JARVIS_FETCH_TIMEOUT_SECONDS", 20, minimum=1)
FETCH_MAX_MB = env_int("JARVIS_FETCH_MAX_MB", 25, minimum=1)
# Hosts (host or host:port) exempt from the private-address rule: a LAN mirror,
# a test server. Everything else on a private, loopback or link-local address is refused.
FETCH_ALLOW_HOSTS = env_list("JARVIS_FETCH_ALLOW_HOSTS", [])
FETCH_USER_AGENT = "Jarvis/0.1 (self-hosted household knowledge base)"
ARXIV_API_URL = env_url("JARVIS_ARXIV_API_URL", "https://export.arxiv.org/api")
ARXIV_PDF_URL = env_url("JARVIS_ARXIV_PDF_URL", "https://arxiv.org/pdf")
ARXIV_DELAY_SECONDS = env_int("JARVIS_ARXIV_DELAY_SECONDS", 3, minimum=0)

# --- Paper digest (apps/digest; docs/digest.md)
BIORXIV_API_URL = env_url("JARVIS_BIORXIV_API_URL", "https://api.biorxiv.org")
# A digest run renews its claim as it works; one not renewed for this long
# belongs to a worker that died and may be taken over by the next run.
DIGEST_CLAIM_STALE_MINUTES = env_int("JARVIS_DIGEST_CLAIM_STALE_MINUTES", 30, minimum=5)
# Wait for the scoring model's first token (a local model reading a long batch is slow).
DIGEST_MODEL_TIMEOUT_SECONDS = env_int("JARVIS_DIGEST_MODEL_TIMEOUT_SECONDS", 300, minimum=10)

# --- Logging: to stderr; systemd's journal keeps it.
LOG_LEVEL = env_choice("JARVIS_LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR"))
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"level": "INFO"},
        # A handler here stops run_huey adding its own (which doubled every line).
        "huey": {"level": "INFO", "handlers": ["stderr"], "propagate": False},
        "daphne": {"level": "WARNING"},
        # asyncssh logs every connection and channel at INFO; apps.agents logs
        # what a person did, and failures reach them as messages.
        "asyncssh": {"level": "WARNING"},
    },
}
