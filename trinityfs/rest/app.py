"""The HTTP layer: Starlette routes of the Iceberg REST catalog spec over the service.

Every endpoint goes through one wrapper that authenticates (bearer tokens), resolves the
prefix to a catalog version, refuses writes to a read-only prefix or with a read-only
token (403), reads the body (declared application/json, else 415) within the size limit
(413), runs the operation in a worker
thread (the catalog API blocks on storage), and maps every error to the spec's JSON
error model. Path parameters are matched on the raw, still percent-encoded path, so an
identifier holding `/` (`%2F`) stays one identifier instead of changing the route.

The server is stateless between requests, so a lakehouse removed or replaced at its
location while it runs is served like a new server would: the request that finds out
(LakehouseNotFoundError) marks the service lost, the next one waits until no request is
running and opens the location again (`Binding`). A read that found out is run again
on the lakehouse there now; a write is answered 503 (ServiceUnavailableException, the
spec's "not ready", without Retry-After: the client decides), as is every request
while there is no lakehouse at the location. Never a 500 for it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from trinityfs.errors import LakehouseNotFoundError
from trinityfs.rest import requests as rq
from trinityfs.rest.errors import RestError, bad_request, forbidden, to_rest_error, unauthorized
from trinityfs.rest.options import DEFAULT_MAX_BODY_BYTES
from trinityfs.rest.security import READ_WRITE, Tokens
from trinityfs.rest.selector import Pin
from trinityfs.rest.service import RestCatalogService
from trinityfs.rest.tables import TableService
from trinityfs.rest.views import ViewService

log = logging.getLogger("trinityfs.rest")

JSON = "application/json"
LATEST = Pin(None, "latest")


@dataclass
class Call:
    """What a handler gets: the request, its pin, its decoded body and path parameters."""

    request: Request
    pin: Pin
    body: dict[str, Any]

    def param(self, name: str) -> str:
        return self.request.path_params[name]

    @property
    def namespace(self) -> str:
        reading = self.request.method in ("GET", "HEAD")  # HEAD answers what GET answers
        return rq.namespace_param(self.param("namespace"), for_write=not reading)

    def name(self, key: str) -> str:
        return rq.path_text(self.param(key), key)

    def query(self, key: str) -> str | None:
        return self.request.query_params.get(key)


Handler = Callable[[Call], Any]


class RawPathMiddleware:
    """Route on the raw path: `%2F` inside a segment stays inside it. The time-travel
    prefix `v/<selector>` is folded into one segment (`v%2F<selector>`)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            try:
                path = scope["raw_path"].decode("ascii")
            except UnicodeDecodeError:
                error = bad_request("the request path must be ASCII (percent-encode the rest)")
                await _send_error(error, scope, send)
                return
            if path.startswith("/v1/v/"):
                path = "/v1/v%2F" + path[len("/v1/v/") :]
            scope = dict(scope, path=path)
        await self.app(scope, receive, send)


async def _send_error(error: RestError, scope: Scope, send: Send) -> None:
    response = error_response(error, scope.get("method", "GET"))
    await response(scope, None, send)  # type: ignore[arg-type]


def error_response(error: RestError, method: str) -> Response:
    body = b"" if method == "HEAD" else error.body()
    return Response(body, status_code=error.status, media_type=JSON)


UNAVAILABLE = "ServiceUnavailableException"

#: How long a request waits for the running ones before the lakehouse is opened again.
REBIND_WAIT_SECONDS = 30.0


def unavailable(message: str) -> RestError:
    return RestError(503, UNAVAILABLE, message)


def reopen_like(service: RestCatalogService) -> Callable[[], RestCatalogService]:
    """A service like `service` on whatever lakehouse is at its location now (never
    creating one: LakehouseNotFoundError when there is none)."""
    catalog = service.catalog
    properties = {**catalog.properties, "create": "false"}
    entries = service.tables.capacity

    def reopen() -> RestCatalogService:
        fresh = type(catalog)(catalog.name, **properties)
        return RestCatalogService(
            fresh, service.policy, cache_entries=entries, table_config=service.table_config
        )

    return reopen


