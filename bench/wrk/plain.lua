-- Plain wrk run (keep-alive, or Connection: close given with -H): only the report.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")
