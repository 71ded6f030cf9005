-- Sends a request read whole from a file (the first script argument): head and body exactly
-- as the runner wrote them (bench/lib/bodies.py), so a chunked body, which wrk.format cannot
-- frame (it always adds Content-Length), goes out as written. The request stays static: wrk
-- formats a static request once per thread by calling wrk.format() after init(), so init()
-- makes wrk.format answer the file's bytes; wrk then sends the same buffer on every connection
-- without calling into Lua per request (a `request()` function would copy the whole body into
-- a fresh buffer for every request: 10 MiB per upload).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

function init(args)
  local f = assert(io.open(args[1], "rb"))
  local raw = f:read("*a")
  f:close()
  wrk.format = function() return raw end
end
