"""Any SPARQL 1.1 HTTP endpoint (Oxigraph server, Virtuoso, QLever, Blazegraph, ...).

Same queries as the embedded backend (queries.py); this file only adds the HTTP part: a total
deadline per request (`timeout`: connect + the whole reply, rra.net.request), bounded retries with
exponential back-off on connection errors / 5xx / 429 (time-outs only with `retry_on_timeout`), a
circuit breaker (after `breaker_threshold` failed requests in a row every further query fails at once
as `GraphUnavailableError` for `breaker_cooldown` s, then one probe), and an LRU cache of results
(the KG is read-only to us, so a query's answer never changes while a run lasts). A long-running
reader (the server) trusts a cached result for `cache_ttl` seconds only, and `clear_cache()` (the
server's SIGHUP) forgets them all at once, after the store is edited.
"""
from __future__ import annotations

import ipaddress
import json
import re
import threading
import time
from collections import OrderedDict
from urllib.parse import urlsplit

import httpx

from rra import net
from rra.graph.base import GraphError, GraphUnavailableError
from rra.graph.rdf import (COMMON_PREFIXES, DEFAULT_ENTITY_BASE, DEFAULT_RELATION_BASE, RDFS_LABEL, RdfMapping,
                           graph_iris)
from rra.graph.sparql_backed import Row, SparqlBackedGraph

RETRY_STATUS = {429, 500, 502, 503, 504}
RESULTS_JSON = "application/sparql-results+json"
_KINDS = {"uri": "iri", "literal": "literal", "typed-literal": "literal", "bnode": "bnode"}


class SparqlEndpointError(GraphError):
    """The endpoint refused the query, or answered with something that is not a SPARQL result."""


class SparqlUnavailableError(SparqlEndpointError, GraphUnavailableError):
    """The endpoint could not be reached, reset the connection, timed out, answered a non-SPARQL
    page (HTML), or its circuit breaker is open after repeated failures."""


class SparqlTruncatedError(SparqlEndpointError):
    """The endpoint answered only the first rows of a result (Virtuoso's ResultSetMaxRows): a partial
    answer set or name index would be wrong without a word, so it is an error that names the cap."""


RESULT_ROWS = 100_000_000  # what rra.graph.virtuoso.private_ini allows a result


_LIMIT = re.compile(r"\bLIMIT\s+(\d+)\s*$", re.IGNORECASE)


def _check_complete(resp, data, endpoint: str, query: str = "") -> None:
    """Virtuoso cuts every result at `ResultSetMaxRows` (10,000 in Debian's virtuoso.ini) and says
    so only in the `X-SPARQL-MaxRows` header of a reply that holds that many rows: a hub's 2-hop
    answers, or the names the fuzzy index reads, would come back cut without a word. A query whose
    own LIMIT is within the cap asked for no more than it got."""
    cap = resp.headers.get("X-SPARQL-MaxRows")
    try:
        rows = len(data["results"]["bindings"])
        cap = int(cap) if cap is not None else None
    except (KeyError, TypeError, ValueError):  # not rows (ASK), or a header that is no number
        return
    limit = _LIMIT.search(query)
    if cap is not None and rows >= cap and (limit is None or int(limit.group(1)) > cap):
        raise SparqlTruncatedError(
            f"SPARQL endpoint {endpoint} cut a result at {cap} rows (X-SPARQL-MaxRows): the rest is missing. "
            f"On Virtuoso raise ResultSetMaxRows in the [SPARQL] section of virtuoso.ini (rra's private_ini "
            f"sets {RESULT_ROWS:,}) and restart it")


def on_loopback(endpoint: str) -> bool:
    """Whether the endpoint's host is this machine (localhost, 127.0.0.0/8, ::1)."""
    host = urlsplit(endpoint).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name
        return False


