"""Breja settings, read from the environment (see the table in README.md)."""

import os
from pathlib import Path

import environ
from corsheaders.defaults import default_headers
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


class _Env(environ.Env):
    """django-environ, but for a malformed value: its int and float raised a bare ValueError
    that named no variable, and its bool read any other word (`ture`) as false."""

    YES = frozenset({"true", "on", "ok", "y", "yes", "1"})  # django-environ's own true words
    NO = frozenset({"false", "off", "n", "no", "0", ""})

    def bool(self, var, default=environ.Env.NOTSET):
        raw = os.environ.get(var)
        if raw is not None and raw.strip().lower() not in self.YES | self.NO:
            raise ImproperlyConfigured(f"{var}: {raw!r} is neither true nor false")
        return super().bool(var, default=default)

    def int(self, var, default=environ.Env.NOTSET):
        try:
            return super().int(var, default=default)
        except ValueError:
            raise ImproperlyConfigured(
                f"{var}: {os.environ.get(var)!r} is not a whole number"
            ) from None

    def float(self, var, default=environ.Env.NOTSET):
        try:
            return super().float(var, default=default)
        except ValueError:
            raise ImproperlyConfigured(f"{var}: {os.environ.get(var)!r} is not a number") from None


env = _Env()

DEBUG = env.bool("DEBUG", default=False)
ENVIRONMENT = env.str("ENVIRONMENT", default="development" if DEBUG else "production")
if ENVIRONMENT not in {"production", "staging", "development"}:
    raise ImproperlyConfigured("ENVIRONMENT must be production, staging or development")

SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    # DEBUG alone does not excuse it: a staging or production server run with DEBUG on would
    # encrypt contacts and hash addresses under this published key.
    if ENVIRONMENT != "development":
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is required unless ENVIRONMENT=development (the default with DEBUG)"
        )
    SECRET_KEY = "dev-only-insecure-key-never-used-in-production"

SITE_NAME = env.str("SITE_NAME", default="Breja")
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")
ATTRIBUTION = f"{SITE_NAME} ({SITE_URL}), ODbL 1.0"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "beers",
    "submissions",
    "outreach",
    "datasets",
    "mcp_bridge",
]

MIDDLEWARE = [
    "beers.clients.proxy_headers_middleware",  # X-Forwarded-Proto from trusted proxies only
    "django.middleware.security.SecurityMiddleware",
    # Admin and page assets only; datasets change every few minutes and are served by datasets/.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "corsheaders.middleware.CorsMiddleware",
    "beers.api.middleware.ApiOuterErrorMiddleware",
    "beers.hosts.allowed_host_middleware",  # another Host: the site's 400, DEBUG or not
    "django.contrib.sessions.middleware.SessionMiddleware",
    "beers.locale.AdminLocaleMiddleware",  # Accept-Language for the admin only
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "beers.csp.content_security_policy",  # the site's pages: no script, no outside resource
    # Innermost and sync-only on purpose: under ASGI, Django then runs the whole chain in one
    # worker-thread hop instead of one per hook of each middleware (measured: 4.8 -> 1.2 ms for
    # an empty view). It sees every response and exception of the views below it.
    "beers.api.middleware.ApiErrorMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "config.asgi.application"

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
                "django.template.context_processors.i18n",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'breja.sqlite3'}"),
}
if "DATABASE_URL" not in os.environ:
    VAR_DIR.mkdir(parents=True, exist_ok=True)  # the embedded database's folder, on a fresh clone
