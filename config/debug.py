"""What Django's debug page may show."""

import re

from django.views.debug import SafeExceptionReporterFilter


class HideServiceAddresses(SafeExceptionReporterFilter):
    """Django's debug page (DEBUG, which staging may run with) listed every setting whose name
    holds no KEY, SECRET or PASS: REDIS_URL, CELERY_BROKER_URL and the cache's LOCATION carry
    the services' passwords in their addresses. Those are masked too."""

    hidden_settings = re.compile(
        "API|AUTH|TOKEN|KEY|SECRET|PASS|SIGNATURE|HTTP_COOKIE|URL|BROKER|BACKEND|LOCATION|DSN",
        flags=re.IGNORECASE,
    )