class Binding:
    """The service the server answers with, opened again after its lakehouse was
    removed or replaced (see the module doc). Requests run inside `use`; `lost` marks
    the service a request used as gone; the next `use` waits until no request runs
    (none is in the middle of a commit on the old one) and opens the location again."""

    def __init__(
        self,
        service: RestCatalogService,
        reopen: Callable[[], RestCatalogService] | None = None,
        wait_seconds: float = REBIND_WAIT_SECONDS,
    ):
        self._reopen = reopen or reopen_like(service)
        self._wait = wait_seconds
        self._cond = threading.Condition()
        self._running = 0
        self._lost: str | None = None  # why the current service is gone
        self._set(service)

    def _set(self, service: RestCatalogService) -> None:
        self.service = service
        self.tables = TableService(service)
        self.views = ViewService(service)

    @contextmanager
    def use(self) -> Iterator[RestCatalogService]:
        """Run one request on the current service (opened again first if lost)."""
        with self._cond:
            if self._lost is not None:
                self._rebind()
            self._running += 1
            service = self.service
        try:
            yield service
        finally:
            with self._cond:
                self._running -= 1
                self._cond.notify_all()

    def lost(self, service: RestCatalogService, exc: LakehouseNotFoundError) -> None:
        with self._cond:
            if service is self.service and self._lost is None:
                log.warning("the lakehouse is gone (%s): opening its location again", exc)
                self._lost = str(exc)

    def _rebind(self) -> None:
        """Under the condition: no request starts meanwhile."""
        if not self._cond.wait_for(lambda: self._running == 0, timeout=self._wait):
            raise unavailable(
                f"{self._lost}; the server opens its location again once the requests "
                f"still running on the old lakehouse end (waited {self._wait:g} s): retry"
            )
        try:
            service = self._reopen()
        except LakehouseNotFoundError as exc:
            raise unavailable(
                f"there is no lakehouse at this server's location now ({exc}); it is "
                "served as soon as one is created there"
            ) from None
        self._set(service)
        self._lost = None
        log.warning("serving the lakehouse now at %s", service.lake.url)


class _Current:
    """The current service (or table or view service) of a Binding, looked up on every
    attribute access: the routes keep one object each."""

    def __init__(self, binding: Binding, attr: str):
        self._binding = binding
        self._attr = attr

    def __getattr__(self, name: str) -> Any:
        return getattr(getattr(self._binding, self._attr), name)