_db = DATABASES["default"]
if _db["ENGINE"] == "django.db.backends.postgresql":
    # No persistent connections under ASGI (Django ticket 33497): a pool instead, bounded waits.
    _db["CONN_MAX_AGE"] = 0
    _opts = _db.setdefault("OPTIONS", {})
    _opts.setdefault("connect_timeout", env.int("DB_CONNECT_TIMEOUT", default=3))
    # Live reads are short index scans: starting parallel workers costs more than it saves.
    _opts.setdefault(
        "options",
        f"-c statement_timeout={env.int('DB_STATEMENT_TIMEOUT_MS', default=5000)}"
        f" -c max_parallel_workers_per_gather={env.int('DB_PARALLEL_WORKERS', default=0)}",
    )
    # Server-side binding and prepared statements: the live reads send the same SQL text for
    # every city (beers/selectors/prepared.py), so psycopg prepares each on a pooled connection
    # after a few runs and PostgreSQL stops planning it again (Django's default is never to
    # prepare; measured on 1M prices, the search's query: 1.6 -> 0.85 ms).
    # Turn off behind a transaction-mode pooler such as PgBouncer < 1.21.
    _server_binding = env.bool("DB_SERVER_SIDE_BINDING", default=True)
    _opts.setdefault("server_side_binding", _server_binding)
    _opts.setdefault(
        "prepare_threshold", env.int("DB_PREPARE_THRESHOLD", default=5) if _server_binding else None
    )
    if env.bool("DB_POOL", default=True):
        _opts.setdefault(
            "pool",
            {
                "min_size": 1,
                "max_size": env.int("DB_POOL_MAX_SIZE", default=10),
                "timeout": env.float("DB_POOL_TIMEOUT", default=3.0),
                # A connection lost in an outage is tried again after 1, 2, 4 … s; past this
                # the pool gives up and the next request starts afresh. psycopg_pool's 5
                # minutes let its delay grow to 64 s: service came back up to 75 s after
                # the database (outage audit, 9 stop/start cycles).
                "reconnect_timeout": env.float("DB_POOL_RECONNECT_TIMEOUT", default=10.0),
            },
        )
else:
    # The embedded database serves `make run`, where writes may come at once: each transaction
    # takes the write lock when it begins (IMMEDIATE) and waits up to `timeout` seconds for it,
    # rather than failing with "database is locked" when a read turns into a write (SQLite's
    # deferred default); the WAL journal lets reads go on during a write.
    SQLITE_OPTIONS = {
        "timeout": 10,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL",
    }
    for _name, _value in SQLITE_OPTIONS.items():
        _db.setdefault("OPTIONS", {}).setdefault(_name, _value)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Worker threads of the read path (config/asgi.py): GET/HEAD/OPTIONS run on a fixed pool; as
# many as the database pool has connections, so no read waits on a connection with a thread.
WEB_READ_THREADS = env.int("WEB_READ_THREADS", default=env.int("DB_POOL_MAX_SIZE", default=10))

# --- Cache, Celery ----------------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="breja"),
            "OPTIONS": {
                "SOCKET_CONNECT_TIMEOUT": 1,
                "SOCKET_TIMEOUT": 1,
            },
        }
    }
else:
    # Without Redis each process caches its own answers; the data versions that say when
    # they are stale (beers/data_version.py) are files beside the database, so an import or
    # `load_demo` run next to the server makes its cached answers stale too.
    if _db["ENGINE"] == "django.db.backends.sqlite3" and str(_db["NAME"]) != ":memory:":
        _versions_dir = f"{_db['NAME']}-versions"
    else:
        _versions_dir = VAR_DIR / "versions" / str(_db["NAME"])
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "breja",
            "OPTIONS": {"MAX_ENTRIES": 20000},
        },
        "versions": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": env.str("VERSIONS_DIR", default=str(_versions_dir)),
            # a version forgotten to make room would make old answers look current
            "OPTIONS": {"MAX_ENTRIES": 10**9},
        },
    }

