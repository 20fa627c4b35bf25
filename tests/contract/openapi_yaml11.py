#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""openapi/openapi.yaml as Python's OpenAPI tools read it (contract/python).

Spectral and Prism read YAML 1.2; PyYAML, which Python's OpenAPI tools use, reads YAML 1.1,
where a plain `on`, `off`, `yes`, `no`, `y` or `n` is a boolean and `1:30` or `010` a number.
A property named `on` then becomes the key `True` and `required: [on]` the list `[True]`,
and openapi-spec-validator rejects the document. This test, with Debian's python3-yaml and
python3-jsonschema only:

1. fails every plain scalar whose YAML 1.1 reading differs from its YAML 1.2 one (quote it);
2. validates the document, read as YAML 1.1, against the OpenAPI 3.1 schema
   (oas-3.1-schema.json, the OpenAPI Initiative's https://spec.openapis.org/oas/3.1/schema/2022-10-07,
   Apache-2.0) and every Schema Object in it against the JSON Schema 2020-12 meta-schema,
   which is what openapi-spec-validator does for 3.1;
3. shows that it can fail: a small document with an unquoted `on` is caught by both.

Usage: openapi_yaml11.py [DOCUMENT]  (default: NT_SRC/openapi/openapi.yaml). Exit 0 pass,
1 fail, 77 skipped when python3-yaml or python3-jsonschema is missing."""
import json
import os
import re
import sys

try:
    import yaml
    from jsonschema import Draft202012Validator
except ImportError as e:
    print("SKIP: %s (Debian: apt-get install python3-yaml python3-jsonschema; deploy/dev.sh test does)" % e)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
BOOL_1_2 = {"true", "false", "True", "False", "TRUE", "FALSE"}


def dialect_differences(text):
    """Lines of plain scalars YAML 1.1 reads as a boolean or number and YAML 1.2 as a string."""
    out = []

    def walk(node):
        if isinstance(node, yaml.ScalarNode):
            v, tag = node.value, node.tag
            differs = node.style is None and (
                (tag == "tag:yaml.org,2002:bool" and v not in BOOL_1_2)
                or (tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
                    and (":" in v or "_" in v or re.match(r"^[-+]?0[0-7]+$", v))))
            if differs:
                out.append("line %d: %r is a %s in YAML 1.1 and a string in YAML 1.2: quote it"
                           % (node.start_mark.line + 1, v, tag.rsplit(":", 1)[1]))
        elif isinstance(node, yaml.SequenceNode):
            for x in node.value:
                walk(x)
        elif isinstance(node, yaml.MappingNode):
            for k, x in node.value:
                walk(k)
                walk(x)

    walk(yaml.compose(text, Loader=yaml.SafeLoader))
    return out


def where(path):
    return "/".join(str(p) for p in path) or "(root)"


def schema_errors(doc):
    """The document against the OpenAPI 3.1 schema, its Schema Objects against 2020-12's."""
    out = []
    oas = json.load(open(os.path.join(HERE, "oas-3.1-schema.json"), encoding="utf-8"))
    for e in Draft202012Validator(oas).iter_errors(doc):
        out.append("%s: %s" % (where(e.absolute_path), e.message))
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA)

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    out.append("%s: the key %r is a %s, not a string" % (where(path), k, type(k).__name__))
                is_schema = isinstance(v, (dict, bool)) and (
                    k == "schema" or path[-2:] == ["components", "schemas"])
                if is_schema:
                    for e in meta.iter_errors(v):
                        out.append("%s: %s" % (where(path + [k] + list(e.absolute_path)), e.message))
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, x in enumerate(node):
                walk(x, path + [i])

    walk(doc, [])
    return out


def check(text):
    return dialect_differences(text) + schema_errors(yaml.safe_load(text))


CANARY = """openapi: 3.1.0
info: {title: canary, version: '1'}
paths: {}
components:
  schemas:
    Feature:
      type: object
      required: [on]
      properties:
        on: {type: boolean}
"""


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("NT_SRC", os.path.join(HERE, "../..")), "openapi/openapi.yaml")
    passed = failed = 0
    canary = check(CANARY)
    caught = [c for c in canary if "line 8: 'on'" in c or "required/0: True is not of type 'string'" in c]
    if len(caught) < 2:
        print("FAIL: the canary's unquoted `on` was not caught both ways: %s" % canary)
        failed += 1
    else:
        passed += 1
    problems = check(open(path, encoding="utf-8").read())
    for p in problems:
        print("FAIL: %s: %s" % (os.path.basename(path), p))
    failed += len(problems)
    passed += 0 if problems else 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
