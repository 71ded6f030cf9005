-- HTTP/1.1 pipelining: each write carries N copies of the request (default 16,
-- or the first script argument). wrk counts every response once in its request
-- total; its latency samples are per batch (send of the batch to its last response).
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
dofile(here .. "report.lua")

local batch

function init(args)
  local depth = tonumber(args[1]) or 16
  local copies = {}
  for i = 1, depth do
    copies[i] = wrk.format(nil)
  end
  batch = table.concat(copies)
end

function request()
  return batch
end
