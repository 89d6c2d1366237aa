"""Virtuoso 7 as the KG store: a private instance on loopback, and bulk loading into a named graph.

Query it like any SPARQL endpoint (`graph=sparql graph.endpoint=http://127.0.0.1:8890/sparql
graph.graph_iri=IRI`); this module covers what is Virtuoso's own:

- `private_ini`: a copy of the packaged virtuoso.ini whose database files live in a directory of
  yours and whose SQL (isql) and HTTP ports bind 127.0.0.1 only;
- `VirtuosoServer`: start `virtuoso-t +foreground` on such an ini, wait until its SPARQL endpoint
  answers, stop it (tests, benchmarks, a laptop);
- `bulk_load`: Virtuoso's bulk loader through `isql`: `ld_dir(dir, file, graph)` +
  `rdf_loader_run()` + `checkpoint`, then the loader's own error list is checked.

The N-Triples file must sit in a directory the server may read (`DirsAllowed` in its ini;
`private_ini` allows its own directory).
"""
from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import httpx

from rra.graph.base import GraphError
from rra.graph.rdf import graph_iris
from rra.graph.sparql_graph import RESULT_ROWS

DEBIAN_INI = Path("/etc/virtuoso-opensource-7/virtuoso.ini")


class VirtuosoError(GraphError):
    """Virtuoso could not be started, reached through isql, or refused a load."""


def binaries() -> tuple[str, str] | None:
    """(virtuoso-t, isql) when installed (Debian names the client isql-vt), else None."""
    server = shutil.which("virtuoso-t")
    isql = shutil.which("isql-vt") or shutil.which("isql")
    return (server, isql) if server and isql else None