class RestApp:
    """Builds the Starlette application for one service."""

    def __init__(
        self,
        service: RestCatalogService,
        tokens: Tokens | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        reopen: Callable[[], RestCatalogService] | None = None,
    ):
        self.binding = Binding(service, reopen)
        self.service: RestCatalogService = _Current(self.binding, "service")  # type: ignore[assignment]
        self.tables: TableService = _Current(self.binding, "tables")  # type: ignore[assignment]
        self.views: ViewService = _Current(self.binding, "views")  # type: ignore[assignment]
        self.tokens = tokens or Tokens()
        self.max_body_bytes = max_body_bytes

    def _serve(
        self,
        call: Callable[[Request, dict[str, Any]], Any],
        request: Request,
        data: dict[str, Any],
        write: bool,
    ) -> Any:
        """Run `call` on the current service; a read that finds the lakehouse gone runs
        once more on the one there now, a write is answered 503 (module doc)."""
        for again in (False, True):
            with self.binding.use() as service:
                try:
                    return call(request, data)
                except LakehouseNotFoundError as exc:
                    self.binding.lost(service, exc)
                    if write or again:
                        raise unavailable(
                            f"{exc}; this server serves the lakehouse at its location now "
                            "from the next request on: retry if nothing was committed"
                        ) from None
        raise AssertionError("unreachable")

    # -- the wrapper ----------------------------------------------------------------

    def _authorize(self, request: Request, write: bool) -> None:
        if not self.tokens.enabled:
            return
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized("this server needs 'Authorization: Bearer <token>'")
        role = self.tokens.role_of(token.strip())
        if role is None:
            raise unauthorized("the bearer token is not valid for this server")
        if write and role != READ_WRITE:
            raise forbidden("this token is read-only; changes need a read-write token")

    async def _body(self, request: Request) -> bytes:
        declared = request.headers.get("content-length")
        if declared is not None:
            if not (declared.isascii() and declared.isdigit() and len(declared) <= 20):
                raise bad_request("Content-Length is not a number")
            if int(declared) > self.max_body_bytes:
                raise self._too_large()
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large()
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_large(self) -> RestError:
        return RestError(
            413,
            "BadRequestException",
            f"the request body is larger than this server's limit of {self.max_body_bytes} "
            "bytes (--max-body-bytes)",
        )

    def endpoint(
        self,
        handler: Handler,
        *,
        write: bool = False,
        body: bool = False,
        status: int = 200,
        prefixed: bool = True,
    ) -> Callable[[Request], Awaitable[Response]]:
        def call(request: Request, data: dict[str, Any]) -> Any:
            pin = LATEST
            if prefixed:
                selector = rq.path_text(request.path_params["prefix"], "prefix")
                if selector != LATEST.prefix:
                    pin = self.service.pin(selector)
                    if write:
                        self.service.require_writable(pin)
            return handler(Call(request, pin, data))

        async def run(request: Request) -> Response:
            try:
                self._authorize(request, write)
                data = {}
                if body:
                    rq.json_content_type(request.headers.get("content-type"))
                    data = rq.json_object(await self._body(request))
                # one thread hop
                result = await run_in_threadpool(self._serve, call, request, data, write)
            except Exception as exc:
                return error_response(to_rest_error(exc), request.method)
            if isinstance(result, Response):
                return result
            if result is None:
                return Response(status_code=204)
            if isinstance(result, bytes):
                return Response(result, status_code=status, media_type=JSON)
            return Response(_dumps(result), status_code=status, media_type=JSON)

        return run

    # -- routes ---------------------------------------------------------------------

    def routes(self) -> list[Route]:
        s, t, v = self.service, self.tables, self.views
        p = "/v1/{prefix}"
        ns = p + "/namespaces/{namespace}"
        tbl = ns + "/tables/{table}"
        view = ns + "/views/{view}"
        e = self.endpoint

        def exists(found: bool) -> Response:
            if found:
                return Response(status_code=204)
            raise RestError(404, "NotFoundException", "does not exist")

        def config(c: Call) -> Any:
            return s.config(c.query("warehouse"), ENDPOINTS)

        def list_namespaces(c: Call) -> Any:
            return s.list_namespaces(
                c.pin, c.query("parent"), c.query("pageToken"), c.query("pageSize")
            )

        def list_tables(c: Call) -> Any:
            return s.list_objects(
                c.pin, "table", c.namespace, c.query("pageToken"), c.query("pageSize")
            )

        def load_table(c: Call) -> Response:
            mode = c.query("snapshots") or "all"
            loaded = s.load_table(c.pin, c.namespace, c.name("table"), mode)
            headers = {"ETag": loaded.etag}
            if c.request.headers.get("if-none-match") == loaded.etag:
                return Response(status_code=304, headers=headers)
            return Response(loaded.body, media_type=JSON, headers=headers)

        def list_views(c: Call) -> Any:
            return s.list_objects(
                c.pin, "view", c.namespace, c.query("pageToken"), c.query("pageSize")
            )

        def drop_table(c: Call) -> None:
            purge = rq.query_bool(c.query("purgeRequested"), "purgeRequested")
            t.drop(c.namespace, c.name("table"), purge)

        read, change = {}, {"write": True, "body": True}
        routes: list[tuple[str, str, Handler, dict[str, bool]]] = [
            ("GET", p + "/namespaces", list_namespaces, read),
            ("POST", p + "/namespaces", lambda c: s.create_namespace(c.body), change),
            ("HEAD", ns, lambda c: exists(s.namespace_exists(c.pin, c.namespace)), read),
            ("GET", ns, lambda c: s.load_namespace(c.pin, c.namespace), read),
            ("DELETE", ns, lambda c: s.drop_namespace(c.namespace), {"write": True}),
            ("POST", ns + "/properties", lambda c: s.update_namespace(c.namespace, c.body), change),
            ("GET", ns + "/tables", list_tables, read),
            ("POST", ns + "/tables", lambda c: t.create(c.namespace, c.body), change),
            ("POST", ns + "/register", lambda c: t.register(c.namespace, c.body), change),
            (
                "HEAD",
                tbl,
                lambda c: exists(s.table_exists(c.pin, c.namespace, c.name("table"))),
                read,
            ),
            ("GET", tbl, load_table, read),
            ("POST", tbl, lambda c: t.commit(c.namespace, c.name("table"), c.body), change),
            ("DELETE", tbl, drop_table, {"write": True}),
            ("POST", tbl + "/metrics", lambda c: None, {"body": True}),
            ("POST", p + "/tables/rename", lambda c: t.rename(c.body), change),
            ("POST", p + "/transactions/commit", lambda c: t.commit_transaction(c.body), change),
            ("GET", ns + "/views", list_views, read),
            ("POST", ns + "/views", lambda c: v.create(c.namespace, c.body), change),
            ("HEAD", view, lambda c: exists(v.exists(c.pin, c.namespace, c.name("view"))), read),
            ("GET", view, lambda c: v.load(c.pin, c.namespace, c.name("view")), read),
            ("POST", view, lambda c: v.replace(c.namespace, c.name("view"), c.body), change),
            ("DELETE", view, lambda c: v.drop(c.namespace, c.name("view")), {"write": True}),
            ("POST", p + "/views/rename", lambda c: v.rename(c.body), change),
        ]
        out = [Route("/v1/config", e(config, prefixed=False), methods=["GET"])]
        out += [Route(path, e(fn, **opts), methods=[verb]) for verb, path, fn, opts in routes]
        return out

    def build(self) -> ASGIApp:
        async def http_error(request: Request, exc: Exception) -> Response:
            code = getattr(exc, "status_code", 500)
            kind = {404: "NotFoundException", 405: "MethodNotAllowedException"}
            message = {
                404: f"no such endpoint: {request.method} {request.url.path}",
                405: f"method {request.method} is not allowed on {request.url.path}",
            }
            error = RestError(
                code, kind.get(code, "BadRequestException"), message.get(code, str(exc))
            )
            return error_response(error, request.method)

        async def server_error(request: Request, exc: Exception) -> Response:
            return error_response(to_rest_error(exc), request.method)

        app = Starlette(
            routes=self.routes(),
            exception_handlers={HTTPException: http_error, Exception: server_error},
        )
        return RawPathMiddleware(app)


def _dumps(value: Any) -> bytes:
    import json

    return json.dumps(value, separators=(",", ":")).encode()


# Endpoints advertised by GET /v1/config (the spec's "<verb> <path>" strings).
ENDPOINTS = [
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
    "GET /v1/{prefix}/namespaces/{namespace}/views",
    "POST /v1/{prefix}/namespaces/{namespace}/views",
    "GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
    "POST /v1/{prefix}/views/rename",
]


def create_app(
    service: RestCatalogService,
    tokens: Tokens | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> ASGIApp:
    """The ASGI application serving `service`."""
    return RestApp(service, tokens, max_body_bytes).build()


__all__ = ["DEFAULT_MAX_BODY_BYTES", "ENDPOINTS", "RestApp", "create_app"]
