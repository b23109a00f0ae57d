"""Settings of the demo host project.

Every value an operator may change comes from the environment through django-environ; README.md
lists them. A host project that installs webtools needs only ``INSTALLED_APPS``, the URLs and,
optionally, a ``WEBTOOLS`` dict (see ``webtools.conf``).
"""
from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env(
    DEBUG=(bool, False),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost"]),
    ALLOW_PRIVATE_NETWORKS=(bool, False),
    WEBTOOLS_ENCRYPTION_KEYS=(list, []),
)

DEBUG = env("DEBUG")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")

# Development secrets live in a git-ignored folder so that a restarted demo keeps its sessions and can
# still read the API keys it stored. Production sets SECRET_KEY and WEBTOOLS_ENCRYPTION_KEYS instead.
DEV_SECRETS_DIR = BASE_DIR / ".dev-secrets"


def _dev_secret(name: str, make) -> str:
    path = DEV_SECRETS_DIR / name
    if not path.exists():
        DEV_SECRETS_DIR.mkdir(mode=0o700, exist_ok=True)
        path.write_text(make())
        path.chmod(0o600)
    return path.read_text().strip()


def _make_secret_key() -> str:
    from django.core.management.utils import get_random_secret_key

    return get_random_secret_key()


def _make_fernet_key() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


SECRET_KEY = env("SECRET_KEY", default=None) or (_dev_secret("secret_key", _make_secret_key) if DEBUG else None)
if not SECRET_KEY:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("Set the SECRET_KEY environment variable (or DEBUG=true for a development key).")

ENCRYPTION_KEYS = env("WEBTOOLS_ENCRYPTION_KEYS")
if not ENCRYPTION_KEYS and DEBUG:
    ENCRYPTION_KEYS = [_dev_secret("encryption_key", _make_fernet_key)]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular_sidecar",
    "webtools",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "project.urls"

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
            ],
        },
    },
]

WSGI_APPLICATION = "project.wsgi.application"
ASGI_APPLICATION = "project.asgi.application"

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A writing transaction takes SQLite's write lock when it begins, so two saves of one row at once
    # wait their turn (up to 20 s) instead of one failing with "database is locked" (docs/deploy.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 20})
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "project" / "static"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "webtools:login"  # any user signs in there; the admin's login admits staff only
LOGIN_REDIRECT_URL = "home"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}

WEBTOOLS = {
    "ENCRYPTION_KEYS": ENCRYPTION_KEYS,
    "ALLOW_PRIVATE_NETWORKS": env("ALLOW_PRIVATE_NETWORKS"),
    "APP_NAME": env("WEBTOOLS_APP_NAME", default="webtools-demo"),
    "PUBLIC_URL": env("WEBTOOLS_PUBLIC_URL", default="http://127.0.0.1:8000/"),
    # Outbound proxies (docs/deploy.md): http://, https:// or socks5://, credentials in the URL.
    "PROXIES": {
        key: url for key, url in (("fetch", env("WEBTOOLS_FETCH_PROXY", default="")),
                                  ("engines", env("WEBTOOLS_ENGINE_PROXY", default=""))) if url
    },
}

# The demo chat (/chat/): any OpenAI-compatible server. Without a base URL and a model the page says
# how to set them; the key is optional (local servers rarely need one).
OPENAI_BASE_URL = env("OPENAI_BASE_URL", default="")
OPENAI_API_KEY = env("OPENAI_API_KEY", default="")
OPENAI_MODEL = env("OPENAI_MODEL", default="")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"webtools": {"handlers": ["console"], "level": env("WEBTOOLS_LOG_LEVEL", default="INFO")}},
}