class SparqlGraph(SparqlBackedGraph):
    def __init__(
        self,
        endpoint: str = "http://127.0.0.1:7878/query",
        entity_base: str = DEFAULT_ENTITY_BASE,
        relation_base: str = DEFAULT_RELATION_BASE,
        label_predicate: str = RDFS_LABEL,
        label_language: str | None = None,
        prefixes: dict[str, str] | None = None,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        batch_size: int = 200,
        cache_size: int = 10_000,
        headers: dict[str, str] | None = None,
        trust_env: bool = True,
        mapping: RdfMapping | None = None,
        graph_iri: str | list[str] | None = None,
        retry_on_timeout: bool = False,
        breaker_threshold: int = 3,
        breaker_cooldown: float = 30.0,
        cache_ttl: float | None = None,
        property_namespaces: dict[str, str] | None = None,
        alias_predicates: list[str] | None = None,
        name_predicates: list[str] | None = None,
        names_in_memory: bool | str = "auto",
    ):
        if retries < 0 or timeout <= 0 or batch_size < 1 or cache_size < 0:
            raise ValueError("need retries >= 0, timeout > 0, batch_size >= 1, cache_size >= 0")
        self.retry_on_timeout = retry_on_timeout
        self.breaker = net.CircuitBreaker(f"SPARQL endpoint {endpoint}", breaker_threshold, breaker_cooldown)
        self.endpoint = endpoint
        # Named graphs (SPARQL protocol `default-graph-uri`): every query reads only their union.
        # A Virtuoso endpoint's default graph is every graph in the store, system graphs included.
        self.graph_iris = graph_iris(graph_iri)
        all_prefixes = {**COMMON_PREFIXES, **dict(prefixes or {})}
        self.mapping = mapping or RdfMapping(entity_base, relation_base, label_predicate, all_prefixes, label_language,
                                             **({} if property_namespaces is None else
                                                {"property_namespaces": property_namespaces}),
                                             **({} if alias_predicates is None else
                                                {"alias_predicates": alias_predicates}),
                                             **({} if name_predicates is None else
                                                {"name_predicates": name_predicates}))
        self.timeout, self.retries, self.backoff, self.max_backoff = timeout, retries, backoff, max_backoff
        self.batch_size, self.cache_size = batch_size, cache_size
        self.cache_ttl = cache_ttl  # seconds a cached result is trusted; None: as long as the process lives
        # case-insensitive lookups from every name read once (SparqlBackedGraph._casefold_map), kept
        # `cache_ttl` seconds: for an endpoint whose names fit in memory (a local Virtuoso's or `oxigraph
        # serve`'s LCASE join costs seconds per batch), not a public one's hundred million. auto: on a
        # loopback endpoint (where a store rra loaded runs); one whose names cannot be read falls back
        if names_in_memory not in (True, False, "auto"):
            raise ValueError(f"names_in_memory must be true, false or auto, got {names_in_memory!r}")
        self.names_in_memory = on_loopback(endpoint) if names_in_memory == "auto" else names_in_memory
        self._cache: OrderedDict[tuple[str, tuple[str, ...]], tuple[float, list[Row]]] = OrderedDict()
        self.cache_hits = self.cache_misses = 0
        self._lock = threading.Lock()  # walkers may query from several threads
        self._client = httpx.Client(
            timeout=timeout,
            headers={"Accept": RESULTS_JSON, **dict(headers or {})},
            trust_env=trust_env,  # False: ignore HTTP(S)_PROXY, e.g. for a loopback server
        )

    # -- cache ---------------------------------------------------------------------------
    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()

    def _select(self, query: str, variables: tuple[str, ...]) -> list[Row]:
        key = (query, variables)
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and (self.cache_ttl is None or now - hit[0] <= self.cache_ttl):
                self._cache.move_to_end(key)
                self.cache_hits += 1
                return hit[1]
            self.cache_misses += 1
        rows = self._parse(self._post(query), variables, self.endpoint)
        if self.cache_size:
            with self._lock:
                self._cache[key] = (now, rows)
                self._cache.move_to_end(key)
                if len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return rows

    # -- HTTP ----------------------------------------------------------------------------
    def _post(self, query: str) -> dict:
        blocked = self.breaker.blocked()
        if blocked:
            raise SparqlUnavailableError(blocked)
        try:
            return self._attempts(query)
        except (SparqlEndpointError, KeyboardInterrupt):
            raise  # the breaker has been told
        except BaseException as e:  # anything unforeseen still ends a probe, so the circuit cannot stay shut
            self.breaker.failure(net.describe(e))
            raise

    def _attempts(self, query: str) -> dict:
        attempts = 1 if self.breaker.probing else self.retries + 1  # a probe after a pause: one try
        problem = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), self.max_backoff))
            self.requests += 1
            try:
                resp = net.request(self._client, "POST", self.endpoint, self.timeout,
                                   data={"query": query, "default-graph-uri": self.graph_iris})
            except net.DeadlineExceeded:
                problem = f"timed out after {self.timeout:g} s (no complete reply within the deadline)"
                if not self.retry_on_timeout:
                    break
                continue
            except httpx.TransportError as e:
                problem = "unreachable: " + net.describe(e)
                continue
            if resp.status_code in RETRY_STATUS:
                problem = f"failed with HTTP {resp.status_code}: {_snippet(resp)}"
                continue
            if resp.status_code == 200 and net.looks_like_html(resp):
                problem = f"answered an HTML page, not SPARQL results ({net.html_title(resp)!r}): a proxy or the wrong URL?"
                break
            if resp.status_code == 404:
                self.breaker.success()  # the server is up; the URL is wrong
                raise SparqlEndpointError(
                    f"SPARQL endpoint {self.endpoint} not found (HTTP 404): check the URL "
                    "(Oxigraph: /query; Virtuoso: /sparql; Blazegraph: /blazegraph/sparql)"
                )
            if resp.status_code >= 400:  # the query itself is wrong: retrying will not help
                self.breaker.success()
                raise SparqlEndpointError(
                    f"SPARQL endpoint {self.endpoint} refused the query (HTTP {resp.status_code}): "
                    f"{resp.text[:500]}"
                )
            try:
                data = json.loads(resp.content)
            except ValueError as e:
                problem = f"did not return SPARQL JSON results ({e}): {_snippet(resp)}"
                break
            self.breaker.success()
            _check_complete(resp, data, self.endpoint, query)
            return data
        tries = attempt + 1
        self.breaker.failure(problem)
        raise SparqlUnavailableError(
            f"SPARQL endpoint {self.endpoint} {problem} "
            f"({tries} attempt{'s' if tries > 1 else ''})"
        )

    @staticmethod
    def _parse(data: dict, variables: tuple[str, ...], endpoint: str = "") -> list[Row]:
        rows = []
        try:
            for binding in data["results"]["bindings"]:
                row = []
                for v in variables:
                    b = binding.get(v)
                    if b is None:
                        row.append(None)
                    elif b["type"] in ("literal", "typed-literal"):  # keep what makes it a value
                        row.append(("literal", str(b["value"]), b.get("datatype"), b.get("xml:lang")))
                    else:
                        row.append((_KINDS.get(b["type"], b["type"]), str(b["value"])))
                rows.append(tuple(row))
        except (KeyError, TypeError, AttributeError) as e:
            raise SparqlEndpointError(
                f"SPARQL endpoint {endpoint} returned a malformed result ({type(e).__name__}: {e}): "
                f"{str(data)[:200]}") from None
        return rows

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"SparqlGraph({self.endpoint!r})"


def _snippet(resp: net.Reply) -> str:
    """A reply body in a message: an HTML page by its title, anything else by its start."""
    return repr(net.html_title(resp)) if net.looks_like_html(resp) else resp.text[:200]
