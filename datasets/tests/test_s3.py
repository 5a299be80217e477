"""The S3 path, against moto's S3 server on loopback."""

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from datasets import views
from datasets.services import datasets_export
from tests.live import free_port

from .conftest import at

pytestmark = [pytest.mark.django_db, pytest.mark.live]
BUCKET = "breja-datasets"


@pytest.fixture
def s3(settings, monkeypatch):
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(key, value)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    httpx.post(f"{endpoint}/moto-api/reset")  # moto's state is per process, not per server
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    settings.STORAGES = {
        **settings.STORAGES,
        "datasets": {
            "BACKEND": "datasets.storage.DatasetsS3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": endpoint,
                "region_name": "us-east-1",
                "location": "open-data",
                "default_acl": None,
                "file_overwrite": True,
                "querystring_auth": False,
            },
        },
    }
    views._remote_pointer.clear()
    yield client
    views._remote_pointer.clear()
    server.stop()


def test_export_to_s3_sets_content_type_and_cache_control_on_every_object(world, s3):
    result = datasets_export(progress=False)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert "open-data/current.json" in keys
    assert f"open-data/{result.generation}/index.json" in keys
    expected = {
        ".json": "application/json",
        ".csv": "text/csv; charset=utf-8",
        ".geojson": "application/geo+json",
    }
    for rel, info in result.files.items():
        head = s3.head_object(Bucket=BUCKET, Key=f"open-data/{result.generation}/{rel}")
        suffix = "." + rel.rsplit(".", 1)[1]
        assert head["ContentType"] == expected[suffix] == info.content_type, rel
        assert head["CacheControl"] == "public, max-age=300", rel
        assert head["ContentLength"] == info.size
        assert head.get("ContentEncoding") is None


def test_files_are_served_from_s3_and_the_pointer_switches(world, s3, client, settings):
    settings.DATASETS_GRACE_SECONDS = 0
    first = datasets_export(progress=False, now=at(2026, 11, 23, 10))
    response = client.get("/api/v1/sao-paulo/deals.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["ETag"] == first.files["sao-paulo/deals.json"].etag
    second = datasets_export(progress=False, now=at(2026, 11, 23, 10, 5))
    third = datasets_export(progress=False, now=at(2026, 11, 23, 10, 10))
    prefixes = {o["Key"].split("/")[1] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert prefixes == {"current.json", second.generation, third.generation}
    views._remote_pointer.clear()
    assert client.get("/api/v1/index.json").status_code == 200
