// Validates OpenAPI documents (files, or stdin without any) with Redocly's OpenAPI core: the
// specification's structure and rules (the "spec" ruleset: struct, unresolved refs, path
// parameters, unique operationIds...) and a few rules that catch generator mistakes (schema
// and enum type mismatches, required properties that do not exist, unused components,
// examples that do not match their schema). Prints each problem; exits 0 when every
// document is valid, 1 when one is not, 2 when it could not run.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createConfig, lintFromString } from "@redocly/openapi-core";

const rules = {
  "no-enum-type-mismatch": "error",
  "no-duplicated-enum-values": "error",
  "no-schema-type-mismatch": "error",
  "no-required-schema-properties-undefined": "error",
  "no-illogical-composition-keywords": "error",
  "no-invalid-media-type-examples": "error",
  "no-invalid-parameter-examples": "error",
  "no-invalid-schema-examples": "error",
  "no-unused-components": "error",
  "operation-operationId-url-safe": "error",
  "spec-components-invalid-map-name": "error",
};

try {
  const files = process.argv.slice(2);
  const config = await createConfig({ extends: ["spec"], rules });
  let failed = false;

  for (const file of files.length > 0 ? files : [null]) {
    const source = readFileSync(file ?? 0, "utf8");
    const name = file ?? "stdin";
    const problems = await lintFromString({ source, absoluteRef: resolve(file ?? "stdin.json"), config });

    for (const p of problems) {
      const where = p.location?.[0]?.pointer ?? "";
      console.log(`${name}: ${p.severity} ${p.ruleId}: ${p.message}${where ? ` (at ${where})` : ""}`);
    }

    console.log(`${name}: ${problems.length === 0 ? "valid" : `${problems.length} problem(s)`}`);
    failed ||= problems.length > 0;
  }

  process.exit(failed ? 1 : 0);
} catch (e) {
  console.error(`validator failed: ${e?.stack ?? e}`);
  process.exit(2);
}
