"""The page contract: dashboards/static/payload.schema.json, checked on both sides.

- The builder's side: every payload built from a store validates against
  the schema (every key declared, every type as written).
- The page's side: the page runs in a headless browser over a payload
  wrapped in a recording proxy; every key path its scripts read (a missing
  key included) must be declared in the schema. A script that reads a key
  the contract does not name fails here, not in front of a user.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from dashboards.payload import build_payload
from dashboards.snapshot import read_store

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "dashboards" / "static" / "payload.schema.json")
                    .read_text())

# Installed before the page's scripts run: DASHBOARD_DATA becomes a proxy that
# records each own-key read as a path, a JSON list such as
# ["studies", "[]", "curves", "[]", "knee_tp", "mean"] ("*": the keys were enumerated).
RECORDER = r"""
(() => {
  const reads = new Set();
  const cache = new WeakMap();
  const inherited = (target, key) => (Array.isArray(target) ? key in Array.prototype || key === "length"
                                                            : key in Object.prototype);
  function wrap(value, path) {
    if (value === null || typeof value !== "object") return value;
    if (!cache.has(value)) cache.set(value, new Map());
    const byPath = cache.get(value);
    const pathKey = JSON.stringify(path);
    if (byPath.has(pathKey)) return byPath.get(pathKey);
    const proxy = new Proxy(value, {
      get(target, prop, receiver) {
        const result = Reflect.get(target, prop, receiver);
        if (typeof prop !== "string" || inherited(target, prop)) return result;
        const child = path.concat([Array.isArray(target) && /^\d+$/.test(prop) ? "[]" : prop]);
        reads.add(JSON.stringify(child));
        return wrap(result, child);
      },
      ownKeys(target) {
        if (!Array.isArray(target)) reads.add(JSON.stringify(path.concat(["*"])));
        return Reflect.ownKeys(target);
      },
    });
    byPath.set(pathKey, proxy);
    return proxy;
  }
  let data;
  Object.defineProperty(window, "DASHBOARD_DATA", {
    configurable: true,
    set(value) { data = wrap(value, []); },
    get() { return data; },
  });
  window.__payloadReads = () => [...reads].sort();
})();
"""


def resolve(schema: dict, path: list, root: dict = SCHEMA) -> bool:
    """Whether the schema declares the key path (object keys, "[]" for array items, "*" for any key)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return resolve(root["$defs"][name], path, root)
    for combined in ("anyOf", "oneOf"):
        if combined in schema:
            return any(resolve(option, path, root) for option in schema[combined])
    if not path:
        return True
    step, rest = path[0], path[1:]
    if step == "[]":
        return "items" in schema and resolve(schema["items"], rest, root)
    if step == "*":  # the page enumerates the object's keys
        return schema.get("type") == "object" and (not rest)
    if step in schema.get("properties", {}):
        return resolve(schema["properties"][step], rest, root)
    extra = schema.get("additionalProperties")
    return isinstance(extra, dict) and resolve(extra, rest, root)


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_path_resolver_accepts_declared_and_refuses_undeclared_keys():
    assert resolve(SCHEMA, ["studies", "[]", "curves", "[]", "knee_tp", "mean"])
    assert resolve(SCHEMA, ["studies", "[]", "points", "[]", "v", "throughput_cps", "high"])
    assert resolve(SCHEMA, ["comparisons", "retry_policies", "curves", "[]", "d", "backoff", "usable_ratio"])
    assert resolve(SCHEMA, ["studies", "[]", "provenance", "package_versions", "0.1.0"])
    assert not resolve(SCHEMA, ["studies", "[]", "curves", "[]", "knee_tp", "2"])
    assert not resolve(SCHEMA, ["studies", "[]", "no_such_key"])


def test_every_built_payload_keeps_the_contract(tmp_path):
    from simcore import SimConfig
    from store_fixtures import simulated_rows, write_store_file

    short = {"duration_s": 1200, "runtime_median_ms": 20_000}
    configs = [SimConfig(provider=provider, num_tables=tables, fast_append_ratio=mix, inter_arrival_scale_ms=scale,
                         **short)
               for provider in ("s3x", "gcp") for tables in (1, 10) for mix in (1.0, 0.9) for scale in (50, 1000)]
    write_store_file(str(tmp_path), "exp4c", simulated_rows("exp4c", configs, seeds=[1, 2]))
    studies = [SimConfig(provider="s3x", num_tables=1, fast_append_ratio=0.9, inter_arrival_scale_ms=scale,
                         retry_policy=policy, **short) for scale in (50, 1000) for policy in (None, "split")]
    write_store_file(str(tmp_path), "retry_policies", simulated_rows("retry_policies", studies, seeds=[1]))
    knee = [config.replace(inter_arrival_scale_ms=70.0) for config in configs[:2]]
    write_store_file(str(tmp_path), "exp4c_knee", simulated_rows("exp4c_knee", knee, seeds=[1, 2]))
    payload = build_payload(read_store(str(tmp_path)))
    assert payload["comparisons"] and payload["knee_searches"] and payload["studies"]
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    # A payload round-trips through JSON as the page gets it.
    jsonschema.validate(json.loads(json.dumps(payload)), SCHEMA, cls=jsonschema.Draft202012Validator)


def test_an_undeclared_key_breaks_the_contract(tmp_path):
    from store_fixtures import contract_row, write_store_file

    write_store_file(str(tmp_path), "exp4c", [contract_row("exp4c", {"inter_arrival_scale_ms": 100.0}, 1,
                                                           {"success_rate": 1.0, "throughput_cps": 2.0})])
    payload = build_payload(read_store(str(tmp_path)))
    payload["studies"][0]["curves"][0]["knee_tp"] = [2.0, None, 2.0, 2.0, 1]  # the old positional spread
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
