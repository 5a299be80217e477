"""Settings for the test suite: the real settings, in the development environment."""

import os

os.environ.setdefault("ENVIRONMENT", "development")

from .settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CELERY_TASK_ALWAYS_EAGER = True

if "versions" in CACHES:  # noqa: F405 - the suite's data versions, apart from `make run`'s
    import tempfile

    CACHES["versions"]["LOCATION"] = tempfile.mkdtemp(prefix="breja-test-versions-")  # noqa: F405
