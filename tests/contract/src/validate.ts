// SPDX-License-Identifier: Apache-2.0
// The document checked by a second validator, independent of Prism: Ajv's
// JSON Schema 2020-12 engine (the dialect openapi.yaml declares), with the
// document's components as one schema resource. Prism only validates what
// it can: a body whose media type the document lists, under a schema its
// own compiler accepts (a schema Ajv refuses to compile is skipped without
// a word). This checker refuses instead: an undeclared status, an
// undeclared media type, a body where none is declared and a schema that
// does not compile are all errors.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { openapiPath } from "./agent.js";

export const DOC_ID = "urn:nettune:openapi";

export function loadDocument(path: string = openapiPath()): any {
  return parse(readFileSync(path, "utf8"));
}

// "#/components/schemas/X" -> "urn:nettune:openapi#/$defs/X", so a schema
// taken out of the document still finds what it refers to.
const SCHEMAS = "#/components/schemas/";
function absoluteRefs(v: any): any {
  if (Array.isArray(v)) return v.map(absoluteRefs);
  if (v && typeof v === "object") {
    const o: any = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === "$ref" && typeof x === "string" && !x.startsWith(SCHEMAS))
        throw new Error(`$ref ${x}: schemas may refer to ${SCHEMAS}* only`);
      o[k] = k === "$ref" ? `${DOC_ID}#/$defs/${(x as string).slice(SCHEMAS.length)}` : absoluteRefs(x);
    }
    return o;
  }
  return v;
}

/** An Ajv 2020-12 instance that knows the document's components. STRICT:
 * unknown keywords (`nullable`, `example`: OpenAPI 3.0, not JSON Schema)
 * and unknown formats are errors. */
export function makeAjv(doc: any, strict: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict, strictRequired: false, allowUnionTypes: true,
    validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ $id: DOC_ID, $defs: absoluteRefs(doc.components?.schemas ?? {}) });
  return ajv;
}

export function compileIn(ajv: Ajv2020, schema: any): ValidateFunction {
  return ajv.compile(absoluteRefs(schema));
}

const resolve = (doc: any, o: any): any => {
  while (o && typeof o.$ref === "string" && o.$ref.startsWith("#/")) {
    let cur: any = doc;
    for (const part of o.$ref.slice(2).split("/")) cur = cur[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    o = cur;
  }
  return o;
};

const isJson = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json");

export class ResponseChecker {
  private doc: any;
  private ajv: Ajv2020;
  private cache = new Map<string, ValidateFunction>();
  checked = 0;

  constructor(doc: any = loadDocument()) {
    this.doc = doc;
    this.ajv = makeAjv(doc, false);
  }

  /** What is wrong with this response for METHOD TEMPLATE (a path of the
   * document, e.g. `/v1/transactions/{id}/rollback`); [] when nothing. */
  check(method: string, template: string, status: number, contentType: string | null, body: string): string[] {
    const op = this.doc.paths?.[template]?.[method.toLowerCase()];
    if (!op) return [`${method} ${template} is not in the document`];
    const responses = op.responses ?? {};
    const decl = responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
    if (!decl) return [`status ${status} is not declared for ${method} ${template}`];
    const resp = resolve(this.doc, decl);
    const content: Record<string, any> = resp.content ?? {};
    if (Object.keys(content).length === 0)
      return body.length ? [`${method} ${template} ${status} declares no body, got ${body.length} bytes`] : [];
    const mediaType = (contentType ?? "").split(";")[0].trim().toLowerCase();
    const media = content[mediaType];
    if (!media) return [`${method} ${template} ${status}: media type "${mediaType}" is not one of ${Object.keys(content).join(", ")}`];
    if (!media.schema) return [];
    let value: unknown = body;
    if (isJson(mediaType)) {
      try {
        value = JSON.parse(body);
      } catch {
        return [`${method} ${template} ${status}: the body is not JSON`];
      }
    }
    const key = `${template} ${method} ${status} ${mediaType}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = compileIn(this.ajv, media.schema); // throws: a schema that does not compile is an error
      this.cache.set(key, validate);
    }
    this.checked++;
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${method} ${template} ${status}: body${e.instancePath} ${e.message}` +
      (e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ""));
  }
}
