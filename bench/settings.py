"""Benchmark server: the real settings plus a trivial endpoint to compare against."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
