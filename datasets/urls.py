"""The static dataset files under /api/v1/ (included last: `{city}/{file}` is a wide pattern)."""

from django.urls import re_path

from . import views
from .services import CITY_FILES, TOP_FILES

_names = "|".join(name.replace(".", r"\.") for name in CITY_FILES)
_top = "|".join(name.replace(".", r"\.") for name in TOP_FILES)

urlpatterns = [
    re_path(rf"^(?P<name>{_top})$", views.dataset_file, name="dataset-top-file"),
    re_path(
        rf"^(?P<city>[a-z0-9]+(?:-[a-z0-9]+)*)/(?P<name>{_names})$",
        views.dataset_file,
        name="dataset-city-file",
    ),
]