# (an eager task still takes a producer: "memory://" with no host made kombu warn "No hostname
# was supplied" on every task `make run` and its commands ran)
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "memory://localhost/")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
# A broker that accepts connections and never answers held a request that queues a task (an
# opt-out's confirmation, a menu photo's reading) until it came back: 753 s. Each publish now
# waits at most CELERY_BROKER_SOCKET_TIMEOUT per try, two tries; a task not queued is taken up
# by the beat's jobs (opt-out confirmations owed, menu photos unread).
CELERY_BROKER_SOCKET_TIMEOUT = env.float("CELERY_BROKER_SOCKET_TIMEOUT", default=2.0)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_timeout": CELERY_BROKER_SOCKET_TIMEOUT,
    "socket_connect_timeout": CELERY_BROKER_SOCKET_TIMEOUT,
}
CELERY_BROKER_CONNECTION_TIMEOUT = CELERY_BROKER_SOCKET_TIMEOUT
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Reading menu photos (OCR, about 30 s of CPU for 3 photos) has a queue of its own, so that a
# worker of its own (`-Q ocr`) keeps it from holding up the exports and the e-mails (10 uploads
# put the 5-minute export 140 s late). A worker started without -Q takes both queues.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery"), Queue("ocr"))
CELERY_TASK_ROUTES = {
    "submissions.tasks.menu_photos_process": {"queue": "ocr"},
    "submissions.tasks.menu_photos_due": {"queue": "ocr"},
}
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Re-export the open datasets when the data changed or a month ended (datasets/services.py):
# by Celery beat, or inside the web process where there is no beat (make run).
DATASETS_REFRESH_SECONDS = env.float("DATASETS_REFRESH_SECONDS", default=300.0)
DATASETS_REFRESH_IN_PROCESS = env.bool("DATASETS_REFRESH_IN_PROCESS", default=False)
# How often a month's end in a city is looked for (the served pointer alone: no query).
DATASETS_MONTH_END_SECONDS = env.float("DATASETS_MONTH_END_SECONDS", default=60.0)
# No worker (`make run`: tasks run eagerly, inside the request, and the beat's work runs in
# the web process): menu photos are read by the in-process beat, not by a task the 202 waits for.
MENU_PHOTOS_IN_PROCESS = CELERY_TASK_ALWAYS_EAGER and DATASETS_REFRESH_IN_PROCESS
# Menu photos still unread this long after they came are read by the beat's menu_photos_due
# (their task was lost); in process none is queued, so at once.
MENU_PHOTOS_GRACE_SECONDS = env.int(
    "MENU_PHOTOS_GRACE_SECONDS", default=0 if MENU_PHOTOS_IN_PROCESS else 600
)
CELERY_BEAT_SCHEDULE = {
    "datasets-export-if-changed": {
        "task": "datasets.tasks.datasets_export_if_changed",
        "schedule": DATASETS_REFRESH_SECONDS,
    },
    "datasets-export-if-month-ended": {
        "task": "datasets.tasks.datasets_export_if_month_ended",
        "schedule": DATASETS_MONTH_END_SECONDS,
    },
}

