/// Runs the OpenAPI validator of tests/openapi-validator (Redocly's OpenAPI core, on node) on a
/// document. The first call installs it (NodeFolder.install).
module Swoop.Tests.OpenApiValidator

open System
open System.IO

/// tests/openapi-validator, found above the test binaries.
let folder = lazy (NodeFolder.find "openapi-validator")

/// Validates documents in one run of node: the validator's exit code (0: all valid) and what
/// it printed.
let validateAll (documents: string list) =
    NodeFolder.install folder.Value
    let files = documents |> List.map (fun _ -> Path.Combine(Path.GetTempPath(), sprintf "swoop-openapi-%s.json" (Guid.NewGuid().ToString "N")))

    try
        List.iter2 (fun file (document: string) -> File.WriteAllText(file, document)) files documents
        NodeFolder.run folder.Value "node" ("validate.mjs" :: files) 60_000
    finally
        for file in files do
            File.Delete file

/// Validates one document.
let validate (document: string) = validateAll [ document ]
