"""Where the dataset files live: `storages["datasets"]` (a folder, or an S3 bucket).

Both backends know each file's Content-Type and Cache-Control. On S3 they are stored as object
metadata (ContentType/CacheControl), so a bucket served directly or through a CDN answers with
them too; on a folder the serving view adds them.
"""

import os
import posixpath
import tempfile

from django.conf import settings
from django.core.files.storage import FileSystemStorage, storages
from storages.backends.s3 import S3Storage

CACHE_CONTROL = "public, max-age=300"
CONTENT_TYPES = {
    ".json": "application/json",
    ".csv": "text/csv; charset=utf-8",
    ".geojson": "application/geo+json",
}


def content_type_for(name: str) -> str:
    return CONTENT_TYPES.get(posixpath.splitext(name)[1], "application/octet-stream")


def datasets_storage():
    return storages["datasets"]


class DatasetsFileSystemStorage(FileSystemStorage):
    """A folder; without an explicit location it follows `settings.DATASETS_ROOT` at each use
    (tests point it at a temporary folder)."""

    @property
    def base_location(self):
        return self._location or str(settings.DATASETS_ROOT)

    @property
    def location(self):
        return os.path.abspath(self.base_location)

    def replace_atomically(self, name: str, data: bytes) -> None:
        """Write `name` so that readers see the old or the new bytes, never a partial file."""
        path = self.path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            # mkstemp makes it 0600: readable by the writer's user alone (the worker's), not
            # the web server's; the generation's files get FILE_UPLOAD_PERMISSIONS (0644)
            os.chmod(tmp, self.file_permissions_mode or 0o644)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise


class DatasetsS3Storage(S3Storage):
    """An S3 bucket; every object gets its Content-Type and Cache-Control."""

    def get_object_parameters(self, name):
        params = super().get_object_parameters(name)
        params.setdefault("ContentType", content_type_for(name))
        params.setdefault("CacheControl", CACHE_CONTROL)
        return params

    def replace_atomically(self, name: str, data: bytes) -> None:
        """A PUT replaces an object atomically: readers see the old or the new one."""
        from django.core.files.base import ContentFile

        self.save(name, ContentFile(data))