# --- Time, languages ---------------------------------------------------------------------------
TIME_ZONE = env.str("TIME_ZONE", default="America/Sao_Paulo")
USE_TZ = True
USE_I18N = True
LANGUAGE_CODE = "pt-br"
LANGUAGES = [("pt-br", "Português (Brasil)"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]

# --- Static files and storages -------------------------------------------------------------------
STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
WHITENOISE_USE_FINDERS = DEBUG
DATASETS_ROOT = Path(env.str("DATASETS_ROOT", default=str(VAR_DIR / "datasets")))
DATASETS_S3_BUCKET = env.str("DATASETS_S3_BUCKET", default="")
# Older generations are deleted this long after they stop being current (the previous one stays).
DATASETS_GRACE_SECONDS = env.int("DATASETS_GRACE_SECONDS", default=900)
# Re-export at least this often even when the change fingerprint did not move.
DATASETS_MAX_AGE_SECONDS = env.int("DATASETS_MAX_AGE_SECONDS", default=3600)
# The export's own statement timeout (a batch job), the delay of an export an approval
# schedules (a burst shares it), and how long one export holds its cache lock at most.
DATASETS_STATEMENT_TIMEOUT_MS = env.int("DATASETS_STATEMENT_TIMEOUT_MS", default=600_000)
DATASETS_EXPORT_DELAY_SECONDS = env.int("DATASETS_EXPORT_DELAY_SECONDS", default=30)
DATASETS_LOCK_SECONDS = env.int("DATASETS_LOCK_SECONDS", default=1800)
# A request body must arrive whole within this many seconds (config/asgi.py): 408 after.
REQUEST_BODY_SECONDS = env.float("REQUEST_BODY_SECONDS", default=60.0)
# A download whose client takes no byte for this long is dropped (config/asgi.py).
DATASETS_SEND_TIMEOUT_SECONDS = env.float("DATASETS_SEND_TIMEOUT_SECONDS", default=60.0)
# The export's PostgreSQL session (a batch job): sort memory and parallel workers per query.
DATASETS_WORK_MEM_MB = env.int("DATASETS_WORK_MEM_MB", default=64)
# PostgreSQL writes the deals and venues files itself (COPY); off = the portable Python path.
DATASETS_COPY = env.bool("DATASETS_COPY", default=True)
DATASETS_PARALLEL_WORKERS = env.int("DATASETS_PARALLEL_WORKERS", default=2)
# The export's own folder: a copy of the last export's deals files (hard links), patched by the
# next export (datasets.patch), and the tree being written before it is uploaded.
DATASETS_WORK_DIR = Path(env.str("DATASETS_WORK_DIR", default=str(VAR_DIR / "datasets-work")))
if DATASETS_S3_BUCKET:
    _datasets_storage = {
        # Sets ContentType and CacheControl on every object.
        "BACKEND": "datasets.storage.DatasetsS3Storage",
        "OPTIONS": {
            "bucket_name": DATASETS_S3_BUCKET,
            "endpoint_url": env.str("DATASETS_S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("DATASETS_S3_REGION", default="") or None,
            "location": env.str("DATASETS_S3_PREFIX", default=""),
            "default_acl": None,
            "file_overwrite": True,
            "querystring_auth": False,
        },
    }
else:
    _datasets_storage = {
        # Follows settings.DATASETS_ROOT at each use (tests point it at a temporary folder).
        "BACKEND": "datasets.storage.DatasetsFileSystemStorage",
    }
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    "datasets": _datasets_storage,
}

# --- API -------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "beers.api.negotiation.IgnoreAcceptHeader",
    "DEFAULT_METADATA_CLASS": "beers.api.metadata.AllowOnly",
    "EXCEPTION_HANDLER": "beers.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # ?format= is our filter (format type or code), not DRF's renderer switch.
    "URL_FORMAT_OVERRIDE": None,
    "COERCE_DECIMAL_TO_STRING": False,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Breja API",
    "DESCRIPTION": "Crowd-sourced beer prices from Brazilian bars, ranked by price per litre.",
    "VERSION": "1.0.0",
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/v1/docs serves ReDoc from our own static files (no CDN, no outside script)
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The static files and the opt-out page are plain Django views: hooks add their paths.
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "datasets.openapi.add_dataset_paths",
        "outreach.openapi.add_optout_paths",
        "beers.api.schema.bound_deal_lists",
        "beers.api.schema.request_body_names",
        "beers.api.schema.text_without_nul",
        "beers.api.schema.retry_after_headers",
        "beers.api.schema.describe_itself",
    ],
    # The same choice sets appear in answers and in write bodies: one name each.
    "ENUM_NAME_OVERRIDES": {
        "DealKindEnum": "beers.models.DealKind.values",
        "VenueKindEnum": "beers.models.VenueKind.values",
    },
}

# The public API (reads, writes, datasets) for any page; not the staff endpoints under
# /api/admin/ (Basic credentials, used from the site itself).
CORS_URLS_REGEX = r"(?s)^/api(?!/admin(/|\Z))(/.*)?\Z"
CORS_ALLOW_ALL_ORIGINS = True
CORS_ALLOW_CREDENTIALS = False
# A page revalidating a dataset file by hand sends If-None-Match (and If-Modified-Since): the
# preflight must allow them, or the browser never sends the request.
# Only the methods some address under /api/ accepts (reads and writes); never PUT or DELETE.
CORS_ALLOW_METHODS = ("GET", "HEAD", "OPTIONS", "POST")
CORS_ALLOW_HEADERS = (*default_headers, "if-none-match", "if-modified-since")
# Browsers hide these from scripts unless exposed: Retry-After (429, 503), a cached answer's
# Age, a dataset file's ETag (for If-None-Match); Last-Modified is safelisted already.
CORS_EXPOSE_HEADERS = ["Retry-After", "Age", "ETag"]