def private_ini(root: str | Path, sql_port: int = 1111, http_port: int = 8890,
                template: str | Path = DEBIAN_INI, result_rows: int = RESULT_ROWS) -> Path:
    """Write `root/virtuoso.ini`: the template with every database file under `root`, both
    ServerPort lines on 127.0.0.1, `root` readable by the bulk loader, and results not cut at
    ResultSetMaxRows' 10,000 rows (SparqlGraph refuses a cut result: SparqlTruncatedError)."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    lines, section = [], ""
    for line in Path(template).read_text(encoding="utf-8").splitlines():
        head = line.strip()
        if head.startswith("["):
            section = head
        key = head.split("=", 1)[0].strip() if "=" in head and not head.startswith(";") else ""
        if key in ("DatabaseFile", "ErrorLogFile", "LockFile", "TransactionFile", "xa_persistent_file"):
            name = Path(head.split("=", 1)[1].strip()).name
            line = f"{key} = {root / name}"
        elif key == "ServerPort" and section == "[Parameters]":
            line = f"ServerPort = 127.0.0.1:{sql_port}"
        elif key == "ServerPort" and section == "[HTTPServer]":
            line = f"ServerPort = 127.0.0.1:{http_port}"
        elif key == "DirsAllowed":
            line = f"{head}, {root}"
        elif key == "ResultSetMaxRows":  # Debian's 10,000 cuts a hub's answers and the names linking reads
            line = f"ResultSetMaxRows = {result_rows}"
        lines.append(line)
    ini = root / "virtuoso.ini"
    ini.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ini


class VirtuosoServer:
    """A private Virtuoso on 127.0.0.1 in `root`; a context manager that stops it on exit."""

    def __init__(self, root: str | Path, sql_port: int, http_port: int, startup_timeout: float = 60.0,
                 result_rows: int = RESULT_ROWS):
        found = binaries()
        if found is None:
            raise VirtuosoError("virtuoso-t / isql-vt are not installed (apt-get install virtuoso-opensource)")
        self.server_bin, self.isql_bin = found
        self.root, self.sql_port, self.http_port = Path(root).resolve(), sql_port, http_port
        self.endpoint = f"http://127.0.0.1:{http_port}/sparql"
        self.ini = private_ini(self.root, sql_port, http_port, result_rows=result_rows)
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None

    def start(self) -> "VirtuosoServer":
        self._log = open(self.root / "server.out", "wb")
        self.proc = subprocess.Popen([self.server_bin, "+configfile", str(self.ini), "+foreground"],
                                     cwd=self.root, stdout=self._log, stderr=subprocess.STDOUT)
        end = time.monotonic() + self.startup_timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise VirtuosoError(f"virtuoso-t exited ({self.proc.returncode}): {self._tail()}")
            try:
                r = httpx.get(self.endpoint, params={"query": "ASK {}"}, timeout=2.0, trust_env=False)
                if r.status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.25)
        self.stop()
        raise VirtuosoError(f"Virtuoso not ready at {self.endpoint} after {self.startup_timeout} s: {self._tail()}")

    def _tail(self) -> str:
        log = self.root / "virtuoso.log"
        return log.read_text(errors="replace")[-1500:] if log.exists() else ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if getattr(self, "_log", None):
            self._log.close()

    def load(self, nt_file: str | Path, graph_iri: str) -> int:
        return bulk_load(nt_file, graph_iri, f"127.0.0.1:{self.sql_port}", isql=self.isql_bin)

    def __enter__(self) -> "VirtuosoServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _sql_string(value: str) -> str:
    """A SQL string literal for isql; values with quotes or control characters are refused
    rather than escaped (file paths and graph IRIs never need them)."""
    if re.search(r"['\\\x00-\x1f;]", value):
        raise ValueError(f"refusing to pass {value!r} to isql: quotes, backslashes, ';' and control characters are not allowed")
    return f"'{value}'"


def bulk_load(nt_file: str | Path, graph_iri: str, server: str = "127.0.0.1:1111",
              user: str = "dba", password: str = "dba", isql: str | None = None, timeout: float = 3600) -> int:
    """Bulk-load one N-Triples file into `graph_iri` of a running Virtuoso (SQL port `server`);
    returns the number of triples the graph then holds. Errors name the file and the reason."""
    (iri,) = graph_iris(graph_iri)
    nt = Path(nt_file).resolve()
    if not nt.is_file():
        raise FileNotFoundError(f"N-Triples file not found: {nt}")
    isql = isql or (binaries() or (None, "isql-vt"))[1]
    script = "\n".join([
        f"ld_dir({_sql_string(str(nt.parent))}, {_sql_string(nt.name)}, {_sql_string(iri)});",
        "rdf_loader_run();",
        "checkpoint;",
        f"SELECT 'LOAD_ERROR', ll_error FROM DB.DBA.load_list WHERE ll_file = {_sql_string(str(nt))} AND ll_error IS NOT NULL;",
        f"SPARQL SELECT ('TRIPLES' AS ?tag) (COUNT(*) AS ?n) FROM <{iri}> WHERE {{ ?s ?p ?o }};",
        # forget the file so that loading it again (e.g. after an edit) is not a silent no-op
        f"DELETE FROM DB.DBA.load_list WHERE ll_file = {_sql_string(str(nt))};",
    ]) + "\n"
    host, _, port = server.rpartition(":")
    cmd = [isql, f"{host or '127.0.0.1'}:{port}" if host else port, user, password]
    try:
        out = subprocess.run(cmd, input=script, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise VirtuosoError(f"isql {server}: {e}") from e
    text = out.stdout + out.stderr
    if out.returncode != 0 or "*** Error" in text:
        raise VirtuosoError(f"loading {nt} into <{iri}> via isql {server} failed: {text[-1500:]}")
    errors = [line for line in text.splitlines() if line.strip().startswith("LOAD_ERROR")]
    if errors:
        raise VirtuosoError(f"Virtuoso's bulk loader rejected {nt}: {errors[0][:500]}")
    counts = re.findall(r"^\s*TRIPLES\s+(\d+)", text, re.M)
    if not counts:
        raise VirtuosoError(f"loaded {nt} into <{iri}> but could not read the triple count: {text[-800:]}")
    return int(counts[-1])
