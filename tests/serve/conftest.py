"""Fixtures of the serving tests: the serve config composed around the session's tiny retriever
trained on the built-in KG (tests/conftest.py builtin_root), a Service, and a real uvicorn server on a
free loopback port."""
import pytest

from serve_helpers import LiveServer  # tests/serve is on the path (pytest puts a conftest's folder there)


@pytest.fixture(scope="session")
def serve_cfg(compose_serve):
    return compose_serve(["llm=none"])


@pytest.fixture(scope="session")
def compose_serve(compose_cfg, builtin_root):
    """compose_serve(overrides): the serve config around the trained checkpoint, with other groups."""
    return lambda overrides: compose_cfg("serve", overrides, builtin_root)


@pytest.fixture(scope="session")
def service(serve_cfg):
    from rra.serve.service import Service

    return Service.from_config(serve_cfg)


@pytest.fixture
def client(service):
    """FastAPI's in-process client (the app's start-up and shutdown run around the test)."""
    from fastapi.testclient import TestClient

    from rra.serve.app import create_app

    with TestClient(create_app(service)) as c:
        yield c


@pytest.fixture
def live(service):
    from rra.serve.app import create_app

    with LiveServer(create_app(service)) as server:
        yield server