READ_RATE_LIMIT = env.str("READ_RATE_LIMIT", default="120/min")
# A flood stop, not a quota: every endpoint's daily cap (decisions.md: 20) fits in one minute.
WRITE_RATE_LIMIT = env.str("WRITE_RATE_LIMIT", default="240/min")
WRITE_DAILY_CAP = env.int("WRITE_DAILY_CAP", default=20)
# Sign-in attempts at /admin/login/ per client address (a password-guessing stop).
ADMIN_LOGIN_RATE_LIMIT = env.str("ADMIN_LOGIN_RATE_LIMIT", default="20/hour")
TRUSTED_PROXY_CIDRS = env.list("TRUSTED_PROXY_CIDRS", default=[])
TURNSTILE_SECRET_KEY = env.str("TURNSTILE_SECRET_KEY", default="")
TURNSTILE_HOSTNAMES = env.list("TURNSTILE_HOSTNAMES", default=[])
TURNSTILE_TIMEOUT = env.float("TURNSTILE_TIMEOUT", default=3.0)  # seconds, for siteverify
FIELD_ENCRYPTION_KEYS = env.list("FIELD_ENCRYPTION_KEYS", default=[])
# Checked here, as DJANGO_SECRET_KEY is, so that no process starts unable to store an e-mail
# or contact (the first one sent was a 500); beers.crypto also refuses them at use.
_field_keys = [key.strip() for key in FIELD_ENCRYPTION_KEYS if key.strip()]
if not _field_keys and ENVIRONMENT != "development":
    raise ImproperlyConfigured(
        "FIELD_ENCRYPTION_KEYS is required unless ENVIRONMENT=development (the default with DEBUG)"
    )
try:
    for _key in _field_keys:
        Fernet(_key.encode())
except (ValueError, TypeError):
    raise ImproperlyConfigured(
        "FIELD_ENCRYPTION_KEYS must hold Fernet keys (32 url-safe base64 bytes), newest first"
    ) from None
ADDRESS_HASH_KEY = env.str("ADDRESS_HASH_KEY", default=SECRET_KEY)
OUTREACH_SECRET = env.str("OUTREACH_SECRET", default=SECRET_KEY)
DEGRADED_FLAG_PATH = Path(env.str("DEGRADED_FLAG_PATH", default=str(VAR_DIR / "degraded.json")))
LIVE_CACHE_SECONDS = env.int("LIVE_CACHE_SECONDS", default=600)

# --- E-mail -----------------------------------------------------------------------------------
# With DEBUG (make run) messages are written as files under var/mail, not printed: the console
# backend would put recipients' addresses in the server's output, which is a log.
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.filebased.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_FILE_PATH = env.str("EMAIL_FILE_PATH", default=str(VAR_DIR / "mail"))
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default=f"{SITE_NAME} <nao-responda@localhost>")
# Where a bar that opted out by mistake may answer: the confirmation's Reply-To (none: the
# confirmation points to the site instead of asking for a reply to a no-reply sender).
OUTREACH_REPLY_TO = env.str("OUTREACH_REPLY_TO", default="")

# --- Security -------------------------------------------------------------------------------
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
# TLS usually ends at the proxy; production sets SECURE_SSL_REDIRECT=true (see README).
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_REDIRECT_EXEMPT = [r"^api/v1/status$"]
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if TRUSTED_PROXY_CIDRS else None
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# decisions.md: menu photos' 2,200,000 bytes, the largest body any endpoint takes (the views'
# limit for menu photos, and the ASGI router's for every body).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_200_000

# The only login is the admin's: after it, a `next` that is not the site's own (refused as an
# open redirect) leads to the admin, not to Django's /accounts/profile/ (a 404 here).
LOGIN_REDIRECT_URL = "admin:index"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "filters": {
        "redact": {"()": "config.logfilters.RedactSecrets"},
        "unavailable": {"()": "config.logfilters.ThrottleUnavailable"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["redact"],
        },
        "null": {"class": "logging.NullHandler"},
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Request bodies and addresses never reach logs: Django logs only status lines here.
        # Their records carry the request's path; an opt-out path holds its token: masked for
        # every handler (the filter is the logger's), not only ours.
        "django.request": {
            "handlers": ["console"],
            "level": "ERROR",
            "propagate": False,
            "filters": ["redact", "unavailable"],
        },
        "django.server": {"filters": ["redact"]},
        # The MCP SDK logs every stateless request at INFO ("Terminating session").
        "mcp": {"level": "WARNING"},
        # A request naming a host not served is answered 400; Django also logged an ERROR with
        # a 14-line traceback for each, one flood of a log per request anyone may send.
        "django.security.DisallowedHost": {"handlers": ["null"], "propagate": False},
    },
}
DEFAULT_EXCEPTION_REPORTER_FILTER = "config.debug.HideServiceAddresses"
