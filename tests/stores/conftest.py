"""The stores' tests' S3 API server: moto in server mode on 127.0.0.1, one per test module
(module scope, as when each module imported these fixtures from test_command_stores), and a
fresh bucket for each test."""

from __future__ import annotations

import json

import moto.server as moto_server
import pytest
import s3fs

from store_helpers import KEY, SECRET, free_port


@pytest.fixture(scope="module")
def s3_endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3(s3_endpoint, monkeypatch, request):
    """A fresh bucket; credentials and region from the environment (as a user sets them)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    fs = s3fs.S3FileSystem(key=KEY, secret=SECRET, client_kwargs={"endpoint_url": s3_endpoint})
    bucket = "zdt-" + request.node.name.lower().replace("_", "-")[-40:].strip("-[]")
    bucket = "".join(c if c.isalnum() or c == "-" else "-" for c in bucket)
    fs.mkdir(bucket)
    options = json.dumps({"endpoint_url": s3_endpoint})
    return fs, bucket, options
