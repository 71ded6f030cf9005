// Bundles client.mjs and the library into one browser script, dist/client.js.
import { build } from "esbuild";

await build({
  entryPoints: ["client.mjs"],
  bundle: true,
  format: "iife",
  target: "es2020",
  outfile: "dist/client.js",
  logLevel: "warning",
});
